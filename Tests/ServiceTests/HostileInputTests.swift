import Bus
import CommandService
import EventStore
import Events
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import SubjectKeys
import Testing
import Workloads

/// Hostile input that is properly signed: a trusted service's key used for what its users may
/// not do, and payloads full of values meant to break a parser, a query or a terminal. Unsigned
/// and malformed requests are FuzzTests' part.
@Suite struct HostileInputTests {
    /// Agents acting beyond their role or on other agents' business: each refused with the code
    /// and reason of the rule, journaled with that reply, nothing appended; a byte-identical
    /// resend is answered as a duplicate of the refusal.
    @Test func agentsCannotActBeyondTheirRoleOrOnOtherAgentsBusiness() throws {
        let rig = try ServiceRig(name: "strata-roles")
        defer { rig.close() }
        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "ra", agents: 2, accountsPerAgent: 1, today: Timestamp.now().date)
        // Agent 0 serves account 0 and has a loan waiting for approval; agent 1 serves account 1,
        // whose loan is approved and paid once, so agent 1 has earned a commission.
        for body in workload.setup() + [workload.loan(0)[0]] + workload.loan(1) {
            let reply = try rig.exchange(try rig.signedFrames(body.json))
            try #require(reply["ok"] == .bool(true), "\(body.id): \(CanonicalJSON.string(reply))")
        }
        let agent0 = workload.agentId(0)
        let agent1 = workload.agentId(1)
        let today = Timestamp.now().date.description

        let abuses: [(what: String, body: CommandBody, code: String, reason: String)] = [
            (
                "an agent approving its own loan",
                CommandBody(
                    id: "ra-own-approve", type: "ApproveLoan", actor: agent0,
                    payload: ["loanId": .string(workload.loanId(0))]),
                "FORBIDDEN", "ROLE_NOT_ALLOWED"
            ),
            (
                "an agent rejecting its own loan",
                CommandBody(
                    id: "ra-own-reject", type: "RejectLoan", actor: agent0,
                    payload: ["loanId": .string(workload.loanId(0)), "reason": "changed my mind"]),
                "FORBIDDEN", "ROLE_NOT_ALLOWED"
            ),
            (
                "an agent requesting a loan on another agent's account",
                CommandBody(
                    id: "ra-other-loan", type: "RequestLoan", actor: agent0,
                    payload: [
                        "loanId": "ra-stolen-loan", "accountId": .string(workload.accountId(1)),
                        "principalCents": 100_000,
                        "monthlyRateBp": 400, "tenureMonths": 6, "frequency": "MONTHLY",
                    ]),
                "FORBIDDEN", "NOT_ASSIGNED_AGENT"
            ),
            (
                "an agent taking a payment on another agent's loan",
                CommandBody(
                    id: "ra-other-payment", type: "ReceivePayment", actor: agent0,
                    payload: [
                        "paymentId": "ra-skim", "loanId": .string(workload.loanId(1)), "amountCents": 5_000,
                        "paidOn": .string(today),
                    ]),
                "FORBIDDEN", "NOT_LOAN_AGENT"
            ),
            (
                "an agent changing another agent's borrower",
                CommandBody(
                    id: "ra-other-update", type: "UpdateAccount", actor: agent0,
                    payload: ["accountId": .string(workload.accountId(1)), "phone": "+919845099999"]),
                "FORBIDDEN", "NOT_ASSIGNED_AGENT"
            ),
            (
                "an agent opening an account in another agent's name",
                CommandBody(
                    id: "ra-other-open", type: "OpenAccount", actor: agent0,
                    payload: [
                        "accountId": "ra-planted", "name": "Planted", "phone": "+919845012345", "address": "1 Road",
                        "assignedAgentId": .string(agent1),
                    ]),
                "FORBIDDEN", "NOT_ASSIGNED_AGENT"
            ),
            (
                "an agent cashing out another agent's earnings",
                CommandBody(
                    id: "ra-other-cashout", type: "RequestCashout", actor: agent0,
                    payload: ["cashoutId": "ra-theft", "agentId": .string(agent1), "amountCents": 10_000]),
                "FORBIDDEN", "NOT_OWN_EARNINGS"
            ),
            (
                "an agent cashing out more than it earned",
                CommandBody(
                    id: "ra-too-much", type: "RequestCashout", actor: agent1,
                    payload: ["cashoutId": "ra-greed", "agentId": .string(agent1), "amountCents": 10_000_000]),
                "REJECTED", "INSUFFICIENT_EARNINGS"
            ),
            (
                "an agent approving a cash-out",
                CommandBody(
                    id: "ra-self-cashout", type: "ApproveCashout", actor: agent1, payload: ["cashoutId": "ra-greed"]),
                "FORBIDDEN", "ROLE_NOT_ALLOWED"
            ),
            (
                "an agent raising its own commission",
                CommandBody(
                    id: "ra-own-rate", type: "SetCommissionRate", actor: agent1,
                    payload: ["agentId": .string(agent1), "rateBp": 5_000]),
                "FORBIDDEN", "ROLE_NOT_ALLOWED"
            ),
            (
                "an agent making an admin",
                CommandBody(
                    id: "ra-make-admin", type: "RegisterUser", actor: agent0,
                    payload: ["userId": "ra-boss", "username": "raboss", "email": "boss@example.com", "role": "ADMIN"]),
                "FORBIDDEN", "ROLE_NOT_ALLOWED"
            ),
            (
                "an agent editing another user's profile",
                CommandBody(
                    id: "ra-other-profile", type: "UpdateProfile", actor: agent0,
                    payload: ["userId": .string(agent1), "fullName": "Someone Else"]),
                "FORBIDDEN", "NOT_OWN_PROFILE"
            ),
        ]

