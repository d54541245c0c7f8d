import EventStore
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

/// A writer killed with SIGKILL at random moments, again and again on the same store:
/// whatever it acknowledged is durable, no command is half-written, the chain verifies.
@Suite("Crash safety")
struct CrashTests {
    @Test func aWriterKilledMidAppendLeavesNoHalfWrittenCommand() throws {
        let directory = try ChildProcess.temporaryDirectory("strata-crash")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.db").path
        var acknowledged: [String] = []

        for round in 1...10 {
            let output = directory.appendingPathComponent("round-\(round).out")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let process = Process()
            process.executableURL = ChildProcess.product("StoreCrashWriter")
            process.arguments = [path, "r\(round)c"]
            process.standardOutput = try FileHandle(forWritingTo: output)
            try process.run()

            // Let it commit for a while, then kill it at a random instant.
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline, (try String(contentsOf: output, encoding: .utf8)).components(separatedBy: "ack ").count < 50 {
                usleep(5_000)
            }
            usleep(UInt32.random(in: 0...150_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)

            // Only complete lines count: the last one may have been cut by the kill.
            let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            let acks = lines.filter { $0.hasPrefix("ack ") }.map { String($0.dropFirst(4)) }
            #expect(!acks.isEmpty, "round \(round): the writer acknowledged nothing before it was killed")
            acknowledged += acks

            // Reopen as the next writer would: the chain verifies and nothing is half-written.
            let store = try SQLiteEventStore(path: path)
            let report = try store.verify()
            #expect(report.isIntact, "round \(round): \(String(describing: report.problem))")
            try expectWholeCommands(path)
            for id in acknowledged {
                guard let entry = try store.journalEntry(commandId: id), case .accepted(let events) = entry.outcome else {
                    Issue.record("round \(round): acknowledged command \(id) is not durable")
                    continue
                }
                #expect(events.count == 3)
            }
        }
    }

    /// Every journaled command has all three of its events, and every event a journaled command.
    func expectWholeCommands(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let c = try SQLiteConnection(path: path, mode: .readOnly)
        let partial = try c.scalarInteger(
            """
            SELECT count(*) FROM (SELECT json_extract(metadata, '$.commandId') AS id, count(*) AS n
                                  FROM events GROUP BY id HAVING n != 3)
            """)
        #expect(partial == 0, "commands with other than 3 events", sourceLocation: sourceLocation)
        let orphans = try c.scalarInteger(
            "SELECT count(*) FROM events WHERE json_extract(metadata, '$.commandId') NOT IN (SELECT command_id FROM commands)")
        #expect(orphans == 0, "events without a journaled command", sourceLocation: sourceLocation)
        let events = try c.scalarInteger("SELECT count(*) FROM events") ?? -1
        let commands = try c.scalarInteger("SELECT count(*) FROM commands") ?? -1
        #expect(events == 3 * commands, sourceLocation: sourceLocation)
    }
}
