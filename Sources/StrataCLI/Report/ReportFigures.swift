import Projections
import ProjectorRuntime
import StrataCore

/// Everything `strata report` shows, read from one snapshot of readmodels.db, so every
/// figure is of the same position. Figures that depend on the day (overdue aging,
/// receivables aging, the collections window) are computed for `asOf`.
struct ReportFigures {
    /// Loans of one status.
    struct StatusLine: Equatable {
        var status: String
        var loans: Int64
        var principalCents: Int64
        var paidCents: Int64
        var outstandingCents: Int64
    }

    /// Overdue loans of one aging bucket.
    struct BucketLine: Equatable {
        var bucket: OverdueAging.Bucket
        var loans: Int
        var overdueCents: Int64
        var outstandingCents: Int64
    }

    /// One agent's row of `agent_earnings`, with the username it registered with.
    struct AgentLine: Equatable {
        var agentId: String
        var username: String?
        var loansRequested: Int64
        var loansReleased: Int64
        var principalReleasedCents: Int64
        var collectedCents: Int64
        var payments: Int64
        var earnedCents: Int64
        var collectibleCents: Int64
    }

    /// What customers owed in all, by days past due.
    struct ReceivablesTotal: Equatable {
        var customers = 0
        var currentCents: Int64 = 0
        var days1To30Cents: Int64 = 0
        var days31To60Cents: Int64 = 0
        var days61To90Cents: Int64 = 0
        var over90DaysCents: Int64 = 0
        var totalCents: Int64 = 0

        mutating func add(_ customer: Receivables.CustomerAging) {
            customers += 1
            currentCents += customer.currentCents
            days1To30Cents += customer.days1To30Cents
            days31To60Cents += customer.days31To60Cents
            days61To90Cents += customer.days61To90Cents
            over90DaysCents += customer.over90DaysCents
            totalCents += customer.totalCents
        }
    }

    /// The longest stretch of days the collections chart covers, ending on `asOf`.
    static let collectionsDays = 60
    /// The most overdue loans listed one by one, and the customers owing most: a book of a
    /// million loans or customers is summed whole, but only these are read into memory and
    /// onto the page (`strata query overdue` and `receivables` list them all).
    static let overdueLoansListed = 20
    static let customersListed = 20

    /// The loan statuses in the order a loan goes through them; any other status the
    /// file holds follows them.
    static let loanStatuses = ["PENDING_APPROVAL", "ACTIVE", "CLOSED", "REJECTED"]

    var position: Int64
    /// Why the projector stopped, when it did: the figures are then of the event before.
    var stop: ProjectionStop?
    /// How the read models differ from the store beside them, when they are no view of it (ahead
    /// of its head, or another store's): the figures are then not that store's history.
    var notTheStores: String?
    var asOf: LocalDate
    var headline: Dashboard.Headline
    var portfolio: [StatusLine]
    /// The first day of the collections window (`asOf` − 59 days).
    var collectionsFrom: LocalDate
    var collections: [Dashboard.CollectionsDay]
    var overdue: [BucketLine]
    /// The `overdueLoansListed` most overdue, most overdue first.
    var mostOverdue: [OverdueAging.Loan]
    /// Best collectors first.
    var agents: [AgentLine]
    /// The `customersListed` customers owing most, most first (then by party id).
    var owingMost: [Receivables.CustomerAging]
    var receivablesTotal: ReceivablesTotal

