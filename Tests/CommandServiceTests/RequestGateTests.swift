import Bus
import CommandService
import EventStore
import StrataCore
import Testing

private let secret = [UInt8](repeating: 7, count: 32)
private let keys = KeyFile(keys: [
    KeyFile.Key(id: "svc", secret: secret, scopes: [.commands, .history]),
    KeyFile.Key(id: "reader", secret: secret, scopes: [.history]),
])
private let now: Int64 = 1_800_000_000
private let routing: [UInt8] = [0, 1, 2, 3, 4]
private let body = Array(#"{"id":"c-1","type":"ApproveLoan","actor":"admin-1","payload":{"loanId":"L1"}}"#.utf8)

private func header(key: String = "svc", ts: Int64 = now, for body: [UInt8] = body, secret: [UInt8] = secret) -> [UInt8] {
    RequestSignature.header(secret: secret, keyId: key, timestamp: ts, body: body).json
}

private func admit(_ frames: [[UInt8]], gate: RequestGate = RequestGate(keys: keys, scope: .commands))
    -> Result<RequestGate.Admitted<CommandBody>, RequestGate.Refused>?
{
    gate.admit(frames, now: now, readBody: CommandBody.parse)
}

private func expectRefused(
    _ result: Result<RequestGate.Admitted<CommandBody>, RequestGate.Refused>?, _ code: StrataError.Code, _ reason: String,
    id: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    guard case .failure(let refused)? = result else {
        Issue.record("expected \(code.rawValue) \(reason), got \(String(describing: result))", sourceLocation: sourceLocation)
        return
    }
    #expect(refused.routingId == routing, sourceLocation: sourceLocation)
    #expect(refused.error.code == code, "\(refused.error)", sourceLocation: sourceLocation)
    #expect(refused.error.reason == reason, "\(refused.error)", sourceLocation: sourceLocation)
    #expect(refused.id == id, sourceLocation: sourceLocation)
}

@Suite("Request gate")
struct RequestGateTests {
    @Test func aSignedCommandIsAdmitted() throws {
        let admitted = try #require(try admit([routing, [], header(), body])?.get())
        #expect(admitted.routingId == routing)
        #expect(admitted.key.id == "svc")
        #expect(admitted.bodyBytes == body)
        #expect(
            admitted.body
                == CommandBody(id: "c-1", type: "ApproveLoan", actor: "admin-1", payload: ["loanId": "L1"]))
    }

    @Test func framesComeFirst() {
        #expect(admit([]) == nil)
        expectRefused(admit([routing, header(), body]), .malformed, "BAD_FRAMES")
        expectRefused(admit([routing, [1], header(), body]), .malformed, "BAD_FRAMES")
        expectRefused(admit([routing, [], header(), body, []]), .malformed, "BAD_FRAMES")
        // Too large beats every later problem, a bad signature included.
        let big = [UInt8](repeating: 0x20, count: RequestGate.defaultMaximumBodyBytes + 1)
        expectRefused(admit([routing, [], Array("junk".utf8), big]), .tooLarge, "BODY_TOO_LARGE")
        expectRefused(admit([routing, [], Array("junk".utf8), body]), .malformed, "BAD_HEADER")
    }

    @Test func malformedBodiesBeforeAuthentication() {
        func sent(_ text: String) -> [[UInt8]] {
            let bytes = Array(text.utf8)
            return [routing, [], header(key: "nobody", for: bytes), bytes]
        }
        expectRefused(admit(sent("{")), .malformed, "BODY_NOT_JSON")
        expectRefused(admit([routing, [], header(), [0xFF, 0xFE]]), .malformed, "BODY_NOT_JSON")
        expectRefused(admit(sent("[1]")), .malformed, "BODY_NOT_OBJECT")
        expectRefused(admit(sent(#"{"type":"X","actor":"a","payload":{}}"#)), .malformed, "INVALID_COMMAND_ID")
        expectRefused(admit(sent(#"{"id":"has space","type":"X","actor":"a","payload":{}}"#)), .malformed, "INVALID_COMMAND_ID")
        expectRefused(admit(sent(#"{"id":"c","actor":"a","payload":{}}"#)), .malformed, "INVALID_TYPE_FIELD", id: "c")
        expectRefused(admit(sent(#"{"id":"c","type":1,"actor":"a","payload":{}}"#)), .malformed, "INVALID_TYPE_FIELD", id: "c")
        expectRefused(admit(sent(#"{"id":"c","type":"X","payload":{}}"#)), .malformed, "INVALID_ACTOR_FIELD", id: "c")
        expectRefused(admit(sent(#"{"id":"c","type":"X","actor":"a","payload":[]}"#)), .malformed, "INVALID_PAYLOAD_FIELD", id: "c")
        expectRefused(
            admit(sent(#"{"id":"c","type":"X","actor":"a","payload":{},"expectedVersion":-1}"#)), .malformed,
            "INVALID_EXPECTED_VERSION", id: "c")
        expectRefused(
            admit(sent(#"{"id":"c","type":"X","actor":"a","payload":{},"expectedVersion":"1"}"#)), .malformed,
            "INVALID_EXPECTED_VERSION", id: "c")
        expectRefused(
            admit(sent(#"{"id":"c","type":"X","actor":"a","payload":{},"correlationId":7}"#)), .malformed,
            "INVALID_CORRELATION_ID", id: "c")
        expectRefused(
            admit(sent(#"{"id":"c","type":"X","actor":"a","payload":{},"extra":true}"#)), .malformed,
            "UNKNOWN_BODY_FIELD", id: "c")
        expectRefused(
            admit(sent(#"{"id":"c","type":"X","actor":"a","payload":{},"expectedVersion":99999999999999999999}"#)),
            .malformed, "INVALID_EXPECTED_VERSION", id: "c")
        // A number the payload cannot hold is the payload's content: the body is read, and
        // the unknown key is the problem here.
        expectRefused(
            admit(sent(#"{"id":"c","type":"X","actor":"a","payload":{"n":99999999999999999999}}"#)), .unauthenticated,
            "BAD_SIGNATURE", id: "c")
    }

    /// Of several fields a body does not define, the refusal names the first by name.
    @Test func theFirstUnknownBodyFieldByNameIsNamed() throws {
        let parsed = CommandBody.parse(
            Array(#"{"zeta":1,"id":"c","type":"X","mid":2,"actor":"a","payload":{},"alpha":3,"Id":4}"#.utf8))
        guard case .failure(let problem) = parsed else {
            Issue.record("a body with unknown fields was read: \(parsed)")
            return
        }
        #expect(problem.error.reason == "UNKNOWN_BODY_FIELD")
        #expect(problem.error.message.contains(#""Id""#), "\(problem.error.message)")
        for other in ["ID", "Id", "payloads", "", "i", "expectedversion"] { #expect(!CommandBody.isField(other)) }
    }

    @Test func authenticationThenScope() {
        expectRefused(admit([routing, [], header(key: "nobody"), body]), .unauthenticated, "BAD_SIGNATURE", id: "c-1")
        expectRefused(
            admit([routing, [], header(secret: [UInt8](repeating: 1, count: 32)), body]), .unauthenticated,
            "BAD_SIGNATURE", id: "c-1")
        expectRefused(admit([routing, [], header(for: body + [0x20]), body]), .unauthenticated, "BAD_SIGNATURE", id: "c-1")
        expectRefused(admit([routing, [], header(ts: now - 301), body]), .unauthenticated, "STALE_TIMESTAMP", id: "c-1")
        expectRefused(admit([routing, [], header(ts: now + 301), body]), .unauthenticated, "STALE_TIMESTAMP", id: "c-1")
        #expect((try? admit([routing, [], header(ts: now - 300), body])?.get()) != nil)
        expectRefused(admit([routing, [], header(key: "reader"), body]), .forbidden, "KEY_SCOPE", id: "c-1")
        let historyGate = RequestGate(keys: keys, scope: .history)
        #expect((try? admit([routing, [], header(key: "reader"), body], gate: historyGate)?.get()) != nil)
    }

    @Test func theSizeLimitIsConfigurable() {
        let gate = RequestGate(keys: keys, scope: .commands, maximumBodyBytes: body.count - 1)
        expectRefused(admit([routing, [], header(), body], gate: gate), .tooLarge, "BODY_TOO_LARGE")
    }
}

@Suite("Command replies")
struct CommandReplyTests {
    @Test func acceptedRepliesListTheEvents() {
        let reply = CommandReply.accepted(
            id: "c-1", duplicate: false,
            events: [AppendedEvent(position: 42, stream: "loan-L1", version: 2, type: "LoanApproved")])
        #expect(
            String(decoding: reply.json, as: UTF8.self)
                == #"{"duplicate":false,"events":[{"position":42,"stream":"loan-L1","type":"LoanApproved","version":2}],"id":"c-1","ok":true}"#
        )
    }

    /// An accepted reply is written member by member; whatever its id and events, it is the
    /// same reply built as a JSON value and canonicalised.
    @Test func acceptedRepliesAreTheCanonicalObject() {
        func reference(id: String, duplicate: Bool, events: [AppendedEvent]) -> String {
            let events = events.map { e -> JSONValue in
                .object([
                    "position": .integer(e.position), "stream": .string(e.stream), "version": .integer(e.version),
                    "type": .string(e.type),
                ])
            }
            return CanonicalJSON.string(
                .object([
                    "id": .string(id), "ok": .bool(true), "duplicate": .bool(duplicate), "events": .array(events),
                ]))
        }
        let events = [
            AppendedEvent(position: 1, stream: "loan-L1", version: 1, type: "LoanRequested"),
            AppendedEvent(position: Int64.max, stream: "invoiceseries-INV", version: 9_000_000_000, type: "T"),
            AppendedEvent(position: 3, stream: "", version: 0, type: ""),
        ]
        for id in ["c1", "", "quote\"and\\slash/ü😀\n", String(repeating: "x", count: 300)] {
            for duplicate in [false, true] {
                for count in 0...events.count {
                    let listed = Array(events.prefix(count))
                    let reply = CommandReply.accepted(id: id, duplicate: duplicate, events: listed)
                    let expected = reference(id: id, duplicate: duplicate, events: listed)
                    #expect(String(decoding: reply.json, as: UTF8.self) == expected)
                }
            }
        }
    }

    @Test func refusalsCarryTheErrorAndDuplicateOnlyWhenJournaled() {
        let error = StrataError(.rejected, reason: "LOAN_NOT_PENDING", "loan L1 is ACTIVE")
        #expect(
            String(decoding: CommandReply.refused(id: "c-1", duplicate: false, error: error).json, as: UTF8.self)
                == #"{"error":{"code":"REJECTED","message":"loan L1 is ACTIVE","reason":"LOAN_NOT_PENDING"},"id":"c-1","ok":false}"#
        )
        #expect(
            String(decoding: CommandReply.refused(id: "c-1", duplicate: true, error: error).json, as: UTF8.self)
                == #"{"duplicate":true,"error":{"code":"REJECTED","message":"loan L1 is ACTIVE","reason":"LOAN_NOT_PENDING"},"id":"c-1","ok":false}"#
        )
        let anonymous = CommandReply.refused(id: nil, duplicate: false, error: StrataError(.malformed, reason: "BAD_FRAMES", "x"))
        #expect(String(decoding: anonymous.json, as: UTF8.self) == #"{"error":{"code":"MALFORMED","message":"x","reason":"BAD_FRAMES"},"ok":false}"#)
    }

    @Test func bodiesRoundTrip() throws {
        let body = CommandBody(
            id: "c-9", type: "ReceivePayment", actor: "agent-7", payload: ["loanId": "L1", "amountCents": 100],
            expectedVersion: 3, correlationId: "flow-1")
        #expect(try CommandBody.parse(body.json).get() == body)
    }
}
