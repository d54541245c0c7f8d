import Bus
import Dispatch
import Foundation
import StrataCore
import Synchronization

/// What the command service's threads share: the libzmq context, the CURVE server key, the
/// stop request, the first fatal error, and the group every thread leaves when it ends.
final class ServerControl: Sendable {
    let context: ZMQContext
    let logger: Logger
    /// The service's CURVE secret key, when the key file has a server pair: every socket
    /// clients connect to is then a CURVE server.
    let curveSecretKey: CurveKey?
    private let stopRequested = Atomic<Bool>(false)
    private let failure = Mutex<String?>(nil)
    private let threads = DispatchGroup()
    /// The threads that own sockets clients connect to (all but the ZAP handler's).
    private let clientSocketThreads = DispatchGroup()

    init(context: ZMQContext, logger: Logger, curveSecretKey: CurveKey? = nil) {
        self.context = context
        self.logger = logger
        self.curveSecretKey = curveSecretKey
    }

    /// A socket clients connect to: a CURVE server when the key file asks for CURVE. Bind
    /// it after this returns.
    func clientFacingSocket(
        _ kind: ZMQSocket.Kind, lingerMilliseconds: Int32, domain: ZAPHandler.Domain = .requests
    ) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(context, kind, lingerMilliseconds: lingerMilliseconds)
        if let curveSecretKey { try socket.makeCurveServer(secretKey: curveSecretKey, domain: domain) }
        return socket
    }

    /// Whether every thread owning a socket clients connect to has ended. Only meaningful
    /// once stopping: before the first such thread is spawned it is true as well.
    var clientSocketsClosed: Bool { clientSocketThreads.wait(timeout: .now()) == .success }

    var isStopping: Bool { stopRequested.load(ordering: .acquiring) }

    /// The graceful stop: take no more commands, finish and answer what was taken.
    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
    }

    /// A thread hit an error it cannot recover from: record the first, and stop every
    /// thread at once (blocking libzmq calls return ETERM).
    func fail(_ message: String) {
        let first = failure.withLock { stored -> Bool in
            guard stored == nil else { return false }
            stored = message
            return true
        }
        if first { logger.error(message) }
        requestStop()
        context.shutdown()
    }

    var firstFailure: String? { failure.withLock { $0 } }

    /// Runs `body` on a new named thread. `body` sets itself up, reports through `ready`
    /// (the endpoint it bound, or why it could not start), then runs until it is done.
    /// `ownsClientSockets` is false only for the ZAP handler's thread.
    func spawn(
        _ name: String, priority: ThreadPriority, ownsClientSockets: Bool = true,
        _ body: @escaping @Sendable (_ ready: StartupLatch) -> Void
    ) -> StartupLatch {
        let latch = StartupLatch()
        threads.enter()
        if ownsClientSockets { clientSocketThreads.enter() }
        startThread(named: name, priority: priority) { [threads, clientSocketThreads] in
            body(latch)
            // A body that returns without reporting (it cannot, but) must not hang start.
            latch.report(.failure(ServerError(.environment, "\(name) ended before it started")))
            if ownsClientSockets { clientSocketThreads.leave() }
            threads.leave()
        }
        return latch
    }

    /// Blocks until every spawned thread has ended.
    func waitForThreads() {
        threads.wait()
    }
}

/// One thread's start-up report: what it bound, or why it could not start. Only the first
/// report counts.
final class StartupLatch: Sendable {
    private let result = Mutex<Result<String, ServerError>?>(nil)
    private let semaphore = DispatchSemaphore(value: 0)

    func report(_ outcome: Result<String, ServerError>) {
        let first = result.withLock { stored -> Bool in
            guard stored == nil else { return false }
            stored = outcome
            return true
        }
        if first { semaphore.signal() }
    }

    func wait() -> Result<String, ServerError> {
        semaphore.wait()
        return result.withLock { $0! }
    }
}

/// A value handed to exactly one thread. The thread takes it into a local, so it is
/// released when the thread's work returns, before the thread reports that it has ended:
/// a store handed this way has closed (and dropped its writer lock) by the time
/// `CommandServer.wait()` returns.
final class HandOff<Value: Sendable>: Sendable {
    private let value: Mutex<Value?>

    init(_ value: Value) {
        self.value = Mutex(value)
    }

    func take() -> Value? {
        value.withLock { stored in
            defer { stored = nil }
            return stored
        }
    }
}

/// Why the command service could not start, or stopped.
public struct ServerError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Another writer holds the event store.
        case storeLocked
        /// The store, a socket, the key file: something of the environment.
        case environment
        /// The chain does not match its last signed checkpoint: the store was tampered with.
        case integrity
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
