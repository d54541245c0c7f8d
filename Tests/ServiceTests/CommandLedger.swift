import Bus
import CommandService
import Dispatch
import EventStore
import Foundation
import StrataCore
import StrataTesting
import Synchronization
import Testing

/// What a crash test sent on several pipelined connections, what came back, and what the
/// store must hold because of it, checked after every restart:
///
/// - the hash chain verifies, and positions run 1…head with no gap;
/// - every `ok:true` is journaled as accepted with exactly the events its reply named, and
///   a reply to a command decided before is a duplicate with the original events;
/// - nothing is half-applied: the events after the set-up are exactly those the journal
///   lists, command by command, and no event belongs to a command that is not journaled;
/// - per connection, what is decided is a prefix of what was sent (commands are decided in
///   the order sent, and a batch commits or not as a whole);
/// - what was decided once stays decided, with the same events.
///
/// A connection sends, each round, every command not yet acknowledged, as a client that
/// retries what it got no answer to.
final class CommandLedger {
    let setup: [CommandBody]
    let connections: [[CommandBody]]
    /// The head after the set-up: every later event belongs to one of `connections`' commands.
    let setupHead: Int64
    /// Per connection, how many of its commands were acknowledged `ok:true` (a prefix).
    private(set) var acknowledged: [Int]
    /// Every command of `connections` the store has decided, with its journaled events.
    private(set) var decided: [String: [AppendedEvent]] = [:]
    /// Figures for the printed summary.
    private(set) var sent = 0
    private(set) var answered = 0
    private(set) var duplicates = 0

    init(setup: [CommandBody], connections: [[CommandBody]], setupHead: Int64) {
        self.setup = setup
        self.connections = connections
        self.setupHead = setupHead
        acknowledged = Array(repeating: 0, count: connections.count)
    }

    var total: Int { connections.reduce(0) { $0 + $1.count } }
    var acknowledgedTotal: Int { acknowledged.reduce(0, +) }

    /// One round of load: each connection, on its own thread, sends every command it has not
    /// had acknowledged, all at once, and collects replies. Once `killAfter` replies are in,
    /// `kill` ends the service; the round ends when every connection has heard the last of it.
    func round(service: ServiceProcess, context: ZMQContext, killAfter: Int, kill: () -> Void) throws -> Round {
        let firstSent = acknowledged
        let log = ReplyLog(connections: connections.count)
        let secret = try service.secret(of: ServiceProcess.Keys.service)
        let done = DispatchGroup()
        for (connection, bodies) in connections.enumerated() {
            let remaining = Array(bodies[firstSent[connection]...])
            sent += remaining.count
            done.enter()
            let endpoint = service.commands
            Thread {
                defer { done.leave() }
                pipeline(
                    context: context, endpoint: endpoint, secret: secret, bodies: remaining, connection: connection,
                    log: log)
            }.start()
        }
        let deadline = Date().addingTimeInterval(60)
        while log.count < killAfter && Date() < deadline { usleep(1_000) }
        kill()
        let answeredAtKill = log.count
        log.markKilled()
        #expect(done.wait(timeout: .now() + 60) == .success, "the client threads did not finish")
        #expect(log.problems.isEmpty, "client threads failed: \(log.problems)")
        try #require(answeredAtKill >= killAfter, "no replies before the deadline; log:\n\(service.log)")
        let replies = log.all
        answered += replies.reduce(0) { $0 + $1.count }
        return Round(firstSent: firstSent, replies: replies, answeredAtKill: answeredAtKill)
    }

    struct Round {
        /// Per connection, the index of the first command sent.
        let firstSent: [Int]
        /// Per connection, the replies in the order received.
        let replies: [[JSONValue]]
        let answeredAtKill: Int

        var answered: Int { replies.reduce(0) { $0 + $1.count } }
    }

