import StrataCore
import StrataTesting
import Testing

/// Reads one value of any shape, checked canonical; nil when the reader gives up.
private func canonicalBytes(_ bytes: [UInt8]) -> [UInt8]? {
    CanonicalJSONReader.read(bytes) { reader throws(CanonicalJSONReader.GiveUp) in
        reader.copyBytes(try reader.canonicalValue())
    }
}

/// A random document: objects with ASCII keys, arrays, strings (now and then needing an
/// escape or holding multi-byte UTF-8), integers at their extremes, booleans and null.
private func randomValue(_ random: inout SplitMix64, depth: Int = 0) -> JSONValue {
    switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &random) {
    case 0:
        return .integer([0, 1, -1, 42, -900, Int64.max, Int64.min, 1 << 60].randomElement(using: &random)!)
    case 1:
        let pieces = ["a", "Z", "0", " ", "é", "中", "😀", "/", "\u{2028}", "\"", "\\", "\n", "\u{1F}"]
        let plain = Int.random(in: 0..<6, using: &random) > 0
        let count = Int.random(in: 0...8, using: &random)
        return .string((0..<count).map { _ in pieces[Int.random(in: 0..<(plain ? 9 : 13), using: &random)] }.joined())
    case 2:
        return [.bool(true), .bool(false), .null].randomElement(using: &random)!
    case 3:
        return .string("plain")
    case 4:
        return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in randomValue(&random, depth: depth + 1) })
    default:
        let keys = ["a", "b", "B", "aa", "ab", "a_b", "zeta", "Z1", "1", ""]
        var members: [String: JSONValue] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            members[keys.randomElement(using: &random)!] = randomValue(&random, depth: depth + 1)
        }
        return .object(members)
    }
}

@Suite struct CanonicalJSONReaderTests {
    /// Canonical documents without escapes are read whole; whatever the reader accepts,
    /// mangled or not, `JSONParser` reads too, and writing that back gives the same bytes.
    @Test func acceptsOnlyWhatIsCanonical() throws {
        let seed: UInt64 = 0x5EED_C0DE
        var random = SplitMix64(seed: seed)
        let interesting = Array(#"{}[]:,"\-0 1.eEntf"#.utf8) + [0x09, 0x80, 0xC3, 0xA9, 0xED, 0xFF]
        var accepted = 0
        for _ in 0..<3000 {
            let canonical = CanonicalJSON.bytes(randomValue(&random))
            if !canonical.contains(UInt8(ascii: "\\")) {
                let text = String(decoding: canonical, as: UTF8.self)
                #expect(canonicalBytes(canonical) == canonical, "seed \(seed): \(text)")
            }
            var mangled = canonical
            let at = Int.random(in: 0..<mangled.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: mangled[at] = interesting.randomElement(using: &random)!
            case 1: mangled.insert(interesting.randomElement(using: &random)!, at: at)
            default: mangled.remove(at: at)
            }
            guard let read = canonicalBytes(mangled) else { continue }
            accepted += 1
            let text = String(decoding: mangled, as: UTF8.self)
            let parsed = try #require(try? JSONParser.parse(mangled), "seed \(seed): \(text)")
            #expect(CanonicalJSON.bytes(parsed) == mangled && read == mangled, "seed \(seed)")
        }
        #expect(accepted > 100, "seed \(seed): only \(accepted) mangled documents were still canonical")
    }

    /// Integers in canonical form are read; every other spelling is given up, even those
    /// the parser takes.
    @Test(arguments: [
        ("0", 0), ("7", 7), ("-7", -7), ("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min),
        ("-0", nil), ("07", nil), ("1.0", nil), ("1e3", nil), ("9223372036854775808", nil),
        ("-9223372036854775809", nil), ("+1", nil), ("", nil), (" 1", nil), ("1 ", nil),
    ] as [(String, Int64?)])
    func readsIntegersInCanonicalFormOnly(_ text: String, _ expected: Int64?) {
        let read = CanonicalJSONReader.read(Array(text.utf8)) { reader throws(CanonicalJSONReader.GiveUp) in
            try reader.integer()
        }
        #expect(read == expected)
    }

    /// Members are read in key order, optional ones absent or null; a member out of order,
    /// unknown or repeated leaves one unread, and the reader gives up.
    @Test func readsMembersInKeyOrder() {
        func read(_ text: String) -> String? {
            CanonicalJSONReader.read(Array(text.utf8)) { r throws(CanonicalJSONReader.GiveUp) in
                try r.object { r throws(CanonicalJSONReader.GiveUp) in
                    let a = try r.int("a")
                    let b = try r.optionalString("b")
                    let c = try r.date("c")
                    return "\(a) \(b ?? "-") \(c)"
                }
            }
        }
        #expect(read(#"{"a":1,"b":"x","c":"2026-11-20"}"#) == "1 x 2026-11-20")
        #expect(read(#"{"a":1,"c":"2026-11-20"}"#) == "1 - 2026-11-20")
        #expect(read(#"{"a":1,"b":null,"c":"2026-11-20"}"#) == "1 - 2026-11-20")
        #expect(read(#"{"a":1,"c":"2026-11-20","b":"x"}"#) == nil)
        #expect(read(#"{"a":1,"b":"x","b":"x","c":"2026-11-20"}"#) == nil)
        #expect(read(#"{"a":1,"b":"x","c":"2026-11-20","d":0}"#) == nil)
        #expect(read(#"{"a":1,"b":"x","c":"2026-02-30"}"#) == nil)
        #expect(read(#"{"a":1,"b":"\u0078","c":"2026-11-20"}"#) == nil)
        #expect(read(#"{"a":1,"b":"x","c":"2026-11-20"} "#) == nil)
    }
}
