import Bus
import CommandService
import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing
import Workloads

/// Pipelining, the event bus and history through the real `strata serve`: replies in the
/// order sent, every event published once in position order under its topic, heartbeats
/// naming the head, history pages equal byte for byte to the bus, catch-up by a late
/// subscriber, the history endpoint's refusals, and expected-version races.
@Suite struct PipelineAndBusTests {
    @Test func aThousandPipelinedCommandsAreAnsweredInOrderAndPublishedInPositionOrder() throws {
        let rig = try ServiceRig(name: "strata-pipeline")
        defer { rig.close() }
        let sub = try rig.subscriber()
        defer { sub.close() }
        // A first heartbeat proves the subscription is live before anything is sent.
        let startHead = try #require(try rig.awaitHeartbeat(on: sub, timeoutSeconds: 5))
        #expect(startHead == (try rig.head()), "the heartbeat names the store's head")

        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "pb", agents: 2, accountsPerAgent: 5, today: Timestamp.now().date)
        let bodies = workload.setup() + (0..<300).flatMap(workload.loan) + (0..<43).flatMap(workload.invoice)
        try #require(bodies.count == 1000)
        for body in bodies { try rig.dealer.send(try rig.signedFrames(body.json)) }

        // Read replies and the bus together until every reply came and the bus reached
        // the last position the replies name.
        var replies: [JSONValue] = []
        var bus: [(topic: [UInt8], event: [UInt8])] = []
        var heartbeats: [(head: Int64, seenBefore: Int64)] = []
        var lastOnBus = startHead
        var lastReplied = startHead
        let deadline = Date().addingTimeInterval(90)
        while replies.count < bodies.count || lastOnBus < lastReplied {
            try #require(Date() < deadline, "timed out: \(replies.count) replies, bus at \(lastOnBus) of \(lastReplied)")
            let ready = try zmqPollReadable([rig.dealer, sub], timeoutMilliseconds: 1000)
            if ready.contains(0) {
                while let frames = try rig.dealer.receive(wait: false) {
                    let reply = try JSONParser.parse(frames.last ?? [])
                    replies.append(reply)
                    for event in reply["events"]?.arrayValue ?? [] {
                        lastReplied = max(lastReplied, event["position"]?.integerValue ?? 0)
                    }
                }
            }
            if ready.contains(1) {
                while let frames = try sub.receive(wait: false) {
                    try #require(frames.count == 2, "PUB frames are [topic][event]")
                    if frames[0] == Heartbeat.topic {
                        let heartbeat = try #require(Heartbeat(json: frames[1]), "\(String(decoding: frames[1], as: UTF8.self))")
                        heartbeats.append((heartbeat.head, lastOnBus))
                    } else {
                        bus.append((frames[0], frames[1]))
                        lastOnBus = try JSONParser.parse(frames[1])["position"]?.integerValue ?? lastOnBus
                    }
                }
            }
        }

        // Replies: in the order sent, all accepted, their events in increasing positions.
        #expect(replies.map { $0["id"]?.stringValue ?? "?" } == bodies.map(\.id), "replies come back in the order sent")
        let refused = replies.filter { $0["ok"] != .bool(true) }
        #expect(refused.isEmpty, "all accepted; refused: \(refused.prefix(3).map(CanonicalJSON.string))")
        let replied = replies.flatMap { reply in
            (reply["events"]?.arrayValue ?? []).map {
                "\($0["position"]?.integerValue ?? -1) \($0["stream"]?.stringValue ?? "") \($0["version"]?.integerValue ?? -1) \($0["type"]?.stringValue ?? "")"
            }
        }
        let head = try rig.head()
        #expect(lastReplied == head)
        #expect(replied.count == Int(head - startHead), "every appended event is named in exactly one reply")

