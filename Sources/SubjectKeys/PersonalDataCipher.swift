import CSodium
import Events

/// The sealed form of one personal field, and the two operations on it.
///
/// `pd1.<key id>.<base64url(nonce ‖ ciphertext ‖ tag)>`: XChaCha20-Poly1305 (libsodium's
/// `crypto_aead_xchacha20poly1305_ietf`) under the subject's key, with a random 24-byte
/// nonce, and as associated data `strata-pd1`, the key id and the event's stream, so that
/// a sealed value copied into another stream, or altered by one bit, does not open. It stays
/// one JSON string, so events keep their schemas, and the hash chain covers these bytes,
/// which never change: destroying the key is the whole erasure.
public enum PersonalDataCipher {
    static let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_npubbytes())
    static let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_abytes())
    private static let variant = sodium_base64_VARIANT_URLSAFE_NO_PADDING

    /// `clear` sealed under `key` for an event of `stream`.
    public static func seal(_ clear: String, key: SubjectKey, stream: String) -> PersonalData {
        Sodium.ready()
        let message = Array(clear.utf8)
        let ad = associatedData(keyId: key.id, stream: stream)
        var box = [UInt8](repeating: 0, count: nonceBytes + message.count + tagBytes)
        var sealedLength: UInt64 = 0
        box.withUnsafeMutableBufferPointer { out in
            let nonce = out.baseAddress!
            randombytes_buf(nonce, nonceBytes)
            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                nonce + nonceBytes, &sealedLength, message, UInt64(message.count), ad, UInt64(ad.count), nil, nonce,
                key.secret)
        }
        return PersonalData(PersonalData.sealedPrefix + key.id + "." + base64url(box))
    }

    /// The parts of a sealed value, or nil when `value` is not in the sealed form.
    public static func parse(_ value: PersonalData) -> (keyId: Substring, box: [UInt8])? {
        guard value.isSealed else { return nil }
        let rest = value.value.dropFirst(PersonalData.sealedPrefix.count)
        guard let dot = rest.firstIndex(of: "."), let box = bytes(base64url: rest[rest.index(after: dot)...]),
            box.count >= nonceBytes + tagBytes
        else { return nil }
        return (rest[..<dot], box)
    }

    /// The clear text of `box` (from `parse`), or nil when `secret` does not open it for
    /// `stream`: another key, another stream, or altered bytes.
    public static func open(box: [UInt8], keyId: some StringProtocol, secret: [UInt8], stream: String) -> String? {
        let ad = associatedData(keyId: String(keyId), stream: stream)
        var message = [UInt8](repeating: 0, count: box.count - nonceBytes - tagBytes)
        var length: UInt64 = 0
        let result = box.withUnsafeBufferPointer { input in
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                &message, &length, nil, input.baseAddress! + nonceBytes, UInt64(box.count - nonceBytes), ad,
                UInt64(ad.count), input.baseAddress!, secret)
        }
        guard result == 0 else { return nil }
        return String(validating: message[..<Int(length)], as: UTF8.self)
    }

    static func associatedData(keyId: String, stream: String) -> [UInt8] {
        var ad = Array("strata-pd1\n".utf8)
        ad.append(contentsOf: keyId.utf8)
        ad.append(UInt8(ascii: "\n"))
        ad.append(contentsOf: stream.utf8)
        return ad
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        // sodium_base64_ENCODED_LEN for the unpadded variant, with its terminating NUL.
        let length = bytes.count / 3 * 4 + (bytes.count % 3 == 0 ? 0 : bytes.count % 3 + 1) + 1
        var out = [CChar](repeating: 0, count: length)
        sodium_bin2base64(&out, length, bytes, bytes.count, variant)
        return String(decoding: out.prefix(length - 1).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func bytes(base64url text: Substring) -> [UInt8]? {
        let input = Array(text.utf8)
        guard !input.isEmpty else { return nil }
        var out = [UInt8](repeating: 0, count: input.count * 3 / 4 + 1)
        var length = 0
        let decoded = input.withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { chars -> Bool in
                var end: UnsafePointer<CChar>?
                let result = sodium_base642bin(
                    &out, out.count, chars.baseAddress, input.count, nil, &length, &end, variant)
                // The whole text must be base64url, not a prefix of it.
                return result == 0 && end == chars.baseAddress! + input.count
            }
        }
        return decoded ? Array(out[..<length]) : nil
    }
}
