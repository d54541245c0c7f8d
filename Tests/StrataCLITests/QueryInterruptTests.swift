import Foundation
import StrataCore
import StrataTesting
import Testing

@testable import StrataCLI

/// Starts `strata ARGUMENTS` with SIGINT and SIGTERM unblocked, as a shell starts it: a child
/// keeps the signal mask of the thread that starts it, and the test's threads block them.
private func startWithSignalsUnblocked(_ arguments: [String], environment: [String: String]) throws
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
    /// The scratch copy an as-of query builds holds personal data opened for it, which a later
    /// erasure never reaches: SIGINT or SIGTERM in the middle of the build removes it too.
    @Test func aSignalDuringTheBuildLeavesNoScratchCopy() throws {
        try withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            let scratch = dir.appendingPathComponent("tmp")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
            try bootstrapAdmin(data: data)
            // Long enough to build that the signal comes while it runs.
            var history = BenchLendingHistory(admin: "admin-1", today: LocalDate("2026-03-01")!)
            let head = try history.grow(data + "/events.db", to: 20_000, checkpointKey: data + "/checkpoint.key")

            for signal in [SIGINT, SIGTERM] {
                let query = try startWithSignalsUnblocked(
                    ["query", "portfolio", "--as-of", String(head), "--data", data],
                    environment: ["TMPDIR": scratch.path])
                let deadline = Date().addingTimeInterval(30)
                while try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty {
                    try #require(query.isRunning && Date() < deadline, "no scratch copy was made: \(query.log)")
                    usleep(2_000)
                }
                query.send(signal: signal)
                let exitCode = query.waitForExit()
                #expect(exitCode == 128 + signal, "\(query.log)")
                let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
                #expect(left == [], "after signal \(signal)")
            }
        }
    }
}
