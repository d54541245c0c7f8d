import Foundation
import StrataCore
import Synchronization

/// Work done on a thread of its own while the caller does something else, and its result.
final class Background<Result: Sendable>: Sendable {
    private let outcome = Mutex<Result?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ work: @escaping @Sendable () -> Result) {
        startThread(named: "strata-background") { [self] in
            let result = work()
            outcome.withLock { $0 = result }
            done.signal()
        }
    }

    /// Waits for the work to end; later calls return the same result at once.
    func result() -> Result {
        done.wait()
        done.signal()
        return outcome.withLock { $0! }
    }
}
