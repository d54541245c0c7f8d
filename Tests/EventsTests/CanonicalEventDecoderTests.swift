import Events
import Foundation
import StrataCore
import StrataTesting
import Testing

// MARK: - The reference: what decoding was before the fast path

/// The sample's type decoded from `bytes` by Foundation's decoder, behind the strict
/// parser, as `EventRegistry` decoded every event before `CanonicalEventDecoder`.
func reference(like sample: StrataEvent, _ bytes: [UInt8]) -> (any DomainEvent)? {
    func decode<E: DomainEvent>(_: E) -> (any DomainEvent)? {
        guard (try? JSONParser.parse(bytes)) != nil else { return nil }
        return try? JSONDecoder().decode(E.self, from: Data(bytes))
    }
    return decode(sample.payload)
}

/// What the registry reads from `bytes` as data of the sample's type and version.
private func registryDecode(_ sample: StrataEvent, _ bytes: [UInt8]) throws -> StrataEvent {
    try EventRegistry.decode(type: sample.eventType, schemaVersion: sample.schemaVersion, data: bytes)
}

private func same(_ a: (any DomainEvent)?, _ b: (any DomainEvent)?) -> Bool {
    func equal<E: DomainEvent>(_ a: E) -> Bool { (b as? E) == a }
    guard let a else { return b == nil }
    return equal(a)
}

// MARK: - Generated data

/// Strings that exercise the reader: plain, multi-byte UTF-8, and ones needing escapes.
func randomString(_ random: inout SplitMix64) -> String {
    let pieces = ["a", "Z", "7", "-", " ", "é", "中", "😀", "\u{2028}", "/", "\"", "\\", "\n", "\u{01}", "\u{7F}"]
    let count = Int.random(in: 0...16, using: &random)
    // Mostly plain text, so that most documents are canonical without escapes.
    let plain = Int.random(in: 0..<12, using: &random) > 0
    let choices = plain ? 10 : pieces.count
    return String((0..<count).map { _ in pieces[Int.random(in: 0..<choices, using: &random)] }.joined())
}

private let integers: [Int64] = [
    0, 1, -1, 9, 10, 99, 100, 1_000_000, -42, Int64(Int32.max), 1 << 53, (1 << 53) + 1, Int64.max, Int64.min,
    Int64.max - 1, Int64.min + 1,
]

private let enumSpellings =
    Role.allCases.map(\.rawValue) + UserStatus.allCases.map(\.rawValue) + AccountStatus.allCases.map(\.rawValue)
    + LoanFrequency.allCases.map(\.rawValue) + InterestMethod.allCases.map(\.rawValue)
    + PaymentMethod.allCases.map(\.rawValue) + PaymentType.allCases.map(\.rawValue)
    + InvoiceStatus.allCases.map(\.rawValue) + SubjectKind.allCases.map(\.rawValue) + ["weekly", "", "CASH "]

/// A leaf replaced by another of the same kind: dates by dates (some impossible), enum
/// spellings by spellings of any enum, timestamps by timestamps, other strings and
/// integers by anything of their kind.
func vary(_ leaf: JSONValue, _ random: inout SplitMix64) -> JSONValue {
    switch leaf {
    case .integer:
        return .integer(
            Bool.random(using: &random)
                ? integers.randomElement(using: &random)! : Int64.random(in: -1_000_000...1_000_000, using: &random))
    case .string(let text) where LocalDate(text) != nil:
        let odd = ["2026-02-30", "0000-01-01", "2026-1-01", "2026-01-01 ", "２026-01-01", "2024-02-29", "9999-12-31"]
        if Int.random(in: 0..<10, using: &random) == 0 { return .string(odd.randomElement(using: &random)!) }
        return .string(LocalDate(daysSinceEpoch: Int.random(in: -719_162...2_932_896, using: &random)).description)
    case .string(let text) where Timestamp(text) != nil:
        let odd = ["2026-11-20T10:00:00Z", "2026-11-20T10:00:00.1234Z", "2026-11-20T24:00:00.000Z", "2026-11-20"]
        if Int.random(in: 0..<4, using: &random) == 0 { return .string(odd.randomElement(using: &random)!) }
        let millis = Int64.random(in: 0...4_000_000_000_000, using: &random)
        return .string(Timestamp(millisecondsSinceEpoch: millis).description)
    case .string(let text) where !text.isEmpty && text.allSatisfy({ $0.isUppercase || $0 == "_" }):
        if Int.random(in: 0..<4, using: &random) > 0 { return leaf }
        return .string(enumSpellings.randomElement(using: &random)!)
    case .string:
        return .string(randomString(&random))
    case .object(let members):
        // Now and then a member goes missing (an optional one, or a required one). In key
        // order: a dictionary's own order changes from one process to the next, and with it
        // which member each draw of the seeded generator fell to.
        var varied: [String: JSONValue] = [:]
        for key in members.keys.sorted() where Int.random(in: 0..<60, using: &random) > 0 {
            varied[key] = vary(members[key]!, &random)
        }
        return .object(varied)
    case .array(let elements):
        return .array(elements.map { vary($0, &random) })
    default:
        return leaf
    }
}

