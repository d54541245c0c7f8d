import Foundation
import ProjectorRuntime
import StrataCore
import StrataTesting
import Testing

/// A projection file that holds events the store does not: events.db restored from an older
/// backup, or the file of another data directory. The projector must say so and stop (exit 1)
/// rather than drop the store's new events as "already applied" or blame the chain, and it
/// records no stop in the file: nothing is wrong with the file, the store moved.
@Suite(.serialized) struct ProjectorDivergenceTests {
    @Test func aStoreRestoredFromAnOlderBackupStopsTheProjectorWhenItStarts() throws {
        let system = try System("restored")
        try system.send(system.workload.setup())
        let backup = try system.backUpStore()
        defer { try? FileManager.default.removeItem(at: backup) }
        try system.send((0..<3).flatMap { system.workload.loan($0) })
        let head = try system.service.store().head()
        let projector = try system.projector("readmodels")
        try system.waitForCheckpoint("readmodels", head)
        #expect(projector.stop() == 0)

        try system.restoreStore(backup)
        let restored = try system.service.store().head()
        #expect(restored < head)
        let again = try system.projector("readmodels")
        #expect(again.waitForExit(timeout: 60) == 1, "\(again.log)")
        #expect(
            again.log.contains(
                "AHEAD: checkpoint \(head) is beyond the store's head, position \(restored): events.db is older than "
                    + "this file (restored from a backup?); rebuild it from the store"),
            "\(again.log)")
        try Self.expectUntouched(system, "readmodels", at: head)
    }

    /// The store goes back under a running projector, and new commands append events at
    /// positions the file already holds: other events, which it must not take for its own.
    @Test func aStoreRestoredUnderARunningProjectorStopsItBeforeItDropsANewEvent() throws {
        let system = try System("restored-live", fixedPorts: true)
        try system.send(system.workload.setup())
        let backup = try system.backUpStore()
        defer { try? FileManager.default.removeItem(at: backup) }
        try system.send((0..<3).flatMap { system.workload.loan($0) })
        let head = try system.service.store().head()
        let metrics = system.data.appendingPathComponent("readmodels.prom").path
        let projector = try system.projector("readmodels", ["--metrics-file", metrics, "--metrics-interval", "0.2"])
        try system.waitForCheckpoint("readmodels", head)

        try system.restoreStore(backup)
        try system.send(system.workload.loan(0))
        let restored = try system.service.store().head()
        #expect(restored < head)
        #expect(projector.waitForExit(timeout: 60) == 1, "\(projector.log)")
        #expect(projector.log.contains("AHEAD: checkpoint \(head) is beyond the store's head"), "\(projector.log)")
        try Self.expectUntouched(system, "readmodels", at: head)
        // The last metrics show the store's head below the file's position.
        let exposition = try readExposition(metrics)
        let labels = ["projection": "readmodels"]
        #expect(exposition.value("strata_projection_position", labels) == Double(head))
        #expect(exposition.value("strata_projection_head_position", labels) == Double(restored))
    }

    /// The file of another data directory, whose store is shorter than this one: the event at its
    /// checkpoint is not this store's, which is said as such, not as a broken chain.
    @Test func aFileFromAnotherStoreIsNamedAsSuch() throws {
        let other = try System("other-store")
        try other.send(other.workload.setup())
        let theirs = try other.projector("readmodels")
        let checkpoint = try other.service.store().head()
        try other.waitForCheckpoint("readmodels", checkpoint)
        #expect(theirs.stop() == 0)

        let system = try System("this-store")
        try system.send(system.workload.setup())
        try system.send((0..<3).flatMap { system.workload.loan($0) })
        #expect(try system.service.store().head() > checkpoint)
        let file = "readmodels.db"
        try FileManager.default.copyItem(
            at: other.data.appendingPathComponent(file), to: system.data.appendingPathComponent(file))
        let projector = try system.projector("readmodels")
        #expect(projector.waitForExit(timeout: 60) == 1, "\(projector.log)")
        #expect(projector.log.contains("is not from this store"), "\(projector.log)")
        #expect(!projector.log.contains("hash chain is broken"), "\(projector.log)")
        try Self.expectUntouched(system, "readmodels", at: checkpoint)
    }

    /// The file kept its checkpoint and has no stop recorded.
    static func expectUntouched(
        _ system: System, _ name: String, at checkpoint: Int64, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let snapshot = try #require(
            try ProjectionSnapshot(path: system.data.appendingPathComponent("\(name).db").path),
            sourceLocation: sourceLocation)
        #expect(snapshot.checkpoint == checkpoint, sourceLocation: sourceLocation)
        #expect(snapshot.stop == nil, "\(String(describing: snapshot.stop))", sourceLocation: sourceLocation)
    }
}