        let headBefore = try rig.head()
        for abuse in abuses {
            let frames = try rig.signedFrames(abuse.body.json)
            let reply = try rig.exchange(frames)
            expectRefusal(reply, abuse.code, abuse.reason, id: abuse.body.id, abuse.what)
            try expectJournaled(rig, abuse.body.id, reply)
            // The same bytes again, header and all: the refusal, as a duplicate.
            let again = try rig.exchange(frames)
            #expect(again["duplicate"] == .bool(true), "\(abuse.what), resent: \(CanonicalJSON.string(again))")
            #expect(again["error"] == reply["error"], "\(abuse.what): a resend gets the original refusal")
        }
        #expect(try rig.head() == headBefore, "no abuse appended anything")

        // The same agents doing their own business are accepted: the refusals above were the rules.
        let own = CommandBody(
            id: "ra-own-loan", type: "RequestLoan", actor: agent0,
            payload: [
                "loanId": "ra-fair-loan", "accountId": .string(workload.accountId(0)), "principalCents": 100_000,
                "monthlyRateBp": 400, "tenureMonths": 6, "frequency": "MONTHLY",
            ])
        let accepted = try rig.exchange(try rig.signedFrames(own.json))
        #expect(accepted["ok"] == .bool(true), "\(CanonicalJSON.string(accepted))")
        #expect(try rig.store().verify().isIntact)
    }

    /// Validly signed commands whose payloads carry SQL-looking strings, control characters,
    /// overlong strings, numbers at and past Int64's edges, wrong types, impossible dates,
    /// unknown and missing fields. Whatever the outcome, it is one of the contract's, decided
    /// outcomes are journaled and MALFORMED ones not, refusals append nothing, accepted values
    /// are stored exactly as sent, the schema is untouched, and the service's memory stays bounded.
    @Test func hostileValuesInSignedPayloadsAreDecidedSafely() throws {
        let seed = hostileSeed()
        print("HostileInputTests: seed \(seed) (replay with STRATA_FUZZ_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let rig = try ServiceRig(name: "strata-hostile")
        defer { rig.close() }
        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "hv", agents: 2, accountsPerAgent: 2, today: Timestamp.now().date)
        for body in workload.setup() + (0..<4).flatMap(workload.loan) {
            let reply = try rig.exchange(try rig.signedFrames(body.json))
            try #require(reply["ok"] == .bool(true), "\(body.id): \(CanonicalJSON.string(reply))")
        }
        let schemaBefore = try hostileSchema(rig)
        let headBefore = try rig.head()

        let count = 2_000
        let cases = (0..<count).map { makeHostileCase($0, workload: workload, random: &random) }
        var framesSent: [[[UInt8]]] = []
        for hostile in cases {
            let frames: [[UInt8]]
            switch hostile.signing {
            case .service: frames = try rig.signedFrames(hostile.body)
            case .historyOnlyKey: frames = try rig.signedFrames(hostile.body, key: ServiceProcess.Keys.historyOnly)
            case .unknownKey:
                frames = try rig.signedFrames(hostile.body, key: "intruder", secretOf: ServiceProcess.Keys.service)
            }
            framesSent.append(frames)
            try rig.dealer.send(frames)
        }

        var outcomes: [String: Int] = [:]
        var appended: Int64 = 0
        var accepted: [(hostile: HostileCase, events: [JSONValue])] = []
        var replies: [JSONValue] = []
        for (index, hostile) in cases.enumerated() {
            let place = "seed \(seed), case \(index) (\(hostile.label))"
            let reply = try JSONParser.parse(
                try receiveReply(on: rig.dealer, from: rig.service, timeoutMilliseconds: 30_000))
            replies.append(reply)
            let code = reply["ok"] == .bool(true) ? "accepted" : reply["error"]?["code"]?.stringValue ?? "<none>"
            outcomes[code, default: 0] += 1
            #expect(hostile.expected.contains(code), "\(place): \(code), expected \(hostile.expected.sorted())")
            #expect(reply["duplicate"] != .bool(true), "\(place): a first request answered as a duplicate")
            if code != "MALFORMED" {
                #expect(reply["id"]?.stringValue == hostile.id, "\(place): the reply names another request")
            }
            if code == "INVALID", let field = hostile.numberField {
                let named = reply["error"]?["details"]?.arrayValue?.contains { $0["field"]?.stringValue == field }
                #expect(named == true, "\(place): the number's field is not named: \(CanonicalJSON.string(reply))")
            }
            let journaled = try rig.journaled(hostile.id) != nil
            let decided = !["MALFORMED", "UNAUTHENTICATED", "TOO_LARGE", "UNAVAILABLE", "INTERNAL"].contains(code)
                && !(code == "FORBIDDEN" && reply["error"]?["reason"] == "KEY_SCOPE")
            #expect(journaled == decided, "\(place): \(code) journaled=\(journaled)")
            if code == "accepted" {
                let events = reply["events"]?.arrayValue ?? []
                appended += Int64(events.count)
                accepted.append((hostile, events))
            }
        }
        print("HostileInputTests: \(count) signed hostile requests, outcomes \(outcomes.sorted { $0.key < $1.key })")
        #expect(rig.service.isRunning, "seed \(seed): the service died; log:\n\(rig.service.log)")
        #expect(try rig.head() == headBefore + appended, "seed \(seed): only accepted commands appended")

        // What was accepted is stored exactly as sent: a hostile string comes back byte for byte,
        // in clear or, in a personal field, sealed and opening to exactly what was sent.
        let store = try rig.store()
        let opener = PersonalDataOpener(keyStorePath: SubjectKeyStore.path(inDataDirectory: rig.data.path))
        var checkedStrings = 0
        for (hostile, events) in accepted {
            guard case .string(let value)? = hostile.value else { continue }
            var found = false
            for event in events {
                guard let position = event["position"]?.integerValue,
                    let stored = try store.events(after: position - 1, limit: 1).first
                else { continue }
                if hostileContains(try JSONParser.parse(stored.data), value, stream: stored.stream, opener: opener) {
                    found = true
                }
            }
            #expect(found, "seed \(seed), \(hostile.label): the accepted value is not stored as sent")
            checkedStrings += 1
        }

        // Byte-identical resends: decided requests come back as duplicates, the rest refused again.
        let headAfter = try rig.head()
        for index in stride(from: 0, to: count, by: 10) {
            try rig.dealer.send(framesSent[index])
            let again = try JSONParser.parse(
                try receiveReply(on: rig.dealer, from: rig.service, timeoutMilliseconds: 30_000))
            let first = replies[index]
            if try rig.journaled(cases[index].id) != nil {
                #expect(again["duplicate"] == .bool(true), "case \(index): \(CanonicalJSON.string(again))")
                #expect(again["ok"] == first["ok"] && again["error"] == first["error"], "case \(index): same decision")
            } else {
                #expect(again["ok"] == .bool(false) && again["error"]?["code"] == first["error"]?["code"])
            }
        }
        #expect(try rig.head() == headAfter, "resends appended nothing")
        #expect(try hostileSchema(rig) == schemaBefore, "the store's schema is as it was")
        #expect(try store.verify().isIntact)

        let peak = try #require(rig.service.peakResidentKiB, "no /proc status")
        print(
            "HostileInputTests: \(checkedStrings) accepted hostile strings read back exactly; service peak RSS "
                + "\(peak / 1024) MiB")
        #expect(peak < 200 * 1024, "the service's peak resident memory \(peak) KiB")
        try rig.expectStillServing()
    }
}

