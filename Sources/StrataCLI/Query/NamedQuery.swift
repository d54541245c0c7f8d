import Domain
import Events
import Projections
import StrataCore

/// A question analysts ask of the read models every day, by name: `strata query accounts
/// --search lakshmi`. Each one is a fixed SELECT over documented tables (docs/read-models.md)
/// plus the conditions of the filters given.
struct NamedQuery: Sendable {
    let name: String
    let summary: String
    /// The file it reads: `readmodels`, `audit`, or `events` (the store's command journal).
    let file: String
    /// The projections whose tables it reads: all an `--as-of` build has to run. None for
    /// the journal, which is the store's own record, not a projection of events.
    let projections: [any Projection]
    /// `SELECT … FROM …`, without WHERE or ORDER BY.
    let select: String
    /// Conditions that always hold (`role = 'AGENT'`).
    var fixed: [String] = []
    let filters: [QueryFilter]
    let orderBy: String
    /// Whether the SQL binds `:as_of`, the day that aging is counted on (`--date`).
    var agesOnADay = false

    /// The SQL for the filters in use, in the catalogue's order.
    func sql(filtering used: Set<String>) -> String {
        let conditions = fixed + filters.filter { used.contains($0.option) }.map(\.condition)
        var sql = select
        if !conditions.isEmpty { sql += "\nWHERE " + conditions.map { "(\($0))" }.joined(separator: " AND ") }
        return sql + "\nORDER BY " + orderBy
    }

    func filter(_ option: String) -> QueryFilter? { filters.first { $0.option == option } }
}

// The filters, named once so that every query spells an option the same way.
extension QueryFilter {
    fileprivate static func agent(_ column: String) -> QueryFilter {
        QueryFilter(option: "agent", kind: .exact, condition: "\(column) = :agent")
    }
    fileprivate static func status(_ codes: [String], _ column: String = "status") -> QueryFilter {
        QueryFilter(option: "status", kind: .code(codes), condition: "\(column) = :status")
    }
    fileprivate static func exact(_ option: String, _ column: String) -> QueryFilter {
        QueryFilter(option: option, kind: .exact, condition: "\(column) = :\(option)")
    }
    fileprivate static func code(_ option: String, _ column: String, _ codes: [String]) -> QueryFilter {
        QueryFilter(option: option, kind: .code(codes), condition: "\(column) = :\(option)")
    }
    /// `--since` and `--until` on a date column.
    fileprivate static func days(_ column: String) -> [QueryFilter] {
        [
            QueryFilter(option: "since", kind: .day, condition: "\(column) >= :since"),
            QueryFilter(option: "until", kind: .day, condition: "\(column) <= :until"),
        ]
    }
    /// `--since` and `--until` on a timestamp column.
    fileprivate static func instants(_ column: String) -> [QueryFilter] {
        [
            QueryFilter(option: "since", kind: .since, condition: "\(column) >= :since"),
            QueryFilter(option: "until", kind: .until, condition: "\(column) <= :until"),
        ]
    }
}

