import CSodium
import StrataCore

/// The header every request on the commands and history endpoints carries:
/// `{"v":1,"key":"<key id>","ts":<unix seconds>,"sig":"<hex>"}` (CONTRACT.md "Commands").
public struct RequestHeader: Sendable, Equatable {
    public static let version: Int64 = 1

    public var keyId: String
    /// Unix seconds when the client signed; the server accepts ±300 s around its clock.
    public var timestamp: Int64
    /// HMAC-SHA256 of the signed bytes, 32 bytes.
    public var signature: [UInt8]

    public init(keyId: String, timestamp: Int64, signature: [UInt8]) {
        self.keyId = keyId
        self.timestamp = timestamp
        self.signature = signature
    }

    /// The header as canonical JSON, the way clients send it.
    public var json: [UInt8] {
        CanonicalJSON.bytes(
            .object([
                "v": .integer(RequestHeader.version), "key": .string(keyId), "ts": .integer(timestamp),
                "sig": .string(Hex.encode(signature)),
            ]))
    }

    /// Reads a header frame; nil unless it is exactly such an object (strict JSON, `v` 1,
    /// a key id, an integer `ts`, and 64 lowercase or uppercase hex characters in `sig`).
    ///
    /// Read as a list of four members rather than a dictionary: every request has one.
    public init?(json bytes: [UInt8]) {
        guard let members = JSONParser.members(of: bytes, limit: 4), members.count == 4 else { return nil }
        // Four distinct names (the parser refuses a repeated one), each of them known: all
        // four are there.
        var version: Int64?
        var keyId: String?
        var timestamp: Int64?
        var sig: String?
        for (name, value) in members {
            switch name {
            case "v": version = value.integerValue
            case "key": keyId = value.stringValue
            case "ts": timestamp = value.integerValue
            case "sig": sig = value.stringValue
            default: return nil
            }
        }
        guard version == RequestHeader.version, let keyId, !keyId.isEmpty, let timestamp, let sig,
            sig.utf8.count == 64, let signature = Hex.decode(sig)
        else { return nil }
        self.init(keyId: keyId, timestamp: timestamp, signature: signature)
    }
}

/// HMAC-SHA256 request signatures (libsodium), over
/// `"strata-v1\n" + ts + "\n" + key + "\n" + body`, with the key file's 32-byte secret.
/// The body is signed exactly as sent: nobody re-serialises it before checking.
public enum RequestSignature {
    /// The server's tolerance for clock differences, either way.
    public static let window: Int64 = 300

    public static func sign(secret: [UInt8], keyId: String, timestamp: Int64, body: [UInt8]) -> [UInt8] {
        RequestSigningKey(secret: secret).signature(keyId: keyId, timestamp: timestamp, body: body)
    }

    /// A header for `body`, signed now.
    public static func header(secret: [UInt8], keyId: String, timestamp: Int64, body: [UInt8]) -> RequestHeader {
        RequestSigningKey(secret: secret).header(keyId: keyId, timestamp: timestamp, body: body)
    }

    /// Whether `header` signs `body` with `secret` (compared in constant time).
    public static func isValid(_ header: RequestHeader, body: [UInt8], secret: [UInt8]) -> Bool {
        RequestSigningKey(secret: secret).isValid(header, body: body)
    }

    /// Whether `timestamp` is within the window around `now` (both unix seconds).
    public static func isFresh(_ timestamp: Int64, now: Int64) -> Bool {
        let (difference, overflow) = timestamp.subtractingReportingOverflow(now)
        return !overflow && difference.magnitude <= UInt64(window)
    }

    /// HMAC-SHA256 with a key of any length (RFC 2104), from libsodium.
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var state = crypto_auth_hmacsha256_state()
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        crypto_auth_hmacsha256_init(&state, key, key.count)
        crypto_auth_hmacsha256_update(&state, message, UInt64(message.count))
        crypto_auth_hmacsha256_final(&state, &out)
        return out
    }
}

/// A secret made ready to sign and check requests: libsodium's HMAC-SHA256 state right after
/// `crypto_auth_hmacsha256_init` with the secret, copied for every message.
///
/// Keying HMAC hashes two blocks (the secret's inner and outer pads), a quarter of checking a
/// typical command; a service checks every request with one of a few keys, and a client signs
/// every request with one. The state is a plain C struct (two SHA-256 states), so a copy
/// continues exactly as a fresh `init` would. It is as secret as the secret itself. The signed
/// bytes are fed in their pieces, so the body is never copied to sign it.
public struct RequestSigningKey: Sendable {
    private let keyed: crypto_auth_hmacsha256_state

    public init(secret: [UInt8]) {
        var state = crypto_auth_hmacsha256_state()
        crypto_auth_hmacsha256_init(&state, secret, secret.count)
        keyed = state
    }

    public func signature(keyId: String, timestamp: Int64, body: [UInt8]) -> [UInt8] {
        var state = keyed
        var prefix = "strata-v1\n\(timestamp)\n"
        var keyId = keyId
        prefix.withUTF8 { _ = crypto_auth_hmacsha256_update(&state, $0.baseAddress!, UInt64($0.count)) }
        keyId.withUTF8 { bytes in
            if let start = bytes.baseAddress { _ = crypto_auth_hmacsha256_update(&state, start, UInt64(bytes.count)) }
        }
        var newline = UInt8(ascii: "\n")
        crypto_auth_hmacsha256_update(&state, &newline, 1)
        body.withUnsafeBufferPointer { bytes in
            if let start = bytes.baseAddress { _ = crypto_auth_hmacsha256_update(&state, start, UInt64(bytes.count)) }
        }
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        crypto_auth_hmacsha256_final(&state, &out)
        return out
    }

    /// A header for `body`, signed at `timestamp`.
    public func header(keyId: String, timestamp: Int64, body: [UInt8]) -> RequestHeader {
        RequestHeader(keyId: keyId, timestamp: timestamp, signature: signature(keyId: keyId, timestamp: timestamp, body: body))
    }

    /// Whether `header` signs `body` with this key (compared in constant time).
    public func isValid(_ header: RequestHeader, body: [UInt8]) -> Bool {
        let expected = signature(keyId: header.keyId, timestamp: header.timestamp, body: body)
        guard header.signature.count == expected.count else { return false }
        return sodium_memcmp(expected, header.signature, expected.count) == 0
    }
}
