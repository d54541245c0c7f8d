import EventStore
import Foundation
import StrataCore

/// The checkpoint key's two files: the key pair (`DATA/checkpoint.key` unless
/// `--checkpoint-key` or STRATA_CHECKPOINT_KEY says otherwise; mode 0600) and the public key
/// alone (`DATA/checkpoint.pub`, mode 0644: 64 hex characters and a newline), which is what
/// auditors copy and `strata verify` trusts by default.
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
                    + "pair, so neither is written (to trust a new key on purpose, remove \(publicKeyPath) first)")
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

    /// Writes `checkpoint.pub` for `key` when it is missing; refuses one that names another
    /// key, since that is the key auditors were told to trust.
    static func ensurePublicKeyFile(_ path: String, for key: CheckpointKey, keyPath: String) throws {
        guard let bytes = FileManager.default.contents(atPath: path) else {
            try AtomicFile.write(path, contents: Array(key.publicKeyLine.utf8), mode: 0o644, creatingDirectory: true)
            return
        }
        guard CheckpointKey.publicKey(fromText: String(decoding: bytes, as: UTF8.self)) == key.publicKey else {
            throw CommandFailure.environment(
                "\(path) does not hold the public key of \(keyPath) (\(key.publicKeyHex)); if the key was replaced "
                    + "on purpose, remove \(path) and start again")
        }
    }

    /// A public key given as 64 hex characters, or as a file holding them.
    static func trustedKey(_ argument: String) throws -> [UInt8] {
        if let key = CheckpointKey.publicKey(fromText: argument) { return key }
        guard FileManager.default.fileExists(atPath: argument) else {
            throw UsageError("--public-key must be 64 hex characters or a file holding them: '\(argument)'")
        }
        return try readPublicKey(argument)
    }

    /// Reads a public key file (`checkpoint.pub`).
    static func readPublicKey(_ path: String) throws -> [UInt8] {
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw CommandFailure.environment("cannot read the public key file \(path)")
        }
        guard let key = CheckpointKey.publicKey(fromText: String(decoding: bytes, as: UTF8.self)) else {
            throw CommandFailure.environment("\(path) does not hold a public key (64 hex characters)")
        }
        return key
    }
}
