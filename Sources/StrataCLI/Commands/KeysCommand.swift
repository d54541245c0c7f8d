import CSodium
import Foundation
import StrataCore

/// `strata keys new ID --scope …`: add a key with a fresh random secret to the key file.
enum KeysCommand {
    static let spec = CommandSpec(
        ["keys", "new"], summary: "Create a signing key in the key file and print its id.",
        arguments: [ArgumentSpec("ID", help: "the key id, 1–64 characters of [A-Za-z0-9_-]")],
        options: Configuration.options + [
            OptionSpec("scope", value: "LIST", help: "Comma-separated scopes: commands, history, personal-data."),
            OptionSpec("roles", value: "LIST", help: "Only act for actors with these roles (ADMIN, AGENT)."),
        ],
        discussion: """
            The secret is 32 random bytes from libsodium, stored as 64 hex characters in the key file,
            which is created with mode 0600 (its directory too, if missing). Requests are signed with
            HMAC-SHA256 under these 32 bytes.

            Exit codes: 0 created, 1 a key with that id exists, 2 usage or environment.
            """)

    static let roleNames: Set<String> = ["ADMIN", "AGENT"]

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let id = arguments.positionals[0]
        guard Identifier.isValid(id) else { throw UsageError("the key id must be 1–64 characters of [A-Za-z0-9_-]: '\(id)'") }
        guard let scopeNames = arguments.list("scope"), !scopeNames.isEmpty else {
            throw UsageError("--scope is required: commands, history, personal-data (comma-separated)")
        }
        var scopes: Set<KeyFile.Scope> = []
        for name in scopeNames {
            guard let scope = KeyFile.Scope(rawValue: name) else {
                throw UsageError("unknown scope '\(name)' (known: commands, history, personal-data)")
            }
            scopes.insert(scope)
        }
        let roles = arguments.list("roles")
        if let roles {
            guard !roles.isEmpty, roles.allSatisfy(roleNames.contains) else {
                throw UsageError("--roles takes ADMIN and/or AGENT")
            }
        }

        let path = configuration.keysFile
        var file = KeyFile()
        if let bytes = FileManager.default.contents(atPath: path) {
            do {
                file = try KeyFile(json: bytes)
            } catch {
                throw CommandFailure.environment("\(path): \(error)")
            }
        } else if FileManager.default.fileExists(atPath: path) {
            throw CommandFailure.environment("cannot read the key file \(path)")
        }
        guard file.key(id) == nil else { throw CommandFailure.problem("a key named \(id) exists already in \(path)") }
        try file.add(KeyFile.Key(id: id, secret: randomSecret(), scopes: scopes, roles: roles))
        try writePrivateFile(path, contents: file.json)
        printLine(id)
        return 0
    }

    /// 32 random bytes from libsodium: a key's secret.
    static func randomSecret() throws -> [UInt8] {
        guard sodium_init() >= 0 else { throw CommandFailure.environment("libsodium failed to initialise") }
        var secret = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&secret, secret.count)
        return secret
    }

    /// Writes a file only its owner can read, atomically: a temporary file then a rename.
    static func writePrivateFile(_ path: String, contents: [UInt8]) throws {
        try AtomicFile.write(path, contents: contents, mode: 0o600, creatingDirectory: true)
    }
}
