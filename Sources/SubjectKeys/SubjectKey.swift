import CSodium
import Events

/// One data subject's key: 32 random bytes for XChaCha20-Poly1305, named by an id that
/// says whose it is and is never made twice.
///
/// The id is `<subject>:<16 hex>` (`account:A1:9f3c…`): the subject, so that a sealed value
/// names whose key opens it, and 64 random bits, so that a key made for a subject after
/// its old one was destroyed could never be mistaken for it.
public struct SubjectKey: Sendable, Equatable {
    public let id: String
    public let subject: DataSubject
    public let secret: [UInt8]

    public init(id: String, subject: DataSubject, secret: [UInt8]) {
        self.id = id
        self.subject = subject
        self.secret = secret
    }

    public static let secretBytes = Int(crypto_aead_xchacha20poly1305_ietf_keybytes())

    /// A new key for `subject`, from libsodium's random generator.
    public static func generate(for subject: DataSubject) -> SubjectKey {
        Sodium.ready()
        var secret = [UInt8](repeating: 0, count: secretBytes)
        crypto_aead_xchacha20poly1305_ietf_keygen(&secret)
        var generation = [UInt8](repeating: 0, count: 8)
        randombytes_buf(&generation, generation.count)
        return SubjectKey(id: subject.description + ":" + hex(generation), subject: subject, secret: secret)
    }

    /// The subject a key id names, or nil for a string that is no key id.
    public static func subject(ofKeyId id: some StringProtocol) -> DataSubject? {
        guard let colon = id.lastIndex(of: ":"), id.distance(from: colon, to: id.endIndex) == 17 else { return nil }
        return DataSubject(id[..<colon])
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// libsodium must be initialised once per process before its random generator is used.
enum Sodium {
    private static let initialised: Bool = sodium_init() >= 0

    static func ready() {
        precondition(initialised, "libsodium failed to initialise")
    }
}
