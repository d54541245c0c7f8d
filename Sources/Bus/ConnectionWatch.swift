import CZeroMQ
import Synchronization

/// Tells a client when a connection of its socket that had been made ends, through libzmq's
/// socket monitor (`zmq_socket_monitor`): libzmq itself connects again in silence.
///
/// A client that pairs replies with its requests by their order needs to know: a request the
/// old connection carried is never answered, while those sent after it are, on the new
/// connection; paired by order, each of those replies would be taken for an earlier request's.
///
/// Made before the watched socket connects, so that no connection goes unseen. Like every
/// socket, it stays on the thread that made it.
public final class ConnectionWatch {
    /// Where the monitor's events arrive, to poll beside the watched socket.
    public let socket: ZMQSocket
    /// Connections whose handshake completed and that have not ended since. A connection that
    /// never completed its handshake (a CURVE key the service refused) carried no request.
    private var established = 0

    /// Numbers the monitors' inproc endpoints: a closed socket's endpoint is let go only once
    /// libzmq has reaped it, so one made again at once under the same name could be refused.
    private static let made = Atomic<Int>(0)

    public init(_ context: ZMQContext, watching watched: ZMQSocket) throws(ZMQError) {
        let endpoint = "inproc://strata-connection-watch-\(Self.made.wrappingAdd(1, ordering: .relaxed).oldValue)"
        let events = ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED
        guard zmq_socket_monitor(watched.handle, endpoint, events) == 0 else {
            throw ZMQError("zmq_socket_monitor \(endpoint)")
        }
        socket = try ZMQSocket(context, .pair)
        try socket.connect(endpoint)
    }

    /// Reads the events that have arrived; true when a connection that had been made ended
    /// among them.
    public func connectionEnded() throws(ZMQError) -> Bool {
        var ended = false
        // Each event is two frames: the event (16 bits) and its value (32 bits), in the
        // machine's byte order, then the peer's endpoint.
        while let frames = try socket.receive(wait: false), let first = frames.first, first.count >= 2 {
            let event = Int32(first.withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) })
            if event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED {
                established += 1
            } else if event == ZMQ_EVENT_DISCONNECTED && established > 0 {
                established -= 1
                ended = true
            }
        }
        return ended
    }

    public func close() {
        socket.close()
    }
}
