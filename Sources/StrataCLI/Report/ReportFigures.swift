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

    /// The longest stretch of days the collections chart covers, ending on `asOf`.
    static let collectionsDays = 60

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
    /// Most overdue first.
    var overdueLoans: [OverdueAging.Loan]
    /// Best collectors first.
    var agents: [AgentLine]
    var receivables: [Receivables.CustomerAging]

    static func read(_ snapshot: ProjectionSnapshot, asOf: LocalDate) throws -> ReportFigures {
        let from = asOf.adding(days: -(collectionsDays - 1))
        let overdueLoans = try OverdueAging.rows(asOf: asOf, in: snapshot)
        let overdue = try OverdueAging.summary(asOf: asOf, in: snapshot).map { total in
            BucketLine(
                bucket: total.bucket, loans: total.loans, overdueCents: total.overdueCents,
                outstandingCents: overdueLoans.filter { $0.bucket == total.bucket }.reduce(0) {
                    $0 + $1.outstandingCents
                })
        }
        return ReportFigures(
            position: snapshot.checkpoint, stop: snapshot.stop, asOf: asOf,
            headline: try Dashboard.headline(in: snapshot), portfolio: try portfolio(snapshot),
            collectionsFrom: from, collections: try Dashboard.collections(from: from, through: asOf, in: snapshot),
            overdue: overdue, overdueLoans: overdueLoans, agents: try agents(snapshot),
            receivables: try Receivables.aging(asOf: asOf, in: snapshot))
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
