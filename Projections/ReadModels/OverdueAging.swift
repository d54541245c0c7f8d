import Events
import StrataCore

/// Overdue loans with aging buckets, as of a date the reader chooses.
///
/// Nothing is stored for it: how late a loan is depends on the day it is asked, and read
/// models never read the clock. It is a query over `loans` (`LoanPortfolio`) and
/// `loan_installments` (`LoanInstallments`), so it is a plain enum, not a projection.
///
/// A loan is overdue as of a date when it is ACTIVE and its oldest installment not fully
/// paid fell due before that date. Then:
/// - days overdue = the date − that installment's due date (at least 1);
/// - overdue amount = what is unpaid (principal, interest, accrued penalty) on the
///   installments that fell due before the date. An installment due on the date itself is
///   due, not late: like the penalty rule, lateness starts the day after the due date.
///   Penalty is accrued when a payment is received, so penalty running since the last
///   payment is not in it yet.
/// - bucket by days overdue: 1-30, 31-60, 61-90, 90+.
///
/// The installments are read as they stand now: a payment recorded after the date counts.
public enum OverdueAging {
    /// Days-overdue ranges, oldest debt last.
    public enum Bucket: String, Sendable, Hashable, CaseIterable {
        case days1to30 = "1-30"
        case days31to60 = "31-60"
        case days61to90 = "61-90"
        case over90 = "90+"
    }

    /// A row of the queries that does not have the expected shape (the tables are not the
    /// ones `LoanPortfolio` and `LoanInstallments` create).
    public struct UnexpectedRow: Error, CustomStringConvertible {
        public let description: String
    }

    /// One overdue loan.
    public struct Loan: Sendable, Hashable {
        public var loanId: String
        public var accountId: String
        public var agentId: String
        /// The due date of the oldest installment not fully paid.
        public var oldestDueDate: LocalDate
        public var daysOverdue: Int
        /// Unpaid principal, interest and accrued penalty of the installments due before the date.
        public var overdueCents: Int64
        /// Everything still owed on the loan (`loans.outstanding_cents`).
        public var outstandingCents: Int64
        public var bucket: Bucket

        public init(
            loanId: String, accountId: String, agentId: String, oldestDueDate: LocalDate, daysOverdue: Int,
            overdueCents: Int64, outstandingCents: Int64, bucket: Bucket
        ) {
            self.loanId = loanId
            self.accountId = accountId
            self.agentId = agentId
            self.oldestDueDate = oldestDueDate
            self.daysOverdue = daysOverdue
            self.overdueCents = overdueCents
            self.outstandingCents = outstandingCents
            self.bucket = bucket
        }
    }

    /// One bucket's totals.
    public struct BucketTotal: Sendable, Hashable {
        public var bucket: Bucket
        public var loans: Int
        public var overdueCents: Int64

        public init(bucket: Bucket, loans: Int, overdueCents: Int64) {
            self.bucket = bucket
            self.loans = loans
            self.overdueCents = overdueCents
        }
    }

    /// The overdue loans as of `:as_of` (a `YYYY-MM-DD` text), most overdue first.
    /// `loans.next_due_date` is the oldest unpaid installment's due date, so the
    /// `loans_by_status` index finds the overdue loans without reading the others.
    public static let sql = """
        WITH overdue AS (
          SELECT l.loan_id, l.account_id, l.agent_id, l.next_due_date AS oldest_due_date,
                 CAST(julianday(:as_of) - julianday(l.next_due_date) AS INTEGER) AS days_overdue,
                 sum(i.principal_cents - i.principal_paid_cents + i.interest_cents - i.interest_paid_cents
                     + i.penalty_accrued_cents - i.penalty_paid_cents) AS overdue_cents,
                 l.outstanding_cents
          FROM loans l JOIN loan_installments i ON i.loan_id = l.loan_id
          WHERE l.status = 'ACTIVE' AND l.next_due_date < :as_of
            AND i.status <> 'PAID' AND i.due_date < :as_of
          GROUP BY l.loan_id
        )
        SELECT loan_id, account_id, agent_id, oldest_due_date, days_overdue, overdue_cents, outstanding_cents,
               CASE WHEN days_overdue <= 30 THEN '1-30' WHEN days_overdue <= 60 THEN '31-60'
                    WHEN days_overdue <= 90 THEN '61-90' ELSE '90+' END AS bucket
        FROM overdue
        ORDER BY days_overdue DESC, loan_id
        """

    /// Loans and overdue cents per bucket as of `:as_of`: always four rows, in bucket order.
    public static let summarySQL = """
        WITH overdue AS (
          SELECT l.loan_id,
                 CAST(julianday(:as_of) - julianday(l.next_due_date) AS INTEGER) AS days_overdue,
                 sum(i.principal_cents - i.principal_paid_cents + i.interest_cents - i.interest_paid_cents
                     + i.penalty_accrued_cents - i.penalty_paid_cents) AS overdue_cents
          FROM loans l JOIN loan_installments i ON i.loan_id = l.loan_id
          WHERE l.status = 'ACTIVE' AND l.next_due_date < :as_of
            AND i.status <> 'PAID' AND i.due_date < :as_of
          GROUP BY l.loan_id
        ),
        buckets (bucket, low, high) AS (
          VALUES ('1-30', 1, 30), ('31-60', 31, 60), ('61-90', 61, 90), ('90+', 91, NULL)
        )
        SELECT b.bucket, count(o.loan_id) AS loans, coalesce(sum(o.overdue_cents), 0) AS overdue_cents
        FROM buckets b
        LEFT JOIN overdue o ON o.days_overdue >= b.low AND (b.high IS NULL OR o.days_overdue <= b.high)
        GROUP BY b.bucket
        ORDER BY b.low
        """

    /// The overdue loans as of `asOf`, most overdue first (then by loan id).
    public static func rows(asOf: LocalDate, in tables: any ProjectionTables) throws -> [Loan] {
        try tables.query(sql, [.text(asOf.description)]).map(Loan.init(row:))
    }

    /// How many loans, and how much overdue, in each bucket as of `asOf`: one entry per bucket.
    public static func summary(asOf: LocalDate, in tables: any ProjectionTables) throws -> [BucketTotal] {
        try tables.query(summarySQL, [.text(asOf.description)]).map { row in
            guard row.count == 3, let bucket = row[0].textOrNil.flatMap(Bucket.init(rawValue:)) else {
                throw UnexpectedRow(description: "the overdue aging summary returned \(row)")
            }
            return BucketTotal(bucket: bucket, loans: Int(row[1].integerOrZero), overdueCents: row[2].integerOrZero)
        }
    }
}

extension OverdueAging.Loan {
    /// A row of `OverdueAging.sql`.
    public init(row: [ProjectionValue]) throws {
        guard row.count == 8, let loanId = row[0].textOrNil, let accountId = row[1].textOrNil,
            let agentId = row[2].textOrNil, let due = row[3].textOrNil.flatMap(LocalDate.init),
            let bucket = row[7].textOrNil.flatMap(OverdueAging.Bucket.init(rawValue:))
        else { throw OverdueAging.UnexpectedRow(description: "the overdue aging query returned \(row)") }
        self.init(
            loanId: loanId, accountId: accountId, agentId: agentId, oldestDueDate: due,
            daysOverdue: Int(row[4].integerOrZero), overdueCents: row[5].integerOrZero,
            outstandingCents: row[6].integerOrZero, bucket: bucket)
    }
}
