import Foundation
import StrataTesting
import Testing

/// `strata serve` on an endpoint no client can reach: inproc:// lives within the process that
/// binds it, and serve said it was ready on it.
@Suite struct ServeEndpointTests {
    @Test(arguments: ["--commands", "--events", "--history"])
    func anInprocEndpointIsRefusedBeforeAnythingIsMade(option: String) throws {
        try withTemporaryDirectory { directory in
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", directory.path], expecting: 0)
            var endpoints = [
                "--commands": "tcp://127.0.0.1:\(try freeLoopbackPort())",
                "--events": "tcp://127.0.0.1:\(try freeLoopbackPort())",
                "--history": "tcp://127.0.0.1:\(try freeLoopbackPort())",
            ]
            endpoints[option] = "inproc://strata"
            let serve = try StrataProcess(
                ["serve", "--data", directory.path] + endpoints.flatMap { [$0.key, $0.value] })
            let exit = serve.waitForExit(timeout: 30)
            #expect(exit == 2, "\(serve.log)")
            #expect(serve.log.contains("inproc://strata is one no other process can reach"), "\(serve.log)")
            #expect(!serve.log.contains(" ready "), "\(serve.log)")
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("events.db").path))
        }
    }
}

/// `strata serve` on an ipc path that already holds something: libzmq's bind deletes whatever is
/// there, so `--commands ipc://DATA/events.db` deleted the event store, and serve said it was
/// ready; and a second serve given a running one's path took its clients over.
@Suite struct ServeIPCEndpointTests {
    @Test(arguments: ["--commands", "--events", "--history"])
    func anIPCEndpointOnTheEventStoreIsRefusedAndTheStoreKept(option: String) throws {
        try withTemporaryDirectory { directory in
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", directory.path], expecting: 0)
            try bootstrapAdmin(data: directory.path)
            let store = directory.appendingPathComponent("events.db").path
            var endpoints = [
                "--commands": "ipc://\(directory.path)/commands",
                "--events": "ipc://\(directory.path)/events",
                "--history": "ipc://\(directory.path)/history",
            ]
            endpoints[option] = "ipc://\(store)"
            let serve = try StrataProcess(
                ["serve", "--data", directory.path] + endpoints.flatMap { [$0.key, $0.value] })
            #expect(serve.waitForExit(timeout: 30) == 2, "\(serve.log)")
            #expect(serve.log.contains("\(store) is a file, not a socket: a bind would delete it"), "\(serve.log)")
            #expect(!serve.log.contains(" ready "), "\(serve.log)")
            let type = try FileManager.default.attributesOfItem(atPath: store)[.type] as? FileAttributeType
            #expect(type == .typeRegular)
            let status = try strata(["status", "--data", directory.path, "--format", "json"], expecting: 0)
            #expect(status.stdout.contains("\"head\":1,"), "\(status.stdout)")
            try strata(["verify", "--data", directory.path], expecting: 0)
        }
    }

    @Test func aSecondServeOnARunningServesIPCPathIsRefusedAndTheFirstKeepsIt() throws {
        try withTemporaryDirectory { directory in
            let first = directory.appendingPathComponent("first").path
            let second = directory.appendingPathComponent("second").path
            for data in [first, second] {
                try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data], expecting: 0)
                try bootstrapAdmin(data: data)
            }
            let commands = "ipc://\(directory.path)/commands"
            func serve(_ data: String) throws -> StrataProcess {
                try StrataProcess([
                    "serve", "--data", data, "--commands", commands,
                    "--events", "ipc://\(data)/events", "--history", "ipc://\(data)/history",
                ])
            }
            let running = try serve(first)
            defer { _ = running.stop() }
            _ = try running.waitForLine(containing: " ready ")

            let late = try serve(second)
            #expect(late.waitForExit(timeout: 30) == 2, "\(late.log)")
            #expect(late.log.contains("another process is listening on \(directory.path)/commands"), "\(late.log)")

            // The first serve still answers on its path: this registration is appended to its store.
            let line = #"{"id":"c-1","type":"RegisterUser","actor":"agent-1","payload":"#
                + #"{"userId":"agent-1","username":"agent1","email":"agent1@example.com","role":"AGENT"}}"#
            let file = directory.appendingPathComponent("commands.jsonl")
            try Data((line + "\n").utf8).write(to: file)
            let sent = try strata(
                ["send", file.path, "--data", first, "--key", "svc", "--commands", commands, "--timeout", "20"],
                expecting: 0)
            #expect(sent.stdout.contains(#""ok":true"#), "\(sent.stdout)")
        }
    }
}
