import Bus

/// The replies a ROUTER could not hand to libzmq at once, kept in order per connection, up to a
/// budget of bytes, and sent as room comes.
///
/// libzmq's high-water mark counts messages, whatever their size: a mark low enough that a
/// client that stops reading cannot make the service hold many pages of history is also
/// reached, for a moment, by a client that pipelines hundreds of small requests and reads
/// every reply, since this thread answers faster than libzmq's I/O thread drains and tells
/// it so. Those replies wait here; a reply that does not fit its connection's budget (a page
/// larger than it, or any reply once the budget is spent) is dropped, as is every reply kept
/// for a connection that has gone. Nothing here ever waits for a client.
struct ReplyBacklog {
    /// Bytes kept for one connection: hundreds of small replies, less than a long page.
    static let connectionBytes = 1024 * 1024
    /// Bytes kept for all connections together.
    static let totalBytes = 16 * 1024 * 1024

    private struct Waiting {
        /// The replies not yet sent, from `next` on, each with the key of its request.
        var replies: [(reply: [UInt8], keyId: String?)] = []
        var next = 0
        var bytes = 0
    }

    private var waiting: [[UInt8]: Waiting] = [:]
    private var bytes = 0
    /// What the replies handed to libzmq hold until it lets them go.
    private let held: HeldBytes

    init(held: HeldBytes) {
        self.held = held
    }

    var isEmpty: Bool { waiting.isEmpty }

    /// Sends `reply` to the connection `routingId` names, or keeps it behind the replies
    /// waiting for it; `dropped` hears of it when neither can be.
    mutating func send(
        _ reply: [UInt8], keyId: String?, to routingId: [UInt8], on router: ZMQSocket,
        dropped: (ZMQSocket.Routed, String?) -> Void
    ) throws(ZMQError) {
        if waiting[routingId] == nil {
            switch try router.route(routingId, body: reply, counting: held) {
            case .sent: return
            case .peerGone: return dropped(.peerGone, keyId)
            case .peerFull: break
            }
        }
        let kept = waiting[routingId]?.bytes ?? 0
        guard kept + reply.count <= Self.connectionBytes, bytes + reply.count <= Self.totalBytes else {
            return dropped(.peerFull, keyId)
        }
        waiting[routingId, default: Waiting()].replies.append((reply, keyId))
        waiting[routingId]?.bytes += reply.count
        bytes += reply.count
    }

    /// Sends what each connection has room for now, in order; every reply kept for a connection
    /// that has gone is dropped. Returns whether any reply left the backlog, sent or dropped.
    @discardableResult
    mutating func flush(
        on router: ZMQSocket, dropped: (ZMQSocket.Routed, String?) -> Void
    ) throws(ZMQError) -> Bool {
        let before = bytes
        for routingId in Array(waiting.keys) {
            guard var entry = waiting[routingId] else { continue }
            var routed = ZMQSocket.Routed.sent
            while entry.next < entry.replies.count {
                routed = try router.route(routingId, body: entry.replies[entry.next].reply, counting: held)
                if routed != .sent { break }
                entry.bytes -= entry.replies[entry.next].reply.count
                entry.next += 1
            }
            if routed == .peerGone {
                for (_, keyId) in entry.replies[entry.next...] { dropped(.peerGone, keyId) }
            }
            if routed == .peerFull {
                // Sent replies are let go once they are half the array.
                if entry.next * 2 >= entry.replies.count {
                    entry.replies.removeFirst(entry.next)
                    entry.next = 0
                }
                bytes -= (waiting[routingId]?.bytes ?? 0) - entry.bytes
                waiting[routingId] = entry
            } else {
                bytes -= waiting[routingId]?.bytes ?? 0
                waiting[routingId] = nil
            }
        }
        return bytes != before
    }
}
