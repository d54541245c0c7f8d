import Events
import StrataCore

/// The loan portfolio: one row per loan with where it stands and what has been paid.
///
/// Admins and agents list loans by status, agent or account; analysts sum principal,
/// collections and outstanding. "Days overdue" depends on the day it is asked, so it is
/// not stored: it is the asking date minus `next_due_date` (see `OverdueAging`).
///
/// - `LoanRequested` inserts the loan, PENDING_APPROVAL, every amount 0.
/// - `LoanApproved` makes it ACTIVE with the schedule's installments and total due;
///   `outstanding_cents` starts at that total and `next_due_date` at the first due date.
/// - `LoanRejected` makes it REJECTED.
/// - `PaymentReceived` adds the payment to the paid totals (and the penalty it accrued),
///   takes `outstanding_cents` from the event's `outstandingAfterCents`, and moves
///   `next_due_date` to the oldest installment still owing something.
/// - `LoanClosed` makes it CLOSED; nothing is due any more.
///
/// To know which installment is the oldest still owing, the projection keeps each
/// approved loan's unsettled installments in `loan_open_installments` (what is owed on
/// each, penalty included); a settled installment's row is deleted. Installments settle
/// oldest first (a payment covers an installment fully before the next), so the oldest
/// row left is the next one due.
public struct LoanPortfolio: Projection {
    public init() {}

    public var name: String { "loan_portfolio" }

    public var categories: [String]? { ["loan"] }

    public var schema: ProjectionSchema {
        ProjectionSchema(
            version: 1,
            statements: [
                """
                CREATE TABLE loans (
                    loan_id               TEXT PRIMARY KEY,
                    account_id            TEXT NOT NULL,
                    agent_id              TEXT NOT NULL,
                    status                TEXT NOT NULL,
                    principal_cents       INTEGER NOT NULL,
                    monthly_rate_bp       INTEGER NOT NULL,
                    tenure_months         INTEGER NOT NULL,
                    frequency             TEXT NOT NULL,
                    interest_method       TEXT NOT NULL,
                    requested_on          TEXT NOT NULL,
                    requested_by          TEXT NOT NULL,
                    requested_at          TEXT NOT NULL,
                    approved_on           TEXT,
                    approved_by           TEXT,
                    rejected_by           TEXT,
                    rejected_reason       TEXT,
                    closed_on             TEXT,
                    installments          INTEGER NOT NULL DEFAULT 0,
                    total_due_cents       INTEGER NOT NULL DEFAULT 0,
                    total_paid_cents      INTEGER NOT NULL DEFAULT 0,
                    principal_paid_cents  INTEGER NOT NULL DEFAULT 0,
                    interest_paid_cents   INTEGER NOT NULL DEFAULT 0,
                    penalty_paid_cents    INTEGER NOT NULL DEFAULT 0,
                    penalty_accrued_cents INTEGER NOT NULL DEFAULT 0,
                    outstanding_cents     INTEGER NOT NULL DEFAULT 0,
                    next_due_date         TEXT,
                    payments_count        INTEGER NOT NULL DEFAULT 0,
                    last_paid_on          TEXT
                )
                """,
                "CREATE INDEX loans_by_status ON loans (status, next_due_date)",
                "CREATE INDEX loans_by_agent ON loans (agent_id, status)",
                "CREATE INDEX loans_by_account ON loans (account_id)",
                """
                CREATE TABLE loan_open_installments (
                    loan_id    TEXT NOT NULL,
                    number     INTEGER NOT NULL,
                    due_date   TEXT NOT NULL,
                    owed_cents INTEGER NOT NULL,
                    PRIMARY KEY (loan_id, number)
                ) WITHOUT ROWID
                """,
            ])
    }

