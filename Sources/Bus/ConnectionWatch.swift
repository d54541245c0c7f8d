import CZeroMQ
import Synchronization

/// Tells a client when a connection of its socket that had been made ends, through libzmq's
/// socket monitor (`zmq_socket_monitor`): libzmq itself connects again in silence.
///
/// A client that pairs replies with its requests by their order needs to know: a request the
/// old connection carried is never answered, while those sent after it are, on the new
/// connection; paired by order, each of those replies would be taken for an earlier request's.
///
/// It also tells what came of the connections (`reach`), so that a client that got no reply
/// can say whether it reached the service at all, and whether the service refused its key.
///
/// Made before the watched socket connects, so that no connection goes unseen. Like every
/// socket, it stays on the thread that made it.
public final class ConnectionWatch {
    /// Where the monitor's events arrive, to poll beside the watched socket.
    public let socket: ZMQSocket
    /// Connections whose handshake completed and that have not ended since. A connection that
    /// never completed its handshake (a CURVE key the service refused) carried no request.
    private var established = 0

    /// What came of the connections, for a client that got no reply in time to say why: a
    /// service that does not run, or cannot be reached, is not a key it refuses.
    public enum Reach: Equatable, Sendable {
        /// No connection was made (nothing listens there, or it cannot be reached).
        case noConnection
        /// A connection was made, but no handshake on it has completed or failed yet.
        case connectedWithoutHandshake
        /// The service refused the client's key at the handshake, with this status code
        /// (ZAP's 400 for a CURVE key the service does not admit); libzmq does not try again.
        case keyRefused(status: Int)
        /// Handshakes failed otherwise: no common mechanism (CURVE on one side only), a CURVE
        /// server key that is not the service's, or a peer that speaks no ZMTP.
        case handshakeFailed
        /// A connection is established: the service took it.
        case established
    }

    /// What came of the connections since the last that was established; `established` while one is.
    public var reach: Reach {
        if established > 0 { return .established }
        return sinceEstablished
    }

    private var sinceEstablished = Reach.noConnection

    /// Numbers the monitors' inproc endpoints: a closed socket's endpoint is let go only once
    /// libzmq has reaped it, so one made again at once under the same name could be refused.
    private static let made = Atomic<Int>(0)

    public init(_ context: ZMQContext, watching watched: ZMQSocket) throws(ZMQError) {
        let endpoint = "inproc://strata-connection-watch-\(Self.made.wrappingAdd(1, ordering: .relaxed).oldValue)"
        let events =
            ZMQ_EVENT_CONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
            | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_DISCONNECTED
        guard zmq_socket_monitor(watched.handle, endpoint, events) == 0 else {
            throw ZMQError("zmq_socket_monitor \(endpoint)")
        }
        socket = try ZMQSocket(context, .pair)
        try socket.connect(endpoint)
    }

    /// Reads the events that have arrived (and so brings `reach` up to date); true when a
    /// connection that had been made ended among them.
    public func connectionEnded() throws(ZMQError) -> Bool {
        var ended = false
        // Each event is two frames: the event (16 bits) and its value (32 bits), in the
        // machine's byte order, then the peer's endpoint.
        while let frames = try socket.receive(wait: false), let first = frames.first, first.count >= 2 {
            let event = Int32(first.withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) })
            switch event {
            case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
                established += 1
                sinceEstablished = .noConnection
            case ZMQ_EVENT_DISCONNECTED where established > 0:
                established -= 1
                ended = true
            case ZMQ_EVENT_CONNECTED where sinceEstablished == .noConnection:
                sinceEstablished = .connectedWithoutHandshake
            case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
                let status = first.count < 6 ? 0 : first.withUnsafeBytes {
                    $0.loadUnaligned(fromByteOffset: 2, as: UInt32.self)
                }
                sinceEstablished = .keyRefused(status: Int(status))
            case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL, ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
                // A key refused stays the cause: a later failure is its connection's end.
                if case .keyRefused = sinceEstablished { break }
                sinceEstablished = .handshakeFailed
            default:
                break
            }
        }
        return ended
    }

    public func close() {
        socket.close()
    }
}
