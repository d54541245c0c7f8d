import CommandService
import Domain
import EventStore
import Events
import Foundation
import StrataCore
import StrataTesting
import Synchronization
import Testing

/// A store that counts what the writer reads of each stream, reading through to `inner`.
private final class CountingStore: StoreReadingThrough {
    let inner: any EventStore
    /// Per stream: the events read, and the most read at once.
    private let reads = Mutex<[String: (events: Int, largestRead: Int)]>([:])

    init(_ inner: any EventStore) { self.inner = inner }

    func reads(of stream: String) -> (events: Int, largestRead: Int) {
        reads.withLock { $0[stream] ?? (0, 0) }
    }

    func events(in stream: StreamName, fromVersion: Int64, limit: Int) throws(StoreError) -> [RecordedEvent] {
        let events = try inner.events(in: stream, fromVersion: fromVersion, limit: limit)
        reads.withLock { reads in
            let before = reads[stream.description] ?? (0, 0)
            reads[stream.description] = (before.events + events.count, max(before.largestRead, events.count))
        }
        return events
    }
}

/// Streams that grow for as long as the business runs (an invoice series, an event per
/// invoice; an agent's ledger, an event per commission) while what the writer decides by is a
/// few numbers. Folding them whole held them in memory whole, and stalled the writer for as
/// long as they were long after every restart and every trim of its cache: 0.87 s for a
/// series of 100,000 invoices in a debug build.
@Suite("Long streams in the writer's cache")
struct LongStreamTests {
    private static let clock = FixedClock()
    private static let day = LocalDate("2026-11-20")!

    /// A SQLite store in a temporary directory holding the first admin and `fill`'s events,
    /// appended a thousand at a time straight to the store.
    private static func store(
        _ directory: URL, stream: String, count: Int, _ event: (Int) -> any DomainEvent
    ) throws -> SQLiteEventStore {
        let store = try SQLiteEventStore(path: directory.appendingPathComponent("events.db").path, clock: clock)
        try bootstrap(store)
        for start in stride(from: 1, through: count, by: 1000) {
            let events = try (start..<min(count + 1, start + 1000)).map { n in
                try NewEvent(stream: StreamName(stream)!, event: event(n))
            }
            _ = try store.append(
                CommandWrite(
                    commandId: "fill-\(start)", bodyDigest: HashChain.sha256([]), actor: "operator",
                    commandType: "Fill", decision: .append(events, expectations: [:])))
        }
        return store
    }

    private static func invoice(_ id: String) -> CommandWriter.Pending {
        pending(
            id, actor: "admin-1",
            .createInvoice(
                CreateInvoice(
                    invoiceId: id, customer: InvoiceCustomer(partyId: "P1", name: "Suresh Traders"), issueDate: day,
                    dueDate: day,
                    lines: [
                        InvoiceLineRequest(description: "tea", quantityMilli: 1000, unitPriceCents: 500, taxRateBp: 0)
                    ])))
    }

    @Test func anInvoiceSeriesIsFoldedFromItsLastEvent() throws {
        let directory = try ChildProcess.temporaryDirectory("long-series")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = CountingStore(
            try Self.store(directory, stream: "invoiceseries-INV", count: 10_000) { n in
                InvoiceNumberAllocated(
                    series: "INV", sequence: Int64(n), invoiceNumber: "INV-\(n)", invoiceId: "old-\(n)")
            })
        let writer = try CommandWriter(store: store, clock: Self.clock)
        let committed = writer.process([Self.invoice("I1")])
        let allocated = try #require(committed.events.first { $0.type == InvoiceNumberAllocated.eventType })
        #expect(allocated.stream == "invoiceseries-INV" && allocated.version == 10_001)
        let created = try #require(committed.events.first { $0.type == InvoiceCreated.eventType })
        #expect(String(decoding: created.data, as: UTF8.self).contains(#""invoiceNumber":"INV-010001""#))
        #expect(store.reads(of: "invoiceseries-INV").events == 1)
    }

    @Test func anAgentsLedgerIsFoldedAPageAtATimeAndKeptThroughTrims() throws {
        let directory = try ChildProcess.temporaryDirectory("long-ledger")
        defer { try? FileManager.default.removeItem(at: directory) }
        let inner = try Self.store(directory, stream: "agent-agent-7", count: 10_000) { n in
            CommissionEarned(
                agentId: "agent-7", loanId: "L\(n)", paymentId: "P\(n)", interestCents: 100, rateBp: 1000,
                commissionCents: 10)
        }
        for (index, (stream, event)) in [
            ("user-agent-7", UserRegistered(
                userId: "agent-7", username: "ravi", email: "ravi@example.com", role: .agent, status: .pending)
                as any DomainEvent),
            ("user-agent-7", AgentApproved(agentId: "agent-7", approvedBy: "admin-1", approvedAt: Self.clock.now())),
        ].enumerated() {
            _ = try inner.append(
                CommandWrite(
                    commandId: "setup-\(index)", bodyDigest: HashChain.sha256([]), actor: "admin-1",
                    commandType: "Setup",
                    decision: .append([try NewEvent(stream: StreamName(stream)!, event: event)], expectations: [:])))
        }
        let store = CountingStore(inner)
        func cashout(_ id: String, _ cents: Int64) -> CommandWriter.Pending {
            pending(
                id, actor: "agent-7",
                .requestCashout(RequestCashout(cashoutId: id, agentId: "agent-7", amountCents: cents)))
        }
        // A cache of two streams: trimmed after nearly every batch.
        let writer = try CommandWriter(store: store, clock: Self.clock, cacheCapacity: 2)
        let first = writer.process([cashout("C1", 90_000)])
        #expect(first.replies.map(\.reply.isAccepted) == [true], "10,000 commissions of 10 cents earned 100,000")
        let ledger = store.reads(of: "agent-agent-7")
        #expect(ledger.events == 10_000)
        #expect(ledger.largestRead < 10_000, "read a page at a time: \(ledger.largestRead) at once")
        // Other streams push the cache past its capacity, and it is trimmed, but for the ledger.
        for n in 0..<4 { _ = writer.process([Self.invoice("I\(n)")]) }
        let second = writer.process([cashout("C2", 10_000), cashout("C3", 100)])
        #expect(second.replies.map(\.reply.isAccepted) == [true, false], "what is left is 10,000")
        #expect(store.reads(of: "agent-agent-7").events == 10_000, "folded once")
    }
}

extension CommandReply {
    fileprivate var isAccepted: Bool {
        if case .accepted = self { true } else { false }
    }
}
