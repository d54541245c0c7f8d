import CSodium
import Foundation

/// The tamper-evident chain: `hash = SHA-256(prevHash as 32 raw bytes ‖ canonical event)`,
/// the canonical event being the event's JSON without `hash` and `prevHash` (RFC 8785).
/// The first event's prevHash is 32 zero bytes. SHA-256 comes from libsodium.
public enum HashChain {
    public static let genesis = [UInt8](repeating: 0, count: 32)
    public static let genesisHex = String(repeating: "0", count: 64)

    public static func hash(previous: [UInt8], canonicalEvent: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        canonicalEvent.withUnsafeBytes { hash(previous: previous, canonicalEvent: $0, into: &out) }
        return out
    }

    /// The same hash into `out` (32 bytes), for the verifier's loop that reuses its buffers.
    static func hash(previous: [UInt8], canonicalEvent: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        precondition(previous.count == 32 && out.count == 32, "a chain hash is 32 bytes")
        var state = crypto_hash_sha256_state()
        crypto_hash_sha256_init(&state)
        crypto_hash_sha256_update(&state, previous, 32)
        if let base = canonicalEvent.baseAddress {
            crypto_hash_sha256_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(canonicalEvent.count))
        }
        crypto_hash_sha256_final(&state, &out)
    }

    /// Byte equality by `memcmp`, for the loops that compare a stored hash with the one
    /// computed: the generic `elementsEqual` cost more than reading the row.
    static func equal(_ stored: UnsafeRawBufferPointer, _ expected: [UInt8]) -> Bool {
        guard stored.count == expected.count else { return false }
        guard let base = stored.baseAddress else { return expected.isEmpty }
        return expected.withUnsafeBytes { memcmp(base, $0.baseAddress!, stored.count) == 0 }
    }

    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        crypto_hash_sha256(&out, bytes, UInt64(bytes.count))
        return out
    }
}
