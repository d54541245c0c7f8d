import EventStore
import Foundation
import Projections
import ProjectorRuntime
import StrataSQLite

/// The store's command journal (`events.db`, table `commands`) read in one read transaction:
/// what was decided, refusals included, which no projection holds since a refusal is not an
/// event. The head is read in the same transaction, so an answer states the position of the
/// history it reflects as a projection's does.
final class JournalSnapshot {
    let path: String
    /// The store's last position as the transaction sees it.
    let head: Int64
    private let connection: SQLiteConnection

    /// Opens `path` read-only (no lock: the command service keeps writing) and starts the read.
    init(path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure.environment("no event store at \(path) (set --data or STRATA_DATA)")
        }
        self.path = path
        do {
            connection = try SQLiteConnection(path: path, mode: .readOnly)
            try connection.execute("BEGIN")
            try SQLiteEventStore.checkIsStore(connection, path: path)
            head = try connection.scalarInteger("SELECT coalesce(max(position), 0) FROM events") ?? 0
        } catch let error as StoreError where error.kind == .corrupt {
            throw CommandFailure.problem(error.message)
        } catch let error as StoreError {
            throw CommandFailure.environment("cannot open \(path): \(error.message)")
        } catch {
            throw CommandFailure.environment("cannot read \(path): \(error)")
        }
    }

    func forEachRow(
        _ sql: String, named values: [String: ProjectionValue], columns: ([String]) throws -> Void,
        row: ([ProjectionValue]) throws -> Bool
    ) throws {
        try connection.forEachRow(sql, named: values, reading: path, columns: columns, row: row)
    }

    func close() {
        connection.close()
    }
}