        // The bus: every event once, positions gapless from the start to the head, topic
        // `<category>.<Type>`, the same events the replies named, in the same order.
        let parsed = try bus.map { try JSONParser.parse($0.event) }
        #expect(parsed.map { $0["position"]?.integerValue ?? -1 } == Array((startHead + 1)...head), "gapless, in order")
        // (Mismatches are collected, so a systematic fault reports once, not 1,000 times.)
        var wrongTopics: [String] = []
        for ((topic, _), event) in zip(bus, parsed) {
            let stream = event["stream"]?.stringValue ?? ""
            let type = event["type"]?.stringValue ?? ""
            let category = stream.prefix { $0 != "-" }
            let actual = String(decoding: topic, as: UTF8.self)
            if category.isEmpty || type.isEmpty || actual != "\(category).\(type)" {
                wrongTopics.append("\(actual) for \(stream) \(type)")
            }
        }
        #expect(wrongTopics.isEmpty, "\(wrongTopics.count) topics are not <category>.<Type>: \(wrongTopics.prefix(5))")
        let published = parsed.map {
            "\($0["position"]?.integerValue ?? -1) \($0["stream"]?.stringValue ?? "") \($0["version"]?.integerValue ?? -1) \($0["type"]?.stringValue ?? "")"
        }
        #expect(published == replied, "the bus carries what the replies announced")
        // Each event names the command that appended it, as metadata, and its own schema and time.
        var commandOf: [Int64: CommandBody] = [:]
        for (body, reply) in zip(bodies, replies) {
            for event in reply["events"]?.arrayValue ?? [] { commandOf[event["position"]?.integerValue ?? -1] = body }
        }
        var wrongEnvelopes: [String] = []
        for event in parsed {
            let position = event["position"]?.integerValue ?? -1
            let metadata = event["metadata"]
            let command = commandOf[position]
            let recordedAt = event["recordedAt"]?.stringValue ?? ""
            let problems = [
                metadata?["commandId"]?.stringValue == command?.id ? nil : "commandId",
                metadata?["causationId"]?.stringValue == command?.id ? nil : "causationId",
                metadata?["actor"]?.stringValue == command?.actor ? nil : "actor",
                // Absent optional fields are omitted, never null.
                metadata?["correlationId"] == nil ? nil : "correlationId",
                (event["schemaVersion"]?.integerValue ?? 0) >= 1 ? nil : "schemaVersion",
                recordedAt.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression) != nil
                    ? nil : "recordedAt",
                event["hash"]?.stringValue?.count == 64 && event["prevHash"]?.stringValue?.count == 64 ? nil : "hashes",
            ].compactMap { $0 }
            if !problems.isEmpty { wrongEnvelopes.append("\(position): \(problems)") }
        }
        #expect(wrongEnvelopes.isEmpty, "\(wrongEnvelopes.count) events with a wrong envelope: \(wrongEnvelopes.prefix(5))")
        let types = Set(parsed.compactMap { $0["type"]?.stringValue })
        for type in ["LoanApproved", "PaymentReceived", "CommissionEarned", "InvoiceCreated", "InvoicePaid"] {
            #expect(types.contains(type), "the workload published \(type)")
        }

        // Heartbeats never announce a head beyond what was already delivered, and one
        // names the final head within about 3 s.
        for heartbeat in heartbeats {
            #expect(heartbeat.head <= heartbeat.seenBefore, "a heartbeat of \(heartbeat.head) after only \(heartbeat.seenBefore) was published")
        }
        if heartbeats.last?.head != head {
            let last = try rig.awaitHeartbeat(on: sub, timeoutSeconds: 3, until: { $0 == head })
            #expect(last == head, "a heartbeat names the head \(head) within 3 s")
        }

        // History, in pages of 100, equals the bus byte for byte.
        let history = try rig.historyPages(limit: 100)
        #expect(history.pages == Int((head + 99) / 100))
        #expect(history.heads.allSatisfy { $0 == head })
        let positions = try history.events.map { try JSONParser.parse($0)["position"]?.integerValue ?? -1 }
        #expect(positions == Array(1...head), "history is gapless from 1")
        var differing: [Int] = []
        for (offset, (_, event)) in bus.enumerated() {
            let position = Int(startHead) + offset + 1
            if position > history.events.count || history.events[position - 1] != event { differing.append(position) }
        }
        #expect(differing.isEmpty, "\(differing.count) positions differ between the bus and history: \(differing.prefix(10))")
        if let first = differing.first, first <= history.events.count {
            let bytes = bus[first - Int(startHead) - 1].event
            Issue.record("bus:     \(String(decoding: bytes, as: UTF8.self))\nhistory: \(String(decoding: history.events[first - 1], as: UTF8.self))")
        }
        #expect(try rig.store().verify().isIntact)
    }

    @Test func aLateSubscriberCatchesUpThroughHistoryThenContinuesLive() throws {
        let rig = try ServiceRig(name: "strata-pipeline")
        defer { rig.close() }
        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "pl", agents: 2, accountsPerAgent: 3, today: Timestamp.now().date)
        let burst = workload.setup() + (0..<60).flatMap(workload.loan) + (0..<10).flatMap(workload.invoice)
        for reply in try rig.pipeline(burst.map(\.json)) {
            try #require(reply["ok"] == .bool(true), "\(CanonicalJSON.string(reply))")
        }
        let head = try rig.head()
        try #require(head > 200, "several pages of 100")

        // Joining now, it hears at most the tail of the burst (replies leave before the
        // events are published); the heartbeat tells it how far to read history.
        let sub = try rig.subscriber()
        defer { sub.close() }
        var tail: [[UInt8]] = []
        let announced = try rig.awaitHeartbeat(on: sub, timeoutSeconds: 3, onEvent: { tail.append($0) })
        #expect(announced == head)
        let history = try rig.historyPages(limit: 100)
        #expect(history.pages == Int((head + 99) / 100))
        let positions = try history.events.map { try JSONParser.parse($0)["position"]?.integerValue ?? -1 }
        #expect(positions == Array(1...head), "history from 1 to the head, no gap")
        #expect(positions.last == announced, "catch-up ends at the heartbeat's head")
        // What the bus did deliver of the burst is a gapless run up to the head, as history has it.
        let tailPositions = try tail.map { try JSONParser.parse($0)["position"]?.integerValue ?? -1 }
        if let first = tailPositions.first {
            #expect(tailPositions == Array(first...head), "the tail heard live: \(tailPositions)")
            for (position, event) in zip(tailPositions, tail) where position >= 1 && position <= history.events.count {
                #expect(history.events[Int(position) - 1] == event, "position \(position): the bus and history differ")
            }
        }

        // Live from there: the next commands' events follow on, without a gap.
        let more = (workload.loan(60) + workload.invoice(10)).map { body in
            var body = body
            body.correlationId = "live-\(body.id)"
            return body
        }
        let replies = try rig.pipeline(more.map(\.json))
        #expect(replies.allSatisfy { $0["ok"] == .bool(true) })
        let newHead = try rig.head()
        var live: [Int64] = []
        var liveEvents: [JSONValue] = []
        var liveHeartbeats: [Date] = []
        let deadline = Date().addingTimeInterval(5)
        while (live.last ?? head) < newHead || liveHeartbeats.count < 2 {
            try #require(Date() < deadline, "live events \(live), heartbeats \(liveHeartbeats.count)")
            guard try !zmqPollReadable([sub], timeoutMilliseconds: 200).isEmpty, let frames = try sub.receive(wait: false)
            else { continue }
            if frames.first == Heartbeat.topic {
                if Heartbeat(json: frames.last ?? [])?.head == newHead { liveHeartbeats.append(Date()) }
            } else {
                let event = try JSONParser.parse(frames.last ?? [])
                liveEvents.append(event)
                live.append(event["position"]?.integerValue ?? -1)
            }
        }
        for event in liveEvents {
            let metadata = event["metadata"]
            #expect(
                metadata?["correlationId"]?.stringValue == "live-\(metadata?["commandId"]?.stringValue ?? "?")",
                "the command's correlationId is in its events' metadata")
        }
        #expect(live == Array((head + 1)...newHead), "live events continue where history ended")
        if liveHeartbeats.count == 2 {
            let interval = liveHeartbeats[1].timeIntervalSince(liveHeartbeats[0])
            #expect(interval > 0.5 && interval < 2, "about one heartbeat a second: \(interval) s")
        }
    }

    @Test func historyFiltersByCategory() throws {
        let rig = try ServiceRig(name: "strata-pipeline")
        defer { rig.close() }
        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "pc", agents: 2, accountsPerAgent: 2, today: Timestamp.now().date)
        for reply in try rig.pipeline((workload.setup() + (0..<8).flatMap(workload.loan) + (0..<4).flatMap(workload.invoice)).map(\.json)) {
            try #require(reply["ok"] == .bool(true), "\(CanonicalJSON.string(reply))")
        }
        let all = try rig.historyPages(limit: 10_000).events.map { try JSONParser.parse($0) }
        func streams(_ events: [JSONValue]) -> [String] { events.compactMap { $0["stream"]?.stringValue } }
        func category(_ stream: String) -> String { String(stream.prefix { $0 != "-" }) }
        #expect(Set(streams(all).map(category)).isSuperset(of: ["user", "account", "loan", "invoice", "agent", "invoiceseries"]))

        // A thousand times one category, and more than a thousand distinct ones: SQLite refused
        // either as an expression too deep, and the page was INTERNAL, as if the store had failed.
        let letters: [Character] = Array("abcdefghijklmnopqrstuvwxyz")
        let madeUp: [String] = (0..<1_200).map { (n: Int) -> String in
            String(["x", letters[n / 26 % 26], letters[n % 26]])
        }
        let few: [[String]] = [["loan"], ["loan", "invoice"], ["user"], ["agent"]]
        let many: [[String]] = [Array(repeating: "loan", count: 1_000), madeUp + ["loan", "invoice"]]
        for categories in few + many {
            let expected = all.filter { categories.contains(category($0["stream"]?.stringValue ?? "")) }
            // One page, and pages of 7.
            let whole = try rig.historyPages(limit: 10_000, categories: categories).events.map { try JSONParser.parse($0) }
            #expect(whole == expected, "\(categories): exactly those streams' events, in position order")
            #expect(!whole.isEmpty)
            let paged = try rig.historyPages(limit: 7, categories: categories)
            #expect(try paged.events.map { try JSONParser.parse($0) } == expected, "\(categories) in pages of 7")
        }
        // A category nobody wrote: no events, and still the head.
        let none = try rig.historyPages(limit: 100, categories: ["cashout"])
        #expect(none.events.isEmpty)
        #expect(none.heads == [try rig.head()])
    }

    @Test func historyRefusesMalformedInvalidAndUnscopedRequests() throws {
        let rig = try ServiceRig(name: "strata-pipeline")
        defer { rig.close() }
        let raw = try ZMQSocket(rig.context, .dealer)
        defer { raw.close() }
        try raw.connect(rig.service.history)
        func ask(_ body: String, key: String = ServiceProcess.Keys.service) throws -> JSONValue {
            try rig.exchange(try rig.signedFrames(Array(body.utf8), key: key), on: raw)
        }
        func expectStillAnswering(_ note: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let reply = try ask(#"{"after":0,"limit":1}"#)
            #expect(reply["events"]?.arrayValue?.count == 1, "after \(note): \(CanonicalJSON.string(reply))", sourceLocation: sourceLocation)
        }

        let malformed: [(String, String)] = [
            (#"{"after":"x"}"#, "INVALID_AFTER_FIELD"),
            (#"{"limit":5}"#, "INVALID_AFTER_FIELD"),
            (#"{"after":null}"#, "INVALID_AFTER_FIELD"),
            (#"{"after":0,"limit":"5"}"#, "INVALID_LIMIT_FIELD"),
            (#"{"after":0,"categories":"loan"}"#, "INVALID_CATEGORIES_FIELD"),
            (#"{"after":0,"categories":[1]}"#, "INVALID_CATEGORIES_FIELD"),
            (#"{"after":0,"from":3}"#, "UNKNOWN_BODY_FIELD"),
            (#"{"after":0"#, "BODY_NOT_JSON"),
            (#"[0]"#, "BODY_NOT_OBJECT"),
        ]
        for (body, reason) in malformed {
            pipelineExpectHistoryRefusal(try ask(body), "MALFORMED", reason, body)
            try expectStillAnswering(body)
        }
        let frames = try rig.signedFrames(Array(#"{"after":0}"#.utf8))
        pipelineExpectHistoryRefusal(try rig.exchange(Array(frames.dropFirst()), on: raw), "MALFORMED", "BAD_FRAMES", "no delimiter")
        pipelineExpectHistoryRefusal(try rig.exchange(frames + [[]], on: raw), "MALFORMED", "BAD_FRAMES", "five frames")
        try expectStillAnswering("bad frames")

        let invalid: [(String, [String])] = [
            (#"{"after":0,"limit":0}"#, ["limit:OUT_OF_RANGE"]),
            (#"{"after":0,"limit":10001}"#, ["limit:OUT_OF_RANGE"]),
            (#"{"after":-1}"#, ["after:OUT_OF_RANGE"]),
            (#"{"after":-1,"limit":0}"#, ["after:OUT_OF_RANGE", "limit:OUT_OF_RANGE"]),
            (#"{"after":-5,"limit":-5,"categories":["Loan","loan","x-y"]}"#,
             ["after:OUT_OF_RANGE", "limit:OUT_OF_RANGE", "categories[0]:INVALID_FORMAT", "categories[2]:INVALID_FORMAT"]),
            (#"{"after":0,"categories":[]}"#, ["categories:EMPTY"]),
        ]
        for (body, details) in invalid {
            let reply = try ask(body)
            pipelineExpectHistoryRefusal(reply, "INVALID", String(details[0].split(separator: ":")[1]), body)
            let listed = (reply["error"]?["details"]?.arrayValue ?? []).map {
                "\($0["field"]?.stringValue ?? "?"):\($0["reason"]?.stringValue ?? "?")"
            }
            #expect(Set(listed) == Set(details) && listed.count == details.count, "\(body): every problem listed: \(listed)")
            try expectStillAnswering(body)
        }

        pipelineExpectHistoryRefusal(try ask(#"{"after":0}"#, key: ServiceProcess.Keys.commandsOnly), "FORBIDDEN", "KEY_SCOPE", "cmd-only")
        try expectStillAnswering("cmd-only")

        // The edges that are allowed: limit 1 and 10,000, a position past the head, no limit.
        let head = try rig.head()
        for (body, count) in [(#"{"after":0,"limit":10000}"#, head), (#"{"after":0}"#, head), (#"{"after":0,"limit":1}"#, 1)] {
            let reply = try ask(body)
            #expect(reply["events"]?.arrayValue?.count == Int(count), "\(body): \(CanonicalJSON.string(reply))")
            #expect(reply["head"]?.integerValue == head, "\(body)")
        }
        let beyond = try ask(#"{"after":1000000,"limit":5}"#)
        #expect(beyond["events"]?.arrayValue?.isEmpty == true && beyond["head"]?.integerValue == head, "\(CanonicalJSON.string(beyond))")
        // The optional members read `null` as absent, as a command's own fields do (protocol.md); a
        // number they cannot hold, which the parser also reads as a `null`, is still of the wrong type.
        for body in [#"{"after":0,"limit":null}"#, #"{"after":0,"limit":null,"categories":null,"open":null}"#] {
            let reply = try ask(body)
            #expect(reply["events"]?.arrayValue?.count == Int(head), "\(body): \(CanonicalJSON.string(reply))")
        }
        pipelineExpectHistoryRefusal(
            try ask(#"{"after":0,"limit":1e999}"#), "MALFORMED", "INVALID_LIMIT_FIELD", "1e999")
        pipelineExpectHistoryRefusal(
            try ask(#"{"after":0,"categories":null,"limit":0.5}"#), "MALFORMED", "INVALID_LIMIT_FIELD", "0.5")
    }

    @Test func twoCommandsExpectingTheSameVersionConflict() throws {
        let rig = try ServiceRig(name: "strata-pipeline")
        defer { rig.close() }
        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "pv", agents: 1, accountsPerAgent: 2, today: Timestamp.now().date)
        for reply in try rig.pipeline((workload.setup() + [workload.loan(0)[0], workload.loan(1)[0]]).map(\.json)) {
            try #require(reply["ok"] == .bool(true), "\(CanonicalJSON.string(reply))")
        }
        let loanId = workload.loanId(0)
        let loanStream = try #require(StreamName(category: "loan", id: loanId))
        try #require(try rig.store().version(of: loanStream) == 1)

        // Approve and reject the same loan, both expecting version 1, back to back; and on
        // another loan an approval at its own version 1, which has no rival.
        var approve = workload.loan(0)[1]
        approve.expectedVersion = 1
        let reject = CommandBody(
            id: "pv-reject-0", type: "RejectLoan", actor: ServiceProcess.admin,
            payload: ["loanId": .string(loanId), "reason": "duplicate application"], expectedVersion: 1)
        var approveOther = workload.loan(1)[1]
        approveOther.expectedVersion = 1
        var replies = try rig.pipeline([approve.json, reject.json, approveOther.json])
        #expect(replies[0]["ok"] == .bool(true), "\(CanonicalJSON.string(replies[0]))")
        #expect(replies[0]["events"]?.arrayValue?.first?["version"] == .integer(2))
        #expect(replies[1]["error"]?["code"]?.stringValue == "CONFLICT", "\(CanonicalJSON.string(replies[1]))")
        #expect(replies[1]["error"]?["reason"]?.stringValue == "WRONG_EXPECTED_VERSION")
        #expect(replies[1]["id"]?.stringValue == reject.id)
        #expect(replies[2]["ok"] == .bool(true), "another loan's version is its own: \(CanonicalJSON.string(replies[2]))")

        // Two payments on the approved loan, both expecting version 2.
        var first = workload.loan(0)[2]
        first.expectedVersion = 2
        var second = first
        second.id = "pv-pay-second"
        second.payload["paymentId"] = .string("\(loanId)-p2")
        replies = try rig.pipeline([first.json, second.json])
        #expect(replies[0]["ok"] == .bool(true), "\(CanonicalJSON.string(replies[0]))")
        #expect(replies[1]["error"]?["code"]?.stringValue == "CONFLICT", "\(CanonicalJSON.string(replies[1]))")
        #expect(replies[1]["error"]?["reason"]?.stringValue == "WRONG_EXPECTED_VERSION")

        // The loan's stream: requested, approved, paid once.
        let events = try rig.store().events(in: loanStream, fromVersion: 1, limit: 100)
        #expect(events.map(\.type) == ["LoanRequested", "LoanApproved", "PaymentReceived"])
        // At the current version, a payment goes through.
        second.id = "pv-pay-third"
        second.expectedVersion = 3
        replies = try rig.pipeline([second.json])
        #expect(replies[0]["ok"] == .bool(true), "\(CanonicalJSON.string(replies[0]))")

        // An absent stream is at version 0: a new loan requested expecting 1 conflicts,
        // expecting 0 it is created; two such requests racing, the second conflicts.
        var early = workload.loan(2)[0]
        early.id = "pv-request-early"
        early.expectedVersion = 1
        var onTime = workload.loan(2)[0]
        onTime.expectedVersion = 0
        var rival = onTime
        rival.id = "pv-request-rival"
        replies = try rig.pipeline([early.json, onTime.json, rival.json])
        #expect(replies[0]["error"]?["reason"]?.stringValue == "WRONG_EXPECTED_VERSION", "\(CanonicalJSON.string(replies[0]))")
        #expect(replies[1]["ok"] == .bool(true), "\(CanonicalJSON.string(replies[1]))")
        #expect(replies[1]["events"]?.arrayValue?.first?["version"] == .integer(1))
        #expect(replies[2]["error"]?["reason"]?.stringValue == "WRONG_EXPECTED_VERSION", "\(CanonicalJSON.string(replies[2]))")
    }
}

// MARK: - Helpers

/// What the pipeline and bus tests add to the rig: pipelining, and the bus.
extension ServiceRig {
    /// The next reply on `socket`, `["", json]`, raw.
    func receiveRaw(on socket: ZMQSocket, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
        try receiveReply(on: socket, from: service, timeoutMilliseconds: 30_000, sourceLocation: sourceLocation)
    }

    /// Sends every body at once over the DEALER, then reads the replies, checking their ids.
    func pipeline(_ bodies: [[UInt8]], sourceLocation: SourceLocation = #_sourceLocation) throws -> [JSONValue] {
        for body in bodies { try dealer.send(try signedFrames(body)) }
        var replies: [JSONValue] = []
        for body in bodies {
            let reply = try JSONParser.parse(try receiveRaw(on: dealer, sourceLocation: sourceLocation))
            #expect(reply["id"] == (try JSONParser.parse(body))["id"], "replies in the order sent", sourceLocation: sourceLocation)
            replies.append(reply)
        }
        return replies
    }

    /// A SUB socket subscribed to everything.
    func subscriber() throws -> ZMQSocket {
        let sub = try ZMQSocket(context, .subscriber)
        try sub.setHighWaterMarks(send: 0, receive: 0)
        try sub.subscribe("")
        try sub.connect(service.events)
        return sub
    }

    /// Waits for a heartbeat whose head satisfies `accept`; returns its head, or nil on timeout.
    /// Events arriving meanwhile go to `onEvent`; by default they are a failure (nothing is
    /// being written).
    func awaitHeartbeat(
        on sub: ZMQSocket, timeoutSeconds: Double, sourceLocation: SourceLocation = #_sourceLocation,
        onEvent: (([UInt8]) -> Void)? = nil, until accept: (Int64) -> Bool = { _ in true }
    ) throws -> Int64? {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        var last: Int64?
        while Date() < deadline {
            guard try !zmqPollReadable([sub], timeoutMilliseconds: 100).isEmpty else { continue }
            while let frames = try sub.receive(wait: false) {
                if let onEvent, frames.count == 2, frames[0] != Heartbeat.topic {
                    onEvent(frames[1])
                    continue
                }
                guard frames.count == 2, frames[0] == Heartbeat.topic else {
                    Issue.record("an unexpected message on the bus: \(frames.map { String(decoding: $0, as: UTF8.self) })", sourceLocation: sourceLocation)
                    continue
                }
                let heartbeat = Heartbeat(json: frames[1])
                #expect(heartbeat != nil, "a heartbeat is {\"head\":N}: \(String(decoding: frames[1], as: UTF8.self))", sourceLocation: sourceLocation)
                last = heartbeat?.head
                if let head = last, accept(head) { return head }
            }
        }
        Issue.record("no matching heartbeat within \(timeoutSeconds) s (last: \(String(describing: last)))", sourceLocation: sourceLocation)
        return nil
    }

    /// The whole history (or some categories of it) read in pages of `limit`: each event's
    /// bytes exactly as the replies carried them, how many pages had events, and each
    /// reply's head.
    func historyPages(limit: Int64, categories: [String]? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> (events: [[UInt8]], pages: Int, heads: [Int64])
    {
        var events: [[UInt8]] = []
        var heads: [Int64] = []
        var pages = 0
        var after: Int64 = 0
        while true {
            let body = HistoryRequest(after: after, limit: limit, categories: categories).json
            try history.send(try signedFrames(body))
            let raw = try receiveRaw(on: history, sourceLocation: sourceLocation)
            let page = try JSONParser.parse(raw)
            let parsed = try #require(page["events"]?.arrayValue, "\(CanonicalJSON.string(page))", sourceLocation: sourceLocation)
            let slices = try #require(historyEventSlices(raw), "cannot split \(raw.count) bytes", sourceLocation: sourceLocation)
            try #require(slices.count == parsed.count, "the splitter agrees with the parser", sourceLocation: sourceLocation)
            for (slice, event) in zip(slices, parsed) {
                #expect(try JSONParser.parse(slice) == event, sourceLocation: sourceLocation)
            }
            heads.append(try #require(page["head"]?.integerValue, sourceLocation: sourceLocation))
            #expect(parsed.count <= Int(limit), sourceLocation: sourceLocation)
            guard let last = parsed.last?["position"]?.integerValue else { break }
            events += slices
            pages += 1
            after = last
            // A short page is the last one (a full one may be too: the next comes back empty).
            if parsed.count < Int(limit) { break }
            try #require(heads.count < 100_000, sourceLocation: sourceLocation)
        }
        return (events, pages, heads)
    }


}

/// A history refusal: `ok` false, code, reason, a message, no events.
private func pipelineExpectHistoryRefusal(
    _ reply: JSONValue, _ code: String, _ reason: String, _ note: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    let text = "\(note): \(CanonicalJSON.string(reply))"
    #expect(reply["ok"] == .bool(false), "\(text)", sourceLocation: sourceLocation)
    #expect(reply["error"]?["code"]?.stringValue == code, "code: \(text)", sourceLocation: sourceLocation)
    #expect(reply["error"]?["reason"]?.stringValue == reason, "reason: \(text)", sourceLocation: sourceLocation)
    #expect(reply["error"]?["message"]?.stringValue?.isEmpty == false, "message: \(text)", sourceLocation: sourceLocation)
    #expect(reply["events"] == nil, "no events in a refusal: \(text)", sourceLocation: sourceLocation)
}


