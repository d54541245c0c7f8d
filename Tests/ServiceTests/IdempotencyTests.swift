import Bus
import CommandService
import EventStore
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import SubjectKeys
import Testing
import Workloads

/// A command id is decided once (CONTRACT.md "Commands", Idempotency), checked through
/// the real `strata serve`: retries of accepted and of refused commands are duplicates
/// that append nothing, a reused id with another body is CONFLICT, refusals that decide
/// nothing leave the id free, and all of it survives a restart.
@Suite struct IdempotencyTests {
    @Test func aRetryOfAnAcceptedCommandReturnsTheOriginalReplyAndAppendsNothing() throws {
        let rig = try IdempotencyRig()
        defer { rig.close() }
        let workload = rig.workload("ia")
        for body in workload.setup() { try rig.expectAccepted(body.json) }
        let loan = workload.loan(0)

        // Each command's exact frames (header and all), sent once and kept for the retry.
        let frames = try loan.map { try rig.signedFrames($0.json) }
        var originals: [JSONValue] = []
        for (body, request) in zip(loan, frames) {
            let reply = try rig.exchange(request)
            #expect(reply["ok"] == .bool(true) && reply["duplicate"] == .bool(false), "\(body.id): \(CanonicalJSON.string(reply))")
            originals.append(reply)
        }
        // The payment appended two events (PaymentReceived, CommissionEarned).
        #expect(originals[2]["events"]?.arrayValue?.count == 2, "\(CanonicalJSON.string(originals[2]))")
        let head = try rig.head()
        let eventsBefore = try rig.historyPage(after: 0)

        // Byte-identical retries, header included…
        for (index, request) in frames.enumerated() {
            let reply = try rig.exchange(request)
            idempotencyExpectDuplicate(reply, of: originals[index])
        }
        // …and retries signed afresh (a later ts, the same body bytes), twice over.
        for _ in 0..<2 {
            for (index, body) in loan.enumerated() {
                let reply = try rig.exchange(try rig.signedFrames(body.json, ts: Timestamp.now().secondsSinceEpoch + 5))
                idempotencyExpectDuplicate(reply, of: originals[index])
            }
        }
        #expect(try rig.head() == head, "duplicates append nothing")
        #expect(try rig.historyPage(after: 0) == eventsBefore, "the history is unchanged")
        // The journal still holds the first decision, once.
        let entry = try #require(try rig.journaled(loan[2].id))
        #expect(entry.outcome == .accepted(idempotencyEvents(originals[2])))
    }

    @Test func aRetryOfARefusedCommandReturnsTheSameRefusalEvenOnceItWouldSucceed() throws {
        let rig = try IdempotencyRig()
        defer { rig.close() }
        let workload = rig.workload("ir")
        for body in workload.setup() { try rig.expectAccepted(body.json) }
        let loanId = workload.loanId(0)
        let approve = CommandBody(
            id: "ir-approve-early", type: "ApproveLoan", actor: ServiceProcess.admin, payload: ["loanId": .string(loanId)]
        ).json

        // Decided refusals of each kind: NOT_FOUND (the loan is not requested yet), INVALID,
        // FORBIDDEN (an agent doing an admin's work), REJECTED, CONFLICT.
        var refusals: [(body: [UInt8], reply: JSONValue)] = []
        var reply = try rig.exchange(try rig.signedFrames(approve))
        #expect(reply["error"]?["code"]?.stringValue == "NOT_FOUND", "\(CanonicalJSON.string(reply))")
        refusals.append((approve, reply))
        let invalid = CommandBody(id: "ir-invalid", type: "ApproveLoan", actor: ServiceProcess.admin, payload: ["loanId": 7]).json
        reply = try rig.exchange(try rig.signedFrames(invalid))
        #expect(reply["error"]?["code"]?.stringValue == "INVALID", "\(CanonicalJSON.string(reply))")
        refusals.append((invalid, reply))
        let byAgent = CommandBody(
            id: "ir-forbidden", type: "ApproveAgent", actor: workload.agentId(0), payload: ["agentId": .string(workload.agentId(0))]
        ).json
        reply = try rig.exchange(try rig.signedFrames(byAgent))
        #expect(reply["error"]?["code"]?.stringValue == "FORBIDDEN", "\(CanonicalJSON.string(reply))")
        refusals.append((byAgent, reply))
        let approveAgain = CommandBody(
            id: "ir-rejected", type: "ApproveAgent", actor: ServiceProcess.admin, payload: ["agentId": .string(workload.agentId(0))]
        ).json
        reply = try rig.exchange(try rig.signedFrames(approveAgain))
        #expect(reply["error"]?["reason"]?.stringValue == "AGENT_NOT_PENDING", "\(CanonicalJSON.string(reply))")
        refusals.append((approveAgain, reply))

        // Now the loan exists; the CONFLICT one expects it at version 0.
        try rig.expectAccepted(workload.loan(0)[0].json)
        let conflicting = CommandBody(
            id: "ir-conflict", type: "ApproveLoan", actor: ServiceProcess.admin, payload: ["loanId": .string(loanId)],
            expectedVersion: 0
        ).json
        reply = try rig.exchange(try rig.signedFrames(conflicting))
        #expect(reply["error"]?["code"]?.stringValue == "CONFLICT", "\(CanonicalJSON.string(reply))")
        refusals.append((conflicting, reply))

        let head = try rig.head()
        for (body, original) in refusals {
            let retry = try rig.exchange(try rig.signedFrames(body))
            idempotencyExpectDuplicate(retry, of: original)
        }
        // The early approval would succeed now, as a new command, but its id was decided.
        #expect(try rig.head() == head, "the retries appended nothing")
        let loanStream = try #require(StreamName(category: "loan", id: loanId))
        #expect(try rig.store().version(of: loanStream) == 1, "the loan is still only requested")
        let fresh = CommandBody(
            id: "ir-approve-late", type: "ApproveLoan", actor: ServiceProcess.admin, payload: ["loanId": .string(loanId)]
        ).json
        try rig.expectAccepted(fresh)
        #expect(try rig.store().version(of: loanStream) == 2)
    }

