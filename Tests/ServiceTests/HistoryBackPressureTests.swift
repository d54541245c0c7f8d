import Bus
import EventStore
import Foundation
import ProjectorRuntime
import StrataCore
import StrataTesting
import Testing

/// What a history client can make the service hold: a client that pipelines requests for
/// long pages and stops reading has its replies beyond a few dropped and counted, not held,
/// and no page is much over 4 MiB, however many events were asked for.
@Suite(.serialized) struct HistoryBackPressureTests {
    /// Events put in the store before the service starts, each about 1.5 KB: a page of
    /// 10,000 of them would be about 15 MB.
    static let eventCount = 12_000
    static let pageBytes = 4 * 1024 * 1024

    @Test func aClientThatStopsReadingHasItsRepliesDroppedAndCountedNotHeld() throws {
        let (data, file, service) = try Self.meteredService("strata-history-hwm")
        defer { try? FileManager.default.removeItem(at: data) }
        defer { service.stop() }
        let context = try ZMQContext()
        let before = try #require(service.peakResidentKiB)

        // A client that sends 40 requests for 10,000 events each and reads nothing: it has room
        // for one reply itself.
        let requests = 40
        let stalled = try ZMQSocket(context, .dealer)
        defer { stalled.close() }
        try stalled.setHighWaterMarks(send: 0, receive: 1)
        try stalled.connect(service.history)
        let body = Array(#"{"after":0,"limit":10000}"#.utf8)
        for _ in 0..<requests { try stalled.send(try service.signedFrames(body)) }

        // Another client is answered meanwhile.
        let other = try service.historyClient(context)
        defer { other.close() }
        let started = ContinuousClock.now
        let answer = try #require(
            try other.request(Array(#"{"after":0,"limit":1}"#.utf8), timeoutMilliseconds: 30_000),
            "another client is answered while one stalls: \(service.log)")
        let waited = ContinuousClock.now - started
        #expect(try JSONParser.parse(answer)["ok"] == .bool(true), "\(String(decoding: answer, as: UTF8.self))")

        // The service answers every request: the replies beyond the few that wait for the client
        // are dropped and counted. It never holds all 40 pages (about 600 MB); stop waiting if it does.
        let boundKiB = 160 * 1024
        var dropped = 0.0
        let deadline = ContinuousClock.now + .seconds(120)
        while dropped < 20, ContinuousClock.now < deadline, (service.peakResidentKiB ?? 0) - before < boundKiB {
            Thread.sleep(forTimeInterval: 0.2)
            dropped = try Self.dropped(file)
        }
        let grownKiB = try #require(service.peakResidentKiB) - before
        #expect(
            dropped >= 20, "the replies the stalled client has no room for are dropped and counted: \(service.log)")
        #expect(grownKiB < boundKiB, "the service's peak grew by \(grownKiB) KiB for a client that reads nothing")
        #expect(
            service.log.contains("history: dropped replies:") && service.log.contains("for key svc"), "\(service.log)")
        print(
            "history back-pressure: peak grew by \(grownKiB) KiB, another client answered in \(waited), "
                + "\(Int(dropped)) replies dropped so far")

        // Once the client reads, it gets the replies that waited for it, and the rest of its 40
        // requests are answered: every one either reaches it or is counted as dropped.
        var received = 0
        var pageSizes: [Int] = []
        let readDeadline = ContinuousClock.now + .seconds(120)
        while Double(received) + dropped < Double(requests), ContinuousClock.now < readDeadline {
            if try !zmqPollReadable([stalled], timeoutMilliseconds: 200).isEmpty,
                let reply = try stalled.receive(wait: false)
            {
                received += 1
                let page = try JSONParser.parse(try #require(reply.last))
                #expect(page["ok"] == .bool(true))
                pageSizes.append(page["events"]?.arrayValue?.count ?? 0)
            }
            dropped = try Self.dropped(file)
        }
        #expect(Double(received) + dropped == Double(requests), "received \(received), dropped \(dropped)")
        #expect(received >= 1)
        #expect(pageSizes.allSatisfy { $0 >= 1 && $0 < 10_000 }, "each page stops near 4 MiB: \(Set(pageSizes))")
        let finalGrownKiB = try #require(service.peakResidentKiB) - before
        #expect(finalGrownKiB < boundKiB, "the service's peak grew by \(finalGrownKiB) KiB in all")
        print("history back-pressure: \(received) received, \(Int(dropped)) dropped; peak grew by \(finalGrownKiB) KiB")
        #expect(service.stop() == 0, "\(service.log)")
        #expect(try Self.dropped(file) == dropped)
        #expect(try Self.dropped(file, "peer_gone") == 0)
    }

    /// Many clients that stop reading together: what the service holds for all of them stays
    /// within one budget, however many there are, and it gives the memory back once they go.
    /// Each held about 20 MiB (the replies libzmq keeps for a connection), so 30 made the service
    /// grow by 600 MiB, and it kept most of it after they left.
    @Test func manyClientsThatStopReadingAreHeldToOneBudgetAndTheMemoryIsGivenBack() throws {
        let (data, file, service) = try Self.meteredService("strata-history-many")
        defer { try? FileManager.default.removeItem(at: data) }
        defer { service.stop() }
        let context = try ZMQContext()
        let resident = try #require(service.residentKiB)
        let peak = try #require(service.peakResidentKiB)

        let clients = 30
        let requests = 6
        var stalled: [ZMQSocket] = []
        defer { for client in stalled { client.close() } }
        let body = Array(#"{"after":0,"limit":10000}"#.utf8)
        for _ in 0..<clients {
            let client = try ZMQSocket(context, .dealer)
            stalled.append(client)
            try client.setHighWaterMarks(send: 0, receive: 1)
            try client.connect(service.history)
            for _ in 0..<requests { try client.send(try service.signedFrames(body)) }
        }
        let deadline = ContinuousClock.now + .seconds(180)
        var answered = 0.0
        while answered < Double(clients * requests), ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            answered = try readExposition(file).value("strata_history_requests_total", ["outcome": "page"]) ?? 0
        }
        try #require(answered == Double(clients * requests), "every request answered: \(service.log)")

        // A client that reads is still answered, with at least one event.
        let other = try service.historyClient(context)
        defer { other.close() }
        let answer = try #require(
            try other.request(body, timeoutMilliseconds: 30_000), "another client is answered: \(service.log)")
        #expect(historyEventSlices(answer)?.isEmpty == false)

        let grownKiB = try #require(service.peakResidentKiB) - peak
        let heldKiB = try #require(service.residentKiB) - resident
        print("history back-pressure: \(clients) stalled clients, peak grew by \(grownKiB) KiB, holding \(heldKiB) KiB")
        #expect(grownKiB < 128 * 1024, "the service's peak grew by \(grownKiB) KiB for clients that read nothing")
        let heldBytes = try readExposition(file).value("strata_history_held_bytes") ?? 0
        #expect(heldBytes > 48 * 1024 * 1024 && heldBytes < 96 * 1024 * 1024, "\(heldBytes) bytes held, as metered")
        print("history back-pressure: \(Int(heldBytes)) bytes held in libzmq, as metered")

        for client in stalled { client.close() }
        stalled = []
        let keptKiB = try keptKiB(by: service, above: resident, waitingBelow: 48 * 1024)
        print("history back-pressure: \(keptKiB) KiB kept once they went")
        let heldDeadline = ContinuousClock.now + .seconds(10)
        while try readExposition(file).value("strata_history_held_bytes") != 0, ContinuousClock.now < heldDeadline {
            Thread.sleep(forTimeInterval: 0.2)
        }
        #expect(try readExposition(file).value("strata_history_held_bytes") == 0, "nothing held once they went")
        #expect(keptKiB < 48 * 1024, "the service kept \(keptKiB) KiB more than before, once the clients went")
        #expect(service.stop() == 0, "\(service.log)")
    }

