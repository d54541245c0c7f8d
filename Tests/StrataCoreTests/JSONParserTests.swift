import StrataCore
import Testing

/// One input the parser must refuse, with the reason and byte offset it must report.
struct RefusedJSON: Sendable, CustomTestStringConvertible {
    let bytes: [UInt8]
    let reason: JSONParseError.Reason
    let offset: Int
    let note: String

    init(_ text: String, _ reason: JSONParseError.Reason, at offset: Int, _ note: String = "") {
        self.init(bytes: Array(text.utf8), reason, at: offset, note.isEmpty ? text : note)
    }

    init(bytes: [UInt8], _ reason: JSONParseError.Reason, at offset: Int, _ note: String) {
        self.bytes = bytes
        self.reason = reason
        self.offset = offset
        self.note = note
    }

    var testDescription: String { "\(reason.rawValue)@\(offset): \(note)" }
}

/// Expects `bytes` to be refused with exactly `reason` at `offset`.
func expectRefused(
    _ bytes: [UInt8], _ reason: JSONParseError.Reason, at offset: Int, maximumDepth: Int = JSONParser.defaultMaximumDepth,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let value = try JSONParser.parse(bytes, maximumDepth: maximumDepth)
        Issue.record("expected \(reason.rawValue) at \(offset), parsed \(value)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.reason == reason && error.offset == offset, "got \(error)", sourceLocation: sourceLocation)
    }
}

/// Wraps raw bytes in a JSON string literal.
private func quoted(_ bytes: [UInt8]) -> [UInt8] { [0x22] + bytes + [0x22] }

