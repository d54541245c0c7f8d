import StrataCore

/// A client of the signed endpoints (commands, history): a DEALER socket that signs each
/// body with a key's secret and sends `["", header, body]`, pipelined. Replies come back
/// in the order requests were sent.
///
/// With `curve`, the connection is CURVE-encrypted, and the service admits it only if the
/// client key is on its allow-list; the signatures are checked all the same.
///
/// With `watchingConnections`, `connections` tells when a connection that had been made
/// ended, for a client that must know its requests in flight will not be answered.
///
/// Like every socket, it stays on the thread that made it.
public final class SignedClient {
    public let socket: ZMQSocket
    public let connections: ConnectionWatch?
    private let keyId: String
    private let signing: RequestSigningKey
    private let clock: any WallClock

    public init(
        _ context: ZMQContext, endpoint: String, keyId: String, secret: [UInt8], curve: CurveClientKeys? = nil,
        clock: any WallClock = SystemClock(), watchingConnections: Bool = false
    ) throws(ZMQError) {
        socket = try ZMQSocket(context, .dealer)
        // Unbounded queues: a pipelined client decides its own window.
        try socket.setHighWaterMarks(send: 0, receive: 0)
        if let curve { try socket.makeCurveClient(curve) }
        connections = watchingConnections ? try ConnectionWatch(context, watching: socket) : nil
        try socket.connect(endpoint)
        self.keyId = keyId
        self.signing = RequestSigningKey(secret: secret)
        self.clock = clock
    }

    /// Signs `body` as it is, now, and sends it. Without `wait`, false when libzmq cannot take
    /// it now, and nothing was sent: a DEALER has nowhere to queue it once a handshake failed for
    /// good (the service refused its key; with libzmq 4.3.4 also CURVE on one side only), as
    /// libzmq then drops the connection and never makes it again: a send that waits, waits for ever.
    @discardableResult
    public func send(_ body: [UInt8], wait: Bool = true) throws(ZMQError) -> Bool {
        let header = signing.header(keyId: keyId, timestamp: clock.now().secondsSinceEpoch, body: body)
        return try socket.send([[], header.json, body], wait: wait)
    }

    /// The next reply's JSON bytes, or nil when none came within `timeoutMilliseconds`.
    public func receive(timeoutMilliseconds: Int) throws(ZMQError) -> [UInt8]? {
        guard try !zmqPollReadable([socket], timeoutMilliseconds: timeoutMilliseconds).isEmpty,
            let frames = try socket.receive(wait: false)
        else { return nil }
        return frames.last ?? []
    }

    /// Sends one request and waits for its reply.
    public func request(_ body: [UInt8], timeoutMilliseconds: Int = 10_000) throws(ZMQError) -> [UInt8]? {
        try send(body)
        return try receive(timeoutMilliseconds: timeoutMilliseconds)
    }

    public func close() {
        socket.close()
        connections?.close()
    }
}
