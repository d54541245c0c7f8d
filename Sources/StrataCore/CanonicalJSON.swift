import Foundation

/// The one canonical JSON encoder of Strata: RFC 8785 (JCS) for documents without
/// floating-point numbers.
///
/// What is hashed, stored, published and replayed is these bytes, so anyone can
/// recompute the hash chain from the bus with any RFC 8785 implementation.
/// - object members sorted by their keys' UTF-16 code units;
/// - no insignificant whitespace;
/// - strings escape only `"`, `\` and U+0000...U+001F (`\b \f \n \r \t`, others as
///   `\u00xx` in lowercase hex); everything else, `/` and U+2028 included, is literal UTF-8;
/// - integers in plain decimal.
public enum CanonicalJSON {
    /// The canonical bytes of a value.
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        append(value, to: &out)
        return out
    }

    /// The canonical text of a value.
    public static func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    /// The canonical bytes of any `Encodable` whose JSON has no fractional numbers, written
    /// straight from the value (`CanonicalEncoder`).
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        try CanonicalEncoder.encode(value)
    }

    /// Decodes canonical (or any strict) JSON bytes into a `Decodable`.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes))
    }

    // MARK: - Writing

    public static func append(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .integer(let i): appendInteger(i, to: &out)
        case .string(let s): appendString(s, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                append(element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, key) in sortedKeys(members.keys).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                append(members[key]!, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// RFC 8785 §3.2.3: keys compare as arrays of UTF-16 code units.
    public static func sortedKeys(_ keys: some Sequence<String>) -> [String] {
        keys.sorted(by: keyPrecedes)
    }

    /// Whether `a` sorts before `b` as arrays of UTF-16 code units, compared on their UTF-8
    /// bytes: the two orders agree except where a character from U+E000...U+FFFF (lead byte
    /// 0xEE or 0xEF) meets one beyond U+FFFF (lead byte 0xF0...0xF4, a surrogate pair in
    /// UTF-16, so smaller there). Bytes compare far faster than the UTF-16 view iterates.
    public static func keyPrecedes(_ a: String, _ b: String) -> Bool {
        var a = a
        var b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = min(x.count, y.count)
                var i = 0
                while i < common && x[i] == y[i] { i += 1 }
                guard i < common else { return x.count < y.count }
                let (p, q) = (x[i], y[i])
                if (0xEE...0xEF).contains(p) && q >= 0xF0 { return false }
                if (0xEE...0xEF).contains(q) && p >= 0xF0 { return true }
                return p < q
            }
        }
    }

    public static func appendInteger(_ value: some BinaryInteger, to out: inout [UInt8]) {
        if let small = Int64(exactly: value) {
            appendInteger(small, to: &out)
        } else {
            out.append(contentsOf: String(value).utf8)
        }
    }

    /// Decimal digits written in place: no `String` per number on the append path.
    public static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        // At most 20 characters ("-" and 19 digits), written on the stack and copied in one piece.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            let start = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            out.append(contentsOf: UnsafeBufferPointer(start: start, count: writeInteger(value, to: start)))
        }
    }

    /// Writes `value` in decimal at `start`, which has room for 20 bytes; returns how many
    /// it wrote.
    static func writeInteger(_ value: Int64, to start: UnsafeMutablePointer<UInt8>) -> Int {
        var magnitude = value.magnitude
        var length = value < 0 ? 2 : 1
        var rest = magnitude / 10
        while rest > 0 {
            length += 1
            rest /= 10
        }
        if value < 0 { start[0] = UInt8(ascii: "-") }
        var index = length
        repeat {
            index -= 1
            start[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        return length
    }

    @usableFromInline static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `s` as a canonical JSON string literal, quotes included.
    public static func appendString(_ s: String, to out: inout [UInt8]) {
        // Scanning a contiguous buffer is several times faster than the UTF-8 view's iterator.
        var s = s
        s.withUTF8 { appendString(utf8: $0, to: &out) }
    }

    /// Appends UTF-8 bytes as a canonical JSON string literal, quotes included: the same
    /// escaping as for a `String`, for callers that hold the bytes (a stored column) and
    /// should not make a `String` of them first.
    @inlinable
    public static func appendString<Bytes: Collection<UInt8>>(utf8 bytes: Bytes, to out: inout [UInt8]) {
        // A String's `utf8` view (a native string's) and an array hand over their bytes in
        // one piece: scanning those costs a few instructions a byte, the view's iterator
        // several times more.
        if bytes.withContiguousStorageIfAvailable({ appendLiteral(of: $0, to: &out) }) != nil { return }
        appendLiteral(of: bytes, to: &out)
    }

    /// Whether `byte` stands in a string literal as it is: all but `"`, `\` and the control
    /// characters U+0000...U+001F, which are escaped.
    @inlinable
    static func isLiteral(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    /// `appendString(utf8:to:)` itself, for whichever collection holds the bytes.
    @inlinable
    static func appendLiteral<Bytes: Collection<UInt8>>(of bytes: Bytes, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings (ids, names, dates) need no escaping: copy them whole.
        if bytes.allSatisfy(isLiteral) {
            out.append(contentsOf: bytes)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
