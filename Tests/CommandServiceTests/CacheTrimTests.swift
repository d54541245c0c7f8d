import CommandService
import Domain
import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing
import Workloads

/// What a trim of the writer's cache keeps: the streams the latest batches used. A trim that
/// dropped every loan folded the loans a business pays most again from the store after each
/// trim, a burst of reads for the very streams most likely to be read next.
@Suite("What a trim of the writer's cache keeps")
struct CacheTrimTests {
    private static let clock = FixedClock()
    private static let admin = "admin-1"

    /// A store holding one agent's `loans` loans, each approved and paid once, decided by a
    /// writer that keeps everything; and the workload that made them.
    private static func store(loans: Int, in directory: URL) throws -> (SQLiteEventStore, LendingWorkload) {
        let store = try SQLiteEventStore(path: directory.appendingPathComponent("events.db").path, clock: clock)
        try bootstrap(store)
        let workload = LendingWorkload(
            admin: admin, prefix: "trim", agents: 1, accountsPerAgent: 10, today: clock.now().date)
        let writer = try CommandWriter(store: store, clock: clock)
        let bodies = workload.setup() + (0..<loans).flatMap(workload.loan)
        for start in stride(from: 0, to: bodies.count, by: 64) {
            let committed = writer.process(bodies[start..<min(bodies.count, start + 64)].map(asPending))
            #expect(committed.failure == nil)
        }
        return (store, workload)
    }

    private static func asPending(_ body: CommandBody) -> CommandWriter.Pending {
        CommandWriter.Pending(
            routingId: [1], keyId: "svc", keyRoles: nil, body: body, bodyBytes: body.json, arrivedAt: clock.now(),
            configuration: DomainConfiguration())
    }

    private static func payment(_ id: String, on loan: String) -> CommandWriter.Pending {
        let pay = ReceivePayment(paymentId: id, loanId: loan, amountCents: 100, paidOn: clock.now().date)
        return pending(id, actor: admin, .receivePayment(pay))
    }

    /// Batches that each pay one loan and another never paid before, so the cache, bounded by a
    /// count of streams or by their bytes, is trimmed every few batches: the loan paid in every
    /// batch is folded once, as are the admin who sends the payments, the settings and the
    /// agent's ledger, and each other loan once. A trim that dropped every loan folded it, and
    /// the admin's user, again after each trim. The cache keeps within its bounds all the same.
    @Test(arguments: [(8, CommandWriter.defaultCacheBytes), (100_000, 24 << 10)])
    func aStreamUsedInEveryBatchStaysHeldThroughTrims(_ cacheCapacity: Int, _ cacheBytes: Int) throws {
        let directory = try ChildProcess.temporaryDirectory("cache-trim")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, workload) = try Self.store(loans: 61, in: directory)
        let writer = try CommandWriter(
            store: store, clock: Self.clock, cacheCapacity: cacheCapacity, cacheBytes: cacheBytes)
        let hot = workload.loanId(0)
        var trims = 0
        var heldBefore = 0
        for n in 1...60 {
            let committed = writer.process([
                Self.payment("hot-\(n)", on: hot), Self.payment("cold-\(n)", on: workload.loanId(n)),
            ])
            #expect(committed.failure == nil)
            #expect(committed.replies.allSatisfy { if case .accepted = $0.reply { true } else { false } })
            // Past its bounds by no more than a batch: two loans (about 7 KiB at most), and the
            // settings and the agent's ledger, which every trim keeps.
            #expect(writer.cacheFootprint.streams <= cacheCapacity + 4)
            #expect(writer.cacheFootprint.bytes <= cacheBytes + 16 << 10)
            if writer.cacheFootprint.streams < heldBefore { trims += 1 }
            heldBefore = writer.cacheFootprint.streams
        }
        #expect(trims >= 5, "\(trims) trims")
        #expect(writer.cacheFootprint.folded == 60 + 4, "\(writer.cacheFootprint.folded) streams folded")
    }
}
