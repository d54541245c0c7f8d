import EventStore
import Foundation
import ProjectorRuntime
import Projections
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

@testable import StrataCLI

/// `strata rebuild` as its users run it, on the known history: it writes only a file of its
/// own, honours the skips an operator recorded, and says with its exit code whether the
/// rebuild found a problem (1) or could not work (2).
@Suite("strata rebuild") struct RebuildCommandTests {
    /// Every file in `directory` (links followed) whose name starts with `prefix`, and its bytes.
    private func files(in directory: String, named prefix: String = "") throws -> [String: Data] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        var files: [String: Data] = [:]
        for name in names where name.hasPrefix(prefix) {
            var isDirectory: ObjCBool = false
            let path = directory + "/" + name
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            files[name] = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return files
    }

    /// Changes the bytes of the last event in the store (a payment nothing later depends on), so
    /// the chain breaks there; returns its position.
    private func tamperWithTheLastEvent(_ history: KnownHistory) throws -> Int64 {
        let position = try #require(history.positions["pay-INV1"]?.upperBound)
        #expect(position == history.head)
        let store = try SQLiteConnection(path: history.data.appendingPathComponent("events.db").path, mode: .readWrite)
        try store.statement("UPDATE events SET data = data || ' ' WHERE position = ?").run([.integer(position)])
        #expect(store.changes == 1)
        return position
    }

    /// Makes the last event in the store (a payment nothing later depends on) one no projection
    /// can read, its hash recomputed so that the chain still holds: a poison event, which an
    /// operator may skip. Returns its position.
    private func poisonTheLastEvent(_ history: KnownHistory) throws -> Int64 {
        let path = history.data.appendingPathComponent("events.db").path
        let position = try #require(history.positions["pay-INV1"]?.upperBound)
        #expect(position == history.head)
        let event = try #require(try SQLiteEventStore(readingAt: path).events(after: position - 1, limit: 1).first)
        let poisoned = RecordedEvent(
            position: event.position, stream: event.stream, version: event.version, type: event.type,
            schemaVersion: event.schemaVersion, recordedAt: event.recordedAt, data: Array("{}".utf8),
            metadata: event.metadata, prevHash: event.prevHash, hash: "")
        let previous = try #require(Hex.decode(event.prevHash))
        let hash = HashChain.hash(previous: previous, canonicalEvent: poisoned.canonicalBody)
        let store = try SQLiteConnection(path: path, mode: .readWrite)
        try store.statement("UPDATE events SET data = '{}', hash = ? WHERE position = ?")
            .run([.text(Hex.encode(hash)), .integer(position)])
        #expect(store.changes == 1)
        return position
    }

    /// An output that is one of the data directory's own files (or the directory itself), by
    /// whichever name or link, is refused before anything is removed or locked.
    @Test(arguments: [
        "events.db", "audit.db", "./readmodels.db", "keys.json", "subject-keys.db", "events-link.db",
        "audit-hard-link.db", ".", "strata.json",
    ])
    func anOutputThatIsAFileOfTheDataDirectoryIsRefused(_ output: String) throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        try writePrivate(Array(#"{"keys":[]}"#.utf8), to: data + "/keys.json")
        try FileManager.default.createSymbolicLink(atPath: data + "/events-link.db", withDestinationPath: "events.db")
        try FileManager.default.linkItem(atPath: data + "/audit.db", toPath: data + "/audit-hard-link.db")
        let before = try files(in: data)

        let result = try strata(
            ["rebuild", "readmodels", "--data", data, "--output", data + "/" + output], expecting: 2)
        #expect(
            result.stderr.contains("must not replace") || result.stderr.contains("is a directory"), "\(result.stderr)")
        let after = try files(in: data)
        for (name, bytes) in before { #expect(after[name] == bytes, "\(name) changed") }
        #expect(!FileManager.default.fileExists(atPath: data + "/subject-keys.db"))
        #expect(!FileManager.default.fileExists(atPath: data + "/strata.json"))
    }

    /// The live file while its projector writes, named another way: refused, and the file, its
    /// WAL and its lock are left as they were.
    @Test func theLiveFileIsLeftAloneWhileItsProjectorWrites() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        let live = try ProjectionDatabase(
            path: data + "/readmodels.db", name: "readmodels", projections: ReadModels.all)
        let before = try files(in: data, named: "readmodels.db")
        #expect(before["readmodels.db-wal"] != nil && before["readmodels.db-lock"] != nil)

        let result = try strata(
            ["rebuild", "readmodels", "--data", data, "--output", data + "/./readmodels.db"], expecting: 2)
        #expect(result.stderr.contains("must not replace"), "\(result.stderr)")
        #expect(try files(in: data, named: "readmodels.db") == before)
        withExtendedLifetime(live) {}
    }

