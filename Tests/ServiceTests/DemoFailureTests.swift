import Foundation
import StrataTesting
import Testing

@Suite struct DemoFailureTests {
    /// With no projector running, the demo's wait for the read models runs out (exit 1): it still
    /// says what it sent and what the store appended before that, since those stay.
    @Test func aDemoThatStopsHalfwaySaysWhatItAppended() throws {
        let data = try ChildProcess.temporaryDirectory("strata-demo-half")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        defer { service.stop() }
        let before = try service.store().head()
        let result = try ChildProcess.strata(
            ["demo", "--prefix", "half", "--data", data.path, "--commands", service.commands, "--timeout", "3"])
        #expect(result.exitCode == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("did not reach position"), "\(result.stderr)")
        let head = try service.store().head()
        #expect(head > before)
        #expect(
            result.stdout.contains("appended \(head - before) events, positions \(before + 1) to \(head)\n"),
            "\(result.stdout)")
    }

    /// A service killed and started again between the demo's phases, while the demo waits for the
    /// read models, loses nothing: the cash-outs go over the new connection and are answered. The
    /// demo took the connection that had ended while nothing was awaited for one lost under the
    /// cash-outs, which the service had decided, and ended with exit 2 calling them unanswered.
    @Test func aServiceRestartedBetweenThePhasesLosesNothing() throws {
        let data = try ChildProcess.temporaryDirectory("strata-demo-restart")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let ports = try ServiceProcess.Ports.free()
        let first = try ServiceProcess(dataDirectory: data, ports: ports)
        let before = try first.store().head()
        // No projector yet: once the month is answered, the demo waits for the read models.
        let demo = try StrataProcess(
            ["demo", "--prefix", "restart", "--data", data.path, "--commands", first.commands, "--timeout", "60"])
        var head = before
        var stableSince = Date()
        while Date().timeIntervalSince(stableSince) < 1 {
            usleep(100_000)
            let now = try first.store().head()
            if now != head || now == before { (head, stableSince) = (now, Date()) }
        }
        first.send(signal: SIGKILL)
        #expect(first.waitForExit(timeout: 10) == SIGKILL)
        let second = try ServiceProcess(dataDirectory: data, ports: ports)
        defer { second.stop() }
        let projector = try StrataProcess(
            ["project", "readmodels", "--data", data.path, "--events", second.events, "--history", second.history]
                + ["--key", ServiceProcess.Keys.service])
        defer { projector.stop() }
        let exit = demo.waitForExit(timeout: 90)
        #expect(exit == 0, "\(demo.output)\(demo.log)")
        #expect(!demo.log.contains("lost the connection"), "\(demo.log)")
        #expect(demo.output.contains(" 0 refused") && !demo.output.contains("unanswered"), "\(demo.output)")
        #expect(try second.store().head() > head, "the cash-outs were appended")
    }
}
