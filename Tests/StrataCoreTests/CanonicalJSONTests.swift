import Foundation
import StrataCore
import StrataTesting
import Testing

// RFC 8785 (JSON Canonicalization Scheme) conformance for documents without floating-point
// numbers: what `CanonicalJSON` prints is what every hash in the store covers.
//
// Expected outputs are compared as UTF-8 bytes, never as `String`s: Swift's `String ==`
// uses Unicode canonical equivalence, which would hide a normalisation the RFC forbids.

/// Parses `input` strictly and expects its canonical bytes to be exactly `expected`'s UTF-8.
func expectCanonical(
    _ input: String, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let value = try JSONParser.parse(input)
    let actual = CanonicalJSON.bytes(value)
    #expect(
        actual == Array(expected.utf8),
        "canonical form was \(String(decoding: actual, as: UTF8.self))", sourceLocation: sourceLocation)
    // The text and byte forms agree.
    #expect(Array(CanonicalJSON.string(value).utf8) == actual, sourceLocation: sourceLocation)
}

@Suite("RFC 8785 examples")
struct RFC8785ExampleTests {
    /// RFC 8785 §3.2.2.2 (and the §3.2.4 output): the string sample, without the
    /// "numbers" member (Strata has no floating point), with the "literals" member.
    @Test func stringEscapingSample() throws {
        try expectCanonical(
            #"""
            {
              "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
              "literals": [null, true, false]
            }
            """#,
            #"{"literals":[null,true,false],"string":"€$\u000f\nA'B\"\\\\\"/"}"#)
    }

    /// RFC 8785 §3.2.3: properties sort by their names' UTF-16 code units, so the emoji
    /// (high surrogate D83D) sorts before U+FB33 although its code point is larger.
    @Test func sortingSample() throws {
        let input = #"""
            {
              "\u20ac": "Euro Sign",
              "\r": "Carriage Return",
              "\ufb33": "Hebrew Letter Dalet With Dagesh",
              "1": "One",
              "\ud83d\ude00": "Emoji: Grinning Face",
              "\u0080": "Control",
              "\u00f6": "Latin Small Letter O With Diaeresis"
            }
            """#
        let expected =
            "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\","
            + "\"\u{F6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20AC}\":\"Euro Sign\","
            + "\"\u{1F600}\":\"Emoji: Grinning Face\",\"\u{FB33}\":\"Hebrew Letter Dalet With Dagesh\"}"
        try expectCanonical(input, expected)

        let keys = try #require(try JSONParser.parse(input).objectValue).keys
        let sorted = CanonicalJSON.sortedKeys(keys)
        #expect(sorted.map { $0.unicodeScalars.map(\.value) } == [[0x0D], [0x31], [0x80], [0xF6], [0x20AC], [0x1F600], [0xFB33]])
        // Code point order would put U+FB33 before U+1F600: the test can tell them apart.
        let byCodePoint = keys.sorted { $0.unicodeScalars.map(\.value).lexicographicallyPrecedes($1.unicodeScalars.map(\.value)) }
        #expect(byCodePoint != sorted)
    }

    /// UTF-16 order again, at the BMP's edge: U+10000 is D800 DC00 in UTF-16, so it sorts
    /// before U+FFFD and U+E000 (derived from §3.2.3's rule; not an RFC example).
    @Test func supplementaryPlaneKeysSortByTheirSurrogates() {
        let keys = ["\u{FFFD}", "\u{10000}", "\u{E000}", "\u{D7FF}", "z"]
        #expect(
            CanonicalJSON.sortedKeys(keys).map { $0.unicodeScalars.first!.value } == [0x7A, 0xD7FF, 0x10000, 0xE000, 0xFFFD])
    }
}

/// The cyberphone/json-canonicalization test data (the RFC author's reference suite),
/// the cases that have no floating-point numbers.
@Suite("JCS reference test data")
struct JCSTestDataTests {
    /// testdata/input/weird.json. The published output holds U+0080 (a key) and U+007F
    /// (in a value) as raw, invisible characters; they are written as escapes here, which
    /// is what RFC 8785 §3.2.2.2 says (only U+0000–U+001F, `"` and `\` are escaped).
    @Test func weird() throws {
        try expectCanonical(
            #"""
            {
              "\u20ac": "Euro Sign",
              "1": "One",
              "\u0080": "Control\u007f",
              "\ud83d\ude02": "Smiley",
              "\u00f6": "Latin Small Letter O With Diaeresis",
              "\ufb33": "Hebrew Letter Dalet With Dagesh",
              "</script>": "Browser Challenge"
            }
            """#,
            "{\"1\":\"One\",\"</script>\":\"Browser Challenge\",\"\u{80}\":\"Control\u{7F}\","
                + "\"\u{F6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20AC}\":\"Euro Sign\","
                + "\"\u{1F602}\":\"Smiley\",\"\u{FB33}\":\"Hebrew Letter Dalet With Dagesh\"}")
    }

    /// testdata/input/french.json: sorting ignores locale (é = U+00E9 < ê = U+00EA).
    @Test func french() throws {
        try expectCanonical(
            "{\n  \"peach\": \"This sorting order\",\n  \"p\u{E9}ch\u{E9}\": \"is wrong according to French\",\n"
                + "  \"p\u{EA}che\": \"but canonicalization MUST\",\n  \"sin\":   \"ingnore locale\"\n}\n",
            "{\"peach\":\"This sorting order\",\"p\u{E9}ch\u{E9}\":\"is wrong according to French\","
                + "\"p\u{EA}che\":\"but canonicalization MUST\",\"sin\":\"ingnore locale\"}")
    }

    /// testdata/input/unicode.json: strings are not normalised.
    @Test func unicodeIsNotNormalised() throws {
        try expectCanonical(
            #"{"Unnormalized Unicode":"\u1e0d\u0307"}"#, "{\"Unnormalized Unicode\":\"\u{1E0D}\u{0307}\"}")
        // Not in the suite, same rule: A + COMBINING RING stays two scalars, never U+00C5.
        let bytes = CanonicalJSON.bytes(.string("A\u{030A}"))
        #expect(bytes == [0x22, 0x41, 0xCC, 0x8A, 0x22])
    }

    /// testdata/input/structures.json, with its one float `56.0` written as the integer 56
    /// (Strata refuses fractional numbers; JCS prints 56.0 as 56, so the output is the suite's).
    @Test func structures() throws {
        try expectCanonical(
            #"""
            {
              "1": {"f": {"f": "hi","F": 5} ,"\n": 56},
              "10": { },
              "": "empty",
              "a": { },
              "111": [ { } ],
              "A": { }
            }
            """#,
            #"{"":"empty","1":{"\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{}],"A":{},"a":{}}"#)
    }

    /// testdata/input/arrays.json; its output file is not at hand, so the expected text is
    /// derived from the rules: array order kept, members sorted, no whitespace.
    @Test func arrays() throws {
        try expectCanonical(
            "[\n  56,\n  {\n    \"d\": true,\n    \"10\": null,\n    \"1\": [ ]\n  }\n]",
            #"[56,{"1":[],"10":null,"d":true}]"#)
    }

    /// testdata/input/simpleString.json: a top-level string.
    @Test func simpleString() throws {
        try expectCanonical(#"    "this is a test string 1235""#, #""this is a test string 1235""#)
    }
}

@Suite("Canonical strings")
struct CanonicalStringTests {
    /// RFC 8785 §3.2.2.2 (ECMAScript JSON.stringify): \b \t \n \f \r, other controls as
    /// \u00xx with lowercase hex.
    @Test(arguments: 0..<0x20)
    func controlCharacterIsEscaped(_ code: Int) {
        let short: [Int: String] = [0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"]
        let hex = String(code, radix: 16)
        let escape = short[code] ?? "\\u00" + (hex.count == 1 ? "0" + hex : hex)
        let value = JSONValue.string("a" + String(Character(Unicode.Scalar(UInt8(code)))) + "b")
        #expect(CanonicalJSON.bytes(value) == Array(("\"a" + escape + "b\"").utf8))
    }

    @Test func lowercaseHexInEscapes() {
        #expect(CanonicalJSON.string(.string("\u{1A}\u{1B}\u{1F}\u{0B}")) == #""\u001a\u001b\u001f\u000b""#)
    }

    /// Everything from U+0020 up is literal except `"` and `\`: `/`, DEL, C1 controls,
    /// U+2028/U+2029, BOM, non-BMP.
    @Test(arguments: ["/", "\u{7F}", "\u{80}", "\u{9F}", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{FFFF}", "\u{10FFFF}", "<>&'"])
    func literalCharacters(_ text: String) {
        #expect(CanonicalJSON.bytes(.string(text)) == [0x22] + Array(text.utf8) + [0x22])
    }

    @Test func quoteAndBackslash() {
        #expect(CanonicalJSON.string(.string(#"say "hi" \ \\"#)) == #""say \"hi\" \\ \\\\""#)
    }

    @Test func keysAreEscapedLikeValues() {
        #expect(CanonicalJSON.string(["a\"b\n/\u{1}": 1]) == #"{"a\"b\n/\u0001":1}"#)
    }
}

@Suite("Canonical structure")
struct CanonicalStructureTests {
    @Test func nestedObjectsAreSortedAtEveryDepth() throws {
        try expectCanonical(
            #"{"b":{"z":1,"a":{"y":[{"d":1,"c":{"k":2,"j":[{"n":0,"m":1}]}}],"x":0}},"a":[],"B":null}"#,
            #"{"B":null,"a":[],"b":{"a":{"x":0,"y":[{"c":{"j":[{"m":1,"n":0}],"k":2},"d":1}]},"z":1}}"#)
    }

    @Test func noInsignificantWhitespace() throws {
        let value = try JSONParser.parse(" {\n\t\"a b\" :\r\n [ 1 ,\t2 , { \"c\" : \" x \" } ] , \"d\" : { } } \n")
        #expect(CanonicalJSON.string(value) == #"{"a b":[1,2,{"c":" x "}],"d":{}}"#)
    }

    @Test(arguments: [
        (Int64.min, "-9223372036854775808"), (Int64.max, "9223372036854775807"), (0, "0"), (-1, "-1"),
        (1_000_000, "1000000"), (42, "42"),
    ] as [(Int64, String)])
    func integersPrintPlainly(_ value: Int64, _ text: String) throws {
        #expect(CanonicalJSON.string(.integer(value)) == text)
        #expect(try JSONParser.parse(text) == .integer(value))
    }

    /// RFC 8785 (ECMAScript Number.prototype.toString): -0 prints as 0.
    @Test func negativeZeroPrintsAsZero() throws {
        try expectCanonical("-0", "0")
        try expectCanonical("[-0,{\"a\":-0}]", #"[0,{"a":0}]"#)
    }

    @Test func literals() {
        #expect(CanonicalJSON.string([nil, true, false, [], [:]]) == "[null,true,false,[],{}]")
    }

    static let roundTripInputs = [
        #"{"z":[1,-2,{"y":null,"x":true}],"a":"\u00e9\ud83d\ude00\t","":{}}"#,
        #"[[[[]]],{},"",0,-9223372036854775808,9223372036854775807]"#,
        "\"\\u0000\\u001f\\\\\\\"/\u{2028}\"",
        #"{"loan":{"id":"L1","amountCents":1000000,"schedule":[{"n":1,"due":"2026-12-20"}]},"ok":false}"#,
    ]

    /// parse → canonical → parse gives the same value, and the canonical form is a fixed point.
    @Test(arguments: roundTripInputs)
    func parseCanonicalParseRoundTrips(_ input: String) throws {
        let value = try JSONParser.parse(input)
        let canonical = CanonicalJSON.bytes(value)
        let reparsed = try JSONParser.parse(canonical)
        #expect(reparsed == value)
        #expect(CanonicalJSON.bytes(reparsed) == canonical)
    }

    @Test func appendAddsToExistingBytes() {
        var out = Array("prefix:".utf8)
        CanonicalJSON.append(["b": 2, "a": 1], to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #"prefix:{"a":1,"b":2}"#)
    }
}

@Suite("CanonicalJSON.encode of Codable values")
struct CanonicalEncodableTests {
    struct Inner: Codable, Equatable {
        var zulu: Bool
        var alpha: [Int64]
    }

    struct Sample: Codable, Equatable {
        var zeta: Int
        var alpha: String
        var middle: String?
        var nested: Inner
        var count: Int64?
    }

    @Test func absentOptionalsAreOmittedAndKeysSorted() throws {
        let sample = Sample(zeta: 3, alpha: "a/b \u{2028}", middle: nil, nested: Inner(zulu: true, alpha: [2, 1]), count: nil)
        let bytes = try CanonicalJSON.encode(sample)
        #expect(String(decoding: bytes, as: UTF8.self) == "{\"alpha\":\"a/b \u{2028}\",\"nested\":{\"alpha\":[2,1],\"zulu\":true},\"zeta\":3}")
        #expect(!String(decoding: bytes, as: UTF8.self).contains("null"))
        #expect(try CanonicalJSON.decode(Sample.self, from: bytes) == sample)
    }

    @Test func presentOptionalsAreWritten() throws {
        let sample = Sample(zeta: -1, alpha: "", middle: "m", nested: Inner(zulu: false, alpha: []), count: .min)
        let bytes = try CanonicalJSON.encode(sample)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"alpha":"","count":-9223372036854775808,"middle":"m","nested":{"alpha":[],"zulu":false},"zeta":-1}"#)
        #expect(try CanonicalJSON.decode(Sample.self, from: bytes) == sample)
    }

    /// The canonical bytes of a Codable value equal those of the same JSONValue.
    @Test func encodeAgreesWithBytes() throws {
        let value: JSONValue = ["b": ["y": "\u{1}", "x": [1, 2]], "a": nil, "c": "\u{10FFFF}"]
        #expect(try CanonicalJSON.encode(value) == CanonicalJSON.bytes(value))
    }

    struct Fractional: Encodable {
        var rate = 1.5
    }

    @Test func fractionalNumbersAreRefused() {
        #expect(throws: EncodingError.self) { try CanonicalJSON.encode(Fractional()) }
    }
}

// MARK: - Cross-check with Python

/// Canonicalises each JSON text (one per line, no raw newlines) with Python's
/// `json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.
func pythonCanonical(_ inputs: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
    let script = """
        import json, sys
        lines = sys.stdin.buffer.read().decode("utf-8").split("\\n")
        out = [json.dumps(json.loads(l), sort_keys=True, separators=(",", ":"), ensure_ascii=False) for l in lines if l]
        sys.stdout.buffer.write(("\\n".join(out) + "\\n").encode("utf-8"))
        """
    let result = try ChildProcess.run(
        URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script], stdin: inputs.joined(separator: "\n"))
    try #require(result.exitCode == 0, "python3 failed: \(result.stderr)", sourceLocation: sourceLocation)
    var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if lines.last == "" { lines.removeLast() }
    return lines
}

@Suite("Cross-check with Python's json.dumps")
struct PythonCrossCheckTests {
    /// Objects with ASCII keys only: there Python's code point sort and RFC 8785's UTF-16
    /// sort agree (CONTRACT.md, Integrity).
    static let inputs: [String] = [
        #"{"b": 1, "a": "x\u0000y\u001fz\u007f", "c": [true, false, null]}"#,
        #"{"quote": "\"", "backslash": "\\", "slash": "\/ and /", "ws": "\t\b\f\n\r", "vt": "\u000b"}"#,
        #"{"ls": "\u2028\u2029", "euro": "\u20ac", "emoji": "\ud83d\ude00", "nbsp": "\u00a0", "bom": "\ufeff", "c1": "\u0085"}"#,
        #"{"min": -9223372036854775808, "max": 9223372036854775807, "zero": 0, "neg": -42, "negzero": -0}"#,
        #"{"nested": {"z": {"b": [1, {"y": 2, "x": 1}], "a": {}}, "A": []}, "": "empty key", "_": 1, "0": 2, "~": 3}"#,
        #"[1, "two", {"three": 3}, [], {}, [[null]]]"#,
        "\"raw UTF-8: \u{E9} \u{65E5}\u{672C} \u{1F600} \u{10FFFF}\"",
        #"{"event": {"position": 42, "stream": "loan-L1", "data": {"notes": "</script> & 'quotes'"}, "metadata": {"actor": "u-1"}}}"#,
        "true", "null", "-1",
    ]

    @Test func canonicalStringEqualsPythonJSONDumps() throws {
        // Every control character, DEL, and a few non-ASCII scalars in one string, written
        // canonically by us and re-read by Python.
        let everything = String(String.UnicodeScalarView((0..<0x20).map { Unicode.Scalar(UInt8($0)) } + ["\u{7F}", "\u{80}", "\u{2028}", "é"]))
        let allControls = CanonicalJSON.string(["all": .string(everything), "KEY": 1])
        let inputs = Self.inputs + [allControls]

        let python = try pythonCanonical(inputs)
        try #require(python.count == inputs.count)
        for (input, expected) in zip(inputs, python) {
            let ours = CanonicalJSON.bytes(try JSONParser.parse(input))
            #expect(ours == Array(expected.utf8), "input \(input): ours \(String(decoding: ours, as: UTF8.self)), python \(expected)")
        }
    }
}

/// A string literal is the same bytes whichever collection holds its UTF-8: a String, its
/// `utf8` view and an array are scanned in one piece, anything else byte by byte.
@Suite struct CanonicalStringLiteralTests {
    @Test(arguments: [
        "", "plain", "é ✓ \u{2028} 𝄞", "quote \" backslash \\ slash /", "\u{0}\u{1}\u{8}\u{9}\u{a}\u{c}\u{d}\u{1f}",
        String(repeating: "x\"", count: 300),
    ])
    func everyHolderOfTheBytesWritesTheSameLiteral(_ text: String) {
        var fromString: [UInt8] = []
        CanonicalJSON.appendString(text, to: &fromString)
        #expect(fromString == Array(CanonicalJSON.string(.string(text)).utf8))
        var fromView: [UInt8] = []
        CanonicalJSON.appendString(utf8: text.utf8, to: &fromView)
        var fromArray: [UInt8] = []
        CanonicalJSON.appendString(utf8: Array(text.utf8), to: &fromArray)
        var fromLazy: [UInt8] = []
        let lazy = text.utf8.lazy.map { $0 }
        #expect(lazy.withContiguousStorageIfAvailable { _ in true } == nil)
        CanonicalJSON.appendString(utf8: lazy, to: &fromLazy)
        #expect(fromView == fromString)
        #expect(fromArray == fromString)
        #expect(fromLazy == fromString)
    }
}

/// Integers are written digit by digit on the stack and copied out in one piece.
@Suite struct CanonicalIntegerTests {
    @Test(arguments: [0, 7, -7, 10, -10, 99, 100, 1_000_000_007, Int64.max, Int64.min, -1] as [Int64])
    func everyIntegerIsItsDecimalText(_ value: Int64) {
        var out: [UInt8] = Array("x".utf8)
        CanonicalJSON.appendInteger(value, to: &out)
        #expect(out == Array("x\(value)".utf8))
    }
}
