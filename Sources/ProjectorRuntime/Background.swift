import StrataCore

/// Work done on a thread of its own while the caller does something else, and its result.
final class Background<Result: Sendable>: Sendable {
    private let outcome = OneShot<Result>()

    init(_ work: @escaping @Sendable () -> Result) {
        startThread(named: "strata-background") { [outcome] in outcome.fulfil(work()) }
    }

    /// Waits for the work to end; later calls return the same result at once.
    func result() -> Result {
        outcome.wait()
    }
}
