import Foundation
import StrataCore
import StrataTesting
import Testing

/// `strata status` says which process holds each writer lock on this machine, from the kernel's
/// table of locks: a projector that stopped for good shows as not running, where its file alone
/// would only fall behind (docs/cli.md).
@Suite struct StatusRunningTests {
    @Test func statusNamesTheProcessesThatHoldTheDataDirectorysFiles() throws {
        let system = try System("status-running")
        try system.send(system.workload.setup())
        let projector = try system.projector("readmodels")
        try system.waitForCheckpoint("readmodels", try system.service.store().head())
        let status = ["status", "--data", system.data.path]

        let json = try JSONParser.parse(try ChildProcess.strata(status + ["--format", "json"]).stdout)
        #expect(json["running"]?["serve"] == .integer(Int64(system.service.processIdentifier)), "\(json)")
        #expect(json["running"]?["readmodels"] == .integer(Int64(projector.processIdentifier)), "\(json)")
        #expect(json["running"]?["audit"] == .null, "\(json)")
        let text = try ChildProcess.strata(status).stdout
        #expect(text.contains("; serve pid \(system.service.processIdentifier))"), "\(text)")
        #expect(text.contains("up to date (projector pid \(projector.processIdentifier))"), "\(text)")

        #expect(projector.stop() == 0)
        system.service.stop()
        let stopped = try ChildProcess.strata(status)
        #expect(stopped.exitCode == 0, "\(stopped.stdout)\(stopped.stderr)")
        #expect(stopped.stdout.contains("; no serve running here)"), "\(stopped.stdout)")
        #expect(stopped.stdout.contains("up to date (no projector running here)"), "\(stopped.stdout)")
    }
}
