import Foundation
import StrataTesting
import Testing

/// The threads that order the work (the command writer, a projector applying its batches)
/// keep the process's priority; those that feed or follow them run ten nice levels lower, so
/// that on busy cores the scheduler gives the ordering threads the time (docs/performance.md).
@Suite(.serialized) struct ThreadPriorityTests {
    /// Waits up to ten seconds for every name in `names` among the threads of `pid`.
    static func threads(of pid: Int32, including names: [String]) -> [String: Int] {
        var seen = ThreadNice.threads(of: pid)
        for _ in 0..<1000 where !names.allSatisfy({ seen[$0] != nil }) {
            usleep(10_000)
            seen = ThreadNice.threads(of: pid)
        }
        return seen
    }

    @Test func theWritersKeepTheirPriorityAndTheThreadsAroundThemYield() throws {
        let system = try System("priority")
        try system.send(system.workload.setup())
        let projector = try system.projector("readmodels")
        defer { _ = projector.stop() }
        try system.waitForCheckpoint("readmodels", try system.service.store().head())

        // Both processes start at the nice value of this one's main thread.
        let base = try #require(ThreadNice.read(statPath: "/proc/\(getpid())/stat"))
        let lowered = min(base + 10, 19)

        let service = Self.threads(
            of: system.service.processIdentifier,
            including: ["strata-writer", "strata-chain", "strata-encoder", "strata-commands", "strata-publishe",
                "strata-history", "ckpt-events.db"])
        #expect(service["strata-writer"] == base, "\(service)")
        // The writer waits on these two: they run with it.
        #expect(service["strata-chain"] == base, "\(service)")
        #expect(service["strata-encoder"] == base, "\(service)")
        // And on this one whenever the log outgrows it (its inline checkpoint waits it out).
        #expect(service["ckpt-events.db"] == base, "\(service)")
        for name in ["strata-commands", "strata-publishe", "strata-history"] {
            #expect(service[name] == lowered, "\(name): \(service)")
        }

        let readModels = Self.threads(
            of: projector.processIdentifier, including: ["projector-readm", "ckpt-readmodels"])
        #expect(readModels["projector-readm"] == base, "\(readModels)")
        #expect(readModels["ckpt-readmodels"] == base, "\(readModels)")
    }
}
