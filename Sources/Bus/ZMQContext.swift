import CZeroMQ

/// A libzmq context: the I/O threads every socket of a process shares.
///
/// libzmq contexts are thread-safe, so this one is `Sendable`; the sockets made from it
/// are not, and stay on the thread that made them.
public final class ZMQContext: Sendable {
    // A raw pointer is not Sendable; the context it points to is thread-safe by libzmq's
    // contract, and this class never changes which context it holds.
    nonisolated(unsafe) let handle: UnsafeMutableRawPointer

    public init() throws(ZMQError) {
        guard let handle = zmq_ctx_new() else { throw ZMQError("zmq_ctx_new") }
        self.handle = handle
    }

    /// Makes every blocking call on this context's sockets return ETERM, so the threads
    /// that own them notice and close them. Safe to call from any thread, more than once.
    public func shutdown() {
        _ = zmq_ctx_shutdown(handle)
    }

    deinit {
        // Terminating waits for every socket to be closed; sockets are closed by their
        // owners (every socket has ZMQ_LINGER set, so none waits on unsent messages).
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }
}
