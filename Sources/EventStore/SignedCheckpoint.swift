import CSodium
import StrataCore

/// A signed (position, hash) of the chain: a row of the `checkpoints` table.
///
/// The hash chain alone shows that events were changed, but not that the whole chain was
/// rewritten from some position on with every hash recomputed. A signature by the command
/// service's Ed25519 key over a position and the hash it had there does: rewriting the chain
/// without the secret key cannot produce a matching signature.
///
/// The signed message is the RFC 8785 canonical JSON of
/// `{"hash":"<hex>","position":P,"purpose":"strata-checkpoint","signedAt":"<timestamp>"}`,
/// so any Ed25519 library can check a row; `publicKey` and `signature` are lowercase hex.
public struct SignedCheckpoint: Sendable, Equatable {
    /// Names what the signature is for, so a signature made by this key for anything else
    /// can never pass for a checkpoint.
    public static let purpose = "strata-checkpoint"

    public let position: Int64
    /// The chain's hash at `position`, lowercase hex.
    public let hash: String
    /// When it was signed, written like `recorded_at` (RFC 3339 UTC with milliseconds).
    public let signedAt: String
    /// The signer's Ed25519 public key: 64 lowercase hex characters.
    public let publicKey: String
    /// The detached Ed25519 signature of `message`: 128 lowercase hex characters.
    public let signature: String

    public init(position: Int64, hash: String, signedAt: String, publicKey: String, signature: String) {
        self.position = position
        self.hash = hash
        self.signedAt = signedAt
        self.publicKey = publicKey
        self.signature = signature
    }

    /// The exact bytes that are signed.
    public static func message(position: Int64, hash: String, signedAt: String) -> [UInt8] {
        CanonicalJSON.bytes([
            "hash": .string(hash), "position": .integer(position), "purpose": .string(purpose),
            "signedAt": .string(signedAt),
        ])
    }

    public var message: [UInt8] { SignedCheckpoint.message(position: position, hash: hash, signedAt: signedAt) }

    /// The public key as 32 bytes, or nil when the row does not hold 64 lowercase hex digits.
    public var publicKeyBytes: [UInt8]? { SignedCheckpoint.lowercaseHex(publicKey, bytes: 32) }

    /// Whether `signature` is a valid signature of `message` under the row's own public key.
    /// Which key that is, and whether it is trusted, is the caller's question.
    public var hasValidSignature: Bool {
        guard let key = publicKeyBytes, let signature = SignedCheckpoint.lowercaseHex(signature, bytes: 64) else {
            return false
        }
        let message = self.message
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), key) == 0
    }

    /// Decodes exactly `bytes` bytes of lowercase hex; anything else (upper case, a wrong
    /// length) is refused, so one key or signature has one spelling.
    static func lowercaseHex(_ text: String, bytes: Int) -> [UInt8]? {
        guard text.utf8.count == bytes * 2,
            text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        return Hex.decode(text)
    }
}
