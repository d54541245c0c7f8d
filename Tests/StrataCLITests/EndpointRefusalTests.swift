import Foundation
import StrataTesting
import Testing

/// An endpoint that no bind or connect could take is refused by serve, the projectors and up with
/// the rest of their settings (exit 2), and the data directory is left as it was: found at the
/// bind, serve had made a new store, its checkpoint key and its key store in a fresh one, a
/// projector its file, and up let serve do so (then stopped, exit 1). An IPv6 address was bound by
/// none, and connected to for ever.
@Suite struct EndpointRefusalTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let command: [String]
        let option: String
        let endpoint: String
        let refusal: String

        var testDescription: String { "\(command.joined(separator: " ")) \(option) \(endpoint)" }
    }

    static let cases = [
        Case(
            command: ["serve"], option: "commands", endpoint: "foo",
            refusal: "strata serve: the commands endpoint foo cannot be bound: foo names no transport; an endpoint is "
                + "TRANSPORT://ADDRESS, as tcp://HOST:PORT or ipc://PATH"),
        Case(
            command: ["serve"], option: "events", endpoint: "tcp://127.0.0.1:99999",
            refusal: "strata serve: the events endpoint tcp://127.0.0.1:99999 cannot be bound: port 99999 is beyond "
                + "65535"),
        Case(
            command: ["serve"], option: "history", endpoint: "tcp://localhost:7703",
            refusal: "strata serve: the history endpoint tcp://localhost:7703 cannot be bound: localhost is neither *, "
                + "an IPv4 address nor one of this machine's network interfaces"),
        Case(
            command: ["serve"], option: "commands", endpoint: "tcp://[::1]:7701",
            refusal: "strata serve: the commands endpoint tcp://[::1]:7701 cannot be bound: [::1] is an IPv6 address"),
        Case(
            command: ["project", "readmodels"], option: "events", endpoint: "foo",
            refusal: "strata project: the events endpoint foo cannot be connected to: foo names no transport"),
        Case(
            command: ["project", "readmodels"], option: "history", endpoint: "tcp://127.0.0.1:0",
            refusal: "strata project: the history endpoint tcp://127.0.0.1:0 cannot be connected to: port 0 lets a "
                + "bind choose one; a connect needs the port, 1 to 65535"),
        Case(
            command: ["project", "audit"], option: "history", endpoint: "tcp://[::1]:7703",
            refusal: "strata project: the history endpoint tcp://[::1]:7703 cannot be connected to: [::1] is an IPv6 "
                + "address"),
        Case(
            command: ["project", "audit"], option: "events", endpoint: "udp://127.0.0.1:7702",
            refusal: "strata project: the events endpoint udp://127.0.0.1:7702 cannot be connected to: udp:// is not a "
                + "transport the processes use: tcp:// or ipc://"),
        Case(
            command: ["project", "readmodels"], option: "events", endpoint: "inproc://events",
            refusal: "strata project: the events endpoint inproc://events is one no other process can reach"),
        Case(
            command: ["up"], option: "commands", endpoint: "foo",
            refusal: "strata up: the commands endpoint foo cannot be bound: foo names no transport"),
        Case(
            command: ["up"], option: "history", endpoint: "tcp://localhost:7703",
            refusal: "strata up: the history endpoint tcp://localhost:7703 cannot be bound: localhost is neither *"),
    ]

    /// In a data directory that holds only its key file, as `keys new` leaves it, and in one not
    /// made yet (the key file beside it): each is left exactly as it was.
    @Test(arguments: cases)
    func anEndpointNoneCouldTakeIsRefusedBeforeAnythingIsMade(case refused: Case) throws {
        try withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("data").path
            let keys = directory.appendingPathComponent("keys.json").path
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data], expecting: 0)
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--keys", keys], expecting: 0)
            let unmade = directory.appendingPathComponent("unmade").path
            let directories: [(data: String, keys: String?)] = [(data, nil), (unmade, keys)]
            for (data, keys) in directories {
                var endpoints = [
                    "commands": "tcp://127.0.0.1:\(try freeLoopbackPort())",
                    "events": "tcp://127.0.0.1:\(try freeLoopbackPort())",
                    "history": "tcp://127.0.0.1:\(try freeLoopbackPort())",
                ]
                endpoints[refused.option] = refused.endpoint
                if refused.command[0] == "project" { endpoints["commands"] = nil }
                let before = try contents(of: directory)
                let arguments = refused.command + ["--data", data] + (keys.map { ["--keys", $0] } ?? [])
                    + endpoints.sorted { $0.key < $1.key }.flatMap { ["--\($0.key)", $0.value] }
                let process = try StrataProcess(arguments)
                let exit = process.waitForExit(timeout: 30)
                if exit == nil { _ = process.stop() }
                #expect(exit == 2, "\(arguments): \(process.log)")
                #expect(process.log.hasPrefix(refused.refusal), "\(arguments): \(process.log)")
                #expect(try contents(of: directory) == before, "\(arguments): \(process.log)")
            }
        }
    }

    /// Set in the environment or a config file, an endpoint is refused the same way.
    @Test func anEndpointFromTheEnvironmentOrAConfigFileIsRefusedAlike() throws {
        try withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("data").path
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data], expecting: 0)
            let config = directory.appendingPathComponent("strata.json")
            try Data(#"{"events": "tcp://127.0.0.1:77o2"}"#.utf8).write(to: config)
            let before = try contents(of: directory)
            for (arguments, environment, refusal) in [
                (["serve"], ["STRATA_COMMANDS": "tcp:/127.0.0.1:7701"],
                 "strata serve: the commands endpoint tcp:/127.0.0.1:7701 cannot be bound: tcp:/127.0.0.1:7701 "
                    + "names no transport"),
                (["project", "readmodels", "--config", config.path], [:],
                 "strata project: the events endpoint tcp://127.0.0.1:77o2 cannot be connected to: port 77o2 is not a "
                    + "number"),
            ] {
                let process = try StrataProcess(arguments + ["--data", data], environment: environment)
                let exit = process.waitForExit(timeout: 30)
                if exit == nil { _ = process.stop() }
                #expect(exit == 2, "\(arguments): \(process.log)")
                #expect(process.log.hasPrefix(refusal), "\(arguments): \(process.log)")
                #expect(try contents(of: directory) == before, "\(arguments): \(process.log)")
            }
        }
    }

    /// Every file and directory under `directory`, by path, with its type, size, mode and time of
    /// last change.
    private func contents(of directory: URL) throws -> [String: String] {
        var found: [String: String] = [:]
        let manager = FileManager.default
        guard let paths = manager.enumerator(atPath: directory.path) else { return found }
        for case let path as String in paths {
            let attributes = try manager.attributesOfItem(atPath: directory.appendingPathComponent(path).path)
            found[path] = [FileAttributeKey.type, .size, .posixPermissions, .modificationDate]
                .map { "\(attributes[$0] ?? "-")" }.joined(separator: " ")
        }
        return found
    }
}