extension NamedQuery {
    /// Every named query, in the order `strata query --help` lists them.
    static let all: [NamedQuery] = [
        NamedQuery(
            name: "accounts", summary: "borrower accounts; --search finds text in the id, name, phone or email",
            file: "readmodels", projections: [Accounts()],
            select: """
                SELECT account_id, name, phone, email, assigned_agent_id AS agent_id, status, loans_count,
                       active_loans, opened_at
                FROM accounts
                """,
            filters: [
                QueryFilter(
                    option: "search", kind: .search,
                    condition: #"""
                        account_id LIKE :search ESCAPE '\' OR name LIKE :search ESCAPE '\'
                        OR phone LIKE :search ESCAPE '\' OR email LIKE :search ESCAPE '\'
                        """#),
                .agent("assigned_agent_id"), .status(AccountStatus.allCases.map(\.rawValue)),
            ],
            orderBy: "account_id"),
        NamedQuery(
            name: "portfolio",
            summary: "loans: status, principal, paid, outstanding, next due date, days overdue on --date",
            file: "readmodels", projections: LoanPortfolio.withInstallments,
            // Days overdue as `overdue` counts them: from the oldest installment not fully paid
            // (`next_due_date`) of an active loan, when it fell due before the day; else 0.
            select: """
                SELECT loan_id, account_id, agent_id, status, principal_cents, monthly_rate_bp, tenure_months,
                       frequency, interest_method, requested_on, approved_on, closed_on, total_due_cents,
                       total_paid_cents, outstanding_cents, next_due_date,
                       CASE WHEN status = 'ACTIVE' AND next_due_date < :as_of
                            THEN CAST(julianday(:as_of) - julianday(next_due_date) AS INTEGER) ELSE 0
                       END AS days_overdue
                FROM loans
                """,
            filters: [.agent("agent_id"), .status(LoanPortfolio.statuses), .exact("account", "account_id")]
                + QueryFilter.days("requested_on"),
            orderBy: "loan_id", agesOnADay: true),
        NamedQuery(
            name: "installments", summary: "loan schedules: each installment with what is paid and the penalty",
            file: "readmodels", projections: [LoanInstallments()],
            select: """
                SELECT loan_id, number, due_date, principal_cents, interest_cents, total_cents,
                       principal_paid_cents, interest_paid_cents, penalty_accrued_cents, penalty_paid_cents,
                       status, paid_on
                FROM loan_installments
                """,
            filters: [.exact("loan", "loan_id"), .status(LoanInstallments.statuses)] + QueryFilter.days("due_date"),
            orderBy: "loan_id, number"),
        NamedQuery(
            name: "payments", summary: "loan payments and how each was allocated (penalty, interest, principal)",
            file: "readmodels", projections: [LoanPayments()] + LoanPortfolio.withInstallments,
            select: """
                SELECT p.loan_id, p.payment_id, p.paid_on, p.amount_cents, p.method, p.type, p.penalty_cents,
                       p.interest_cents, p.principal_cents, p.outstanding_after_cents, p.received_by, l.agent_id
                FROM loan_payments p JOIN loans l ON l.loan_id = p.loan_id
                """,
            filters: [.exact("loan", "p.loan_id"), .agent("l.agent_id")] + QueryFilter.days("p.paid_on"),
            orderBy: "p.position"),
        NamedQuery(
            name: "overdue", summary: "overdue loans as of --date (default today), with the aging bucket",
            file: "readmodels", projections: LoanPortfolio.withInstallments,
            select: "SELECT * FROM (\(OverdueAging.sql))",
            filters: [.agent("agent_id"), .code("bucket", "bucket", OverdueAging.Bucket.allCases.map(\.rawValue))],
            orderBy: "days_overdue DESC, loan_id", agesOnADay: true),
        NamedQuery(
            name: "agents", summary: "agent performance: loans released, collected, earned, collectible",
            file: "readmodels", projections: [Users(), AgentEarnings()],
            select: """
                SELECT u.user_id AS agent_id, u.username, u.status, coalesce(e.loans_count, 0) AS loans_count,
                       coalesce(e.loans_released, 0) AS loans_released,
                       coalesce(e.loans_released_cents, 0) AS loans_released_cents,
                       coalesce(e.payments_count, 0) AS payments_count,
                       coalesce(e.collected_cents, 0) AS collected_cents,
                       coalesce(e.earned_cents, 0) AS earned_cents, coalesce(e.pending_cents, 0) AS pending_cents,
                       coalesce(e.cashed_out_cents, 0) AS cashed_out_cents,
                       coalesce(e.collectible_cents, 0) AS collectible_cents, r.rate_bp AS commission_rate_bp
                FROM users u
                LEFT JOIN agent_earnings e ON e.agent_id = u.user_id
                LEFT JOIN commission_rates r ON r.agent_id = u.user_id
                """,
            fixed: ["u.role = 'AGENT'"],
            filters: [.agent("u.user_id"), .status(UserStatus.allCases.map(\.rawValue), "u.status")],
            orderBy: "u.user_id"),
        NamedQuery(
            name: "cashouts", summary: "agents' cash-out requests and their decisions",
            file: "readmodels", projections: [AgentEarnings()],
            select: """
                SELECT cashout_id, agent_id, amount_cents, status, requested_by, requested_at, decided_by,
                       decided_at, reason
                FROM cashouts
                """,
            filters: [.agent("agent_id"), .status(AgentEarnings.cashoutStatuses)]
                + QueryFilter.instants("requested_at"),
            orderBy: "requested_at, cashout_id"),
        NamedQuery(
            name: "pending", summary: "what waits for an admin: agents, loans and cash-outs to approve",
            file: "readmodels",
            projections: [Users()] + LoanPortfolio.withInstallments + [AgentEarnings(), PendingApprovals()],
            select: "SELECT kind, entity_id, agent_id, requested_by, requested_on, amount_cents FROM pending_approvals",
            filters: [.code("kind", "kind", PendingApprovals.kinds), .agent("agent_id")],
            orderBy: "requested_at, entity_id"),
        NamedQuery(
            name: "dashboard", summary: "the headline figures in one row",
            file: "readmodels",
            projections: [Users(), Accounts()] + LoanPortfolio.withInstallments + [
                LoanPayments(), AgentEarnings(), PendingApprovals(), Projections.Dashboard(),
            ],
            select: "SELECT * FROM dashboard", filters: [], orderBy: "1"),
        NamedQuery(
            name: "invoices", summary: "invoices with totals, paid and balance",
            file: "readmodels", projections: [Invoices()],
            select: """
                SELECT invoice_id, invoice_number, party_id, customer_name, issue_date, due_date, taxable_cents,
                       tax_cents, total_cents, paid_cents, balance_cents, status
                FROM invoices
                """,
            filters: [.exact("customer", "party_id"), .status(InvoiceStatus.allCases.map(\.rawValue))]
                + QueryFilter.days("issue_date"),
            orderBy: "issue_date, invoice_number"),
        NamedQuery(
            name: "receivables", summary: "what each customer owes as of --date (default today), aged by days past due",
            file: "readmodels", projections: [Receivables()],
            select: "SELECT * FROM (\(Receivables.agingSQL))",
            filters: [.exact("customer", "party_id")],
            orderBy: "party_id", agesOnADay: true),
        NamedQuery(
            name: "collections", summary: "money collected per day: loans (by component) and invoices",
            file: "readmodels", projections: [CollectionsDaily()],
            select: """
                SELECT day, loan_payments_count, loan_collected_cents, loan_principal_cents, loan_interest_cents,
                       loan_penalty_cents, invoice_payments_count, invoice_collected_cents, total_collected_cents
                FROM collections_daily
                """,
            filters: QueryFilter.days("day"), orderBy: "day"),
        NamedQuery(
            name: "collections-by-agent", summary: "loan money collected per day and agent",
            file: "readmodels", projections: [CollectionsDaily()],
            select: "SELECT day, agent_id, payments_count, collected_cents FROM collections_daily_by_agent",
            filters: [.agent("agent_id")] + QueryFilter.days("day"), orderBy: "day, agent_id"),
        NamedQuery(
            name: "users", summary: "users (admins and agents) and their approval",
            file: "readmodels", projections: [Users()],
            select: "SELECT user_id, username, role, status, registered_at, decided_by, decided_at FROM users",
            filters: [
                .code("role", "role", Role.allCases.map(\.rawValue)), .status(UserStatus.allCases.map(\.rawValue)),
            ],
            orderBy: "user_id"),
        NamedQuery(
            name: "notifications", summary: "a user's inbox, oldest first",
            file: "readmodels", projections: [Notifications()],
            select: "SELECT user_id, position, kind, entity_id, message, created_at FROM notifications",
            filters: [.exact("user", "user_id")] + QueryFilter.instants("created_at"),
            orderBy: "position, user_id"),
        NamedQuery(
            name: "audit", summary: "the audit log (audit.db): who did what, when, to which entity",
            file: "audit", projections: [AuditLog()],
            select:
                "SELECT position, recorded_at, actor, action, entity, event_type, summary, command_id FROM audit_log",
            filters: [
                .exact("actor", "actor"), .exact("entity", "entity"),
                QueryFilter(option: "type", kind: .name(EventRegistry.eventTypes), condition: "event_type = :type"),
                .code("action", "action", AuditLog.actions),
            ] + QueryFilter.instants("recorded_at"),
            orderBy: "position"),
        NamedQuery(
            name: "refusals",
            summary: "refused commands, from the store's journal (events.db): who tried what, and why",
            file: "events", projections: [],
            // `details` lists an INVALID command's field problems as its reply's message does
            // (`field: REASON; …`); the reply itself is the journal's `result` column.
            select: """
                SELECT recorded_at, command_id, actor, key_id, command_type,
                       json_extract(result, '$.error.code') AS code, json_extract(result, '$.error.reason') AS reason,
                       json_extract(result, '$.error.message') AS message,
                       (SELECT group_concat(
                                   json_extract(d.value, '$.field') || ': ' || json_extract(d.value, '$.reason'), '; ')
                        FROM json_each(result, '$.error.details') AS d) AS details
                FROM commands
                """,
            fixed: ["outcome = 'refused'"],
            filters: [
                .exact("actor", "actor"),
                QueryFilter(option: "type", kind: .name(journaledTypes), condition: "command_type = :type"),
                .code("code", "json_extract(result, '$.error.code')", journaledRefusals),
                .exact("reason", "json_extract(result, '$.error.reason')"), .exact("key", "key_id"),
            ] + QueryFilter.instants("recorded_at"),
            // Decisions in the order they were made: the head after each breaks ties in time.
            orderBy: "recorded_at, head, command_id"),
    ]

    /// The refusals the command service journals: those that decided something. The others
    /// (MALFORMED, TOO_LARGE, UNAUTHENTICATED, UNAVAILABLE, INTERNAL) are answered and forgotten,
    /// so that a retry is decided afresh.
    static let journaledRefusals: [String] = [
        StrataError.Code.invalid, .forbidden, .notFound, .conflict, .rejected,
    ].map(\.rawValue)

    /// The command types the journal names: each known type as the domain spells it, and
    /// UnknownCommand for a body whose type is none of them.
    static let journaledTypes: [String] = (Command.types + ["UnknownCommand"]).sorted()

    /// Whether it reads the store's journal rather than a projection file.
    var readsTheJournal: Bool { file == "events" }

    static func named(_ name: String) -> NamedQuery? { all.first { $0.name == name } }

    /// Every filter option some query takes, once each, in first-seen order.
    static var filterOptions: [String] {
        var seen: [String] = []
        for query in all {
            for filter in query.filters where !seen.contains(filter.option) { seen.append(filter.option) }
        }
        return seen
    }
}