    public func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {
        switch event.event {
        case .loanRequested(let e):
            try tables.run(
                Self.insert,
                [
                    .text(e.loanId), .text(e.accountId), .text(e.agentId), .integer(e.principalCents),
                    .int(e.monthlyRateBp), .int(e.tenureMonths), .text(e.frequency.rawValue),
                    .text(e.interestMethod.rawValue), .text(e.requestedOn.description), .text(e.requestedBy),
                    .text(event.recordedAt.description),
                ])
        case .loanApproved(let e):
            for entry in e.schedule {
                try tables.run(
                    Self.insertOpen,
                    [.text(e.loanId), .int(entry.number), .text(entry.dueDate.description), .integer(entry.totalCents)])
            }
            try tables.run(Self.deleteSettled, [.text(e.loanId)])
            let totalDue = e.schedule.reduce(Int64(0)) { $0 + $1.totalCents }
            try tables.update(
                Self.approve,
                [
                    .text(e.approvedOn.description), .text(e.approvedBy), .int(e.schedule.count), .integer(totalDue),
                    .integer(totalDue), .text(e.loanId),
                ],
                else: "LoanApproved for loan \(e.loanId), which has no loans row")
        case .loanRejected(let e):
            try tables.update(
                Self.reject, [.text(e.rejectedBy), .text(e.reason), .text(e.loanId)],
                else: "LoanRejected for loan \(e.loanId), which has no loans row")
        case .paymentReceived(let e):
            var accrued: Int64 = 0
            for part in e.perInstallment {
                accrued += part.penaltyAccruedCents
                try tables.update(
                    Self.payOpen,
                    [
                        .integer(part.penaltyAccruedCents),
                        .integer(part.penaltyCents + part.interestCents + part.principalCents), .text(e.loanId),
                        .int(part.number),
                    ],
                    else: "PaymentReceived \(e.paymentId) touches installment \(part.number) of loan \(e.loanId), "
                        + "which is not an unsettled installment of an approved loan")
            }
            try tables.run(Self.deleteSettled, [.text(e.loanId)])
            try tables.update(
                Self.pay,
                [
                    .integer(e.amountCents), .integer(e.allocation.principalCents),
                    .integer(e.allocation.interestCents), .integer(e.allocation.penaltyCents), .integer(accrued),
                    .integer(e.outstandingAfterCents), .text(e.paidOn.description), .text(e.loanId),
                ],
                else: "PaymentReceived \(e.paymentId) for loan \(e.loanId), which has no loans row")
        case .loanClosed(let e):
            try tables.update(
                Self.close, [.text(e.closedOn.description), .text(e.loanId)],
                else: "LoanClosed for loan \(e.loanId), which has no loans row")
            try tables.run(Self.deleteOpen, [.text(e.loanId)])
        default:
            break
        }
    }

    /// The due date of the loan's oldest installment still owing, inside an `UPDATE loans`.
    private static let nextDueDate =
        "SELECT due_date FROM loan_open_installments WHERE loan_id = loans.loan_id ORDER BY number LIMIT 1"

    private static let insert = ProjectionStatement(
        """
        INSERT INTO loans (loan_id, account_id, agent_id, status, principal_cents, monthly_rate_bp,
          tenure_months, frequency, interest_method, requested_on, requested_by, requested_at)
        VALUES (?, ?, ?, 'PENDING_APPROVAL', ?, ?, ?, ?, ?, ?, ?, ?)
        """)
    private static let insertOpen = ProjectionStatement(
        "INSERT INTO loan_open_installments (loan_id, number, due_date, owed_cents) VALUES (?, ?, ?, ?)")
    /// Forgets the installments of a loan that owe nothing any more.
    private static let deleteSettled = ProjectionStatement(
        "DELETE FROM loan_open_installments WHERE loan_id = ? AND owed_cents <= 0")
    private static let approve = ProjectionStatement(
        """
        UPDATE loans SET status = 'ACTIVE', approved_on = ?, approved_by = ?, installments = ?,
          total_due_cents = ?, outstanding_cents = ?, next_due_date = (\(nextDueDate))
        WHERE loan_id = ?
        """)
    private static let reject = ProjectionStatement(
        "UPDATE loans SET status = 'REJECTED', rejected_by = ?, rejected_reason = ? WHERE loan_id = ?")
    private static let payOpen = ProjectionStatement(
        "UPDATE loan_open_installments SET owed_cents = owed_cents + ? - ? WHERE loan_id = ? AND number = ?")
    private static let pay = ProjectionStatement(
        """
        UPDATE loans SET total_paid_cents = total_paid_cents + ?,
          principal_paid_cents = principal_paid_cents + ?, interest_paid_cents = interest_paid_cents + ?,
          penalty_paid_cents = penalty_paid_cents + ?,
          penalty_accrued_cents = penalty_accrued_cents + ?, outstanding_cents = ?,
          payments_count = payments_count + 1, last_paid_on = ?,
          next_due_date = (\(nextDueDate))
        WHERE loan_id = ?
        """)
    private static let close = ProjectionStatement(
        "UPDATE loans SET status = 'CLOSED', closed_on = ?, next_due_date = NULL WHERE loan_id = ?")
    private static let deleteOpen = ProjectionStatement("DELETE FROM loan_open_installments WHERE loan_id = ?")
}
