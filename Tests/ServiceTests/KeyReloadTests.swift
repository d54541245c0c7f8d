import Bus
import CommandService
import Foundation
import StrataCore
import StrataTesting
import Testing

/// The key file followed while `serve` runs (docs/cli.md, `strata keys revoke`): a key added
/// is admitted and a key revoked refused, on both endpoints, within about a second and on the
/// connections already open; a file that cannot be put in force leaves the keys as they were.
@Suite struct KeyReloadTests {
    @Test func keysAddedAndRevokedTakeEffectWhileTheServiceRuns() throws {
        let data = try ChildProcess.temporaryDirectory("strata-key-reload")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        defer { service.stop() }
        let context = try ZMQContext()
        let keysPath = data.appendingPathComponent("keys.json").path

        // A key made after the start is admitted, on both endpoints.
        let made = try ChildProcess.strata(
            ["keys", "new", "late", "--scope", "commands,history", "--data", data.path])
        #expect(made.exitCode == 0, "\(made.stderr)")
        let late = try Client(service, context, key: "late")
        defer { late.close() }
        let admitted = try late.waitFor(seconds: 5) { $0["ok"] == .bool(true) }
        #expect(admitted.reply["ok"] == .bool(true), "\(admitted.reply)\n\(service.log)")
        #expect(try late.history()["events"] != nil)
        print("key reload: a new key admitted after \(admitted.seconds) s")

        // Revoked, it is refused on the same connections; the service's own key goes on.
        let revoked = try ChildProcess.strata(["keys", "revoke", "late", "--data", data.path])
        #expect(revoked.exitCode == 0 && revoked.stdout == "revoked late\n", "\(revoked.stderr)")
        let refused = try late.waitFor(seconds: 5) { $0["error"]?["code"] == "UNAUTHENTICATED" }
        #expect(refused.reply["error"]?["code"] == "UNAUTHENTICATED", "\(refused.reply)\n\(service.log)")
        #expect(try late.history()["error"]?["code"] == "UNAUTHENTICATED")
        print("key reload: a revoked key refused after \(refused.seconds) s")
        let own = try Client(service, context, key: ServiceProcess.Keys.service)
        defer { own.close() }
        #expect(try own.command()["ok"] == .bool(true))
        // The reload is logged just after it takes effect: on a busy machine, after the refusal.
        let logged = Date().addingTimeInterval(5)
        while !service.log.contains("; removed late"), Date() < logged { usleep(50_000) }
        #expect(service.log.contains("read the key file \(keysPath) again: "), "\(service.log)")
        #expect(service.log.contains("; removed late"), "\(service.log)")
        let again = try ChildProcess.strata(["keys", "revoke", "late", "--data", data.path])
        #expect(again.exitCode == 1 && again.stderr.contains("no key named late in "), "\(again.stderr)")

        // A file that is not sound is not put in force: the keys read before stay, and the log
        // says why; once the file is sound again, it is read.
        let sound = try Data(contentsOf: URL(fileURLWithPath: keysPath))
        try replace(keysPath, with: Data(#"{"keys":[{"id":"svc","secret":"00"}]}"#.utf8))
        let deadline = Date().addingTimeInterval(5)
        while !service.log.contains("changed and was not read"), Date() < deadline { usleep(50_000) }
        #expect(
            service.log.contains("the key file \(keysPath) changed and was not read: "),
            "\(service.log)")
        #expect(try own.command()["ok"] == .bool(true), "the keys read before stay in force")
        try replace(keysPath, with: sound)
        let readAgain = Date().addingTimeInterval(5)
        let readings = { service.log.components(separatedBy: "read the key file \(keysPath) again").count - 1 }
        while readings() < 3, Date() < readAgain {
            usleep(50_000)
        }
        let count = try KeyFile(json: Array(sound)).keys.count
        #expect(service.log.contains("again: \(count) keys; no key added, removed or changed"), "\(service.log)")
    }

    /// Writes `contents` over `path` whole (a temporary file renamed over it), mode 0600.
    private func replace(_ path: String, with contents: Data) throws {
        let temporary = path + ".edit"
        let attributes: [FileAttributeKey: Any] = [.posixPermissions: 0o600]
        #expect(FileManager.default.createFile(atPath: temporary, contents: contents, attributes: attributes))
        #expect(rename(temporary, path) == 0)
    }
}

/// One key's connections to both endpoints, kept open across the key file's changes.
private final class Client {
    let commands: SignedClient
    let catchUp: SignedClient
    private var sent = 0
    private let key: String

    init(_ service: ServiceProcess, _ context: ZMQContext, key: String) throws {
        self.key = key
        commands = try service.commandClient(context, key: key)
        catchUp = try service.historyClient(context, key: key)
    }

    func close() {
        commands.close()
        catchUp.close()
    }

    /// A new agent's registration signed with this key: its reply.
    func command() throws -> JSONValue {
        sent += 1
        let agent = "\(key)-agent-\(sent)"
        let body = CommandBody(
            id: "\(key)-register-\(sent)", type: "RegisterUser", actor: agent,
            payload: [
                "userId": .string(agent), "username": .string(agent), "email": .string("\(agent)@example.com"),
                "role": "AGENT",
            ])
        try commands.send(body.json)
        return try JSONParser.parse(try #require(try commands.receive(timeoutMilliseconds: 10_000)))
    }

    func history() throws -> JSONValue {
        try catchUp.send(Array(#"{"after":0,"limit":1}"#.utf8))
        return try JSONParser.parse(try #require(try catchUp.receive(timeoutMilliseconds: 10_000)))
    }

    /// Sends commands every 50 ms until a reply satisfies `done` or `seconds` pass: the last
    /// reply, and how long it took.
    func waitFor(seconds: Double, _ done: (JSONValue) -> Bool) throws -> (reply: JSONValue, seconds: Double) {
        let started = Date()
        while true {
            let reply = try command()
            let elapsed = Date().timeIntervalSince(started)
            if done(reply) || elapsed > seconds { return (reply, (elapsed * 100).rounded() / 100) }
            usleep(50_000)
        }
    }
}
