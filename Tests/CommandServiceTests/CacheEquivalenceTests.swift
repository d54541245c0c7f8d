import CommandService
import Domain
import EventStore
import Events
import Foundation
import StrataCore
import StrataTesting
import SubjectKeys
import Testing
import Workloads

/// What the writer decides must not depend on what its cache happens to hold: a month of the
/// demo business, then rounds of cash-outs and rate changes against the agents' ledgers, and
/// accounts handed to other agents, erasures (of parties too, whom the store finds) and an
/// erased user's email registered again, are decided once by a writer that keeps everything and decides in large batches, and again by
/// writers that are restarted (a new writer on the same store, its cache empty) every few
/// batches, or whose cache holds a handful of streams, in batches of random sizes. Every reply
/// and every stored event must come out the same. A payment's commission goes to the agent's
/// ledger without reading it, so a writer restarted between a payment and a cash-out once
/// judged the cash-out by a ledger holding only what was earned since.
@Suite("Writer decisions whatever its cache holds")
struct CacheEquivalenceTests {
    private static let clock = FixedClock()
    private static let admin = "admin-1"

    /// The demo month, then rounds of cash-outs (some beyond what is collectible), decisions on
    /// them, commission rates, and payments of the next installment of every active loan.
    private static func commands() -> [CommandWriter.Pending] {
        let demo = DemoMonth(admin: admin, prefix: "eq", today: clock.now().date)
        var bodies = demo.commands()
        var random = SplitMix64(seed: 7)
        for round in 0..<3 {
            for n in 0..<DemoMonth.approvedAgents {
                let agent = demo.agentId(n)
                let cashout = "eq-cashout-\(round)-\(n)"
                let amount = Int64.random(in: 10_000...400_000, using: &random) / 100 * 100
                bodies.append(
                    body(
                        "\(cashout)-request", actor: agent,
                        .requestCashout(RequestCashout(cashoutId: cashout, agentId: agent, amountCents: amount))))
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    bodies.append(
                        body("\(cashout)-approve", actor: admin, .approveCashout(ApproveCashout(cashoutId: cashout))))
                case 1:
                    bodies.append(
                        body(
                            "\(cashout)-reject", actor: admin,
                            .rejectCashout(RejectCashout(cashoutId: cashout, reason: "round \(round)"))))
                default:
                    break
                }
                let rate = Int.random(in: 500...2000, using: &random)
                bodies.append(
                    body(
                        "eq-rate-\(round)-\(n)", actor: admin,
                        .setCommissionRate(SetCommissionRate(agentId: agent, rateBp: rate))))
            }
            // Small payments on every loan: most are accepted and earn a commission, those on
            // loans that are not active are refused. Either way, the same in every run.
            for loan in 0..<DemoMonth.loans {
                let payment = "eq-pay-\(round)-\(loan)"
                bodies.append(
                    body(
                        payment, actor: admin,
                        .receivePayment(
                            ReceivePayment(
                                paymentId: payment, loanId: demo.loanId(loan), amountCents: 5_000 + Int64(loan),
                                paidOn: clock.now().date))))
            }
        }
        // Accounts handed to other agents (a loan's commission follows the agent of its request),
        // personal data erased (an erased user's email is free again), and one more round of payments.
        for n in stride(from: 0, to: DemoMonth.accounts, by: 5) {
            let agent = demo.agentId((n + 1) % DemoMonth.approvedAgents)
            bodies.append(
                body(
                    "eq-reassign-\(n)", actor: admin,
                    .updateAccount(UpdateAccount(accountId: demo.accountId(n), assignedAgentId: agent))))
        }
        let leaver = demo.agentId(DemoMonth.agents - 1)
        // Parties are looked up in the store, found there or among the batch's invoices, or not.
        let subjects: [(String, SubjectKind?)] = [
            (demo.accountId(3), .account), (demo.partyId(1), .party), (demo.partyId(2), nil), ("eq-nobody", .party),
            (leaver, .user),
        ]
        for (subject, kind) in subjects {
            let erase = EraseSubject(subjectId: subject, kind: kind, reason: "asked")
            bodies.append(body("eq-erase-\(subject)", actor: admin, .eraseSubject(erase)))
        }
        let newcomer = RegisterUser(
            userId: "eq-newcomer", username: "eqnewcomer", email: PersonalData("\(leaver)@field.example.com"),
            role: .agent)
        bodies.append(body("eq-register-again", actor: "eq-newcomer", .registerUser(newcomer)))
        for loan in 0..<DemoMonth.loans {
            let payment = "eq-pay-last-\(loan)"
            let pay = ReceivePayment(
                paymentId: payment, loanId: demo.loanId(loan), amountCents: 7_000, paidOn: clock.now().date)
            bodies.append(body(payment, actor: admin, .receivePayment(pay)))
        }
        return bodies.map { body in
            CommandWriter.Pending(
                routingId: [1], keyId: "svc", keyRoles: nil, body: body, bodyBytes: body.json, arrivedAt: clock.now(),
                configuration: DomainConfiguration())
        }
    }

    private static func body(_ id: String, actor: String, _ command: Command) -> CommandBody {
        CommandBody(id: id, type: command.type, actor: actor, payload: command.payloadJSON.objectValue!)
    }

    /// What one run decided: every reply in order, and every stored event as the chain holds it;
    /// and the estimated size of the writer's cache after each batch.
    private struct Outcome {
        var replies: [CommandReply] = []
        var events: [RecordedEvent] = []
        var cacheBytes: [Int] = []
    }

    /// Decides `commands` on a new store, in batches of the sizes `batchSize` gives, with a new
    /// writer of `cacheCapacity` streams every `restartEvery` batches; `sealed`, with a key store
    /// that seals every personal field, as the service does.
    private static func run(
        _ commands: [CommandWriter.Pending], cacheCapacity: Int, cacheBytes: Int = CommandWriter.defaultCacheBytes,
        restartEvery: Int, seed: UInt64, sealed: Bool, batchSize: (inout SplitMix64) -> Int
    ) throws -> Outcome {
        let directory = try ChildProcess.temporaryDirectory("cache-equivalence")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteEventStore(path: directory.appendingPathComponent("events.db").path, clock: clock)
        try bootstrap(store)
        let keysPath = directory.appendingPathComponent("subject-keys.db").path
        let keys = try sealed ? SubjectKeyStore(writingAt: keysPath) : nil
        defer { keys?.close() }
        func restarted() throws -> CommandWriter {
            try CommandWriter(
                store: store, clock: clock, cacheCapacity: cacheCapacity, cacheBytes: cacheBytes,
                sealer: try keys.map { try PersonalDataSealer(store: $0) })
        }
        var random = SplitMix64(seed: seed)
        var outcome = Outcome()
        var writer = try restarted()
        var next = 0
        var batches = 0
        while next < commands.count {
            if batches > 0 && batches % restartEvery == 0 { writer = try restarted() }
            let end = min(commands.count, next + batchSize(&random))
            let committed = writer.process(Array(commands[next..<end]))
            #expect(committed.failure == nil)
            outcome.replies += committed.replies.map(\.reply)
            outcome.cacheBytes.append(writer.cacheFootprint.bytes)
            next = end
            batches += 1
        }
        outcome.events = try store.events(after: 0, limit: 1_000_000)
        return outcome
    }

    /// Sealed, each personal field is sealed under a fresh nonce, so the stored bytes differ from
    /// run to run; what is compared then is every reply, and each event's place and type.
    @Test(arguments: [
        (100_000, 3, UInt64(1), false),  // restarted every third batch
        (100_000, 1, UInt64(2), false),  // restarted before every batch
        (5, 1_000_000, UInt64(3), false),  // a cache of five streams, trimmed after nearly every batch
        (40, 4, UInt64(4), false),
        (100_000, 2, UInt64(5), true),
        (3, 5, UInt64(6), true),
    ])
    func everyWriterDecidesAsOneThatKeepsEverything(
        _ cacheCapacity: Int, _ restartEvery: Int, _ seed: UInt64, _ sealed: Bool
    ) throws {
        let commands = Self.commands()
        let reference = try Self.run(
            commands, cacheCapacity: 100_000, restartEvery: .max, seed: 0, sealed: sealed, batchSize: { _ in 64 })
        let accepted = reference.replies.filter { if case .accepted = $0 { true } else { false } }.count
        // The run is only worth comparing if it exercises both sides of the rules.
        #expect(accepted > commands.count / 2 && accepted < commands.count, "\(accepted) of \(commands.count)")
        let other = try Self.run(
            commands, cacheCapacity: cacheCapacity, restartEvery: restartEvery, seed: seed, sealed: sealed,
            batchSize: { Int.random(in: 1...9, using: &$0) })
        Self.expect(other, decidedAs: reference, commands: commands, sealed: sealed)
    }

    /// A cache bounded by the estimated size of what it holds (a loan holds its schedule) is
    /// trimmed as that size passes the bound, and decides as one that keeps everything.
    @Test(arguments: [(12 << 10, UInt64(7), false), (24 << 10, UInt64(8), true)])
    func aWriterBoundedByBytesDecidesAsOneThatKeepsEverything(_ cacheBytes: Int, _ seed: UInt64, _ sealed: Bool)
        throws
    {
        let commands = Self.commands()
        let reference = try Self.run(
            commands, cacheCapacity: 100_000, restartEvery: .max, seed: 0, sealed: sealed, batchSize: { _ in 64 })
        let other = try Self.run(
            commands, cacheCapacity: 100_000, cacheBytes: cacheBytes, restartEvery: .max, seed: seed, sealed: sealed,
            batchSize: { Int.random(in: 1...9, using: &$0) })
        // The reference comes to hold several times the bound; the bounded one is trimmed often
        // and goes past the bound by at most what a batch of nine commands folds (a loan with a
        // weekly schedule of a year, about 6 KiB, and a few small streams each).
        #expect(reference.cacheBytes.max()! > 4 * cacheBytes, "\(reference.cacheBytes.max()!)")
        let trims = zip(other.cacheBytes, other.cacheBytes.dropFirst()).filter { $0.1 < $0.0 }.count
        #expect(trims >= 3, "\(trims) trims")
        #expect(other.cacheBytes.max()! <= cacheBytes + 9 * (7 << 10), "\(other.cacheBytes.max()!)")
        Self.expect(other, decidedAs: reference, commands: commands, sealed: sealed)
    }

    private static func expect(
        _ other: Outcome, decidedAs reference: Outcome, commands: [CommandWriter.Pending], sealed: Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(other.replies.count == reference.replies.count, sourceLocation: sourceLocation)
        for (index, (mine, theirs)) in zip(other.replies, reference.replies).enumerated() where mine != theirs {
            Issue.record(
                "command \(commands[index].body.id): \(mine)\nwhere one writer decided \(theirs)",
                sourceLocation: sourceLocation)
            break
        }
        #expect(other.events.count == reference.events.count, sourceLocation: sourceLocation)
        func same(_ a: RecordedEvent, _ b: RecordedEvent) -> Bool {
            guard sealed else { return a.hash == b.hash }
            return (a.position, a.stream, a.version, a.type) == (b.position, b.stream, b.version, b.type)
        }
        let differing = zip(other.events, reference.events).first { !same($0.0, $0.1) }?.0
        #expect(
            differing == nil,
            "the first stored event that differs: \(differing.map { "\($0.position) \($0.stream) \($0.type)" } ?? "")",
            sourceLocation: sourceLocation)
    }
}
