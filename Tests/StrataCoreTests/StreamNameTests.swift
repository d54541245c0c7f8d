import Foundation
import StrataCore
import Testing

@Suite("Identifier")
struct IdentifierTests {
    @Test(arguments: [1, 2, 63, 64])
    func validLengths(_ length: Int) {
        #expect(Identifier.isValid(String(repeating: "a", count: length)))
    }

    @Test(arguments: [0, 65, 200])
    func invalidLengths(_ length: Int) {
        #expect(!Identifier.isValid(String(repeating: "a", count: length)))
    }

    @Test(arguments: [
        "L1", "svc-mobile", "A_Z-09", "0a1b-2c", "_", "-", "123e4567-e89b-12d3-a456-426614174000", "01ARZ3NDEKTSV4RRFFQ69G5FAV",
    ])
    func validIdentifiers(_ id: String) {
        #expect(Identifier.isValid(id))
    }

    @Test(arguments: [
        "a b", "a.b", "a/b", "a:b", "a+b", "a@b", "a\n", "\u{E9}", "a\u{0}", "a\u{301}", "ａ", "a,b", "a=b", " ", "a\t",
    ])
    func invalidCharacters(_ id: String) {
        #expect(!Identifier.isValid(id))
    }

    @Test func customMaximumLength() {
        #expect(Identifier.maximumLength == 64)
        #expect(Identifier.isValid("abcd", maximumLength: 4))
        #expect(!Identifier.isValid("abcde", maximumLength: 4))
    }
}

@Suite("StreamName")
struct StreamNameTests {
    @Test(arguments: [
        ("loan-L1", "loan", "L1"), ("loan-0a1b-2c", "loan", "0a1b-2c"), ("settings-global", "settings", "global"),
        ("user-u-1-", "user", "u-1-"), ("loan--", "loan", "-"),
        ("loan-123e4567-e89b-12d3-a456-426614174000", "loan", "123e4567-e89b-12d3-a456-426614174000"),
    ])
    func parses(_ raw: String, _ category: String, _ id: String) throws {
        let name = try #require(StreamName(raw))
        #expect(name.category == category)
        #expect(name.id == id)
        #expect(name.description == raw)
        #expect(StreamName(category: category, id: id) == name)
    }

    @Test(arguments: [
        "loan", "Loan-L1", "LOAN-L1", "loan-", "-L1", "", "-", "lo an-L1", "loan2-L1", "loan_x-L1", "loan-L 1", "loan-L.1",
        "lo\u{E1}n-L1", "loan-\u{E9}",
    ])
    func refuses(_ raw: String) {
        #expect(StreamName(raw) == nil)
    }

    @Test func categoryLength() {
        let longest = String(repeating: "a", count: 32)
        #expect(StreamName(longest + "-x")?.category == longest)
        #expect(StreamName(longest + "a-x") == nil)
        #expect(StreamName.isValidCategory("a"))
        #expect(!StreamName.isValidCategory(""))
    }

    @Test func idLength() {
        #expect(StreamName("loan-" + String(repeating: "1", count: 64)) != nil)
        #expect(StreamName("loan-" + String(repeating: "1", count: 65)) == nil)
    }

    /// Equality, hashing and order go by the name as written, which says the parts too.
    @Test func namesAreEqualHashedAndOrderedByTheirText() {
        let names = ["loan-L1", "loan-L1", "loan-L-1", "loans-L1", "agent-L1"].compactMap(StreamName.init)
        #expect(names.count == 5)
        #expect(Set(names).count == 4)
        #expect(StreamName(category: "loan", id: "L-1") == StreamName("loan-L-1"))
        #expect(StreamName("loan-L1") != StreamName(category: "loans", id: "L1"))
        #expect(names.sorted().map(\.description) == ["agent-L1", "loan-L-1", "loan-L1", "loan-L1", "loans-L1"])
    }

    /// The text joined from the parts, short (kept inside the string) and long (allocated).
    @Test func aNameJoinsItsParts() {
        let parts = [
            ("a", "1"), ("loan", "L1"), ("invoiceseries", "INV-2026"), ("user", String(repeating: "u", count: 60)),
        ]
        for (category, id) in parts {
            let name = StreamName(category: category, id: id)
            #expect(name?.description == category + "-" + id)
            #expect(name == StreamName(category + "-" + id))
        }
    }

    @Test func componentInitialiserRefusesWhatParsingRefuses() {
        #expect(StreamName(category: "Loan", id: "L1") == nil)
        #expect(StreamName(category: "loan", id: "") == nil)
        #expect(StreamName(category: "", id: "L1") == nil)
        #expect(StreamName(category: "loan", id: "L 1") == nil)
    }

    @Test func ordering() throws {
        let names = try ["user-u1", "loan-L2", "loan-L10", "loan-L1"].map { try #require(StreamName($0)) }
        #expect(names.sorted().map(\.description) == ["loan-L1", "loan-L10", "loan-L2", "user-u1"])
    }

    struct Holder: Codable, Equatable {
        var stream: StreamName
    }

    @Test func codable() throws {
        let holder = Holder(stream: try #require(StreamName("loan-0a1b-2c")))
        let bytes = try CanonicalJSON.encode(holder)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"stream":"loan-0a1b-2c"}"#)
        #expect(try CanonicalJSON.decode(Holder.self, from: bytes) == holder)
        #expect(throws: DecodingError.self) {
            try CanonicalJSON.decode(Holder.self, from: Array(#"{"stream":"nodash"}"#.utf8))
        }
    }
}
