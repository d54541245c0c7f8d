import EventStore
import Foundation
import StrataCore

/// `strata keys checkpoint`: create the Ed25519 key pair the command service signs
/// checkpoints of the chain with, and print its public key; with `--rotate`, a new pair in
/// place of one lost or retired, after the keys that signed before it.
enum KeysCheckpointCommand {
    static let spec = CommandSpec(
        ["keys", "checkpoint"], summary: "Create the checkpoint signing key pair and print its public key.",
        options: Configuration.options + [
            CheckpointKeyFile.option,
            OptionSpec(
                "rotate",
                help: "Replace a lost or retired key: the new public key goes after the earlier ones in checkpoint.pub."),
        ],
        discussion: """
            Writes the key pair to DATA/checkpoint.key (mode 0600; JSON with "publicKey" and
            "secretKey" in hex) and the public key alone to DATA/checkpoint.pub (mode 0644), which is
            what auditors keep and `strata verify` trusts by default, wherever the key file is.
            `strata serve` creates the pair itself on its first start; this command makes it
            beforehand. The public key the store's checkpoints were signed with is never replaced
            silently.

            With --rotate it makes a new pair in place of a key lost or retired: the new public key is
            added after the earlier ones in DATA/checkpoint.pub, a line each, and the key file is
            written (replacing the old key, if it is there). `strata verify` then trusts each earlier
            key for the checkpoints it signed before the next key signed one, and the new key from
            there on. serve signs with the new key from its next start. Give auditors the new
            checkpoint.pub: a copy holding the old key alone calls the new checkpoints UNTRUSTED_KEY.

            Exit codes: 0 created, 1 the key file or DATA/checkpoint.pub exists already (both are left
            as they are), or with --rotate, DATA/checkpoint.pub is missing, 2 usage or environment (a
            key path that is one of the system's files, such as DATA/checkpoint.pub itself; a
            checkpoint.pub that holds no keys).
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let keyPath = CheckpointKeyFile.keyPath(arguments, environment, configuration)
        try CheckpointKeyFile.requireApart(keyPath, configuration)
        let publicKeyPath = CheckpointKeyFile.publicKeyPath(configuration)
        if arguments.flag("rotate") {
            let (key, trusted) = try CheckpointKeyFile.rotate(keyPath: keyPath, publicKeyPath: publicKeyPath)
            printLine(key.publicKeyHex)
            write(
                "strata keys checkpoint: \(publicKeyPath) now trusts \(trusted.keys.count) keys, this one in force "
                    + "from serve's next start; give auditors the new file\n", to: .standardError)
            return 0
        }
        guard !FileManager.default.fileExists(atPath: keyPath) else {
            throw CommandFailure.problem("\(keyPath) exists already; it is left as it is")
        }
        let key = try CheckpointKeyFile.create(keyPath: keyPath, publicKeyPath: publicKeyPath)
        printLine(key.publicKeyHex)
        return 0
    }
}
