import CZeroMQ

/// A libzmq call that failed, with its `errno`.
public struct ZMQError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The libzmq function that failed (`zmq_bind`, `zmq_msg_send`, …).
    public let operation: String
    public let code: Int32

    public init(_ operation: String, code: Int32 = zmq_errno()) {
        self.operation = operation
        self.code = code
    }

    /// The context was shut down or terminated: the socket's owner should close it and stop.
    public var isTerminated: Bool { code == ETERM }

    public var description: String {
        "\(operation): \(String(cString: zmq_strerror(code))) (errno \(code))"
    }
}
