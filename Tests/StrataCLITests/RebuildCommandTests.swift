import EventStore
import Foundation
import ProjectorRuntime
import Projections
import StrataSQLite
import StrataTesting
import Testing

/// `strata rebuild` as its users run it, on the known history: it honours the skips an
/// operator recorded, and says with its exit code whether the rebuild found a problem (1) or
/// could not work (2).
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

    /// Without --compare, the rebuild passes over the events an operator skipped in the live
    /// file, as the live file did.
    @Test func withoutCompareTheSkipsRecordedInTheLiveFileAreHonoured() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        let victim = try tamperWithTheLastEvent(history)
        // The live file, built again from the changed store, stops there; an operator skips it.
        let live = data + "/readmodels.db"
        try FileManager.default.removeItem(atPath: live)
        let store = try SQLiteEventStore(readingAt: data + "/events.db")
        let built = try Rebuild.run(
            name: "readmodels", projections: ReadModels.all, from: StoreHistory(store: store), into: live)
        #expect(built.stop?.position == victim)
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
