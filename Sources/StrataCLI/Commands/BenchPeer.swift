import Foundation
import StrataCore

/// The Python peer of `strata bench commands --peer`: the lending loop through the
/// `eventsourcing` library (bench/peers/eventsourcing-peer), run as a child process with the
/// same number of loans, its SQLite file in the benchmark's scratch directory.
///
/// The script lives in the source checkout, not beside an installed binary: it is found by
/// walking up from this executable (a build sits under the checkout's .build), then from the
/// current directory. A peer that cannot run is an environment failure (exit 2) carrying the
/// script's own stderr, never a figure left out: a ratio without its peer means nothing.
struct BenchPeer {
    static let relativePath = "bench/peers/eventsourcing-peer"

    /// One run, as the peer reports it on its single JSON line.
    struct Run {
        let operationsPerSecond: Double
        let eventsPerSecond: Double
        let operations: Int64
        let events: Int64
        let version: String
        let journalMode: String
        let synchronous: String
    }

    let script: String

    static func locate() throws -> BenchPeer {
        let executable = URL(fileURLWithPath: BenchChildProcess.strata).deletingLastPathComponent()
        let current = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        for start in [executable, current] {
            var directory = start
            while true {
                let candidate = directory.appendingPathComponent(relativePath).path
                if FileManager.default.isExecutableFile(atPath: candidate) { return BenchPeer(script: candidate) }
                if directory.path == "/" { break }
                directory = directory.deletingLastPathComponent()
            }
        }
        throw CommandFailure.environment(
            "cannot find \(relativePath) above \(executable.path) or \(current.path): "
                + "--peer runs from a Strata checkout")
    }

    /// Runs the peer once for `loans` loans; its stdout and stderr go to files in `directory`
    /// (pip can say a lot on a first run, and a file never blocks the child).
    func run(loans: Int, directory: String) throws -> Run {
        let out = "\(directory)/peer.out"
        let err = "\(directory)/peer.err"
        defer {
            unlink(out)
            unlink(err)
        }
        let child = try BenchChildProcess.start(
            ["--loans", String(loans), "--dir", directory], executable: script, standardOutput: out, standardError: err)
        let exit = child.wait()
        let stdout = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        let stderr = child.log.trimmingCharacters(in: .whitespacesAndNewlines)
        let said = stderr.isEmpty ? "" : ":\n" + String(stderr.suffix(4000))
        guard exit.exitCode == 0 else {
            let how = exit.exitCode.map { "exit \($0)" } ?? "signal \(exit.status & 0x7f)"
            throw CommandFailure.environment("the Python peer \(script) failed (\(how))\(said)")
        }
        guard let run = Self.parse(stdout) else {
            throw CommandFailure.environment(
                "the Python peer \(script) printed no figure: \(stdout.prefix(600).debugDescription)\(said)")
        }
        return run
    }

    /// The peer's one JSON line, or nil when it is not what the peer prints.
    static func parse(_ stdout: String) -> Run? {
        let lines = stdout.split(separator: "\n")
        guard lines.count == 1, let object = try? JSONParser.parse(Array(lines[0].utf8)),
            let operationsPerSecond = object["operationsPerSecond"]?.integerValue, operationsPerSecond > 0,
            let eventsPerSecond = object["eventsPerSecond"]?.integerValue,
            let operations = object["operations"]?.integerValue, let events = object["events"]?.integerValue,
            let version = object["version"]?.stringValue, let journalMode = object["journalMode"]?.stringValue,
            let synchronous = object["synchronous"]?.stringValue
        else { return nil }
        return Run(
            operationsPerSecond: Double(operationsPerSecond), eventsPerSecond: Double(eventsPerSecond),
            operations: operations,
            events: events, version: version, journalMode: journalMode, synchronous: synchronous)
    }
}
