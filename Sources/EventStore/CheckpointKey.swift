import CSodium
import StrataCore

/// The command service's Ed25519 key pair for signing checkpoints (libsodium `crypto_sign`).
///
/// The key file is `{"publicKey":"<64 hex>","secretKey":"<128 hex>"}`, the secret key in
/// libsodium's 64-byte form (seed ‖ public key). Auditors need only the public key.
public struct CheckpointKey: Sendable, Equatable, CustomStringConvertible {
    /// Ed25519 sizes (libsodium's `crypto_sign_*BYTES`).
    public static let publicKeyBytes = 32
    public static let secretKeyBytes = 64
    public static let signatureBytes = 64

    public let publicKey: [UInt8]
    /// Never printed: `description` shows the public key only.
    public let secretKey: [UInt8]

    /// Checks that the two halves belong together: the public key derived from the secret
    /// key's seed must be `publicKey`, so a file with a swapped half is refused at start
    /// rather than found out by the first auditor.
    public init(publicKey: [UInt8], secretKey: [UInt8]) throws(CheckpointKeyError) {
        guard publicKey.count == CheckpointKey.publicKeyBytes else {
            throw CheckpointKeyError("the public key must be \(CheckpointKey.publicKeyBytes) bytes")
        }
        guard secretKey.count == CheckpointKey.secretKeyBytes else {
            throw CheckpointKeyError("the secret key must be \(CheckpointKey.secretKeyBytes) bytes")
        }
        var seed = [UInt8](repeating: 0, count: 32)  // crypto_sign_SEEDBYTES
        var derivedPublic = [UInt8](repeating: 0, count: CheckpointKey.publicKeyBytes)
        var derivedSecret = [UInt8](repeating: 0, count: CheckpointKey.secretKeyBytes)
        defer {
            sodium_memzero(&seed, seed.count)
            sodium_memzero(&derivedSecret, derivedSecret.count)
        }
        guard crypto_sign_ed25519_sk_to_seed(&seed, secretKey) == 0,
            crypto_sign_seed_keypair(&derivedPublic, &derivedSecret, seed) == 0,
            derivedPublic == publicKey, derivedSecret == secretKey
        else {
            throw CheckpointKeyError("the secret key does not belong to the public key")
        }
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// A fresh key pair from libsodium.
    public static func generate() throws(CheckpointKeyError) -> CheckpointKey {
        guard sodium_init() >= 0 else { throw CheckpointKeyError("libsodium failed to initialise") }
        var publicKey = [UInt8](repeating: 0, count: CheckpointKey.publicKeyBytes)
        var secretKey = [UInt8](repeating: 0, count: CheckpointKey.secretKeyBytes)
        guard crypto_sign_keypair(&publicKey, &secretKey) == 0 else {
            throw CheckpointKeyError("libsodium could not make a key pair")
        }
        return try CheckpointKey(publicKey: publicKey, secretKey: secretKey)
    }

    /// Reads the key file's JSON, refusing anything malformed with a message naming the problem.
    /// A byte order mark at its start is read past, as in the key file and the config file.
    public init(json bytes: some Collection<UInt8>) throws(CheckpointKeyError) {
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes.dropFirst(ByteOrderMark.length(at: bytes)))
        } catch {
            throw CheckpointKeyError("not valid JSON: \(error)")
        }
        guard let publicHex = document["publicKey"]?.stringValue,
            let publicKey = SignedCheckpoint.lowercaseHex(publicHex, bytes: CheckpointKey.publicKeyBytes)
        else {
            throw CheckpointKeyError("\"publicKey\" must be 64 lowercase hex characters")
        }
        guard let secretHex = document["secretKey"]?.stringValue,
            let secretKey = SignedCheckpoint.lowercaseHex(secretHex, bytes: CheckpointKey.secretKeyBytes)
        else {
            throw CheckpointKeyError("\"secretKey\" must be 128 lowercase hex characters")
        }
        try self.init(publicKey: publicKey, secretKey: secretKey)
    }

    /// The key file's contents: canonical JSON and a newline.
    public var json: [UInt8] {
        CanonicalJSON.bytes(["publicKey": .string(publicKeyHex), "secretKey": .string(Hex.encode(secretKey))])
            + [UInt8(ascii: "\n")]
    }

    public var publicKeyHex: String { Hex.encode(publicKey) }

    /// The public key file's contents (`checkpoint.pub`): the hex and a newline.
    public var publicKeyLine: String { publicKeyHex + "\n" }

    public var description: String { "CheckpointKey(public: \(publicKeyHex))" }

    /// Signs the chain's hash at `position`.
    public func sign(position: Int64, hash: String, signedAt: String) -> SignedCheckpoint {
        let message = SignedCheckpoint.message(position: position, hash: hash, signedAt: signedAt)
        var signature = [UInt8](repeating: 0, count: CheckpointKey.signatureBytes)
        crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretKey)
        return SignedCheckpoint(
            position: position, hash: hash, signedAt: signedAt, publicKey: publicKeyHex,
            signature: Hex.encode(signature))
    }

    /// A public key as written in `checkpoint.pub` or given on the command line: 64 hex
    /// characters, surrounding whitespace ignored, either case accepted. An auditor's copy saved
    /// by a Windows editor starts with a byte order mark, which is no part of the key: it is
    /// read past, as in the key file, where it made the copy "not a public key".
    public static func publicKey(fromText text: String) -> [UInt8]? {
        let trimmed = ByteOrderMark.removed(from: text).trimmingASCIIWhitespace()
        return SignedCheckpoint.lowercaseHex(trimmed.lowercased(), bytes: CheckpointKey.publicKeyBytes)
    }
}

public struct CheckpointKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension String {
    /// Compared by scalar: a CRLF line end is one `Character`, equal neither to "\r" nor to "\n",
    /// so a key file copied through Windows ended with text that was not trimmed.
    fileprivate func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { character in
            character.unicodeScalars.allSatisfy { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
