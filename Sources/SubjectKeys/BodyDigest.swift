import CSodium

/// What the command journal keeps of a command's body: a keyed digest (BLAKE2b-256,
/// libsodium's `crypto_generichash`, under a service-wide secret kept in the key store) of the
/// body's SHA-256. A retry is told from a reuse of its id as before, since the same body gives
/// the same digest; but the journal, in `events.db`, which backups and analysts read, can no
/// longer confirm a guess at an erased subject's personal data. A plain SHA-256 of the body did:
/// hash a candidate body (the id, type and actor are beside it) and compare.
public struct BodyDigest: Sendable {
    static let secretName = "body-digest"
    private let secret: [UInt8]

    public init(secret: [UInt8]) {
        self.secret = secret
    }

    /// The service's, from `store` (made there on first use, as the email digest's is).
    public init(store: SubjectKeyStore) throws(SubjectKeyStoreError) {
        self.init(secret: try store.serviceSecret(named: Self.secretName))
    }

    /// The 32-byte digest the journal keeps, of a body whose SHA-256 is `sha256`.
    public func of(sha256: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        crypto_generichash(&out, out.count, sha256, UInt64(sha256.count), secret, secret.count)
        return out
    }
}
