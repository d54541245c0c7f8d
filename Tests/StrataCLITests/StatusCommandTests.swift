import Foundation
import StrataCore
import StrataTesting
import Testing

@testable import StrataCLI

@Suite("strata status")
struct StatusCommandTests {
    /// A projection ahead of the store (events.db restored from an older backup) is no
    /// projection behind by a negative count: its file holds events the store no longer has.
    @Test func aCheckpointBeyondTheHeadIsAnError() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: data + "/events.db" + suffix) }
        try bootstrapAdminBesideProjections(data: data)

        let json = try jsonLine(try strata(["status", "--format", "json", "--data", data], expecting: 1).stdout)
        #expect(json["head"] == 1)
        #expect(json["projections"] == ["readmodels": .integer(history.head), "audit": .integer(history.head)])
        for name in ["readmodels", "audit"] {
            #expect(
                json["errors"]?[name]
                    == .string(
                        "checkpoint \(history.head) is beyond the store's head, position 1: events.db is older than "
                            + "this file (restored from a backup?); rebuild it from the store"),
                "\(json)")
        }
        let text = try strata(["status", "--only", "audit", "--data", data], expecting: 1).stdout
        #expect(
            text.split(separator: "\n").last.map(String.init)
                == "audit       at \(history.head)          AHEAD: checkpoint \(history.head) is beyond the store's head, "
                + "position 1: events.db is older than this file (restored from a backup?); rebuild it from the store "
                + "(no projector running here)")
        try strata(["status", "--only", "events", "--data", data], expecting: 0)
    }

    /// Files built from another store (another data directory's, or events.db restored from
    /// another system) under a store that has passed their checkpoints: not "behind", which
    /// would pass for a projector catching up, but from another store, whose projector refuses
    /// to start on them.
    @Test func aFileFromAnotherStoreIsAnError() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: data + "/events.db" + suffix) }
        try bootstrapAdminBesideProjections(data: data)
        var other = BenchLendingHistory(admin: "admin-1", today: LocalDate("2026-03-01")!)
        let head = try other.grow(data + "/events.db", to: 100, checkpointKey: data + "/checkpoint.key")
        try #require(head > history.head)

        let json = try jsonLine(try strata(["status", "--format", "json", "--data", data], expecting: 1).stdout)
        #expect(json["projections"] == ["readmodels": .integer(history.head), "audit": .integer(history.head)])
        for name in ["readmodels", "audit"] {
            let error = json["errors"]?[name]?.stringValue ?? ""
            #expect(
                error.hasPrefix(
                    "\(name) is not from this store: the store's event at its checkpoint, position \(history.head), "
                        + "has hash "),
                "\(json)")
            #expect(error.hasSuffix("rebuild it from the store"), "\(error)")
        }
        let text = try strata(["status", "--only", "readmodels", "--data", data], expecting: 1).stdout
        #expect(text.contains("readmodels  at \(history.head)          OTHER STORE: readmodels is not from"), "\(text)")
        try strata(["status", "--only", "events", "--data", data], expecting: 0)
    }

    /// A file that is no projection, or another projection than its name says, is shown as
    /// such: nothing stopped it, and it does not pass for the projection it replaced.
    @Test func aFileThatIsNotTheProjectionIsUnreadable() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: data + "/readmodels.db" + suffix) }
        try FileManager.default.removeItem(atPath: data + "/readmodels.db")
        try FileManager.default.copyItem(atPath: data + "/audit.db", toPath: data + "/readmodels.db")

        let json = try jsonLine(try strata(["status", "--format", "json", "--data", data], expecting: 1).stdout)
        #expect(json["projections"] == ["audit": .integer(history.head)], "\(json)")
        let problem = "\(data)/readmodels.db holds the audit projection, not readmodels"
        #expect(json["errors"]?["readmodels"] == .string(problem))
        let text = try strata(["status", "--data", data], expecting: 1).stdout
        #expect(text.contains("readmodels                 UNREADABLE: " + problem), "\(text)")

        try Data("not a database".utf8).write(to: URL(fileURLWithPath: data + "/audit.db"))
        let garbage = try strata(["status", "--only", "audit", "--data", data], expecting: 1).stdout
        #expect(garbage.contains("audit                      UNREADABLE: "), "\(garbage)")
    }
}
