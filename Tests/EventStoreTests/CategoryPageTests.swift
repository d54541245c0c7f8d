import Foundation
import StrataSQLite
import StrataTesting
import Testing

@testable import EventStore

/// History pages of some categories (`events(after:limit:filter: .categories)`): a category of
/// few events is found by its index, not by walking every later event of the others.
@Suite("Category pages")
final class CategoryPageTests: Sendable {
    let directory: URL
    var path: String { directory.appendingPathComponent("events.db").path }

    /// Rows written: more loan events than `smallCategory`, so the loans are walked.
    static let rows = 110_000

    init() throws {
        directory = try ChildProcess.temporaryDirectory("strata-category-pages")
        // Written by SQL, as a reader sees them (it checks no hash): users at 7 and 100,007,
        // an account every third position and at each of 20,001-26,000, and loans, on 100
        // streams, between: 69,333 of them.
        _ = try SQLiteEventStore(path: path)
        let c = try SQLiteConnection(path: path, mode: .readWrite)
        defer { c.close() }
        try c.execute(
            """
            WITH RECURSIVE n(p) AS (SELECT 1 UNION ALL SELECT p + 1 FROM n WHERE p < \(Self.rows))
            INSERT INTO events (position, stream, version, type, schema_version, recorded_at, data, metadata,
                                prev_hash, hash)
            SELECT p, CASE WHEN p % 100000 = 7 THEN 'user-U' || p
                           WHEN p % 3 = 0 OR p BETWEEN 20001 AND 26000 THEN 'account-A' || p
                           ELSE 'loan-L' || (p % 100) END,
                   p, 'Happened', 1, '2026-11-20T10:00:00.000Z', '{}', '{"actor":"a","commandId":"c"}',
                   printf('%064d', p - 1), printf('%064d', p)
            FROM n
            """)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    private static func category(at position: Int) -> String {
        if position % 100_000 == 7 { return "user" }
        return position % 3 == 0 || (20_001...26_000).contains(position) ? "account" : "loan"
    }

    /// SQLite's count of the steps its virtual machine took, over every statement the store ran.
    private func steps(_ store: SQLiteEventStore) throws -> Int64 {
        try store.state.withLock { state in
            try state.connection.scalarInteger("SELECT sum(nstep) FROM sqlite_stmt") ?? 0
        }
    }

    /// A client following the users asks from the last one it has: the 109,993 events after
    /// it are not users', and walking them (a step at least each) was the cost of every such
    /// request, however little was new, since a category's index does not order it by position.
    @Test func aPageOfAFewEventsCategoryDoesNotWalkTheEventsAfterIt() throws {
        let store = try SQLiteEventStore(readingAt: path)
        let before = try steps(store)
        let page = try store.events(after: 7, limit: 1000, filter: .categories(["user"]))
        #expect(page.map(\.position) == [100_007])
        let taken = try steps(store) - before
        #expect(taken < Int64(Self.rows - 7), "\(taken) steps")
        #expect(try store.events(after: 100_007, limit: 1000, filter: .categories(["user"])).isEmpty)
    }

    /// Every page is what a walk of the whole history finds, whichever way it is read: a window
    /// filled, a few-events category from its index, a dense one walked on, a large one sparse
    /// in the window (the loans after 20,000) walked on, and twice (the second time knowing the
    /// loans are many).
    @Test func pagesHoldTheCategoriesEventsInPositionOrder() throws {
        let store = try SQLiteEventStore(readingAt: path)
        for _ in 0..<2 {
            let asked = [["user"], ["account"], ["loan"], ["user", "account"], ["loan", "user", "loan"], ["party"]]
            for categories in asked {
                let all = (1...Self.rows).filter { categories.contains(Self.category(at: $0)) }.map(Int64.init)
                for after in [Int.min, -1, 0, 6, 7, 4095, 4103, 5007, 20_000, 50_000, 109_990, 110_000, 120_000] {
                    for limit in [1, 3, 10_000] {
                        let expected = all[(all.firstIndex { $0 > after } ?? all.count)...].prefix(limit)
                        let page = try store.events(after: Int64(after), limit: limit, filter: .categories(categories))
                        #expect(page.map(\.position) == Array(expected), "\(categories) after \(after), limit \(limit)")
                    }
                }
            }
        }
        #expect(store.state.withLock { $0.largeCategories } == [["loan"], ["loan", "user"]])
    }
}
