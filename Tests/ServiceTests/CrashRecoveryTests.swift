import Bus
import CommandService
import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing
import Workloads

/// SIGKILL in the middle of pipelined load, then a restart on the same data directory
/// (issue 4, "Done when"): every command that got `ok:true` is in the store with all of its
/// events, nothing is half-applied, and every command sent again is answered from the
/// journal (decided before) or decided now (never before).
@Suite struct CrashRecoveryTests {
    @Test func killDuringPipelinedLoadLosesNothingAcknowledged() throws {
        let data = try ChildProcess.temporaryDirectory("strata-crash-recovery")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let storePath = data.appendingPathComponent("events.db").path
        let service = try ServiceProcess(dataDirectory: data)
        let context = try ZMQContext()
        let secret = try service.secret(of: ServiceProcess.Keys.service)

        // The business's set-up first, all of it accepted before the load starts.
        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "cr", agents: 4, accountsPerAgent: 25, today: Timestamp.now().date)
        let setup = workload.setup()
        do {
            let client = try service.commandClient(context)
            defer { client.close() }
            for body in setup { try client.send(body.json) }
            for body in setup {
                let reply = try JSONParser.parse(
                    try #require(try client.receive(timeoutMilliseconds: 30_000), "set-up unanswered"))
                try #require(reply["ok"] == .bool(true), "\(body.id): \(reply)")
            }
        }
        let setupHead = try SQLiteEventStore(readingAt: storePath).head()

        // Four pipelined connections, each with its own loans (a loan's three commands on
        // one connection, in order), all sent at once.
        let connections = 4
        let loansPerConnection = 700
        let sent: [[CommandBody]] = (0..<connections).map { connection in
            (0..<loansPerConnection).flatMap { workload.loan($0 * connections + connection) }
        }
        let total = sent.reduce(0) { $0 + $1.count }
        let replies = ReplyLog(connections: connections)
        let done = DispatchGroup()
        for connection in 0..<connections {
            done.enter()
            let bodies = sent[connection]
            let endpoint = service.commands
            let thread = Thread {
                defer { done.leave() }
                pipeline(
                    context: context, endpoint: endpoint, secret: secret, bodies: bodies, connection: connection,
                    log: replies)
            }
            thread.start()
        }

        // Kill -9 once some replies are in (a different point each run, printed), while most
        // commands are still in flight.
        let killAt = Int.random(in: (total / 20)...(total / 2))
        let deadline = Date().addingTimeInterval(60)
        while replies.count < killAt && Date() < deadline { usleep(1_000) }
        service.send(signal: SIGKILL)
        let answeredAtKill = replies.count
        replies.markKilled()
        #expect(done.wait(timeout: .now() + 30) == .success, "the client threads did not finish")
        #expect(service.waitForExit(timeout: 10) == SIGKILL, "the service ended by SIGKILL")
        let answered = replies.count
        #expect(replies.problems.isEmpty, "client threads failed: \(replies.problems)")
        print(
            "CrashRecoveryTests: \(total) loan commands sent, kill after \(killAt) replies: \(answeredAtKill) answered at the kill, \(answered) in all"
        )
        try #require(answeredAtKill >= killAt, "no replies before the deadline; log:\n\(service.log)")
        #expect(answered < total, "every command was answered before the kill: the test proved nothing; send more")

        // Restart on the same data directory.
        let restarted = try ServiceProcess(dataDirectory: data)
        defer { restarted.stop() }
        let store = try SQLiteEventStore(readingAt: storePath)
        #expect(try store.verify().isIntact, "the hash chain survived the crash")

        // Every ok:true is journaled, with exactly the events its reply named, all stored.
        var acknowledged: [String: [AppendedEvent]] = [:]
        for (connection, received) in replies.all.enumerated() {
            for (index, reply) in received.enumerated() {
                let body = sent[connection][index]
                #expect(reply["id"]?.stringValue == body.id, "connection \(connection) reply \(index) out of order")
                #expect(reply["ok"] == .bool(true), "\(body.id) refused: \(reply)")
                guard reply["ok"] == .bool(true) else { continue }
                let events = CommandLedger.events(in: reply)
                acknowledged[body.id] = events
                guard case .accepted(let journaled)? = try store.journalEntry(commandId: body.id)?.outcome else {
                    Issue.record("\(body.id) was acknowledged ok but is not journaled as accepted")
                    continue
                }
                #expect(journaled == events, "\(body.id): the journal and the reply disagree")
                #expect(!events.isEmpty, "\(body.id): an accepted command appends events")
            }
        }

        // Nothing half-applied: the events after the set-up are exactly those the journal lists,
        // command by command; and per connection, what was decided is a prefix of what was sent
        // (commands are decided in the order sent, and each batch commits or not as a whole).
        var stored: [String: [AppendedEvent]] = [:]
        var after = setupHead
        while true {
            let page = try store.events(after: after, limit: 5000)
            for event in page {
                let metadata = try JSONParser.parse(event.metadata)
                let commandId = try #require(
                    metadata["commandId"]?.stringValue, "event \(event.position) names no command")
                stored[commandId, default: []].append(
                    AppendedEvent(
                        position: event.position, stream: event.stream, version: event.version, type: event.type))
            }
            guard let last = page.last else { break }
            after = last.position
        }
        var journaledBefore: [String: [AppendedEvent]] = [:]
        for (connection, bodies) in sent.enumerated() {
            var decided = 0
            var prefixEnds: Int?
            for (index, body) in bodies.enumerated() {
                guard let entry = try store.journalEntry(commandId: body.id) else {
                    if prefixEnds == nil { prefixEnds = index }
                    continue
                }
                decided += 1
                if let prefixEnds {
                    Issue.record(
                        "connection \(connection): \(body.id) (#\(index)) decided, #\(prefixEnds) before it not")
                }
                guard case .accepted(let events) = entry.outcome else {
                    Issue.record("\(body.id) journaled as refused: \(entry.outcome)")
                    continue
                }
                journaledBefore[body.id] = events
                #expect(
                    stored[body.id] == events,
                    "\(body.id): journal lists \(events), store holds \(stored[body.id] ?? [])")
            }
            #expect(decided >= replies.all[connection].count, "connection \(connection): fewer decided than answered")
        }
        let orphans = Set(stored.keys).subtracting(journaledBefore.keys)
        #expect(orphans.count == 0, "events of commands that are not journaled: \(orphans.sorted().prefix(10))")
        let headAfterCrash = try store.head()
        #expect(
            headAfterCrash == setupHead + Int64(stored.values.reduce(0) { $0 + $1.count }),
            "positions without a command")
        print(
            "CrashRecoveryTests: \(journaledBefore.count) decided before the crash, \(acknowledged.count) of them acknowledged"
        )

        // Send everything again: what was decided is answered from the journal, the rest is decided now.
        let client = try restarted.commandClient(context)
        defer { client.close() }
        let everything = setup + sent.flatMap { $0 }
        for body in everything { try client.send(body.json) }
        var newlyAppended: Int64 = 0
        for body in everything {
            let raw = try #require(
                try client.receive(timeoutMilliseconds: 30_000), "\(body.id) unanswered after the restart")
            let reply = try JSONParser.parse(raw)
            #expect(reply["id"]?.stringValue == body.id, "replies in the order sent")
            #expect(reply["ok"] == .bool(true), "\(body.id) after the restart: \(reply)")
            let events = CommandLedger.events(in: reply)
            if let before = journaledBefore[body.id] {
                #expect(reply["duplicate"] == .bool(true), "\(body.id) was decided before the crash: \(reply)")
                #expect(events == before, "\(body.id): a retry returns the original events")
            } else if setup.contains(where: { $0.id == body.id }) {
                #expect(reply["duplicate"] == .bool(true), "\(body.id) (set-up) is a duplicate")
            } else {
                #expect(
                    reply["duplicate"] == .bool(false), "\(body.id) was never decided, so it is decided now: \(reply)")
                newlyAppended += Int64(events.count)
            }
        }
        #expect(try store.verify().isIntact)
        #expect(try store.head() == headAfterCrash + newlyAppended)
        #expect(restarted.stop() == 0)
    }
}
