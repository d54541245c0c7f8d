import Foundation
import StrataCore
import StrataTesting
import Testing

/// `strata bench latency` at a small rate for one second: paced clients, a real service and
/// store, four percentiles that parse and come in order. Nothing here is timed.
@Suite("strata bench latency")
struct BenchLatencyTests {
    @Test func latencyJSON() throws {
        let result = try ChildProcess.strata(
            ["bench", "latency", "--rate", "300", "--seconds", "1", "--repeat", "1", "--json"])
        try #require(result.exitCode == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
        #expect(result.stdout.hasSuffix("\n"))
        let figures = try result.stdout.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
        try #require(figures.count == 4, "stdout: \(result.stdout)")
        #expect(
            figures.map(\.["measure"]) == [
                "latency p50 at 300 commands/s", "latency p99 at 300 commands/s", "latency p999 at 300 commands/s",
                "latency max at 300 commands/s",
            ])
        for figure in figures {
            #expect(figure["scenario"] == "latency")
            #expect(figure["unit"] == "us")
            #expect(figure["runs"] == 1)
            #expect(figure["rate"] == 300)
            #expect(figure["clients"] == 4)
            // 300 commands/s for 1 s: 100 loans of 3 commands.
            #expect(figure["commands"] == 300)
            // The service's threads are idle most of such a run: only the whole is sure to show.
            BenchCPUExpectations.check(figure["cpu"], threads: [])
        }
        #expect(figures.map(\.["target"]) == [nil, 5000, nil, nil])
        let medians = try figures.map { try #require($0["median"]?.integerValue) }
        #expect(medians[0] > 0 && medians == medians.sorted(), "\(medians)")
    }

    @Test func latencyTable() throws {
        let result = try ChildProcess.strata(["bench", "latency", "--rate", "200", "--seconds", "1", "--repeat", "2"])
        try #require(result.exitCode == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
        let lines = BenchCPUExpectations.linesWithoutWaiting(result.stdout)
        // Title, clients and rate, column heads, four figures, where the CPU went (with any waiting
        // for a core aside), and the final newline.
        try #require(lines.count == 9, "stdout: \(result.stdout)")
        #expect(
            lines[0]
                == "strata bench latency — 2 runs; figures are min / median / max; every store WAL, synchronous=FULL")
        #expect(
            lines[1]
                == "  4 clients paced open-loop at 200 commands/s for 1 s (201 commands), scheduled send → reply")
        #expect(lines[2].hasPrefix("measure "))
        for (line, name) in zip(lines[3...6], ["p50", "p99", "p999", "max"]) {
            #expect(line.hasPrefix("latency \(name) at 200 commands/s  "), "\(line)")
            #expect(line.contains(" ms "), "\(line)")
        }
        #expect(lines[4].hasSuffix("the 5 ms target"))
        BenchCPUExpectations.check(line: lines[7], label: "at 200 commands/s")
        #expect(lines[8].isEmpty)
    }

    @Test func usageErrors() throws {
        let cases: [[String]] = [
            ["--rate", "0"], ["--rate", "none"], ["--seconds", "0"], ["--seconds", "3601"], ["--loans", "10"],
            ["--events", "1000"], ["--peer"], ["--repeat", "0"],
        ]
        for arguments in cases {
            let result = try ChildProcess.strata(["bench", "latency"] + arguments)
            #expect(result.exitCode == 2, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
        }
    }
}
