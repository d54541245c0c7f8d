import Events
import Projections
import StrataCore
import StrataTesting
import Testing

/// Intra-state (CGST + SGST): two lines, one discounted, 119,162 cents in all.
private let intraState = InvoiceCreated(
    invoiceId: "I1", series: "INV", invoiceNumber: "INV-000001",
    customer: InvoiceCustomer(partyId: "P1", name: "Asha Traders", taxId: "29ABCDE1234F1Z5", stateCode: "29"),
    issueDate: LocalDate("2026-11-02")!, dueDate: LocalDate("2026-12-02")!,
    lines: [
        // 2.5 × 400.00 = 1,000.00, less 10% = 900.00 taxable, 18% = 162.00 split 81.00 + 81.00.
        InvoiceLine(
            description: "Widget", quantityMilli: 2500, unitPriceCents: 40000, taxRateBp: 1800, discountBp: 1000,
            amountCents: 100_000, discountCents: 10000, taxableCents: 90000, taxCents: 16200, cgstCents: 8100,
            sgstCents: 8100),
        // 123.45 at 5% = 6.1725 → 6.17; CGST round(3.08625) = 3.09, SGST the rest, 3.08.
        InvoiceLine(
            description: "Service", quantityMilli: 1000, unitPriceCents: 12345, taxRateBp: 500, amountCents: 12345,
            discountCents: 0, taxableCents: 12345, taxCents: 617, cgstCents: 309, sgstCents: 308),
    ],
    sellerStateCode: "29", notes: "Thank you",
    totals: InvoiceTotals(
        subtotalCents: 112_345, discountCents: 10000, taxableCents: 102_345, taxCents: 16817, cgstCents: 8409,
        sgstCents: 8408, totalCents: 119_162),
    createdBy: "admin-1")

/// Inter-state (IGST): 500.00 at 12%.
private let interState = InvoiceCreated(
    invoiceId: "I2", series: "INV", invoiceNumber: "INV-000002",
    customer: InvoiceCustomer(partyId: "P2", name: "Bharat Stores", stateCode: "27"),
    issueDate: LocalDate("2026-11-03")!, dueDate: LocalDate("2026-11-18")!,
    lines: [
        InvoiceLine(
            description: "Cable", quantityMilli: 1000, unitPriceCents: 50000, taxRateBp: 1200, amountCents: 50000,
            discountCents: 0, taxableCents: 50000, taxCents: 6000, igstCents: 6000)
    ],
    sellerStateCode: "29",
    totals: InvoiceTotals(
        subtotalCents: 50000, discountCents: 0, taxableCents: 50000, taxCents: 6000, igstCents: 6000,
        totalCents: 56000),
    createdBy: "agent-7")

/// No customer state code: the tax is not split.
private let unsplit = InvoiceCreated(
    invoiceId: "I3", series: "B2C", invoiceNumber: "B2C-000001",
    customer: InvoiceCustomer(partyId: "P3", name: "Chitra Rao"),
    issueDate: LocalDate("2026-11-04")!, dueDate: LocalDate("2026-11-04")!,
    lines: [
        InvoiceLine(
            description: "Bulb", quantityMilli: 3000, unitPriceCents: 1000, taxRateBp: 2800, amountCents: 3000,
            discountCents: 0, taxableCents: 3000, taxCents: 840)
    ],
    sellerStateCode: "29",
    totals: InvoiceTotals(subtotalCents: 3000, discountCents: 0, taxableCents: 3000, taxCents: 840, totalCents: 3840),
    createdBy: "admin-1")

private func payment(
    _ id: String, _ invoice: String, _ amount: Int64, on day: String, _ method: PaymentMethod, paid: Int64,
    balance: Int64, _ status: InvoiceStatus, by: String = "admin-1"
) -> StrataEvent {
    .invoicePaymentRecorded(
        InvoicePaymentRecorded(
            paymentId: id, invoiceId: invoice, amountCents: amount, paidOn: LocalDate(day)!, method: method,
            recordedBy: by, paidTotalCents: paid, balanceCents: balance, status: status))
}

private let balances = "SELECT invoice_id, paid_cents, balance_cents, status, paid_on FROM invoices ORDER BY invoice_id"

private let invoiceColumns = """
    SELECT invoice_id, invoice_number, series, party_id, customer_name, customer_tax_id, customer_state_code,
        seller_state_code, issue_date, due_date, subtotal_cents, discount_cents, taxable_cents, tax_cents,
        cgst_cents, sgst_cents, igst_cents, total_cents, paid_cents, balance_cents, status, created_by, created_at,
        paid_on, cancelled_reason, cancelled_by, cancelled_at, notes
    FROM invoices ORDER BY invoice_id
    """