@Suite("JSONParser refusals")
struct JSONParserRefusalTests {
    static let invalidUTF8Cases: [RefusedJSON] = [
        RefusedJSON(bytes: quoted([0xC0, 0xAF]), .invalidUTF8, at: 1, "overlong 2-byte '/' (C0 AF)"),
        RefusedJSON(bytes: quoted([0xC1, 0xBF]), .invalidUTF8, at: 1, "overlong 2-byte (C1 BF)"),
        RefusedJSON(bytes: quoted([0xE0, 0x80, 0xAF]), .invalidUTF8, at: 1, "overlong 3-byte '/' (E0 80 AF)"),
        RefusedJSON(bytes: quoted([0xE0, 0x9F, 0xBF]), .invalidUTF8, at: 1, "overlong 3-byte U+07FF"),
        RefusedJSON(bytes: quoted([0xF0, 0x80, 0x80, 0xAF]), .invalidUTF8, at: 1, "overlong 4-byte '/'"),
        RefusedJSON(bytes: quoted([0xF0, 0x8F, 0xBF, 0xBF]), .invalidUTF8, at: 1, "overlong 4-byte U+FFFF"),
        RefusedJSON(bytes: quoted([0xED, 0xA0, 0x80]), .invalidUTF8, at: 1, "encoded high surrogate D800 (ED A0 80)"),
        RefusedJSON(bytes: quoted([0xED, 0xBF, 0xBF]), .invalidUTF8, at: 1, "encoded low surrogate DFFF (ED BF BF)"),
        RefusedJSON(
            bytes: quoted([0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80]), .invalidUTF8, at: 1, "CESU-8 surrogate pair"),
        RefusedJSON(bytes: quoted([0xF4, 0x90, 0x80, 0x80]), .invalidUTF8, at: 1, "above U+10FFFF (F4 90 80 80)"),
        RefusedJSON(bytes: quoted([0xF5, 0x80, 0x80, 0x80]), .invalidUTF8, at: 1, "lead byte F5"),
        RefusedJSON(bytes: quoted([0xFF]), .invalidUTF8, at: 1, "byte FF"),
        RefusedJSON(bytes: quoted([0x61, 0x80]), .invalidUTF8, at: 2, "lone continuation byte"),
        RefusedJSON(bytes: quoted([0xC3, 0x41]), .invalidUTF8, at: 1, "lead byte without continuation"),
        RefusedJSON(bytes: quoted([0xE2, 0x82, 0x41]), .invalidUTF8, at: 1, "3-byte sequence cut short"),
        RefusedJSON(bytes: [0x22, 0xE2, 0x82], .invalidUTF8, at: 1, "sequence cut by the end of input"),
        RefusedJSON(bytes: Array(#"{"k":"ok","\#u{E9}"#.utf8) + [0xC3], .invalidUTF8, at: 13, "inside a key, after valid UTF-8"),
    ]

    static let unexpectedEndCases: [RefusedJSON] = [
        RefusedJSON("", .unexpectedEnd, at: 0), RefusedJSON(" \n\t", .unexpectedEnd, at: 3),
        RefusedJSON("{", .unexpectedEnd, at: 1), RefusedJSON(#"{"a""#, .unexpectedEnd, at: 4),
        RefusedJSON(#"{"a":"#, .unexpectedEnd, at: 5), RefusedJSON(#"{"a":1"#, .unexpectedEnd, at: 6),
        RefusedJSON(#"{"a":1,"#, .unexpectedEnd, at: 7), RefusedJSON("[", .unexpectedEnd, at: 1),
        RefusedJSON("[1,", .unexpectedEnd, at: 3), RefusedJSON("[1", .unexpectedEnd, at: 2),
        RefusedJSON(#""abc"#, .unexpectedEnd, at: 4), RefusedJSON(#""\"#, .unexpectedEnd, at: 2),
        RefusedJSON(#""\u12"#, .unexpectedEnd, at: 3), RefusedJSON(#""\ud83d\ude"#, .unexpectedEnd, at: 9),
        RefusedJSON("tru", .unexpectedEnd, at: 0), RefusedJSON("nul", .unexpectedEnd, at: 0),
        RefusedJSON("-", .unexpectedEnd, at: 1),
    ]

    static let unexpectedCharacterCases: [RefusedJSON] = [
        RefusedJSON("x", .unexpectedCharacter, at: 0), RefusedJSON("'a'", .unexpectedCharacter, at: 0),
        RefusedJSON("{a:1}", .unexpectedCharacter, at: 1), RefusedJSON(#"{"a" 1}"#, .unexpectedCharacter, at: 5),
        RefusedJSON(#"{"a":1,}"#, .unexpectedCharacter, at: 7), RefusedJSON(#"{"a":1]"#, .unexpectedCharacter, at: 6),
        RefusedJSON("{,}", .unexpectedCharacter, at: 1), RefusedJSON("[1 2]", .unexpectedCharacter, at: 3),
        RefusedJSON("[1,]", .unexpectedCharacter, at: 3), RefusedJSON("[1}", .unexpectedCharacter, at: 2),
        RefusedJSON("[,1]", .unexpectedCharacter, at: 1), RefusedJSON("trux", .unexpectedCharacter, at: 3),
        RefusedJSON("nul1", .unexpectedCharacter, at: 3), RefusedJSON("True", .unexpectedCharacter, at: 0),
        RefusedJSON("-a", .unexpectedCharacter, at: 1), RefusedJSON("+1", .unexpectedCharacter, at: 0),
        RefusedJSON(".5", .unexpectedCharacter, at: 0), RefusedJSON("NaN", .unexpectedCharacter, at: 0),
        RefusedJSON("\u{0C}1", .unexpectedCharacter, at: 0, "form feed is not JSON whitespace"),
        RefusedJSON("\u{A0}1", .unexpectedCharacter, at: 0, "no-break space is not JSON whitespace"),
        RefusedJSON("\u{FEFF}{}", .unexpectedCharacter, at: 0, "byte order mark"),
        // Leading zeros are not JSON (RFC 8259 §6).
        RefusedJSON("01", .unexpectedCharacter, at: 1), RefusedJSON("-01", .unexpectedCharacter, at: 2),
        RefusedJSON("00", .unexpectedCharacter, at: 1), RefusedJSON("[007]", .unexpectedCharacter, at: 2),
    ]

    static let invalidEscapeCases: [RefusedJSON] = [
        RefusedJSON(#""\x""#, .invalidEscape, at: 2), RefusedJSON(#""\U0041""#, .invalidEscape, at: 2),
        RefusedJSON(#""\'""#, .invalidEscape, at: 2), RefusedJSON(#""ab\a""#, .invalidEscape, at: 4),
        RefusedJSON(#""\u12G4""#, .invalidEscape, at: 5), RefusedJSON(#""\u 123""#, .invalidEscape, at: 3),
        RefusedJSON(#""\ud800""#, .invalidEscape, at: 7, "lone high surrogate escape"),
        RefusedJSON(#""\udbff!""#, .invalidEscape, at: 7, "high surrogate then a character"),
        RefusedJSON(#""\ud800\n""#, .invalidEscape, at: 7, "high surrogate then another escape"),
        RefusedJSON(#""\ud800\u0041""#, .invalidEscape, at: 13, "high surrogate then a non-surrogate"),
        RefusedJSON(#""\ud800\ud800""#, .invalidEscape, at: 13, "two high surrogates"),
        RefusedJSON(#""\udc00""#, .invalidEscape, at: 7, "lone low surrogate escape"),
        RefusedJSON(#""\udfff\ud800""#, .invalidEscape, at: 7, "pair in the wrong order"),
    ]

    static let controlCharactersCases: [RefusedJSON] = [
        RefusedJSON("\"a\tb\"", .controlCharacterInString, at: 2), RefusedJSON("\"a\nb\"", .controlCharacterInString, at: 2),
        RefusedJSON("\"\r\"", .controlCharacterInString, at: 1),
        RefusedJSON(bytes: quoted([0x00]), .controlCharacterInString, at: 1, "NUL"),
        RefusedJSON(bytes: quoted([0x1F]), .controlCharacterInString, at: 1, "U+001F"),
        RefusedJSON("{\"a\u{1}\":1}", .controlCharacterInString, at: 3, "in a key"),
    ]

    static let numbersCases: [RefusedJSON] = [
        RefusedJSON("1.5", .fractionalNumber, at: 0), RefusedJSON("1.0", .fractionalNumber, at: 0),
        RefusedJSON("0.0", .fractionalNumber, at: 0), RefusedJSON("-2.25", .fractionalNumber, at: 0),
        RefusedJSON("1.", .fractionalNumber, at: 0), RefusedJSON("1e5", .fractionalNumber, at: 0),
        RefusedJSON("1E5", .fractionalNumber, at: 0), RefusedJSON("10e-1", .fractionalNumber, at: 0),
        RefusedJSON("[0.1]", .fractionalNumber, at: 1), RefusedJSON(#"{"rate": 4.5}"#, .fractionalNumber, at: 9),
        RefusedJSON("9223372036854775808", .numberOutOfRange, at: 0, "Int64.max + 1"),
        RefusedJSON("-9223372036854775809", .numberOutOfRange, at: 0, "Int64.min - 1"),
        RefusedJSON("18446744073709551616", .numberOutOfRange, at: 0, "2^64"),
        RefusedJSON("99999999999999999999999999999", .numberOutOfRange, at: 0),
        RefusedJSON("-99999999999999999999999999999", .numberOutOfRange, at: 0),
        RefusedJSON("[1, 9223372036854775808]", .numberOutOfRange, at: 4),
    ]

    static let duplicatesCases: [RefusedJSON] = [
        RefusedJSON(#"{"a":1,"a":2}"#, .duplicateKey, at: 7), RefusedJSON(#"{"a":1, "b":2, "a":3}"#, .duplicateKey, at: 15),
        RefusedJSON(#"{"a":1,"a":1}"#, .duplicateKey, at: 7, "same value"),
        RefusedJSON(#"{"a":1,"\u0061":2}"#, .duplicateKey, at: 7, "same key, escaped"),
        RefusedJSON(#"{"x":{"k":1,"k":2}}"#, .duplicateKey, at: 12, "nested"),
        RefusedJSON(#"{"":1,"":2}"#, .duplicateKey, at: 6, "empty key"),
        RefusedJSON(#"{"a":1,"b":{"c":2},"a":3}"#, .duplicateKey, at: 19, "after a nested object"),
        RefusedJSON(#"[{"a":1},{"a":2},{"b":1,"b":1}]"#, .duplicateKey, at: 24, "in the third of three objects"),
    ]

    static let trailingCases: [RefusedJSON] = [
        RefusedJSON("1 2", .trailingCharacters, at: 2), RefusedJSON("{} x", .trailingCharacters, at: 3),
        RefusedJSON(#""a""b""#, .trailingCharacters, at: 3), RefusedJSON("[]]", .trailingCharacters, at: 2),
        RefusedJSON("nullx", .trailingCharacters, at: 4), RefusedJSON("1x", .trailingCharacters, at: 1),
        RefusedJSON("{}\n{}", .trailingCharacters, at: 3), RefusedJSON("0 0", .trailingCharacters, at: 2),
    ]

    @Test(arguments: invalidUTF8Cases) func invalidUTF8(_ c: RefusedJSON) { expectRefused(c.bytes, c.reason, at: c.offset) }
    @Test(arguments: unexpectedEndCases) func unexpectedEnd(_ c: RefusedJSON) { expectRefused(c.bytes, c.reason, at: c.offset) }
    @Test(arguments: unexpectedCharacterCases) func unexpectedCharacter(_ c: RefusedJSON) {
        expectRefused(c.bytes, c.reason, at: c.offset)
    }
    @Test(arguments: invalidEscapeCases) func invalidEscape(_ c: RefusedJSON) { expectRefused(c.bytes, c.reason, at: c.offset) }
    @Test(arguments: controlCharactersCases) func controlCharacter(_ c: RefusedJSON) {
        expectRefused(c.bytes, c.reason, at: c.offset)
    }
    @Test(arguments: numbersCases) func number(_ c: RefusedJSON) { expectRefused(c.bytes, c.reason, at: c.offset) }
    @Test(arguments: duplicatesCases) func duplicateKey(_ c: RefusedJSON) { expectRefused(c.bytes, c.reason, at: c.offset) }
    @Test(arguments: trailingCases) func trailingCharacters(_ c: RefusedJSON) { expectRefused(c.bytes, c.reason, at: c.offset) }

    /// The tables above (and the depth suite, for TOO_DEEP) cover every reason there is today.
    /// JSONParseError.Reason is not CaseIterable, so the list of reasons is written out.
    @Test func everyReasonIsExercised() {
        let all = [
            Self.invalidUTF8Cases, Self.unexpectedEndCases, Self.unexpectedCharacterCases, Self.invalidEscapeCases, Self.controlCharactersCases,
            Self.numbersCases, Self.duplicatesCases, Self.trailingCases,
        ].joined()
        let covered = Set(all.map(\.reason.rawValue)).union([JSONParseError.Reason.tooDeep.rawValue])
        let reasons: [JSONParseError.Reason] = [
            .invalidUTF8, .unexpectedEnd, .unexpectedCharacter, .invalidEscape, .controlCharacterInString, .fractionalNumber,
            .numberOutOfRange, .duplicateKey, .tooDeep, .trailingCharacters,
        ]
        #expect(covered == Set(reasons.map(\.rawValue)))
    }

    @Test func errorDescriptionNamesReasonAndOffset() {
        do {
            _ = try JSONParser.parse("[1,]")
            Issue.record("parsed")
        } catch {
            #expect("\(error)" == "UNEXPECTED_CHARACTER at byte 3")
        }
    }
}

@Suite("JSONParser nesting limit")
struct JSONParserDepthTests {
    private static func arrays(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    private static func objects(_ depth: Int) -> String {
        String(repeating: #"{"a":"#, count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
    }

    @Test func exactlyTheDefaultLimitIsAccepted() throws {
        #expect(JSONParser.defaultMaximumDepth == 64)
        var value = try JSONParser.parse(Self.arrays(64))
        var depth = 0
        while case .array(let elements) = value {
            depth += 1
            guard let first = elements.first else { break }
            value = first
        }
        #expect(depth == 64)
        _ = try JSONParser.parse(Self.objects(64))
    }

    @Test func oneDeeperIsRefused() {
        // The 65th opening bracket is at byte 64.
        expectRefused(Array(Self.arrays(65).utf8), .tooDeep, at: 64)
        // {"a": is 5 bytes, so the 65th `{` is at byte 64 × 5.
        expectRefused(Array(Self.objects(65).utf8), .tooDeep, at: 320)
        // Mixed: arrays inside objects count together.
        let mixed = String(repeating: #"{"a":["#, count: 32) + "[]" + String(repeating: "]}", count: 32)
        expectRefused(Array(mixed.utf8), .tooDeep, at: 32 * 6)
    }

    @Test func hostileDepthIsRefusedWithoutExhaustingTheStack() {
        expectRefused(Array(String(repeating: "[", count: 1_000_000).utf8), .tooDeep, at: 64)
    }

    @Test func customLimit() throws {
        #expect(try JSONParser.parse("[[1]]", maximumDepth: 2) == [[1]])
        expectRefused(Array("[[1]]".utf8), .tooDeep, at: 1, maximumDepth: 1)
        #expect(try JSONParser.parse("7", maximumDepth: 0) == 7)
        expectRefused(Array("{}".utf8), .tooDeep, at: 0, maximumDepth: 0)
    }
}

@Suite("JSONParser acceptance")
struct JSONParserAcceptanceTests {
    @Test func whitespaceIsAcceptedAroundEveryToken() throws {
        let value = try JSONParser.parse(" \t\r\n{ \"a\" :\t[ 1 ,\n2 ] ,\r\"b\":{ } , \"c\" : \"\" } \n\r\t ")
        #expect(value == ["a": [1, 2], "b": [:], "c": ""])
    }

    /// Members are gathered for all open objects at once (each object's dictionary is made when
    /// it closes): every object gets exactly its own, whatever lies between them.
    @Test func nestedObjectsKeepTheirOwnMembers() throws {
        let value = try JSONParser.parse(
            #"{"a":{"b":{"c":1,"d":[{"e":2},{"e":3,"f":{}}]},"g":4},"h":{"a":5},"i":[{"a":{"a":6}}],"j":7}"#)
        #expect(
            value == [
                "a": ["b": ["c": 1, "d": [["e": 2], ["e": 3, "f": [:]]]], "g": 4], "h": ["a": 5], "i": [["a": ["a": 6]]],
                "j": 7,
            ])
        // The same key in sibling and nested objects is no duplicate.
        #expect(try JSONParser.parse(#"{"k":{"k":{"k":1}},"l":{"k":2}}"#) == ["k": ["k": ["k": 1]], "l": ["k": 2]])
        // After a refusal the next parse starts clean.
        expectRefused(Array(#"{"a":{"b":1,"b":2}}"#.utf8), .duplicateKey, at: 12)
        #expect(try JSONParser.parse(#"{"a":{"b":1}}"#) == ["a": ["b": 1]])
    }

    /// A repeated key is found when its object closes, so a syntax error later inside the same
    /// object is the one reported; either way the document is refused.
    @Test func aDuplicateIsFoundWhenItsObjectCloses() {
        expectRefused(Array(#"{"a":1,"a":2,]"#.utf8), .unexpectedCharacter, at: 13)
        expectRefused(Array(#"{"a":1,"a":2}]"#.utf8), .duplicateKey, at: 7)
    }

    /// `members(of:limit:)` lists a small object's members as written, and answers nil for
    /// everything else, what `parse` refuses included.
    @Test func membersOfASmallObject() throws {
        let bytes = Array(#" {"v":1, "key":"k\u0041","o":{"a":[1]}} "#.utf8)
        let members = try #require(JSONParser.members(of: bytes, limit: 3))
        #expect(members.map(\.key) == ["v", "key", "o"])
        #expect(members.map(\.value) == [1, "kA", ["a": [1]]])
        #expect(JSONParser.members(of: Array("{}".utf8), limit: 0)?.isEmpty == true)
        #expect(JSONParser.members(of: bytes, limit: 2) == nil, "more members than the limit")
        let refused = [
            #"{"a":1,"a":2}"#, #"{"a":1,"\u0061":2}"#, #"{"a":1,"b":2,"a":3}"#, #"{"a":{"b":1,"b":2}}"#, "[1]", "1",
            #""a""#, "null", "", "{", #"{"a":1}x"#, #"{"a":1,}"#, #"{"a":1.5}"#,
        ]
        for text in refused {
            #expect(JSONParser.members(of: Array(text.utf8), limit: 8) == nil, "\(text)")
        }
        // The same key in a nested object is no repetition.
        #expect(JSONParser.members(of: Array(#"{"a":{"a":1}}"#.utf8), limit: 8)?.count == 1)
    }

    @Test func allValueKinds() throws {
        let value = try JSONParser.parse(#"{"n":null,"t":true,"f":false,"i":-12,"s":"x","a":[],"o":{}}"#)
        #expect(value == ["n": nil, "t": true, "f": false, "i": -12, "s": "x", "a": [], "o": [:]])
        #expect(value["i"]?.integerValue == -12)
        #expect(value["s"]?.stringValue == "x")
        #expect(value["t"]?.boolValue == true)
        #expect(value["a"]?.arrayValue == [])
        #expect(value["o"]?.objectValue == [:])
        #expect(value["missing"] == JSONValue?.none)
        #expect(value["n"] == .some(.null))
        #expect(value["s"]?.integerValue == nil)
    }

    @Test func int64BoundsAreAccepted() throws {
        #expect(try JSONParser.parse("-9223372036854775808") == .integer(.min))
        #expect(try JSONParser.parse("9223372036854775807") == .integer(.max))
        #expect(try JSONParser.parse("[0,-0,10,-10]") == [0, 0, 10, -10])
    }

    @Test(arguments: [
        (#""\ud83d\ude00""#, 0x1F600), (#""\uD834\uDD1E""#, 0x1D11E), (#""\udbff\udfff""#, 0x10FFFF),
        (#""\ud800\udc00""#, 0x10000), (#""\u00e9""#, 0xE9), (#""\u0000""#, 0), (#""\uffff""#, 0xFFFF),
        (#""\u2028""#, 0x2028), (#""\/""#, 0x2F),
    ] as [(String, UInt32)])
    func escapesDecodeToOneScalar(_ text: String, _ scalar: UInt32) throws {
        let value = try JSONParser.parse(text)
        #expect(value.stringValue?.unicodeScalars.map(\.value) == [scalar])
    }

    @Test func shortEscapes() throws {
        #expect(try JSONParser.parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
    }

    /// Raw UTF-8 at the edges of each sequence length and around the surrogate block.
    @Test(arguments: [
        [0x7F], [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
        [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
    ] as [[UInt8]])
    func validUTF8IsAccepted(_ sequence: [UInt8]) throws {
        let value = try JSONParser.parse([0x22] + sequence + [0x22])
        #expect(value.stringValue.map { Array($0.utf8) } == sequence)
    }

    /// Strings without an escape are read straight from their bytes; one escape anywhere
    /// sends the parser back to the string's start to read it scalar by scalar. Either way
    /// the string must be the one written, so: random strings of ASCII, multi-byte text and
    /// characters that must be escaped, in every mix, printed and read back.
    @Test func stringsReadBackWithAndWithoutEscapes() throws {
        let pieces: [String] = ["a", "Z", "0", " ", "é", "€", "𝄞", "😀", "\"", "\\", "\n", "\u{1}", "\u{1F}", "/", "\u{7F}"]
        var generator = SystemRandomNumberGenerator()
        for round in 0..<2_000 {
            let count = Int.random(in: 0...(round % 7 == 0 ? 200 : 12), using: &generator)
            let text = (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let printed = CanonicalJSON.bytes(.array([.string(text), .string(text + "!")]))
            #expect(try JSONParser.parse(printed) == .array([.string(text), .string(text + "!")]), "\(text.debugDescription)")
        }
    }

    @Test func sameKeyInDifferentObjectsIsNotADuplicate() throws {
        #expect(try JSONParser.parse(#"[{"a":1},{"a":2,"A":3}]"#) == [["a": 1], ["a": 2, "A": 3]])
    }
}

/// `parseNotingNumbers`: numbers JSON allows and `JSONValue` cannot hold are values whose
/// place is noted, not faults of the document; everything else is read as `parse` reads it.
@Suite("JSONParser noting numbers")
struct JSONParserNotingNumbersTests {
    typealias Number = JSONParser.UnrepresentableNumber

    @Test(arguments: [
        ("1.5", Number.Kind.notAnInteger), ("-2.25", .notAnInteger), ("1.0", .notAnInteger), ("-0.0", .notAnInteger),
        ("0.000", .notAnInteger), ("1e5", .notAnInteger), ("1E5", .notAnInteger), ("1e+5", .notAnInteger),
        ("10e-1", .notAnInteger), ("-0e0", .notAnInteger), ("1.5E-300", .notAnInteger), ("1e999", .notAnInteger),
        ("123456789012345678901234567890.5", .notAnInteger),
        ("9223372036854775808", .aboveInt64), ("18446744073709551616", .aboveInt64),
        ("99999999999999999999999999999", .aboveInt64), ("-9223372036854775809", .belowInt64),
        ("-99999999999999999999999999999", .belowInt64),
    ])
    func aNumberAloneIsNotedAtTheRoot(_ text: String, _ kind: Number.Kind) throws {
        let (value, numbers) = try JSONParser.parseNotingNumbers(Array(text.utf8))
        #expect(value == .null)
        #expect(numbers == [Number(kind: kind, path: [])])
    }

    @Test func eachNumberIsNotedWhereItStandsInDocumentOrder() throws {
        let text =
            #"{"a": [1, {"b": 1.5, "c": 2}, 3e2], "d": {"e": {"f": -99999999999999999999}}, "g": 7, "h": [[1E400]]}"#
        let (value, numbers) = try JSONParser.parseNotingNumbers(Array(text.utf8))
        #expect(value == ["a": [1, ["b": nil, "c": 2], nil], "d": ["e": ["f": nil]], "g": 7, "h": [[nil]]])
        #expect(
            numbers == [
                Number(kind: .notAnInteger, path: [.key("a"), .index(1), .key("b")]),
                Number(kind: .notAnInteger, path: [.key("a"), .index(2)]),
                Number(kind: .belowInt64, path: [.key("d"), .key("e"), .key("f")]),
                Number(kind: .notAnInteger, path: [.key("h"), .index(0), .index(0)]),
            ])
    }

    /// Only the numbers are taken: every other fault is refused as `parse` refuses it, a
    /// number's own bad syntax included.
    @Test(arguments: [
        RefusedJSON("1.", .unexpectedEnd, at: 2), RefusedJSON("[1.]", .unexpectedCharacter, at: 3),
        RefusedJSON("1.e5", .unexpectedCharacter, at: 2), RefusedJSON("1e", .unexpectedEnd, at: 2),
        RefusedJSON("1e+", .unexpectedEnd, at: 3), RefusedJSON("[1e-]", .unexpectedCharacter, at: 4),
        RefusedJSON("1.5.3", .trailingCharacters, at: 3), RefusedJSON("1e5e5", .trailingCharacters, at: 3),
        RefusedJSON(".5", .unexpectedCharacter, at: 0), RefusedJSON("01.5", .unexpectedCharacter, at: 1),
        RefusedJSON("-.5", .unexpectedCharacter, at: 1), RefusedJSON("+1.5", .unexpectedCharacter, at: 0),
        RefusedJSON(#"{"a":1.5,"a":2}"#, .duplicateKey, at: 9), RefusedJSON("[1.5", .unexpectedEnd, at: 4),
        RefusedJSON("[1.5,]", .unexpectedCharacter, at: 5),
    ])
    func otherFaultsAreStillRefused(_ c: RefusedJSON) {
        do {
            let parsed = try JSONParser.parseNotingNumbers(c.bytes)
            Issue.record("expected \(c.reason.rawValue) at \(c.offset), parsed \(parsed)")
        } catch {
            #expect(error.reason == c.reason && error.offset == c.offset, "got \(error)")
        }
    }

    @Test func aDocumentWithoutSuchNumbersReadsAsParseReadsIt() throws {
        for text in [
            #"{"a":[1,-2,{"b":"1.5"}],"c":null,"d":9223372036854775807,"e":-9223372036854775808}"#, "0", "-0", "[]",
        ] {
            let (value, numbers) = try JSONParser.parseNotingNumbers(Array(text.utf8))
            #expect(value == (try JSONParser.parse(text)))
            #expect(numbers.isEmpty)
        }
    }

    @Test func parseStillRefusesWhatNotingTakes() {
        expectRefused(Array(#"{"a":[1.5]}"#.utf8), .fractionalNumber, at: 6)
        expectRefused(Array(#"{"a":[9223372036854775808]}"#.utf8), .numberOutOfRange, at: 6)
        #expect(JSONParser.members(of: Array(#"{"ts":1.5}"#.utf8), limit: 4) == nil)
    }
}
