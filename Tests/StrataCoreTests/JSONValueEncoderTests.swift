import Foundation
import StrataCore
import Testing

private struct Line: Codable, Equatable {
    var description: String
    var quantityMilli: Int64
    var discountBp: Int?
    var tags: [String]
}

private enum Status: String, Codable { case active = "ACTIVE", closed = "CLOSED" }

private struct Document: Codable, Equatable {
    var id: String
    var status: Status
    var lines: [Line]
    var totals: [String: Int64]
    var matrix: [[Int]]
    var flag: Bool
    var note: String?
    var nested: Nested?

    struct Nested: Codable, Equatable {
        var widths: [UInt8]
        var small: Int8
        var large: UInt64
    }
}

/// Foundation's encoder, parsed back: what the canonical writer consumed before.
private func viaFoundation<T: Encodable>(_ value: T) throws -> JSONValue {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.withoutEscapingSlashes]
    return try JSONParser.parse(try encoder.encode(value))
}

@Suite("JSONValue encoder")
struct JSONValueEncoderTests {
    fileprivate static let documents: [Document] = [
        Document(
            id: "inv-1", status: .active,
            lines: [
                Line(description: "Quote \" backslash \\ slash / tab \t nul \u{0} é ✓ 😀 \u{2028}", quantityMilli: 1500, discountBp: 250, tags: []),
                Line(description: "", quantityMilli: Int64.min, discountBp: nil, tags: ["a", "b"]),
            ],
            totals: ["z": 1, "a": Int64.max, "É": 0], matrix: [[], [1, 2], [-3]], flag: true, note: nil,
            nested: .init(widths: [0, 255], small: -128, large: UInt64(Int64.max))),
        Document(id: "", status: .closed, lines: [], totals: [:], matrix: [], flag: false, note: "n", nested: nil),
    ]

    @Test(arguments: documents)
    fileprivate func encodesWhatFoundationEncodedParsedBack(_ document: Document) throws {
        #expect(try JSONValueEncoder.encode(document) == viaFoundation(document))
        #expect(try CanonicalJSON.encode(document) == CanonicalJSON.bytes(viaFoundation(document)))
    }

    @Test func absentOptionalsAreOmittedAndNullsKept() throws {
        let value = try JSONValueEncoder.encode(Self.documents[1])
        #expect(value["nested"] == nil)
        #expect(value["note"] == .string("n"))
        #expect(try JSONValueEncoder.encode([String?.none, "x"]) == .array([.null, .string("x")]))
    }

    @Test func leavesAndEmptyContainersEncodeAsThemselves() throws {
        #expect(try JSONValueEncoder.encode("text") == .string("text"))
        #expect(try JSONValueEncoder.encode(42) == .integer(42))
        #expect(try JSONValueEncoder.encode([Int]()) == .array([]))
        #expect(try JSONValueEncoder.encode([String: Int]()) == .object([:]))
    }

    @Test func refusesWhatHasNoCanonicalForm() {
        #expect(throws: EncodingError.self) { try JSONValueEncoder.encode(["rate": 0.5]) }
        #expect(throws: EncodingError.self) { try JSONValueEncoder.encode([UInt64.max]) }
    }
}
