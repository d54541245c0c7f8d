import Foundation
import StrataCore
import Testing

/// A type that uses every container an `Encoder` offers, by hand: nested keyed and unkeyed
/// containers, super encoders, a key encoded twice, nil, and every integer width.
private struct HandEncoded: Encodable {
    var text: String
    var numbers: [Int64]

    enum Keys: String, CodingKey { case b, a, nested, list, dup, `super`, wrapper, z }
    enum NestedKeys: String, CodingKey { case y, x }

    func encode(to encoder: any Encoder) throws {
        var keyed = encoder.container(keyedBy: Keys.self)
        try keyed.encode(text, forKey: .b)
        try keyed.encodeNil(forKey: .a)
        var nested = keyed.nestedContainer(keyedBy: NestedKeys.self, forKey: .nested)
        try nested.encode(Int8.min, forKey: .y)
        try nested.encode(UInt32.max, forKey: .x)
        var list = keyed.nestedUnkeyedContainer(forKey: .list)
        for number in numbers { try list.encode(number) }
        try list.encodeNil()
        var inner = list.nestedContainer(keyedBy: NestedKeys.self)
        try inner.encode(true, forKey: .x)
        var innerList = list.nestedUnkeyedContainer()
        try innerList.encode("é\u{1}")
        try keyed.encode(1, forKey: .dup)
        try keyed.encode("last", forKey: .dup)
        try "from super".encode(to: keyed.superEncoder())
        try [UInt16.max].encode(to: keyed.superEncoder(forKey: .wrapper))
        // Filled after the key after it was added: the order of encoding is not the order written.
        try nested.encode("late", forKey: .x)
        try keyed.encode(Wrapper(inner: ["k": 2]), forKey: .z)
    }
}

/// A single-value wrapper around a container value.
private struct Wrapper: Encodable {
    var inner: [String: Int]

    func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        try single.encode(inner)
    }
}

private struct Empty: Encodable {
    func encode(to encoder: any Encoder) throws {}
}

@Suite("Canonical encoder")
struct CanonicalEncoderTests {
    /// The reference: the value as a `JSONValue` tree, then written by the canonical writer.
    private func viaTree<T: Encodable>(_ value: T) throws -> [UInt8] {
        CanonicalJSON.bytes(try JSONValueEncoder.encode(value))
    }

    @Test func everyContainerKindAsTheTreeWritesIt() throws {
        let value = HandEncoded(text: "quote \" and \\", numbers: [0, -1, Int64.max, Int64.min])
        let bytes = try CanonicalEncoder.encode(value)
        #expect(bytes == (try viaTree(value)))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"a":null,"b":"quote \" and \\","dup":"last","list":[0,-1,9223372036854775807,"#
                + #"-9223372036854775808,null,{"x":true},["é\u0001"]],"nested":{"x":"late","y":-128},"#
                + #""super":"from super","wrapper":[65535],"z":{"k":2}}"#)
    }

    @Test func leavesAndEmptyValues() throws {
        #expect(try CanonicalEncoder.encode("a\nb") == Array(#""a\nb""#.utf8))
        #expect(try CanonicalEncoder.encode(-42) == Array("-42".utf8))
        #expect(try CanonicalEncoder.encode(Int64.min) == Array("-9223372036854775808".utf8))
        #expect(try CanonicalEncoder.encode(false) == Array("false".utf8))
        #expect(try CanonicalEncoder.encode([Int]()) == Array("[]".utf8))
        #expect(try CanonicalEncoder.encode([String: Int]()) == Array("{}".utf8))
        #expect(try CanonicalEncoder.encode(Empty()) == Array("{}".utf8))
        #expect(try CanonicalEncoder.encode([String?.none, "x"]) == Array(#"[null,"x"]"#.utf8))
    }

    @Test func keysSortByUTF16CodeUnits() throws {
        // U+1F600 sorts before U+E000 in UTF-16 (its first unit is 0xD83D), after it in UTF-8.
        let value = ["\u{1F600}": 1, "\u{E000}": 2, "a": 3, "B": 4]
        #expect(try CanonicalEncoder.encode(value) == (try viaTree(value)))
        let text = String(decoding: try CanonicalEncoder.encode(value), as: UTF8.self)
        #expect(text == "{\"B\":4,\"a\":3,\"\u{1F600}\":1,\"\u{E000}\":2}")
    }

    @Test func refusesWhatHasNoCanonicalFormNamingWhere() {
        #expect(throws: EncodingError.self) { try CanonicalEncoder.encode(["rate": 0.5]) }
        do {
            _ = try CanonicalEncoder.encode(["outer": [UInt64.max]])
            Issue.record("a 64-bit unsigned maximum was encoded")
        } catch let EncodingError.invalidValue(_, context) {
            #expect(context.codingPath.map(\.stringValue) == ["outer", "0"])
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// Random nested documents of dictionaries, arrays, strings (escapes and non-ASCII
    /// included), integers and optionals: the two encoders agree on every one.
    @Test func agreesWithTheTreeOnRandomDocuments() throws {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("aZ09_\"\\/\u{0}\u{1F}\u{7F}é✓😀\u{2028}\u{E000} ")
        func text() -> String {
            String((0..<Int.random(in: 0...6, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
        }
        func document(_ depth: Int) -> Node {
            switch Int.random(in: 0..<(depth > 3 ? 3 : 6), using: &rng) {
            case 0: return .text(text())
            case 1: return .number(Int64.random(in: Int64.min...Int64.max, using: &rng))
            case 2: return .optional(Bool.random(using: &rng) ? nil : text())
            case 3: return .list((0..<Int.random(in: 0...4, using: &rng)).map { _ in document(depth + 1) })
            default:
                var members: [String: Node] = [:]
                for _ in 0..<Int.random(in: 0...5, using: &rng) { members[text()] = document(depth + 1) }
                return .object(members)
            }
        }
        for _ in 0..<500 {
            let value = document(0)
            #expect(try CanonicalEncoder.encode(value) == (try viaTree(value)))
        }
    }

    private indirect enum Node: Encodable {
        case text(String), number(Int64), optional(String?), list([Node]), object([String: Node])

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .text(let value): try value.encode(to: encoder)
            case .number(let value): try value.encode(to: encoder)
            case .optional(let value): try value.encode(to: encoder)
            case .list(let value): try value.encode(to: encoder)
            case .object(let value): try value.encode(to: encoder)
            }
        }
    }
}
