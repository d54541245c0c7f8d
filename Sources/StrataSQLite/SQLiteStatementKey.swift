import Synchronization

/// A statement run often enough that finding its prepared form matters: numbered once, so a
/// connection looks it up by index instead of hashing its SQL text every time (the event
/// store's inserts were hashed twice per command, a few percent of the writer's work).
public struct SQLiteStatementKey: Sendable {
    private static let next = Atomic<Int>(0)

    let index: Int
    public let sql: String

    /// Keys are meant to be created once, as `static let`s.
    public init(_ sql: String) {
        self.sql = sql
        index = Self.next.add(1, ordering: .relaxed).oldValue
    }
}
