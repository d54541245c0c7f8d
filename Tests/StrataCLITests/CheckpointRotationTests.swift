import EventStore
import Foundation
import StrataTesting
import Testing

/// A checkpoint key lost, and replaced with `strata keys checkpoint --rotate`: the store stays one
/// that `verify` passes and `backup` copies. Before, the only way on was to remove checkpoint.pub
/// and make a new key, after which every earlier checkpoint was UNTRUSTED_KEY for good, and
/// `backup`, which verifies first, refused the store.
@Suite struct CheckpointRotationTests {
    /// Runs serve until it is ready, lets `during` act, and stops it (a graceful stop signs the head).
    private func serve(_ data: String, during: (String) throws -> Void = { _ in }) throws {
        let commands = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        let serve = try StrataProcess([
            "serve", "--data", data, "--commands", commands,
            "--events", "tcp://127.0.0.1:\(try freeLoopbackPort())", "--history", "tcp://127.0.0.1:\(try freeLoopbackPort())",
        ])
        _ = try serve.waitForLine(containing: " ready ")
        try during(commands)
        #expect(serve.stop() == 0, "\(serve.log)")
    }

    @Test func aLostKeyIsReplacedAfterTheOneThatSignedBefore() throws {
        try withTemporaryDirectory { directory in
            let data = directory.path
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data], expecting: 0)
            try bootstrapAdmin(data: data)
            try serve(data)
            let keyPath = data + "/checkpoint.key"
            let publicPath = data + "/checkpoint.pub"
            let old = try String(contentsOfFile: publicPath, encoding: .utf8).trimmingCharacters(in: .newlines)

            try FileManager.default.removeItem(atPath: keyPath)  // lost
            let refused = try StrataProcess(["serve", "--data", data])
            #expect(refused.waitForExit() == 2)
            #expect(refused.log.contains("make a new pair after it with `strata keys checkpoint --rotate`"), "\(refused.log)")

            let rotated = try strata(["keys", "checkpoint", "--rotate", "--data", data], expecting: 0)
            let new = rotated.stdout.trimmingCharacters(in: .newlines)
            #expect(try String(contentsOfFile: publicPath, encoding: .utf8) == old + "\n" + new + "\n")
            #expect(try permissions(keyPath) == 0o600)
            try serve(data) { commands in
                let line = #"{"id":"c-1","type":"RegisterUser","actor":"agent-1","payload":"#
                    + #"{"userId":"agent-1","username":"agent1","email":"agent1@example.com","role":"AGENT"}}"#
                let file = directory.appendingPathComponent("commands.jsonl")
                try Data((line + "\n").utf8).write(to: file)
                try strata(["send", file.path, "--data", data, "--key", "svc", "--commands", commands], expecting: 0)
            }

            let verified = try strata(["verify", "--data", data, "--format", "json"], expecting: 0)
            #expect(verified.stdout.contains(#""checkpointsVerified":2,"#), "\(verified.stdout)")
            #expect(verified.stdout.contains(#""publicKeys":["\#(old)","\#(new)"]"#), "\(verified.stdout)")
            try strata(["backup", "--data", data, "--output", directory.path + "/backup"], expecting: 0)
            // An auditor's copy of the old key alone trusts what it signed, and nothing after.
            let oldAlone = try strata(["verify", "--data", data, "--public-key", old], expecting: 1)
            #expect(oldAlone.stdout.hasPrefix("BROKEN at position 2: UNTRUSTED_KEY"), "\(oldAlone.stdout)")
            let inForce = try CheckpointKey(json: try #require(FileManager.default.contents(atPath: keyPath)))
            #expect(inForce.publicKeyHex == new)
        }
    }

    /// A key that checkpoint.pub lists before the one in force was replaced: serve refuses it.
    @Test func serveRefusesAKeyThatWasReplaced() throws {
        try withTemporaryDirectory { directory in
            let data = directory.path
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data], expecting: 0)
            try bootstrapAdmin(data: data)
            try serve(data)
            let keyPath = data + "/checkpoint.key"
            let kept = try #require(FileManager.default.contents(atPath: keyPath))
            let new = try strata(["keys", "checkpoint", "--rotate", "--data", data], expecting: 0).stdout
            try writePrivate(Array(kept), to: keyPath)  // the old key put back
            let refused = try StrataProcess(["serve", "--data", data])
            #expect(refused.waitForExit() == 2)
            #expect(
                refused.log.contains("says was replaced by \(new.trimmingCharacters(in: .newlines))"), "\(refused.log)")
        }
    }

    /// With no checkpoint.pub there is no record of which keys signed: --rotate refuses.
    @Test func rotatingWithoutThePublicKeyFileIsRefused() throws {
        try withTemporaryDirectory { directory in
            let refused = try strata(["keys", "checkpoint", "--rotate", "--data", directory.path], expecting: 1)
            #expect(refused.stderr.contains("no \(directory.path)/checkpoint.pub"), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.path + "/checkpoint.key"))
        }
    }
}