@Suite struct InvoicesTests {
    private func created() throws -> ProjectionHarness {
        let h = try ProjectionHarness([Invoices()])
        try h.given(.invoiceCreated(intraState), stream: "invoice-I1")
        try h.given(.invoiceCreated(interState), stream: "invoice-I2", actor: "agent-7")
        try h.given(.invoiceCreated(unsplit), stream: "invoice-I3")
        return h
    }

    @Test func createdInvoicesCarryTheirTotalsCgstSgstIgstOrUnsplit() throws {
        let h = try created()
        #expect(
            try h.rows(invoiceColumns) == [
                [
                    "I1", "INV-000001", "INV", "P1", "Asha Traders", "29ABCDE1234F1Z5", "29", "29", "2026-11-02",
                    "2026-12-02", 112_345, 10000, 102_345, 16817, 8409, 8408, nil, 119_162, 0, 119_162, "ISSUED",
                    "admin-1", "2026-11-02T09:00:00.000Z", nil, nil, nil, nil, "Thank you",
                ],
                [
                    "I2", "INV-000002", "INV", "P2", "Bharat Stores", nil, "27", "29", "2026-11-03", "2026-11-18",
                    50000, 0, 50000, 6000, nil, nil, 6000, 56000, 0, 56000, "ISSUED", "agent-7",
                    "2026-11-02T09:00:01.000Z", nil, nil, nil, nil, nil,
                ],
                [
                    "I3", "B2C-000001", "B2C", "P3", "Chitra Rao", nil, nil, "29", "2026-11-04", "2026-11-04", 3000, 0,
                    3000, 840, nil, nil, nil, 3840, 0, 3840, "ISSUED", "admin-1", "2026-11-02T09:00:02.000Z", nil, nil,
                    nil, nil, nil,
                ],
            ])
        #expect(
            try h.rows(
                """
                SELECT invoice_id, line_number, description, quantity_milli, unit_price_cents, tax_rate_bp, discount_bp,
                    amount_cents, discount_cents, taxable_cents, tax_cents, cgst_cents, sgst_cents, igst_cents
                FROM invoice_lines ORDER BY invoice_id, line_number
                """) == [
                    ["I1", 1, "Widget", 2500, 40000, 1800, 1000, 100_000, 10000, 90000, 16200, 8100, 8100, nil],
                    ["I1", 2, "Service", 1000, 12345, 500, nil, 12345, 0, 12345, 617, 309, 308, nil],
                    ["I2", 1, "Cable", 1000, 50000, 1200, nil, 50000, 0, 50000, 6000, nil, nil, 6000],
                    ["I3", 1, "Bulb", 3000, 1000, 2800, nil, 3000, 0, 3000, 840, nil, nil, nil],
                ])
        #expect(try h.rows("SELECT count(*) FROM invoice_payments") == [[0]])
    }

    @Test func aPartialPaymentThenTheSettlingOne() throws {
        let h = try created()
        try h.given(
            payment("IP1", "I1", 50000, on: "2026-11-10", .bank, paid: 50000, balance: 69162, .partiallyPaid),
            stream: "invoice-I1")
        #expect(
            try h.rows(balances) == [
                ["I1", 50000, 69162, "PARTIALLY_PAID", nil], ["I2", 0, 56000, "ISSUED", nil],
                ["I3", 0, 3840, "ISSUED", nil],
            ])

        try h.given(
            payment("IP2", "I1", 69162, on: "2026-11-20", .cash, paid: 119_162, balance: 0, .paid, by: "agent-7"),
            stream: "invoice-I1", actor: "agent-7")
        try h.given(
            .invoicePaid(InvoicePaid(invoiceId: "I1", paidOn: LocalDate("2026-11-20")!, paidTotalCents: 119_162)),
            stream: "invoice-I1", actor: "agent-7")
        #expect(
            try h.rows(balances) == [
                ["I1", 119_162, 0, "PAID", "2026-11-20"], ["I2", 0, 56000, "ISSUED", nil],
                ["I3", 0, 3840, "ISSUED", nil],
            ])
        #expect(
            try h.rows(
                """
                SELECT payment_id, invoice_id, paid_on, amount_cents, method, recorded_by, paid_total_cents,
                    balance_cents, recorded_at
                FROM invoice_payments ORDER BY payment_id
                """) == [
                    ["IP1", "I1", "2026-11-10", 50000, "BANK", "admin-1", 50000, 69162, "2026-11-02T09:00:03.000Z"],
                    ["IP2", "I1", "2026-11-20", 69162, "CASH", "agent-7", 119_162, 0, "2026-11-02T09:00:04.000Z"],
                ])
    }

    @Test func aCancelledInvoiceKeepsItsTotalsAndOwesNothing() throws {
        let h = try created()
        try h.given(
            .invoiceCancelled(InvoiceCancelled(invoiceId: "I3", reason: "issued twice", cancelledBy: "admin-1")),
            stream: "invoice-I3")
        #expect(
            try h.rows(
                """
                SELECT invoice_id, total_cents, paid_cents, balance_cents, status, cancelled_reason, cancelled_by,
                    cancelled_at
                FROM invoices WHERE status = 'CANCELLED'
                """) == [["I3", 3840, 0, 0, "CANCELLED", "issued twice", "admin-1", "2026-11-02T09:00:03.000Z"]])
        #expect(
            try h.rows("SELECT status, count(*), sum(balance_cents) FROM invoices GROUP BY status ORDER BY status")
                == [["CANCELLED", 1, 0], ["ISSUED", 2, 175_162]])
        #expect(try h.rows("SELECT count(*) FROM invoice_lines WHERE invoice_id = 'I3'") == [[1]])
    }

    @Test func theInvoicingReadModelsShareOneFileWithTheOthers() throws {
        let h = try ProjectionHarness(ReadModels.all, name: "readmodels")
        try h.given(.invoiceCreated(interState), stream: "invoice-I2")
        try h.given(
            payment("IP1", "I2", 6000, on: "2026-11-10", .wallet, paid: 6000, balance: 50000, .partiallyPaid),
            stream: "invoice-I2")
        #expect(h.database.stop == nil)
        #expect(try h.rows("SELECT invoice_id, balance_cents FROM invoices") == [["I2", 50000]])
        #expect(try h.rows("SELECT party_id, balance_cents FROM customers") == [["P2", 50000]])
        #expect(try h.rows("SELECT day, total_collected_cents FROM collections_daily") == [["2026-11-10", 6000]])
    }

    /// Payment ids are unique per invoice (the decider refuses DUPLICATE_PAYMENT only within
    /// one), so two invoices may each be paid by a payment "P1": both are payments, and the
    /// projection goes on.
    @Test func aPaymentIdUsedOnTwoInvoicesIsTwoPayments() throws {
        let h = try ProjectionHarness(ReadModels.all, name: "readmodels")
        try h.given(.invoiceCreated(interState), stream: "invoice-I2")
        try h.given(.invoiceCreated(unsplit), stream: "invoice-I3")
        try h.given(
            payment("P1", "I2", 6000, on: "2026-11-10", .cash, paid: 6000, balance: 50000, .partiallyPaid),
            stream: "invoice-I2")
        try h.given(
            payment("P1", "I3", 840, on: "2026-11-10", .cash, paid: 840, balance: 3000, .partiallyPaid),
            stream: "invoice-I3")
        #expect(h.database.stop == nil)
        #expect(h.database.checkpoint == 4)
        #expect(
            try h.rows("SELECT invoice_id, payment_id, amount_cents FROM invoice_payments ORDER BY invoice_id")
                == [["I2", "P1", 6000], ["I3", "P1", 840]])
        #expect(
            try h.rows("SELECT invoice_id, payment_id, amount_cents FROM receivable_payments ORDER BY invoice_id")
                == [["I2", "P1", 6000], ["I3", "P1", 840]])
        #expect(
            try h.rows("SELECT party_id, paid_cents, balance_cents FROM customers ORDER BY party_id")
                == [["P2", 6000, 50000], ["P3", 840, 3000]])
        #expect(try h.rows("SELECT day, total_collected_cents FROM collections_daily") == [["2026-11-10", 6840]])
    }

    @Test func aPaymentForAnInvoiceNeverCreatedStopsTheProjection() throws {
        let h = try ProjectionHarness([Invoices()])
        try h.given(
            payment("IP9", "I9", 100, on: "2026-11-10", .cash, paid: 100, balance: 0, .paid), stream: "invoice-I9")
        let stop = try #require(h.database.stop)
        #expect(stop.position == 1 && stop.error.contains("invoice I9, which was never created"))
        #expect(try h.rows("SELECT count(*) FROM invoice_payments") == [[0]])
    }
}
