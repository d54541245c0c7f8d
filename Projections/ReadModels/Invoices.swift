import Events
import StrataCore

/// Invoices as the invoicing app lists them: one row per invoice with its customer, every
/// total fixed at creation, what has been paid and what is still owed; its lines with
/// their computed amounts; and every payment recorded against it.
///
/// Amounts are copied from the events, never recomputed: the invoice, its lines and each
/// payment's running totals read exactly as they were decided. A cancelled invoice keeps
/// its totals and owes nothing (`balance_cents` 0), so `SUM(balance_cents)` over the table
/// is what customers owe. `PersonalDataErased` of a PARTY replaces the customer's name and
/// tax id on each of its invoices with `[erased]`; the amounts stay.
public struct Invoices: Projection {
    public init() {}

    public var name: String { "invoices" }
    public var categories: [String]? { ["invoice", "party"] }

    public var schema: ProjectionSchema {
        // Version 2: a payment is keyed by its invoice and its id, which is unique per invoice
        // only, as a loan payment's is per loan.
        ProjectionSchema(
            version: 2,
            statements: [
                """
                CREATE TABLE invoices (
                    invoice_id          TEXT    PRIMARY KEY,
                    invoice_number      TEXT    NOT NULL,
                    series              TEXT    NOT NULL,
                    party_id            TEXT    NOT NULL,
                    customer_name       TEXT    NOT NULL,
                    customer_tax_id     TEXT,
                    customer_state_code TEXT,
                    seller_state_code   TEXT,
                    issue_date          TEXT    NOT NULL,
                    due_date            TEXT    NOT NULL,
                    subtotal_cents      INTEGER NOT NULL,
                    discount_cents      INTEGER NOT NULL,
                    taxable_cents       INTEGER NOT NULL,
                    tax_cents           INTEGER NOT NULL,
                    cgst_cents          INTEGER,
                    sgst_cents          INTEGER,
                    igst_cents          INTEGER,
                    total_cents         INTEGER NOT NULL,
                    paid_cents          INTEGER NOT NULL,
                    balance_cents       INTEGER NOT NULL,
                    status              TEXT    NOT NULL,
                    created_by          TEXT    NOT NULL,
                    created_at          TEXT    NOT NULL,
                    paid_on             TEXT,
                    cancelled_reason    TEXT,
                    cancelled_by        TEXT,
                    cancelled_at        TEXT,
                    notes               TEXT
                )
                """,
                "CREATE INDEX invoices_by_party ON invoices (party_id, issue_date)",
                "CREATE INDEX invoices_by_status ON invoices (status, due_date)",
                "CREATE INDEX invoices_by_due_date ON invoices (due_date)",
                """
                CREATE TABLE invoice_lines (
                    invoice_id       TEXT    NOT NULL,
                    line_number      INTEGER NOT NULL,
                    description      TEXT    NOT NULL,
                    quantity_milli   INTEGER NOT NULL,
                    unit_price_cents INTEGER NOT NULL,
                    tax_rate_bp      INTEGER NOT NULL,
                    discount_bp      INTEGER,
                    amount_cents     INTEGER NOT NULL,
                    discount_cents   INTEGER NOT NULL,
                    taxable_cents    INTEGER NOT NULL,
                    tax_cents        INTEGER NOT NULL,
                    cgst_cents       INTEGER,
                    sgst_cents       INTEGER,
                    igst_cents       INTEGER,
                    PRIMARY KEY (invoice_id, line_number)
                ) WITHOUT ROWID
                """,
                """
                CREATE TABLE invoice_payments (
                    payment_id       TEXT    NOT NULL,
                    invoice_id       TEXT    NOT NULL,
                    paid_on          TEXT    NOT NULL,
                    amount_cents     INTEGER NOT NULL,
                    method           TEXT    NOT NULL,
                    recorded_by      TEXT    NOT NULL,
                    paid_total_cents INTEGER NOT NULL,
                    balance_cents    INTEGER NOT NULL,
                    recorded_at      TEXT    NOT NULL,
                    PRIMARY KEY (invoice_id, payment_id)
                )
                """,
                "CREATE INDEX invoice_payments_by_invoice ON invoice_payments (invoice_id, paid_on)",
                "CREATE INDEX invoice_payments_by_day ON invoice_payments (paid_on)",
            ],
            // An erasure overwrites the party's name on each of its invoices.
            searchedWhileApplying: ["invoices_by_party"])
    }

    /// Why an invoice event cannot be applied: it names an invoice that has no row.
    struct UnknownInvoice: Error, CustomStringConvertible {
        let invoiceId: String
        let event: String
        var description: String { "\(event) for invoice \(invoiceId), which was never created" }
    }

