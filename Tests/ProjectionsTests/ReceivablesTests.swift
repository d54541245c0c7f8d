import Events
import Projections
import StrataCore
import StrataTesting
import Testing

/// The harness's file as `ProjectionTables`, to call the read model's query helpers.
/// An invoice of one untaxed line, so its total is simply `total`.
private func invoice(
    _ id: String, party: String, name: PersonalData, total: Int64, issued: String = "2026-10-01", due: String
) -> StrataEvent {
    .invoiceCreated(
        InvoiceCreated(
            invoiceId: id, series: "INV", invoiceNumber: "INV-\(id)",
            customer: InvoiceCustomer(partyId: party, name: name), issueDate: LocalDate(issued)!,
            dueDate: LocalDate(due)!,
            lines: [
                InvoiceLine(
                    description: "Goods", quantityMilli: 1000, unitPriceCents: total, taxRateBp: 0,
                    amountCents: total, discountCents: 0, taxableCents: total, taxCents: 0)
            ],
            totals: InvoiceTotals(
                subtotalCents: total, discountCents: 0, taxableCents: total, taxCents: 0, totalCents: total),
            createdBy: "admin-1"))
}

private func paid(
    _ id: String, _ invoice: String, _ amount: Int64, on day: String, total: Int64, balance: Int64
) -> StrataEvent {
    .invoicePaymentRecorded(
        InvoicePaymentRecorded(
            paymentId: id, invoiceId: invoice, amountCents: amount, paidOn: LocalDate(day)!, method: .bank,
            recordedBy: "admin-1", paidTotalCents: total, balanceCents: balance,
            status: balance == 0 ? .paid : .partiallyPaid))
}

private func aging(_ h: ProjectionHarness, _ day: String) throws -> [Receivables.CustomerAging] {
    try Receivables.aging(asOf: LocalDate(day)!, in: h)
}

@Suite struct ReceivablesTests {
    /// Party P1 owes eight invoices, 0, 1, 30, 31, 60, 61, 90 and 91 days past due as of
    /// 2027-01-31, each an amount that shows which bucket it fell in.
    private func boundaries() throws -> ProjectionHarness {
        let h = try ProjectionHarness([Receivables()])
        let dues: [(String, Int64)] = [
            ("2027-01-31", 100), ("2027-01-30", 200), ("2027-01-01", 400), ("2026-12-31", 800),
            ("2026-12-02", 1600), ("2026-12-01", 3200), ("2026-11-02", 6400), ("2026-11-01", 12800),
        ]
        for (i, (due, total)) in dues.enumerated() {
            let name: PersonalData = i == dues.count - 1 ? "Asha Traders Pvt Ltd" : "Asha Traders"
            let id = "I\(i + 1)"
            try h.given(invoice(id, party: "P1", name: name, total: total, due: due), stream: "invoice-\(id)")
        }
        return h
    }

