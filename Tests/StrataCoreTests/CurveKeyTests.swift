import StrataCore
import Testing

/// The key pairs of libzmq's own CURVE documentation and tests (zmq_curve(7)).
enum DocumentedCurveKeys {
    static let clientPublic = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"
    static let clientSecret = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"
    static let serverPublic = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
    static let serverSecret = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"

    static func key(_ z85: String) -> CurveKey { CurveKey(z85: z85)! }
}

@Suite("CURVE keys")
struct CurveKeyTests {
    /// ZeroMQ RFC 32's test vector: the server secret key above as raw bytes.
    static let rfc32Bytes: [UInt8] = [
        0x8E, 0x0B, 0xDD, 0x69, 0x76, 0x28, 0xB9, 0x1D, 0x8F, 0x24, 0x55, 0x87, 0xEE, 0x95, 0xC5, 0xB0,
        0x4D, 0x48, 0x96, 0x3F, 0x79, 0x25, 0x98, 0x77, 0xB4, 0x9C, 0xD9, 0x06, 0x3A, 0xEA, 0xD3, 0xB7,
    ]

    @Test func z85DecodesAndEncodesTheRFCVector() throws {
        let key = try #require(CurveKey(z85: DocumentedCurveKeys.serverSecret))
        #expect(key.bytes == Self.rfc32Bytes)
        #expect(CurveKey(bytes: Self.rfc32Bytes)?.z85 == DocumentedCurveKeys.serverSecret)
    }

    @Test func anyThirtyTwoBytesRoundTrip() throws {
        for seed in [0, 1, 77, 255] {
            let bytes = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ seed) }
            let key = try #require(CurveKey(bytes: bytes))
            #expect(key.z85.utf8.count == 40)
            #expect(CurveKey(z85: key.z85) == key)
        }
        #expect(CurveKey(bytes: Array(repeating: 0, count: 32))?.z85 == String(repeating: "0", count: 40))
        #expect(CurveKey(bytes: Array(repeating: 0, count: 31)) == nil)
        #expect(CurveKey(bytes: Array(repeating: 0, count: 33)) == nil)
    }

    /// A key with its last character replaced.
    static func withLast(_ character: String) -> String {
        String(DocumentedCurveKeys.clientPublic.dropLast()) + character
    }

    static let notKeys: [String] = [
        "", withLast(""), DocumentedCurveKeys.clientPublic + "0",
        // Characters outside Z85's alphabet.
        withLast(" "), withLast("\""), withLast("\\"), withLast("~"), withLast(","), withLast("_"), withLast("|"),
        withLast(";"),
        // Every group of five worth 85^5 - 1, more than 32 bits hold.
        String(repeating: "#", count: 40),
    ]

    @Test(arguments: notKeys)
    func z85RefusesWhatIsNotAKey(_ text: String) {
        #expect(CurveKey(z85: text) == nil)
    }

    @Test func theDocumentedPairsArePairs() throws {
        let client = try #require(
            CurveKeyPair(
                publicKey: DocumentedCurveKeys.key(DocumentedCurveKeys.clientPublic),
                secretKey: DocumentedCurveKeys.key(DocumentedCurveKeys.clientSecret)))
        #expect(client.publicKey.z85 == DocumentedCurveKeys.clientPublic)
        #expect(
            CurveKeyPair.publicKey(of: DocumentedCurveKeys.key(DocumentedCurveKeys.serverSecret))?.z85
                == DocumentedCurveKeys.serverPublic)
        // Halves of two different pairs are refused.
        #expect(
            CurveKeyPair(
                publicKey: DocumentedCurveKeys.key(DocumentedCurveKeys.serverPublic),
                secretKey: DocumentedCurveKeys.key(DocumentedCurveKeys.clientSecret)) == nil)
    }

    @Test func generatedPairsAreFreshAndConsistent() throws {
        let first = try #require(CurveKeyPair.generate())
        let second = try #require(CurveKeyPair.generate())
        #expect(first.publicKey != second.publicKey)
        #expect(first.secretKey != second.secretKey)
        #expect(CurveKeyPair.publicKey(of: first.secretKey) == first.publicKey)
        #expect(CurveKeyPair(publicKey: first.publicKey, secretKey: first.secretKey) == first)
        #expect(CurveKeyPair(publicKey: second.publicKey, secretKey: first.secretKey) == nil)
    }
}
