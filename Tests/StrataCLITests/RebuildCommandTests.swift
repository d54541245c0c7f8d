import EventStore
import Foundation
import ProjectorRuntime
import Projections
import StrataSQLite
import StrataTesting
import Testing

/// `strata rebuild` as its users run it, on the known history: its exit code says whether the
/// rebuild found a problem (1) or could not work (2).
@Suite("strata rebuild") struct RebuildCommandTests {
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
}
