import CommandService
import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing

/// `strata query --min-position P` against a real service and projector: a client that
/// wrote at position P reads a model that includes its write, or is told it is not there yet.
@Suite("Read your writes")
struct ReadYourWritesTests {
    private func registration(_ id: String) -> CommandBody {
        CommandBody(
            id: "register-\(id)", type: "RegisterUser", actor: id,
            payload: ["userId": .string(id), "username": .string(id), "email": .string("\(id)@example.com"),
                      "role": .string("AGENT")])
    }

    private func head(of system: System) throws -> Int64 {
        try SQLiteEventStore(readingAt: system.data.appendingPathComponent("events.db").path).head()
    }

    /// Standard output of a process that has exited (its pipe may still be draining).
    private func output(of process: StrataProcess) -> String {
        let deadline = Date().addingTimeInterval(5)
        while process.output.isEmpty, Date() < deadline { usleep(10_000) }
        return process.output
    }

    @Test func aQueryWaitsUntilTheProjectionHasItsWriteAndTimesOutWhenItCannot() throws {
        let system = try System("read-your-writes")
        let projector = try system.projector("readmodels")
        defer { projector.send(signal: SIGCONT); projector.stop() }
        try system.send([registration("agent-a")])
        try system.waitForCheckpoint("readmodels", try head(of: system))

        // The projector is paused: the write is durable, the read model does not have it yet.
        projector.send(signal: SIGSTOP)
        try system.send([registration("agent-b")])
        let written = try head(of: system)
        let query = try StrataProcess(
            ["query", "users", "--role", "agent", "--min-position", String(written), "--wait", "60", "--format", "json",
             "--data", system.data.path])
        usleep(800_000)
        #expect(query.isRunning, "the query answered before the projection had position \(written): \(query.output)")
        projector.send(signal: SIGCONT)
        #expect(query.waitForExit(timeout: 60) == 0, "\(query.log)")
        let answer = try JSONParser.parse(Array(output(of: query).utf8))
        guard case .integer(let position)? = answer["position"] else {
            Issue.record("no position in \(query.output)")
            return
        }
        #expect(position >= written)
        #expect(answer["rows"]?.arrayValue?.compactMap { $0["user_id"]?.stringValue } == ["agent-a", "agent-b"])

        // Paused again, a bounded wait ends with exit 1 and says where the projection is.
        projector.send(signal: SIGSTOP)
        try system.send([registration("agent-c")])
        let later = try head(of: system)
        let started = Date()
        let timedOut = try ChildProcess.strata(
            ["query", "users", "--min-position", String(later), "--wait", "1", "--data", system.data.path])
        #expect(timedOut.exitCode == 1)
        #expect(timedOut.stderr.contains("readmodels did not reach position \(later) within 1 s: it is at position \(position)"))
        #expect(timedOut.stdout.isEmpty)
        #expect(Date().timeIntervalSince(started) >= 1)
    }
}
