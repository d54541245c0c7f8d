import CZeroMQ

/// One libzmq socket. libzmq sockets are not thread-safe: a `ZMQSocket` is not `Sendable`,
/// so it stays on the thread that made it, and async code reaches it through that
/// thread's queue.
///
/// Every socket gets `ZMQ_LINGER` at creation (libzmq's default waits forever at close for
/// unsent messages), and the heartbeat and timeouts that let a dead peer go (`PeerLiveness`).
/// Calls retry on EINTR; EAGAIN is "would block" (nil or false); everything else, ETERM
/// included, throws `ZMQError`.
public final class ZMQSocket {
    public enum Kind: Sendable {
        case router, dealer, request, reply, publisher, subscriber, push, pull, pair

        var raw: Int32 {
            switch self {
            case .router: ZMQ_ROUTER
            case .dealer: ZMQ_DEALER
            case .request: ZMQ_REQ
            case .reply: ZMQ_REP
            case .publisher: ZMQ_PUB
            case .subscriber: ZMQ_SUB
            case .push: ZMQ_PUSH
            case .pull: ZMQ_PULL
            case .pair: ZMQ_PAIR
            }
        }
    }

    let handle: UnsafeMutableRawPointer
    public let kind: Kind
    private var isClosed = false
    /// Held so the context outlives its sockets: terminating a context waits for every
    /// socket made from it to close.
    private let context: ZMQContext

    /// - Parameter lingerMilliseconds: how long `close` may wait to deliver queued
    ///   messages; 0 drops them at once.
    public init(_ context: ZMQContext, _ kind: Kind, lingerMilliseconds: Int32 = 0) throws(ZMQError) {
        guard let handle = zmq_socket(context.handle, kind.raw) else { throw ZMQError("zmq_socket") }
        self.handle = handle
        self.kind = kind
        self.context = context
        try setOption(ZMQ_LINGER, lingerMilliseconds)
        try watchPeerLiveness()
    }

    deinit {
        close()
    }

