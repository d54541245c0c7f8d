import EventStore
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

/// What only a store on disk can get wrong: files, locks, threads, tampering.
@Suite("SQLite event store")
final class SQLiteEventStoreTests: Sendable {
    let directory: URL
    var path: String { directory.appendingPathComponent("events.db").path }

    init() throws {
        directory = try ChildProcess.temporaryDirectory("strata-sqlite")
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func theFileHasTheContractsTablesWALAndFullSync() throws {
        let store = try SQLiteEventStore(path: path)
        _ = try store.append(command("c1", [event("loan-L1")]))
        let c = try SQLiteConnection(path: path, mode: .readOnly)
        #expect(try c.scalarText("PRAGMA journal_mode") == "wal")
        let columns = try c.statement("SELECT name FROM pragma_table_info('events') ORDER BY cid")
        var names: [String] = []
        while try columns.step() { names.append(columns.text(0)) }
        #expect(names == ["position", "stream", "version", "type", "schema_version", "recorded_at", "data", "metadata", "prev_hash", "hash"])
        #expect(try c.scalarText("SELECT data FROM events WHERE position = 1") == #"{"n":1}"#)
        #expect(try c.scalarText("SELECT outcome FROM commands WHERE command_id = 'c1'") == "accepted")
        // The journal keeps a digest of the body, never the body.
        #expect(try c.scalarText("SELECT body_digest FROM commands WHERE command_id = 'c1'") == Hex.encode(digest("c1")))
    }

    @Test func concurrentAppendsToOneStreamLetExactlyOneWin() async throws {
        let store = try SQLiteEventStore(path: path)
        let contenders = 32
        let accepted = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<contenders {
                group.addTask {
                    let result = try store.append(command("race-\(i)", [event("loan-L1")], expect: [stream("loan-L1"): .exactly(0)]))
                    if case .recorded(.accepted) = result { return true }
                    #expect(result.outcome.isConflict)
                    return false
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(accepted == 1)
        #expect(try store.version(of: stream("loan-L1")) == 1)
        #expect(try store.head() == 1)
    }

    @Test func aSecondWriterIsRefusedWhileTheFirstHoldsTheStore() throws {
        let first = try SQLiteEventStore(path: path)
        _ = try first.append(command("c1", [event("loan-L1")]))
        let error = storeError { _ = try SQLiteEventStore(path: path) }
        #expect(error?.kind == .locked)
        #expect(error?.message.contains("pid \(getpid())") == true)

        // Another process is refused too, and says why.
        let child = try ChildProcess.run(ChildProcess.product("StoreCrashWriter"), [path])
        #expect(child.exitCode == 1)
        #expect(child.stderr.contains("LOCKED"))

        // Readers keep working meanwhile.
        let reader = try SQLiteEventStore(readingAt: path)
        #expect(try reader.head() == 1)
        #expect(try reader.verify().isIntact)
        #expect(storeError { _ = try reader.append(command("c2", [event("loan-L1")])) }?.kind == .readOnly)
    }

    @Test func theLockIsReleasedWhenTheWriterCloses() throws {
        do {
            let first = try SQLiteEventStore(path: path)
            _ = try first.append(command("c1", [event("loan-L1")]))
        }
        let second = try SQLiteEventStore(path: path)
        #expect(try second.head() == 1)
    }

    @Test func reopeningContinuesTheChainAndKeepsTheJournal() throws {
        do {
            let store = try SQLiteEventStore(path: path)
            _ = try store.append(command("c1", [event("loan-L1"), event("agent-A1")]))
        }
        let store = try SQLiteEventStore(path: path)
        #expect(try store.head() == 2)
        if case .duplicate = try store.append(command("c1", [event("loan-L1"), event("agent-A1")])) {} else {
            Issue.record("the journal did not survive a reopen")
        }
        #expect(acceptedPositions(try store.append(command("c2", [event("loan-L1")], expect: [stream("loan-L1"): .exactly(1)]))) == [3])
        #expect(try store.verify().eventsChecked == 3)
        #expect(try store.verify().isIntact)
    }

    /// A file moved away from under its writer, then another put at its path: each append is
    /// refused, saying which, and neither file gains an event (SQLite would write on into the
    /// file it has open, which no reader at the path sees).
    @Test func aFileGoneFromItsPathIsAppendedToNoMore() throws {
        let store = try SQLiteEventStore(path: path)
        _ = try store.append(command("c1", [event("loan-L1")]))
        let moved = path + ".moved"
        #expect(rename(path, moved) == 0)
        let removed = storeError { _ = try store.append(command("c2", [event("loan-L1")])) }
        #expect(removed?.kind == .io)
        #expect(removed?.message.contains("was removed or moved away while this process had it open") == true)
        #expect(try store.journalEntry(commandId: "c2") == nil)

        try FileManager.default.copyItem(atPath: moved, toPath: path)
        let replaced = storeError { _ = try store.append(command("c3", [event("loan-L1")])) }
        #expect(replaced?.message.contains("was replaced by another file") == true, "\(String(describing: replaced))")

        // The file it opened back at its path: it appends again, after what it had.
        try FileManager.default.removeItem(atPath: path)
        #expect(rename(moved, path) == 0)
        #expect(acceptedPositions(try store.append(command("c4", [event("loan-L1")]))) == [2])
        #expect(try store.journalEntry(commandId: "c2") == nil && store.journalEntry(commandId: "c3") == nil)
        #expect(try store.verify().isIntact)
    }

    /// A writer lock file removed under its writer (taken for a stale one): the writer takes
    /// the lock again, at its next append or when asked between appends, so a second writer
    /// that comes later is refused as it is while the first lock stands.
    @Test func aRemovedWriterLockFileIsTakenAgain() throws {
        let store = try SQLiteEventStore(path: path)
        _ = try store.append(command("c1", [event("loan-L1")]))
        #expect(unlink(path + "-lock") == 0)
        try store.keepWriterLock()
        #expect(FileManager.default.fileExists(atPath: path + "-lock"))
        #expect(storeError { _ = try SQLiteEventStore(path: path) }?.kind == .locked)

        #expect(unlink(path + "-lock") == 0)
        #expect(acceptedPositions(try store.append(command("c2", [event("loan-L1")]))) == [2])
        #expect(storeError { _ = try SQLiteEventStore(path: path) }?.kind == .locked)
    }

    /// A second writer that took the lock while its file was missing: the first appends nothing
    /// while the second holds it, goes on once it let go having appended nothing, and appends
    /// nothing more, for good, once another process appended: it would decide from a history
    /// that moved on without it. The history stays one chain.
    @Test func aWriterAppendsNothingBesideOneThatTookItsRemovedLock() throws {
        let first = try SQLiteEventStore(path: path)
        _ = try first.append(command("c1", [event("loan-L1")]))
        #expect(unlink(path + "-lock") == 0)
        var second: SQLiteEventStore? = try SQLiteEventStore(path: path)
        let held = storeError { _ = try first.append(command("c2", [event("loan-L1")])) }
        #expect(held?.kind == .locked)
        #expect(held?.message.contains("holds the lock there now") == true, "\(String(describing: held))")
        second = nil
        #expect(acceptedPositions(try first.append(command("c2", [event("loan-L1")]))) == [2])

        #expect(unlink(path + "-lock") == 0)
        second = try SQLiteEventStore(path: path)
        #expect(acceptedPositions(try #require(second).append(command("c3", [event("loan-L2")]))) == [3])
        second = nil
        for id in ["c4", "c5"] {
            let superseded = storeError { _ = try first.append(command(id, [event("loan-L1")])) }
            #expect(superseded?.kind == .locked)
            #expect(
                superseded?.message.contains("another process appended") == true, "\(String(describing: superseded))")
        }
        let reader = try SQLiteEventStore(readingAt: path)
        #expect(try reader.head() == 3)
        #expect(try reader.verify().isIntact)
    }

    /// A store reopened under a clock behind its last event records at that event's instant.
    @Test func aReopenedStoreRecordsNoEarlierThanItsLastEvent() throws {
        do {
            let store = try SQLiteEventStore(path: path, clock: FixedClock(Timestamp("2026-11-20T10:00:00.000Z")!))
            _ = try store.append(command("c1", [event("loan-L1")]))
        }
        let store = try SQLiteEventStore(path: path, clock: FixedClock(Timestamp("2026-11-19T23:00:00.000Z")!))
        _ = try store.append(command("c2", [event("loan-L1")]))
        #expect(try allEvents(store).map(\.recordedAt) == ["2026-11-20T10:00:00.000Z", "2026-11-20T10:00:00.000Z"])
    }

    /// The writer's reads of one batch share one read transaction: what another connection
    /// commits meanwhile is not seen until they end, and they end before the next append,
    /// however the body ends.
    @Test func readsTakenTogetherSeeOneSnapshotAndEndBeforeTheAppend() throws {
        let store = try SQLiteEventStore(path: path)
        _ = try store.append(command("c1", [event("loan-L1")]))
        let other = try SQLiteConnection(path: path, mode: .readWrite)
        let copyJournalEntry = "INSERT INTO commands SELECT 'c2', body_digest, key_id, actor, command_type, outcome, "
            + "result, recorded_at, head FROM commands WHERE command_id = 'c1'"
        var copied = false
        try store.readingTogether { () throws(StoreError) in
            #expect(try store.journalEntry(commandId: "c2") == nil)
            copied = (try? other.execute(copyJournalEntry)) != nil
            #expect(try store.journalEntry(commandId: "c2") == nil, "one snapshot for all the reads")
            // Taken together again inside: the same transaction.
            try store.readingTogether { () throws(StoreError) in
                #expect(try store.journalEntry(commandId: "c2") == nil)
            }
        }
        #expect(copied)
        #expect(try store.journalEntry(commandId: "c2")?.head == 1, "the next read is a transaction of its own")
        #expect(acceptedPositions(try store.append(command("c3", [event("loan-L3")]))) == [2])

        let failure = storeError {
            try store.readingTogether { () throws(StoreError) in
                _ = try store.journalEntry(commandId: "c3")
                throw StoreError(.io, "the body failed")
            }
        }
        #expect(failure?.message == "the body failed")
        #expect(acceptedPositions(try store.append(command("c4", [event("loan-L4")]))) == [3])
        #expect(try store.verify().isIntact)
    }

    /// Builds a store of `count` single-event commands and closes it.
    func seed(_ count: Int) throws {
        let store = try SQLiteEventStore(path: path)
        for i in 1...count { _ = try store.append(command("c\(i)", [event("loan-L\(i)", "TestHappened", ["who": "root", "i": .integer(Int64(i))])])) }
    }

    func tamper(_ sql: String) throws {
        let c = try SQLiteConnection(path: path, mode: .readWrite)
        try c.execute(sql)
    }

    @Test func changingOneByteOfStoredDataIsCaughtAtThatPosition() throws {
        try seed(10)
        try tamper("UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position = 7")
        let report = try SQLiteEventStore(readingAt: path).verify()
        #expect(report.problem?.position == 7)
        #expect(report.problem?.kind == .hashMismatch)
        #expect(report.eventsChecked == 6)
        #expect(report.lastGoodPosition == 6)
    }

    @Test(arguments: [
        ("UPDATE events SET metadata = replace(metadata, 'user-1', 'user-2') WHERE position = 4", Int64(4), ChainProblem.Kind.hashMismatch),
        ("UPDATE events SET recorded_at = '2026-11-20T10:00:00.001Z' WHERE position = 2", 2, .hashMismatch),
        ("UPDATE events SET stream = 'loan-X' WHERE position = 9", 9, .hashMismatch),
        ("UPDATE events SET type = 'Other' WHERE position = 1", 1, .hashMismatch),
        ("UPDATE events SET version = 2 WHERE position = 3", 3, .hashMismatch),
        ("UPDATE events SET schema_version = 2 WHERE position = 5", 5, .hashMismatch),
        ("UPDATE events SET prev_hash = (SELECT hash FROM events WHERE position = 1) WHERE position = 3", 3, .brokenLink),
        ("DELETE FROM events WHERE position = 6", 6, .gap),
        // Rewriting one event with a correct hash still breaks the next link.
        ("UPDATE events SET hash = '00' || substr(hash, 3) WHERE position = 8", 8, .hashMismatch),
        // A value of another storage class reads back as the hashed one (1.5 as 1, '1x' as 1,
        // a BLOB as the same bytes) while SQL sees something else: caught all the same.
        ("UPDATE events SET version = version + 0.5 WHERE position = 3", 3, .hashMismatch),
        ("UPDATE events SET version = version || 'x' WHERE position = 3", 3, .hashMismatch),
        ("UPDATE events SET schema_version = 1.5 WHERE position = 5", 5, .hashMismatch),
        ("UPDATE events SET stream = CAST(stream AS BLOB) WHERE position = 9", 9, .hashMismatch),
        ("UPDATE events SET data = CAST(data AS BLOB) WHERE position = 1", 1, .hashMismatch),
    ])
    func everyKindOfTamperingIsCaught(_ sql: String, _ position: Int64, _ kind: ChainProblem.Kind) throws {
        try seed(10)
        try tamper(sql)
        let report = try SQLiteEventStore(readingAt: path).verify()
        #expect(report.problem?.position == position)
        #expect(report.problem?.kind == kind)
    }

    /// A row changed to hold a value of another storage class is refused by every read of
    /// whole events (history, the writer's streams, replay), not handed on as the value it
    /// reads back as.
    @Test func readsRefuseARowWhoseColumnHoldsAnotherStorageClass() throws {
        try seed(10)
        try tamper("UPDATE events SET version = version + 0.5 WHERE position = 4")
        let store = try SQLiteEventStore(readingAt: path)
        let read = storeError { _ = try store.events(after: 0, limit: 100) }
        #expect(read?.kind == .corrupt)
        #expect(read?.message.contains("position 4") == true, "\(String(describing: read))")
        #expect(read?.message.contains("version holds a REAL") == true, "\(String(describing: read))")
        #expect(try store.events(after: 0, limit: 3).count == 3, "the rows before it read as ever")
        var replayed: [Int64] = []
        let walk = storeError { try store.forEachEvent(matching: ReplayFilter()) { replayed.append($0.position); return true } }
        #expect(walk?.kind == .corrupt)
        #expect(replayed == [1, 2, 3])
    }

    @Test func filesThatAreNotStrataStoresAreRefusedAtOpen() throws {
        // A SQLite file of someone else's.
        let foreign = directory.appendingPathComponent("foreign.db").path
        let c = try SQLiteConnection(path: foreign, mode: .readWrite)
        try c.execute("CREATE TABLE notes (x TEXT)")
        #expect(storeError { _ = try SQLiteEventStore(path: foreign) }?.kind == .corrupt)
        #expect(storeError { _ = try SQLiteEventStore(readingAt: foreign) }?.kind == .corrupt)

        // Garbage where a store should be.
        let garbage = directory.appendingPathComponent("garbage.db").path
        _ = FileManager.default.createFile(atPath: garbage, contents: Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919) }))
        #expect(storeError { _ = try SQLiteEventStore(path: garbage) }?.kind == .corrupt)

