import Foundation
import StrataCore
import StrataTesting
import Testing

/// The clients docs/protocol.md shows, run as written against the real service: the
/// Python (pyzmq) client, and the `strata send` shell example.
@Suite struct DocumentedClientTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The protocol page's text.
    static func protocolPage() throws -> String {
        try String(contentsOf: repository.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
    }

    /// The lines between `start` and the next line equal to `end`.
    static func block(in text: String, after start: String, until end: String) throws -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let first = try #require(lines.firstIndex { $0.hasPrefix(start) }, "docs/protocol.md has no \(start)")
        let rest = lines[(first + 1)...]
        let last = try #require(rest.firstIndex { $0 == end }, "no \(end) after \(start)")
        return rest[..<last].joined(separator: "\n") + "\n"
    }

    /// The interpreter with pyzmq that `scripts/python-env` prepares.
    static func python() throws -> URL {
        let fromEnvironment = ProcessInfo.processInfo.environment["STRATA_TEST_PYTHON"]
        let path = fromEnvironment ?? repository.appendingPathComponent(".build/python-venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ServiceProcessError("no Python with pyzmq at \(path): run scripts/python-env (scripts/test does)")
        }
        return URL(fileURLWithPath: path)
    }

    @Test func thePythonClientRunsAsDocumented() throws {
        let script = try Self.block(in: Self.protocolPage(), after: "```python", until: "```")
        let data = try ChildProcess.temporaryDirectory("strata-pyclient")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        let file = data.appendingPathComponent("client.py")
        try script.write(to: file, atomically: true, encoding: .utf8)

        let run = try ChildProcess.run(
            Self.python(), [file.path],
            environment: [
                "STRATA_DATA": data.path, "STRATA_KEY": ServiceProcess.Keys.service, "STRATA_COMMANDS": service.commands,
                "STRATA_HISTORY": service.history, "RUN": "py1",
            ])
        #expect(run.exitCode == 0, "stdout:\n\(run.stdout)\nstderr:\n\(run.stderr)")
        let replies = run.stdout.split(separator: "\n").filter { $0.hasPrefix("{") }
        #expect(replies.count == 6)
        for reply in replies {
            #expect(try JSONParser.parse(Array(reply.utf8))["ok"] == .bool(true), "\(reply)")
        }
        #expect(run.stdout.contains("retry duplicate: True"))
        // The admin's registration and the six commands' seven events (a payment appends PaymentReceived
        // and CommissionEarned): the client checked the chain over all of them.
        #expect(run.stdout.contains("chain intact over 8 events"), "\(run.stdout)")
        #expect(service.stop() == 0)
    }

    @Test func theSendExampleWorksAndIsSafeToRepeat() throws {
        let lines = try Self.block(in: Self.protocolPage(), after: "cat > day.jsonl <<'EOF'", until: "EOF")
        let data = try ChildProcess.temporaryDirectory("strata-send")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        let send = ["send", "-", "--data", data.path, "--key", ServiceProcess.Keys.service, "--commands", service.commands]

        let first = try ChildProcess.strata(send, stdin: lines)
        #expect(first.exitCode == 0, "\(first.stderr)")
        let replies = try first.stdout.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
        #expect(replies.map { $0["id"]?.stringValue } == ["d1-1", "d1-2"])
        #expect(replies.allSatisfy { $0["ok"] == .bool(true) && $0["duplicate"] == .bool(false) })

        let again = try ChildProcess.strata(send, stdin: lines)
        #expect(again.exitCode == 0)
        let repeated = try again.stdout.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
        #expect(repeated.map { $0["duplicate"] } == [.bool(true), .bool(true)])
        #expect(repeated.map { $0["events"] } == replies.map { $0["events"] }, "a duplicate names the original events")

        // A refused line makes the exit code 1; the other lines are still sent and answered.
        let mixed = lines + #"{"id":"d1-3","type":"ApproveAgent","actor":"root","payload":{"agentId":"nobody"}}"# + "\n"
        let refused = try ChildProcess.strata(send, stdin: mixed)
        #expect(refused.exitCode == 1)
        #expect(refused.stdout.split(separator: "\n").count == 3)
        #expect(refused.stdout.contains(#""code":"NOT_FOUND""#))

        // No such key, and no service listening: environment errors, exit 2.
        let unknownKey = try ChildProcess.strata(
            ["send", "-", "--data", data.path, "--key", "nope", "--commands", service.commands], stdin: lines)
        #expect(unknownKey.exitCode == 2)
        #expect(unknownKey.stderr.contains("no key nope"))
        #expect(service.stop() == 0)
        let nobody = try ChildProcess.strata(send + ["--timeout", "1"], stdin: lines)
        #expect(nobody.exitCode == 2)
        #expect(nobody.stderr.contains("no reply"))
    }
}
