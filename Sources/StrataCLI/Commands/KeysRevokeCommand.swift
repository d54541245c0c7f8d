import Foundation
import StrataCore

/// `strata keys revoke ID`: take a key out of the key file, so that a running service refuses it.
enum KeysRevokeCommand {
    static let spec = CommandSpec(
        ["keys", "revoke"], summary: "Remove a key from the key file; a running service refuses it within a second.",
        arguments: [ArgumentSpec("ID", help: "the key id")],
        options: Configuration.options,
        discussion: """
            Rewrites the key file without the key (under the lock on FILE.lock that `keys new` takes,
            replaced whole, mode 0600). A running `strata serve` reads the file again within about a
            second of the change and from then on refuses the key's requests, on the commands and the
            history endpoints, as UNAUTHENTICATED; with CURVE, its public key no longer connects.
            Connections stay up: other keys are not disturbed. Clients and projectors that use the key
            need another one first (`strata keys new`).

            Exit codes: 0 removed, 1 no key with that id, 2 usage or environment.
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let id = arguments.positionals[0]
        let path = configuration.keysFile
        // Not `no key file` where a config file's relative path moved: the key is in the other one.
        try WorkingDirectoryKeyFile.requireNone(configuration)
        try AtomicFile.update(path, mode: 0o600) {
            guard var file = try KeysCommand.readForUpdate(path) else {
                throw CommandFailure.environment("no key file at \(path)")
            }
            guard file.remove(id) else { throw CommandFailure.problem("no key named \(id) in \(path)") }
            return file.json
        }
        printLine("revoked \(id)")
        return 0
    }
}
