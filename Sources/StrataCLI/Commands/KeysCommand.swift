import CSodium
import Foundation
import StrataCore

/// `strata keys new ID --scope … [--curve]`: add a key with a fresh random secret to the key
/// file, and with `--curve` a CURVE client pair (and the service's pair, the first time).
enum KeysCommand {
    static let spec = CommandSpec(
        ["keys", "new"], summary: "Create a signing key in the key file and print its id.",
        arguments: [ArgumentSpec("ID", help: "the key id, 1–64 characters of [A-Za-z0-9_-]")],
        options: Configuration.options + [
            OptionSpec("scope", value: "LIST", help: "Comma-separated scopes: commands, history, personal-data."),
            OptionSpec("roles", value: "LIST", help: "Only act for actors with these roles (ADMIN, AGENT)."),
            OptionSpec("curve", help: "Give the key a CURVE client pair; the bus then runs CURVE (between hosts)."),
        ],
        discussion: """
            The secret is 32 random bytes from libsodium, stored as 64 hex characters in the key file,
            which is created with mode 0600 (and its directory with mode 0700, if missing). A key file
            that others may read is refused (exit 2), as every command that reads it refuses it.
            Requests are signed with HMAC-SHA256 under these 32 bytes. The file is read and replaced
            under a lock on FILE.lock beside it, so keys made at once all stay, and an id is given out
            once.

            With --curve, the key also gets a CURVE key pair from libzmq ("curvePublic", "curveSecret",
            40 Z85 characters each), and the public key is printed on a second line. The first --curve
            also adds the service's own pair ("curveServer") to the file; from then on `strata serve`
            encrypts every endpoint and admits only the keys' public keys, and every key added to that
            file gets a pair, --curve or not; the keys made before it have none and can no longer connect
            (a warning names them). A client on another host needs a copy of the file with its
            own entry and "curveServer" without its "secret" (see docs/protocol.md).

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
        // Not a new key file beside the one a config file named before its paths moved.
        try WorkingDirectoryKeyFile.requireNone(configuration)
        var pair: CurveKeyPair?
        var createdServer: CurveKeyPair?
        // Keys made before the service's pair have none of their own, and cannot connect once it runs CURVE.
        var withoutPairs: [String] = []
        // Read, checked and replaced under the file's lock, so that keys made at once all stay
        // and an id is given out once.
        try AtomicFile.update(path, mode: 0o600, creatingDirectory: true) {
            var file = try readForUpdate(path) ?? KeyFile()
            guard file.key(id) == nil else {
                throw CommandFailure.problem("a key named \(id) exists already in \(path)")
            }
            // Once the service runs CURVE, a key without a pair could never connect.
            let curve = arguments.flag("curve") || file.curveServerPublic != nil
            if curve && file.curveServerPublic == nil {
                let server = try curveKeyPair()
                try file.setCurveServer(publicKey: server.publicKey, secretKey: server.secretKey)
                createdServer = server
                withoutPairs = file.keys.filter { $0.curvePublic == nil }.map(\.id)
            }
            pair = curve ? try curveKeyPair() : nil
            try file.add(
                KeyFile.Key(
                    id: id, secret: randomSecret(), scopes: scopes, roles: roles, curvePublic: pair?.publicKey,
                    curveSecret: pair?.secretKey))
            return file.json
        }
        printLine(id)
        if let pair { printLine(pair.publicKey.z85) }
        if let createdServer {
            write(
                "created the service's CURVE key pair in \(path); its public key: \(createdServer.publicKey.z85)\n",
                to: .standardError)
            if !withoutPairs.isEmpty {
                write(
                    "warning: once `strata serve` restarts it runs CURVE on every endpoint, and the keys made "
                        + "before this one have no CURVE pair and can no longer connect: "
                        + withoutPairs.joined(separator: ", ")
                        + "; give each client (the projectors' key too) a new key made after this one, which gets "
                        + "a pair\n", to: .standardError)
            }
        }
        return 0
    }

    /// The key file at `path` as a command that rewrites it reads it (under its lock); nil when
    /// there is none. One it cannot read is refused as every reader refuses it, with the system's
    /// reason (`Is a directory`) and within the same bound.
    static func readForUpdate(_ path: String) throws -> KeyFile? {
        let bytes: [UInt8]
        switch FileContents.read(path) {
        case .success(let read): bytes = read
        case .failure(let error) where error.code == ENOENT: return nil
        case .failure(let error): throw CommandFailure.environment("cannot read the key file \(path): \(error)")
        }
        // A file others could read is refused as every reader of it refuses it: rewriting it
        // 0600 would hide that its secrets may have been read already.
        try PrivateFile.requireOwnerOnly(path, "the key file")
        do {
            return try KeyFile(json: bytes)
        } catch {
            throw CommandFailure.environment("\(path): \(error)")
        }
    }

    /// A fresh CURVE key pair from libzmq.
    static func curveKeyPair() throws -> CurveKeyPair {
        guard let pair = CurveKeyPair.generate() else {
            throw CommandFailure.environment("this libzmq was built without CURVE support (zmq_curve_keypair failed)")
        }
        return pair
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
