import Foundation
import StrataCore
import StrataTesting
import Testing

/// `strata bench commands` at a small size: it runs end to end (service, store, clients)
/// and prints figures that parse. Benchmarks are not tests, so nothing here is timed.
@Suite("strata bench commands")
struct BenchCommandsTests {
    @Test func commandsJSON() throws {
        let result = try ChildProcess.strata(["bench", "commands", "--loans", "50", "--seconds", "1", "--repeat", "1", "--json"])
        try #require(
            result.exitCode == 0, "exit \(result.exitCode)\nstdout: \(result.stdout)\nstderr: \(result.stderr)")
        #expect(result.stdout.hasSuffix("\n"))
        let lines = result.stdout.split(separator: "\n")
        try #require(lines.count == 5, "stdout: \(result.stdout)")

        var units: [String] = []
        for line in lines {
            let figure = try JSONParser.parse(Array(line.utf8))
            #expect(figure["scenario"] == "commands", "line: \(line)")
            #expect(figure["runs"] == 1)
            #expect(figure["measure"]?.stringValue?.isEmpty == false)
            let median = try #require(figure["median"]?.integerValue, "line: \(line)")
            #expect(median > 0, "line: \(line)")
            #expect(figure["min"]?.integerValue == median)
            #expect(figure["max"]?.integerValue == median)
            #expect((figure["commands"]?.integerValue ?? 0) > 0, "line: \(line)")
            #expect((figure["clients"]?.integerValue ?? 0) > 0, "line: \(line)")
            units.append(figure["unit"]?.stringValue ?? "")
        }
        #expect(units == ["commands/s", "commands/s", "us", "us", "us"])
        // 50 loans: 150 commands of the lending loop; the mix has 25 loans and 25 invoices.
        let first = try JSONParser.parse(Array(lines[0].utf8))
        #expect(first["commands"] == 150)
        let second = try JSONParser.parse(Array(lines[1].utf8))
        #expect(second["commands"] == 125)
        // p50 ≤ p99 ≤ max.
        let latencies = try lines[2...].map { try #require(try JSONParser.parse(Array($0.utf8))["median"]?.integerValue) }
        #expect(latencies == latencies.sorted())
    }

    @Test func usageErrors() throws {
        for arguments in [["--loans", "0"], ["--rate", "none"], ["--seconds", "0"], ["--events", "1000"]] {
            let result = try ChildProcess.strata(["bench", "commands"] + arguments)
            #expect(result.exitCode == 2, "\(arguments): \(result.stderr)")
        }
    }
}
