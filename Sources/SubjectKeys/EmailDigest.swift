import CSodium

/// A keyed digest of a normalized email (BLAKE2b, libsodium's `crypto_generichash`, 128
/// bits, under a service-wide secret kept in the key store): what the command service
/// checks email uniqueness on, so that its memory holds no clear email and the digest alone
/// says nothing to whoever lacks the secret.
public struct EmailDigest: Sendable {
    static let secretName = "email-digest"
    private let secret: [UInt8]

    public init(secret: [UInt8]) {
        self.secret = secret
    }

    /// Lowercase hex of the digest of `normalizedEmail`.
    public func key(_ normalizedEmail: String) -> String {
        let input = Array(normalizedEmail.utf8)
        var out = [UInt8](repeating: 0, count: 16)
        crypto_generichash(&out, out.count, input, UInt64(input.count), secret, secret.count)
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(32)
        for byte in out {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
