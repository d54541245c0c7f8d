import Dispatch
import Foundation
import Synchronization

/// SIGINT and SIGTERM, turned into a call on a dispatch queue (not a signal handler, where
/// almost nothing is safe). The first asks for a graceful stop; a second, while that runs,
/// ends the process at once with exit code 130.
final class ShutdownSignals {
    private let sources: [any DispatchSourceSignal]

    init(onFirst: @escaping @Sendable (_ signal: Int32) -> Void) {
        let received = DispatchQueue(label: "strata-signals")
        let count = SignalCount()
        sources = [SIGINT, SIGTERM].map { number in
            // Ignored at the C level so the default action (terminate) never runs;
            // the dispatch source still sees the signal.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: received)
            source.setEventHandler {
                if count.increment() == 1 { onFirst(number) } else { exit(130) }
            }
            source.resume()
            return source
        }
    }

    /// Stops listening and restores the default actions.
    func cancel() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}

private final class SignalCount: Sendable {
    private let value = Atomic<Int>(0)

    /// The count after this signal.
    func increment() -> Int {
        value.add(1, ordering: .relaxed).newValue
    }
}

/// What the first signal stops, when it may come before that has started. Signals are listened
/// for before starting, since a signal source becomes active a moment after it is made and a
/// SIGTERM in that moment would be lost; one that comes while the target starts stops it as
/// soon as it has.
final class PendingStop<Target: Sendable>: Sendable {
    private let state = Mutex<(target: Target?, requested: Bool)>((nil, false))
    private let stop: @Sendable (Target) -> Void

    init(_ stop: @escaping @Sendable (Target) -> Void) {
        self.stop = stop
    }

    /// Stops the target now, or as soon as it has started.
    func request() {
        state.withLock { state in
            state.requested = true
            if let target = state.target { stop(target) }
        }
    }

    /// The target has started: stopped at once if a stop came meanwhile.
    func started(_ target: Target) {
        state.withLock { state in
            state.target = target
            if state.requested { stop(target) }
        }
    }
}
