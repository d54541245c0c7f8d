import ProjectorRuntime
import Projections
import StrataCore

/// The admin dashboard as `strata demo` prints it: the headline figures, the overdue book
/// by aging bucket, receivables by customer, and the last week's collections, all read
/// from one snapshot of readmodels.db ("as of" figures computed for `today`).
///
/// Its queries (`headline(in:)`, `collections(from:through:in:)`) also feed `strata report`,
/// so the terminal and the HTML report never disagree on a figure.
enum Dashboard {
    /// The `dashboard` view's one row.
    struct Headline: Equatable {
        var approvedAgents: Int64
        var pendingAgents: Int64
        var activeAccounts: Int64
        var loansReleased: Int64
        var principalReleasedCents: Int64
        var activeLoans: Int64
        var collectibleCents: Int64
        var collectedCents: Int64
        var pendingApprovals: Int64
    }

    /// One row of `collections_daily`.
    struct CollectionsDay: Equatable {
        var day: String
        var loanPayments: Int64
        var loanCollectedCents: Int64
        var invoicePayments: Int64
        var invoiceCollectedCents: Int64
        var totalCollectedCents: Int64
    }

    /// A query answer that does not have the read model's shape (an older or foreign file).
    struct UnexpectedRow: Error, CustomStringConvertible {
        let description: String
    }

    static func headline(in snapshot: ProjectionSnapshot) throws -> Headline {
        let rows = try snapshot.table(
            """
            SELECT approved_agents, pending_agents, active_accounts, loans_released, principal_released_cents,
                   active_loans, collectible_cents, collected_cents, pending_approvals
            FROM dashboard
            """
        ).rows
        guard let row = rows.first, row.count == 9 else {
            throw UnexpectedRow(description: "the dashboard view returned \(rows)")
        }
        let n = row.map(\.integerOrZero)
        return Headline(
            approvedAgents: n[0], pendingAgents: n[1], activeAccounts: n[2], loansReleased: n[3],
            principalReleasedCents: n[4], activeLoans: n[5], collectibleCents: n[6], collectedCents: n[7],
            pendingApprovals: n[8])
    }

    /// The days with money collected from `first` through `last`, in order.
    static func collections(from first: LocalDate, through last: LocalDate, in snapshot: ProjectionSnapshot) throws
        -> [CollectionsDay]
    {
        try snapshot.table(
            """
            SELECT day, loan_payments_count, loan_collected_cents, invoice_payments_count, invoice_collected_cents,
                   total_collected_cents
            FROM collections_daily WHERE day >= ? AND day <= ? ORDER BY day
            """, [.text(first.description), .text(last.description)]
        ).rows.map { row in
            guard row.count == 6, case .text(let day) = row[0] else {
                throw UnexpectedRow(description: "collections_daily returned \(row)")
            }
            let n = row.dropFirst().map(\.integerOrZero)
            return CollectionsDay(
                day: day, loanPayments: n[0], loanCollectedCents: n[1], invoicePayments: n[2],
                invoiceCollectedCents: n[3], totalCollectedCents: n[4])
        }
    }

    static func print(_ snapshot: ProjectionSnapshot, today: LocalDate) throws {
        printLine("DASHBOARD as of \(today), read models at position \(snapshot.checkpoint)")
        let figures = try headline(in: snapshot)
        printColumns([
            ["agents", "\(figures.approvedAgents) approved, \(figures.pendingAgents) waiting"],
            ["active accounts", String(figures.activeAccounts)],
            ["loans released", "\(figures.loansReleased) for \(MoneyText.of(figures.principalReleasedCents))"],
            ["active loans", "\(figures.activeLoans), \(MoneyText.of(figures.collectibleCents)) still to collect"],
            ["collected", MoneyText.of(figures.collectedCents)],
            ["pending approvals", String(figures.pendingApprovals)],
        ])

        printLine("")
        printLine("Overdue loans by days past due")
        let overdue = try OverdueAging.summary(asOf: today, in: snapshot)
        printColumns(
            [["bucket", "loans", "overdue"]]
                + overdue.map { [$0.bucket.rawValue, String($0.loans), MoneyText.of($0.overdueCents)] },
            rightAligned: [1, 2])

        printLine("")
        printLine("Receivables by customer")
        let aging = try Receivables.aging(asOf: today, in: snapshot)
        printColumns(
            [["customer", "not due", "1-30", "31-60", "61-90", "90+", "total"]]
                + aging.map {
                    [
                        $0.partyId, MoneyText.of($0.currentCents), MoneyText.of($0.days1To30Cents),
                        MoneyText.of($0.days31To60Cents), MoneyText.of($0.days61To90Cents),
                        MoneyText.of($0.over90DaysCents), MoneyText.of($0.totalCents),
                    ]
                }, rightAligned: [1, 2, 3, 4, 5, 6])

        printLine("")
        printLine("Collections, the last 7 days")
        let days = try collections(from: today.adding(days: -6), through: today, in: snapshot)
        printColumns(
            [["day", "loan payments", "loans", "invoice payments", "invoices", "total"]]
                + days.map {
                    [
                        $0.day, String($0.loanPayments), MoneyText.of($0.loanCollectedCents),
                        String($0.invoicePayments), MoneyText.of($0.invoiceCollectedCents),
                        MoneyText.of($0.totalCollectedCents),
                    ]
                }, rightAligned: [1, 2, 3, 4, 5])
    }

    private static func printColumns(_ rows: [[String]], rightAligned: Set<Int> = []) {
        printAligned(rows, rightAligned: rightAligned, indent: "  ")
    }
}