    @Test func agingBucketsAtTheirBoundaries() throws {
        let h = try boundaries()
        // 0 → current; 1 and 30 → 1–30; 31 and 60 → 31–60; 61 and 90 → 61–90; 91 → over 90.
        #expect(
            try aging(h, "2027-01-31") == [
                Receivables.CustomerAging(
                    partyId: "P1", name: "Asha Traders Pvt Ltd", currentCents: 100, days1To30Cents: 600,
                    days31To60Cents: 2400, days61To90Cents: 9600, over90DaysCents: 12800, totalCents: 25500)
            ])
        // A day later every invoice moves one day on: 1, 2, 31, 32, 61, 62, 91, 92.
        #expect(
            try aging(h, "2027-02-01") == [
                Receivables.CustomerAging(
                    partyId: "P1", name: "Asha Traders Pvt Ltd", currentCents: 0, days1To30Cents: 300,
                    days31To60Cents: 1200, days61To90Cents: 4800, over90DaysCents: 19200, totalCents: 25500)
            ])
        // A day earlier: -1, 0, 29, 30, 59, 60, 89, 90.
        #expect(
            try aging(h, "2027-01-30") == [
                Receivables.CustomerAging(
                    partyId: "P1", name: "Asha Traders Pvt Ltd", currentCents: 300, days1To30Cents: 1200,
                    days31To60Cents: 4800, days61To90Cents: 19200, over90DaysCents: 0, totalCents: 25500)
            ])
        // Before anything was issued, nobody owed anything.
        #expect(try aging(h, "2026-09-30") == [])
        // The same SQL, as analysts run it with :as_of.
        #expect(
            try h.rows(Receivables.agingSQL, ["2027-01-31"]) == [
                ["P1", "Asha Traders Pvt Ltd", 100, 600, 2400, 9600, 12800, 25500]
            ])
    }

    @Test func customersAddUpInvoicedPaidCancelledAndOwed() throws {
        let h = try ProjectionHarness([Receivables()])
        let due = "2026-11-30"
        try h.given(invoice("A", party: "P2", name: "Bharat Stores", total: 10000, due: due), stream: "invoice-A")
        try h.given(invoice("B", party: "P2", name: "Bharat Stores", total: 5000, due: due), stream: "invoice-B")
        try h.given(invoice("C", party: "P3", name: "Chitra Rao", total: 7000, due: due), stream: "invoice-C")
        try h.given(paid("PA1", "A", 4000, on: "2026-12-10", total: 4000, balance: 6000), stream: "invoice-A")
        try h.given(
            .invoiceCancelled(InvoiceCancelled(invoiceId: "B", reason: "wrong customer", cancelledBy: "admin-1")),
            stream: "invoice-B")
        try h.given(paid("PC1", "C", 7000, on: "2026-11-15", total: 7000, balance: 0), stream: "invoice-C")
        try h.given(
            .invoicePaid(InvoicePaid(invoiceId: "C", paidOn: LocalDate("2026-11-15")!, paidTotalCents: 7000)),
            stream: "invoice-C")

        #expect(
            try h.rows(
                """
                SELECT party_id, name, invoices_count, invoiced_cents, paid_cents, cancelled_cents, balance_cents
                FROM customers ORDER BY party_id
                """) == [
                    ["P2", "Bharat Stores", 2, 15000, 4000, 5000, 6000],
                    ["P3", "Chitra Rao", 1, 7000, 7000, 0, 0],
                ])
        #expect(
            try h.rows(
                """
                SELECT invoice_id, party_id, issue_date, due_date, total_cents, paid_cents, balance_cents, status
                FROM receivable_invoices ORDER BY invoice_id
                """) == [
                    ["A", "P2", "2026-10-01", "2026-11-30", 10000, 4000, 6000, "PARTIALLY_PAID"],
                    ["B", "P2", "2026-10-01", "2026-11-30", 5000, 0, 0, "CANCELLED"],
                    ["C", "P3", "2026-10-01", "2026-11-30", 7000, 7000, 0, "PAID"],
                ])

        // Before the payment's day the whole invoice was owed; the cancelled one never is.
        // P3 owed 7,000 until it paid on 2026-11-15, when it was not yet due.
        #expect(
            try aging(h, "2026-11-14") == [
                Receivables.CustomerAging(
                    partyId: "P2", name: "Bharat Stores", currentCents: 10000, days1To30Cents: 0, days31To60Cents: 0,
                    days61To90Cents: 0, over90DaysCents: 0, totalCents: 10000),
                Receivables.CustomerAging(
                    partyId: "P3", name: "Chitra Rao", currentCents: 7000, days1To30Cents: 0, days31To60Cents: 0,
                    days61To90Cents: 0, over90DaysCents: 0, totalCents: 7000),
            ])
        #expect(
            try aging(h, "2026-12-09") == [
                Receivables.CustomerAging(
                    partyId: "P2", name: "Bharat Stores", currentCents: 0, days1To30Cents: 10000, days31To60Cents: 0,
                    days61To90Cents: 0, over90DaysCents: 0, totalCents: 10000)
            ])
        #expect(
            try aging(h, "2026-12-10") == [
                Receivables.CustomerAging(
                    partyId: "P2", name: "Bharat Stores", currentCents: 0, days1To30Cents: 6000, days31To60Cents: 0,
                    days61To90Cents: 0, over90DaysCents: 0, totalCents: 6000)
            ])
        // 2026-11-30 to 2027-02-28 is 90 days; to 2027-03-01, 91.
        #expect(
            try aging(h, "2027-02-28") == [
                Receivables.CustomerAging(
                    partyId: "P2", name: "Bharat Stores", currentCents: 0, days1To30Cents: 0, days31To60Cents: 0,
                    days61To90Cents: 6000, over90DaysCents: 0, totalCents: 6000)
            ])
        #expect(
            try aging(h, "2027-03-01") == [
                Receivables.CustomerAging(
                    partyId: "P2", name: "Bharat Stores", currentCents: 0, days1To30Cents: 0, days31To60Cents: 0,
                    days61To90Cents: 0, over90DaysCents: 6000, totalCents: 6000)
            ])
    }

    @Test func erasingAPartyBlanksItsNameAndKeepsItsAmounts() throws {
        let h = try ProjectionHarness([Receivables(), Invoices()])
        try h.given(invoice("I1", party: "P1", name: "Asha Traders", total: 1000, due: "2026-11-30"), stream: "invoice-I1")
        try h.given(paid("PAY1", "I1", 400, on: "2026-11-10", total: 400, balance: 600), stream: "invoice-I1")
        try h.given(invoice("I2", party: "P2", name: "Ravi Stores", total: 500, due: "2026-11-30"), stream: "invoice-I2")
        try h.given(
            .personalDataErased(PersonalDataErased(subjectId: "P1", kind: .party, erasedBy: "admin-1", reason: "asked")),
            stream: "party-P1")
        #expect(h.database.stop == nil)
        #expect(
            try h.rows("SELECT party_id, name, invoiced_cents, paid_cents, balance_cents FROM customers ORDER BY party_id")
                == [["P1", "[erased]", 1000, 400, 600], ["P2", "Ravi Stores", 500, 0, 500]])
        #expect(
            try h.rows("SELECT invoice_id, customer_name, customer_tax_id, total_cents, paid_cents FROM invoices ORDER BY 1")
                == [["I1", "[erased]", nil, 1000, 400], ["I2", "Ravi Stores", nil, 500, 0]])
    }

    @Test func aPaymentForAnInvoiceNeverCreatedStopsTheProjection() throws {
        let h = try ProjectionHarness([Receivables()])
        try h.given(paid("PX", "X", 100, on: "2026-11-15", total: 100, balance: 0), stream: "invoice-X")
        #expect(h.database.stop?.error.contains("invoice X, which was never created") == true)
    }
}