    public func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {
        switch event.event {
        case .invoiceCreated(let e):
            try created(e, at: event.recordedAt, tables)
        case .invoicePaymentRecorded(let e):
            let updated = try tables.run(
                Self.pay,
                [.integer(e.paidTotalCents), .integer(e.balanceCents), .text(e.status.rawValue), .text(e.invoiceId)])
            guard updated > 0 else { throw UnknownInvoice(invoiceId: e.invoiceId, event: "a payment") }
            try tables.run(
                Self.insertPayment,
                [
                    .text(e.paymentId), .text(e.invoiceId), .text(e.paidOn.description), .integer(e.amountCents),
                    .text(e.method.rawValue), .text(e.recordedBy), .integer(e.paidTotalCents), .integer(e.balanceCents),
                    .text(event.recordedAt.description),
                ])
        case .invoicePaid(let e):
            let updated = try tables.run(
                Self.settle,
                [
                    .text(e.paidOn.description), .integer(e.paidTotalCents), .integer(e.paidTotalCents),
                    .text(e.invoiceId),
                ])
            guard updated > 0 else { throw UnknownInvoice(invoiceId: e.invoiceId, event: "InvoicePaid") }
        case .invoiceCancelled(let e):
            let updated = try tables.run(
                Self.cancel,
                [.text(e.reason), .text(e.cancelledBy), .text(event.recordedAt.description), .text(e.invoiceId)])
            guard updated > 0 else { throw UnknownInvoice(invoiceId: e.invoiceId, event: "a cancellation") }
        case .personalDataErased(let e) where e.kind == .party:
            try tables.run(Self.erase, [.text(e.subjectId)])
        default:
            return
        }
    }

    private static let erase = ProjectionStatement(
        """
        UPDATE invoices SET customer_name = '[erased]',
          customer_tax_id = CASE WHEN customer_tax_id IS NOT NULL THEN '[erased]' END
        WHERE party_id = ?
        """)

    private func created(_ e: InvoiceCreated, at recordedAt: Timestamp, _ tables: any ProjectionTables) throws {
        let t = e.totals
        try tables.run(
            Self.insert,
            [
                .text(e.invoiceId), .text(e.invoiceNumber), .text(e.series), .text(e.customer.partyId),
                .text(e.customer.name.value), .text(e.customer.taxId?.value), .text(e.customer.stateCode),
                .text(e.sellerStateCode), .text(e.issueDate.description), .text(e.dueDate.description),
                .integer(t.subtotalCents), .integer(t.discountCents), .integer(t.taxableCents), .integer(t.taxCents),
                .integer(t.cgstCents), .integer(t.sgstCents), .integer(t.igstCents), .integer(t.totalCents),
                .integer(t.totalCents), .text(e.createdBy), .text(recordedAt.description), .text(e.notes),
            ])
        for (index, line) in e.lines.enumerated() {
            try tables.run(
                Self.insertLine,
                [
                    .text(e.invoiceId), .int(index + 1), .text(line.description), .integer(line.quantityMilli),
                    .integer(line.unitPriceCents), .int(line.taxRateBp), .integer(line.discountBp.map(Int64.init)),
                    .integer(line.amountCents), .integer(line.discountCents), .integer(line.taxableCents),
                    .integer(line.taxCents), .integer(line.cgstCents), .integer(line.sgstCents),
                    .integer(line.igstCents),
                ])
        }
    }

    private static let pay = ProjectionStatement(
        "UPDATE invoices SET paid_cents = ?, balance_cents = ?, status = ? WHERE invoice_id = ?")
    private static let insertPayment = ProjectionStatement(
        """
        INSERT INTO invoice_payments (payment_id, invoice_id, paid_on, amount_cents, method, recorded_by,
            paid_total_cents, balance_cents, recorded_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        """)
    private static let settle = ProjectionStatement(
        """
        UPDATE invoices SET paid_on = ?, paid_cents = ?, balance_cents = total_cents - ?, status = 'PAID'
        WHERE invoice_id = ?
        """)
    private static let cancel = ProjectionStatement(
        """
        UPDATE invoices SET status = 'CANCELLED', balance_cents = 0, cancelled_reason = ?, cancelled_by = ?,
            cancelled_at = ?
        WHERE invoice_id = ?
        """)
    private static let insert = ProjectionStatement(
        """
        INSERT INTO invoices (invoice_id, invoice_number, series, party_id, customer_name, customer_tax_id,
            customer_state_code, seller_state_code, issue_date, due_date, subtotal_cents, discount_cents,
            taxable_cents, tax_cents, cgst_cents, sgst_cents, igst_cents, total_cents, paid_cents, balance_cents,
            status, created_by, created_at, notes)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, 'ISSUED', ?, ?, ?)
        """)
    private static let insertLine = ProjectionStatement(
        """
        INSERT INTO invoice_lines (invoice_id, line_number, description, quantity_milli, unit_price_cents,
            tax_rate_bp, discount_bp, amount_cents, discount_cents, taxable_cents, tax_cents, cgst_cents,
            sgst_cents, igst_cents)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """)
}
