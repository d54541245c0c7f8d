import Projections
import StrataSQLite

extension SQLiteConnection {
    /// A read query whose parameters are named (`:agent`), bound from `values` by name:
    /// queries put together from optional filters need not count positions. Its rows are handed
    /// over one at a time as SQLite steps to them, so that an answer of millions of rows is never
    /// held whole: `columns` first, then `row` for each row until it returns false. Errors of the query are `ProjectorError`s; what the two
    /// closures throw comes through as it is.
    ///
    /// The one way a named query runs, over a projection file (`ProjectionSnapshot`) or the
    /// store's command journal (`strata query refusals`).
    public func forEachRow(
        _ sql: String, named values: [String: ProjectionValue], reading path: String,
        columns: ([String]) throws -> Void, row: ([ProjectionValue]) throws -> Bool
    ) throws {
        let s: SQLiteStatement
        do {
            s = try statement(sql)
        } catch {
            throw ProjectorError(.io, "querying \(path): \(error)")
        }
        defer { s.reset() }
        for index in 0..<s.parameterCount {
            let name = s.parameterName(index + 1).map { String($0.dropFirst()) } ?? ""
            guard let value = values[name] else {
                throw ProjectorError(.io, "querying \(path): no value for the parameter '\(name)'")
            }
            do {
                try s.bind(value.sqliteValue, at: index + 1)
            } catch {
                throw ProjectorError(.io, "querying \(path): \(error)")
            }
        }
        let count = s.columnCount
        try columns((0..<count).map { s.columnName($0) })
        while true {
            let stepped: Bool
            do {
                stepped = try s.step()
            } catch {
                throw ProjectorError(.io, "querying \(path): \(error)")
            }
            guard stepped, try row((0..<count).map { ProjectionValue(s.value($0)) }) else { return }
        }
    }
}
