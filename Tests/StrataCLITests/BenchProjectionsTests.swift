import Foundation
import StrataCore
import StrataTesting
import Testing

/// `strata bench lag` and `strata bench rebuild` at a small size: they run end to end and
/// print figures that parse. Nothing here is timed.
@Suite("strata bench lag and rebuild")
struct BenchProjectionsTests {
    @Test func lagJSON() throws {
        let result = try ChildProcess.strata(
            ["bench", "lag", "--loans", "40", "--rate", "100", "--seconds", "1", "--repeat", "1", "--json"])
        try #require(result.exitCode == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
        let figures = try result.stdout.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
        try #require(figures.count == 6, "stdout: \(result.stdout)")
        #expect(figures.allSatisfy { $0["unit"] == "ms" && $0["runs"] == 1 })
        // Named by its scenario, as every other scenario's figures are.
        #expect(figures.allSatisfy { $0["scenario"] == "lag" }, "stdout: \(result.stdout)")
        // p50 ≤ p99 ≤ max, in each of the two runs.
        for run in [figures[0..<3], figures[3..<6]] {
            let medians = try run.map { try #require($0["median"]?.integerValue) }
            #expect(medians == medians.sorted() && medians[0] >= 0, "\(medians)")
            // Each of the two measurements has one account of its CPU, on each of its figures.
            #expect(run.allSatisfy { $0["cpu"] == run.first?["cpu"] })
        }
        BenchCPUExpectations.check(figures[0]["cpu"], threads: [])
        // At full speed the projector is busy until it has caught up.
        BenchCPUExpectations.check(figures[3]["cpu"], threads: ["projector-readm", "strata-writer"])
    }

    @Test func rebuildJSON() throws {
        let result = try ChildProcess.strata(["bench", "rebuild", "--loans", "30", "--repeat", "1", "--json"])
        try #require(result.exitCode == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
        let figures = try result.stdout.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
        try #require(figures.count == 2, "stdout: \(result.stdout)")
        for figure in figures {
            #expect(figure["scenario"] == "rebuild")
            #expect(figure["unit"] == "events/s")
            #expect((figure["median"]?.integerValue ?? 0) > 0, "\(figure)")
            // 30 loans and 30 invoices after the setup: well over 200 events rebuilt.
            let measure = try #require(figure["measure"]?.stringValue)
            let events = Int(measure.split(separator: " ")[2]) ?? 0
            #expect(events > 200, "\(measure)")
            // The main thread writes the rebuilt file.
            BenchCPUExpectations.check(figure["cpu"], threads: ["main"])
        }
    }
}
