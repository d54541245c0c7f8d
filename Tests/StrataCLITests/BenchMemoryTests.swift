import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing

/// `strata bench memory` at a small size: it grows a store in five steps, runs the real
/// service on it each time and prints resident memory that parses. Nothing here is timed.
@Suite("strata bench memory")
struct BenchMemoryTests {
    @Test func fiveStepsAndTheHighest() throws {
        try withTemporaryDirectory { directory in
            let result = try ChildProcess.strata(
                ["bench", "memory", "--events", "3000", "--loans", "10", "--repeat", "1", "--json"]
                    + ["--dir", directory.path])
            try #require(result.exitCode == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
            let figures = try result.stdout.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
            try #require(figures.count == 6, "stdout: \(result.stdout)")
            var previous: Int64 = 0
            var peaks: [Int64] = []
            for (index, figure) in figures.enumerated() {
                #expect(figure["scenario"] == "memory")
                #expect(figure["unit"] == "KiB")
                #expect(figure["runs"] == 1)
                #expect(figure["target"] == 195_313)
                let peak = try #require(figure["median"]?.integerValue, "\(figure)")
                #expect(figure["min"]?.integerValue == peak && figure["max"]?.integerValue == peak)
                // More than a few MiB: a whole process, its libraries and SQLite's cache.
                #expect(peak > 4096, "\(figure)")
                let events = try #require(figure["events"]?.integerValue)
                guard index < 5 else {
                    #expect(figure["measure"] == "serve peak RSS, highest of 5 steps")
                    #expect(events == previous)
                    #expect(peak == peaks.max())
                    let percent = Int64((Double(peaks[4]) / Double(peaks[0]) * 100).rounded())
                    #expect(figure["lastOverFirstPercent"]?.integerValue == percent)
                    continue
                }
                // Each step holds at least its share of --events (and what the runs before sent).
                #expect(events >= 3000 * Int64(index + 1) / 5 && events > previous, "\(figure)")
                #expect(figure["measure"] == .string("serve peak RSS, \(events) events stored"))
                #expect(figure["loans"] == 10)
                let start = try #require(figure["startKiB"]?.integerValue)
                let end = try #require(figure["endKiB"]?.integerValue)
                #expect(0 < start && start <= peak && end <= peak, "\(figure)")
                previous = events
                peaks.append(peak)
            }

            // The history is the catalog's own: the service folded it, and the chain and every
            // checkpoint it and the benchmark signed verify.
            let data = directory.appendingPathComponent("memory")
            let store = try SQLiteEventStore(readingAt: data.appendingPathComponent("events.db").path)
            let types = Set(try store.events(after: 0, limit: Int.max).map(\.type))
            #expect(types.isSuperset(of: ["UserRegistered", "InvoiceCreated", "LoanApproved", "PaymentReceived"]))
            let verified = try strata(["verify", "--data", data.path, "--format", "json"], expecting: 0)
            let report = try JSONParser.parse(Array(verified.stdout.utf8))
            #expect((report["checkpointsVerified"]?.integerValue ?? 0) >= 5, "\(verified.stdout)")
        }
    }

    @Test func aTableByDefault() throws {
        let result = try strata(["bench", "memory", "--events", "500", "--loans", "5", "--repeat", "1"], expecting: 0)
        let lines = result.stdout.split(separator: "\n")
        try #require(lines.count == 8, "stdout: \(result.stdout)")
        #expect(lines[1].hasPrefix("events stored"))
        #expect(lines[2...6].allSatisfy { $0.hasSuffix("% of 200 MB") }, "\(result.stdout)")
        #expect(lines[7].hasPrefix("highest peak ") && lines[7].contains("MiB (below the 200 MB target)"))
    }
}
