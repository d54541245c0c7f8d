import Bus
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

    /// Whoever can publish on the events endpoint a projector reads (a foreign publisher, a
    /// damaged stream) sends what is not an event: the projector logged a line per message, the
    /// topic as it came, so a flood of them grew its log and a topic with a line break forged a
    /// line. Now the first is logged with its topic escaped, and the rest are counted into one line.
    @Test func unreadableMessagesAreCountedAndTheirTopicCannotForgeALine() throws {
        let system = try System("unreadable")
        let publisher = try ZMQSocket(system.context, .publisher)
        defer { publisher.close() }
        let projector = try Self.projector(of: system, hearing: publisher)
        defer { projector.stop() }

        let forged = "2026-11-23T00:00:00.000Z error project: forged"
        let message: [[UInt8]] = [Array("loan.LoanApproved\n\(forged)".utf8), Array("not an event".utf8)]
        // A subscriber hears only what is sent once it has connected: send until it has.
        let deadline = Date().addingTimeInterval(30)
        while !projector.log.contains("dropped an unreadable message") && Date() < deadline {
            _ = try publisher.send(message)
            usleep(20_000)
        }
        for _ in 0..<200 { _ = try publisher.send(message) }
        // Read in order: the projector reaches the events behind this heartbeat once it has read
        // every message before it.
        try system.send(system.workload.setup())
        let head = try system.service.store().head()
        _ = try publisher.send(Heartbeat(head: head).frames)
        try system.waitForCheckpoint("readmodels", head)
        projector.send(signal: SIGTERM)
        #expect(projector.waitForExit(timeout: 20) == 0, "\(projector.log)")

        let lines = projector.log.split(separator: "\n")
        let each = lines.filter { $0.contains("dropped an unreadable message on the events endpoint topic=") }
        let counted = lines.filter { $0.contains("on the events endpoint ") && $0.contains(" more time") }
        #expect(each.count == 1, "\(projector.log)")
        #expect(each.first?.hasSuffix(#"topic="loan.LoanApproved\n\#(forged)""#) == true, "\(projector.log)")
        #expect(counted.count == 1, "\(projector.log)")
        #expect(lines.allSatisfy { !$0.hasPrefix(forged) }, "\(projector.log)")
        #expect(lines.count < 12, "\(projector.log)")
    }

    /// A heartbeat behind the projector's checkpoint (sent before the events it has applied, or
    /// a store gone back) has it ask history; where history holds more than the bus brought, it
    /// applies them and says so. A soak's projector logged such a line each time, 1,175 of its
    /// 1,317 lines; they are gathered like every kind of catch-up.
    @Test func catchUpsForAStaleHeartbeatAreCountedRatherThanLoggedEach() throws {
        let system = try System("stale-heartbeat")
        let publisher = try ZMQSocket(system.context, .publisher)
        defer { publisher.close() }
        let projector = try Self.projector(of: system, hearing: publisher)
        defer { projector.stop() }
        try system.send(system.workload.setup())
        let setUp = try system.service.store().head()
        // A subscriber hears only what is sent once it has connected: send until it has.
        let deadline = Date().addingTimeInterval(30)
        while try system.checkpoint("readmodels") < setUp && Date() < deadline {
            _ = try publisher.send(Heartbeat(head: setUp).frames)
            usleep(50_000)
        }
        // Each round the store moves on and the bus brings only a heartbeat from before.
        let rounds = 20
        for round in 0..<rounds {
            try system.send(system.workload.loan(round))
            let head = try system.service.store().head()
            _ = try publisher.send(Heartbeat(head: setUp).frames)
            try system.waitForCheckpoint("readmodels", head)
        }
        projector.send(signal: SIGTERM)
        #expect(projector.waitForExit(timeout: 20) == 0, "\(projector.log)")

        let lines = projector.log.split(separator: "\n")
        let each = lines.filter { $0.contains("caught up through history to check the heartbeat's head \(setUp)") }
        let counted = lines.filter { $0.contains("caught up through history to check a heartbeat's head behind") }
        #expect(each.count == 1, "\(projector.log)")
        #expect(counted.count <= 1, "\(projector.log)")
        #expect(lines.count < 15, "\(projector.log)")
    }

    /// A readmodels projector of `system` that hears the bus from `publisher`, the test's own
    /// socket (bound here), and asks the service's history; ready once it returns.
    private static func projector(of system: System, hearing publisher: ZMQSocket) throws -> StrataProcess {
        try publisher.bind("tcp://127.0.0.1:*")
        let projector = try StrataProcess(
            ["project", "readmodels", "--data", system.data.path, "--events", try publisher.lastEndpoint()]
                + ["--history", system.service.history, "--key", ServiceProcess.Keys.service])
        do {
            try projector.waitForLine(containing: "ready name=readmodels")
        } catch {
            projector.stop()
            throw error
        }
        return projector
    }
}

