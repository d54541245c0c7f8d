import Bus
import Foundation
import StrataCore
import StrataTesting
import Testing

@Suite("Request signatures")
struct RequestSignatureTests {
    /// RFC 4231 test cases 1, 2 and 6 (a key longer than the block size).
    @Test(arguments: [
        (
            [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        (
            Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        (
            [UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
    ])
    func hmacKnownAnswers(key: [UInt8], message: [UInt8], expected: String) {
        #expect(Hex.encode(RequestSignature.hmacSHA256(key: key, message: message)) == expected)
    }

    /// The signature as a client in another language computes it (Python's hmac module).
    @Test func pythonComputesTheSameSignature() throws {
        let secret = (0..<32).map { UInt8($0 * 7 % 256) }
        let body = Array(#"{"id":"c-1","type":"ApproveLoan","actor":"admin-1","payload":{"loanId":"L1"}}"#.utf8)
        let script = """
            import hmac, hashlib, sys
            secret = bytes.fromhex(sys.argv[1]); body = sys.stdin.buffer.read()
            signed = b"strata-v1\\n" + sys.argv[2].encode() + b"\\n" + sys.argv[3].encode() + b"\\n" + body
            print(hmac.new(secret, signed, hashlib.sha256).hexdigest())
            """
        let result = try ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, Hex.encode(secret), "1795176000", "svc-mobile"],
            stdin: String(decoding: body, as: UTF8.self))
        #expect(result.exitCode == 0, "\(result.stderr)")
        let ours = RequestSignature.sign(secret: secret, keyId: "svc-mobile", timestamp: 1_795_176_000, body: body)
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == Hex.encode(ours))
    }

    /// One prepared key signs message after message as HMAC keyed afresh for each would: its
    /// keyed state is copied, never advanced, and the pieces it feeds are the signed bytes.
    @Test func aPreparedKeySignsEachMessageAsAFreshHMAC() {
        let secret = (0..<32).map { UInt8(255 - $0) }
        let key = RequestSigningKey(secret: secret)
        let messages: [(keyId: String, timestamp: Int64, body: [UInt8])] = [
            ("svc-mobile", 1_795_176_000, Array(#"{"id":"c-1"}"#.utf8)),
            ("svc-mobile", 1_795_176_000, Array(#"{"id":"c-1"}"#.utf8)),
            ("", 0, []),
            ("k", -1, Array(repeating: 0x61, count: 1000)),
            ("svc-mobile", 1_795_176_001, Array(#"{"id":"c-1"}"#.utf8)),
        ]
        for (keyId, timestamp, body) in messages {
            let signed = Array("strata-v1\n\(timestamp)\n\(keyId)\n".utf8) + body
            let fresh = RequestSignature.hmacSHA256(key: secret, message: signed)
            #expect(key.signature(keyId: keyId, timestamp: timestamp, body: body) == fresh, "\(keyId) \(timestamp)")
        }
        let header = key.header(keyId: "svc", timestamp: 7, body: [1, 2, 3])
        #expect(key.isValid(header, body: [1, 2, 3]))
        #expect(!key.isValid(header, body: [1, 2]))
        #expect(!RequestSigningKey(secret: Array(secret.reversed())).isValid(header, body: [1, 2, 3]))
    }

    @Test func headersRoundTripAndVerify() throws {
        let secret = [UInt8](repeating: 9, count: 32)
        let body = Array(#"{"after":0,"limit":10}"#.utf8)
        let header = RequestSignature.header(secret: secret, keyId: "svc", timestamp: 1_800_000_000, body: body)
        let parsed = try #require(RequestHeader(json: header.json))
        #expect(parsed == header)
        #expect(String(decoding: header.json, as: UTF8.self).hasPrefix(#"{"key":"svc","sig":""#))
        #expect(RequestSignature.isValid(parsed, body: body, secret: secret))
        #expect(!RequestSignature.isValid(parsed, body: body + [0x20], secret: secret))
        #expect(!RequestSignature.isValid(parsed, body: body, secret: [UInt8](repeating: 8, count: 32)))
        var otherKey = parsed
        otherKey.keyId = "svc2"
        #expect(!RequestSignature.isValid(otherKey, body: body, secret: secret))
        var otherTime = parsed
        otherTime.timestamp += 1
        #expect(!RequestSignature.isValid(otherTime, body: body, secret: secret))
    }

    @Test(arguments: [
        "", "null", "[]", "{}", #"{"v":1,"key":"k","ts":1}"#,
        #"{"v":2,"key":"k","ts":1,"sig":"\#(String(repeating: "a", count: 64))"}"#,
        #"{"v":1,"key":"","ts":1,"sig":"\#(String(repeating: "a", count: 64))"}"#,
        #"{"v":1,"key":"k","ts":"1","sig":"\#(String(repeating: "a", count: 64))"}"#,
        #"{"v":1,"key":"k","ts":1,"sig":"\#(String(repeating: "a", count: 62))"}"#,
        #"{"v":1,"key":"k","ts":1,"sig":"\#(String(repeating: "g", count: 64))"}"#,
        #"{"v":1,"key":"k","ts":1.5,"sig":"\#(String(repeating: "a", count: 64))"}"#,
        #"{"v":1,"key":"k","ts":1,"sig":"\#(String(repeating: "a", count: 64))","x":1}"#,
        #"{"v":1,"key":"k","ts":1,"sig":"\#(String(repeating: "a", count: 64))","v":1}"#,
    ])
    func malformedHeadersAreRefused(text: String) {
        #expect(RequestHeader(json: Array(text.utf8)) == nil)
    }

    /// Headers as canonical JSON prints them are read by position; what that reads must be
    /// what the parser reads.
    @Test(arguments: [
        ("svc-mobile", Int64(1_795_000_000)), ("k", 0), ("a b!#$%&'()*+,./:;<=>?@[]^_`{|}~", -42),
        ("k", 999_999_999_999_999_999), ("k", -999_999_999_999_999_999),
    ])
    func canonicalHeadersAreReadByPositionAsTheParserReadsThem(keyId: String, timestamp: Int64) throws {
        let secret = [UInt8](repeating: 3, count: 32)
        let header = RequestSignature.header(secret: secret, keyId: keyId, timestamp: timestamp, body: [1, 2])
        let fast = try #require(RequestHeader(canonical: header.json))
        #expect(fast == header)
        #expect(RequestHeader(parsing: header.json) == header)
        #expect(RequestHeader(json: header.json) == header)
        // Uppercase hex is a signature too, for both readers.
        let upper = Array(String(decoding: header.json, as: UTF8.self).replacingOccurrences(
            of: Hex.encode(header.signature), with: Hex.encode(header.signature).uppercased()).utf8)
        #expect(RequestHeader(canonical: upper) == header)
        #expect(RequestHeader(parsing: upper) == header)
    }

    /// The header a client writes member by member is what the canonical encoder prints for
    /// the same object, escapes included.
    @Test(arguments: ["svc-mobile", "k\"q", "a\\b", "tab\t", "ké", "line\u{2028}", "/slash"])
    func aHeaderIsWrittenAsTheCanonicalEncoderPrintsIt(keyId: String) {
        let header = RequestSignature.header(
            secret: [UInt8](repeating: 5, count: 32), keyId: keyId, timestamp: -17, body: [9])
        let general = CanonicalJSON.bytes(
            .object([
                "v": .integer(1), "key": .string(keyId), "ts": .integer(-17), "sig": .string(Hex.encode(header.signature)),
            ]))
        #expect(header.json == general)
        #expect(RequestHeader(json: header.json) == header)
    }

    /// Anything but the canonical form is left to the parser, which reads it or refuses it
    /// as before.
    @Test(arguments: [
        #"{"v":1,"key":"k","ts":7,"sig":"\#(String(repeating: "ab", count: 32))"}"#,
        #"{"key":"k","sig":"\#(String(repeating: "ab", count: 32))","ts":7,"v":1} "#,
        #"{"key": "k","sig":"\#(String(repeating: "ab", count: 32))","ts":7,"v":1}"#,
        #"{"key":"k\u0041","sig":"\#(String(repeating: "ab", count: 32))","ts":7,"v":1}"#,
        #"{"key":"ké","sig":"\#(String(repeating: "ab", count: 32))","ts":7,"v":1}"#,
        #"{"key":"k","sig":"\#(String(repeating: "ab", count: 32))","ts":1000000000000000000,"v":1}"#,
    ])
    func otherFormsAreLeftToTheParser(text: String) throws {
        let bytes = Array(text.utf8)
        #expect(RequestHeader(canonical: bytes) == nil)
        let parsed = try #require(RequestHeader(parsing: bytes))
        #expect(RequestHeader(json: bytes) == parsed)
    }

    /// Near misses of the canonical form: neither reader takes them.
    @Test(arguments: [
        #"{"key":"","sig":"\#(String(repeating: "ab", count: 32))","ts":7,"v":1}"#,
        #"{"key":"k","sig":"\#(String(repeating: "ab", count: 31))","ts":7,"v":1}"#,
        #"{"key":"k","sig":"\#(String(repeating: "ag", count: 32))","ts":7,"v":1}"#,
        #"{"key":"k","sig":"\#(String(repeating: "ab", count: 32))","ts":07,"v":1}"#,
        #"{"key":"k","sig":"\#(String(repeating: "ab", count: 32))","ts":-,"v":1}"#,
        #"{"key":"k","sig":"\#(String(repeating: "ab", count: 32))","ts":,"v":1}"#,
        #"{"key":"k","sig":"\#(String(repeating: "ab", count: 32))","ts":7,"v":2}"#,
        #"{"key":"k","sig":"\#(String(repeating: "ab", count: 32))","ts":7,"v":1}x"#,
        #"{"key":"k","sig":"\#(String(repeating: "ab", count: 32))","ts":7.5,"v":1}"#,
        #"{"key":"k\","sig":"\#(String(repeating: "ab", count: 32))","ts":7,"v":1}"#,
    ])
    func nearMissesAreRefusedByBoth(text: String) {
        let bytes = Array(text.utf8)
        #expect(RequestHeader(canonical: bytes) == nil)
        #expect(RequestHeader(parsing: bytes) == nil)
        #expect(RequestHeader(json: bytes) == nil)
    }

    @Test func freshnessWindowIsThreeHundredSecondsEitherWay() {
        let now: Int64 = 1_800_000_000
        #expect(RequestSignature.isFresh(now, now: now))
        #expect(RequestSignature.isFresh(now - 300, now: now))
        #expect(RequestSignature.isFresh(now + 300, now: now))
        #expect(!RequestSignature.isFresh(now - 301, now: now))
        #expect(!RequestSignature.isFresh(now + 301, now: now))
        #expect(!RequestSignature.isFresh(.min, now: now))
        #expect(!RequestSignature.isFresh(.max, now: now))
    }
}
