/// An event that contradicts what a read model already holds (a payment on a loan it has
/// never seen, a decision on a cash-out that is not pending). Thrown from `apply`, it
/// stops the projection at that event, with this description as the stop's error.
struct ProjectionInconsistency: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

extension ProjectionTables {
    /// Runs an `UPDATE` that must touch a row; throws `ProjectionInconsistency(message())`
    /// when no row matched.
    func update(
        _ statement: ProjectionStatement, _ values: [ProjectionValue], else message: @autoclosure () -> String
    ) throws {
        guard try run(statement, values) > 0 else { throw ProjectionInconsistency(message()) }
    }

    /// Runs an `UPDATE … RETURNING …` that must touch a row, and returns the first row
    /// returned; throws `ProjectionInconsistency(message())` when no row matched.
    func updateRequiringRow(
        _ statement: ProjectionStatement, _ values: [ProjectionValue], else message: @autoclosure () -> String
    ) throws -> [ProjectionValue] {
        guard let row = try rows(statement, values).first else { throw ProjectionInconsistency(message()) }
        return row
    }
}
