import Events
import StrataCore

/// What each invoice customer owes: one row per party with what was invoiced, paid and
/// cancelled, and the open balance; and, at query time, that balance aged by days past due
/// as of any date (`aging(asOf:in:)`, or `agingSQL` with `:as_of` from sqlite3).
///
/// It keeps its own small copy of each invoice (party, dates, total, paid) and of each
/// payment (day, amount), so that it stands alone from the `invoices` read model and can
/// age balances as they stood on a past date: an invoice counts from its issue date, a
/// payment from its `paid_on`. A cancelled invoice (nothing was ever paid on it) counts as
/// never owed. `PersonalDataErased` of a PARTY replaces its customer's `name` with
/// `[erased]`; its amounts stay.
public struct Receivables: Projection {
    public init() {}

    public var name: String { "receivables" }
    public var categories: [String]? { ["invoice", "party"] }

    public var schema: ProjectionSchema {
        // Version 2: a payment is keyed by its invoice and its id, which is unique per invoice
        // only, as a loan payment's is per loan.
        ProjectionSchema(
            version: 2,
            statements: [
                """
                CREATE TABLE customers (
                    party_id        TEXT    PRIMARY KEY,
                    name            TEXT    NOT NULL,
                    invoices_count  INTEGER NOT NULL,
                    invoiced_cents  INTEGER NOT NULL,
                    paid_cents      INTEGER NOT NULL,
                    cancelled_cents INTEGER NOT NULL,
                    balance_cents   INTEGER NOT NULL
                )
                """,
                """
                CREATE TABLE receivable_invoices (
                    invoice_id    TEXT    PRIMARY KEY,
                    party_id      TEXT    NOT NULL,
                    issue_date    TEXT    NOT NULL,
                    due_date      TEXT    NOT NULL,
                    total_cents   INTEGER NOT NULL,
                    paid_cents    INTEGER NOT NULL,
                    balance_cents INTEGER NOT NULL,
                    status        TEXT    NOT NULL
                )
                """,
                "CREATE INDEX receivable_invoices_by_party ON receivable_invoices (party_id, due_date)",
                """
                CREATE TABLE receivable_payments (
                    payment_id   TEXT    NOT NULL,
                    invoice_id   TEXT    NOT NULL,
                    paid_on      TEXT    NOT NULL,
                    amount_cents INTEGER NOT NULL,
                    PRIMARY KEY (invoice_id, payment_id)
                )
                """,
                """
                CREATE INDEX receivable_payments_by_invoice ON receivable_payments (invoice_id, paid_on, amount_cents)
                """,
            ])
    }

    struct UnknownInvoice: Error, CustomStringConvertible {
        let invoiceId: String
        let event: String
        var description: String { "\(event) for invoice \(invoiceId), which was never created" }
    }

    public func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {
        switch event.event {
        case .invoiceCreated(let e):
            let total = e.totals.totalCents
            try tables.run(
                Self.insertInvoice,
                [
                    .text(e.invoiceId), .text(e.customer.partyId), .text(e.issueDate.description),
                    .text(e.dueDate.description), .integer(total), .integer(total),
                ])
            try tables.run(
                Self.invoiceCustomer,
                [.text(e.customer.partyId), .text(e.customer.name.value), .integer(total), .integer(total)])
        case .invoicePaymentRecorded(let e):
            let updated = try tables.run(
                Self.payInvoice,
                [.integer(e.paidTotalCents), .integer(e.balanceCents), .text(e.status.rawValue), .text(e.invoiceId)])
            guard updated > 0 else { throw UnknownInvoice(invoiceId: e.invoiceId, event: "a payment") }
            try tables.run(
                Self.insertPayment,
                [.text(e.paymentId), .text(e.invoiceId), .text(e.paidOn.description), .integer(e.amountCents)])
            try tables.run(Self.payCustomer, [.integer(e.amountCents), .integer(e.amountCents), .text(e.invoiceId)])
        case .invoiceCancelled(let e):
            // Only an invoice nothing was paid on can be cancelled; what it still owed is
            // taken off the customer's balance all the same, so the balance stays exact.
            let invoice = try tables.rows(Self.cancelInvoice, [.text(e.invoiceId)])
            guard let row = invoice.first, row.count == 3 else {
                throw UnknownInvoice(invoiceId: e.invoiceId, event: "a cancellation")
            }
            try tables.run(Self.cancelForCustomer, [row[1], row[2], row[0]])
        case .personalDataErased(let e) where e.kind == .party:
            try tables.run(Self.erase, [.text(e.subjectId)])
        default:
            return
        }
    }

    private static let erase = ProjectionStatement("UPDATE customers SET name = '[erased]' WHERE party_id = ?")

