import EventStore
import Foundation
import StrataCore

/// `strata keys checkpoint`: create the Ed25519 key pair the command service signs
/// checkpoints of the chain with, and print its public key.
enum KeysCheckpointCommand {
    static let spec = CommandSpec(
        ["keys", "checkpoint"], summary: "Create the checkpoint signing key pair and print its public key.",
        options: Configuration.options + [CheckpointKeyFile.option],
        discussion: """
            Writes the key pair to DATA/checkpoint.key (mode 0600; JSON with "publicKey" and
            "secretKey" in hex) and the public key alone to DATA/checkpoint.pub (mode 0644), which is
            what auditors keep and `strata verify` trusts by default, wherever the key file is.
            `strata serve` creates the pair itself on its first start; this command makes it
            beforehand, or a new one on purpose: remove DATA/checkpoint.pub first, since the public key
            the store's checkpoints were signed with is never replaced silently.

            Exit codes: 0 created, 1 the key file or DATA/checkpoint.pub exists already (both are left
            as they are), 2 usage or environment (a key path that is one of the system's files, such
            as DATA/checkpoint.pub itself).
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let keyPath = CheckpointKeyFile.keyPath(arguments, environment, configuration)
        try CheckpointKeyFile.requireApart(keyPath, configuration)
        guard !FileManager.default.fileExists(atPath: keyPath) else {
            throw CommandFailure.problem("\(keyPath) exists already; it is left as it is")
        }
        let key = try CheckpointKeyFile.create(
            keyPath: keyPath, publicKeyPath: CheckpointKeyFile.publicKeyPath(configuration))
        printLine(key.publicKeyHex)
        return 0
    }
}
