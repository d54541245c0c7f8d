import CZeroMQ

extension ZMQSocket {
    /// What became of a reply a ROUTER was asked to route.
    public enum Routed: Sendable, Equatable {
        /// Queued for the peer.
        case sent
        /// The peer holds its send high-water mark of replies it has not read: dropped.
        case peerFull
        /// No such peer any more (it disconnected): dropped.
        case peerGone
    }

    /// Makes a ROUTER report a reply it cannot route (`ZMQ_ROUTER_MANDATORY`), where by
    /// default it drops it silently, to a peer gone or over its high-water mark alike. Send
    /// through `route` then: a plain blocking send would wait for a full peer to read.
    public func reportUnroutable() throws(ZMQError) {
        precondition(kind == .router, "ZMQ_ROUTER_MANDATORY is a ROUTER's option")
        try setOption(ZMQ_ROUTER_MANDATORY, Int32(1))
    }

    /// Sends `frames` (the routing id first) without ever waiting: a peer over its send
    /// high-water mark is EAGAIN and one that is gone EHOSTUNREACH (libzmq checks both on the
    /// routing id's frame, so nothing of the message is queued), each reported, not thrown,
    /// on a ROUTER made to report them (`reportUnroutable`).
    public func route(_ frames: [[UInt8]]) throws(ZMQError) -> Routed {
        precondition(kind == .router && frames.count >= 2, "a ROUTER routes a routing id and a message")
        return try Self.routed { () throws(ZMQError) in try send(frames, wait: false) }
    }

    /// What became of a send that returns false on EAGAIN: a full peer, and EHOSTUNREACH a gone
    /// one; any other error is thrown.
    static func routed(_ sending: () throws(ZMQError) -> Bool) throws(ZMQError) -> Routed {
        do throws(ZMQError) {
            return try sending() ? .sent : .peerFull
        } catch where error.code == EHOSTUNREACH {
            return .peerGone
        } catch {
            throw error
        }
    }
}
