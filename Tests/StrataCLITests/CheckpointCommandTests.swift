import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing

@testable import StrataCLI

@Suite("strata keys checkpoint")
struct KeysCheckpointTests {
    @Test func createsThePairWithPrivateAndPublicModesAndPrintsThePublicKey() throws {
        try withTemporaryDirectory { dir in
            let data = dir.path + "/data"
            let result = try strata(["keys", "checkpoint", "--data", data], expecting: 0)
            let keyPath = data + "/checkpoint.key"
            let publicPath = data + "/checkpoint.pub"
            #expect(try permissions(keyPath) == 0o600)
            #expect(try permissions(publicPath) == 0o644)
            let key = try CheckpointKey(json: try #require(FileManager.default.contents(atPath: keyPath)))
            #expect(result.stdout == key.publicKeyHex + "\n")
            #expect(try String(contentsOfFile: publicPath, encoding: .utf8) == key.publicKeyHex + "\n")
            let text = try String(contentsOfFile: keyPath, encoding: .utf8)
            #expect(text.hasPrefix(#"{"publicKey":"\#(key.publicKeyHex)","secretKey":""#) && text.hasSuffix("\"}\n"))
        }
    }

    @Test func aSecondTimeIsRefusedAndTheKeyIsUntouched() throws {
        try withTemporaryDirectory { dir in
            try strata(["keys", "checkpoint", "--data", dir.path], expecting: 0)
            let before = FileManager.default.contents(atPath: dir.path + "/checkpoint.key")
            let again = try strata(["keys", "checkpoint", "--data", dir.path], expecting: 1)
            #expect(again.stderr.contains("\(dir.path)/checkpoint.key exists already"), "\(again.stderr)")
            #expect(again.stdout.isEmpty)
            #expect(FileManager.default.contents(atPath: dir.path + "/checkpoint.key") == before)
        }
    }

    @Test func theKeyFileCanLiveElsewhereWhileThePublicKeyStaysInTheDataDirectory() throws {
        try withTemporaryDirectory { dir in
            let keyPath = dir.path + "/secrets/signing.key"
            let flag = try strata(
                ["keys", "checkpoint", "--data", dir.path + "/data", "--checkpoint-key", keyPath], expecting: 0)
            #expect(try permissions(keyPath) == 0o600)
            #expect(try String(contentsOfFile: dir.path + "/data/checkpoint.pub", encoding: .utf8) == flag.stdout)
            // Another data directory: this one's checkpoint.pub is never replaced.
            let viaEnv = dir.path + "/env.key"
            let env = try strata(
                ["keys", "checkpoint", "--data", dir.path + "/other"], environment: ["STRATA_CHECKPOINT_KEY": viaEnv],
                expecting: 0)
            #expect(try permissions(viaEnv) == 0o600)
            #expect(try String(contentsOfFile: dir.path + "/other/checkpoint.pub", encoding: .utf8) == env.stdout)
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/data/checkpoint.key"))
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/other/checkpoint.key"))
        }
    }

    /// The pair went wherever the key path led: to `checkpoint.pub` (the secret key in the file
    /// auditors are given, then exit 1 for the public key finding its name taken), or to a file
    /// the system makes later. Refused before anything is written, by any spelling, also in a
    /// data directory not made yet; and `serve`, which makes the pair on its first start, alike.
    @Test func aKeyPathThatIsOneOfTheSystemsFilesIsRefusedAndNothingIsWritten() throws {
        try withTemporaryDirectory { dir in
            let data = dir.path + "/data"
            for path in [data + "/checkpoint.pub", data + "/../data/./checkpoint.pub", data + "/keys.json", data] {
                let refused = try strata(
                    ["keys", "checkpoint", "--data", data, "--checkpoint-key", path], expecting: 2)
                #expect(refused.stdout.isEmpty)
                #expect(refused.stderr.contains("which the checkpoint key must not replace"), "\(refused.stderr)")
                #expect(!FileManager.default.fileExists(atPath: data), "\(path)")
            }
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data], expecting: 0)
            let publicPath = data + "/checkpoint.pub"
            let serve = try strata(
                [
                    "serve", "--data", data, "--checkpoint-key", publicPath, "--commands", "tcp://127.0.0.1:*",
                    "--events", "tcp://127.0.0.1:*", "--history", "tcp://127.0.0.1:*",
                ], expecting: 2)
            #expect(
                serve.stderr == "strata serve: \(publicPath) is one of the system's files, which the checkpoint key "
                    + "must not replace\n")
            for path in [publicPath, data + "/readmodels.db"] {
                let refused = try strata(
                    ["keys", "checkpoint", "--data", data], environment: ["STRATA_CHECKPOINT_KEY": path],
                    expecting: 2)
                #expect(
                    refused.stderr == "strata keys checkpoint: \(path) is one of the system's files, which the "
                        + "checkpoint key must not replace\n")
                #expect(!FileManager.default.fileExists(atPath: path))
            }
            #expect(!FileManager.default.fileExists(atPath: data + "/events.db"))
        }
    }
}

