import CZeroMQ
import Glibc
import Synchronization

/// The bytes of messages handed to libzmq and not yet let go by it, counted across every
/// socket and connection that sends through the same count.
///
/// libzmq keeps a message it has queued until its I/O thread has written it to the
/// connection (or dropped it with a connection that went). A high-water mark bounds how many
/// one connection keeps, not how many bytes all of them keep together: a service that sends
/// pages of megabytes can be made to hold tens of them for every client that stops reading.
/// Messages sent through `ZMQSocket.route(_:body:counting:)` are given to libzmq without a
/// copy, in memory of their own, and counted here until libzmq frees them; the sender reads
/// `bytes` to decide how much more it may send.
public final class HeldBytes: Sendable {
    /// A body at least this long gets pages of its own from the kernel, handed back whole when
    /// libzmq lets it go: from the allocator's heaps, the megabytes a few stalled clients had
    /// held stayed in the process after they left.
    static let mappedFrom = 128 * 1024

    private let held = Atomic<Int>(0)

    public init() {}

    /// The bytes libzmq holds now.
    public var bytes: Int { held.load(ordering: .relaxed) }

    fileprivate func add(_ count: Int) { held.add(count, ordering: .relaxed) }
    fileprivate func remove(_ count: Int) { held.subtract(count, ordering: .relaxed) }
}

/// Where a counted body's memory came from, and how long it is, kept in front of the bytes
/// libzmq sees, so that the function libzmq calls to free them needs nothing else.
private struct HeldHeader {
    var mappedBytes: Int
    var count: Int
}

/// 16 bytes, so that the body stays as aligned as malloc's and mmap's own.
private let headerBytes = 16

/// Frees a counted body: libzmq calls it from its I/O thread once the message is written or
/// dropped, or from the sending thread when the send fails. A free function, not a closure,
/// as libzmq takes a C function pointer; the count is retained by the message (`hint`).
private func releaseHeld(_ data: UnsafeMutableRawPointer?, _ hint: UnsafeMutableRawPointer?) {
    guard let data, let hint else { return }
    let base = data - headerBytes
    let header = base.load(as: HeldHeader.self)
    Unmanaged<HeldBytes>.fromOpaque(hint).takeRetainedValue().remove(header.count)
    if header.mappedBytes > 0 {
        munmap(base, header.mappedBytes)
    } else {
        free(base)
    }
}

extension ZMQSocket {
    /// Routes `body` to the peer `routingId` names, after an empty delimiter frame, as `route`
    /// does, with the body's bytes counted in `held` for as long as libzmq keeps them.
    public func route(_ routingId: [UInt8], body: [UInt8], counting held: HeldBytes) throws(ZMQError) -> Routed {
        precondition(kind == .router, "a ROUTER routes a routing id and a message")
        guard var message = Self.heldMessage(body, held) else { return try route([routingId, [], body]) }
        defer { zmq_msg_close(&message) }
        return try Self.routed { () throws(ZMQError) in try send(routingId: routingId, message: &message) }
    }

    /// A message whose data is `body` copied into memory of its own, counted in `held`; nil
    /// when that memory cannot be had (the plain copying send is tried then).
    private static func heldMessage(_ body: [UInt8], _ held: HeldBytes) -> zmq_msg_t? {
        let total = headerBytes + body.count
        var mapped = 0
        let base: UnsafeMutableRawPointer
        if body.count >= HeldBytes.mappedFrom {
            let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
            mapped = (total + pageSize - 1) / pageSize * pageSize
            let address = mmap(nil, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)
            guard let address, address != MAP_FAILED else { return nil }
            base = address
        } else {
            guard let address = malloc(total) else { return nil }
            base = address
        }
        base.storeBytes(of: HeldHeader(mappedBytes: mapped, count: body.count), as: HeldHeader.self)
        let data = base + headerBytes
        body.withUnsafeBytes { if let source = $0.baseAddress { data.copyMemory(from: source, byteCount: $0.count) } }
        held.add(body.count)
        var message = zmq_msg_t()
        let hint = Unmanaged.passRetained(held).toOpaque()
        guard zmq_msg_init_data(&message, data, body.count, releaseHeld, hint) == 0 else {
            releaseHeld(data, hint)
            return nil
        }
        return message
    }

    /// Sends the routing id, an empty delimiter and `message` as one multipart message without
    /// waiting: false when the peer is over its high-water mark. libzmq takes `message` only
    /// when it is sent; the caller closes it either way (a sent message is left empty).
    private func send(routingId: [UInt8], message: inout zmq_msg_t) throws(ZMQError) -> Bool {
        guard try send([routingId, []], wait: false, more: true) else { return false }
        // Once the routing id is queued, libzmq queues the rest of the message whole.
        return try retrying("zmq_msg_send") { zmq_msg_send(&message, handle, 0) }
    }
}