// MARK: - Generating hostile commands

private struct HostileCase {
    enum Signing { case service, historyOnlyKey, unknownKey }

    let id: String
    let label: String
    let body: [UInt8]
    /// The value put into the payload, when it is one a JSON value can hold.
    let value: JSONValue?
    var expected: Set<String>
    /// The field given a number the payload cannot hold, which an INVALID reply names.
    var numberField: String? = nil
    var signing: Signing = .service
}

/// Values meant to break something downstream of the parser, each one a valid JSON value.
private let hostileValues: [JSONValue] = [
    "'; DROP TABLE events; --", "x' OR '1'='1", "Robert'); DELETE FROM command_journal; --",
    "\"; PRAGMA writable_schema=ON; --", "%s%n%x%d", "${jndi:ldap://example.com/a}", "<script>alert(1)</script>",
    "\u{0}", "a\u{1}b\u{1F}c\u{7F}", "\u{1B}[2J\u{1B}[31mred", "line\nbreak\r\n", "\u{2028}\u{2029}",
    "\u{FEFF}bom", "\u{202E}txet", "𝕊𝕥𝕣𝕒𝕥𝕒 ✓", "e\u{301}", "", "   ",
    .string(String(repeating: "x", count: 10_000)),
    "../../etc/passwd", "-1", "9223372036854775808", "2024-02-30", "0000-00-00", "9999-12-31", "2024-1-1",
    .integer(Int64.max), .integer(Int64.min), 0, -1, .integer(1 << 53 + 1), true, false, .null, [], [:],
    ["x"], ["a": ["b": ["c": ["d": "e"]]]],
]