@Suite("strata verify with signed checkpoints")
struct VerifyCheckpointTests {
    /// A store with the first admin, signed at position 1 with the key `keys checkpoint` made.
    func signedStore(_ dir: URL) throws -> (key: CheckpointKey, hash: String) {
        try bootstrapAdmin(data: dir.path)
        try strata(["keys", "checkpoint", "--data", dir.path], expecting: 0)
        let keyFile = try #require(FileManager.default.contents(atPath: dir.path + "/checkpoint.key"))
        let key = try CheckpointKey(json: keyFile)
        let store = try SQLiteEventStore(path: dir.path + "/events.db")
        let hash = try #require(try store.hash(at: 1))
        try store.appendCheckpoint(key.sign(position: 1, hash: hash, signedAt: "2026-11-20T10:00:00.000Z"))
        return (key, hash)
    }

    /// A new key made elsewhere would replace the public key the store's checkpoints were
    /// signed with, and verify would then find them UNTRUSTED_KEY: refused, naming both keys.
    @Test func aNewKeyElsewhereLeavesTheTrustedPublicKeyAsItIs() throws {
        try withTemporaryDirectory { dir in
            let (key, _) = try signedStore(dir)
            let publicPath = dir.path + "/checkpoint.pub"
            let trusted = try String(contentsOfFile: publicPath, encoding: .utf8)
            let other = dir.path + "/elsewhere/checkpoint.key"
            let refused = try strata(
                ["keys", "checkpoint", "--data", dir.path, "--checkpoint-key", other], expecting: 1)
            #expect(
                refused.stderr
                    == "strata keys checkpoint: \(publicPath) holds the public key \(key.publicKeyHex), which verify "
                    + "trusts for this store's checkpoints; a new key at \(other) would not be its pair, so neither "
                    + "is written (to replace a key lost or retired, keeping the earlier ones trusted for what they "
                    + "signed: --rotate)\n")
            #expect(refused.stdout.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: other))
            #expect(try String(contentsOfFile: publicPath, encoding: .utf8) == trusted)
            try strata(["verify", "--data", dir.path], expecting: 0)
        }
    }

    @Test func reportsTheCheckpointsAndTheKeyItTrusted() throws {
        try withTemporaryDirectory { dir in
            let (key, hash) = try signedStore(dir)
            let text = try strata(["verify", "--data", dir.path], expecting: 0)
            #expect(
                text.stdout == """
                    intact: 1 events verified; head 1, hash \(hash)
                    checkpoints: 1 verified; last signed position 1 (signed 2026-11-20T10:00:00.000Z); \
                    0 events after it unsigned
                    trusted key: \(key.publicKeyHex) (\(dir.path)/checkpoint.pub)

                    """)
            let json = try strata(["verify", "--format", "json", "--data", dir.path], expecting: 0)
            #expect(
                try jsonLine(json.stdout.trimmingCharacters(in: .newlines))
                    == [
                        "intact": true, "eventsVerified": 1, "lastGoodPosition": 1, "lastGoodHash": .string(hash),
                        "checkpointsVerified": 1, "lastSignedPosition": 1, "lastSignedAt": "2026-11-20T10:00:00.000Z",
                        "unsignedEvents": 0, "publicKey": .string(key.publicKeyHex),
                        "publicKeys": [.string(key.publicKeyHex)],
                    ])
        }
    }

    @Test func aKeyGivenOnTheCommandLineIsTheOneTrusted() throws {
        try withTemporaryDirectory { dir in
            let (key, _) = try signedStore(dir)
            let other = try CheckpointKey.generate()
            let untrusted = try strata(["verify", "--public-key", other.publicKeyHex, "--data", dir.path], expecting: 1)
            #expect(
                untrusted.stdout.hasPrefix(
                    "BROKEN at position 1: UNTRUSTED_KEY: signed by \(key.publicKeyHex), "
                        + "not by the trusted key \(other.publicKeyHex)\n"), "\(untrusted.stdout)")

            let file = dir.path + "/pinned.pub"
            try writeText(key.publicKeyHex.uppercased() + "\n", to: file)
            let pinned = try strata(["verify", "--public-key", file, "--data", dir.path], expecting: 0)
            #expect(pinned.stdout.contains("trusted key: \(key.publicKeyHex) (--public-key)"), "\(pinned.stdout)")
            // A copy that passed through Windows ends its line with CRLF, one Character in Swift.
            try writeText(key.publicKeyHex + "\r\n", to: file)
            let crlf = try strata(["verify", "--public-key", file, "--data", dir.path], expecting: 0)
            #expect(crlf.stdout.contains("trusted key: \(key.publicKeyHex) (--public-key)"), "\(crlf.stderr)")
            try writeText(key.publicKeyHex + "\r\n", to: dir.path + "/checkpoint.pub")
            try strata(["verify", "--data", dir.path], expecting: 0)

            try strata(["verify", "--public-key", "abc", "--data", dir.path], expecting: 2)
            try writeText("not a key\n", to: file)
            let malformed = try strata(["verify", "--public-key", file, "--data", dir.path], expecting: 2)
            #expect(malformed.stderr.contains("does not hold public keys"), "\(malformed.stderr)")
        }
    }

    /// An auditor's copy of the public key saved by a Windows editor starts with a byte order
    /// mark, which verify took for part of it: "does not hold a public key", exit 2. Read past,
    /// as in the key file, there, in DATA/checkpoint.pub and in the key pair's own file.
    @Test func aByteOrderMarkBeforeAKeyIsReadPast() throws {
        try withTemporaryDirectory { dir in
            let (key, _) = try signedStore(dir)
            let file = dir.path + "/pinned.pub"
            try writeText("\u{FEFF}" + key.publicKeyHex + "\r\n", to: file)
            let pinned = try strata(["verify", "--public-key", file, "--data", dir.path], expecting: 0)
            #expect(pinned.stdout.contains("trusted key: \(key.publicKeyHex) (--public-key)"), "\(pinned.stderr)")
            let publicPath = dir.path + "/checkpoint.pub"
            try writeText("\u{FEFF}" + key.publicKeyHex + "\n", to: publicPath)
            let trusted = try strata(["verify", "--data", dir.path], expecting: 0)
            #expect(trusted.stdout.contains("trusted key: \(key.publicKeyHex) (\(publicPath))"), "\(trusted.stderr)")
            let other = dir.path + "/elsewhere.key"
            let refused = try strata(
                ["keys", "checkpoint", "--data", dir.path, "--checkpoint-key", other], expecting: 1)
            #expect(refused.stderr.contains("holds the public key \(key.publicKeyHex),"), "\(refused.stderr)")

            let keyPath = dir.path + "/checkpoint.key"
            let pair = try #require(FileManager.default.contents(atPath: keyPath))
            try #require(
                FileManager.default.createFile(
                    atPath: keyPath, contents: Data(ByteOrderMark.utf8 + pair), attributes: [.posixPermissions: 0o600]))
            #expect(try CheckpointKeyFile.load(keyPath) == key)
        }
    }

    @Test func withoutAPublicKeyTheReportSaysTheKeyIsNotPinned() throws {
        try withTemporaryDirectory { dir in
            _ = try signedStore(dir)
            try FileManager.default.removeItem(atPath: dir.path + "/checkpoint.pub")
            let text = try strata(["verify", "--data", dir.path], expecting: 0)
            #expect(text.stdout.contains("key not pinned: each checkpoint was checked against the key it names"))
            let json = try strata(["verify", "--format", "json", "--data", dir.path], expecting: 0)
            #expect(try jsonLine(json.stdout.trimmingCharacters(in: .newlines))["publicKey"] == .null)
        }
    }

    @Test func expectChecksAHashKeptElsewhere() throws {
        try withTemporaryDirectory { dir in
            let (_, hash) = try signedStore(dir)
            let good = try strata(["verify", "--expect", "1:\(hash.uppercased())", "--data", dir.path], expecting: 0)
            #expect(good.stdout.hasSuffix("expected hash at position 1: matches\n"), "\(good.stdout)")
            let zeros = String(repeating: "0", count: 64)
            let wrong = try strata(["verify", "--expect", "1:\(zeros)", "--data", dir.path], expecting: 1)
            #expect(wrong.stdout.hasPrefix("BROKEN at position 1: CHECKPOINT_MISMATCH: "), "\(wrong.stdout)")
            let beyond = try strata(["verify", "--expect", "2:\(hash)", "--data", dir.path], expecting: 1)
            #expect(beyond.stdout.hasPrefix("BROKEN at position 2: CHECKPOINT_BEYOND_HEAD: "), "\(beyond.stdout)")
            for bad in ["1", "0:\(hash)", "x:\(hash)", "1:\(hash.dropLast())", "1:\(hash):2"] {
                let result = try strata(["verify", "--expect", bad, "--data", dir.path], expecting: 2)
                #expect(result.stderr.contains("--expect must be POSITION:HASH"), "\(bad): \(result.stderr)")
            }
        }
    }
}
