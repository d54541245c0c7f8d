import EventStore
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

// `strata send` against a real service: one reply line per input line, in input order, even
// when the service would answer a line with nothing.

/// An agent registering itself, as one line of `strata send` input.
private func registration(_ n: Int) -> String {
    #"{"id":"send-\#(n)","type":"RegisterUser","actor":"send-agent-\#(n)","payload":"#
        + #"{"userId":"send-agent-\#(n)","username":"sender\#(n)","email":"send\#(n)@example.com","role":"AGENT"}}"#
}

/// A command body of about `bytes` bytes.
private func padded(_ id: String, bytes: Int) -> String {
    #"{"id":"\#(id)","type":"RegisterUser","actor":"a","payload":{"pad":"\#(String(repeating: "x", count: bytes))"}}"#
}

/// The next line `descriptor` gives within `seconds`, without its `\n`; nil if none comes.
private func line(from descriptor: Int32, within seconds: Double) -> String? {
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

@Suite struct SendProcessTests {
    /// Each line is sent as soon as it is read, so `tail -f commands.jsonl | strata send` works:
    /// the reply to a line comes while the input is still open.
    @Test func eachLineIsSentAsItArrives() throws {
        let data = try ChildProcess.temporaryDirectory("strata-send-stream")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        let send = Process()
        send.executableURL = ChildProcess.product("strata")
        send.arguments = ["send", "-", "--data", data.path, "--key", ServiceProcess.Keys.service]
            + ["--commands", service.commands, "--timeout", "10"]
        let input = Pipe()
        let output = Pipe()
        send.standardInput = input
        send.standardOutput = output
        ChildProcess.ignoreBrokenPipes()
        try send.run()
        defer { if send.isRunning { send.terminate() } }

        for n in 1...3 {
            try input.fileHandleForWriting.write(contentsOf: Data((registration(n) + "\n").utf8))
            let reply = try #require(
                line(from: output.fileHandleForReading.fileDescriptor, within: 10), "no reply to line \(n) while open")
            #expect(try JSONParser.parse(Array(reply.utf8))["id"]?.stringValue == "send-\(n)", "\(reply)")
        }
        try input.fileHandleForWriting.close()
        send.waitUntilExit()
        #expect(send.terminationStatus == 0)
        #expect(service.stop() == 0)
    }

    /// A connection lost while replies are awaited (the service killed, and started again as
    /// `strata up` restarts it) ends `send` at once, naming what was answered and what was not:
    /// what the old connection carried is never answered, so the new connection's replies,
    /// paired with the lines by their order, were each printed as the reply to an earlier line.
    @Test func aConnectionLostWithRepliesAwaitedEndsSendRatherThanShiftingTheReplies() throws {
        let data = try ChildProcess.temporaryDirectory("strata-send-lost")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let ports = try ServiceProcess.Ports.free()
        let first = try ServiceProcess(dataDirectory: data, ports: ports)
        let send = Process()
        send.executableURL = ChildProcess.product("strata")
        send.arguments = ["send", "-", "--data", data.path, "--key", ServiceProcess.Keys.service]
            + ["--commands", first.commands, "--timeout", "10"]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        (send.standardInput, send.standardOutput, send.standardError) = (input, output, errors)
        try send.run()
        defer { if send.isRunning { send.terminate() } }
        // The line written after `send` has ended must not end this process.
        ChildProcess.ignoreBrokenPipes()
        func write(_ line: String) {
            let bytes = Array((line + "\n").utf8)
            _ = Glibc.write(input.fileHandleForWriting.fileDescriptor, bytes, bytes.count)
        }

        write(registration(1))
        let reply = try #require(
            line(from: output.fileHandleForReading.fileDescriptor, within: 10), "no reply to line 1")
        // Line 2 reaches a service that never answers it: stopped, then killed.
        first.send(signal: SIGSTOP)
        write(registration(2))
        Thread.sleep(forTimeInterval: 0.5)
        first.send(signal: SIGKILL)
        #expect(first.waitForExit(timeout: 10) == SIGKILL)
        let second = try ServiceProcess(dataDirectory: data, ports: ports)
        write(registration(3))
        Thread.sleep(forTimeInterval: 1)
        try input.fileHandleForWriting.close()
        send.waitUntilExit()

        let printed = [reply] + String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n").map(String.init)
        let ids = try printed.map { try JSONParser.parse(Array($0.utf8))["id"]?.stringValue }
        #expect(ids == ["send-1"], "each reply printed is its own line's: \(printed)")
        #expect(send.terminationStatus == 2)
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(said.contains("lost the connection") && said.contains("1 answered, 1 awaited"), "\(said)")
        #expect(second.stop() == 0)
    }

    /// A line over 1 MiB, which the service may drop unanswered, is refused by `send` itself,
    /// with the reply the service gives a body too large, in that line's place.
    @Test func aLineOverOneMebibyteIsRefusedInItsPlaceWithoutBeingSent() throws {
        let data = try ChildProcess.temporaryDirectory("strata-send-large")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        let lines = [
            registration(1), padded("huge", bytes: 1_100_000), registration(2), padded("large", bytes: 100_000),
            registration(3), padded("last", bytes: 2_000_000),
        ]
        let result = try ChildProcess.strata(
            ["send", "-", "--data", data.path, "--key", ServiceProcess.Keys.service, "--commands", service.commands]
                + ["--timeout", "10"],
            stdin: lines.joined(separator: "\n") + "\n")
        #expect(result.exitCode == 1, "\(result.stderr)")
        let replies = try result.stdout.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
        try #require(replies.count == 6, "one reply a line: \(result.stdout)\(result.stderr)")
        #expect(replies.map { $0["id"]?.stringValue } == ["send-1", nil, "send-2", nil, "send-3", nil])
        #expect(replies.map { $0["ok"] } == [true, false, true, false, true, false])
        // The service's answer to a body too large (line 4) and send's own (lines 2 and 6) have one shape.
        for reply in [replies[1], replies[3], replies[5]] {
            #expect(reply.objectValue.map { Set($0.keys) } == ["error", "ok"], "\(reply)")
            #expect(reply["error"]?["code"] == "TOO_LARGE" && reply["error"]?["reason"] == "BODY_TOO_LARGE")
        }
        #expect(replies[1]["error"]?["message"]?.stringValue?.contains("1048576") == true, "\(replies[1])")
        #expect(service.stop() == 0)
    }

    /// What the service refused is what `strata query refusals` reads back from the journal
    /// while the service runs: the refusals that decided something, with the key that signed
    /// them; a body refused as MALFORMED decided nothing and is not there.
    @Test func refusalsSentAreInTheJournalWhileTheServiceRuns() throws {
        let data = try ChildProcess.temporaryDirectory("strata-send-refusals")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        let lines = [
            registration(1),
            #"{"id":"approve-ghost","type":"ApproveAgent","actor":"\#(ServiceProcess.admin)","payload":{"agentId":"ghost"}}"#,
            #"{"id":"bad-email","type":"RegisterUser","actor":"u9","payload":{"userId":"u9","username":"u9x","#
                + #""email":"nope","role":"AGENT"}}"#,
            #"{"id":"no-payload","type":"ApproveAgent","actor":"x"}"#,
        ]
        let sent = try ChildProcess.strata(
            ["send", "-", "--data", data.path, "--key", ServiceProcess.Keys.service, "--commands", service.commands]
                + ["--timeout", "10"],
            stdin: lines.joined(separator: "\n") + "\n")
        #expect(sent.exitCode == 1, "\(sent.stdout)\(sent.stderr)")

        let query = try ChildProcess.strata(["query", "refusals", "--format", "json", "--data", data.path])
        try #require(query.exitCode == 0, "\(query.stderr)")
        let answer = try JSONParser.parse(Array(query.stdout.utf8))
        let rows = answer["rows"]?.arrayValue ?? []
        #expect(rows.map { $0["command_id"] } == ["approve-ghost", "bad-email"], "\(query.stdout)")
        #expect(rows.map { $0["code"] } == ["NOT_FOUND", "INVALID"])
        #expect(rows.map { $0["key_id"] } == [.string(ServiceProcess.Keys.service), .string(ServiceProcess.Keys.service)])
        #expect(rows.last?["details"] == "email: INVALID_FORMAT", "\(query.stdout)")
        let status = try ChildProcess.strata(["status", "--format", "json", "--data", data.path])
        #expect(answer["position"] == (try JSONParser.parse(Array(status.stdout.utf8)))["head"], "\(status.stdout)")
        #expect(service.stop() == 0)
    }

    /// A retry of a command the service decided is answered from the journal even while the
    /// store cannot be written (here another connection holds its write lock): its answer
    /// never depended on that, and "not recorded" would have its client do it again anew.
    @Test func aRetryIsAnsweredFromTheJournalWhileTheStoreCannotBeWritten() throws {
        let data = try ChildProcess.temporaryDirectory("strata-send-retry-locked")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        let send = ["send", "-", "--data", data.path, "--key", ServiceProcess.Keys.service]
            + ["--commands", service.commands, "--timeout", "20"]
        let first = try ChildProcess.strata(send, stdin: registration(1) + "\n")
        try #require(first.exitCode == 0, "\(first.stdout)\(first.stderr)")

        let blocker = try SQLiteConnection(path: data.appendingPathComponent("events.db").path, mode: .readWrite)
        try blocker.execute("BEGIN IMMEDIATE")
        let retry = try ChildProcess.strata(send, stdin: registration(1) + "\n")
        let fresh = try ChildProcess.strata(send, stdin: registration(2) + "\n")
        try blocker.execute("ROLLBACK")
        blocker.close()

        #expect(retry.exitCode == 0, "\(retry.stdout)\(retry.stderr)")
        let answer = try JSONParser.parse(Array(retry.stdout.utf8))
        let original = try JSONParser.parse(Array(first.stdout.utf8))
        #expect(answer["duplicate"] == true && answer["events"] == original["events"], "\(retry.stdout)")
        // A new command cannot be recorded meanwhile, and says so.
        #expect(try JSONParser.parse(Array(fresh.stdout.utf8))["error"]?["code"] == "INTERNAL", "\(fresh.stdout)")
        #expect(service.stop() == 0)
    }

    /// A stream this build cannot read (its event written by a newer version, as after a
    /// rollback of the binary) refuses the commands that read it, `INTERNAL` and logged, while
    /// the commands sent with them are recorded: before, each batch that held one of them
    /// failed whole. Nothing of the refused commands is journaled, so a resend is decided anew.
    @Test func aStreamThisBuildCannotReadRefusesOnlyTheCommandsThatReadIt() throws {
        let data = try ChildProcess.temporaryDirectory("strata-send-unreadable")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        do {
            let store = try SQLiteEventStore(path: data.appendingPathComponent("events.db").path)
            let newer = try NewEvent(
                stream: StreamName("loan-L9")!, type: "LoanRequested", schemaVersion: 99, data: ["loanId": "L9"])
            _ = try store.append(
                CommandWrite(
                    commandId: "from-a-newer-build", bodyDigest: HashChain.sha256([9]), actor: ServiceProcess.admin,
                    commandType: "RequestLoan", decision: .append([newer], expectations: [:])))
        }
        let service = try ServiceProcess(dataDirectory: data)
        let approve = #"{"id":"approve-l9","type":"ApproveLoan","actor":"\#(ServiceProcess.admin)","#
            + #""payload":{"loanId":"L9"}}"#
        // Pipelined: the refused command shares its batches with the others.
        var lines: [String] = []
        for n in 1...40 { lines += [approve, registration(n)] }
        let sent = try ChildProcess.strata(
            ["send", "-", "--data", data.path, "--key", ServiceProcess.Keys.service, "--commands", service.commands]
                + ["--timeout", "20"],
            stdin: lines.joined(separator: "\n") + "\n")
        #expect(sent.exitCode == 1, "\(sent.stderr)")
        let replies = try sent.stdout.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
        try #require(replies.count == lines.count, "\(sent.stdout)\(sent.stderr)")
        for (index, reply) in replies.enumerated() {
            if index % 2 == 0 {
                #expect(reply["error"]?["code"] == "INTERNAL" && reply["duplicate"] == nil, "\(reply)")
                let message = reply["error"]?["message"]?.stringValue ?? ""
                #expect(message.contains("stream loan-L9 cannot be read"), "\(message)")
            } else {
                #expect(reply["ok"] == true, "line \(index + 1): \(reply)")
            }
        }
        #expect(try service.store().journalEntry(commandId: "approve-l9") == nil)
        let logged = "command=approve-l9 type=ApproveLoan outcome=refused code=INTERNAL"
        #expect(service.log.contains(logged), "\(service.log)")
        #expect(service.stop() == 0)
    }

    /// Without --key, `send` and `forget` sign with the key file's first key with the commands
    /// scope, not merely its first key.
    @Test func withoutAKeyTheFirstKeyWithTheCommandsScopeSigns() throws {
        let data = try ChildProcess.temporaryDirectory("strata-send-default-key")
        defer { try? FileManager.default.removeItem(at: data) }
        let reader = try ChildProcess.strata(["keys", "new", "reader", "--scope", "history", "--data", data.path])
        try #require(reader.exitCode == 0, "\(reader.stderr)")
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        let options = ["--data", data.path, "--commands", service.commands, "--timeout", "10"]

        let sent = try ChildProcess.strata(["send", "-"] + options, stdin: registration(1) + "\n")
        #expect(sent.exitCode == 0, "\(sent.stdout)\(sent.stderr)")
        let forgotten = try ChildProcess.strata(
            ["forget", "--subject", "send-agent-1", "--reason", "request", "--actor", ServiceProcess.admin] + options)
        #expect(forgotten.exitCode == 0, "\(forgotten.stdout)\(forgotten.stderr)")
        #expect(service.stop() == 0)
    }
}
