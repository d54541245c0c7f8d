import Foundation
import StrataCore
import StrataTesting
import Testing

@testable import StrataCLI

/// Starts `strata ARGUMENTS` with SIGINT and SIGTERM unblocked, as a shell starts it: a child
/// keeps the signal mask of the thread that starts it, and the test's threads block them.
func startWithSignalsUnblocked(_ arguments: [String], environment: [String: String]) throws
    -> StrataProcess
{
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGINT)
    sigaddset(&signals, SIGTERM)
    var previous = sigset_t()
    pthread_sigmask(SIG_UNBLOCK, &signals, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    return try StrataProcess(arguments, environment: environment)
}

@Suite("strata query --as-of, interrupted")
struct QueryInterruptTests {
    /// A store long enough to build that a signal comes while it runs, and an empty TMPDIR for
    /// the scratch copies: the data directory, that directory, and the store's head.
    private func storeAndScratch(in dir: URL) throws -> (data: String, scratch: URL, head: Int64) {
        let data = dir.appendingPathComponent("data").path
        let scratch = dir.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
        try bootstrapAdmin(data: data)
        var history = BenchLendingHistory(admin: "admin-1", today: LocalDate("2026-03-01")!)
        let head = try history.grow(data + "/events.db", to: 20_000, checkpointKey: data + "/checkpoint.key")
        return (data, scratch, head)
    }

    /// Waits until `query` has made its scratch copy in `scratch`.
    private func waitForScratchCopy(of query: StrataProcess, in scratch: URL) throws {
        let deadline = Date().addingTimeInterval(30)
        while try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty {
            try #require(query.isRunning && Date() < deadline, "no scratch copy was made: \(query.log)")
            usleep(2_000)
        }
    }

    /// The scratch copy an as-of query builds holds personal data opened for it, which a later
    /// erasure never reaches: SIGINT or SIGTERM in the middle of the build removes it too.
    @Test func aSignalDuringTheBuildLeavesNoScratchCopy() throws {
        try withTemporaryDirectory { dir in
            let (data, scratch, head) = try storeAndScratch(in: dir)
            for signal in [SIGINT, SIGTERM] {
                let query = try startWithSignalsUnblocked(
                    ["query", "portfolio", "--as-of", String(head), "--data", data],
                    environment: ["TMPDIR": scratch.path])
                try waitForScratchCopy(of: query, in: scratch)
                query.send(signal: signal)
                let exitCode = query.waitForExit()
                #expect(exitCode == 128 + signal, "\(query.log)")
                let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
                #expect(left == [], "after signal \(signal)")
            }
        }
    }

    /// SIGKILL leaves the scratch copy behind, since nothing runs after it; the next as-of
    /// query removes it, and every other copy whose query no longer runs, but never one whose
    /// query still runs (it holds the directory's lock), nor what a link of the same name
    /// leads to, nor one just made.
    @Test func theNextAsOfQueryRemovesWhatAKilledOneLeft() throws {
        try withTemporaryDirectory { dir in
            let (data, scratch, head) = try storeAndScratch(in: dir)
            let killed = try StrataProcess(
                ["query", "portfolio", "--as-of", String(head), "--data", data], environment: ["TMPDIR": scratch.path])
            try waitForScratchCopy(of: killed, in: scratch)
            killed.send(signal: SIGKILL)
            _ = killed.waitForExit()
            let left = try #require(try FileManager.default.contentsOfDirectory(atPath: scratch.path).first)
            #expect(left.hasPrefix("strata-as-of-"))

            // One whose query still runs (this test holds its lock), a link to a directory
            // elsewhere, and one just made, all named as scratch copies are.
            let running = scratch.appendingPathComponent("strata-as-of-RUNNIN")
            let elsewhere = dir.appendingPathComponent("elsewhere")
            let young = scratch.appendingPathComponent("strata-as-of-YOUNG0")
            for made in [running, elsewhere, young] {
                try FileManager.default.createDirectory(at: made, withIntermediateDirectories: false)
                try Data("x".utf8).write(to: made.appendingPathComponent("readmodels.db"))
            }
            try FileManager.default.createSymbolicLink(
                at: scratch.appendingPathComponent("strata-as-of-LINKED"), withDestinationURL: elsewhere)
            let lock = open(running.path, O_RDONLY | O_DIRECTORY)
            defer { close(lock) }
            #expect(flock(lock, LOCK_EX | LOCK_NB) == 0)
            // A copy's age is its directory's last change: these are made older than the minute
            // a new one is left alone for.
            let past = Date().addingTimeInterval(-120)
            for old in [left, "strata-as-of-RUNNIN"] {
                try FileManager.default.setAttributes(
                    [.modificationDate: past], ofItemAtPath: scratch.appendingPathComponent(old).path)
            }

            let next = try ChildProcess.strata(
                ["query", "accounts", "--as-of", "1", "--data", data], environment: ["TMPDIR": scratch.path])
            #expect(next.exitCode == 0, "\(next.stderr)")
            #expect(next.stderr.contains("removed 1 scratch copy of the read models"), "\(next.stderr)")
            let remaining = try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted()
            #expect(remaining == ["strata-as-of-LINKED", "strata-as-of-RUNNIN", "strata-as-of-YOUNG0"])
            #expect(FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent("readmodels.db").path))
        }
    }
}
