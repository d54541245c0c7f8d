import Events
import StrataCore

/// Every payment received on a loan, in the order received, and what it did to each
/// installment: the loan's payment history and the daily collections report.
///
/// - `PaymentReceived` inserts one `loan_payments` row with the payment's allocation in
///   total, and one `loan_payment_installments` row per installment it touched: the
///   penalty it accrued there and the penalty, interest and principal it paid there.
///
/// A payment id is unique on its loan (the loan refuses a DUPLICATE_PAYMENT), not across
/// loans, so both tables are keyed by `loan_id` first.
public struct LoanPayments: Projection {
    public init() {}

    public var name: String { "loan_payments" }

    public var categories: [String]? { ["loan"] }

    public var schema: ProjectionSchema {
        ProjectionSchema(
            version: 1,
            statements: [
                """
                CREATE TABLE loan_payments (
                    loan_id                 TEXT NOT NULL,
                    payment_id              TEXT NOT NULL,
                    position                INTEGER NOT NULL,
                    paid_on                 TEXT NOT NULL,
                    amount_cents            INTEGER NOT NULL,
                    method                  TEXT NOT NULL,
                    type                    TEXT NOT NULL,
                    penalty_cents           INTEGER NOT NULL,
                    interest_cents          INTEGER NOT NULL,
                    principal_cents         INTEGER NOT NULL,
                    outstanding_after_cents INTEGER NOT NULL,
                    received_by             TEXT NOT NULL,
                    external_ref            TEXT,
                    notes                   TEXT,
                    recorded_at             TEXT NOT NULL,
                    PRIMARY KEY (loan_id, payment_id)
                )
                """,
                "CREATE INDEX loan_payments_by_loan ON loan_payments (loan_id, position)",
                "CREATE INDEX loan_payments_by_paid_on ON loan_payments (paid_on)",
                """
                CREATE TABLE loan_payment_installments (
                    loan_id               TEXT NOT NULL,
                    payment_id            TEXT NOT NULL,
                    number                INTEGER NOT NULL,
                    penalty_accrued_cents INTEGER NOT NULL,
                    penalty_cents         INTEGER NOT NULL,
                    interest_cents        INTEGER NOT NULL,
                    principal_cents       INTEGER NOT NULL,
                    PRIMARY KEY (loan_id, payment_id, number)
                ) WITHOUT ROWID
                """,
            ])
    }

    public func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {
        guard case .paymentReceived(let e) = event.event else { return }
        try tables.run(
            Self.insert,
            [
                .text(e.loanId), .text(e.paymentId), .integer(event.position), .text(e.paidOn.description),
                .integer(e.amountCents), .text(e.method.rawValue), .text(e.type.rawValue),
                .integer(e.allocation.penaltyCents), .integer(e.allocation.interestCents),
                .integer(e.allocation.principalCents), .integer(e.outstandingAfterCents), .text(e.receivedBy),
                .text(e.externalRef), .text(e.notes), .text(event.recordedAt.description),
            ])
        for part in e.perInstallment {
            try tables.run(
                Self.insertPart,
                [
                    .text(e.loanId), .text(e.paymentId), .int(part.number), .integer(part.penaltyAccruedCents),
                    .integer(part.penaltyCents), .integer(part.interestCents), .integer(part.principalCents),
                ])
        }
    }

    private static let insert = ProjectionStatement(
        """
        INSERT INTO loan_payments (loan_id, payment_id, position, paid_on, amount_cents, method, type,
          penalty_cents, interest_cents, principal_cents, outstanding_after_cents, received_by, external_ref,
          notes, recorded_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """)
    private static let insertPart = ProjectionStatement(
        """
        INSERT INTO loan_payment_installments (loan_id, payment_id, number, penalty_accrued_cents,
          penalty_cents, interest_cents, principal_cents)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """)
}
