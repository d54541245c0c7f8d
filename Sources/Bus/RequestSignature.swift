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

    /// The header as canonical JSON, the way clients send it. Written member by member in
    /// key order: a client writes one for every request, and building a JSON object value
    /// and sorting its keys cost several times as much.
    public var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(112 + keyId.utf8.count)
        // Strings and integers only: nothing here can be refused.
        try? CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("key", keyId)
            o.string("sig", Hex.encode(signature))
            o.integer("ts", timestamp)
            o.integer("v", RequestHeader.version)
        }
        return out
    }

    /// Reads a header frame; nil unless it is exactly such an object (strict JSON, `v` 1,
    /// a key id, an integer `ts`, and 64 lowercase or uppercase hex characters in `sig`).
    public init?(json bytes: [UInt8]) {
        guard let header = RequestHeader(canonical: bytes) ?? RequestHeader(parsing: bytes) else { return nil }
        self = header
    }

    /// A header as canonical JSON prints it (keys in order, no spaces), read by position:
    /// `{"key":"K","sig":"<64 hex>","ts":N,"v":1}`, with K printable ASCII other than `"`
    /// and `\` and N a JSON integer of at most 18 digits. What this reads, the parser reads
    /// the same; anything else (other orders, spaces, escapes, non-ASCII key ids) is nil
    /// here and read by `init(parsing:)`. Every request has a header, and parsing it took
    /// ≈ 10 k instructions, a tenth of the commands thread's work for a command.
    package init?(canonical bytes: [UInt8]) {
        guard let header = bytes.withUnsafeBufferPointer(CanonicalHeaderReader.read) else { return nil }
        self = header
    }

    /// A header through the strict JSON parser, in any member order and spacing.
    ///
    /// Read as a list of four members rather than a dictionary: every request has one.
    package init?(parsing bytes: [UInt8]) {
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

extension RequestHeader {
    /// The members a header has, all four required.
    static let members = ["key", "sig", "ts", "v"]

    /// Why `bytes` is not a header, naming the member at fault: for the refusal of a header
    /// `init(json:)` did not read, so it costs nothing on the way of a good request.
    public static func problem(json bytes: [UInt8]) -> String {
        let shape = #"the header must be {"v":1,"key":"<key id>","ts":<unix seconds>,"sig":"<64 hex>"}"#
        let value: JSONValue
        let numbers: [JSONParser.UnrepresentableNumber]
        do {
            (value, numbers) = try JSONParser.parseNotingNumbers(bytes)
        } catch {
            return "the header is not strict JSON (\(error)); \(shape)"
        }
        guard case .object(let header) = value else { return "the header is not a JSON object; \(shape)" }
        if let unknown = header.keys.filter({ !members.contains($0) }).min() {
            return "the header has a member \"\(unknown)\" it does not define; \(shape)"
        }
        if header["v"]?.integerValue != RequestHeader.version {
            return "\"v\" must be 1, the integer; \(shape)"
        }
        guard let key = header["key"]?.stringValue, !key.isEmpty else {
            return "\"key\" must be a key id, a non-empty string; \(shape)"
        }
        guard header["ts"]?.integerValue != nil, !numbers.contains(where: { $0.path == [.key("ts")] }) else {
            return "\"ts\" must be an integer, the unix seconds when the request was signed; \(shape)"
        }
        guard let sig = header["sig"]?.stringValue, sig.utf8.count == 64, Hex.decode(sig) != nil else {
            return "\"sig\" must be 64 hex characters, the HMAC-SHA256 in lowercase hex; \(shape)"
        }
        return shape
    }
}

/// Reads the canonical form of a header by position (`RequestHeader.init(canonical:)`).
private enum CanonicalHeaderReader {
    static func read(_ b: UnsafeBufferPointer<UInt8>) -> RequestHeader? {
        var i = 0
        func skip(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard b.count - i >= count else { return false }
            for k in 0..<count where b[i + k] != literal.utf8Start[k] { return false }
            i += count
            return true
        }
        guard skip(#"{"key":""#) else { return nil }
        let keyStart = i
        while i < b.count && b[i] != UInt8(ascii: "\"") {
            guard b[i] >= 0x20 && b[i] < 0x7F && b[i] != UInt8(ascii: "\\") else { return nil }
            i += 1
        }
        let keyEnd = i
        guard keyEnd > keyStart, skip(#"","sig":""#), b.count - i >= 64,
            let signature = Hex.decode(utf8: UnsafeBufferPointer(rebasing: b[i..<i + 64]))
        else { return nil }
        i += 64
        guard skip(#"","ts":"#) else { return nil }
        let negative = i < b.count && b[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        let digitsStart = i
        var magnitude: Int64 = 0
        while i < b.count && b[i] >= UInt8(ascii: "0") && b[i] <= UInt8(ascii: "9") {
            guard i - digitsStart < 18 else { return nil }  // 18 digits cannot overflow
            magnitude = magnitude * 10 + Int64(b[i] - UInt8(ascii: "0"))
            i += 1
        }
        let digits = i - digitsStart
        // JSON writes no leading zeros.
        guard digits > 0, digits == 1 || b[digitsStart] != UInt8(ascii: "0"), skip(#","v":1}"#), i == b.count
        else { return nil }
        let keyId = String(decoding: UnsafeBufferPointer(rebasing: b[keyStart..<keyEnd]), as: UTF8.self)
        return RequestHeader(keyId: keyId, timestamp: negative ? -magnitude : magnitude, signature: signature)
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
