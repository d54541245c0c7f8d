import CommandService
import StrataCore
import Testing

/// A number JSON allows and a body cannot hold (a fraction, an exponent, an integer beyond
/// 64 bits): in the payload, content for the command's rules to name (INVALID); in the
/// body's own fields, a value of the wrong type (MALFORMED), as CONTRACT.md "Commands" has it.
@Suite("Command body numbers")
struct CommandBodyTests {
    private func parse(_ text: String) -> Result<CommandBody, RequestGate.BodyProblem> {
        CommandBody.parse(Array(text.utf8))
    }

    @Test func numbersInThePayloadAreReadWithTheirPlacesFromThePayload() throws {
        let body = try parse(
            #"{"id":"c-1","type":"CreateInvoice","actor":"a","payload":{"n":1500.5,"lines":[{"q":1e3},"#
                + #"{"q":100000000000000000000}],"m":-99999999999999999999}}"#
        ).get()
        #expect(body.id == "c-1" && body.type == "CreateInvoice")
        #expect(body.payload == ["n": nil, "lines": [["q": nil], ["q": nil]], "m": nil])
        #expect(
            body.payloadNumbers == [
                .init(kind: .notAnInteger, path: [.key("n")]),
                .init(kind: .notAnInteger, path: [.key("lines"), .index(0), .key("q")]),
                .init(kind: .aboveInt64, path: [.key("lines"), .index(1), .key("q")]),
                .init(kind: .belowInt64, path: [.key("m")]),
            ])
    }

    @Test func aBodyWithoutThemHasNone() throws {
        let body = try parse(#"{"id":"c-1","type":"X","actor":"a","payload":{"n":1,"s":"1.5"},"expectedVersion":3}"#).get()
        #expect(body.payloadNumbers.isEmpty)
        #expect(body == CommandBody(id: "c-1", type: "X", actor: "a", payload: ["n": 1, "s": "1.5"], expectedVersion: 3))
    }

    @Test(arguments: [
        (#""expectedVersion":1.5"#, "INVALID_EXPECTED_VERSION"), (#""expectedVersion":1e2"#, "INVALID_EXPECTED_VERSION"),
        (#""expectedVersion":9223372036854775808"#, "INVALID_EXPECTED_VERSION"),
        (#""correlationId":1.5"#, "INVALID_CORRELATION_ID"), (#""correlationId":[1e400]"#, "INVALID_CORRELATION_ID"),
        (#""extra":0.5"#, "UNKNOWN_BODY_FIELD"),
    ])
    func inTheBodysOwnFieldsTheyAreMalformedNamingTheField(_ member: String, _ reason: String) {
        let result = parse(#"{"id":"c-2","type":"X","actor":"a","payload":{"n":1.5},"# + member + "}")
        guard case .failure(let problem) = result else {
            Issue.record("read: \(result)")
            return
        }
        #expect(problem.error.code == .malformed && problem.error.reason == reason, "\(problem.error)")
        #expect(problem.id == "c-2")
    }

    @Test func inTheFieldsThatNameTheCommandTheyAreMalformedToo() {
        let cases = [
            (#"{"id":1.5,"type":"X","actor":"a","payload":{}}"#, "INVALID_COMMAND_ID", nil),
            (#"{"id":"c-3","type":1e3,"actor":"a","payload":{}}"#, "INVALID_TYPE_FIELD", "c-3"),
            (#"{"id":"c-3","type":"X","actor":-1e400,"payload":{}}"#, "INVALID_ACTOR_FIELD", "c-3"),
            (#"{"id":"c-3","type":"X","actor":"","payload":{}}"#, "INVALID_ACTOR_FIELD", "c-3"),
            (#"{"id":"c-3","type":"X","actor":"a b","payload":{}}"#, "INVALID_ACTOR_FIELD", "c-3"),
            (#"{"id":"c-3","type":"X","actor":"a","payload":0.5}"#, "INVALID_PAYLOAD_FIELD", "c-3"),
            (#"{"id":"c-3","type":"X","actor":"a","payload":{"n":1.}}"#, "BODY_NOT_JSON", nil),
            ("1.5", "BODY_NOT_OBJECT", nil),
        ]
        for (text, reason, id) in cases {
            guard case .failure(let problem) = parse(text) else {
                Issue.record("read: \(text)")
                continue
            }
            #expect(problem.error.code == .malformed && problem.error.reason == reason, "\(text): \(problem.error)")
            #expect(problem.id == id, "\(text)")
        }
    }
}
