import EventStore
import Foundation
import StrataCore

/// The checkpoint key's two files: the key pair (`DATA/checkpoint.key` unless
/// `--checkpoint-key` or STRATA_CHECKPOINT_KEY says otherwise; mode 0600) and the public key
/// alone (`DATA/checkpoint.pub`, mode 0644: 64 hex characters and a newline, a line a key once
/// one was replaced), which is what auditors copy and `strata verify` trusts by default.
enum CheckpointKeyFile {
    static let option = OptionSpec(
        "checkpoint-key", value: "FILE",
        help: "Checkpoint signing key (env STRATA_CHECKPOINT_KEY; default DATA/checkpoint.key).")

    static func keyPath(_ arguments: ParsedArguments, _ environment: [String: String], _ configuration: Configuration)
        -> String
    {
        if let path = arguments.value("checkpoint-key") { return path }
        if let path = environment["STRATA_CHECKPOINT_KEY"], !path.isEmpty { return path }
        return configuration.dataDirectory + "/checkpoint.key"
    }

    static func publicKeyPath(_ configuration: Configuration) -> String {
        configuration.dataDirectory + "/checkpoint.pub"
    }

    /// Refuses (exit 2) a key path that is another of the system's files by any name. The pair
    /// was written wherever the path led: to `DATA/checkpoint.pub`, the secret key went into the
    /// file auditors are given, and the public key then found its name taken; to the key file
    /// or a projection not made yet, the system's next start found JSON where it expected its own.
    static func requireApart(_ keyPath: String, _ configuration: Configuration) throws(CommandFailure) {
        try SystemFiles.requireApart(
            keyPath, writing: [keyPath], by: "the checkpoint key",
            from: configuration.systemFiles + [publicKeyPath(configuration), configuration.dataDirectory],
            dataDirectory: configuration.dataDirectory)
    }

    /// Reads the key pair, refusing a file others may read (it holds the secret key that
    /// makes checkpoints worth anything) or one that is malformed; one that cannot be read, with
    /// the system's reason (`Is a directory`).
    static func load(_ path: String) throws -> CheckpointKey {
        let bytes: [UInt8]
        switch FileContents.read(path) {
        case .success(let read): bytes = read
        case .failure(let error): throw CommandFailure.environment("cannot read the checkpoint key \(path): \(error)")
        }
        try PrivateFile.requireOwnerOnly(path, "the checkpoint key")
        do {
            return try CheckpointKey(json: bytes)
        } catch {
            throw CommandFailure.environment("the checkpoint key \(path) is malformed: \(error.message)")
        }
    }

    /// Makes a new key pair and writes both files. Each is linked into place only if no file
    /// has its name, so an existing key is never replaced (exit 1), nor the public key the data
    /// directory trusts: `verify` checks the store's checkpoints against it and `serve` refuses
    /// a key that is not its pair, wherever the key file lives. A new key elsewhere
    /// (`--checkpoint-key`) replacing it made every checkpoint signed so far UNTRUSTED_KEY.
    static func create(keyPath: String, publicKeyPath: String) throws -> CheckpointKey {
        if FileManager.default.fileExists(atPath: publicKeyPath) {
            let trusted = FileManager.default.contents(atPath: publicKeyPath).flatMap {
                CheckpointKey.publicKey(fromText: String(decoding: $0, as: UTF8.self))
            }
            throw CommandFailure.problem(
                "\(publicKeyPath) holds \(trusted.map { "the public key " + Hex.encode($0) } ?? "a public key"), "
                    + "which verify trusts for this store's checkpoints; a new key at \(keyPath) would not be its "
                    + "pair, so neither is written (to replace a key lost or retired, keeping the earlier ones trusted for "
                    + "what they signed: --rotate)")
        }
        let key: CheckpointKey
        do {
            key = try CheckpointKey.generate()
        } catch {
            throw CommandFailure.environment(error.message)
        }
        try AtomicFile.write(keyPath, contents: key.json, mode: 0o600, replacing: false, creatingDirectory: true)
        try AtomicFile.write(
            publicKeyPath, contents: Array(key.publicKeyLine.utf8), mode: 0o644, replacing: false,
            creatingDirectory: true)
        return key
    }

    /// Makes a new key pair in place of one lost or retired: the new public key goes after the
    /// trusted ones in `checkpoint.pub`, which must exist (it is the record of which keys signed
    /// this store), then the pair into the key file, replacing one that is there. The earlier
    /// keys stay trusted for the checkpoints they signed before the new one signs. The public
    /// file is written first, so a key that can sign is never one `verify` does not trust.
    static func rotate(keyPath: String, publicKeyPath: String) throws -> (CheckpointKey, TrustedCheckpointKeys) {
        guard FileManager.default.fileExists(atPath: publicKeyPath) else {
            throw CommandFailure.problem(
                "no \(publicKeyPath): it is the record of the keys that signed this store, which a new key "
                    + "goes after; without one, make the first key with `strata keys checkpoint` (no --rotate), or "
                    + "put the file back")
        }
        let trusted = try readTrustedKeys(publicKeyPath)
        let key: CheckpointKey
        do {
            key = try CheckpointKey.generate()
        } catch {
            throw CommandFailure.environment(error.message)
        }
        guard let rotated = trusted.replaced(by: key.publicKey) else {
            throw CommandFailure.environment("a new key came out as one already trusted; run the command again")
        }
        try AtomicFile.write(publicKeyPath, contents: Array(rotated.text.utf8), mode: 0o644, creatingDirectory: true)
        try AtomicFile.write(keyPath, contents: key.json, mode: 0o600, creatingDirectory: true)
        return (key, rotated)
    }

    /// Writes `checkpoint.pub` for `key` when it is missing; refuses one whose key in force (its
    /// last) is another, since that is the key auditors were told to trust, and a key replaced
    /// since (`--rotate`) may sign nothing more.
    static func ensurePublicKeyFile(_ path: String, for key: CheckpointKey, keyPath: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            try AtomicFile.write(path, contents: Array(key.publicKeyLine.utf8), mode: 0o644, creatingDirectory: true)
            return
        }
        let trusted = try readTrustedKeys(path)
        if trusted.current == key.publicKey { return }
        if trusted.rank(of: key.publicKey) != nil {
            throw CommandFailure.environment(
                "\(keyPath) holds the key \(key.publicKeyHex), which \(path) says was replaced by "
                    + "\(Hex.encode(trusted.current)): put that key's file in place")
        }
        throw CommandFailure.environment(
            "\(path) does not hold the public key of \(keyPath) (\(key.publicKeyHex)); if the key was replaced "
                + "on purpose, remove \(path) and start again")
    }

    /// Public keys given as 64 hex characters, or as a file holding them a line each, oldest first.
    static func trustedKeys(_ argument: String) throws -> TrustedCheckpointKeys {
        if let key = CheckpointKey.publicKey(fromText: argument) { return TrustedCheckpointKeys(key) }
        guard FileManager.default.fileExists(atPath: argument) else {
            throw UsageError("--public-key must be 64 hex characters or a file holding them: '\(argument)'")
        }
        return try readTrustedKeys(argument)
    }

    /// Reads a public key file (`checkpoint.pub`): a key a line, oldest first.
    static func readTrustedKeys(_ path: String) throws -> TrustedCheckpointKeys {
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw CommandFailure.environment("cannot read the public key file \(path)")
        }
        guard let keys = TrustedCheckpointKeys(text: String(decoding: bytes, as: UTF8.self)) else {
            throw CommandFailure.environment(
                "\(path) does not hold public keys (64 hex characters a line, none twice)")
        }
        return keys
    }
}
