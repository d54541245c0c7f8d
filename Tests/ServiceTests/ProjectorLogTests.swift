import CommandService
import Foundation
import ProjectorRuntime
import StrataCore
import StrataTesting
import Testing

/// A projector's log as an operator reads it: it tells what happens, and does not grow with
/// the traffic the system carries.
@Suite(.serialized) struct ProjectorLogTests {
    /// Away from the key store, a projector catches up through history for each event on the
    /// bus that carries personal data. It logged a line for each, nearly every line of its log;
    /// now the first is logged, and the others are counted into a line when it stops.
    @Test func catchUpsToOpenPersonalDataAreCountedRatherThanLoggedEach() throws {
        let system = try System("pd-log")
        let remote = try ChildProcess.temporaryDirectory("strata-pd-log-remote")
        defer { try? FileManager.default.removeItem(at: remote) }
        let made = try ChildProcess.strata(
            ["keys", "new", "pd-reader", "--scope", "history,personal-data", "--data", system.data.path])
        try #require(made.exitCode == 0, "\(made.stderr)")
        try system.restartService()  // it reads the key file when it starts
        try system.send(system.workload.setup())
        let projector = try StrataProcess(
            ["project", "readmodels", "--data", remote.path, "--events", system.service.events]
                + ["--history", system.service.history, "--keys", system.data.appendingPathComponent("keys.json").path]
                + ["--key", "pd-reader", "--open-through-history"])
        defer { projector.stop() }
        try projector.waitForLine(containing: "caught up through history on start")

        // One at a time, each reply awaited: each event reaches the projector on its own.
        let account = system.workload.accountId(0)
        let renames = 30
        for n in 0..<renames {
            try system.send([
                CommandBody(
                    id: "rename-\(n)", type: "UpdateAccount", actor: ServiceProcess.admin,
                    payload: ["accountId": .string(account), "name": .string("Renamed Holder \(n)")])
            ])
        }
        let head = try system.service.store().head()
        let file = remote.appendingPathComponent("readmodels.db").path
        let deadline = Date().addingTimeInterval(60)
        while (try ProjectionSnapshot(path: file)?.checkpoint ?? 0) < head && Date() < deadline { usleep(50_000) }
        #expect(try ProjectionSnapshot(path: file)?.checkpoint == head, "\(projector.log)")
        projector.send(signal: SIGTERM)
        #expect(projector.waitForExit(timeout: 20) == 0, "\(projector.log)")

        let lines = projector.log.split(separator: "\n")
        let each = lines.filter { $0.contains("caught up through history to open the personal data of position") }
        let counted = lines.filter { $0.contains("caught up through history to open personal data ") }
        #expect(each.count == 1, "\(projector.log)")
        #expect(counted.count <= 1, "\(projector.log)")
        #expect(counted.allSatisfy { $0.contains(" more time") && $0.contains("position=\(head)") }, "\(projector.log)")
        #expect(lines.count < 12, "\(projector.log)")
    }
}
