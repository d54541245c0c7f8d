import CZeroMQ

/// One CURVE key (Curve25519, as libzmq's CURVE mechanism uses it): 32 raw bytes, written
/// as 40 characters of Z85 (ZeroMQ RFC 32), the form libzmq and its bindings print and read.
/// Encoding and decoding are libzmq's own (`zmq_z85_encode`, `zmq_z85_decode`).
public struct CurveKey: Sendable, Hashable {
    public static let byteCount = 32
    public static let z85Count = 40

    /// Z85's 85 characters: no quote, backslash or space, so a key sits in JSON as it is.
    private static let alphabet = Set(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)

    public let bytes: [UInt8]

    /// nil unless `bytes` is 32 bytes long.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// Reads 40 Z85 characters; nil for another length, a character outside Z85's alphabet,
    /// or a group of five characters worth more than 32 bits.
    public init?(z85 text: String) {
        let characters = Array(text.utf8)
        guard characters.count == Self.z85Count, characters.allSatisfy(Self.alphabet.contains) else { return nil }
        var decoded = [UInt8](repeating: 0, count: Self.byteCount)
        guard text.withCString({ zmq_z85_decode(&decoded, $0) }) != nil else { return nil }
        bytes = decoded
    }

    /// Reads the NUL-terminated text libzmq's key functions write.
    init?(z85 text: [CChar]) {
        self.init(z85: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// The key as 40 Z85 characters.
    public var z85: String {
        var text = [CChar](repeating: 0, count: Self.z85Count + 1)
        _ = zmq_z85_encode(&text, bytes, bytes.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