/// Numbers no JSON value here holds: valid JSON the payload cannot hold (INVALID, naming the
/// field), and what is not JSON at all (MALFORMED).
private let hostileRawNumbers = [
    "1e999", "1.5", "-0.0", "123456789012345678901234567890", "-9223372036854775809", "0x10", "01",
]
private let hostileRawNumbersNotJSON: Set = ["0x10", "01"]

private func makeHostileCase(_ index: Int, workload: LendingWorkload, random: inout SplitMix64) -> HostileCase {
    let id = "hv-case-\(index)"
    var (type, actor, payload) = hostileTemplate(index, workload: workload, random: &random)
    let keys = payload.keys.sorted()
    let roll = Int.random(in: 0..<100, using: &random)
    var value: JSONValue?
    var label: String
    var raw: String?
    var rawKey: String?
    switch roll {
    case 0..<70:
        let key = keys[Int.random(in: 0..<keys.count, using: &random)]
        value = hostileValues[Int.random(in: 0..<hostileValues.count, using: &random)]
        payload[key] = value
        label = "\(type).\(key) = \(CanonicalJSON.string(value!).prefix(40))"
    case 70..<80:
        let key = keys[Int.random(in: 0..<keys.count, using: &random)]
        raw = hostileRawNumbers[Int.random(in: 0..<hostileRawNumbers.count, using: &random)]
        rawKey = key
        payload[key] = "\u{1}RAW\u{1}"
        label = "\(type).\(key) = \(raw!)"
    case 80..<88:
        let names = [
            "__proto__", "constructor", "'; DROP TABLE x", "\u{0}", "", "loanid", String(repeating: "k", count: 300),
        ]
        let key = names[Int.random(in: 0..<names.count, using: &random)]
        payload[key] = hostileValues[Int.random(in: 0..<hostileValues.count, using: &random)]
        label = "\(type) with unknown field \(CanonicalJSON.string(.string(key)).prefix(30))"
    case 88..<96:
        let key = keys[Int.random(in: 0..<keys.count, using: &random)]
        payload[key] = nil
        label = "\(type) without \(key)"
    default:
        label = "\(type), valid"
    }
    let hostileActor = Int.random(in: 0..<20, using: &random) == 0
    if hostileActor {
        actor = ["'; DROP TABLE users; --", "\u{0}", "", "root\n", "ROOT", String(repeating: "a", count: 5_000)][
            Int.random(in: 0..<6, using: &random)]
        label += ", actor \(CanonicalJSON.string(.string(actor)).prefix(20))"
    }
    var body = CommandBody(id: id, type: type, actor: actor, payload: payload).json
    let expected: Set<String>
    if !Identifier.isValid(actor) {
        // An actor that is no user id is one of the body's own fields malformed.
        expected = ["MALFORMED"]
    } else if let raw {
        let placeholder = Array(#""\u0001RAW\u0001""#.utf8)
        body = hostileReplacing(placeholder, with: Array(raw.utf8), in: body)
        expected = hostileRawNumbersNotJSON.contains(raw) ? ["MALFORMED"] : ["INVALID"]
    } else {
        // Decided by the rules: accepted, or refused by one of the decided codes.
        expected = ["accepted", "INVALID", "FORBIDDEN", "NOT_FOUND", "CONFLICT", "REJECTED"]
    }
    var hostile = HostileCase(
        id: id, label: label, body: body, value: raw == nil ? value : nil, expected: expected, numberField: rawKey)
    switch Int.random(in: 0..<50, using: &random) {
    case 0:
        hostile.signing = .historyOnlyKey
        hostile.expected = expected == ["MALFORMED"] ? ["MALFORMED"] : ["FORBIDDEN"]
    case 1:
        hostile.signing = .unknownKey
        hostile.expected = expected == ["MALFORMED"] ? ["MALFORMED"] : ["UNAUTHENTICATED"]
    default: break
    }
    return hostile
}

/// A command an agent or the admin could send against the business `workload` set up, with
/// fresh ids so that, left alone, it would be accepted.
private func hostileTemplate(
    _ index: Int, workload: LendingWorkload, random: inout SplitMix64
) -> (type: String, actor: String, payload: [String: JSONValue]) {
    let agent = workload.agentId(0)
    let today = Timestamp.now().date.description
    switch Int.random(in: 0..<7, using: &random) {
    case 0:
        let user = "hv-user-\(index)"
        return (
            "RegisterUser", user,
            ["userId": .string(user), "username": .string("hvuser\(index)"), "email": .string("u\(index)@example.com"),
             "role": "AGENT"]
        )
    case 1:
        return (
            "OpenAccount", agent,
            ["accountId": .string("hv-open-\(index)"), "name": "Asha Rao", "phone": "+919845012345",
             "address": "4 Temple Street", "email": "asha@example.com", "assignedAgentId": .string(agent)]
        )
    case 2:
        return (
            "RequestLoan", agent,
            ["loanId": .string("hv-req-\(index)"), "accountId": .string(workload.accountId(0)),
             "principalCents": 250_000, "monthlyRateBp": 350, "tenureMonths": 6, "frequency": "WEEKLY",
             "requestedOn": .string(today)]
        )
    case 3:
        return (
            "ReceivePayment", agent,
            ["paymentId": .string("hv-pay-\(index)"), "loanId": .string(workload.loanId(0)), "amountCents": 100,
             "paidOn": .string(today), "method": "WALLET", "externalRef": .string("tx-\(index)"),
             "notes": "cash at door"]
        )
    case 4:
        return (
            "UpdateAccount", agent,
            ["accountId": .string(workload.accountId(0)), "address": "5 Temple Street",
             "alternatePhone": "+919845000000"]
        )
    case 5:
        return ("UpdateProfile", agent, ["userId": .string(agent), "fullName": "Agent Zero", "phone": "+919845011111"])
    default:
        return (
            "RejectLoan", ServiceProcess.admin, ["loanId": .string("hv-req-\(index)"), "reason": "documents missing"]
        )
    }
}

// MARK: - Checking

private func hostileSeed() -> UInt64 {
    if let text = ProcessInfo.processInfo.environment["STRATA_FUZZ_SEED"], let seed = UInt64(text) { return seed }
    return UInt64.random(in: 0...UInt64.max)
}

private func hostileReplacing(_ needle: [UInt8], with replacement: [UInt8], in bytes: [UInt8]) -> [UInt8] {
    guard
        let start = (0...(bytes.count - needle.count)).first(where: {
            bytes[$0..<$0 + needle.count].elementsEqual(needle)
        })
    else { return bytes }
    return Array(bytes[..<start]) + replacement + Array(bytes[(start + needle.count)...])
}

/// Whether `value` occurs anywhere in `json` as a string (a member's value, or an array
/// element), in clear or sealed (opened through the key store for an event of `stream`).
private func hostileContains(_ json: JSONValue, _ value: String, stream: String, opener: PersonalDataOpener) -> Bool {
    switch json {
    case .string(let text):
        text == value
            || (PersonalData(text).isSealed && (try? opener.open(PersonalData(text), stream: stream))?.value == value)
    case .array(let items): items.contains { hostileContains($0, value, stream: stream, opener: opener) }
    case .object(let members): members.values.contains { hostileContains($0, value, stream: stream, opener: opener) }
    default: false
    }
}

/// The store's schema as sqlite_master lists it.
private func hostileSchema(_ rig: ServiceRig) throws -> [String] {
    let connection = try SQLiteConnection(path: rig.data.appendingPathComponent("events.db").path, mode: .readOnly)
    let statement = try connection.statement(
        "SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY name")
    var rows: [String] = []
    while try statement.step() { rows.append(statement.text(0)) }
    return rows
}
