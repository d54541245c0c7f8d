import Foundation
import StrataCore
import StrataTesting
import Testing

/// `strata keys new … --curve` and what the other commands make of a key file with CURVE keys.
@Suite("strata keys new --curve")
struct KeysCurveTests {
    @Test func curvePrintsThePublicKeyAndAddsTheServicePair() throws {
        try withTemporaryDirectory { dir in
            let result = try strata(
                ["keys", "new", "svc", "--scope", "commands,history", "--curve", "--data", dir.path], expecting: 0)
            let path = dir.path + "/keys.json"
            #expect(try permissions(path) == 0o600)
            let file = try readKeyFile(path)
            let key = try #require(file.key("svc"))
            let pair = try #require(key.curvePair, "the key has both halves")
            let server = try #require(file.curveServerPair, "the service's pair was added")
            #expect(result.stdout == "svc\n\(pair.publicKey.z85)\n")
            #expect(
                result.stderr
                    == "created the service's CURVE key pair in \(path); its public key: \(server.publicKey.z85)\n")
            #expect(pair.publicKey != server.publicKey)
            #expect(try file.curveClientKeys(for: key) == CurveClientKeys(serverKey: server.publicKey, client: pair))
        }
    }

    /// The first --curve turns CURVE on for the whole bus: the keys made before it have no pair
    /// and could no longer connect, which is said, naming them.
    @Test func theFirstCurveKeyNamesTheKeysLeftWithoutAPair() throws {
        try withTemporaryDirectory { dir in
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", dir.path], expecting: 0)
            try strata(["keys", "new", "reader", "--scope", "history", "--data", dir.path], expecting: 0)
            let result = try strata(
                ["keys", "new", "remote", "--scope", "history", "--curve", "--data", dir.path], expecting: 0)
            #expect(result.stderr.contains("warning: once `strata serve` restarts it runs CURVE"), "\(result.stderr)")
            #expect(result.stderr.contains("can no longer connect: svc, reader;"), "\(result.stderr)")
            let later = try strata(["keys", "new", "later", "--scope", "history", "--data", dir.path], expecting: 0)
            #expect(later.stderr.isEmpty, "said once, when CURVE is turned on")
        }
    }

    /// Once the file has the service's pair, every key gets a client pair, --curve or not,
    /// and the service's pair stays as it was.
    @Test func laterKeysGetAPairAndTheServicePairStays() throws {
        try withTemporaryDirectory { dir in
            let path = dir.path + "/keys.json"
            try strata(["keys", "new", "first", "--scope", "commands", "--curve", "--data", dir.path], expecting: 0)
            let before = try readKeyFile(path)
            let result = try strata(["keys", "new", "reader", "--scope", "history", "--data", dir.path], expecting: 0)
            let after = try readKeyFile(path)
            let reader = try #require(after.key("reader")?.curvePair)
            #expect(result.stdout == "reader\n\(reader.publicKey.z85)\n")
            #expect(result.stderr.isEmpty)
            #expect(after.curveServerPair == before.curveServerPair)
            #expect(after.key("first") == before.key("first"))
            #expect(reader.publicKey != after.key("first")?.curvePublic)
            #expect(try permissions(path) == 0o600)
        }
    }

    @Test func withoutCurveTheFileStaysPlain() throws {
        try withTemporaryDirectory { dir in
            let result = try strata(["keys", "new", "svc", "--scope", "history", "--data", dir.path], expecting: 0)
            #expect(result.stdout == "svc\n")
            let text = try String(contentsOfFile: dir.path + "/keys.json", encoding: .utf8)
            #expect(!text.contains("curve"))
        }
    }

    @Test func serveAndUpRefuseAClientsCopyBeforeCreatingAnything() throws {
        try withTemporaryDirectory { dir in
            try strata(
                ["keys", "new", "svc", "--scope", "commands,history", "--curve", "--data", dir.path], expecting: 0)
            let full = try readKeyFile(dir.path + "/keys.json")
            var copy = KeyFile()
            try copy.setCurveServer(publicKey: try #require(full.curveServerPublic), secretKey: nil)
            try copy.add(try #require(full.key("svc")))
            let copyPath = dir.path + "/client.json"
            try writePrivate(copy.json, to: copyPath)
            let data = dir.path + "/data"
            for command in ["serve", "up"] {
                let result = try strata([command, "--data", data, "--keys", copyPath], expecting: 2)
                #expect(
                    result.stderr
                        == "strata \(command): \(copyPath): the key file holds the CURVE server's public key without "
                        + "its secret (a client's copy); the service needs its own copy, with \"curveServer\".\"secret\"\n")
            }
            #expect(!FileManager.default.fileExists(atPath: data))
        }
    }

    /// A key without a pair cannot reach a CURVE service: the clients say so at once
    /// instead of waiting for replies that will never come.
    @Test func clientsRefuseAKeyWithoutAPair() throws {
        try withTemporaryDirectory { dir in
            let path = dir.path + "/keys.json"
            let server = try #require(CurveKeyPair.generate())
            var file = KeyFile()
            try file.setCurveServer(publicKey: server.publicKey, secretKey: server.secretKey)
            try file.add(KeyFile.Key(id: "old", secret: Array(repeating: 7, count: 32), scopes: [.commands, .history]))
            try writePrivate(file.json, to: path)
            let data = ["--data", dir.path]

            let send = try strata(["send", "--key", "old"] + data, expecting: 2)
            #expect(send.stderr.contains("key old has no CURVE key pair"), "\(send.stderr)")
            #expect(send.stderr.contains("`strata keys new ID --scope … --curve`"), "\(send.stderr)")
            let project = try strata(["project", "readmodels", "--key", "old"] + data, expecting: 2)
            #expect(project.stderr.contains("key old has no CURVE key pair"), "\(project.stderr)")
            for command in [["project", "readmodels"], ["up"], ["demo"]] {
                let scope = command == ["demo"] ? "commands" : "history"
                let result = try strata(command + data, expecting: 2)
                #expect(
                    result.stderr.contains(
                        "no key with the \(scope) scope and a CURVE key pair in \(path); create one with "
                            + "`strata keys new ID --scope \(scope) --curve`"), "\(result.stderr)")
            }
        }
    }
}
