import Projections
import StrataSQLite

extension SQLiteConnection {
    /// A read query whose parameters are named (`:agent`), bound from `values` by name:
    /// queries put together from optional filters need not count positions. Returns the
    /// column names and every row. `path` names the file in errors.
    ///
    /// The one way a named query runs, over a projection file (`ProjectionSnapshot`) or the
    /// store's command journal (`strata query refusals`).
    public func table(_ sql: String, named values: [String: ProjectionValue], reading path: String)
        throws(ProjectorError) -> (columns: [String], rows: [[ProjectionValue]])
    {
        do {
            let s = try statement(sql)
            defer { s.reset() }
            for index in 0..<s.parameterCount {
                let name = s.parameterName(index + 1).map { String($0.dropFirst()) } ?? ""
                guard let value = values[name] else {
                    throw ProjectorError(.io, "querying \(path): no value for the parameter '\(name)'")
                }
                try s.bind(value.sqliteValue, at: index + 1)
            }
            let columns = (0..<s.columnCount).map { s.columnName($0) }
            var rows: [[ProjectionValue]] = []
            while try s.step() { rows.append((0..<s.columnCount).map { ProjectionValue(s.value($0)) }) }
            return (columns, rows)
        } catch let error as ProjectorError {
            throw error
        } catch {
            throw ProjectorError(.io, "querying \(path): \(error)")
        }
    }
}
