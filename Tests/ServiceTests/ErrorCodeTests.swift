import Bus
import CommandService
import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing
import Workloads

/// Every error code of the contract's fixed set (but UNAVAILABLE and INTERNAL, covered
/// elsewhere) provoked through the real `strata serve` and checked on the wire, code and
/// reason; and in the store: refusals at the gate append nothing and are not journaled,
/// decided refusals are journaled with the reply they got.
@Suite struct ErrorCodeTests {
    // MARK: - MALFORMED

    @Test func malformedInputsAreRefusedAndTheServiceKeepsServing() throws {
        let rig = try ServiceRig()
        defer { rig.close() }
        let headBefore = try rig.head()
        let goodBody = rig.registration(id: "m-probe", agent: "m-probe-agent", username: "mprobe")
        let signed = try rig.signedFrames(goodBody)

        // Frames: a DEALER forgetting the delimiter (REQ-style), one frame too many, too few.
        var reply = try rig.exchange([signed[1], signed[2]])
        expectRefusal(reply, "MALFORMED", "BAD_FRAMES", id: nil)
        try rig.expectStillServing()
        reply = try rig.exchange(signed + [Array("extra".utf8)])
        expectRefusal(reply, "MALFORMED", "BAD_FRAMES", id: nil)
        try rig.expectStillServing()
        reply = try rig.exchange([[], signed[1], signed[2], [], signed[2]])
        expectRefusal(reply, "MALFORMED", "BAD_FRAMES", id: nil)
        try rig.expectStillServing()
        reply = try rig.exchange([[], goodBody])
        expectRefusal(reply, "MALFORMED", "BAD_FRAMES", id: nil)
        try rig.expectStillServing()
        // Four frames, but the first is not the empty delimiter.
        reply = try rig.exchange([signed[1], signed[2], signed[2]])
        expectRefusal(reply, "MALFORMED", "BAD_FRAMES", id: nil)
        try rig.expectStillServing()

        // Bodies, each correctly signed, so only the body is wrong.
        let bodies: [(name: String, body: [UInt8], reason: String, id: String?)] = [
            ("invalid UTF-8", Array(#"{"id":"m-utf8","type":"RegisterUser","actor":"a","payload":{"x":""#.utf8) + [0xC3, 0x28] + Array(#""}}"#.utf8), "BODY_NOT_JSON", nil),
            ("a lone continuation byte", Array(#"{"id":"m-utf8b","type":"#.utf8) + [0x22, 0x80, 0x22] + Array(#","actor":"a","payload":{}}"#.utf8), "BODY_NOT_JSON", nil),
            ("truncated JSON", Array(#"{"id":"m-json","type":"RegisterUser","actor":"a","payload":{"#.utf8), "BODY_NOT_JSON", nil),
            ("trailing garbage", Array(#"{"id":"m-trail","type":"RegisterUser","actor":"a","payload":{}} x"#.utf8), "BODY_NOT_JSON", nil),
            ("an empty body", [], "BODY_NOT_JSON", nil),
            ("a duplicate key", Array(#"{"id":"m-dup","id":"m-dup2","type":"RegisterUser","actor":"a","payload":{}}"#.utf8), "BODY_NOT_JSON", nil),
            ("a huge expectedVersion", Array(#"{"id":"m-huge","type":"ApproveLoan","actor":"root","payload":{"loanId":"x"},"expectedVersion":123456789012345678901234567890}"#.utf8), "INVALID_EXPECTED_VERSION", "m-huge"),
            ("a fractional expectedVersion", Array(#"{"id":"m-frac","type":"ApproveLoan","actor":"root","payload":{"loanId":"x"},"expectedVersion":1.5}"#.utf8), "INVALID_EXPECTED_VERSION", "m-frac"),
            ("a number cut short", Array(#"{"id":"m-cut","type":"ApproveLoan","actor":"root","payload":{"loanId":"x","n":1.}}"#.utf8), "BODY_NOT_JSON", nil),
            ("an array", Array(#"[{"id":"m-array"}]"#.utf8), "BODY_NOT_OBJECT", nil),
            ("a number id", Array(#"{"id":42,"type":"RegisterUser","actor":"a","payload":{}}"#.utf8), "INVALID_COMMAND_ID", nil),
            ("no id", Array(#"{"type":"RegisterUser","actor":"a","payload":{}}"#.utf8), "INVALID_COMMAND_ID", nil),
            ("an id with a space", Array(#"{"id":"m bad","type":"RegisterUser","actor":"a","payload":{}}"#.utf8), "INVALID_COMMAND_ID", nil),
            ("a number type", Array(#"{"id":"m-type","type":7,"actor":"a","payload":{}}"#.utf8), "INVALID_TYPE_FIELD", "m-type"),
            ("no type", Array(#"{"id":"m-notype","actor":"a","payload":{}}"#.utf8), "INVALID_TYPE_FIELD", "m-notype"),
            ("an array actor", Array(#"{"id":"m-actor","type":"RegisterUser","actor":["a"],"payload":{}}"#.utf8), "INVALID_ACTOR_FIELD", "m-actor"),
            ("an empty actor", Array(#"{"id":"m-actor-empty","type":"RegisterUser","actor":"","payload":{}}"#.utf8), "INVALID_ACTOR_FIELD", "m-actor-empty"),
            ("an actor that is no id", Array(#"{"id":"m-actor-text","type":"ApproveLoan","actor":"bad actor!","payload":{}}"#.utf8), "INVALID_ACTOR_FIELD", "m-actor-text"),
            ("an actor of 65 characters", Array(#"{"id":"m-actor-long","type":"ApproveLoan","actor":"\#(String(repeating: "a", count: 65))","payload":{}}"#.utf8), "INVALID_ACTOR_FIELD", "m-actor-long"),
            ("a string payload", Array(#"{"id":"m-payload","type":"RegisterUser","actor":"a","payload":"{}"}"#.utf8), "INVALID_PAYLOAD_FIELD", "m-payload"),
            ("no payload", Array(#"{"id":"m-nopayload","type":"RegisterUser","actor":"a"}"#.utf8), "INVALID_PAYLOAD_FIELD", "m-nopayload"),
            ("a string expectedVersion", Array(#"{"id":"m-ev","type":"ApproveLoan","actor":"root","payload":{"loanId":"x"},"expectedVersion":"1"}"#.utf8), "INVALID_EXPECTED_VERSION", "m-ev"),
            ("a negative expectedVersion", Array(#"{"id":"m-evneg","type":"ApproveLoan","actor":"root","payload":{"loanId":"x"},"expectedVersion":-1}"#.utf8), "INVALID_EXPECTED_VERSION", "m-evneg"),
            ("a number correlationId", Array(#"{"id":"m-corr","type":"ApproveLoan","actor":"root","payload":{"loanId":"x"},"correlationId":5}"#.utf8), "INVALID_CORRELATION_ID", "m-corr"),
            ("an unknown body field", Array(#"{"id":"m-field","type":"ApproveLoan","actor":"root","payload":{"loanId":"x"},"priority":1}"#.utf8), "UNKNOWN_BODY_FIELD", "m-field"),
            ("an id of 65 characters", Array(#"{"id":"\#(String(repeating: "i", count: 65))","type":"ApproveLoan","actor":"root","payload":{}}"#.utf8), "INVALID_COMMAND_ID", nil),
            ("nesting beyond 64 levels", Array(#"{"id":"m-deep","type":"ApproveLoan","actor":"root","payload":{"x":\#(String(repeating: "[", count: 64))\#(String(repeating: "]", count: 64))}}"#.utf8), "BODY_NOT_JSON", nil),
            ("nesting 30,000 deep", Array(#"{"id":"m-deeper","type":"ApproveLoan","actor":"root","payload":{"x":\#(String(repeating: "[", count: 30_000))\#(String(repeating: "]", count: 30_000))}}"#.utf8), "BODY_NOT_JSON", nil),
            ("unbalanced nesting", Array(#"{"id":"m-unbalanced","type":"ApproveLoan","actor":"root","payload":{"x":\#(String(repeating: "[", count: 30_000))}}"#.utf8), "BODY_NOT_JSON", nil),
        ]
        for (name, body, reason, id) in bodies {
            let reply = try rig.exchange(try rig.signedFrames(body))
            expectRefusal(reply, "MALFORMED", reason, id: id, "\(name)")
            try rig.expectStillServing("after \(name)")
        }

        // Headers: not JSON, not the contract's object, a signature that is not 64 hex.
        let header = signed[1]
        let badHeaders: [(String, [UInt8])] = [
            ("truncated header", Array(header.dropLast())),
            ("header not JSON", Array("v=1;key=svc".utf8)),
            ("header version 2", Array(String(decoding: header, as: UTF8.self).replacingOccurrences(of: #""v":1"#, with: #""v":2"#).utf8)),
            ("string ts", Array(#"{"key":"svc","sig":"\#(String(repeating: "ab", count: 32))","ts":"1","v":1}"#.utf8)),
            ("short sig", Array(#"{"key":"svc","sig":"abcd","ts":1,"v":1}"#.utf8)),
            ("non-hex sig", Array(#"{"key":"svc","sig":"\#(String(repeating: "zz", count: 32))","ts":1,"v":1}"#.utf8)),
            ("extra header field", Array(#"{"key":"svc","sig":"\#(String(repeating: "ab", count: 32))","ts":1,"v":1,"x":0}"#.utf8)),
            ("empty header", []),
        ]
        for (name, badHeader) in badHeaders {
            let reply = try rig.exchange([[], badHeader, goodBody])
            expectRefusal(reply, "MALFORMED", "BAD_HEADER", id: nil, name)
            try rig.expectStillServing("after \(name)")
        }

        // Only the probes were appended; the refused ids that were read are not journaled.
        #expect(try rig.head() == headBefore + Int64(rig.probes))
        for id in [
            "m-probe", "m-deep", "m-deeper", "m-type", "m-notype", "m-actor", "m-payload", "m-nopayload", "m-ev", "m-evneg",
            "m-corr", "m-field", "m-utf8", "m-json", "m-huge", "m-frac", "m-cut",
        ] {
            #expect(try rig.journaled(id) == nil, "\(id) was refused at the gate and must not be journaled")
        }
        // An id of exactly 64 characters is a good id.
        let longId = String(repeating: "L", count: 64)
        reply = try rig.exchange(try rig.signedFrames(rig.registration(id: longId, agent: "m-long-agent", username: "mlong")))
        #expect(reply["id"]?.stringValue == longId && reply["ok"] == .bool(true), "\(CanonicalJSON.string(reply))")
        #expect(try rig.journaled(longId) != nil)
        // And the probe body itself, never yet accepted, is still decided afresh.
        reply = try rig.exchange(signed)
        #expect(reply["ok"] == .bool(true) && reply["duplicate"] == .bool(false), "\(CanonicalJSON.string(reply))")
    }

    // MARK: - TOO_LARGE

    @Test func bodiesOverTheLimitAreTooLarge() throws {
        let rig = try ServiceRig()
        defer { rig.close() }
        let headBefore = try rig.head()
        for (id, size) in [("big-64k1", 64 * 1024 + 1), ("big-1m", 1024 * 1024)] {
            let body = errorCodePaddedBody(id: id, size: size)
            #expect(body.count == size)
            let reply = try rig.exchange(try rig.signedFrames(body))
            expectRefusal(reply, "TOO_LARGE", "BODY_TOO_LARGE", id: nil, "\(size) bytes")
            #expect(reply["error"]?["message"]?.stringValue?.contains("\(size)") == true, "\(CanonicalJSON.string(reply))")
            try rig.expectStillServing("after \(size) bytes")
            #expect(try rig.journaled(id) == nil)
        }
        // Exactly at the limit the body is read (and this one is INVALID: an unknown field).
        let atLimit = errorCodePaddedBody(id: "big-64k", size: 64 * 1024)
        let reply = try rig.exchange(try rig.signedFrames(atLimit))
        #expect(reply["error"]?["code"]?.stringValue == "INVALID", "64 KiB is within the limit: \(CanonicalJSON.string(reply))")
        #expect(try rig.journaled("big-64k") != nil)
        #expect(try rig.head() == headBefore + Int64(rig.probes))
    }

    // MARK: - UNAUTHENTICATED

    @Test func badCredentialsAreUnauthenticated() throws {
        let rig = try ServiceRig()
        defer { rig.close() }
        let headBefore = try rig.head()
        let now = Timestamp.now().secondsSinceEpoch
        let service = ServiceProcess.Keys.service
        let svcSecret = try rig.service.secret(of: service)

        func body(_ id: String) -> [UInt8] { rig.registration(id: id, agent: "\(id)-agent", username: "\(id)-user") }

        // An unknown key (signed with a real secret).
        var reply = try rig.exchange(try rig.signedFrames(body("u-unknown"), key: "nobody", secretOf: service))
        expectRefusal(reply, "UNAUTHENTICATED", "BAD_SIGNATURE", id: "u-unknown")
        // A known key, signed with another key's secret.
        reply = try rig.exchange(try rig.signedFrames(body("u-wrongsecret"), key: service, secretOf: ServiceProcess.Keys.commandsOnly))
        expectRefusal(reply, "UNAUTHENTICATED", "BAD_SIGNATURE", id: "u-wrongsecret")
        // Signed, then one byte of the body changed.
        var altered = try rig.signedFrames(body("u-altered"))
        let at = try #require(altered[2].firstIndex(of: UInt8(ascii: "@")))
        altered[2][at - 1] ^= 0x01
        reply = try rig.exchange(altered)
        expectRefusal(reply, "UNAUTHENTICATED", "BAD_SIGNATURE", id: "u-altered")
        // Signed over another key id than the header names.
        let forOther = RequestSignature.sign(secret: svcSecret, keyId: "other", timestamp: now, body: body("u-keyid"))
        let header = RequestHeader(keyId: service, timestamp: now, signature: forOther)
        reply = try rig.exchange([[], header.json, body("u-keyid")])
        expectRefusal(reply, "UNAUTHENTICATED", "BAD_SIGNATURE", id: "u-keyid")

        // ts 301 s in the past, through a client on a fixed clock.
        let stale = try SignedClient(
            rig.context, endpoint: rig.service.commands, keyId: service, secret: svcSecret,
            clock: FixedClock(Timestamp(secondsSinceEpoch: now - 301)))
        defer { stale.close() }
        let staleReply = try #require(try stale.request(body("u-past")), "no reply")
        expectRefusal(try JSONParser.parse(staleReply), "UNAUTHENTICATED", "STALE_TIMESTAMP", id: "u-past")
        // …and 301 s (a second more, for the second that may tick on the way) in the future.
        reply = try rig.exchange(try rig.signedFrames(body("u-future"), ts: now + 302))
        expectRefusal(reply, "UNAUTHENTICATED", "STALE_TIMESTAMP", id: "u-future")
        // Far outside any window, and at the extremes of Int64.
        reply = try rig.exchange(try rig.signedFrames(body("u-zero"), ts: 0))
        expectRefusal(reply, "UNAUTHENTICATED", "STALE_TIMESTAMP", id: "u-zero")
        reply = try rig.exchange(try rig.signedFrames(body("u-min"), ts: Int64.min))
        expectRefusal(reply, "UNAUTHENTICATED", "STALE_TIMESTAMP", id: "u-min")
        reply = try rig.exchange(try rig.signedFrames(body("u-max"), ts: Int64.max))
        expectRefusal(reply, "UNAUTHENTICATED", "STALE_TIMESTAMP", id: "u-max")

        try rig.expectStillServing()
        // Within the window either way, clocks may differ: accepted.
        reply = try rig.exchange(try rig.signedFrames(body("u-skewpast"), ts: now - 290))
        #expect(reply["ok"] == .bool(true), "290 s behind is within 300 s: \(CanonicalJSON.string(reply))")
        reply = try rig.exchange(try rig.signedFrames(body("u-skewfuture"), ts: now + 290))
        #expect(reply["ok"] == .bool(true), "290 s ahead is within 300 s: \(CanonicalJSON.string(reply))")

        // Nothing refused was appended or journaled.
        #expect(try rig.head() == headBefore + Int64(rig.probes) + 2)
        for id in ["u-unknown", "u-wrongsecret", "u-altered", "u-keyid", "u-past", "u-future", "u-zero", "u-min", "u-max"] {
            #expect(try rig.journaled(id) == nil, "\(id) was refused at the gate and must not be journaled")
        }

        // The history endpoint checks the same way.
        let history = try ZMQSocket(rig.context, .dealer)
        defer { history.close() }
        try history.connect(rig.service.history)
        let page = Array(#"{"after":0,"limit":1}"#.utf8)
        reply = try rig.exchange(try rig.signedFrames(page, key: "nobody", secretOf: service), on: history)
        expectRefusal(reply, "UNAUTHENTICATED", "BAD_SIGNATURE", id: nil)
        reply = try rig.exchange(try rig.signedFrames(page, ts: now - 301), on: history)
        expectRefusal(reply, "UNAUTHENTICATED", "STALE_TIMESTAMP", id: nil)
    }

    // MARK: - FORBIDDEN

    @Test func missingScopesAndImpossibleActorsAreForbidden() throws {
        let rig = try ServiceRig()
        defer { rig.close() }

        // A history-only key posting a command: refused at the gate, not journaled.
        var headBefore = try rig.head()
        var reply = try rig.exchange(
            try rig.signedFrames(
                rig.registration(id: "f-scope", agent: "f-scope-agent", username: "fscope"), key: ServiceProcess.Keys.historyOnly))
        expectRefusal(reply, "FORBIDDEN", "KEY_SCOPE", id: "f-scope")
        #expect(try rig.journaled("f-scope") == nil)
        #expect(try rig.head() == headBefore)

        // A commands-only key reading history.
        let history = try ZMQSocket(rig.context, .dealer)
        defer { history.close() }
        try history.connect(rig.service.history)
        let page = Array(#"{"after":0,"limit":10}"#.utf8)
        reply = try rig.exchange(try rig.signedFrames(page, key: ServiceProcess.Keys.commandsOnly), on: history)
        expectRefusal(reply, "FORBIDDEN", "KEY_SCOPE", id: nil)
        #expect(reply["events"] == nil, "a refusal carries no events")
        // The agents-only key has no history scope either; the service key has.
        reply = try rig.exchange(try rig.signedFrames(page, key: ServiceProcess.Keys.agentsOnly), on: history)
        expectRefusal(reply, "FORBIDDEN", "KEY_SCOPE", id: nil)
        reply = try rig.exchange(try rig.signedFrames(page), on: history)
        #expect(reply["events"]?.arrayValue?.isEmpty == false, "\(CanonicalJSON.string(reply))")

        // Two agents: A approved, B pending. The agents-only key may act for an agent…
        let agents = ServiceProcess.Keys.agentsOnly
        reply = try rig.exchange(try rig.signedFrames(rig.registration(id: "f-reg-a", agent: "f-agent-a", username: "fagenta"), key: agents))
        #expect(reply["ok"] == .bool(true), "\(CanonicalJSON.string(reply))")
        reply = try rig.exchange(try rig.signedFrames(rig.registration(id: "f-reg-b", agent: "f-agent-b", username: "fagentb"), key: agents))
        #expect(reply["ok"] == .bool(true), "\(CanonicalJSON.string(reply))")

        // …but not for the admin: KEY_ROLE_NOT_PERMITTED, decided, so journaled.
        headBefore = try rig.head()
        let approveA = CommandBody(id: "f-keyrole", type: "ApproveAgent", actor: ServiceProcess.admin, payload: ["agentId": "f-agent-a"]).json
        reply = try rig.exchange(try rig.signedFrames(approveA, key: agents))
        expectRefusal(reply, "FORBIDDEN", "KEY_ROLE_NOT_PERMITTED", id: "f-keyrole")
        #expect(reply["duplicate"] == nil || reply["duplicate"] == .bool(false))
        try expectJournaled(rig, "f-keyrole", reply)
        #expect(try rig.head() == headBefore)
        // Nor for the admin naming itself in an agent's self-registration: the key is judged on the
        // role the service knows the actor has, not on the one the payload names, and before the
        // body's expectedVersion or any domain rule.
        for (id, expectedVersion) in [("f-keyrole-self", nil), ("f-keyrole-self-version", 7)] as [(String, Int64?)] {
            let asAgent = CommandBody(
                id: id, type: "RegisterUser", actor: ServiceProcess.admin,
                payload: [
                    "userId": .string(ServiceProcess.admin), "username": "fselfadmin",
                    "email": "fselfadmin@example.com", "role": "AGENT",
                ],
                expectedVersion: expectedVersion
            ).json
            reply = try rig.exchange(try rig.signedFrames(asAgent, key: agents))
            expectRefusal(reply, "FORBIDDEN", "KEY_ROLE_NOT_PERMITTED", id: id)
            try expectJournaled(rig, id, reply)
        }
        #expect(try rig.head() == headBefore)

        // The admin approves A through the service key.
        let approve = CommandBody(id: "f-approve-a", type: "ApproveAgent", actor: ServiceProcess.admin, payload: ["agentId": "f-agent-a"]).json
        reply = try rig.exchange(try rig.signedFrames(approve))
        #expect(reply["ok"] == .bool(true), "\(CanonicalJSON.string(reply))")

        // An approved agent approving an agent: ROLE_NOT_ALLOWED, whichever key.
        headBefore = try rig.head()
        for (id, key) in [("f-agent-approves", ServiceProcess.Keys.service), ("f-agent-approves-2", agents)] {
            let body = CommandBody(id: id, type: "ApproveAgent", actor: "f-agent-a", payload: ["agentId": "f-agent-b"]).json
            reply = try rig.exchange(try rig.signedFrames(body, key: key))
            expectRefusal(reply, "FORBIDDEN", "ROLE_NOT_ALLOWED", id: id)
            try expectJournaled(rig, id, reply)
        }
        // A pending agent opening an account: ACTOR_NOT_APPROVED; no user at all: UNKNOWN_ACTOR.
        let openByPending = CommandBody(
            id: "f-pending", type: "OpenAccount", actor: "f-agent-b",
            payload: [
                "accountId": "f-acct", "name": "Someone", "phone": "+919845012345", "address": "1 Road",
                "assignedAgentId": "f-agent-b",
            ]).json
        reply = try rig.exchange(try rig.signedFrames(openByPending))
        expectRefusal(reply, "FORBIDDEN", "ACTOR_NOT_APPROVED", id: "f-pending")
        try expectJournaled(rig, "f-pending", reply)
        let byStranger = CommandBody(id: "f-stranger", type: "ApproveAgent", actor: "nobody-at-all", payload: ["agentId": "f-agent-b"]).json
        reply = try rig.exchange(try rig.signedFrames(byStranger))
        expectRefusal(reply, "FORBIDDEN", "UNKNOWN_ACTOR", id: "f-stranger")
        try expectJournaled(rig, "f-stranger", reply)
        #expect(try rig.head() == headBefore)
    }

    // MARK: - INVALID

    @Test func payloadProblemsAreInvalidWithEveryProblemListed() throws {
        let rig = try ServiceRig()
        defer { rig.close() }
        let headBefore = try rig.head()

        let loan = CommandBody(
            id: "i-loan", type: "RequestLoan", actor: ServiceProcess.admin,
            payload: [
                "loanId": "bad id!", "principalCents": "lots", "monthlyRateBp": 100, "tenureMonths": 99,
                "frequency": "DAILY", "requestedOn": "2999-01-01", "colour": "red",
            ]).json
        var reply = try rig.exchange(try rig.signedFrames(loan))
        let expected: Set<String> = [
            "loanId:INVALID_IDENTIFIER", "accountId:REQUIRED", "principalCents:WRONG_TYPE", "monthlyRateBp:OUT_OF_RANGE",
            "tenureMonths:OUT_OF_RANGE", "frequency:UNKNOWN_VALUE", "requestedOn:FUTURE_DATE", "colour:UNKNOWN_FIELD",
        ]
        let details = refusalDetails(reply)
        expectRefusal(reply, "INVALID", details.first?.split(separator: ":").last.map(String.init) ?? "?", id: "i-loan")
        #expect(Set(details) == expected, "every problem listed: \(details)")
        #expect(details.count == expected.count, "each problem once: \(details)")
        try expectJournaled(rig, "i-loan", reply)

        let payment = CommandBody(
            id: "i-payment", type: "ReceivePayment", actor: ServiceProcess.admin,
            payload: ["paymentId": "p1", "loanId": "nope", "amountCents": 0, "paidOn": "2024-13-45", "method": nil])
            .json
        reply = try rig.exchange(try rig.signedFrames(payment))
        #expect(Set(refusalDetails(reply)) == ["amountCents:MUST_BE_POSITIVE", "paidOn:INVALID_FORMAT"], "\(CanonicalJSON.string(reply))")
        expectRefusal(reply, "INVALID", refusalDetails(reply).first?.split(separator: ":").last.map(String.init) ?? "?", id: "i-payment")
        try expectJournaled(rig, "i-payment", reply)

        // INVALID comes before any actor check: an unknown actor's bad payload is INVALID.
        let unknownActor = CommandBody(id: "i-actor", type: "ApproveLoan", actor: "no-such-user", payload: [:]).json
        reply = try rig.exchange(try rig.signedFrames(unknownActor))
        expectRefusal(reply, "INVALID", "REQUIRED", id: "i-actor")
        #expect(refusalDetails(reply) == ["loanId:REQUIRED"])

        let rocket = CommandBody(id: "i-type", type: "LaunchRocket", actor: ServiceProcess.admin, payload: ["to": "moon"]).json
        reply = try rig.exchange(try rig.signedFrames(rocket))
        expectRefusal(reply, "INVALID", "UNKNOWN_COMMAND_TYPE", id: "i-type")
        #expect(refusalDetails(reply) == ["type:UNKNOWN_COMMAND_TYPE"])
        try expectJournaled(rig, "i-type", reply)
        #expect(try rig.head() == headBefore)
        try rig.expectStillServing()
    }

    /// A fraction, an exponent or an integer beyond 64 bits in the payload is valid JSON the
    /// payload cannot hold: INVALID naming the field, with the id, beside every other problem,
    /// and journaled like any INVALID, so the same body again is a duplicate of that refusal.
    @Test func aNumberThePayloadCannotHoldIsInvalidNamingItsField() throws {
        let rig = try ServiceRig()
        defer { rig.close() }
        let headBefore = try rig.head()
        /// A loan request whose principal, rate and tenure are written as given.
        func loan(_ id: String, _ numbers: String) -> [UInt8] {
            Array(
                (#"{"id":"\#(id)","type":"RequestLoan","actor":"\#(ServiceProcess.admin)","payload":{"#
                    + #""loanId":"L-\#(id)","accountId":"A1",\#(numbers),"frequency":"MONTHLY"}}"#).utf8)
        }
        let cases: [(body: [UInt8], id: String, details: [String])] = [
            (
                loan("n-huge", #""principalCents":100000000000000000000,"monthlyRateBp":400,"tenureMonths":6"#),
                "n-huge", ["principalCents:ABOVE_MAXIMUM"]
            ),
            (
                loan("n-frac", #""principalCents":1500.5,"monthlyRateBp":400,"tenureMonths":6"#), "n-frac",
                ["principalCents:NOT_AN_INTEGER"]
            ),
            (
                loan("n-exp", #""principalCents":1e5,"monthlyRateBp":400,"tenureMonths":6"#), "n-exp",
                ["principalCents:NOT_AN_INTEGER"]
            ),
            (
                loan("n-all", #""principalCents":-1e400,"monthlyRateBp":"400","tenureMonths":-100000000000000000000"#),
                "n-all", ["principalCents:NOT_AN_INTEGER", "monthlyRateBp:WRONG_TYPE", "tenureMonths:OUT_OF_RANGE"]
            ),
        ]
        for (body, id, details) in cases {
            let frames = try rig.signedFrames(body)
            let reply = try rig.exchange(frames)
            let first = try #require(details.first?.split(separator: ":").last.map(String.init))
            expectRefusal(reply, "INVALID", first, id: id)
            #expect(refusalDetails(reply) == details, "\(CanonicalJSON.string(reply))")
            try expectJournaled(rig, id, reply)
            // The same bytes again, header and all: the refusal, as a duplicate.
            let again = try rig.exchange(frames)
            #expect(again["duplicate"] == .bool(true), "\(CanonicalJSON.string(again))")
            #expect(again["id"]?.stringValue == id && again["error"] == reply["error"], "the original refusal")
        }
        #expect(try rig.head() == headBefore)
        try rig.expectStillServing()
    }

    // MARK: - NOT_FOUND, CONFLICT, REJECTED

    @Test func missingTargetsVersionConflictsAndDomainRulesAreRefusedAndJournaled() throws {
        let rig = try ServiceRig()
        defer { rig.close() }
        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "ec", agents: 1, accountsPerAgent: 1, today: Timestamp.now().date)
        for body in workload.setup() + [workload.loan(0)[0]] {
            let reply = try rig.exchange(try rig.signedFrames(body.json))
            try #require(reply["ok"] == .bool(true), "\(body.id): \(CanonicalJSON.string(reply))")
        }
        let loanId = workload.loanId(0)
        var headBefore = try rig.head()

        // NOT_FOUND: a loan and an account that do not exist.
        let approveMissing = CommandBody(id: "n-loan", type: "ApproveLoan", actor: ServiceProcess.admin, payload: ["loanId": "ec-no-loan"]).json
        var reply = try rig.exchange(try rig.signedFrames(approveMissing))
        expectRefusal(reply, "NOT_FOUND", "LOAN_NOT_FOUND", id: "n-loan")
        try expectJournaled(rig, "n-loan", reply)
        let requestMissing = CommandBody(
            id: "n-account", type: "RequestLoan", actor: ServiceProcess.admin,
            payload: [
                "loanId": "ec-loan-x", "accountId": "ec-no-account", "principalCents": 100_000, "monthlyRateBp": 400,
                "tenureMonths": 6, "frequency": "MONTHLY",
            ]).json
        reply = try rig.exchange(try rig.signedFrames(requestMissing))
        expectRefusal(reply, "NOT_FOUND", "ACCOUNT_NOT_FOUND", id: "n-account")
        try expectJournaled(rig, "n-account", reply)

        // CONFLICT: the loan is at version 1, not 5, nor 0.
        for (id, version) in [("c-ahead", Int64(5)), ("c-behind", Int64(0))] {
            let approve = CommandBody(
                id: id, type: "ApproveLoan", actor: ServiceProcess.admin, payload: ["loanId": .string(loanId)],
                expectedVersion: version
            ).json
            reply = try rig.exchange(try rig.signedFrames(approve))
            expectRefusal(reply, "CONFLICT", "WRONG_EXPECTED_VERSION", id: id)
            try expectJournaled(rig, id, reply)
        }
        #expect(try rig.head() == headBefore, "refusals append nothing")
        let loanStream = try #require(StreamName(category: "loan", id: loanId))
        #expect(try rig.store().version(of: loanStream) == 1)

        // At the right version it is approved.
        let approve = CommandBody(
            id: "c-right", type: "ApproveLoan", actor: ServiceProcess.admin, payload: ["loanId": .string(loanId)],
            expectedVersion: 1
        ).json
        reply = try rig.exchange(try rig.signedFrames(approve))
        #expect(reply["ok"] == .bool(true), "\(CanonicalJSON.string(reply))")
        #expect(reply["events"]?.arrayValue?.first?["version"] == .integer(2))
        #expect(reply["events"]?.arrayValue?.first?["stream"]?.stringValue == "loan-\(loanId)")
        #expect(try rig.store().version(of: loanStream) == 2)

        // REJECTED: approving again, and a username taken (in another case).
        headBefore = try rig.head()
        let again = CommandBody(id: "r-again", type: "ApproveLoan", actor: ServiceProcess.admin, payload: ["loanId": .string(loanId)]).json
        reply = try rig.exchange(try rig.signedFrames(again))
        expectRefusal(reply, "REJECTED", "LOAN_NOT_PENDING", id: "r-again")
        try expectJournaled(rig, "r-again", reply)
        let taken = rig.registration(id: "r-username", agent: "ec-someone-else", username: "EC-AGENT0")
        reply = try rig.exchange(try rig.signedFrames(taken))
        expectRefusal(reply, "REJECTED", "USERNAME_TAKEN", id: "r-username")
        try expectJournaled(rig, "r-username", reply)
        #expect(try rig.head() == headBefore, "refusals append nothing")
        try rig.expectStillServing()
    }

    // MARK: - REQ clients

    @Test func aREQClientGetsOneFrameReplies() throws {
        let rig = try ServiceRig()
        defer { rig.close() }
        let req = try ZMQSocket(rig.context, .request)
        defer { req.close() }
        try req.connect(rig.service.commands)

        func ask(_ frames: [[UInt8]]) throws -> JSONValue {
            try req.send(frames)
            guard try !zmqPollReadable([req], timeoutMilliseconds: 15_000).isEmpty, let reply = try req.receive(wait: false)
            else { throw ServiceProcessError("no reply to the REQ client") }
            #expect(reply.count == 1, "a REQ client receives [reply]: got \(reply.count) frames")
            return try JSONParser.parse(reply.last ?? [])
        }

        let good = try rig.signedFrames(rig.registration(id: "q-good", agent: "q-agent", username: "qagent"))
        var reply = try ask([good[1], good[2]])
        #expect(reply["id"]?.stringValue == "q-good")
        #expect(reply["ok"] == .bool(true) && reply["duplicate"] == .bool(false), "\(CanonicalJSON.string(reply))")
        #expect(reply["events"]?.arrayValue?.first?["type"]?.stringValue == "UserRegistered")

        // The same framing rules: one frame, or three, are MALFORMED; the socket keeps working.
        reply = try ask([good[2]])
        expectRefusal(reply, "MALFORMED", "BAD_FRAMES", id: nil)
        reply = try ask([good[1], good[2], good[2]])
        expectRefusal(reply, "MALFORMED", "BAD_FRAMES", id: nil)
        // A refusal decided by the domain reaches a REQ client too; and a retry is a duplicate.
        let missing = try rig.signedFrames(
            CommandBody(id: "q-missing", type: "ApproveLoan", actor: ServiceProcess.admin, payload: ["loanId": "none"]).json)
        reply = try ask([missing[1], missing[2]])
        expectRefusal(reply, "NOT_FOUND", "LOAN_NOT_FOUND", id: "q-missing")
        reply = try ask([good[1], good[2]])
        #expect(reply["ok"] == .bool(true) && reply["duplicate"] == .bool(true), "\(CanonicalJSON.string(reply))")
    }

    // MARK: - What a refusal at the gate says

    /// A message of the wrong shape is told what arrived, counted as the client sent it: a
    /// DEALER without the delimiter hears that it is missing, and a REQ client (whose
    /// delimiter libzmq adds) hears of the frames it sent, not of one more.
    @Test func badFramesAreCountedAsTheClientSentThem() throws {
        let rig = try ServiceRig()
        defer { rig.close() }
        let signed = try rig.signedFrames(rig.registration(id: "bf-say", agent: "bf-say-agent", username: "bfsay"))
        func message(_ reply: JSONValue) -> String { reply["error"]?["message"]?.stringValue ?? "" }

        var reply = try rig.exchange([signed[1], signed[2]])
        expectRefusal(reply, "MALFORMED", "BAD_FRAMES", id: nil)
        #expect(message(reply).hasSuffix("got 2 frames and no empty delimiter first"), "\(message(reply))")
        reply = try rig.exchange([[], signed[1], signed[2], signed[2]])
        expectRefusal(reply, "MALFORMED", "BAD_FRAMES", id: nil)
        #expect(message(reply).hasSuffix("got 3 frames after the empty delimiter"), "\(message(reply))")

        let req = try ZMQSocket(rig.context, .request)
        defer { req.close() }
        try req.connect(rig.service.commands)
        for frames in [[signed[2]], [signed[1], signed[2], signed[2]]] {
            try req.send(frames)
            guard try !zmqPollReadable([req], timeoutMilliseconds: 15_000).isEmpty,
                let raw = try req.receive(wait: false)
            else { throw ServiceProcessError("no reply to the REQ client") }
            reply = try JSONParser.parse(raw.last ?? [])
            expectRefusal(reply, "MALFORMED", "BAD_FRAMES", id: nil)
            let sent = frames.count == 1 ? "1 frame" : "\(frames.count) frames"
            #expect(
                message(reply).hasSuffix("got \(sent) after the empty delimiter"), "REQ sent \(sent): \(message(reply))")
        }
        try rig.expectStillServing()
    }

    /// A header refused as MALFORMED names the member at fault, so a client that sends `ts`
    /// as a fraction (seconds from a float clock) or a signature in base64 learns which.
    @Test func badHeadersNameTheMemberAtFault() throws {
        let rig = try ServiceRig()
        defer { rig.close() }
        let body = rig.registration(id: "bh-say", agent: "bh-say-agent", username: "bhsay")
        let now = Timestamp.now().secondsSinceEpoch
        let sig = String(repeating: "ab", count: 32)
        let headers: [(name: String, header: String, says: String)] = [
            ("not JSON", "v=1;key=svc", "the header is not strict JSON"),
            ("an array", #"[1]"#, "the header is not a JSON object"),
            ("a fractional ts", #"{"key":"svc","sig":"\#(sig)","ts":\#(now).5,"v":1}"#, #""ts" must be an integer"#),
            ("a string ts", #"{"key":"svc","sig":"\#(sig)","ts":"\#(now)","v":1}"#, #""ts" must be an integer"#),
            ("no ts", #"{"key":"svc","sig":"\#(sig)","v":1}"#, #""ts" must be an integer"#),
            ("no v", #"{"key":"svc","sig":"\#(sig)","ts":\#(now)}"#, #""v" must be 1"#),
            ("v as a string", #"{"key":"svc","sig":"\#(sig)","ts":\#(now),"v":"1"}"#, #""v" must be 1"#),
            ("an empty key", #"{"key":"","sig":"\#(sig)","ts":\#(now),"v":1}"#, #""key" must be a key id"#),
            ("a short sig", #"{"key":"svc","sig":"abcd","ts":\#(now),"v":1}"#, #""sig" must be 64 hex characters"#),
            ("a base64 sig", #"{"key":"svc","sig":"q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=","ts":\#(now),"v":1}"#,
             #""sig" must be 64 hex characters"#),
            ("an extra member", #"{"key":"svc","nonce":"x","sig":"\#(sig)","ts":\#(now),"v":1}"#, #"member "nonce""#),
        ]
        for (name, header, says) in headers {
            for (endpoint, request) in [(rig.dealer, body), (rig.history, Array(#"{"after":0}"#.utf8))] {
                let reply = try rig.exchange([[], Array(header.utf8), request], on: endpoint)
                expectRefusal(reply, "MALFORMED", "BAD_HEADER", id: nil, name)
                let message = reply["error"]?["message"]?.stringValue ?? ""
                #expect(message.contains(says), "\(name): \(message)")
            }
        }
        try rig.expectStillServing()
    }
}

/// A well-formed RegisterUser body of exactly `size` bytes (padded in an unknown payload field).
private func errorCodePaddedBody(id: String, size: Int) -> [UInt8] {
    let prefix = Array(#"{"id":"\#(id)","type":"RegisterUser","actor":"pad","payload":{"pad":""#.utf8)
    let suffix = Array(#""}}"#.utf8)
    return prefix + [UInt8](repeating: UInt8(ascii: "a"), count: max(0, size - prefix.count - suffix.count)) + suffix
}
