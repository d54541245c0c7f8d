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
/// The oldest installment still owing is read from `loan_installments`, which
/// `LoanInstallments` keeps and `ReadModels.all` applies first, so that for every event the
/// installments are up to date when the loan's row is. (This projection used to keep its own
/// copy of each schedule for the purpose: a third of all the rows of `readmodels.db`.)
public struct LoanPortfolio: Projection {
    public init() {}

    /// The values of `loans.status`, as the SQL below writes them.
    public static let statuses = ["PENDING_APPROVAL", "ACTIVE", "REJECTED", "CLOSED"]

    /// This projection with the one it reads, in the order they must be applied.
    public static let withInstallments: [any Projection] = [LoanInstallments(), LoanPortfolio()]

    public var name: String { "loan_portfolio" }

    public var categories: [String]? { ["loan"] }

    public var schema: ProjectionSchema {
        ProjectionSchema(
            version: 2,
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
            let accrued = e.perInstallment.reduce(Int64(0)) { $0 + $1.penaltyAccruedCents }
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
        default:
            break
        }
    }

    /// The due date of the loan's oldest installment still owing, inside an `UPDATE loans`.
    private static let nextDueDate = """
        SELECT due_date FROM loan_installments WHERE loan_id = loans.loan_id AND status <> 'PAID'
        ORDER BY number LIMIT 1
        """

    private static let insert = ProjectionStatement(
        """
        INSERT INTO loans (loan_id, account_id, agent_id, status, principal_cents, monthly_rate_bp,
          tenure_months, frequency, interest_method, requested_on, requested_by, requested_at)
        VALUES (?, ?, ?, 'PENDING_APPROVAL', ?, ?, ?, ?, ?, ?, ?, ?)
        """)
    private static let approve = ProjectionStatement(
        """
        UPDATE loans SET status = 'ACTIVE', approved_on = ?, approved_by = ?, installments = ?,
          total_due_cents = ?, outstanding_cents = ?, next_due_date = (\(nextDueDate))
        WHERE loan_id = ?
        """)
    private static let reject = ProjectionStatement(
        "UPDATE loans SET status = 'REJECTED', rejected_by = ?, rejected_reason = ? WHERE loan_id = ?")
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
}
