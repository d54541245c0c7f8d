import Foundation
import StrataCore
import StrataTesting
import Testing

/// `strata bench commands` at a small size: it runs end to end (service, store, clients, and
/// with `--peer` the real Python peer) and prints figures that parse. Benchmarks are not
/// tests, so nothing here is timed.
@Suite("strata bench commands")
struct BenchCommandsTests {
    @Test func commandsJSON() throws {
        let figures = try Self.figures(["bench", "commands", "--loans", "50", "--repeat", "1", "--json"])
        try #require(figures.count == 2)
        for figure in figures {
            #expect(figure["scenario"] == "commands")
            #expect(figure["unit"] == "commands/s")
            #expect(figure["runs"] == 1)
            let median = try #require(figure["median"]?.integerValue, "\(figure)")
            #expect(median > 0)
            #expect(figure["min"]?.integerValue == median && figure["max"]?.integerValue == median)
            #expect(figure["clients"] == 16 && figure["window"] == 256 && figure["target"] == 50_000)
            #expect(figure["peerRatioPercent"] == nil && figure["peerMedian"] == nil)
            BenchCPUExpectations.check(figure["cpu"], threads: ["strata-writer", "bench clients"])
        }
        #expect(figures.map(\.["measure"]) == ["commands/s, lending loop", "commands/s, mix with invoices"])
        // 50 loans: 150 commands of the lending loop; the mix has 25 loans and 25 invoices.
        #expect(figures[0]["commands"] == 150)
        #expect(figures[1]["commands"] == 125)
    }

    @Test func commandsTable() throws {
        let result = try ChildProcess.strata(["bench", "commands", "--loans", "30", "--repeat", "2"])
        try #require(result.exitCode == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
        let lines = BenchCPUExpectations.linesWithoutWaiting(result.stdout)
        // Title, clients and sizes, column heads, two figures, where the CPU went in each (with
        // any waiting for a core aside), and the final newline.
        try #require(lines.count == 8, "stdout: \(result.stdout)")
        #expect(
            lines[0]
                == "strata bench commands — 2 runs; figures are min / median / max; every store WAL, synchronous=FULL")
        #expect(lines[1] == "  16 pipelined clients × 256 in flight; lending 90 commands (30 loans), mix 75 commands")
        #expect(lines[2].hasPrefix("measure "))
        #expect(lines[3].hasPrefix("commands/s, lending loop ") && lines[3].hasSuffix("% of 50 k/s target"))
        #expect(lines[4].hasPrefix("commands/s, mix with invoices "))
        BenchCPUExpectations.check(line: lines[5], label: "lending loop")
        BenchCPUExpectations.check(line: lines[6], label: "mix with invoices")
        #expect(lines[7].isEmpty)
    }

    /// The real peer: its virtual environment is made on first use (pip, from PyPI), so
    /// this can take half a minute on a fresh checkout.
    @Test(.timeLimit(.minutes(10))) func peerJSON() throws {
        let figures = try Self.figures(["bench", "commands", "--loans", "30", "--repeat", "1", "--peer", "--json"])
        try #require(figures.count == 3)
        let lending = figures[0]
        let peer = figures[2]
        #expect(lending["measure"] == "commands/s, lending loop")
        #expect(figures[1]["measure"] == "commands/s, mix with invoices")
        #expect(figures[1]["peerRatioPercent"] == nil)

        #expect(peer["scenario"] == "commands")
        #expect(peer["measure"] == "commands/s, lending loop, Python eventsourcing peer")
        #expect(peer["unit"] == "commands/s")
        #expect(peer["runs"] == 1)
        // 30 loans: 3 business operations each; 4 events each (the payment earns a commission).
        #expect(peer["commands"] == 90)
        #expect(peer["events"] == 120)
        #expect(peer["journalMode"] == "wal")
        #expect(peer["synchronous"] == "FULL")
        #expect(peer["peer"]?.stringValue?.hasPrefix("eventsourcing 9.") == true, "\(peer)")
        #expect((peer["eventsPerSecondMedian"]?.integerValue ?? 0) > 0, "\(peer)")

        let lendingMedian = try #require(lending["median"]?.integerValue)
        let peerMedian = try #require(peer["median"]?.integerValue)
        #expect(peerMedian > 0)
        #expect(lending["peerMedian"]?.integerValue == peerMedian)
        let percent = (Double(lendingMedian) / Double(peerMedian) * 100).rounded()
        #expect(lending["peerRatioPercent"]?.integerValue == Int64(percent), "\(lending)")
        #expect(lending["peerTargetRatioPercent"] == 1000)
    }

    /// A peer that cannot run stops the benchmark with exit 2 and says why, in the script's
    /// own words. The peer is found by walking up from the executable, so a copy of the binary
    /// under a directory with a failing script of the same name runs that script.
    @Test func failingPeer() throws {
        try withTemporaryDirectory { directory in
            let binary = directory.appendingPathComponent(".build/debug/strata")
            let script = directory.appendingPathComponent("bench/peers/eventsourcing-peer")
            for folder in [binary, script] {
                try FileManager.default.createDirectory(
                    at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
            }
            try FileManager.default.copyItem(at: ChildProcess.product("strata"), to: binary)
            let cases = [
                ("echo 'pip: cannot reach pypi.org' >&2; exit 1", "failed (exit 1):\npip: cannot reach pypi.org"),
                ("echo 'not a figure'; echo 'stack trace' >&2", "printed no figure: \"not a figure\\n\":\nstack trace"),
            ]
            for (body, expected) in cases {
                try "#!/bin/sh\n\(body)\n".write(to: script, atomically: true, encoding: .utf8)
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
                let result = try ChildProcess.run(
                    binary, ["bench", "commands", "--loans", "5", "--repeat", "1", "--peer", "--json"])
                #expect(result.exitCode == 2, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
                #expect(result.stdout.isEmpty)
                #expect(result.stderr.contains("the Python peer "), "\(result.stderr)")
                #expect(result.stderr.contains("/bench/peers/eventsourcing-peer \(expected)"), "\(result.stderr)")
            }
        }
    }

    @Test func usageErrors() throws {
        let cases: [[String]] = [
            ["commands", "--loans", "0"], ["commands", "--loans", "many"], ["commands", "--events", "1000"],
            ["commands", "--rate", "100"], ["commands", "--seconds", "1"], ["commands", "--peer", "yes"],
            ["append", "--peer"], ["lag", "--peer"],
        ]
        for arguments in cases {
            let result = try ChildProcess.strata(["bench"] + arguments)
            #expect(result.exitCode == 2, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
        }
    }

    /// The JSON lines of a successful run, parsed.
    static func figures(_ arguments: [String]) throws -> [JSONValue] {
        let result = try ChildProcess.strata(arguments)
        try #require(
            result.exitCode == 0, "exit \(result.exitCode)\nstdout: \(result.stdout)\nstderr: \(result.stderr)")
        #expect(result.stdout.hasSuffix("\n"))
        return try result.stdout.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
    }
}
