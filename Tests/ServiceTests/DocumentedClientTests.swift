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

    /// The documented client pipelining through a restart of the service: the connection that
    /// carried the first 50 commands ends unanswered (the service, stopped, never read them, and
    /// is killed), libzmq connects again in silence, and the next 50 are answered on the new
    /// connection. Paired by order, as the client once paired them, each of those replies was
    /// taken for one of the first 50; paired by id, with what the old connection carried sent
    /// again, every command gets its own reply.
    @Test func thePythonClientPairsRepliesByIdThroughARestartOfTheService() throws {
        let script = try Self.block(in: Self.protocolPage(), after: "```python", until: "```")
        let data = try ChildProcess.temporaryDirectory("strata-pyclient-restart")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let ports = try ServiceProcess.Ports.free()
        var service = try ServiceProcess(dataDirectory: data, ports: ports)
        defer { service.stop() }
        try script.write(to: data.appendingPathComponent("client.py"), atomically: true, encoding: .utf8)
        let driver = data.appendingPathComponent("driver.py")
        try Self.restartDriver.write(to: driver, atomically: true, encoding: .utf8)

        let python = Process()
        python.executableURL = try Self.python()
        python.arguments = [driver.path]
        python.environment = [
            "STRATA_DATA": data.path, "STRATA_KEY": ServiceProcess.Keys.service, "STRATA_COMMANDS": service.commands,
        ]
        let input = Pipe()
        let output = Pipe()
        python.standardInput = input
        python.standardOutput = output
        ChildProcess.ignoreBrokenPipes()
        try python.run()
        defer { if python.isRunning { python.terminate() } }
        let lines = LineReader(output.fileHandleForReading.fileDescriptor)
        func proceed() throws { try input.fileHandleForWriting.write(contentsOf: Data("\n".utf8)) }

        #expect(lines.next(within: 30) == "connected")
        service.send(signal: SIGSTOP)
        try proceed()
        #expect(lines.next(within: 30) == "sent")
        usleep(300_000)  // the 50 are in the connection's buffers, never read
        service.send(signal: SIGKILL)
        #expect(service.waitForExit(timeout: 10) == SIGKILL)
        service = try ServiceProcess(dataDirectory: data, ports: ports)
        try proceed()

        var pairs: [(sent: String, reply: JSONValue)] = []
        while let line = lines.next(within: 60) {
            let json = try JSONParser.parse(Array(line.utf8))
            pairs.append((try #require(json["sent"]?.stringValue), try #require(json["reply"])))
        }
        python.waitUntilExit()
        #expect(python.terminationStatus == 0)
        #expect(pairs.count == 100)
        for (sent, reply) in pairs {
            #expect(reply["id"]?.stringValue == sent, "the reply to \(sent): \(CanonicalJSON.string(reply))")
            #expect(reply["ok"] == .bool(true), "\(CanonicalJSON.string(reply))")
        }
        // Each decided once: the store holds the admin's registration and the 101 agents'.
        #expect(try service.store().head() == 102)
    }

    /// The documented client with a CURVE key the service does not admit raises its TimeoutError
    /// once its attempts are spent. libzmq drops a connection whose key was refused and never
    /// makes it again, so the DEALER has nowhere to queue what is sent after it, and the client's
    /// waiting send of the same bytes again, after the first attempt got no reply, blocked for ever.
    @Test func thePythonClientRefusedAtTheHandshakeTimesOut() throws {
        let script = try Self.block(in: Self.protocolPage(), after: "```python", until: "```")
        let data = try ChildProcess.temporaryDirectory("strata-pyclient-refused")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data, curve: true)
        let service = try ServiceProcess(dataDirectory: data)
        defer { service.stop() }
        try script.write(to: data.appendingPathComponent("client.py"), atomically: true, encoding: .utf8)
        let driver = data.appendingPathComponent("driver.py")
        try Self.refusedDriver.write(to: driver, atomically: true, encoding: .utf8)

        let run = try ChildProcess.run(
            Self.python(), [driver.path],
            environment: [
                "STRATA_DATA": data.path, "STRATA_KEY": ServiceProcess.Keys.service,
                "STRATA_COMMANDS": service.commands,
            ],
            deadline: 30)
        #expect(run.exitCode == 0, "stdout:\n\(run.stdout)\nstderr:\n\(run.stderr)")
        #expect(run.stdout == "timed out: 1 commands unanswered after 2 attempts\n", "\(run.stdout)")
    }

    /// Sends one command through the documented client, over CURVE with a client pair of its own
    /// that no key file holds, and waits 1 s for its reply twice.
    static let refusedDriver = """
        import json, os, sys
        import zmq
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from client import StrataClient, command

        data, key_id = os.environ["STRATA_DATA"], os.environ["STRATA_KEY"]
        keys = json.load(open(data + "/keys.json"))
        secret = next(k["secret"] for k in keys["keys"] if k["id"] == key_id)
        context = zmq.Context()  # its options are every new socket's
        context.curve_serverkey = keys["curveServer"]["public"].encode()
        context.curve_publickey, context.curve_secretkey = zmq.curve_keypair()
        client = StrataClient(os.environ["STRATA_COMMANDS"], key_id, secret, context)
        client.send(command("refused-1", "ApproveAgent", "root", {"agentId": "nobody"}))
        try:
            client.replies(timeout_ms=1000, attempts=2)
        except TimeoutError as error:
            print("timed out: %s" % error, flush=True)

        """

    /// Drives the documented client: connected, then (the service stopped) 50 commands sent,
    /// then (the service killed and started again) 50 more, then every reply collected.
    static let restartDriver = """
        import json, os, sys
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from client import StrataClient, command

        data, key_id = os.environ["STRATA_DATA"], os.environ["STRATA_KEY"]
        keys = json.load(open(data + "/keys.json"))["keys"]
        secret = next(k["secret"] for k in keys if k["id"] == key_id)
        client = StrataClient(os.environ["STRATA_COMMANDS"], key_id, secret)

        def agent(n):
            user = "agent-%d" % n
            payload = {"userId": user, "username": "agent%d" % n, "email": user + "@example.com", "role": "AGENT"}
            return command("c-%d" % n, "RegisterUser", user, payload)

        client.send(agent(0))
        client.replies()
        print("connected", flush=True)
        sys.stdin.readline()
        for n in range(1, 51):
            client.send(agent(n))
        print("sent", flush=True)
        sys.stdin.readline()
        for n in range(51, 101):
            client.send(agent(n))
        replies = client.replies()
        for n in range(1, 101):
            print(json.dumps({"sent": "c-%d" % n, "reply": replies.get("c-%d" % n)}), flush=True)

        """

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

/// The lines a child writes, read with a time limit each.
private struct LineReader {
    let descriptor: Int32

    init(_ descriptor: Int32) { self.descriptor = descriptor }

    /// The next line within `seconds`, without its `\n`; nil if none comes (or the child ended).
    func next(within seconds: Double) -> String? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            var item = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            guard poll(&item, 1, left) > 0, read(descriptor, &byte, 1) == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}