    @Test func theSameIdWithAnotherBodyIsAConflict() throws {
        let rig = try IdempotencyRig()
        defer { rig.close() }
        let workload = rig.workload("ic")
        for body in workload.setup() { try rig.expectAccepted(body.json) }
        let request = workload.loan(0)[0]
        let original = try rig.expectAccepted(request.json)
        let refusedBody = CommandBody(id: "ic-refused", type: "ApproveLoan", actor: ServiceProcess.admin, payload: ["loanId": "none"])
        let refused = try rig.exchange(try rig.signedFrames(refusedBody.json))
        #expect(refused["error"]?["code"]?.stringValue == "NOT_FOUND")
        let head = try rig.head()

        var other = request
        other.payload["principalCents"] = .integer(123_400)
        var spaced = request.json
        spaced.insert(UInt8(ascii: " "), at: 1)  // the same JSON value, other bytes
        var otherRefused = refusedBody
        otherRefused.payload["loanId"] = "none-either"
        let attempts: [(String, [UInt8], String)] = [
            ("another payload", other.json, ServiceProcess.Keys.service),
            ("the same JSON with a space", spaced, ServiceProcess.Keys.service),
            ("another body from another key", other.json, ServiceProcess.Keys.agentsOnly),
            // Another key must not learn (or share) the first sender's outcome.
            ("the same body from another key", request.json, ServiceProcess.Keys.commandsOnly),
            ("another body for a refused id", otherRefused.json, ServiceProcess.Keys.service),
        ]
        for (name, body, key) in attempts {
            let reply = try rig.exchange(try rig.signedFrames(body, key: key))
            #expect(reply["ok"] == .bool(false), "\(name): \(CanonicalJSON.string(reply))")
            #expect(reply["error"]?["code"]?.stringValue == "CONFLICT", "\(name): \(CanonicalJSON.string(reply))")
            #expect(reply["error"]?["reason"]?.stringValue == "COMMAND_ID_REUSED", "\(name): \(CanonicalJSON.string(reply))")
            #expect(reply["id"]?.stringValue == (body == otherRefused.json ? "ic-refused" : request.id), "\(name)")
            #expect(reply["duplicate"] != .bool(true), "\(name): a reused id is no duplicate")
        }
        #expect(try rig.head() == head, "nothing appended")
        // The first decisions stand: the original bodies are still answered as duplicates.
        idempotencyExpectDuplicate(try rig.exchange(try rig.signedFrames(request.json)), of: original)
        idempotencyExpectDuplicate(try rig.exchange(try rig.signedFrames(refusedBody.json)), of: refused)
        let entry = try #require(try rig.journaled(request.id))
        #expect(entry.outcome == .accepted(idempotencyEvents(original)))
        let keys = try SubjectKeyStore(readingAt: rig.data.appendingPathComponent("subject-keys.db").path)
        let digest = try BodyDigest(store: keys)
        #expect(
            entry.bodyDigest == digest.of(sha256: HashChain.sha256(request.json)),
            "the journal keeps the first body's digest")
    }

    @Test func aRetryAfterARefusalThatDecidedNothingIsDecidedAfresh() throws {
        let rig = try IdempotencyRig()
        defer { rig.close() }
        func register(_ id: String) -> [UInt8] {
            CommandBody(
                id: id, type: "RegisterUser", actor: "\(id)-agent",
                payload: ["userId": .string("\(id)-agent"), "username": .string(id), "email": .string("\(id)@example.com"), "role": "AGENT"]
            ).json
        }
        let now = Timestamp.now().secondsSinceEpoch
        let attempts: [(id: String, first: [[UInt8]], code: String)] = [
            // MALFORMED with the id read: the type is a number.
            ("fresh-malformed",
             try rig.signedFrames(Array(#"{"id":"fresh-malformed","type":1,"actor":"a","payload":{}}"#.utf8)), "MALFORMED"),
            // MALFORMED framing: no delimiter.
            ("fresh-frames", Array(try rig.signedFrames(register("fresh-frames")).dropFirst()), "MALFORMED"),
            // UNAUTHENTICATED: stale, and signed with the wrong secret.
            ("fresh-stale", try rig.signedFrames(register("fresh-stale"), ts: now - 400), "UNAUTHENTICATED"),
            ("fresh-badsig",
             try rig.signedFrames(register("fresh-badsig"), secretOf: ServiceProcess.Keys.historyOnly), "UNAUTHENTICATED"),
            // TOO_LARGE, with the same id.
            ("fresh-large",
             try rig.signedFrames(
                Array(#"{"id":"fresh-large","type":"RegisterUser","actor":"a","payload":{"x":""#.utf8)
                    + [UInt8](repeating: UInt8(ascii: "x"), count: 70_000) + Array(#""}}"#.utf8)), "TOO_LARGE"),
            // FORBIDDEN for the key's scope, refused at the gate too.
            ("fresh-scope", try rig.signedFrames(register("fresh-scope"), key: ServiceProcess.Keys.historyOnly), "FORBIDDEN"),
        ]
        let head = try rig.head()
        for (id, first, code) in attempts {
            let reply = try rig.exchange(first)
            #expect(reply["error"]?["code"]?.stringValue == code, "\(id): \(CanonicalJSON.string(reply))")
            #expect(try rig.journaled(id) == nil, "\(id): not journaled")
        }
        #expect(try rig.head() == head)
        for (id, _, _) in attempts {
            let reply = try rig.exchange(try rig.signedFrames(register(id)))
            #expect(reply["id"]?.stringValue == id)
            #expect(
                reply["ok"] == .bool(true) && reply["duplicate"] == .bool(false),
                "\(id): decided afresh after a refusal that decided nothing: \(CanonicalJSON.string(reply))")
            // And from now on it is decided.
            idempotencyExpectDuplicate(try rig.exchange(try rig.signedFrames(register(id))), of: reply)
        }
        #expect(try rig.head() == head + Int64(attempts.count))
    }

    @Test func theSameIdTwiceInOneBurstIsDecidedOnce() throws {
        let rig = try IdempotencyRig()
        defer { rig.close() }
        let workload = rig.workload("ib")
        for body in workload.setup() { try rig.expectAccepted(body.json) }
        let head = try rig.head()
        let loan = workload.loan(0)
        let request = try rig.signedFrames(loan[0].json)
        let approve = try rig.signedFrames(loan[1].json)
        let pay = try rig.signedFrames(loan[2].json)
        var reused = loan[2]
        reused.payload["amountCents"] = .integer(100)
        let reusedFrames = try rig.signedFrames(reused.json)

        // Back to back, without waiting: each command twice in a row, then the payment's id
        // with another body.
        let burst = [request, request, approve, approve, pay, pay, reusedFrames, request]
        for frames in burst { try rig.dealer.send(frames) }
        var replies: [JSONValue] = []
        for _ in burst { replies.append(try rig.receive()) }

        let ids = replies.map { $0["id"]?.stringValue ?? "?" }
        #expect(ids == [loan[0].id, loan[0].id, loan[1].id, loan[1].id, loan[2].id, loan[2].id, loan[2].id, loan[0].id])
        for first in [0, 2, 4] {
            #expect(
                replies[first]["ok"] == .bool(true) && replies[first]["duplicate"] == .bool(false),
                "\(CanonicalJSON.string(replies[first]))")
            idempotencyExpectDuplicate(replies[first + 1], of: replies[first])
        }
        #expect(replies[6]["error"]?["code"]?.stringValue == "CONFLICT", "\(CanonicalJSON.string(replies[6]))")
        #expect(replies[6]["error"]?["reason"]?.stringValue == "COMMAND_ID_REUSED")
        idempotencyExpectDuplicate(replies[7], of: replies[0])

        // One request, one approval, one payment (two events): four events, each once.
        #expect(try rig.head() == head + 4)
        let page = try rig.historyPage(after: head)
        #expect(page.compactMap { $0["type"]?.stringValue } == ["LoanRequested", "LoanApproved", "PaymentReceived", "CommissionEarned"])
        #expect(page.compactMap { $0["position"]?.integerValue } == Array((head + 1)...(head + 4)))

        // A refusal twice in one burst: the second is the first's duplicate.
        let missing = try rig.signedFrames(
            CommandBody(id: "ib-missing", type: "ApproveLoan", actor: ServiceProcess.admin, payload: ["loanId": "none"]).json)
        try rig.dealer.send(missing)
        try rig.dealer.send(missing)
        let refusedFirst = try rig.receive()
        #expect(refusedFirst["error"]?["code"]?.stringValue == "NOT_FOUND", "\(CanonicalJSON.string(refusedFirst))")
        #expect(refusedFirst["duplicate"] != .bool(true))
        idempotencyExpectDuplicate(try rig.receive(), of: refusedFirst)
        #expect(try rig.head() == head + 4)
    }

    @Test func theSameIdFromTwoConnectionsAtOnceIsDecidedOnce() throws {
        let rig = try IdempotencyRig()
        defer { rig.close() }
        let workload = rig.workload("it")
        for body in workload.setup() { try rig.expectAccepted(body.json) }
        let head = try rig.head()
        let second = try ZMQSocket(rig.context, .dealer)
        defer { second.close() }
        try second.connect(rig.service.commands)

        // The same commands from two connections, interleaved, without waiting; then one
        // id with two bodies, one per connection.
        let loan = workload.loan(0)
        let frames = try loan.map { try rig.signedFrames($0.json) }
        var rivalBody = workload.loan(1)[0]
        rivalBody.id = "it-rival"
        var otherBody = rivalBody
        otherBody.payload["principalCents"] = .integer(999_900)
        for request in frames {
            try rig.dealer.send(request)
            try second.send(request)
        }
        try rig.dealer.send(try rig.signedFrames(rivalBody.json))
        try second.send(try rig.signedFrames(otherBody.json))

        var first: [JSONValue] = []
        var other: [JSONValue] = []
        for _ in 0...loan.count {
            first.append(try rig.receive())
            other.append(try JSONParser.parse(receiveReply(on: second, from: rig.service, timeoutMilliseconds: 15_000)))
        }
        for index in loan.indices {
            let pair = [first[index], other[index]]
            #expect(pair.allSatisfy { $0["ok"] == .bool(true) && $0["id"]?.stringValue == loan[index].id })
            #expect(pair.filter { $0["duplicate"] == .bool(false) }.count == 1, "decided once: \(pair.map(CanonicalJSON.string))")
            #expect(pair[0]["events"] == pair[1]["events"], "both see the one decision's events")
        }
        let rivals = [first[loan.count], other[loan.count]]
        #expect(rivals.filter { $0["ok"] == .bool(true) }.count == 1, "\(rivals.map(CanonicalJSON.string))")
        #expect(rivals.filter { $0["error"]?["code"]?.stringValue == "CONFLICT" }.count == 1, "\(rivals.map(CanonicalJSON.string))")
        // Request, approval, payment (two events) and one of the rival requests.
        #expect(try rig.head() == head + 5)
    }

    @Test func aRetryAfterARestartIsStillADuplicate() throws {
        let data = try ChildProcess.temporaryDirectory("strata-idem-restart")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "is", agents: 1, accountsPerAgent: 2, today: Timestamp.now().date)
        let bodies = workload.setup() + workload.loan(0) + workload.invoice(0)
        let refusedBody = CommandBody(id: "is-refused", type: "ApproveLoan", actor: ServiceProcess.admin, payload: ["loanId": "none"])
        var originals: [String: JSONValue] = [:]
        let head: Int64
        do {
            let rig = try IdempotencyRig(data: data)
            for body in bodies { originals[body.id] = try rig.expectAccepted(body.json) }
            originals[refusedBody.id] = try rig.exchange(try rig.signedFrames(refusedBody.json))
            #expect(originals[refusedBody.id]?["error"]?["code"]?.stringValue == "NOT_FOUND")
            head = try rig.head()
            rig.close(removingData: false)
        }
        let rig = try IdempotencyRig(data: data)
        defer { rig.close(removingData: false) }
        for body in bodies + [refusedBody] {
            let reply = try rig.exchange(try rig.signedFrames(body.json))
            idempotencyExpectDuplicate(reply, of: try #require(originals[body.id]))
        }
        #expect(try rig.head() == head, "nothing appended after the restart")
        // Same id, another body, after the restart: still CONFLICT.
        var other = bodies[0]
        other.actor = "someone-else"
        let reply = try rig.exchange(try rig.signedFrames(other.json))
        #expect(reply["error"]?["code"]?.stringValue == "CONFLICT", "\(CanonicalJSON.string(reply))")
        // And the restarted service decides new commands.
        try rig.expectAccepted(workload.loan(1)[0].json)
        #expect(try rig.head() == head + 1)
    }
}

extension IdempotencyTests {
    /// The journal keeps a keyed digest of each body (`BodyDigest`), not its plain SHA-256: with
    /// `events.db` alone (a backup, an analyst's copy), hashing a guessed body confirmed an erased
    /// subject's email. A retry is a duplicate as ever, and so is a retry of a command journaled
    /// with the plain SHA-256 by an earlier version.
    @Test func theJournalKeepsAKeyedDigestThatStillKnowsARetry() throws {
        let data = try ChildProcess.temporaryDirectory("strata-idem-digest")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        func registration(_ id: String, agent: String) -> [UInt8] {
            CommandBody(
                id: id, type: "RegisterUser", actor: agent,
                payload: [
                    "userId": .string(agent), "username": .string(agent), "email": .string("\(agent)@example.com"),
                    "role": "AGENT",
                ]
            ).json
        }
        let register = registration("jd-reg", agent: "jd-agent")
        let older = registration("jd-older", agent: "jd-agent2")
        var originals: [JSONValue] = []
        do {
            let rig = try IdempotencyRig(data: data)
            originals = [try rig.expectAccepted(register), try rig.expectAccepted(older)]
            let entry = try #require(try rig.journaled("jd-reg"))
            #expect(entry.bodyDigest != HashChain.sha256(register), "the journal confirms a guessed body")
            let bootstrap = try #require(try rig.journaled("operator-bootstrap-\(ServiceProcess.admin)"))
            let bootstrapBody = CanonicalJSON.bytes(
                ["id": .string(ServiceProcess.admin), "username": "root", "email": "root@example.com"])
            #expect(bootstrap.bodyDigest != HashChain.sha256(bootstrapBody), "the journal confirms the admin's email")
            rig.close(removingData: false)
        }
        // As an earlier version journaled it: the body's plain SHA-256.
        do {
            let store = try SQLiteConnection(path: data.appendingPathComponent("events.db").path, mode: .readWrite)
            try store.statement("UPDATE commands SET body_digest = ? WHERE command_id = 'jd-older'")
                .run([.text(Hex.encode(HashChain.sha256(older)))])
        }
        let rig = try IdempotencyRig(data: data)
        defer { rig.close(removingData: false) }
        idempotencyExpectDuplicate(try rig.exchange(try rig.signedFrames(register)), of: originals[0])
        idempotencyExpectDuplicate(try rig.exchange(try rig.signedFrames(older)), of: originals[1])
        let other = try rig.exchange(try rig.signedFrames(registration("jd-older", agent: "jd-agent3")))
        #expect(other["error"]?["code"]?.stringValue == "CONFLICT", "\(CanonicalJSON.string(other))")
    }
}

// MARK: - Helpers

/// A running service on a (new or given) data directory, a raw DEALER on its commands
/// endpoint, a history client, and the store beneath.
private final class IdempotencyRig {
    let data: URL
    let service: ServiceProcess
    let context: ZMQContext
    let dealer: ZMQSocket
    let history: SignedClient
    private let ownsData: Bool

    convenience init() throws {
        let data = try ChildProcess.temporaryDirectory("strata-idem")
        do {
            try ServiceProcess.prepare(data)
            try self.init(data: data, ownsData: true)
        } catch {
            try? FileManager.default.removeItem(at: data)
            throw error
        }
    }

    init(data: URL, ownsData: Bool = false) throws {
        self.data = data
        self.ownsData = ownsData
        service = try ServiceProcess(dataDirectory: data)
        context = try ZMQContext()
        dealer = try ZMQSocket(context, .dealer)
        try dealer.setHighWaterMarks(send: 0, receive: 0)
        try dealer.connect(service.commands)
        history = try service.historyClient(context)
    }

    func close(removingData: Bool = true) {
        dealer.close()
        history.close()
        #expect(service.stop() == 0, "the service stops cleanly: \(service.log)")
        if ownsData && removingData { try? FileManager.default.removeItem(at: data) }
    }

    func workload(_ prefix: String) -> LendingWorkload {
        LendingWorkload(admin: ServiceProcess.admin, prefix: prefix, agents: 1, accountsPerAgent: 2, today: Timestamp.now().date)
    }

    func signedFrames(
        _ body: [UInt8], key: String = ServiceProcess.Keys.service, secretOf: String? = nil, ts: Int64? = nil
    ) throws -> [[UInt8]] {
        try service.signedFrames(body, key: key, secretOf: secretOf, timestamp: ts)
    }

    func receive(sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        try JSONParser.parse(
            receiveReply(on: dealer, from: service, timeoutMilliseconds: 15_000, sourceLocation: sourceLocation))
    }

    func exchange(_ frames: [[UInt8]], sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        try dealer.send(frames)
        return try receive(sourceLocation: sourceLocation)
    }

    /// Sends `body` signed by the service key and expects a first acceptance.
    @discardableResult
    func expectAccepted(_ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        let reply = try exchange(try signedFrames(body), sourceLocation: sourceLocation)
        try #require(
            reply["ok"] == .bool(true) && reply["duplicate"] == .bool(false), "\(CanonicalJSON.string(reply))",
            sourceLocation: sourceLocation)
        return reply
    }

    /// The history after `after`, parsed (at most 10,000 events: these tests write few).
    func historyPage(after: Int64) throws -> [JSONValue] {
        let raw = try #require(try history.request(HistoryRequest(after: after, limit: 10_000).json), "no history reply")
        let page = try JSONParser.parse(raw)
        return try #require(page["events"]?.arrayValue, "\(CanonicalJSON.string(page))")
    }

    func store() throws -> SQLiteEventStore { try service.store() }

    func head() throws -> Int64 { try store().head() }

    func journaled(_ id: String) throws -> JournalEntry? { try store().journalEntry(commandId: id) }
}

/// `reply` is the original's duplicate: the same id, outcome, events or error, and
/// `duplicate:true`.
private func idempotencyExpectDuplicate(
    _ reply: JSONValue, of original: JSONValue, sourceLocation: SourceLocation = #_sourceLocation
) {
    let text = "\(CanonicalJSON.string(reply)) for the original \(CanonicalJSON.string(original))"
    #expect(reply["duplicate"] == .bool(true), "a retry says duplicate: \(text)", sourceLocation: sourceLocation)
    #expect(reply["id"] != nil && reply["id"] == original["id"], "\(text)", sourceLocation: sourceLocation)
    #expect(reply["ok"] != nil && reply["ok"] == original["ok"], "\(text)", sourceLocation: sourceLocation)
    #expect(reply["events"] == original["events"], "the same events: \(text)", sourceLocation: sourceLocation)
    #expect(reply["error"] == original["error"], "the same refusal: \(text)", sourceLocation: sourceLocation)
}

/// An accepted reply's events as the journal keeps them.
private func idempotencyEvents(_ reply: JSONValue) -> [AppendedEvent] {
    (reply["events"]?.arrayValue ?? []).map {
        AppendedEvent(
            position: $0["position"]?.integerValue ?? -1, stream: $0["stream"]?.stringValue ?? "",
            version: $0["version"]?.integerValue ?? -1, type: $0["type"]?.stringValue ?? "")
    }
}

