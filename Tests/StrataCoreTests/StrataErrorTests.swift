import Foundation
import StrataCore
import Testing

@Suite("StrataError")
struct StrataErrorTests {
    /// The contract's fixed set of error codes (CONTRACT.md, Commands).
    @Test func codesAreTheContractsSet() {
        #expect(
            Set(StrataError.Code.allCases.map(\.rawValue))
                == [
                    "MALFORMED", "UNAUTHENTICATED", "FORBIDDEN", "INVALID", "NOT_FOUND", "CONFLICT", "REJECTED", "TOO_LARGE",
                    "UNAVAILABLE", "INTERNAL",
                ])
        #expect(StrataError.Code.allCases.count == 10)
    }

    static let samples: [StrataError] = [
        StrataError(.rejected, reason: "LOAN_NOT_PENDING", "the loan is approved already"),
        StrataError(
            .invalid, "2 problems",
            details: [.init(field: "amountCents", reason: "MUST_BE_POSITIVE"), .init(field: "loanId", reason: "REQUIRED")]),
        StrataError(.invalid, "no details listed", details: []),
        StrataError(.conflict, reason: "WRONG_EXPECTED_VERSION", "expected 2, found 3"),
        StrataError(.internal, "quotes \" and \\ and \u{1} and é"),
    ] + StrataError.Code.allCases.map { StrataError($0, "a \($0.rawValue) error") }

    @Test(arguments: samples)
    func jsonRoundTrip(_ error: StrataError) throws {
        #expect(StrataError(json: error.json) == error)
        // Through canonical bytes and the parser, as it travels in a reply.
        let bytes = CanonicalJSON.bytes(error.json)
        #expect(StrataError(json: try JSONParser.parse(bytes)) == error)
        // And through Codable.
        #expect(try JSONDecoder().decode(StrataError.self, from: JSONEncoder().encode(error)) == error)
    }

    @Test func jsonShape() {
        let rejected = StrataError(.rejected, reason: "LOAN_NOT_PENDING", "the loan is approved already")
        #expect(
            CanonicalJSON.string(rejected.json)
                == #"{"code":"REJECTED","message":"the loan is approved already","reason":"LOAN_NOT_PENDING"}"#)
        let invalid = StrataError(.invalid, "bad", details: [.init(field: "loanId", reason: "REQUIRED")])
        #expect(
            CanonicalJSON.string(invalid.json)
                == #"{"code":"INVALID","details":[{"field":"loanId","reason":"REQUIRED"}],"message":"bad"}"#)
        // Absent reason and details are omitted, never null.
        #expect(CanonicalJSON.string(StrataError(.notFound, "no such loan").json) == #"{"code":"NOT_FOUND","message":"no such loan"}"#)
    }

    @Test func detailsKeepTheirOrder() throws {
        let error = StrataError(
            .invalid, "m", details: [.init(field: "z", reason: "A"), .init(field: "a", reason: "B"), .init(field: "m", reason: "C")])
        let reread = try #require(StrataError(json: error.json))
        #expect(reread.details?.map(\.field) == ["z", "a", "m"])
    }

    @Test(arguments: [
        #"{"message":"m"}"#, #"{"code":"NOPE","message":"m"}"#, #"{"code":"INVALID"}"#, #"{"code":1,"message":"m"}"#,
        #"{"code":"INVALID","message":7}"#, #"[]"#, #""INVALID""#, #"{"code":"invalid","message":"m"}"#,
    ])
    func jsonThatIsNotAnError(_ text: String) throws {
        #expect(StrataError(json: try JSONParser.parse(text)) == nil)
    }

    @Test func description() {
        #expect(StrataError(.notFound, "no such loan").description == "NOT_FOUND: no such loan")
        #expect(
            StrataError(.rejected, reason: "LOAN_NOT_PENDING", "the loan is approved").description
                == "REJECTED LOAN_NOT_PENDING: the loan is approved")
        #expect(
            StrataError(
                .invalid, "bad payload",
                details: [.init(field: "amountCents", reason: "MUST_BE_POSITIVE"), .init(field: "loanId", reason: "REQUIRED")]
            ).description == "INVALID: bad payload [amountCents: MUST_BE_POSITIVE; loanId: REQUIRED]")
        #expect(StrataError(.invalid, "none", details: []).description == "INVALID: none")
        #expect(StrataError.FieldProblem(field: "f", reason: "R").description == "f: R")
    }

    @Test(arguments: [
        #"{"code":"INVALID","message":"m","details":[{"field":"a"}]}"#,
        #"{"code":"INVALID","message":"m","details":[{"field":"a","reason":7}]}"#,
        #"{"code":"INVALID","message":"m","details":{"field":"a","reason":"B"}}"#,
    ])
    func malformedDetailsAreRefusedNotDropped(_ text: String) throws {
        #expect(StrataError(json: try JSONParser.parse(text)) == nil)
    }
}
