import Foundation
import StrataCore
import StrataTesting
import Testing

@Suite("strata status")
struct StatusCommandTests {
    /// A projection ahead of the store (events.db restored from an older backup) is no
    /// projection behind by a negative count: its file holds events the store no longer has.
    @Test func aCheckpointBeyondTheHeadIsAnError() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: data + "/events.db" + suffix) }
        try bootstrapAdmin(data: data)

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
                + "position 1: events.db is older than this file (restored from a backup?); rebuild it from the store")
        try strata(["status", "--only", "events", "--data", data], expecting: 0)
    }
}
