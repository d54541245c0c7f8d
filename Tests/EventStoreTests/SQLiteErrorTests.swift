import Foundation
import StrataSQLite
import Testing

/// SQLite's messages name the operating system's cause of a failure of the disk or a file, and
/// only then: "disk I/O error" alone does not tell a full disk from a failing one.
@Suite struct SQLiteErrorTests {
    @Test func aFileThatCannotBeOpenedNamesTheSystemsCause() throws {
        let path = NSTemporaryDirectory() + "/strata-no-such-dir-\(UUID().uuidString)/x.db"
        let error = #expect(throws: SQLiteError.self) { try SQLiteConnection(path: path, mode: .readWrite) }
        #expect(error?.message == "unable to open database file (No such file or directory) (\(path))", "\(error!)")
    }

    /// A full file (its page cap reached, no system call failing) and a constraint say nothing
    /// of the system: an `errno` left from something else would mislead.
    @Test func failuresOfSQLiteItselfCarryNoSystemCause() throws {
        let connection = try SQLiteConnection(path: ":memory:", mode: .readWrite)
        try connection.execute("CREATE TABLE t (x UNIQUE); INSERT INTO t VALUES (1)")
        let constraint = #expect(throws: SQLiteError.self) { try connection.execute("INSERT INTO t VALUES (1)") }
        #expect(constraint?.message == "UNIQUE constraint failed: t.x")
        _ = try connection.scalarInteger("PRAGMA max_page_count = 3")
        let full = #expect(throws: SQLiteError.self) {
            try connection.execute("INSERT INTO t VALUES (randomblob(100000))")
        }
        #expect(full?.isFull == true)
        #expect(full?.message == "database or disk is full", "\(full!)")
    }
}
