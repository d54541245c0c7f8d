import Bus
import CommandService
import EventStore
import StrataCore
import Testing

@Suite("History requests")
struct HistoryRequestTests {
    private func malformed(_ text: String) -> String? {
        guard case .failure(let problem) = HistoryRequest.parse(Array(text.utf8)) else { return nil }
        #expect(problem.error.code == .malformed)
        #expect(problem.id == nil)
        return problem.error.reason
    }

    @Test func readsAFullRequestAndDefaultsTheLimit() throws {
        let full = try HistoryRequest.parse(Array(#"{"after":41,"limit":500,"categories":["loan","agent"]}"#.utf8)).get()
        #expect(full == HistoryRequest(after: 41, limit: 500, categories: ["loan", "agent"]))
        #expect(full.filter == .categories(["loan", "agent"]))
        #expect(full.problem == nil)
        let bare = try HistoryRequest.parse(Array(#"{"after":0}"#.utf8)).get()
        #expect(bare.limit == HistoryRequest.defaultLimit)
        #expect(bare.filter == .all)
        #expect(try HistoryRequest.parse(full.json).get() == full, "json round-trips")
    }

    @Test func openIsAFlagThatDefaultsToFalse() throws {
        let open = try HistoryRequest.parse(Array(#"{"after":0,"open":true}"#.utf8)).get()
        #expect(open == HistoryRequest(after: 0, open: true))
        #expect(try HistoryRequest.parse(Array(#"{"after":0,"open":false}"#.utf8)).get().open == false)
        #expect(try HistoryRequest.parse(Array(#"{"after":0}"#.utf8)).get().open == false)
        #expect(malformed(#"{"after":0,"open":1}"#) == "INVALID_OPEN_FIELD")
        #expect(malformed(#"{"after":0,"open":"true"}"#) == "INVALID_OPEN_FIELD")
        #expect(String(decoding: HistoryRequest(after: 5, limit: 10, open: true).json, as: UTF8.self) == #"{"after":5,"limit":10,"open":true}"#)
        #expect(String(decoding: HistoryRequest(after: 5, limit: 10).json, as: UTF8.self) == #"{"after":5,"limit":10}"#)
    }

    @Test func theBodysOwnFieldsAreMalformedWhenMissingOrMistyped() {
        #expect(malformed("not json") == "BODY_NOT_JSON")
        #expect(malformed("[1]") == "BODY_NOT_OBJECT")
        #expect(malformed(#"{"after":1,"from":2}"#) == "UNKNOWN_BODY_FIELD")
        #expect(malformed(#"{"limit":10}"#) == "INVALID_AFTER_FIELD")
        #expect(malformed(#"{"after":"10"}"#) == "INVALID_AFTER_FIELD")
        #expect(malformed(#"{"after":1,"limit":"10"}"#) == "INVALID_LIMIT_FIELD")
        // A number the fields cannot hold is of the wrong type, named as any other.
        #expect(malformed(#"{"after":1,"limit":1.5}"#) == "INVALID_LIMIT_FIELD")
        #expect(malformed(#"{"after":1,"limit":99999999999999999999}"#) == "INVALID_LIMIT_FIELD")
        #expect(malformed(#"{"after":1e3}"#) == "INVALID_AFTER_FIELD")
        #expect(malformed(#"{"after":-9223372036854775809}"#) == "INVALID_AFTER_FIELD")
        #expect(malformed(#"{"after":1,"categories":["loan",0.5]}"#) == "INVALID_CATEGORIES_FIELD")
        #expect(malformed(#"{"after":1,"open":1e0}"#) == "INVALID_OPEN_FIELD")
        #expect(malformed(#"{"after":1,"limit":1.}"#) == "BODY_NOT_JSON", "a number's own syntax is the body's")
        #expect(malformed(#"{"after":1,"categories":"loan"}"#) == "INVALID_CATEGORIES_FIELD")
        #expect(malformed(#"{"after":1,"categories":["loan",3]}"#) == "INVALID_CATEGORIES_FIELD")
        #expect(malformed(#"{"after":1,"after":2}"#) == "BODY_NOT_JSON", "duplicate keys are not strict JSON")
    }

    @Test func valuesOutOfRangeAreInvalidWithEveryProblemListed() throws {
        let request = try HistoryRequest.parse(Array(#"{"after":-1,"limit":10001,"categories":["loan","Loan-X"]}"#.utf8)).get()
        let problem = try #require(request.problem)
        #expect(problem.code == .invalid)
        #expect(problem.reason == "OUT_OF_RANGE")
        #expect(
            problem.details == [
                .init(field: "after", reason: "OUT_OF_RANGE"), .init(field: "limit", reason: "OUT_OF_RANGE"),
                .init(field: "categories[1]", reason: "INVALID_FORMAT"),
            ])
        #expect(HistoryRequest(after: 0, limit: 0).problem?.details == [.init(field: "limit", reason: "OUT_OF_RANGE")])
        #expect(HistoryRequest(after: 0, limit: 10_000).problem == nil)
        #expect(HistoryRequest(after: 0, categories: []).problem?.details == [.init(field: "categories", reason: "EMPTY")])
    }
}