    static func read(_ snapshot: ProjectionSnapshot, asOf: LocalDate) throws -> ReportFigures {
        let from = asOf.adding(days: -(collectionsDays - 1))
        let day: [String: ProjectionValue] = ["as_of": .text(asOf.description)]
        var mostOverdue: [OverdueAging.Loan] = []
        var outstanding: [OverdueAging.Bucket: Int64] = [:]
        try snapshot.forEachRow(OverdueAging.sql, named: day, columns: { _ in }) { row in
            let loan = try OverdueAging.Loan(row: row)
            outstanding[loan.bucket, default: 0] += loan.outstandingCents
            if mostOverdue.count < overdueLoansListed { mostOverdue.append(loan) }
            return true
        }
        let overdue = try OverdueAging.summary(asOf: asOf, in: snapshot).map { total in
            BucketLine(
                bucket: total.bucket, loans: total.loans, overdueCents: total.overdueCents,
                outstandingCents: outstanding[total.bucket] ?? 0)
        }
        var owingMost = TopRows<Receivables.CustomerAging>(count: customersListed) {
            ($0.totalCents, $1.partyId) > ($1.totalCents, $0.partyId)
        }
        var receivablesTotal = ReceivablesTotal()
        try snapshot.forEachRow(Receivables.agingSQL, named: day, columns: { _ in }) { row in
            let customer = try Receivables.CustomerAging(agingRow: row)
            receivablesTotal.add(customer)
            owingMost.offer(customer)
            return true
        }
        return ReportFigures(
            position: snapshot.checkpoint, stop: snapshot.stop, asOf: asOf,
            headline: try Dashboard.headline(in: snapshot), portfolio: try portfolio(snapshot),
            collectionsFrom: from, collections: try Dashboard.collections(from: from, through: asOf, in: snapshot),
            overdue: overdue, mostOverdue: mostOverdue, agents: try agents(snapshot), owingMost: owingMost.rows,
            receivablesTotal: receivablesTotal)
    }

    /// Every status of `loanStatuses`, with zeros when no loan has it.
    private static func portfolio(_ snapshot: ProjectionSnapshot) throws -> [StatusLine] {
        let rows = try snapshot.table(
            """
            SELECT status, count(*), sum(principal_cents), sum(total_paid_cents), sum(outstanding_cents)
            FROM loans GROUP BY status ORDER BY status
            """
        ).rows
        let found = try rows.map { row in
            guard row.count == 5, case .text(let status) = row[0] else {
                throw Dashboard.UnexpectedRow(description: "the portfolio query returned \(row)")
            }
            return StatusLine(
                status: status, loans: row[1].integerOrZero, principalCents: row[2].integerOrZero,
                paidCents: row[3].integerOrZero,
                outstandingCents: row[4].integerOrZero)
        }
        let known = loanStatuses.map { status in
            found.first { $0.status == status }
                ?? StatusLine(status: status, loans: 0, principalCents: 0, paidCents: 0, outstandingCents: 0)
        }
        return known + found.filter { !loanStatuses.contains($0.status) }
    }

    private static func agents(_ snapshot: ProjectionSnapshot) throws -> [AgentLine] {
        try snapshot.table(
            """
            SELECT a.agent_id, u.username, a.loans_count, a.loans_released, a.loans_released_cents,
                   a.collected_cents, a.payments_count, a.earned_cents, a.collectible_cents
            FROM agent_earnings a LEFT JOIN users u ON u.user_id = a.agent_id
            ORDER BY a.collected_cents DESC, a.agent_id
            """
        ).rows.map { row in
            guard row.count == 9, case .text(let agentId) = row[0] else {
                throw Dashboard.UnexpectedRow(description: "the agent performance query returned \(row)")
            }
            return AgentLine(
                agentId: agentId, username: row[1].textOrNil, loansRequested: row[2].integerOrZero,
                loansReleased: row[3].integerOrZero,
                principalReleasedCents: row[4].integerOrZero, collectedCents: row[5].integerOrZero,
                payments: row[6].integerOrZero,
                earnedCents: row[7].integerOrZero, collectibleCents: row[8].integerOrZero)
        }
    }
}

/// The first `count` of rows offered one at a time, by `precedes`, holding at most twice as
/// many at once whatever the number offered.
struct TopRows<Row> {
    let count: Int
    let precedes: (Row, Row) -> Bool
    private var held: [Row] = []

    init(count: Int, precedes: @escaping (Row, Row) -> Bool) {
        self.count = count
        self.precedes = precedes
    }

    mutating func offer(_ row: Row) {
        held.append(row)
        if held.count >= 2 * count { keepFirst() }
    }

    /// The first `count`, in order.
    var rows: [Row] {
        var top = self
        top.keepFirst()
        return top.held
    }

    private mutating func keepFirst() {
        held.sort(by: precedes)
        if held.count > count { held.removeLast(held.count - count) }
    }
}
