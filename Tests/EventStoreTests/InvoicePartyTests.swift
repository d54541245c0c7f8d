@testable import EventStore
import Events
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

/// `hasInvoice(forParty:)`: whether an invoice names a party, all an erasure asks of one. The
/// SQLite store answers from a partial index of invoices' party ids, which a store made before
/// it gets at its next writer open; a store without one reads its invoices.
@Suite("Invoices by party")
struct InvoicePartyTests {
    private static func invoice(_ id: String, party: String) throws -> NewEvent {
        let line = InvoiceLine(
            description: "tea", quantityMilli: 1000, unitPriceCents: 500, taxRateBp: 0, amountCents: 500,
            discountCents: 0, taxableCents: 500, taxCents: 0)
        let created = InvoiceCreated(
            invoiceId: id, series: "INV", invoiceNumber: "INV-\(id)",
            customer: InvoiceCustomer(partyId: party, name: "Suresh Traders"),
            issueDate: LocalDate("2026-11-02")!, dueDate: LocalDate("2026-12-02")!, lines: [line],
            totals: InvoiceTotals(subtotalCents: 500, discountCents: 0, taxableCents: 500, taxCents: 0, totalCents: 500),
            createdBy: "admin-1")
        return try NewEvent(stream: stream("invoice-\(id)"), event: created)
    }

    /// Invoices to P1 and P2 among other events, one of which holds a party id elsewhere.
    private static func fill(_ store: any EventStore) throws {
        _ = try store.append(command("c1", [try invoice("I1", party: "P1"), try event("loan-L1")]))
        _ = try store.append(command("c2", [try event("loan-L2", "TestHappened", ["customer": ["partyId": "P3"]])]))
        _ = try store.append(command("c3", [try invoice("I2", party: "P2"), try invoice("I3", party: "P1")]))
    }

    @Test(arguments: StoreKind.allCases)
    func anInvoicesPartyIsFoundAndNoOtherIs(_ kind: StoreKind) throws {
        let store = try kind.make()
        #expect(try !store.hasInvoice(forParty: "P1"))
        try Self.fill(store)
        #expect(try store.hasInvoice(forParty: "P1"))
        #expect(try store.hasInvoice(forParty: "P2"))
        #expect(try !store.hasInvoice(forParty: "P3"), "only an invoice names a party")
        #expect(try !store.hasInvoice(forParty: "p1"), "party ids are compared exactly")
        #expect(try !store.hasInvoice(forParty: ""))
    }

    /// The lookup is one search of the index, however many invoices the store holds; and a
    /// store made without the index gets it when a writer opens it, with every invoice in it.
    @Test func theLookupSearchesTheIndexWhichAnOlderStoreGetsAtItsNextWriterOpen() throws {
        let directory = try ChildProcess.temporaryDirectory("invoice-party")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.db").path
        try Self.fill(try SQLiteEventStore(path: path))
        let c = try SQLiteConnection(path: path, mode: .readWrite)
        defer { c.close() }
        // On a connection of its own each time: an EXPLAIN is not prepared again when the schema changes.
        func plan() throws -> String {
            let c = try SQLiteConnection(path: path, mode: .readOnly)
            defer { c.close() }
            let s = try c.statement("EXPLAIN QUERY PLAN " + SQLiteEventStore.invoiceForParty.sql)
            defer { s.reset() }
            try s.bind("P1", at: 1)
            var details: [String] = []
            while try s.step() { details.append(s.text(3)) }
            return details.joined(separator: "; ")
        }
        #expect(try plan().contains("USING INDEX events_by_invoice_party"))

        try c.execute("DROP INDEX events_by_invoice_party")
        #expect(try !plan().contains("events_by_invoice_party"))
        let reader = try SQLiteEventStore(readingAt: path)
        #expect(try reader.hasInvoice(forParty: "P2"), "without the index, a reader still answers")
        let writer = try SQLiteEventStore(path: path)
        #expect(try plan().contains("USING INDEX events_by_invoice_party"))
        #expect(try writer.hasInvoice(forParty: "P2"))
        #expect(try !writer.hasInvoice(forParty: "P3"))
        let indexed = try c.scalarInteger(
            "SELECT count(*) FROM events INDEXED BY events_by_invoice_party "
                + "WHERE type = 'InvoiceCreated' AND json_extract(data, '$.customer.partyId') IS NOT NULL")
        #expect(indexed == 3)
    }
}
