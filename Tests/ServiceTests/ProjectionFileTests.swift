import Foundation
import ProjectorRuntime
import StrataCore
import StrataTesting
import Testing

/// A projection file taken away from under its running projector. SQLite writes on into the
/// file it opened, which no reader can reach once its name is gone: the projector went on
/// applying events to nothing while `strata status` said "no file yet" and `strata query` asked
/// whether the projector was running.
@Suite(.serialized) struct ProjectionFileTests {
    /// Removed with everything beside it (`rm readmodels.db*`), as an operator clears a file to
    /// have it rebuilt: the projector makes it again from position 0, through history, and
    /// runs on live.
    @Test(arguments: ["readmodels", "audit"])
    func aFileRemovedUnderItsProjectorIsMadeAgain(name: String) throws {
        let system = try System("removed-\(name)")
        try system.send(system.workload.setup())
        let projector = try system.projector(name)
        try system.waitForCheckpoint(name, try system.service.store().head())

        let path = system.data.appendingPathComponent("\(name).db").path
        for suffix in ["", "-wal", "-shm", "-lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try projector.waitForLine(containing: "\(path) was removed while the projector ran", timeout: 30)
        try system.send((0..<2).flatMap { system.workload.loan($0) })
        try system.expectConverged(name)
        #expect(projector.isRunning, "\(projector.log)")
        #expect(projector.stop() == 0, "\(projector.log)")
    }

    /// Another file moved into its place (a copy put back with `mv`): the projector takes that
    /// one up, and judges it as it judges any file it starts with; this one is from another store.
    @Test func aFileReplacedUnderItsProjectorIsJudgedAsAtAStart() throws {
        let other = try System("replacing")
        try other.send(other.workload.setup())
        let theirs = try other.projector("readmodels")
        let theirHead = try other.service.store().head()
        try other.waitForCheckpoint("readmodels", theirHead)
        #expect(theirs.stop() == 0, "\(theirs.log)")

        let system = try System("replaced")
        try system.send(system.workload.setup())
        try system.send((0..<2).flatMap { system.workload.loan($0) })
        let projector = try system.projector("readmodels")
        try system.waitForCheckpoint("readmodels", try system.service.store().head())
        let path = system.data.appendingPathComponent("readmodels.db").path
        let copy = path + ".copy"
        try FileManager.default.copyItem(atPath: other.data.appendingPathComponent("readmodels.db").path, toPath: copy)
        #expect(rename(copy, path) == 0)
        #expect(projector.waitForExit(timeout: 30) == 1, "\(projector.log)")
        #expect(
            projector.log.contains("\(path) was replaced by another file while the projector ran"), "\(projector.log)")
        #expect(projector.log.contains("readmodels is not from this store"), "\(projector.log)")
        // Read as it was: not overlaid with the log of the file that went, which SQLite left beside it.
        #expect(try ProjectionSnapshot(path: path)?.checkpoint == theirHead)
    }

    /// The projection file's disk fills up: the projector records nothing of the batch it cannot
    /// write, says so once, and goes on once there is room, as the service does. It ended with
    /// exit 2, and under `strata up` stayed down for the rest of the run, with the read models
    /// behind and `strata status` saying nothing was wrong.
    @Test func aProjectorRidesOutAFullDisk() throws {
        let system = try System("full-disk")
        let directory = try ChildProcess.temporaryDirectory("strata-projection-full")
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let tmpfs = Tmpfs(mountingAt: directory, size: "256k") else {
            print("full disk: cannot mount a tmpfs here (not root?); nothing to test")
            return
        }
        defer { tmpfs.unmount() }
        let projector = try StrataProcess(
            ["project", "audit", "--data", directory.path, "--events", system.service.events, "--history"]
                + [system.service.history, "--keys", system.data.appendingPathComponent("keys.json").path])
        try projector.waitForLine(containing: "ready name=audit")
        try system.send(system.workload.setup())
        var loans = 0
        while !projector.log.contains("database or disk is full"), projector.isRunning, loans < 400 {
            try system.send(system.workload.loan(loans))
            loans += 1
        }
        try projector.waitForLine(containing: "the disk is full", timeout: 10)
        #expect(tmpfs.remount(size: "64m"))
        try system.send(system.workload.loan(loans))
        let head = try system.service.store().head()
        let path = directory.appendingPathComponent("audit.db").path
        let deadline = Date().addingTimeInterval(60)
        while try ProjectionSnapshot(path: path)?.checkpoint ?? 0 < head, Date() < deadline { usleep(100_000) }
        #expect(try ProjectionSnapshot(path: path)?.checkpoint == head, "\(projector.log)")
        try projector.waitForLine(containing: "can be written again")
        #expect(projector.stop() == 0, "\(projector.log)")
    }

    /// The file's lock removed under its projector (`rm DATA/*-lock`, taken for a stale lock) lets
    /// a second projector start on the file. The two applied the same events, and the later one
    /// found the rows there already: it recorded a stop at a "poison" event (`UNIQUE constraint
    /// failed`) and told the operator to fix the projection or skip the event. Now whichever finds
    /// the file's checkpoint moved under it ends (exit 2) with nothing recorded, and the other runs on.
    @Test func aSecondProjectorOnTheFileIsNeverTakenForAPoisonEvent() throws {
        let system = try System("two-writers")
        try system.send(system.workload.setup())
        let first = try system.projector("audit")
        try system.waitForCheckpoint("audit", try system.service.store().head())
        try FileManager.default.removeItem(at: system.data.appendingPathComponent("audit.db-lock"))
        let second = try system.projector("audit")
        try second.waitForLine(containing: "ready name=audit")
        var loans = 0
        while first.isRunning && second.isRunning && loans < 100 {
            try system.send(system.workload.loan(loans))
            loans += 1
        }
        let ended = first.isRunning ? second : first
        let survivor = first.isRunning ? first : second
        #expect(ended.waitForExit(timeout: 10) == 2, "\(ended.log)")
        #expect(ended.log.contains("another process wrote to"), "\(ended.log)")
        for projector in [first, second] { #expect(!projector.log.contains("stopped at position"), "\(projector.log)") }
        try system.expectConverged("audit")
        #expect(survivor.stop() == 0, "\(survivor.log)")
    }
}
