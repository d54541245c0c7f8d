import Synchronization

/// One SQL statement of a projection, declared once (a `static let` beside the projection)
/// so that the runtime prepares it once per file and finds it again by number: looking a
/// statement up by its text meant hashing and comparing that text for every statement of
/// every event.
public struct ProjectionStatement: Sendable {
    public let sql: String
    /// Unique in the process: where the runtime keeps the prepared statement.
    public let id: Int

    public init(_ sql: String) {
        self.sql = sql
        self.id = ProjectionStatement.issued.add(1, ordering: .relaxed).oldValue
    }

    private static let issued = Atomic<Int>(0)
}
