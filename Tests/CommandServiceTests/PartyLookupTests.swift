import CommandService
import Domain
import EventStore
import Events
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Synchronization
import Testing

/// An erasure of a party asks whether any invoice names it. The writer held every invoice's
/// party id for that, read from every `InvoiceCreated` at each start: 63 MB and 7 s a start
/// with a million customers. It now asks the store, by an index, when a command reads the
/// party's stream, and holds only the parties of invoices it decided since its last trim.
@Suite("Parties found by the store")
struct PartyLookupTests {
    private static let clock = FixedClock()
    private static let day = LocalDate("2026-11-20")!

    /// A store that records which event types the writer reads by position, reading through.
    private final class TypeRecordingStore: StoreReadingThrough {
        let inner: any EventStore
        let typesRead = Mutex<Set<String>>([])

        init(_ inner: any EventStore) { self.inner = inner }

        func events(after position: Int64, limit: Int, filter: EventFilter) throws(StoreError) -> [RecordedEvent] {
            if case .types(let types) = filter { typesRead.withLock { $0.formUnion(types) } }
            return try inner.events(after: position, limit: limit, filter: filter)
        }
    }

    private static func invoice(_ id: String, party: String) -> CommandWriter.Pending {
        pending(
            id, actor: "admin-1",
            .createInvoice(
                CreateInvoice(
                    invoiceId: id, customer: InvoiceCustomer(partyId: party, name: "Suresh Traders"), issueDate: day,
                    dueDate: day,
                    lines: [
                        InvoiceLineRequest(description: "tea", quantityMilli: 1000, unitPriceCents: 500, taxRateBp: 0)
                    ])))
    }

    private static func erase(_ id: String, party: String, kind: SubjectKind? = .party) -> CommandWriter.Pending {
        pending(id, actor: "admin-1", .eraseSubject(EraseSubject(subjectId: party, kind: kind, reason: "asked")))
    }

    /// The refusal reason of each reply, nil for an accepted one.
    private static func reasons(_ committed: CommandWriter.Committed) -> [String?] {
        committed.replies.map { reply in
            if case .refused(_, _, let error) = reply.reply { return error.reason }
            return nil
        }
    }

    @Test func aWriterStartsWithoutReadingInvoicesAndFindsTheirPartiesInTheStore() throws {
        let directory = try ChildProcess.temporaryDirectory("party-lookup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let sqlite = try SQLiteEventStore(path: directory.appendingPathComponent("events.db").path, clock: Self.clock)
        try bootstrap(sqlite)
        let first = try CommandWriter(store: sqlite, clock: Self.clock)
        let invoiced = first.process((1...3).map { Self.invoice("I\($0)", party: "P\($0)") })
        #expect(Self.reasons(invoiced) == [nil, nil, nil])

        let store = TypeRecordingStore(sqlite)
        let writer = try CommandWriter(store: store, clock: Self.clock)
        #expect(!store.typesRead.withLock { $0.contains(InvoiceCreated.eventType) })
        let committed = writer.process([
            Self.erase("e1", party: "P2"),
            Self.erase("e2", party: "P9"),
            Self.erase("e3", party: "P1", kind: nil),
            Self.erase("e4", party: "P2"),
        ])
        #expect(Self.reasons(committed) == [nil, "SUBJECT_NOT_FOUND", nil, "ALREADY_ERASED"])
        #expect(!store.typesRead.withLock { $0.contains(InvoiceCreated.eventType) })
    }

    /// A party whose invoice the same batch decided is not in the store yet: the writer knows it
    /// from the decision. One whose invoice an earlier batch decided, before trims let the
    /// parties go, is found in the store.
    @Test func aPartyIsFoundWhetherItsInvoiceIsUncommittedOrLongCommitted() throws {
        let directory = try ChildProcess.temporaryDirectory("party-lookup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteEventStore(path: directory.appendingPathComponent("events.db").path, clock: Self.clock)
        try bootstrap(store)
        let writer = try CommandWriter(store: store, clock: Self.clock, cacheCapacity: 4)
        let together = writer.process([Self.invoice("I1", party: "P1"), Self.erase("e1", party: "P1")])
        #expect(Self.reasons(together) == [nil, nil])
        #expect(Self.reasons(writer.process([Self.invoice("I2", party: "P2")])) == [nil])
        for n in 3...12 {
            #expect(Self.reasons(writer.process([Self.invoice("I\(n)", party: "other-\(n)")])) == [nil])
        }
        #expect(Self.reasons(writer.process([Self.erase("e2", party: "P2"), Self.erase("e3", party: "P3")]))
            == [nil, "SUBJECT_NOT_FOUND"])
    }
}
