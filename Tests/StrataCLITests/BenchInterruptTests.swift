import Foundation
import StrataTesting
import Testing

@Suite("strata bench, interrupted")
struct BenchInterruptTests {
    /// SIGINT or SIGTERM ends a benchmark (exit 128 + the signal) and leaves nothing behind: not
    /// its scratch directory, which a long run fills with gigabytes of stores, and not the
    /// `strata serve` it started for the memory scenario, which ran on without its parent,
    /// serving a store in a directory gone or going. Sent to the benchmark alone, as `kill`
    /// does (a Ctrl-C reaches the children too).
    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalLeavesNoScratchDirectoryAndNoService(_ signal: Int32) throws {
        try withTemporaryDirectory { dir in
            let bench = try startWithSignalsUnblocked(
                ["bench", "memory", "--events", "100", "--loans", "5000", "--repeat", "1"],
                environment: ["TMPDIR": dir.path])
            let service = try serviceStarted(by: bench)
            bench.send(signal: signal)
            #expect(bench.waitForExit() == 128 + signal, "\(bench.log)")
            let deadline = Date().addingTimeInterval(30)
            while isAlive(service) && Date() < deadline { usleep(20_000) }
            #expect(!isAlive(service), "strata serve (pid \(service)) outlived the benchmark")
            let left = try FileManager.default.subpathsOfDirectory(atPath: dir.path)
            #expect(left == [], "\(left)")
        }
    }

    /// The `strata serve` child of `bench`, once it runs.
    private func serviceStarted(
        by bench: StrataProcess, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> pid_t {
        let parent = bench.processIdentifier
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            let list = "/proc/\(parent)/task/\(parent)/children"
            let children = (try? String(contentsOfFile: list, encoding: .utf8)) ?? ""
            for child in children.split(separator: " ").compactMap({ pid_t($0) }) {
                let command = (try? String(contentsOfFile: "/proc/\(child)/cmdline", encoding: .utf8)) ?? ""
                if command.split(separator: "\0").dropFirst().first == "serve" { return child }
            }
            try #require(bench.isRunning, "the benchmark ended first: \(bench.log)", sourceLocation: sourceLocation)
            usleep(20_000)
        }
        Issue.record("the benchmark started no strata serve: \(bench.log)", sourceLocation: sourceLocation)
        throw CancellationError()
    }

    /// Whether `pid` still runs: a zombie has ended, and waits only for its new parent to reap it.
    private func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(close, offsetBy: 2)] != "Z"
    }
}
