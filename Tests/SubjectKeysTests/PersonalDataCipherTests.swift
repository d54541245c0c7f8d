import Events
import Foundation
import StrataCore
import StrataTesting
import SubjectKeys
import Testing

@Suite("Sealing and opening personal data")
struct PersonalDataCipherTests {
    let key = SubjectKey.generate(for: DataSubject(.account, "A1"))

    private func box(_ sealed: PersonalData) throws -> (keyId: Substring, box: [UInt8]) {
        try #require(PersonalDataCipher.parse(sealed))
    }

    @Test func aSealedValueOpensWithItsKeyForItsStream() throws {
        let sealed = PersonalDataCipher.seal("Asha Rao", key: key, stream: "account-A1")
        #expect(sealed.isSealed)
        #expect(sealed.value.hasPrefix("pd1.\(key.id)."))
        #expect(!sealed.value.contains("Asha"))
        let (keyId, bytes) = try box(sealed)
        #expect(keyId == key.id[...])
        // 24-byte nonce, 8 bytes of text, 16-byte tag.
        #expect(bytes.count == 24 + 8 + 16)
        #expect(PersonalDataCipher.open(box: bytes, keyId: keyId, secret: key.secret, stream: "account-A1") == "Asha Rao")
    }

    @Test func sealingTwiceGivesDifferentBytes() {
        let first = PersonalDataCipher.seal("Asha Rao", key: key, stream: "account-A1")
        let second = PersonalDataCipher.seal("Asha Rao", key: key, stream: "account-A1")
        #expect(first != second)
    }

    @Test func nonAsciiAndEmptyTextRoundTrip() throws {
        for text in ["", "ಆಶಾ ರಾವ್", "line\nbreak \"quoted\" \\ \u{2028}"] {
            let (keyId, bytes) = try box(PersonalDataCipher.seal(text, key: key, stream: "user-U1"))
            #expect(PersonalDataCipher.open(box: bytes, keyId: keyId, secret: key.secret, stream: "user-U1") == text)
        }
    }

    @Test func anAlteredValueDoesNotOpen() throws {
        let (keyId, bytes) = try box(PersonalDataCipher.seal("+919845012345", key: key, stream: "account-A1"))
        for index in [0, 23, 24, bytes.count - 1] {
            var altered = bytes
            altered[index] ^= 0x01
            #expect(PersonalDataCipher.open(box: altered, keyId: keyId, secret: key.secret, stream: "account-A1") == nil)
        }
        let short = Array(bytes.dropLast())
        #expect(PersonalDataCipher.open(box: short, keyId: keyId, secret: key.secret, stream: "account-A1") == nil)
    }

    @Test func anotherKeyDoesNotOpenIt() throws {
        let (keyId, bytes) = try box(PersonalDataCipher.seal("Asha Rao", key: key, stream: "account-A1"))
        let other = SubjectKey.generate(for: DataSubject(.account, "A1"))
        #expect(other.id != key.id)
        #expect(PersonalDataCipher.open(box: bytes, keyId: keyId, secret: other.secret, stream: "account-A1") == nil)
    }

    @Test func theStreamAndTheKeyIdAreBound() throws {
        let (keyId, bytes) = try box(PersonalDataCipher.seal("Asha Rao", key: key, stream: "account-A1"))
        #expect(PersonalDataCipher.open(box: bytes, keyId: keyId, secret: key.secret, stream: "account-A2") == nil)
        #expect(PersonalDataCipher.open(box: bytes, keyId: keyId, secret: key.secret, stream: "invoice-A1") == nil)
        let otherId = "account:A1:0000000000000000"
        #expect(PersonalDataCipher.open(box: bytes, keyId: otherId, secret: key.secret, stream: "account-A1") == nil)
    }

    @Test func onlyTheSealedFormParses() {
        #expect(PersonalDataCipher.parse("Asha Rao") == nil)
        #expect(PersonalDataCipher.parse("pd1.") == nil)
        #expect(PersonalDataCipher.parse("pd1.account:A1:0011223344556677") == nil)
        #expect(PersonalDataCipher.parse("pd1.account:A1:0011223344556677.c2hvcnQ") == nil)  // too short for a box
        let long = String(repeating: "A", count: 60)
        #expect(PersonalDataCipher.parse(PersonalData("pd1.k.\(long)")) != nil)
        #expect(PersonalDataCipher.parse(PersonalData("pd1.k.\(long)=")) == nil)  // padding is not base64url here
        #expect(PersonalDataCipher.parse(PersonalData("pd1.k.\(long)+")) == nil)
    }

    @Test func keyIdsNameTheirSubject() {
        #expect(key.id.hasPrefix("account:A1:"))
        #expect(key.id.count == "account:A1:".count + 16)
        #expect(SubjectKey.subject(ofKeyId: key.id) == DataSubject(.account, "A1"))
        #expect(SubjectKey.subject(ofKeyId: "party:P-1:00112233aabbccdd") == DataSubject(.party, "P-1"))
        #expect(SubjectKey.subject(ofKeyId: "account:A1") == nil)
        #expect(SubjectKey.subject(ofKeyId: "borrower:A1:00112233aabbccdd") == nil)
        #expect(DataSubject("user:U1")?.description == "user:U1")
        #expect(DataSubject("user") == nil)
    }
}
