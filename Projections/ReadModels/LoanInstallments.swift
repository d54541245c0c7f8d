import Events
import StrataCore

/// Each approved loan's amortization schedule, installment by installment, with what has
/// been paid on it: the borrower's repayment card and the collector's "what is due" list.
///
/// One row per installment, keyed by `(loan_id, number)`. The schedule is the one fixed
/// at approval (never recomputed); payments only add to the paid and penalty columns.
///
/// - `LoanApproved` inserts one UNPAID row per schedule entry.
/// - `PaymentReceived` applies its `perInstallment` parts exactly: the penalty accrued on
///   each installment, and the penalty, interest and principal paid to it. An installment
///   is PAID once its principal, interest and accrued penalty are all paid (`paid_on` is
///   that payment's date), PARTIAL once anything is paid on it, UNPAID before. A part for
///   an installment that is missing or already PAID is an inconsistency.
///
/// `LoanPortfolio` reads these rows for each loan's next due date.
public struct LoanInstallments: Projection {
    public init() {}

    /// The values of `loan_installments.status`, as the SQL below writes them.
    public static let statuses = ["UNPAID", "PARTIAL", "PAID"]

    public var name: String { "amortization_schedule" }

    public var categories: [String]? { ["loan"] }

    public var schema: ProjectionSchema {
        ProjectionSchema(
            version: 1,
            statements: [
                """
                CREATE TABLE loan_installments (
                    loan_id                 TEXT NOT NULL,
                    number                  INTEGER NOT NULL,
                    due_date                TEXT NOT NULL,
                    principal_cents         INTEGER NOT NULL,
                    interest_cents          INTEGER NOT NULL,
                    total_cents             INTEGER NOT NULL,
                    remaining_balance_cents INTEGER NOT NULL,
                    principal_paid_cents    INTEGER NOT NULL DEFAULT 0,
                    interest_paid_cents     INTEGER NOT NULL DEFAULT 0,
                    penalty_accrued_cents   INTEGER NOT NULL DEFAULT 0,
                    penalty_paid_cents      INTEGER NOT NULL DEFAULT 0,
                    status                  TEXT NOT NULL,
                    paid_on                 TEXT,
                    PRIMARY KEY (loan_id, number)
                ) WITHOUT ROWID
                """,
                "CREATE INDEX loan_installments_by_due_date ON loan_installments (due_date, status)",
            ])
    }

    public func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {
        switch event.event {
        case .loanApproved(let e):
            for entry in e.schedule {
                // An installment of nothing (a tiny FLAT loan's) is settled from the start.
                let settled = entry.totalCents == 0
                try tables.run(
                    Self.insert,
                    [
                        .text(e.loanId), .int(entry.number), .text(entry.dueDate.description),
                        .integer(entry.principalCents), .integer(entry.interestCents), .integer(entry.totalCents),
                        .integer(entry.remainingBalanceCents), .text(settled ? "PAID" : "UNPAID"),
                        .text(settled ? e.approvedOn.description : nil),
                    ])
            }
        case .paymentReceived(let e):
            for part in e.perInstallment {
                try tables.update(
                    Self.pay,
                    [
                        .integer(part.penaltyAccruedCents), .integer(part.penaltyCents), .integer(part.interestCents),
                        .integer(part.principalCents), .text(e.paidOn.description), .text(e.loanId),
                        .int(part.number),
                    ],
                    else: "PaymentReceived \(e.paymentId) touches installment \(part.number) of loan \(e.loanId), "
                        + "which has no loan_installments row still owing")
            }
        default:
            break
        }
    }

    private static let insert = ProjectionStatement(
        """
        INSERT INTO loan_installments (loan_id, number, due_date, principal_cents, interest_cents,
          total_cents, remaining_balance_cents, status, paid_on)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        """)

    /// What is owed on the installment once ?1 penalty accrued and ?2 penalty, ?3 interest
    /// and ?4 principal are paid (SET expressions read the row as it was).
    private static let owedAfter = """
        principal_cents - (principal_paid_cents + ?4) + interest_cents - (interest_paid_cents + ?3)
          + (penalty_accrued_cents + ?1) - (penalty_paid_cents + ?2)
        """
    /// What has been paid on it then.
    private static let paidAfter = "principal_paid_cents + ?4 + interest_paid_cents + ?3 + penalty_paid_cents + ?2"

    /// One part of a payment: the amounts, then the status they leave (PAID once nothing
    /// is owed, with the payment's date ?5; PARTIAL once anything is paid; UNPAID before).
    private static let pay = ProjectionStatement(
        """
        UPDATE loan_installments SET penalty_accrued_cents = penalty_accrued_cents + ?1,
          penalty_paid_cents = penalty_paid_cents + ?2, interest_paid_cents = interest_paid_cents + ?3,
          principal_paid_cents = principal_paid_cents + ?4,
          status = CASE WHEN \(owedAfter) <= 0 THEN 'PAID' WHEN \(paidAfter) > 0 THEN 'PARTIAL' ELSE 'UNPAID' END,
          paid_on = CASE WHEN \(owedAfter) <= 0 THEN ?5 END
        WHERE loan_id = ?6 AND number = ?7 AND status <> 'PAID'
        """)
}
