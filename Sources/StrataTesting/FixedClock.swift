import StrataCore
import Synchronization

/// A clock that says what the test tells it to. Advance it explicitly.
public final class FixedClock: WallClock {
    private let current: Mutex<Timestamp>

    public init(_ now: Timestamp = Timestamp("2026-11-20T10:00:00.000Z")!) {
        current = Mutex(now)
    }

    public func now() -> Timestamp { current.withLock { $0 } }

    public func set(_ now: Timestamp) { current.withLock { $0 = now } }

    public func advance(milliseconds: Int64) {
        current.withLock { $0 = $0.adding(milliseconds: milliseconds) }
    }
}