    private static let insertInvoice = ProjectionStatement(
        """
        INSERT INTO receivable_invoices (invoice_id, party_id, issue_date, due_date, total_cents, paid_cents,
            balance_cents, status)
        VALUES (?, ?, ?, ?, ?, 0, ?, 'ISSUED')
        """)
    private static let invoiceCustomer = ProjectionStatement(
        """
        INSERT INTO customers (party_id, name, invoices_count, invoiced_cents, paid_cents, cancelled_cents,
            balance_cents)
        VALUES (?, ?, 1, ?, 0, 0, ?)
        ON CONFLICT (party_id) DO UPDATE SET name = excluded.name, invoices_count = invoices_count + 1,
            invoiced_cents = invoiced_cents + excluded.invoiced_cents,
            balance_cents = balance_cents + excluded.balance_cents
        """)
    private static let payInvoice = ProjectionStatement(
        "UPDATE receivable_invoices SET paid_cents = ?, balance_cents = ?, status = ? WHERE invoice_id = ?")
    private static let insertPayment = ProjectionStatement(
        "INSERT INTO receivable_payments (payment_id, invoice_id, paid_on, amount_cents) VALUES (?, ?, ?, ?)")
    private static let payCustomer = ProjectionStatement(
        """
        UPDATE customers SET paid_cents = paid_cents + ?, balance_cents = balance_cents - ?
        WHERE party_id = (SELECT party_id FROM receivable_invoices WHERE invoice_id = ?)
        """)
    private static let cancelInvoice = ProjectionStatement(
        """
        UPDATE receivable_invoices SET status = 'CANCELLED', balance_cents = 0 WHERE invoice_id = ?
        RETURNING party_id, total_cents, total_cents - paid_cents
        """)
    private static let cancelForCustomer = ProjectionStatement(
        """
        UPDATE customers SET cancelled_cents = cancelled_cents + ?, balance_cents = balance_cents - ?
        WHERE party_id = ?
        """)

    // MARK: - Aging, as of a date

    /// One customer's open balance as of a date, split by how far past its due date each
    /// invoice is. Buckets are whole days past the due date: `current` is not yet due (due
    /// on the date itself or later), then 1–30, 31–60, 61–90 and more than 90 days.
    public struct CustomerAging: Sendable, Hashable {
        public let partyId: String
        public let name: String
        public let currentCents: Int64
        public let days1To30Cents: Int64
        public let days31To60Cents: Int64
        public let days61To90Cents: Int64
        public let over90DaysCents: Int64
        /// The sum of the buckets: everything the customer owed as of the date.
        public let totalCents: Int64

        public init(
            partyId: String, name: String, currentCents: Int64, days1To30Cents: Int64, days31To60Cents: Int64,
            days61To90Cents: Int64, over90DaysCents: Int64, totalCents: Int64
        ) {
            self.partyId = partyId
            self.name = name
            self.currentCents = currentCents
            self.days1To30Cents = days1To30Cents
            self.days31To60Cents = days31To60Cents
            self.days61To90Cents = days61To90Cents
            self.over90DaysCents = over90DaysCents
            self.totalCents = totalCents
        }
    }

    /// The aging query, with one parameter `:as_of` (`YYYY-MM-DD`), as analysts run it.
    ///
    /// As of a date, an invoice counts when it was issued on or before it and is not
    /// cancelled; what it owed is its total less the payments with `paid_on` on or before
    /// the date. Customers owing nothing as of the date are left out.
    public static let agingSQL = """
        WITH open AS (
            SELECT i.party_id,
                   CAST(julianday(:as_of) - julianday(i.due_date) AS INTEGER) AS days_past_due,
                   i.total_cents - COALESCE(
                       (SELECT SUM(p.amount_cents) FROM receivable_payments p
                        WHERE p.invoice_id = i.invoice_id AND p.paid_on <= :as_of), 0) AS balance_cents
            FROM receivable_invoices i
            WHERE i.status <> 'CANCELLED' AND i.issue_date <= :as_of
        )
        SELECT o.party_id, c.name,
               SUM(CASE WHEN o.days_past_due <= 0 THEN o.balance_cents ELSE 0 END) AS current_cents,
               SUM(CASE WHEN o.days_past_due BETWEEN 1 AND 30 THEN o.balance_cents ELSE 0 END) AS days_1_30_cents,
               SUM(CASE WHEN o.days_past_due BETWEEN 31 AND 60 THEN o.balance_cents ELSE 0 END) AS days_31_60_cents,
               SUM(CASE WHEN o.days_past_due BETWEEN 61 AND 90 THEN o.balance_cents ELSE 0 END) AS days_61_90_cents,
               SUM(CASE WHEN o.days_past_due > 90 THEN o.balance_cents ELSE 0 END) AS over_90_days_cents,
               SUM(o.balance_cents) AS total_cents
        FROM open o JOIN customers c ON c.party_id = o.party_id
        WHERE o.balance_cents > 0
        GROUP BY o.party_id, c.name
        ORDER BY o.party_id
        """

    /// Why the aging query's answer could not be read (a column of an unexpected type).
    struct UnexpectedAgingRow: Error, CustomStringConvertible {
        let row: [ProjectionValue]
        var description: String { "the aging query returned an unexpected row: \(row)" }
    }

    /// Every customer's open balance as of `asOf`, aged by days past due, by party id.
    public static func aging(asOf: LocalDate, in tables: any ProjectionTables) throws -> [CustomerAging] {
        try tables.query(agingSQL, [.text(asOf.description)]).map(CustomerAging.init(agingRow:))
    }
}

extension Receivables.CustomerAging {
    /// A row of `agingSQL`.
    public init(agingRow row: [ProjectionValue]) throws {
        guard row.count == 8, case .text(let partyId) = row[0], case .text(let name) = row[1] else {
            throw Receivables.UnexpectedAgingRow(row: row)
        }
        var cents: [Int64] = []
        for value in row[2...] {
            guard case .integer(let amount) = value else { throw Receivables.UnexpectedAgingRow(row: row) }
            cents.append(amount)
        }
        self.init(
            partyId: partyId, name: name, currentCents: cents[0], days1To30Cents: cents[1],
            days31To60Cents: cents[2], days61To90Cents: cents[3], over90DaysCents: cents[4], totalCents: cents[5])
    }
}
