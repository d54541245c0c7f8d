import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing

/// A key store gone from beside an event store whose personal data is sealed under its keys is
/// not made anew: `serve` and `admin bootstrap` made an empty one, and every subject's personal
/// data read `[erased]`, subjects known already got new keys, and a taken email could be taken
/// again. A store written before personal data was sealed still starts without one.
@Suite struct MissingKeyStoreTests {
    @Test func aKeyStoreGoneFromBesideSealedEventsIsNotMadeAnew() throws {
        try withTemporaryDirectory { directory in
            let data = directory.path
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data], expecting: 0)
            try bootstrapAdmin(data: data, id: "root")
            let keyStore = data + "/subject-keys.db"
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: keyStore + suffix) }

            let bootstrap = try strata(
                ["admin", "bootstrap", "--id", "root2", "--username", "root2", "--email", "root2@example.com"]
                    + ["--data", data], expecting: 1)
            #expect(
                bootstrap.stderr.contains("\(keyStore) is missing, but \(data)/events.db holds personal data sealed")
                    && bootstrap.stderr.contains("(the first at position 1)"), "\(bootstrap.stderr)")
            let serve = try Self.serve(data)
            let exit = serve.waitForExit(timeout: 30)
            if exit == nil { _ = serve.stop() }
            #expect(exit == 1, "serve makes no new key store beside sealed events: \(serve.log)")
            #expect(serve.log.contains("\(keyStore) is missing, but"), "\(serve.log)")
            #expect(serve.log.contains("install -m 600 /dev/null \(keyStore)"), "\(serve.log)")
            #expect(!FileManager.default.fileExists(atPath: keyStore), "nothing was made in its place")

            // An empty one put there on purpose is the operator's word to go on without the keys.
            #expect(
                FileManager.default.createFile(atPath: keyStore, contents: nil, attributes: [.posixPermissions: 0o600]))
            let again = try Self.serve(data)
            try again.waitForLine(containing: "serve: ready ")
            #expect(again.stop() == 0, "\(again.log)")
        }
    }

    /// Events whose personal data is clear (written before it was sealed) need no key store:
    /// `serve` starts, and makes one for what comes.
    @Test func aStoreOfClearPersonalDataStartsWithoutOne() throws {
        try withTemporaryDirectory { directory in
            let data = directory.path
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data], expecting: 0)
            // The writer's lock goes with the store, at the end of this scope.
            do {
                let store = try SQLiteEventStore(path: data + "/events.db")
                let payload: JSONValue = [
                    "userId": "root", "username": "root", "email": "root@example.com", "role": "ADMIN",
                    "status": "APPROVED",
                ]
                let event = try NewEvent(
                    stream: StreamName(category: "user", id: "root")!, type: "UserRegistered", schemaVersion: 1,
                    data: payload)
                let write = try CommandWrite(
                    commandId: "operator-bootstrap-root", bodyDigest: HashChain.sha256(Array("root".utf8)),
                    actor: "operator", commandType: "RegisterUser", decision: .append([event], expectations: [:]))
                _ = try store.append([write])
            }

            let serve = try Self.serve(data)
            try serve.waitForLine(containing: "serve: ready ")
            #expect(serve.stop() == 0, "\(serve.log)")
            #expect(FileManager.default.fileExists(atPath: data + "/subject-keys.db"))
        }
    }

    static func serve(_ data: String) throws -> StrataProcess {
        let ports = try (0..<3).map { _ in try freeLoopbackPort() }
        return try StrataProcess(
            ["serve", "--data", data] + zip(["--commands", "--events", "--history"], ports).flatMap {
                [$0, "tcp://127.0.0.1:\($1)"]
            })
    }
}
