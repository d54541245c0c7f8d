import EventStore
import Events
import Foundation
import ProjectorRuntime
import Projections
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

/// A projection that counts users per status, and refuses users named "poison".
private struct UserCount: Projection {
    var version = 1
    var name: String { "user_count" }
    var schema: ProjectionSchema {
        ProjectionSchema(
            version: version, statements: ["CREATE TABLE user_count (status TEXT PRIMARY KEY, users INTEGER NOT NULL)"])
    }
    var categories: [String]? { ["user"] }

    struct Refused: Error, CustomStringConvertible { var description: String { "poison is not a username" } }

    func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {
        guard case .userRegistered(let user) = event.event else { return }
        if user.username == "poison" { throw Refused() }
        try tables.execute(
            "INSERT INTO user_count VALUES (?, 1) ON CONFLICT (status) DO UPDATE SET users = users + 1",
            [.text(user.status.rawValue)])
    }
}

private func registered(_ id: String, username: String? = nil) -> StrataEvent {
    .userRegistered(
        UserRegistered(userId: id, username: username ?? id, email: PersonalData("\(id)@example.com"), role: .agent, status: .pending))
}

@Suite struct ProjectionDatabaseTests {
    /// A reader that opens the file while a projector is creating it sees no file yet;
    /// a file of someone else's is refused.
    @Test func aFileBeingCreatedReadsAsAbsentAndAForeignOneIsRefused() throws {
        let directory = try ChildProcess.temporaryDirectory("snapshot")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("readmodels.db").path
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        #expect(try ProjectionSnapshot(path: path) == nil)
        try connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY)")
        #expect(throws: ProjectorError.self) { try ProjectionSnapshot(path: path) }
        connection.close()
    }

    /// Live and scratch projection files are made with the store's page size.
    @Test(arguments: [ProjectionDatabase.Durability.durable, .scratch])
    func aNewFileIsMadeWithEightKibibytePages(durability: ProjectionDatabase.Durability) throws {
        let directory = try ChildProcess.temporaryDirectory("page-size")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("readmodels.db").path
        let database = try ProjectionDatabase(
            path: path, name: "test", projections: [UserCount()], durability: durability)
        if durability == .scratch { try database.finishBuilding() }
        let reader = try SQLiteConnection(path: path, mode: .readOnly)
        #expect(try reader.scalarInteger("PRAGMA page_size") == Int64(SQLiteConnection.pageSize))
        #expect(try reader.scalarText("PRAGMA journal_mode") == "wal")
    }

    @Test func checkpointMovesWithTheRowsInOneTransaction() throws {
        let h = try ProjectionHarness([UserCount()])
        try h.given(registered("u1"), stream: "user-u1")
        try h.given(.commissionRateChanged(CommissionRateChanged(rateBp: 900, changedBy: "a")), stream: "settings-global")
        try h.given(registered("u2"), stream: "user-u2")
        #expect(h.database.checkpoint == 3)
        #expect(h.database.chainHash == h.recorded.last?.hash)
        #expect(try h.rows("SELECT status, users FROM user_count") == [["PENDING", 2]])
        #expect(try h.rows("SELECT position, hash FROM strata_checkpoint") == [[3, .text(h.recorded[2].hash)]])
    }

    @Test func aPoisonEventStopsTheFileThereAndKeepsWhatCameBefore() throws {
        let h = try ProjectionHarness([UserCount()])
        let batch = [
            try h.record(registered("u1"), stream: "user-u1"),
            try h.record(registered("u2", username: "poison"), stream: "user-u2"),
            try h.record(registered("u3"), stream: "user-u3"),
        ]
        try h.database.apply(batch)
        #expect(h.database.checkpoint == 1)
        let stop = try #require(h.database.stop)
        #expect(stop.position == 2 && stop.type == "UserRegistered" && stop.stream == "user-u2")
        #expect(stop.error.contains("poison is not a username") && stop.kind == .poison)
        #expect(try h.rows("SELECT users FROM user_count") == [[1]])
        #expect(try h.rows("SELECT stopped_position, stopped_error IS NOT NULL FROM strata_checkpoint") == [[2, 1]])
        // Nothing after it is applied until an operator acts.
        #expect(throws: ProjectorError.self) { try h.database.apply(batch[1...]) }

        // Resuming without a fix stops at the same event again.
        try h.database.resume()
        try h.database.apply(batch[1...])
        #expect(h.database.stop?.position == 2)

        // Skipping is explicit, recorded with its reason, and moves on.
        #expect(throws: ProjectorError.self) { try h.database.skip(position: 3, reason: "wrong one") }
        try h.database.skip(position: 2, reason: "test data entered by mistake")
        try h.database.apply(batch[1...])
        #expect(h.database.checkpoint == 3 && h.database.stop == nil)
        #expect(try h.rows("SELECT users FROM user_count") == [[2]])
        #expect(try h.rows("SELECT position, type, reason FROM strata_skipped") == [[2, "UserRegistered", "test data entered by mistake"]])
    }

    @Test func aBrokenChainStopsTheProjection() throws {
        let h = try ProjectionHarness([UserCount()])
        let first = try h.record(registered("u1"), stream: "user-u1")
        let second = try h.record(registered("u2"), stream: "user-u2")
        let tampered = RecordedEvent(
            position: second.position, stream: second.stream, version: second.version, type: second.type,
            schemaVersion: second.schemaVersion, recordedAt: second.recordedAt,
            data: Array(String(decoding: second.data, as: UTF8.self).replacingOccurrences(of: "u2@", with: "u9@").utf8),
            metadata: second.metadata, prevHash: second.prevHash, hash: second.hash)
        try h.database.apply([first, tampered])
        #expect(h.database.checkpoint == 1)
        #expect(h.database.stop?.error.contains("hash chain is broken") == true)
        #expect(h.database.stop?.kind == .brokenChain)
    }

    /// A skip takes the skipped event's hash as it is: at a broken chain the file would go on
    /// along a chain it never applied. Refused, with the stop and the file as they were; the
    /// kind is recorded with the stop, so a reader of the file sees it too.
    @Test func aBrokenChainCannotBeSkipped() throws {
        let h = try ProjectionHarness([UserCount()])
        let first = try h.record(registered("u1"), stream: "user-u1")
        let second = try h.record(registered("u2"), stream: "user-u2")
        let third = try h.record(registered("u3"), stream: "user-u3")
        let foreign = RecordedEvent(
            position: second.position, stream: second.stream, version: second.version, type: second.type,
            schemaVersion: second.schemaVersion, recordedAt: second.recordedAt, data: second.data,
            metadata: second.metadata, prevHash: String(repeating: "ab", count: 32), hash: second.hash)
        try h.database.apply([first, foreign, third])
        #expect(h.database.stop?.kind == .brokenChain)
        let refusal = #expect(throws: ProjectorError.self) { try h.database.skip(position: 2, reason: "why not") }
        #expect(refusal?.kind == .invalidRequest)
        #expect(refusal?.message.contains("cannot skip position 2") == true, "\(String(describing: refusal))")
        #expect(refusal?.message.contains("`strata verify`") == true, "\(String(describing: refusal))")
        #expect(h.database.stop?.position == 2 && h.database.checkpoint == 1)
        #expect(try h.rows("SELECT count(*) FROM strata_skipped") == [[0]])
        #expect(try h.rows("SELECT stopped_kind FROM strata_checkpoint") == [["BROKEN_CHAIN"]])
        let snapshot = try #require(try ProjectionSnapshot(path: h.database.path))
        #expect(snapshot.stop?.kind == .brokenChain)
    }

    /// A file an earlier version wrote has no `stopped_kind`: read as it is, its stop is told by
    /// its error; opened for writing, it gains the column with the definition a new file has.
    @Test(arguments: [
        ("the hash chain is broken: prevHash ab is not the hash of position 1 (cd)", ProjectionStop.Kind.brokenChain),
        ("user_count cannot apply it: poison is not a username", .poison),
    ])
    func aStopAnEarlierVersionRecordedIsToldByItsError(error: String, kind: ProjectionStop.Kind) throws {
        let h = try ProjectionHarness([UserCount()])
        let events = [
            try h.record(registered("u1"), stream: "user-u1"), try h.record(registered("u2"), stream: "user-u2"),
        ]
        let path = h.directory.appendingPathComponent("earlier.db").path
        let fresh = h.directory.appendingPathComponent("fresh.db").path
        for file in [path, fresh] {
            let database = try ProjectionDatabase(path: file, name: "test", projections: [UserCount()])
            try database.apply(events.prefix(1))
        }
        do {
            let earlier = try SQLiteConnection(path: path, mode: .readWrite)
            try earlier.execute("ALTER TABLE strata_checkpoint DROP COLUMN stopped_kind")
            try earlier.statement(
                """
                UPDATE strata_checkpoint SET stopped_position = 2, stopped_stream = 'user-u2',
                  stopped_type = 'UserRegistered', stopped_error = ?
                """
            ).run([.text(error)])
        }
        let snapshot = try #require(try ProjectionSnapshot(path: path))
        #expect(snapshot.stop?.kind == kind && snapshot.stop?.error == error)
        // Compared with a new file, the stop and the column it lacks are no difference.
        #expect(try snapshot.compare(with: fresh).difference == nil)

        let database = try ProjectionDatabase(path: path, name: "test", projections: [UserCount()])
        #expect(database.stop?.kind == kind)
        let definition = "SELECT sql FROM sqlite_master WHERE name = 'strata_checkpoint'"
        let opened = try SQLiteConnection(path: fresh, mode: .readOnly)
        #expect(try database.query(definition) == [[.text(try #require(try opened.scalarText(definition)))]])
        switch kind {
        case .brokenChain:
            #expect(throws: ProjectorError.self) { try database.skip(position: 2, reason: "a test") }
            #expect(database.stop?.position == 2)
        case .poison:
            try database.skip(position: 2, reason: "a test")
            try database.apply(events[1...])
            #expect(database.stop == nil && database.checkpoint == 2)
        }
    }

    /// A large batch is checked and decoded in two parts on two threads: a poison event
    /// stops it at the same place wherever it falls, and a clean batch lands whole.
    @Test(arguments: [nil, 5, 33, 34, 150, 200] as [Int?])
    func aLargeBatchStopsAtItsPoisonEventWhereverItFalls(_ poisonAt: Int?) throws {
        let h = try ProjectionHarness([UserCount()])
        let batch = try (1...200).map { (n: Int) in
            try h.record(registered("u\(n)", username: n == poisonAt ? "poison" : nil), stream: "user-u\(n)")
        }
        try h.database.apply(batch)
        let applied = Int64((poisonAt ?? 201) - 1)
        #expect(h.database.checkpoint == applied)
        #expect(h.database.chainHash == batch[Int(applied) - 1].hash)
        #expect(h.database.stop?.position == poisonAt.map(Int64.init))
        #expect(try h.rows("SELECT users FROM user_count") == [[.integer(applied)]])
    }

    @Test func aBrokenChainInTheSecondPartOfALargeBatchStopsItThere() throws {
        let h = try ProjectionHarness([UserCount()])
        var batch = try (1...200).map { n in try h.record(registered("u\(n)"), stream: "user-u\(n)") }
        let event = batch[119]
        batch[119] = RecordedEvent(
            position: event.position, stream: event.stream, version: event.version, type: event.type,
            schemaVersion: event.schemaVersion, recordedAt: event.recordedAt, data: event.data,
            metadata: Array(#"{"actor":"someone-else","commandId":"cmd-120"}"#.utf8), prevHash: event.prevHash,
            hash: event.hash)
        try h.database.apply(batch)
        #expect(h.database.checkpoint == 119)
        #expect(h.database.stop?.position == 120)
        #expect(h.database.stop?.error.contains("does not match the event's contents") == true)
        #expect(try h.rows("SELECT users FROM user_count") == [[119]])
    }

    /// Events come from the store in position order, so one past the next is a store without the
    /// event between (a row removed): a break in the chain, stopped at as one. One at or before
    /// the checkpoint is no event of the store's to apply, and is refused.
    @Test func eventsMustContinueFromTheCheckpoint() throws {
        let h = try ProjectionHarness([UserCount()])
        let first = try h.record(registered("u1"), stream: "user-u1")
        let second = try h.record(registered("u2"), stream: "user-u2")
        try h.database.apply([second])
        #expect(h.database.checkpoint == 0)
        #expect(h.database.stop?.position == 2 && h.database.stop?.kind == .brokenChain)
        #expect(h.database.stop?.error.contains("no event at position 1") == true)

        let other = try ProjectionHarness([UserCount()])
        _ = try other.record(registered("u1"), stream: "user-u1")
        try other.database.apply([first])
        #expect(throws: ProjectorError.self) { try other.database.apply([first]) }
        #expect(other.database.checkpoint == 1)
    }

    @Test func aSecondWriterIsRefusedAndAnotherSchemaStartsAfresh() throws {
        let h = try ProjectionHarness([UserCount()])
        try h.given(registered("u1"), stream: "user-u1")
        let path = h.database.path
        #expect(throws: ProjectorError.self) { _ = try ProjectionDatabase(path: path, name: "test", projections: [UserCount()]) }
    }

    /// A file started afresh for another schema keeps the operator's skips, as a rebuild does.
    @Test func aSchemaChangeKeepsTheSkips() throws {
        let h = try ProjectionHarness([UserCount()])
        let events = [
            try h.record(registered("u1"), stream: "user-u1"),
            try h.record(registered("u2", username: "poison"), stream: "user-u2"),
            try h.record(registered("u3"), stream: "user-u3"),
        ]
        let path = h.directory.appendingPathComponent("changed.db").path
        do {
            let database = try ProjectionDatabase(path: path, name: "test", projections: [UserCount()])
            try database.apply(events)
            try database.skip(position: 2, reason: "test data entered by mistake")
            try database.apply(events[1...])
        }
        let changed = try ProjectionDatabase(path: path, name: "test", projections: [UserCount(version: 2)])
        #expect(changed.wasReset && changed.checkpoint == 0)
        try changed.apply(events)
        #expect(changed.stop == nil && changed.checkpoint == 3)
        #expect(try changed.query("SELECT users FROM user_count") == [[2]])
        #expect(
            try changed.query("SELECT position, type, reason FROM strata_skipped")
                == [[2, "UserRegistered", "test data entered by mistake"]])
    }
}