/// A few random edits of the text: bytes replaced, inserted, dropped, or a stretch repeated.
private func mangle(_ bytes: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
    let interesting = Array(#"{}[]:,"\-0 9.eEnul"#.utf8) + [0x09, 0x80, 0xC3, 0xA9, 0xED, 0xFF, 0x00]
    var out = bytes
    for _ in 0...Int.random(in: 0..<2, using: &random) where !out.isEmpty {
        let at = Int.random(in: 0..<out.count, using: &random)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: out[at] = interesting.randomElement(using: &random)!
        case 1: out.insert(interesting.randomElement(using: &random)!, at: at)
        case 2: out.remove(at: at)
        default:
            let end = min(out.count, at + Int.random(in: 1...24, using: &random))
            out.insert(contentsOf: out[at..<end], at: end)
        }
    }
    return out
}

@Suite struct CanonicalEventDecoderTests {
    /// Every sample, as stored, is read by the fast path into the very same value.
    @Test(arguments: samples + sparseSamples)
    func readsEverySampleAsStored(_ event: StrataEvent) throws {
        let bytes = try event.canonicalData()
        #expect(CanonicalEventDecoder.decode(type: event.eventType, data: bytes) == event)
        #expect(try registryDecode(event, bytes) == event)
    }

    /// For generated values of every type: whatever the fast path returns is what
    /// Foundation's decoder (behind the strict parser) returns; it returns something for
    /// every canonical document Foundation accepts that has no escaped string; and the
    /// registry, fast path or not, answers exactly as Foundation does.
    @Test(arguments: samples + sparseSamples)
    func agreesWithFoundationOnGeneratedData(_ sample: StrataEvent) throws {
        let seed = UInt64(truncatingIfNeeded: sample.eventType.utf8.reduce(0) { $0 &* 31 &+ Int($1) })
        var random = SplitMix64(seed: seed)
        var read = 0
        for _ in 0..<400 {
            let bytes = CanonicalJSON.bytes(vary(try JSONParser.parse(try sample.canonicalData()), &random))
            let expected = reference(like: sample, bytes)
            let fast = CanonicalEventDecoder.decode(type: sample.eventType, data: bytes)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(fast == nil || same(fast?.payload, expected), "seed \(seed): \(text)")
            if expected != nil, !bytes.contains(UInt8(ascii: "\\")) {
                #expect(fast != nil, "seed \(seed): the fast path passed over \(text)")
            }
            #expect(same((try? registryDecode(sample, bytes))?.payload, expected), "seed \(seed): \(text)")
            if fast != nil { read += 1 }
        }
        #expect(read > 80, "seed \(seed): the fast path read only \(read) of 400 documents")
    }

    /// Mangled text (broken syntax, bad UTF-8, whitespace, repeated members, numbers out
    /// of form): the fast path never accepts what the strict parser and Foundation refuse,
    /// and never reads a value other than theirs.
    @Test(arguments: samples + sparseSamples)
    func neverAcceptsMoreThanFoundation(_ sample: StrataEvent) throws {
        let seed = UInt64(truncatingIfNeeded: sample.eventType.utf8.reduce(7) { $0 &* 131 &+ Int($1) })
        var random = SplitMix64(seed: seed)
        let canonical = try sample.canonicalData()
        var refused = 0
        for _ in 0..<600 {
            let bytes = mangle(canonical, &random)
            let expected = reference(like: sample, bytes)
            let fast = CanonicalEventDecoder.decode(type: sample.eventType, data: bytes)
            if let fast {
                #expect(same(fast.payload, expected), "seed \(seed): \(String(decoding: bytes, as: UTF8.self))")
            }
            if expected == nil { refused += 1 }
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(same((try? registryDecode(sample, bytes))?.payload, expected), "seed \(seed): \(text)")
        }
        #expect(refused > 100, "seed \(seed): only \(refused) of 600 mangled documents were refused")
    }

    /// Documents the general path reads but the fast path passes over, each for its reason.
    @Test func passesOverWhatItDoesNotRead() throws {
        let type = LoanClosed.eventType
        let canonical = #"{"closedOn":"2026-12-20","loanId":"loan-1","paymentId":"pay-1"}"#
        #expect(CanonicalEventDecoder.decode(type: type, data: Array(canonical.utf8)) != nil)
        for text in [
            #"{"closedOn":"2026-12-20","loanId":"loan-\u0031","paymentId":"pay-1"}"#,  // an escape
            #"{"closedOn":"2026-12-20", "loanId":"loan-1","paymentId":"pay-1"}"#,  // whitespace
            #"{"loanId":"loan-1","closedOn":"2026-12-20","paymentId":"pay-1"}"#,  // out of order
            #"{"closedOn":"2026-12-20","extra":1,"loanId":"loan-1","paymentId":"pay-1"}"#,  // unknown member
        ] {
            let bytes = Array(text.utf8)
            #expect(CanonicalEventDecoder.decode(type: type, data: bytes) == nil, "\(text)")
            let general = try EventRegistry.decode(type: type, schemaVersion: 1, data: bytes)
            let closed = LoanClosed(loanId: "loan-1", closedOn: LocalDate("2026-12-20")!, paymentId: "pay-1")
            #expect(general == .loanClosed(closed))
        }
        // A type it does not know is left to the registry, which refuses it.
        #expect(CanonicalEventDecoder.decode(type: "NoSuchEvent", data: Array("{}".utf8)) == nil)
    }
}
