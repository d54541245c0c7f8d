import StrataCore

extension Configuration {
    /// The key a client process signs with: `--key` (or STRATA_KEY), which must have `scope`,
    /// else the key file's first key with `scope`.
    func signingKey(for scope: KeyFile.Scope) throws -> KeyFile.Key {
        let keys = try ServeCommand.readKeyFile(keysFile)
        if let id = key {
            guard let key = keys.key(id) else { throw CommandFailure.environment("no key \(id) in \(keysFile)") }
            guard key.scopes.contains(scope) else {
                throw CommandFailure.environment("key \(id) lacks the \(scope.rawValue) scope this needs")
            }
            return key
        }
        guard let key = keys.keys.first(where: { $0.scopes.contains(scope) }) else {
            throw CommandFailure.environment(
                "no key with the \(scope.rawValue) scope in \(keysFile); create one with "
                    + "`strata keys new ID --scope \(scope.rawValue)`")
        }
        return key
    }
}
