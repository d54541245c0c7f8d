import Dispatch
import Synchronization

/// A value one thread makes once and another waits for: the hand-back of work done on a
/// thread of its own (a page prepared ahead, a chunk of events encoded, a batch hashed).
///
/// `wait()` blocks until `fulfil(_:)` has run, then returns the value; later calls return
/// it at once, so a caller may wait both to use the value and, on another path, only to
/// know the work is over.
public final class OneShot<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    public init() {}

    /// Sets the value and wakes whoever waits for it. Call it once.
    public func fulfil(_ made: Value) {
        value.withLock { value in
            precondition(value == nil, "a OneShot is fulfilled once")
            value = made
        }
        ready.signal()
    }

    /// The value, once `fulfil(_:)` has set it.
    public func wait() -> Value {
        ready.wait()
        // Passed on, so that the next wait (another caller, or this one again) returns too.
        ready.signal()
        return value.withLock { $0! }
    }
}
