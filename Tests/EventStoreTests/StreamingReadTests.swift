import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

@testable import EventStore

/// `SQLiteEventStore.forEachEvent` and its `ReplayFilter`: the streaming read `replay` runs.
@Suite("Streaming read")
final class StreamingReadTests: Sendable {
    let directory: URL
    var path: String { directory.appendingPathComponent("events.db").path }

    init() throws {
        directory = try ChildProcess.temporaryDirectory("strata-stream")
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// `count` events, alternating between two loans and an invoice, one command each.
    private func seed(_ store: SQLiteEventStore, _ count: Int, from first: Int = 1) throws {
        for n in first..<(first + count) {
            let stream = n % 3 == 0 ? "invoice-I1" : "loan-L\(n % 3)"
            let type = n % 2 == 0 ? "Even" : "Odd"
            _ = try store.append(try command("c\(n)", [try event(stream, type, ["n": .integer(Int64(n))])]))
        }
    }

    private func collect(_ store: SQLiteEventStore, _ filter: ReplayFilter) throws -> [Int64] {
        var positions: [Int64] = []
        try store.forEachEvent(matching: filter) { row in
            positions.append(row.position)
            return true
        }
        return positions
    }

    @Test func rowsAreWrittenAsRecordedEventJSONEvenWhenStoredTextNeedsEscaping() throws {
        do {
            let store = try SQLiteEventStore(path: path)
            try seed(store, 4)
        }
        // Text no Strata writer produces, put in by hand: the output must still be what
        // RecordedEvent.json gives, escapes and all, and integers at their limits.
        let c = try SQLiteConnection(path: path, mode: .readWrite)
        try c.execute(
            """
            UPDATE events SET stream = 'loan-"q"' || char(10) || '\\', type = 'T' || char(1) || 'x',
                hash = 'ab"cd', version = -9223372036854775808, schema_version = 9223372036854775807
            WHERE position = 2;
            UPDATE events SET recorded_at = 'é' || char(9) || 'ü', prev_hash = '' WHERE position = 3;
            """)
        c.close()

        let store = try SQLiteEventStore(readingAt: path)
        let stored = try store.events(after: 0, limit: 10)
        var lines: [[UInt8]] = []
        try store.forEachEvent(matching: ReplayFilter()) { row in
            var line: [UInt8] = []
            row.appendJSON(to: &line)
            lines.append(line)
            return true
        }
        #expect(lines == stored.map(\.json))
        #expect(String(decoding: lines[1], as: UTF8.self).contains(#""stream":"loan-\"q\"\n\\""#))
        #expect(String(decoding: lines[1], as: UTF8.self).contains(#""version":-9223372036854775808}"#))
        #expect(String(decoding: lines[2], as: UTF8.self).contains(#""prevHash":"","recordedAt":"é\tü""#))
    }

    @Test func needsEscapingAgreesWithTheByteRuleAtEveryOffset() {
        var disagreements: [String] = []
        for length in 1...17 {
            for offset in 0..<length {
                for value in 0...255 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[offset] = UInt8(value)
                    let expected = value < 0x20 || value == 0x22 || value == 0x5C
                    let found = bytes.withUnsafeBytes { StoredEventRow.needsEscaping($0) }
                    if found != expected { disagreements.append("length \(length) offset \(offset) byte \(value)") }
                }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
        #expect(!StoredEventRow.needsEscaping(UnsafeRawBufferPointer(start: nil, count: 0)))
    }

    /// One read transaction: what is appended while the read runs is not seen, and `began`
    /// is told the head the read ends at.
    @Test func theReadIsASnapshot() throws {
        let writer = try SQLiteEventStore(path: path)
        try seed(writer, 5)
        let reader = try SQLiteEventStore(readingAt: path)
        var head: Int64 = -1
        var seen: [Int64] = []
        let count = try reader.forEachEvent(matching: ReplayFilter(), began: { head = $0 }) { row in
            if row.position == 1 { try? self.seed(writer, 3, from: 6) }
            seen.append(row.position)
            return true
        }
        #expect(head == 5)
        #expect(seen == [1, 2, 3, 4, 5])
        #expect(count == 5)
        #expect(try writer.head() == 8)
        #expect(try collect(reader, ReplayFilter()) == Array(1...8))
    }

    @Test func returningFalseStops() throws {
        let store = try SQLiteEventStore(path: path)
        try seed(store, 10)
        var seen: [Int64] = []
        let count = try store.forEachEvent(matching: ReplayFilter(from: 4)) { row in
            seen.append(row.position)
            return seen.count < 3
        }
        #expect(seen == [4, 5, 6])
        #expect(count == 3)
        // The transaction ended: the store reads (and writes) normally afterwards.
        try seed(store, 1, from: 11)
        #expect(try collect(store, ReplayFilter(from: 10)) == [10, 11])
    }

    @Test(arguments: [
        (ReplayFilter(), Array(Int64(1)...12)),
        (ReplayFilter(from: 3, to: 5), [3, 4, 5]),
        (ReplayFilter(stream: StreamName("loan-L1")), [1, 4, 7, 10]),
        (ReplayFilter(stream: StreamName("loan-L1"), types: ["Even"]), [4, 10]),
        (ReplayFilter(categories: ["invoice"]), [3, 6, 9, 12]),
        (ReplayFilter(types: ["Odd"]), [1, 3, 5, 7, 9, 11]),
        (ReplayFilter(to: 6, categories: ["loan"], types: ["Odd", "Even"]), [1, 2, 4, 5]),
        (ReplayFilter(from: 5, actor: "user-1"), Array(Int64(5)...12)),
        (ReplayFilter(actor: "user-"), []),
        (
            ReplayFilter(since: Timestamp("2026-11-20T10:00:00Z"), until: Timestamp("2026-11-20T10:00:00Z")),
            Array(Int64(1)...12)
        ),
        (ReplayFilter(since: Timestamp("2026-11-20T10:00:00.001Z")), []),
    ] as [(ReplayFilter, [Int64])])
    func filters(_ filter: ReplayFilter, _ expected: [Int64]) throws {
        let store = try SQLiteEventStore(path: path, clock: FixedClock())
        try seed(store, 12)
        #expect(try collect(store, filter) == expected)
    }

    /// No plan sorts: a sort would read every match before the first comes out, in memory
    /// that grows with the history.
    @Test(arguments: [
        (ReplayFilter(), "USING INTEGER PRIMARY KEY"),
        (
            ReplayFilter(from: 2, to: 9, categories: ["loan", "invoice"], types: ["A", "B"], actor: "x"),
            "USING INTEGER PRIMARY KEY"
        ),
        (
            ReplayFilter(since: Timestamp("2026-11-20T10:00:00Z"), until: Timestamp("2026-11-21T10:00:00Z")),
            "USING INTEGER PRIMARY KEY"
        ),
        (ReplayFilter(types: ["A"]), "USING INDEX events_by_type"),
        (ReplayFilter(from: 3, categories: ["loan"], types: ["A"], actor: "x"), "USING INDEX events_by_type"),
        (ReplayFilter(stream: StreamName("loan-L1")), "USING INDEX sqlite_autoindex_events_1"),
        (
            ReplayFilter(from: 2, to: 9, stream: StreamName("loan-L1"), types: ["A"]),
            "USING INDEX sqlite_autoindex_events_1"
        ),
    ] as [(ReplayFilter, String)])
    func everyQueryStreamsWithoutSorting(_ filter: ReplayFilter, _ access: String) throws {
        let store = try SQLiteEventStore(path: path)
        try seed(store, 50)
        let (sql, bindings) = filter.query(head: 50)
        let c = try SQLiteConnection(path: path, mode: .readOnly)
        let s = try c.statement("EXPLAIN QUERY PLAN " + sql)
        try s.bind(bindings)
        var plan: [String] = []
        while try s.step() { plan.append(s.text(3)) }
        #expect(plan.count == 1, "\(plan)")
        #expect(plan.allSatisfy { !$0.contains("TEMP B-TREE") }, "\(plan)")
        #expect(plan.first?.contains(access) == true, "\(plan)")
    }

    @Test(arguments: [
        (ReplayFilter(from: -1), "the first position must be ≥ 0, got -1"),
        (ReplayFilter(from: 5, to: 4), "the first position (5) is after the last (4)"),
        (ReplayFilter(categories: ["Loan"]), "'Loan' is not a category (1–32 lowercase letters)"),
        (ReplayFilter(types: ["x"]), "'x' is not an event type (ASCII letters and digits, from a capital)"),
        (ReplayFilter(actor: ""), "an actor is 1–128 bytes"),
        (
            ReplayFilter(since: Timestamp("2026-11-21T00:00:00Z"), until: Timestamp("2026-11-20T00:00:00Z")),
            "the earliest time (2026-11-21T00:00:00.000Z) is after the latest (2026-11-20T00:00:00.000Z)"
        ),
    ] as [(ReplayFilter, String)])
    func impossibleFiltersAreRefused(_ filter: ReplayFilter, _ message: String) throws {
        let store = try SQLiteEventStore(path: path)
        let error = storeError { try store.forEachEvent(matching: filter) { _ in true } }
        #expect(error?.kind == .invalidArgument)
        #expect(error?.message == message)
    }

    @Test(arguments: [
        ("2026-11-20", false, "2026-11-20T00:00:00.000Z"),
        ("2026-11-20", true, "2026-11-20T23:59:59.999Z"),
        ("2026-11-20T10:00:00Z", true, "2026-11-20T10:00:00.000Z"),
        ("2026-11-20t10:00:00.5z", false, "2026-11-20T10:00:00.500Z"),
        ("2026-11-20T15:30:00.250+05:30", false, "2026-11-20T10:00:00.250Z"),
        ("2026-11-20T05:00:00-05:00", false, "2026-11-20T10:00:00.000Z"),
        ("2026-11-20T00:30:00+01:00", false, "2026-11-19T23:30:00.000Z"),
        ("2026-12-31T23:30:00-01:00", false, "2027-01-01T00:30:00.000Z"),
        ("2026-11-20T10:00:00.123456-00:00", false, "2026-11-20T10:00:00.123Z"),
        ("0001-01-01T00:00:00Z", false, "0001-01-01T00:00:00.000Z"),
        ("9999-12-31", true, "9999-12-31T23:59:59.999Z"),
    ])
    func times(_ text: String, _ endOfDay: Bool, _ expected: String) {
        #expect(Timestamp(argument: text, endOfDay: endOfDay)?.description == expected)
    }

    @Test(arguments: [
        "", "tomorrow", "2026-11-20T10:00:00", "2026-11-20 10:00:00Z", "2026-11-20T10:00Z", "2026-11-20T10:00:00+0530",
        "2026-11-20T10:00:00+24:00", "2026-11-20T10:00:00+05:60", "2026-11-20T10:00:00+5:30",
        "2026-11-20T10:00:00Z+05:30",
        "2026-02-30", "2026-11-20T24:00:00Z", "0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01",
    ])
    func malformedTimes(_ text: String) {
        #expect(Timestamp(argument: text) == nil)
        #expect(Timestamp(argument: text, endOfDay: true) == nil)
    }
}
