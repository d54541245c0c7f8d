import Foundation
import StrataCore
import StrataTesting
import Testing

/// The main job as a new user runs it: `strata up`, `strata demo`, the dashboard; then the
/// read models proved equal to rebuilds, a crashed child restarted, and Ctrl-C stopping all.
@Suite(.serialized) struct UpAndDemoTests {
    @Test func upRunsTheDemoAndTheReadModelsEqualRebuilds() throws {
        let data = try ChildProcess.temporaryDirectory("strata-up")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let endpoints = try ["commands", "events", "history"].map { ("--\($0)", "tcp://127.0.0.1:\(try freeLoopbackPort())") }
        let options = ["--data", data.path] + endpoints.flatMap { [$0.0, $0.1] }
        let up = try StrataProcess(["up"] + options + ["--key", ServiceProcess.Keys.service])
        defer { up.stop() }
        for name in ["serve", "project-readmodels", "project-audit"] { try up.waitForLine(containing: "\(name): ready ") }

        let demo = try ChildProcess.strata(
            ["demo", "--prefix", "d1", "--data", data.path, "--commands", endpoints[0].1, "--timeout", "120"])
        #expect(demo.exitCode == 0, "\(demo.stdout)\(demo.stderr)\n\(up.log)")
        #expect(demo.stdout.contains("0 refused"), "\(demo.stdout)")
        #expect(demo.stdout.contains("DASHBOARD"), "\(demo.stdout)")

        for name in ["readmodels", "audit"] {
            let rebuild = try ChildProcess.strata(["rebuild", name, "--compare", "--data", data.path])
            #expect(rebuild.exitCode == 0, "\(rebuild.stdout)\(rebuild.stderr)")
            #expect(rebuild.stdout.contains("equal:"), "\(rebuild.stdout)")
        }
        // `demo` waits for the read models only; a projector that subscribed late learns of the
        // events it missed from the next heartbeat (about a second), so both reach the head soon.
        var status = try ChildProcess.strata(["status", "--format", "json", "--data", data.path])
        var json = try JSONParser.parse(status.stdout)
        let head = try #require(json["head"]?.integerValue)
        let atHead: JSONValue = ["readmodels": .integer(head), "audit": .integer(head)]
        let caughtUp = Date().addingTimeInterval(15)
        while json["projections"] != atHead && Date() < caughtUp {
            usleep(100_000)
            status = try ChildProcess.strata(["status", "--format", "json", "--data", data.path])
            json = try JSONParser.parse(status.stdout)
        }
        #expect(status.exitCode == 0, "\(status.stderr)")
        #expect(json["projections"] == atHead, "\(status.stdout)")
        #expect(json["errors"] == [:])

        // A crashed child is started again; the others keep running.
        let started = try up.waitForLine(containing: "started readmodels (pid ")
        let pid = try #require(Int32(started.split(separator: "pid ")[1].prefix { $0.isNumber }))
        kill(pid, SIGKILL)
        try up.waitForLine(containing: "readmodels crashed (signal 9): restarting")
        let deadline = Date().addingTimeInterval(30)
        while up.log.components(separatedBy: "started readmodels (pid ").count < 3 && Date() < deadline { usleep(50_000) }
        #expect(up.log.components(separatedBy: "started readmodels (pid ").count == 3, "\(up.log)")
        // Ready again (its signal handling in place) before Ctrl-C: a SIGTERM that comes while
        // a child is still starting ends it by the signal's default action instead.
        while up.log.components(separatedBy: "ready name=readmodels").count < 3 && Date() < deadline { usleep(50_000) }
        #expect(up.log.components(separatedBy: "ready name=readmodels").count == 3, "\(up.log)")

        // Ctrl-C: every child stops gracefully, then `up` exits 0.
        up.send(signal: SIGINT)
        #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
        for name in ["serve", "readmodels", "audit"] {
            #expect(up.log.contains("up: \(name) stopped (exit code 0)"), "\(up.log)")
        }
    }

    /// The earliest --today the demo allows (236 days back: its oldest loan request is then dated
    /// the 366 days back the service allows) runs whole, nothing refused. The same prefix run
    /// again is answered from the journal: those answers are duplicates, not acceptances, and
    /// the demo says it appended nothing, as the head shows, and ends exit 0.
    @Test func theEarliestTodayRunsWholeAndARerunAppendsNothing() throws {
        let data = try ChildProcess.temporaryDirectory("strata-up-again")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let endpoints = try ["commands", "events", "history"].map {
            ("--\($0)", "tcp://127.0.0.1:\(try freeLoopbackPort())")
        }
        let options = ["--data", data.path] + endpoints.flatMap { [$0.0, $0.1] }
        let up = try StrataProcess(["up"] + options + ["--key", ServiceProcess.Keys.service])
        defer { up.stop() }
        for name in ["serve", "project-readmodels", "project-audit"] {
            try up.waitForLine(containing: "\(name): ready ")
        }
        func head() throws -> Int64 {
            let status = try ChildProcess.strata(["status", "--format", "json", "--data", data.path])
            return try #require(try JSONParser.parse(status.stdout)["head"]?.integerValue)
        }

        let demo = ["demo", "--prefix", "again", "--data", data.path, "--commands", endpoints[0].1, "--timeout", "120"]
        // Both runs (each given 120 s) must see the same today as the test.
        waitUnlessTheUTCDayLasts(seconds: 300)
        let earliest = Timestamp.now().date.adding(days: -236)
        let first = try ChildProcess.strata(demo + ["--today", "\(earliest)"])
        #expect(first.exitCode == 0, "\(first.stdout)\(first.stderr)\n\(up.log)")
        #expect(first.stdout.contains(" accepted, 0 refused\n"), "\(first.stdout)")

        let before = try head()
        let again = try ChildProcess.strata(demo + ["--today", "\(earliest)"])
        #expect(try head() == before, "nothing is appended twice")
        #expect(again.stdout.contains("appended no events\n"), "\(again.stdout)")
        #expect(!again.stdout.contains("positions"), "\(again.stdout)")
        // Every command is answered as a duplicate, the cash-outs too: sized from what the agents
        // could collect before the first run's cash-outs took their part, they are the same commands,
        // where they reused their ids with other amounts (CONFLICT COMMAND_ID_REUSED, exit 1).
        #expect(again.exitCode == 0, "\(again.stdout)\(again.stderr)")
        let tally = try #require(again.stdout.split(separator: "\n").first { $0.hasPrefix("sent ") })
        let sent = try #require(Int(tally.split(separator: " ")[1]), "\(tally)")
        #expect(
            tally == "sent \(sent) commands: 0 accepted, \(sent) answered as duplicates of earlier commands, 0 refused")
        #expect(again.stdout.contains("DASHBOARD"), "\(again.stdout)")
    }
}
