import CSystem
import Dispatch
import Foundation
import Synchronization

/// SIGINT, SIGTERM and SIGHUP, turned into a call on a dispatch queue (not a signal handler,
/// where almost nothing is safe). The first asks for a graceful stop; a second, while that
/// runs, calls `onSecond` (by default: end the process at once with exit code 130).
///
/// The signals are blocked from the start of the process, in every thread (`blockAtStart`,
/// before any thread exists; threads inherit the mask), and never ignored: a blocked signal
/// stays pending until the signal source reads it, so one that comes before the source
/// listens is kept. Ignoring them until then, as this did, discarded one sent in the first
/// milliseconds, and the process ran on as if never asked to stop. SIGHUP (a closed terminal
/// or ssh session) stops as SIGTERM does, rather than killing the process outright, unless the
/// process was started with it ignored (`listened`).
final class ShutdownSignals {
    static let numbers = [SIGINT, SIGTERM, SIGHUP]

    /// The signals listened for: the three, but SIGHUP when the process started with it ignored
    /// (`nohup strata up &`), whose caller asked that the terminal's hang-up leave it running. A
    /// blocked signal is kept pending whatever its action, so listening for it turned the
    /// hang-up of the terminal `up` was started from into a stop of the whole system. Read once,
    /// at the first use (`blockAtStart`), before anything has changed the action.
    static let listened: [Int32] = numbers.filter { !($0 == SIGHUP && strata_signal_is_ignored(SIGHUP) != 0) }
    private let sources: [any DispatchSourceSignal]

    init(
        onFirst: @escaping @Sendable (_ signal: Int32) -> Void,
        onSecond: @escaping @Sendable (_ signal: Int32) -> Void = { _ in exit(130) }
    ) {
        let received = DispatchQueue(label: "strata-signals")
        let count = SignalCount()
        // For a caller that did not block them at its start (a test calling in): blocked from
        // here on in this thread and in those it starts.
        Self.blockAtStart()
        sources = Self.listened.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: received)
            source.setEventHandler {
                if count.increment() == 1 { onFirst(number) } else { onSecond(number) }
            }
            source.resume()
            return source
        }
    }

    /// Blocks the three signals in the calling thread, and so in every thread it starts. Run
    /// first by a command that listens for them, before anything has started a thread.
    static func blockAtStart() {
        var set = sigset_t()
        sigemptyset(&set)
        for number in listened { sigaddset(&set, number) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// The signals as a set, for `pthread_sigmask` and `posix_spawn`.
    static var set: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in numbers { sigaddset(&set, number) }
        return set
    }

    /// Stops listening; a later signal reaching this thread has its default action again.
    func cancel() {
        for source in sources { source.cancel() }
        var set = Self.set
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
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
