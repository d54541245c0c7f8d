import CommandService
import Domain
import EventStore
import Foundation
import StrataCore
import Workloads

/// The history `strata bench memory` grows a store with: one lending business after
/// another, each a `LendingWorkload` of its own (its id prefix, 4 agents registered and
/// approved, 100 accounts), then loans and invoices alternating. Every command is decided
/// by the same `CommandWriter` the service runs, against the store directly, so the events
/// are the catalog's own, with the share of `UserRegistered` and `InvoiceCreated` (folded
/// into the writer's directory at every start) that such a business makes.
struct BenchLendingHistory {
    let admin: String
    let today: LocalDate
    /// Loans and invoices per business, alternating.
    static let unitsPerBusiness = 1000
    /// Commands decided and committed together, as the service's group commit does.
    static let commandsPerBatch = 256
    private var businesses = 0
    /// What is left to send of the current business.
    private var remaining: ArraySlice<CommandBody> = []

    init(admin: String, today: LocalDate) {
        self.admin = admin
        self.today = today
    }

    /// Appends to the store at `path` until it holds at least `target` events, then signs
    /// its head with the data directory's checkpoint key if the service has made one and the
    /// head is not signed yet, as the service would have had it appended them. Returns the
    /// head. The store is closed again
    /// on return, so the service can take the writer lock.
    mutating func grow(_ path: String, to target: Int64, checkpointKey: String) throws -> Int64 {
        let store = try SQLiteEventStore(path: path)
        // One writer for the whole growth, as the service has: its state cache stays bounded
        // by folding streams out between batches.
        let clock = SystemClock()
        let writer = try CommandWriter(store: store, clock: clock)
        var head = try store.head()
        while head < target {
            if remaining.isEmpty { remaining = nextBusiness()[...] }
            let batch = remaining.prefix(BenchLendingHistory.commandsPerBatch)
            remaining = remaining.dropFirst(batch.count)
            let pending = batch.map { body in
                CommandWriter.Pending(
                    routingId: [], keyId: "bench", keyRoles: nil, body: body, bodyBytes: body.json,
                    arrivedAt: clock.now(), configuration: DomainConfiguration())
            }
            let committed = writer.process(pending)
            for (_, reply) in committed.replies {
                guard case .accepted = reply else {
                    let text = String(decoding: reply.json, as: UTF8.self)
                    throw CommandFailure.problem("growing the history: a command was not accepted: \(text)")
                }
            }
            head = try store.head()
        }
        let signed = try store.lastCheckpoint()?.position ?? 0
        if head > signed, FileManager.default.fileExists(atPath: checkpointKey),
            let hash = try store.hash(at: head)
        {
            let key = try CheckpointKeyFile.load(checkpointKey)
            try store.appendCheckpoint(key.sign(position: head, hash: hash, signedAt: Timestamp.now().description))
        }
        return head
    }

    private mutating func nextBusiness() -> [CommandBody] {
        let workload = LendingWorkload(admin: admin, prefix: "h\(businesses)", today: today)
        businesses += 1
        let units = (0..<BenchLendingHistory.unitsPerBusiness).flatMap { unit in
            unit % 2 == 0 ? workload.loan(unit) : workload.invoice(unit)
        }
        return workload.setup() + units
    }
}