        // A store cut short.
        try seed(200)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(size / 2))
        try handle.close()
        let error = storeError { _ = try SQLiteEventStore(path: path) }
        #expect(error?.kind == .corrupt)

        // A missing store is not silently created by a reader.
        #expect(storeError { _ = try SQLiteEventStore(readingAt: directory.appendingPathComponent("none.db").path) } != nil)
    }

    /// `maximumBytes` is `strata serve --max-store-bytes`: a full store refuses the whole
    /// append as FULL, writes none of it, keeps answering from the journal, and takes the same
    /// command once reopened with room.
    @Test func aStoreAtItsSizeLimitRefusesWholeAppendsUntilReopenedWithRoom() throws {
        let padding: JSONValue = ["pad": .string(String(repeating: "x", count: 1500))]
        var appended = 0
        var full: StoreError?
        do {
            let store = try SQLiteEventStore(path: path, maximumBytes: 128 * 1024)
            while full == nil {
                let write = try command("c\(appended + 1)", [event("loan-L\(appended)", "TestHappened", padding)])
                do {
                    _ = try store.append(write)
                    appended += 1
                } catch {
                    full = error
                }
                try #require(appended < 1000, "the limit never bit")
            }
            #expect(full?.kind == .full)
            #expect(full?.message.contains("database or disk is full") == true, "\(String(describing: full))")
            #expect(try store.head() == Int64(appended))
            #expect(try store.journalEntry(commandId: "c\(appended + 1)") == nil)
            // Still full, yet a retry of a recorded command is answered from the journal.
            let refused = try command("c\(appended + 1)", [event("loan-L\(appended)", "TestHappened", padding)])
            #expect(storeError { _ = try store.append(refused) }?.kind == .full)
            guard case .duplicate = try store.append(command("c1", [event("loan-L0", "TestHappened", padding)])) else {
                Issue.record("a retry of c1 is a duplicate")
                return
            }
            #expect(try store.verify().isIntact)
        }
        let roomier = try SQLiteEventStore(path: path, maximumBytes: 1 << 20)
        let write = try command("c\(appended + 1)", [event("loan-L\(appended)", "TestHappened", padding)])
        #expect(acceptedPositions(try roomier.append(write)) == [Int64(appended + 1)])
        #expect(try roomier.verify().isIntact)
        print("SQLite event store: \(appended) commands of 1.5 KB filled a 128 KiB store")
    }

    /// A group commit large enough to hash its chain on the store's chain thread stores,
    /// answers and chains exactly what the in-memory twin does inline, with the journal
    /// seeing its own earlier commands (a retry and a reused id inside the same call).
    @Test func aLargeGroupCommitEqualsTheInlineTwin() throws {
        let clock = FixedClock()
        let sqlite = try SQLiteEventStore(path: path, clock: clock)
        let memory = InMemoryEventStore(clock: clock)
        var batch: [CommandWrite] = []
        for i in 0..<60 {
            let text: JSONValue = ["n": .integer(Int64(i)), "text": .string(String(repeating: "é", count: i * 20))]
            switch i % 10 {
            case 3: batch.append(try refusal("r\(i)", StrataError(.rejected, reason: "NO", "refused \(i)")))
            case 5: batch.append(try command("x\(i)", [event("loan-L1")], expect: [stream("loan-L1"): .exactly(0)]))
            case 7: batch.append(try command("c\(i - 7)", [event("loan-L2")]))  // a retry of an earlier one
            case 9: batch.append(try command("c\(i - 9)", [event("loan-L2")], body: "other"))  // its id reused
            default:
                batch.append(
                    try command("c\(i)", [event("loan-L\(i % 4)", "A", text), event("agent-A\(i % 3)", "B", text)]))
            }
        }
        for store in [sqlite, memory] as [any EventStore] {
            _ = try store.append(command("seed", [event("loan-L1")]))
        }
        let (fromFile, storedInFile) = try sqlite.appendReturningEvents(batch)
        let (fromMemory, storedInMemory) = try memory.appendReturningEvents(batch)
        #expect(storedInFile.count >= SQLiteEventStore.threadedChainMinimum, "the append uses the chain thread")
        #expect(fromFile == fromMemory)
        #expect(storedInFile == storedInMemory)
        #expect(try allEvents(sqlite) == allEvents(memory))
        #expect(fromFile.filter { if case .duplicate = $0 { true } else { false } }.count == 6)
        #expect(fromFile.filter { if case .idReused = $0 { true } else { false } }.count == 6)
        let report = try sqlite.verify()
        #expect(report.isIntact)
        #expect(report.eventsChecked == Int64(storedInFile.count + 1))
    }

    /// A large append that fails part-way (the file is full) writes nothing, and the chain
    /// thread's unread work does not leak into the next append.
    @Test func aLargeAppendThatFailsLeavesNothingAndTheNextOneChainsOn() throws {
        let padding: JSONValue = ["pad": .string(String(repeating: "x", count: 1500))]
        let store = try SQLiteEventStore(path: path, maximumBytes: 256 * 1024)
        _ = try store.append(command("first", [event("loan-L0")]))
        let tooMany = try (0..<200).map { try event("loan-L\($0 % 9)", "TestHappened", padding) }
        #expect(storeError { _ = try store.append(command("big", tooMany)) }?.kind == .full)
        #expect(try store.head() == 1)
        #expect(try store.journalEntry(commandId: "big") == nil)
        let fits = try (0..<20).map { try event("loan-L\($0 % 3)", "TestHappened", ["i": .integer(Int64($0))]) }
        #expect(acceptedPositions(try store.append(command("fits", fits))) == Array(2...21))
        let events = try allEvents(store)
        #expect(events[1].prevHash == events[0].hash)
        #expect(try store.verify().isIntact)
    }

    @Test func aNewerSchemaIsRefused() throws {
        try seed(1)
        try tamper("PRAGMA user_version = 99")
        #expect(storeError { _ = try SQLiteEventStore(path: path) }?.kind == .unsupportedVersion)
    }
}
