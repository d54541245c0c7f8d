import StrataCore

/// The key a client process signs with, and the CURVE keys its connections present when the
/// key file holds the service's CURVE key (nil: plain TCP).
struct SigningKey {
    let key: KeyFile.Key
    let curve: CurveClientKeys?
}

extension Configuration {
    /// The key a client process signs with: `--key` (or STRATA_KEY), which must have `scope`,
    /// else the key file's first key with `scope` (and, when the file holds the service's
    /// CURVE key, with a CURVE pair of its own, since the service admits no other).
    func signingKey(for scope: KeyFile.Scope) throws -> SigningKey {
        let keys = try ServeCommand.readKeyFile(keysFile)
        if let id = key {
            guard let key = keys.key(id) else { throw CommandFailure.environment("no key \(id) in \(keysFile)") }
            guard key.scopes.contains(scope) else {
                throw CommandFailure.environment("key \(id) lacks the \(scope.rawValue) scope this needs")
            }
            return try signingKey(key, in: keys)
        }
        let curve = keys.curveServerPublic != nil
        guard let key = keys.keys.first(where: { $0.scopes.contains(scope) && (!curve || $0.curvePair != nil) }) else {
            throw CommandFailure.environment(
                curve
                    ? "no key with the \(scope.rawValue) scope and a CURVE key pair in \(keysFile); create one with "
                        + "`strata keys new ID --scope \(scope.rawValue) --curve`"
                    : "no key with the \(scope.rawValue) scope in \(keysFile); create one with "
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