    /// A rebuild replaces an earlier rebuild of the same projection (or an empty file) and
    /// nothing else: not a text file, a directory, or another projection's rebuild.
    @Test func anExistingOutputIsReplacedOnlyWhenItIsAnEarlierRebuildOfTheSameProjection() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        try withTemporaryDirectory { dir in
            let data = history.data.path
            let notes = dir.appendingPathComponent("notes.txt").path
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: notes))
            let folder = dir.appendingPathComponent("folder").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            try Data("keep me too".utf8).write(to: URL(fileURLWithPath: folder + "/inside.txt"))
            let audit = dir.appendingPathComponent("audit.rebuilt.db").path
            try strata(["rebuild", "audit", "--data", data, "--output", audit], expecting: 0)

            let refusedNotes = try strata(["rebuild", "readmodels", "--data", data, "--output", notes], expecting: 2)
            #expect(refusedNotes.stderr.contains("not an earlier rebuild of readmodels"), "\(refusedNotes.stderr)")
            #expect(try String(contentsOfFile: notes, encoding: .utf8) == "keep me")
            #expect(!FileManager.default.fileExists(atPath: notes + "-lock"))
            let refusedFolder = try strata(["rebuild", "readmodels", "--data", data, "--output", folder], expecting: 2)
            #expect(refusedFolder.stderr.contains("is a directory"), "\(refusedFolder.stderr)")
            #expect(try String(contentsOfFile: folder + "/inside.txt", encoding: .utf8) == "keep me too")
            let refusedAudit = try strata(["rebuild", "readmodels", "--data", data, "--output", audit], expecting: 2)
            #expect(refusedAudit.stderr.contains("holds the projection audit"), "\(refusedAudit.stderr)")
            #expect(try ProjectionSnapshot(path: audit)?.name == "audit")

            let earlier = dir.appendingPathComponent("readmodels.rebuilt.db").path
            try strata(["rebuild", "readmodels", "--data", data, "--output", earlier], expecting: 0)
            try strata(["rebuild", "readmodels", "--data", data, "--output", earlier], expecting: 0)
            #expect(try ProjectionSnapshot(path: earlier)?.checkpoint == history.head)
            let empty = dir.appendingPathComponent("empty.db").path
            #expect(FileManager.default.createFile(atPath: empty, contents: nil))
            try strata(["rebuild", "readmodels", "--data", data, "--output", empty], expecting: 0)
            #expect(try ProjectionSnapshot(path: empty)?.checkpoint == history.head)
        }
    }

    /// The output's writer lock is taken before anything is removed: a rebuild that finds another
    /// process writing the file says so and leaves the file and its WAL.
    @Test func theOutputsLockIsTakenBeforeAnythingIsRemoved() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        let output = data + "/readmodels.rebuilt.db"
        try strata(["rebuild", "readmodels", "--data", data], expecting: 0)
        let writer = try ProjectionDatabase(path: output, name: "readmodels", projections: ReadModels.all)
        let before = try files(in: data, named: "readmodels.rebuilt.db")
        #expect(before["readmodels.rebuilt.db-wal"] != nil)

        let result = try strata(["rebuild", "readmodels", "--data", data], expecting: 2)
        #expect(result.stderr.contains("another process"), "\(result.stderr)")
        #expect(try files(in: data, named: "readmodels.rebuilt.db") == before)
        withExtendedLifetime(writer) {}
    }

    /// Without --compare, the rebuild passes over the events an operator skipped in the live
    /// file, as the live file did.
    @Test func withoutCompareTheSkipsRecordedInTheLiveFileAreHonoured() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        let victim = try poisonTheLastEvent(history)
        // The live file, built again from the changed store, stops there; an operator skips it.
        let live = data + "/readmodels.db"
        try FileManager.default.removeItem(atPath: live)
        let store = try SQLiteEventStore(readingAt: data + "/events.db")
        let built = try Rebuild.run(
            name: "readmodels", projections: ReadModels.all, from: StoreHistory(store: store), into: live)
        #expect(built.stop?.position == victim && built.stop?.kind == .poison)
        do {
            let database = try ProjectionDatabase(path: live, name: "readmodels", projections: ReadModels.all)
            try database.skip(position: victim, reason: "tampered in a test")
        }

        let result = try strata(["rebuild", "readmodels", "--data", data], expecting: 0)
        #expect(!result.stdout.contains("STOPPED"), "\(result.stdout)")
        let rebuilt = try #require(try ProjectionSnapshot(path: data + "/readmodels.rebuilt.db"))
        #expect(rebuilt.checkpoint == history.head)
        #expect(try rebuilt.skips().map(\.position) == [victim])
    }

    /// With --compare, a live file that is no view of the store beside it is named as `strata
    /// status` names it, before anything is rebuilt, and is a problem found (exit 1): ahead of the
    /// store's head (events.db restored from an older backup), which ended the rebuild short of the
    /// live checkpoint with exit 2, or from another store, which it compared row by row into a
    /// difference that did not say why.
    @Test func aLiveFileThatIsNotTheStoresIsNamedBeforeAnythingIsRebuilt() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        func replaceStore(_ make: () throws -> Void) throws {
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: data + "/events.db" + suffix)
            }
            try make()
        }
        try replaceStore { try bootstrapAdminBesideProjections(data: data) }
        let ahead = try strata(["rebuild", "readmodels", "--compare", "--data", data], expecting: 1)
        #expect(
            ahead.stdout
                == "AHEAD: readmodels is ahead of the store: checkpoint \(history.head) is beyond the store's "
                + "head, position 1: events.db is older than this file (restored from a backup?); rebuild it from "
                + "the store\n")
        #expect(!FileManager.default.fileExists(atPath: data + "/readmodels.rebuilt.db"))

        try replaceStore {
            try bootstrapAdminBesideProjections(data: data)
            var other = BenchLendingHistory(admin: "admin-1", today: LocalDate("2026-03-01")!)
            _ = try other.grow(data + "/events.db", to: 100, checkpointKey: data + "/checkpoint.key")
        }
        let other = try strata(["rebuild", "audit", "--compare", "--data", data], expecting: 1)
        #expect(
            other.stdout.hasPrefix(
                "OTHER STORE: audit is not from this store: the store's event at its checkpoint, position "
                    + "\(history.head), has hash "), "\(other.stdout)")
        #expect(other.stdout.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: data + "/audit.rebuilt.db"))
        // Without --compare the rebuild is of the store, whatever the live file.
        try strata(["rebuild", "audit", "--data", data], expecting: 0)
    }

    /// Exit 1 is a problem the rebuild found (an event it cannot apply); a missing live file to
    /// compare with, or an output it cannot create, is of the environment: exit 2.
    @Test func whatTheRebuildFindsIsExitOneAndTheEnvironmentExitTwo() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        try FileManager.default.removeItem(atPath: data + "/audit.db")
        let noLive = try strata(["rebuild", "audit", "--compare", "--data", data], expecting: 2)
        #expect(noLive.stderr.contains("no live audit"), "\(noLive.stderr)")
        try strata(["rebuild", "readmodels", "--data", data, "--output", data + "/missing/x.db"], expecting: 2)

        _ = try tamperWithTheLastEvent(history)
        let stopped = try strata(["rebuild", "readmodels", "--data", data], expecting: 1)
        #expect(stopped.stdout.contains("STOPPED"), "\(stopped.stdout)")
        let compared = try strata(["rebuild", "readmodels", "--compare", "--data", data], expecting: 1)
        #expect(compared.stdout.contains("STOPPED"), "\(compared.stdout)")
    }

    /// A rebuild holds personal data in clear that no later erasure reaches, so only its owner
    /// may read it, whatever the umask and whatever mode an earlier rebuild had; --compare
    /// removes its file when it finds it equal.
    @Test func aRebuildIsReadableByItsOwnerOnly() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        let output = data + "/readmodels.rebuilt.db"
        try strata(["rebuild", "readmodels", "--data", data], expecting: 0)
        #expect(try permissions(output) == 0o600)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: output)
        try strata(["rebuild", "readmodels", "--data", data], expecting: 0)
        #expect(try permissions(output) == 0o600)

        let compared = try strata(["rebuild", "readmodels", "--compare", "--data", data], expecting: 0)
        #expect(compared.stdout.contains("equal:"), "\(compared.stdout)")
        for suffix in ["", "-wal", "-shm", "-lock"] {
            #expect(!FileManager.default.fileExists(atPath: output + suffix), "\(output + suffix) is left")
        }
    }
}