    /// Closes the socket; later calls do nothing.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        zmq_close(handle)
    }

    // MARK: - Options

    public func setOption(_ option: Int32, _ value: Int32) throws(ZMQError) {
        var value = value
        try check("zmq_setsockopt") { zmq_setsockopt(handle, option, &value, MemoryLayout<Int32>.size) }
    }

    public func setOption(_ option: Int32, _ value: Int64) throws(ZMQError) {
        var value = value
        try check("zmq_setsockopt") { zmq_setsockopt(handle, option, &value, MemoryLayout<Int64>.size) }
    }

    public func setOption(_ option: Int32, bytes: [UInt8]) throws(ZMQError) {
        try check("zmq_setsockopt") { bytes.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) } }
    }

    /// Messages larger than this are dropped by libzmq before they reach the application
    /// (the peer is disconnected): a hard ceiling against memory exhaustion.
    public func setMaximumMessageSize(_ bytes: Int64) throws(ZMQError) {
        try setOption(ZMQ_MAXMSGSIZE, bytes)
    }

    /// How many messages may queue per peer before sends block or drop (PUB drops).
    public func setHighWaterMarks(send: Int32, receive: Int32) throws(ZMQError) {
        try setOption(ZMQ_SNDHWM, send)
        try setOption(ZMQ_RCVHWM, receive)
    }

    /// A SUB socket receives only topics starting with one of its prefixes ("" for all).
    public func subscribe(_ prefix: String) throws(ZMQError) {
        try setOption(ZMQ_SUBSCRIBE, bytes: Array(prefix.utf8))
    }

    /// The endpoint actually bound, e.g. `tcp://127.0.0.1:49321` after binding port `*`.
    public func lastEndpoint() throws(ZMQError) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        var size = buffer.count
        try check("zmq_getsockopt") { zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: - Connecting

    /// Binds `endpoint`; one libzmq would refuse or misread is refused (`Endpoint`: a TCP port
    /// beyond 65535 or not a number, which libzmq read as another port), and an ipc path where a
    /// file is or another process listens before libzmq deletes what is there (`IPCPath`).
    public func bind(_ endpoint: String) throws(ZMQError) {
        if let problem = Endpoint.problem(in: endpoint, binding: true) ?? IPCPath.problem(binding: endpoint) {
            throw ZMQError("zmq_bind \(endpoint) (\(problem.reason))", code: problem.code)
        }
        try check("zmq_bind \(endpoint)") { zmq_bind(handle, endpoint) }
    }

    /// Stops listening on `endpoint`, as bound (`lastEndpoint()`), and closes every connection
    /// accepted through it: libzmq's listener owns the sessions it accepted. libzmq closes the
    /// listening socket on its own I/O thread, so a `bind` to the same address just after may
    /// find it still in use (EADDRINUSE) for a moment.
    public func unbind(_ endpoint: String) throws(ZMQError) {
        try check("zmq_unbind \(endpoint)") { zmq_unbind(handle, endpoint) }
    }

    /// Connects to `endpoint`; one that could never be reached is refused, as for `bind`
    /// (`Endpoint`): libzmq connected to port 0, or an IPv6 address, for ever, and to another port
    /// than one beyond 65535.
    public func connect(_ endpoint: String) throws(ZMQError) {
        if let problem = Endpoint.problem(in: endpoint, binding: false) {
            throw ZMQError("zmq_connect \(endpoint) (\(problem.reason))", code: problem.code)
        }
        try check("zmq_connect \(endpoint)") { zmq_connect(handle, endpoint) }
    }

    // MARK: - Messages

    /// Sends one multipart message. Returns false when it would block (with `wait` false,
    /// or a send timeout); a multipart message is never sent in part. With `more`, the frames
    /// are the message's first ones, and the caller sends the rest.
    @discardableResult
    public func send(_ frames: [[UInt8]], wait: Bool = true, more: Bool = false) throws(ZMQError) -> Bool {
        precondition(!frames.isEmpty, "a message has at least one frame")
        for (index, frame) in frames.enumerated() {
            var flags: Int32 = index < frames.count - 1 || more ? ZMQ_SNDMORE : 0
            // Only the first frame may report "would block": once it is queued, libzmq
            // queues the rest of the message atomically.
            if !wait && index == 0 { flags |= ZMQ_DONTWAIT }
            let sent = try retrying("zmq_send") {
                frame.withUnsafeBytes { zmq_send(handle, $0.baseAddress, $0.count, flags) }
            }
            if !sent { return false }
        }
        return true
    }

    /// Receives one whole multipart message through `zmq_msg_t` (no fixed-size buffers).
    /// Returns nil when none is waiting and `wait` is false (or a receive timeout passed).
    ///
    /// Frames after the first `copying` come back empty, their bytes not copied: the count
    /// still shows the message's shape. `ZMQ_MAXMSGSIZE` bounds a frame, not a message, so a
    /// peer that owes no key can send thousands of 1 MiB frames in one message; libzmq holds
    /// it whole, and a socket that expects four frames must not hold a second copy.
    public func receive(wait: Bool = true, copying limit: Int = .max) throws(ZMQError) -> [[UInt8]]? {
        var frames: [[UInt8]] = []
        var message = zmq_msg_t()
        zmq_msg_init(&message)
        defer { zmq_msg_close(&message) }
        repeat {
            let flags: Int32 = !wait && frames.isEmpty ? ZMQ_DONTWAIT : 0
            let received = try retrying("zmq_msg_recv") { zmq_msg_recv(&message, handle, flags) }
            if !received { return nil }
            let size = zmq_msg_size(&message)
            if let data = zmq_msg_data(&message), size > 0, frames.count < limit {
                frames.append(Array(UnsafeRawBufferPointer(start: data, count: size)))
            } else {
                frames.append([])
            }
        } while zmq_msg_more(&message) == 1
        return frames
    }

    // MARK: - Errors

    private func check(_ operation: String, _ call: () -> Int32) throws(ZMQError) {
        while call() != 0 {
            let code = zmq_errno()
            if code != EINTR { throw ZMQError(operation, code: code) }
        }
    }

    /// Runs a send or receive: true when it happened, false on EAGAIN, retrying on EINTR.
    func retrying(_ operation: String, _ call: () -> Int32) throws(ZMQError) -> Bool {
        while call() < 0 {
            let code = zmq_errno()
            if code == EAGAIN { return false }
            if code != EINTR { throw ZMQError(operation, code: code) }
        }
        return true
    }
}

/// Waits until one of `sockets` has a message to read, or one of `descriptors` (plain file
/// descriptors) has bytes or its end, or `writable` can take a message, or `timeoutMilliseconds`
/// pass (-1: forever). Returns which are ready, by index: the sockets' first, then the
/// descriptors', then `writable`. Retries on EINTR.
public func zmqPollReadable(
    _ sockets: [ZMQSocket], descriptors: [Int32] = [], orWritable writable: ZMQSocket? = nil, timeoutMilliseconds: Int
) throws(ZMQError) -> [Int] {
    var items = sockets.map { zmq_pollitem_t(socket: $0.handle, fd: 0, events: Int16(ZMQ_POLLIN), revents: 0) }
    items += descriptors.map { zmq_pollitem_t(socket: nil, fd: $0, events: Int16(ZMQ_POLLIN), revents: 0) }
    if let writable {
        items.append(zmq_pollitem_t(socket: writable.handle, fd: 0, events: Int16(ZMQ_POLLOUT), revents: 0))
    }
    while zmq_poll(&items, Int32(items.count), timeoutMilliseconds) < 0 {
        let code = zmq_errno()
        if code != EINTR { throw ZMQError("zmq_poll", code: code) }
    }
    // A descriptor's end or error (POLLHUP, POLLERR) counts as ready: its read says which.
    let ready = Int16(ZMQ_POLLIN | ZMQ_POLLOUT | ZMQ_POLLERR)
    return items.indices.filter { items[$0].revents & ready != 0 }
}