    /// Checks a round's replies against the store after the restart, before `checkStore`
    /// updates what counts as decided before.
    func record(_ round: Round, store: SQLiteEventStore) throws {
        for (connection, replies) in round.replies.enumerated() {
            var acknowledgedNow = round.firstSent[connection]
            for (offset, reply) in replies.enumerated() {
                let body = connections[connection][round.firstSent[connection] + offset]
                #expect(reply["id"]?.stringValue == body.id, "connection \(connection): replies out of order")
                guard reply["ok"] == .bool(true) else {
                    Issue.record("\(body.id) refused: \(CanonicalJSON.string(reply))")
                    break
                }
                acknowledgedNow += 1
                let events = Self.events(in: reply)
                try expectReply(reply, events: events, to: body, journal: store)
            }
            acknowledged[connection] = acknowledgedNow
        }
    }

    /// An accepted reply to `body`: a duplicate with the original events if it was decided
    /// before, else decided now, journaled with exactly these events.
    private func expectReply(
        _ reply: JSONValue, events: [AppendedEvent], to body: CommandBody, journal store: SQLiteEventStore
    ) throws {
        if let before = decided[body.id] {
            duplicates += 1
            #expect(reply["duplicate"] == .bool(true), "\(body.id) was decided before: \(CanonicalJSON.string(reply))")
            #expect(events == before, "\(body.id): a retry returns the original events")
            return
        }
        #expect(reply["duplicate"] == .bool(false), "\(body.id) is decided now: \(CanonicalJSON.string(reply))")
        #expect(!events.isEmpty, "\(body.id): an accepted command appends events")
        guard case .accepted(let journaled)? = try store.journalEntry(commandId: body.id)?.outcome else {
            Issue.record("\(body.id) was acknowledged ok but is not journaled as accepted")
            return
        }
        #expect(journaled == events, "\(body.id): the journal and the reply disagree")
    }

    /// Everything the store must hold (see the type's comment); `decided` becomes what it holds now.
    func checkStore(_ store: SQLiteEventStore, _ label: String) throws {
        let report = try store.verify()
        #expect(report.isIntact, "\(label): \(String(describing: report.problem))")
        let head = try store.head()
        var stored: [String: [AppendedEvent]] = [:]
        var next: Int64 = 1
        while true {
            let page = try store.events(after: next - 1, limit: 5000)
            for event in page {
                guard event.position == next else {
                    Issue.record("\(label): position \(event.position) follows \(next - 1)")
                    return
                }
                next += 1
                guard event.position > setupHead else { continue }
                let commandId = try #require(
                    try JSONParser.parse(event.metadata)["commandId"]?.stringValue,
                    "event \(event.position) names no command")
                stored[commandId, default: []].append(
                    AppendedEvent(
                        position: event.position, stream: event.stream, version: event.version, type: event.type))
            }
            if page.isEmpty { break }
        }
        #expect(next - 1 == head, "\(label): positions 1…\(head) with no gap")

