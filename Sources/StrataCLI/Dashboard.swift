import ProjectorRuntime
import Projections
import StrataCore

/// The admin dashboard as `strata demo` prints it: the headline figures, the overdue book
/// by aging bucket, receivables by customer, and the last week's collections, all read
/// from one snapshot of readmodels.db ("as of" figures computed for `today`).
enum Dashboard {
    static func print(_ snapshot: ProjectionSnapshot, today: LocalDate) throws {
        printLine("DASHBOARD as of \(today), read models at position \(snapshot.checkpoint)")
        let headline = try snapshot.table("SELECT * FROM dashboard")
        if let row = headline.rows.first {
            let figures = Dictionary(uniqueKeysWithValues: zip(headline.columns, row))
            func count(_ name: String) -> String { figures[name].map(text) ?? "?" }
            func money(_ name: String) -> String {
                if case .integer(let cents)? = figures[name] { return MoneyText.of(cents) }
                return "?"
            }
            printColumns([
                ["agents", "\(count("approved_agents")) approved, \(count("pending_agents")) waiting"],
                ["active accounts", count("active_accounts")],
                ["loans released", "\(count("loans_released")) for \(money("principal_released_cents"))"],
                ["active loans", "\(count("active_loans")), \(money("collectible_cents")) still to collect"],
                ["collected", money("collected_cents")],
                ["pending approvals", count("pending_approvals")],
            ])
        }

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
        let since = today.adding(days: -6).description
        let collections = try snapshot.table(
            """
            SELECT day, loan_payments_count, loan_collected_cents, invoice_payments_count, invoice_collected_cents,
                   total_collected_cents
            FROM collections_daily WHERE day >= ? AND day <= ? ORDER BY day
            """, [.text(since), .text(today.description)])
        printColumns(
            [["day", "loan payments", "loans", "invoice payments", "invoices", "total"]]
                + collections.rows.map { row in
                    row.enumerated().map { index, value in
                        if index >= 2, index != 3, case .integer(let cents) = value { return MoneyText.of(cents) }
                        return text(value)
                    }
                }, rightAligned: [1, 2, 3, 4, 5])
    }

    private static func text(_ value: ProjectionValue) -> String {
        switch value {
        case .null: ""
        case .integer(let number): String(number)
        case .text(let text): text
        }
    }

    private static func printColumns(_ rows: [[String]], rightAligned: Set<Int> = []) {
        printAligned(rows, rightAligned: rightAligned, indent: "  ")
    }
}