    /// The high-water mark counts replies, not bytes: a client that pipelines hundreds of small
    /// requests gets every reply, in order, though the service answers them faster than
    /// libzmq's I/O thread drains the few replies it keeps.
    @Test func aClientThatPipelinesSmallRequestsGetsEveryReplyInOrder() throws {
        let (data, file, service) = try Self.meteredService("strata-history-pipelined")
        defer { try? FileManager.default.removeItem(at: data) }
        defer { service.stop() }
        let context = try ZMQContext()
        let dealer = try ZMQSocket(context, .dealer)
        defer { dealer.close() }
        try dealer.setHighWaterMarks(send: 0, receive: 0)
        try dealer.connect(service.history)
        // 400 replies of about 1.6 KB: all of them fit what the service keeps for a connection,
        // however late the client reads.
        let count = 400
        for after in 0..<count {
            try dealer.send(try service.signedFrames(Array(#"{"after":\#(after),"limit":1}"#.utf8)))
        }
        var positions: [Int64] = []
        while positions.count < count {
            let reply = try JSONParser.parse(receiveReply(on: dealer, from: service, timeoutMilliseconds: 30_000))
            positions.append(reply["events"]?.arrayValue?.first?["position"]?.integerValue ?? -1)
        }
        #expect(positions == (1...Int64(count)).map { $0 }, "every reply, in the order asked")
        #expect(service.stop() == 0, "\(service.log)")
        #expect(try Self.dropped(file) == 0)
    }

    @Test func aPageStopsOnceItsEventsPassFourMiBAndAReaderStillReachesTheHead() throws {
        let data = try Self.filledDataDirectory("strata-history-page-bytes")
        defer { try? FileManager.default.removeItem(at: data) }
        // One event larger than a whole page, last: a page that reaches it carries it.
        let big = try Self.append(data, notes: 5 * 1024 * 1024)
        let service = try ServiceProcess(dataDirectory: data)
        defer { service.stop() }
        let context = try ZMQContext()
        let client = try service.historyClient(context)
        defer { client.close() }

        let reply = try #require(try client.request(Array(#"{"after":0,"limit":10000}"#.utf8)))
        let events = try #require(historyEventSlices(reply))
        let eventBytes = events.reduce(0) { $0 + $1.count + 1 } - 1
        #expect(events.count > 1 && events.count < 10_000, "\(events.count) events in a page")
        #expect(eventBytes >= Self.pageBytes && eventBytes < Self.pageBytes + 4096, "\(eventBytes) bytes of events")
        #expect(try JSONParser.parse(reply)["head"]?.integerValue == big)

        // Filtered pages stop the same way.
        let loans = try #require(try client.request(Array(#"{"after":0,"categories":["loan"],"limit":10000}"#.utf8)))
        let loanEvents = try #require(historyEventSlices(loans))
        #expect(loanEvents.count > 1 && loanEvents.count < 10_000, "\(loanEvents.count) events in a page")

        // A page of the big event alone, and one that reaches it from the event before.
        for (after, count) in [(big - 1, 1), (big - 2, 2)] {
            let page = try #require(try client.request(Array(#"{"after":\#(after),"limit":10000}"#.utf8)))
            #expect(historyEventSlices(page)?.count == count, "after \(after)")
        }

        // A projector's history source pages through it all, in order, to the head.
        let key = try #require(try service.keyFile().key(ServiceProcess.Keys.service))
        let history = try BusHistory(context: context, endpoint: service.history, key: key)
        var position: Int64 = 0
        var pages = 0
        while pages < 100 {
            let page = try history.page(after: position, limit: 10_000)
            pages += 1
            for event in page.events {
                #expect(event.position == position + 1)
                position = event.position
            }
            if page.events.isEmpty || position >= page.head { break }
        }
        #expect(position == big)
        #expect(pages > Int(big) / 10_000 + 1, "\(pages) pages")
        #expect(service.stop() == 0, "\(service.log)")
    }

    /// A client that stopped reading with a reply kept for it in the backlog: the history thread
    /// tries it again less and less often while it does not move, up to its idle poll of 50 ms,
    /// where it woke every 2 ms for as long as the client stayed connected (about 1,000 times in
    /// the 2 s watched here).
    @Test func aStalledClientsKeptReplyDoesNotKeepTheHistoryThreadBusy() throws {
        let (data, file, service) = try Self.meteredService("strata-history-stalled")
        defer { try? FileManager.default.removeItem(at: data) }
        defer { service.stop() }
        let context = try ZMQContext()
        let stalled = try ZMQSocket(context, .dealer)
        defer { stalled.close() }
        try stalled.setHighWaterMarks(send: 0, receive: 1)
        try stalled.connect(service.history)
        // Pages of 400 events, about 600 KB: more than the connection's buffers, libzmq's 4 and
        // the backlog hold together, and each small enough to be kept in the backlog.
        let body = Array(#"{"after":0,"limit":400}"#.utf8)
        for _ in 0..<40 { try stalled.send(try service.signedFrames(body)) }
        // Every request answered: the count of drops no longer moves.
        var dropped = -1.0
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 1)
            let now = try Self.dropped(file)
            if now > 0 && now == dropped { break }
            dropped = now
        }
        try #require(dropped > 0, "replies were dropped: the client's buffers are full \(service.log)")
        // More, one by one, until one of them is dropped too: a reply is dropped only behind a
        // kept one, which stays kept while the client reads nothing. (The connection's buffers
        // grow as they fill, so the first drops do not say that nothing more goes out: the last
        // kept reply could have gone out after them, leaving none kept.)
        let stalledAt = dropped
        let stalledDeadline = ContinuousClock.now + .seconds(90)
        while dropped <= stalledAt, ContinuousClock.now < stalledDeadline {
            try stalled.send(try service.signedFrames(body))
            Thread.sleep(forTimeInterval: 0.3)
            dropped = try Self.dropped(file)
        }
        try #require(dropped > stalledAt, "a reply beyond the kept one is dropped: \(service.log)")
        Thread.sleep(forTimeInterval: 0.5)
        let thread = try #require(Self.thread(named: "strata-history", of: service.processIdentifier))
        let before = try #require(Self.voluntarySwitches(thread))
        Thread.sleep(forTimeInterval: 2)
        let wakeUps = try #require(Self.voluntarySwitches(thread)) - before
        #expect(wakeUps < 250, "the history thread woke \(wakeUps) times in 2 s for one stalled client")
        print("history back-pressure: \(wakeUps) wake-ups of the history thread in 2 s with a stalled client")
        #expect(service.stop() == 0, "\(service.log)")
    }

    /// `/proc/PID/task/TID` of the thread of `pid` named `name`.
    static func thread(named name: String, of pid: Int32) -> String? {
        let tasks = "/proc/\(pid)/task"
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
        return ids.map { "\(tasks)/\($0)" }.first { path in
            let comm = try? String(contentsOfFile: path + "/comm", encoding: .utf8)
            return comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }
    }

    /// How often the thread at `path` gave up its core to wait: one a poll that timed out, or
    /// returned with work.
    static func voluntarySwitches(_ path: String) -> Int? {
        guard let status = try? String(contentsOfFile: path + "/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
        return line.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
    }

    /// The replies dropped for clients not reading theirs, as the metrics file last counted them.
    static func dropped(_ file: String, _ reason: String = "peer_full") throws -> Double {
        try readExposition(file).value("strata_history_replies_dropped_total", ["reason": reason]) ?? 0
    }

    /// A service on a filled store (`filledDataDirectory`), writing its metrics to the file
    /// `metrics` every 0.1 s.
    static func meteredService(_ name: String) throws -> (data: URL, metrics: String, service: ServiceProcess) {
        let data = try filledDataDirectory(name)
        let file = data.appendingPathComponent("serve.prom").path
        do {
            let service = try ServiceProcess(
                dataDirectory: data, arguments: ["--metrics-file", file, "--metrics-interval", "0.1"])
            return (data, file, service)
        } catch {
            try? FileManager.default.removeItem(at: data)
            throw error
        }
    }

    /// A data directory as `ServiceProcess.prepare` makes it, its store filled with
    /// `eventCount` payments whose notes make each about 1.5 KB.
    static func filledDataDirectory(_ name: String) throws -> URL {
        let data = try ChildProcess.temporaryDirectory(name)
        do {
            try ServiceProcess.prepare(data)
            let store = try SQLiteEventStore(path: data.appendingPathComponent("events.db").path)
            var n = 0
            while n < eventCount {
                let writes = try (n..<min(n + 100, eventCount)).map { try payment($0, notes: 1200) }
                for result in try store.append(writes) {
                    guard case .recorded(.accepted) = result else {
                        throw ServiceProcessError("not appended: \(result)")
                    }
                }
                n += writes.count
            }
        } catch {
            try? FileManager.default.removeItem(at: data)
            throw error
        }
        return data
    }

    /// Appends one payment with `notes` bytes of notes; its position.
    static func append(_ data: URL, notes: Int) throws -> Int64 {
        let store = try SQLiteEventStore(path: data.appendingPathComponent("events.db").path)
        _ = try store.append(payment(eventCount, notes: notes))
        return try store.head()
    }

    static func payment(_ n: Int, notes: Int) throws -> CommandWrite {
        let payload: JSONValue = [
            "loanId": .string("L\(n / 3)"), "paymentId": .string("P\(n)"), "amountCents": .integer(52_261),
            "paidOn": "2026-11-20", "receivedBy": "agent-7", "type": "REGULAR",
            "notes": .string(String(repeating: "n", count: notes)),
        ]
        let event = try NewEvent(
            stream: StreamName(category: "loan", id: "L\(n / 3)")!, type: "PaymentReceived", schemaVersion: 2,
            data: payload)
        return try CommandWrite(
            commandId: "fill-\(n)", bodyDigest: HashChain.sha256(Array("fill-\(n)".utf8)), actor: "filler",
            commandType: "ReceivePayment", decision: .append([event], expectations: [:]))
    }
}
