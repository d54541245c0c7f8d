import Events
import StrataCore

/// The key a client process signs with, and the CURVE keys its connections present when the
/// key file holds the service's CURVE key (nil: plain TCP).
struct SigningKey {
    let key: KeyFile.Key
    let curve: CurveClientKeys?
}

extension KeyFile.Key {
    /// Whether the key may act for actors with `role`: a key without `"roles"` acts for every role.
    func mayAct(for role: Role) -> Bool { roles?.contains(role.rawValue) ?? true }
}

extension Configuration {
    /// The configured key file, read; refused first when the config file named it by a relative
    /// path that moved (`WorkingDirectoryKeyFile`), so that no command calls it missing.
    func readKeyFile() throws -> KeyFile {
        try WorkingDirectoryKeyFile.requireNone(self)
        return try ServeCommand.readKeyFile(keysFile)
    }

    /// The key a client process signs with: `--key` (or STRATA_KEY), which must have `scope`,
    /// else the key file's first key with `scope` (and, when the file holds the service's
    /// CURVE key, with a CURVE pair of its own, since the service admits no other).
    ///
    /// `roles` are the roles of the actors the process acts for (`forget` an admin, `demo` admins
    /// and agents): a key narrowed to other roles would see every such command refused
    /// (FORBIDDEN KEY_ROLE_NOT_PERMITTED), so none is chosen, and one named is refused here.
    func signingKey(for scope: KeyFile.Scope, actingFor roles: [Role] = []) throws -> SigningKey {
        let keys = try readKeyFile()
        let roleNames = roles.map(\.rawValue).joined(separator: " and ")
        if let id = key {
            guard let key = keys.key(id) else { throw CommandFailure.environment("no key \(id) in \(keysFile)") }
            guard key.scopes.contains(scope) else {
                throw CommandFailure.environment("key \(id) lacks the \(scope.rawValue) scope this needs")
            }
            guard roles.allSatisfy(key.mayAct) else {
                throw CommandFailure.environment(
                    "key \(id) may act only for \((key.roles ?? []).joined(separator: ", ")), and this acts for "
                        + "\(roleNames); name a key not narrowed to other roles")
            }
            return try signingKey(key, in: keys)
        }
        let curve = keys.curveServerPublic != nil
        guard
            let key = keys.keys.first(where: {
                $0.scopes.contains(scope) && (!curve || $0.curvePair != nil) && roles.allSatisfy($0.mayAct)
            })
        else {
            // Roles are named only when they are what ruled out a key with the scope.
            let narrowed = keys.keys.contains { $0.scopes.contains(scope) && (!curve || $0.curvePair != nil) }
            let acting = narrowed ? " that may act for \(roleNames)" : ""
            throw CommandFailure.environment(
                curve
                    ? "no key with the \(scope.rawValue) scope and a CURVE key pair\(acting) in \(keysFile); "
                        + "create one with `strata keys new ID --scope \(scope.rawValue) --curve`"
                    : "no key with the \(scope.rawValue) scope\(acting) in \(keysFile); create one with "
                        + "`strata keys new ID --scope \(scope.rawValue)`")
        }
        return try signingKey(key, in: keys)
    }

    /// `key` of `keys`, with the CURVE keys its connections need.
    func signingKey(_ key: KeyFile.Key, in keys: KeyFile) throws -> SigningKey {
        do {
            return SigningKey(key: key, curve: try keys.curveClientKeys(for: key))
        } catch {
            throw CommandFailure.environment(
                "\(keysFile): \(error); make a key with `strata keys new ID --scope … --curve`")
        }
    }
}
