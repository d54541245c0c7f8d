import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing

/// `strata bench replay` and `strata bench verify` at a small size: they fill a store, run
/// the real command on it and print figures that parse. Nothing here is timed.
@Suite("strata bench replay and verify")
struct BenchHistoryTests {
    @Test(arguments: [("replay", Int64(1_000_000)), ("verify", 500_000)])
    func oneJSONLineWithTheEventCountAndTarget(_ scenario: String, _ target: Int64) throws {
        let result = try ChildProcess.strata(["bench", scenario, "--events", "2000", "--repeat", "2", "--json"])
        try #require(result.exitCode == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
        #expect(result.stdout.hasSuffix("\n"))
        let lines = result.stdout.split(separator: "\n")
        try #require(lines.count == 1, "stdout: \(result.stdout)")
        let figure = try JSONParser.parse(Array(lines[0].utf8))
        #expect(figure["scenario"] == .string(scenario))
        #expect(figure["unit"] == "events/s")
        #expect(figure["runs"] == 2)
        #expect(figure["events"] == 2000)
        #expect(figure["target"] == .integer(target))
        let low = try #require(figure["min"]?.integerValue)
        let median = try #require(figure["median"]?.integerValue)
        let high = try #require(figure["max"]?.integerValue)
        #expect(0 < low && low <= median && median <= high, "\(figure)")
        #expect(figure["targetPercent"]?.integerValue == Int64((Double(median) / Double(target) * 100).rounded()))
        // A Swift process with SQLite open is several MiB resident.
        #expect((figure["peakRSSKiB"]?.integerValue ?? 0) > 4096, "\(figure)")
    }

    @Test func aTableByDefaultAndTheStoreLeftInDir() throws {
        try withTemporaryDirectory { directory in
            let result = try strata(
                ["bench", "verify", "--events", "500", "--repeat", "1", "--dir", directory.path], expecting: 0)
            let lines = result.stdout.split(separator: "\n")
            try #require(lines.count == 3, "stdout: \(result.stdout)")
            #expect(lines[0].hasPrefix("strata bench verify — 500 events, 1 runs"))
            #expect(lines[1].hasPrefix("measure"))
            #expect(lines[2].hasPrefix("verify, hash chain and checkpoints"))
            #expect(lines[2].contains("events/s") && lines[2].contains("% of ≥ 500,000"), "\(lines[2])")

            // The store it filled: exactly the events asked for, intact.
            let store = try SQLiteEventStore(readingAt: directory.appendingPathComponent("events.db").path)
            #expect(try store.head() == 500)
            let verified = try strata(["verify", "--data", directory.path], expecting: 0)
            #expect(verified.stdout.hasPrefix("intact: 500 events verified"))
            // Replayed, every event is a JSON line.
            let replayed = try strata(["replay", "--data", directory.path], expecting: 0)
            #expect(replayed.stdout.split(separator: "\n").count == 500)

            // A second run does not write into a store already there.
            let again = try strata(["bench", "replay", "--events", "500", "--dir", directory.path], expecting: 2)
            #expect(again.stderr.contains("exists already"))
        }
    }

    @Test func usageErrors() throws {
        try strata(["bench", "replay", "--events", "99"], expecting: 2)
        try strata(["bench", "verify", "--events", "many"], expecting: 2)
        try strata(["bench", "verify", "--repeat", "0"], expecting: 2)
    }
}
