import EventStore
import Foundation
import StrataSQLite
import StrataTesting
import Testing

/// New stores are made with `SQLiteConnection.pageSize`; a store made with SQLite's default
/// keeps its own page size and works as before.
@Suite struct PageSizeTests {
    private static func pageSize(of path: String) throws -> Int64? {
        try SQLiteConnection(path: path, mode: .readOnly).scalarInteger("PRAGMA page_size")
    }

    @Test func aNewStoreIsMadeWithEightKibibytePages() throws {
        let directory = try ChildProcess.temporaryDirectory("strata-page-size")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.db").path
        let store = try SQLiteEventStore(path: path)
        _ = try store.append([command("c1", [event("loan-L1", "LoanRequested")])])
        #expect(SQLiteConnection.pageSize == 8192)
        #expect(try Self.pageSize(of: path) == 8192)
    }

    /// A file that already has pages (here 4 KiB ones, as stores made before this setting
    /// have) is not changed by opening it for writing: SQLite cannot resize a WAL file's
    /// pages, and the store does not try.
    @Test func aStoreWithSmallerPagesKeepsThemAndItsEvents() throws {
        let directory = try ChildProcess.temporaryDirectory("strata-page-size")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.db").path
        do {
            let older = try SQLiteConnection(path: path, mode: .readWrite)
            try older.execute("PRAGMA page_size=4096")
            _ = try older.scalarText("PRAGMA journal_mode=WAL")
        }
        do {
            let store = try SQLiteEventStore(path: path)
            for n in 1...50 {
                let requested = try event("loan-L\(n % 7)", "LoanRequested", ["n": .integer(Int64(n))])
                _ = try store.append([command("c\(n)", [requested])])
            }
        }
        #expect(try Self.pageSize(of: path) == 4096)
        let reopened = try SQLiteEventStore(path: path)
        _ = try reopened.append([command("c51", [event("loan-L1", "LoanRequested")])])
        let events = try allEvents(reopened)
        #expect(events.map(\.position) == Array(1...51))
        let report = try reopened.verify()
        #expect(report.isIntact && report.eventsChecked == 51)
        #expect(try Self.pageSize(of: path) == 4096)
    }
}