        var decidedNow: [String: [AppendedEvent]] = [:]
        for (connection, bodies) in connections.enumerated() {
            var undecided: Int?
            for (index, body) in bodies.enumerated() {
                guard let entry = try store.journalEntry(commandId: body.id) else {
                    if undecided == nil { undecided = index }
                    continue
                }
                if let undecided {
                    Issue.record(
                        "\(label): connection \(connection): \(body.id) (#\(index)) decided, #\(undecided) not")
                    break
                }
                guard case .accepted(let events) = entry.outcome else {
                    Issue.record("\(label): \(body.id) journaled as refused: \(entry.outcome)")
                    continue
                }
                decidedNow[body.id] = events
                #expect(
                    stored[body.id] == events,
                    "\(label): \(body.id): journal \(events), store \(stored[body.id] ?? [])")
                if let before = decided[body.id] { #expect(before == events, "\(label): \(body.id) changed") }
            }
            let count = undecided ?? bodies.count
            #expect(
                count >= acknowledged[connection],
                "\(label): connection \(connection): fewer decided than acknowledged")
        }
        let lost = Set(decided.keys).subtracting(decidedNow.keys)
        #expect(lost.isEmpty, "\(label): decided before, gone now: \(lost.sorted().prefix(10))")
        let orphans = Set(stored.keys).subtracting(decidedNow.keys)
        #expect(orphans.isEmpty, "\(label): events of commands that are not journaled: \(orphans.sorted().prefix(10))")
        #expect(
            head == setupHead + Int64(decidedNow.values.reduce(0) { $0 + $1.count }), "\(label): events of no command")
        decided = decidedNow
    }

    /// Sends every command again (the set-up and every connection's, in order) on one
    /// connection: the decided ones are answered as duplicates with their original events,
    /// the rest are decided now. Afterwards every command is decided.
    func resendEverything(service: ServiceProcess, context: ZMQContext) throws -> (duplicates: Int, decidedNow: Int) {
        let store = try service.store()
        let everything = setup + connections.flatMap { $0 }
        let replies = try System.exchange(
            everything, endpoint: service.commands, secret: service.secret(of: ServiceProcess.Keys.service),
            context: context)
        sent += everything.count
        answered += replies.count
        let setupIds = Set(setup.map(\.id))
        var counts = (duplicates: 0, decidedNow: 0)
        for (body, reply) in zip(everything, replies) {
            #expect(reply["id"]?.stringValue == body.id, "replies in the order sent")
            guard reply["ok"] == .bool(true) else {
                Issue.record("\(body.id) refused on the resend: \(CanonicalJSON.string(reply))")
                continue
            }
            if setupIds.contains(body.id) {
                #expect(reply["duplicate"] == .bool(true), "\(body.id) (set-up) is a duplicate")
                counts.duplicates += 1
                continue
            }
            if decided[body.id] == nil { counts.decidedNow += 1 } else { counts.duplicates += 1 }
            try expectReply(reply, events: Self.events(in: reply), to: body, journal: store)
        }
        acknowledged = connections.map(\.count)
        try checkStore(store, "after the resend")
        #expect(decided.count == total, "every command is decided")
        return counts
    }

    static func events(in reply: JSONValue) -> [AppendedEvent] {
        (reply["events"]?.arrayValue ?? []).map {
            AppendedEvent(
                position: $0["position"]?.integerValue ?? -1, stream: $0["stream"]?.stringValue ?? "",
                version: $0["version"]?.integerValue ?? -1, type: $0["type"]?.stringValue ?? "")
        }
    }
}

/// Replies as each connection received them, in order, shared with the client threads.
final class ReplyLog: Sendable {
    private let received: Mutex<[[JSONValue]]>
    private let killed = Atomic<Bool>(false)
    private let total = Atomic<Int>(0)
    private let failures = Mutex<[String]>([])

    init(connections: Int) {
        received = Mutex(Array(repeating: [], count: connections))
    }

    func append(_ reply: JSONValue, connection: Int) {
        received.withLock { $0[connection].append(reply) }
        total.add(1, ordering: .releasing)
    }

    var count: Int { total.load(ordering: .acquiring) }
    var all: [[JSONValue]] { received.withLock { $0 } }
    var isKilled: Bool { killed.load(ordering: .acquiring) }
    func markKilled() { killed.store(true, ordering: .releasing) }

    func fail(_ message: String) { failures.withLock { $0.append(message) } }
    var problems: [String] { failures.withLock { $0 } }
}

/// One pipelining client, on its own thread (its socket never leaves it): sends every body
/// at once, then collects replies until the service is gone and nothing more is queued.
func pipeline(
    context: ZMQContext, endpoint: String, secret: [UInt8], bodies: [CommandBody], connection: Int, log: ReplyLog
) {
    do {
        let client = try SignedClient(context, endpoint: endpoint, keyId: ServiceProcess.Keys.service, secret: secret)
        defer { client.close() }
        for body in bodies { try client.send(body.json) }
        var received = 0
        let deadline = Date().addingTimeInterval(60)
        while received < bodies.count && Date() < deadline {
            guard let reply = try client.receive(timeoutMilliseconds: 100) else {
                if log.isKilled { break }
                continue
            }
            log.append((try? JSONParser.parse(reply)) ?? .null, connection: connection)
            received += 1
        }
    } catch {
        log.fail("connection \(connection): \(error)")
    }
}
