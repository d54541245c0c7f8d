import Events
import StrataCore

/// Agent performance and earnings: what each agent lent, collected and earned, what they
/// may still cash out, and every cash-out request with its decision.
///
/// `agent_earnings` has one row per agent, created when the agent is approved (or at the
/// agent's first loan, commission or cash-out). Its `collectible_cents` is kept equal to
/// `earned_cents − cashed_out_cents − pending_cents`: what the agent may still request.
/// (A stored column, not a generated one: tools that list columns with `PRAGMA table_info`,
/// such as DuckDB's SQLite reader, do not see generated columns.)
///
/// - `AgentApproved` creates the agent's row with every figure 0.
/// - `LoanRequested` counts a loan for its agent (the account's agent when requested; the
///   small `agent_loans` table remembers it, since later loan events name only the loan).
/// - `LoanApproved` adds the loan's principal to what the agent released; `PaymentReceived`
///   adds the payment to what the agent collected.
/// - `CommissionEarned` adds to `earned_cents`.
/// - `CashoutRequested` inserts a PENDING cash-out and reserves its amount (`pending_cents`);
///   `CashoutApproved` moves it to `cashed_out_cents`; `CashoutRejected` gives it back.
/// - `CommissionRateChanged` sets the current rate of one agent, or the default (`'*'`),
///   in `commission_rates`.
///
/// `EarningsReserved` and `EarningsReleased` say the same amounts again on the agent's
/// stream; they are not used, so each amount counts once, and the cash-out events also say
/// whether reserved money is still pending or paid out.
public struct AgentEarnings: Projection {
    public init() {}

    /// The values of `cashouts.status`, as the SQL below writes them.
    public static let cashoutStatuses = ["PENDING", "APPROVED", "REJECTED"]

    public var name: String { "agent_earnings" }

    public var categories: [String]? { ["user", "loan", "agent", "cashout", "settings"] }

    public var schema: ProjectionSchema {
        ProjectionSchema(
            version: 1,
            statements: [
                """
                CREATE TABLE agent_earnings (
                    agent_id             TEXT PRIMARY KEY,
                    earned_cents         INTEGER NOT NULL DEFAULT 0,
                    pending_cents        INTEGER NOT NULL DEFAULT 0,
                    cashed_out_cents     INTEGER NOT NULL DEFAULT 0,
                    collectible_cents    INTEGER NOT NULL DEFAULT 0,
                    commissions_count    INTEGER NOT NULL DEFAULT 0,
                    loans_count          INTEGER NOT NULL DEFAULT 0,
                    loans_released       INTEGER NOT NULL DEFAULT 0,
                    loans_released_cents INTEGER NOT NULL DEFAULT 0,
                    collected_cents      INTEGER NOT NULL DEFAULT 0,
                    payments_count       INTEGER NOT NULL DEFAULT 0
                )
                """,
                """
                CREATE TABLE cashouts (
                    cashout_id   TEXT PRIMARY KEY,
                    agent_id     TEXT NOT NULL,
                    amount_cents INTEGER NOT NULL,
                    status       TEXT NOT NULL,
                    requested_by TEXT NOT NULL,
                    requested_at TEXT NOT NULL,
                    decided_by   TEXT,
                    decided_at   TEXT,
                    reason       TEXT
                )
                """,
                "CREATE INDEX cashouts_by_agent ON cashouts (agent_id, requested_at)",
                "CREATE INDEX cashouts_by_status ON cashouts (status, requested_at)",
                """
                CREATE TABLE commission_rates (
                    agent_id   TEXT PRIMARY KEY,
                    rate_bp    INTEGER NOT NULL,
                    changed_by TEXT NOT NULL,
                    changed_at TEXT NOT NULL
                )
                """,
                """
                CREATE TABLE agent_loans (
                    loan_id         TEXT PRIMARY KEY,
                    agent_id        TEXT NOT NULL,
                    principal_cents INTEGER NOT NULL
                ) WITHOUT ROWID
                """,
            ])
    }

    /// What one event adds to an agent's row.
    private struct Change {
        var earned: Int64 = 0
        var pending: Int64 = 0
        var cashedOut: Int64 = 0
        var commissions: Int64 = 0
        var loans: Int64 = 0
        var loansReleased: Int64 = 0
        var releasedCents: Int64 = 0
        var collected: Int64 = 0
        var payments: Int64 = 0
    }

    public func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {
        switch event.event {
        case .agentApproved(let e):
            try add(Change(), to: e.agentId, in: tables)
        case .loanRequested(let e):
            try tables.run(Self.insertLoan, [.text(e.loanId), .text(e.agentId), .integer(e.principalCents)])
            try add(Change(loans: 1), to: e.agentId, in: tables)
        case .loanApproved(let e):
            let loan = try agentLoan(e.loanId, event: "LoanApproved", in: tables)
            try add(Change(loansReleased: 1, releasedCents: loan.principalCents), to: loan.agentId, in: tables)
        case .paymentReceived(let e):
            let loan = try agentLoan(e.loanId, event: "PaymentReceived \(e.paymentId)", in: tables)
            try add(Change(collected: e.amountCents, payments: 1), to: loan.agentId, in: tables)
        case .commissionEarned(let e):
            try add(Change(earned: e.commissionCents, commissions: 1), to: e.agentId, in: tables)
        case .cashoutRequested(let e):
            try tables.run(
                Self.insertCashout,
                [
                    .text(e.cashoutId), .text(e.agentId), .integer(e.amountCents), .text(e.requestedBy),
                    .text(event.recordedAt.description),
                ])
            try add(Change(pending: e.amountCents), to: e.agentId, in: tables)
        case .cashoutApproved(let e):
            let (agentId, amount) = try decide(
                e.cashoutId, status: "APPROVED", by: e.approvedBy, reason: nil, event: event, in: tables)
            let released = try Self.difference(0, amount, agentId)
            try add(Change(pending: released, cashedOut: amount), to: agentId, in: tables)
        case .cashoutRejected(let e):
            let (agentId, amount) = try decide(
                e.cashoutId, status: "REJECTED", by: e.rejectedBy, reason: e.reason, event: event, in: tables)
            try add(Change(pending: try Self.difference(0, amount, agentId)), to: agentId, in: tables)
        case .commissionRateChanged(let e):
            try tables.run(
                Self.setRate,
                [.text(e.agentId ?? "*"), .int(e.rateBp), .text(e.changedBy), .text(event.recordedAt.description)])
        default:
            break
        }
    }

    private func add(_ change: Change, to agentId: String, in tables: any ProjectionTables) throws {
        let collectible = try Self.difference(
            try Self.difference(change.earned, change.cashedOut, agentId), change.pending, agentId)
        try tables.run(
            Self.accumulate,
            [
                .text(agentId), .integer(change.earned), .integer(change.pending), .integer(change.cashedOut),
                .integer(collectible), .integer(change.commissions),
                .integer(change.loans), .integer(change.loansReleased), .integer(change.releasedCents),
                .integer(change.collected), .integer(change.payments),
            ])
    }

    /// `a − b`. Strata records amounts of at most 10¹⁵ cents, so only a store it did not write
    /// holds amounts near Int64's ends; there the projection stops at the event rather than the
    /// process trapping.
    private static func difference(_ a: Int64, _ b: Int64, _ agentId: String) throws -> Int64 {
        let (result, overflow) = a.subtractingReportingOverflow(b)
        guard !overflow else {
            throw ProjectionInconsistency("agent \(agentId)'s amounts go beyond what 64 bits of cents hold")
        }
        return result
    }

    private func agentLoan(
        _ loanId: String, event: String, in tables: any ProjectionTables
    ) throws -> (agentId: String, principalCents: Int64) {
        let rows = try tables.rows(Self.selectLoan, [.text(loanId)])
        guard let row = rows.first, let agentId = row[0].textOrNil else {
            throw ProjectionInconsistency("\(event) for loan \(loanId), whose request this read model has not seen")
        }
        return (agentId, row[1].integerOrZero)
    }

    /// Records an admin's decision on a pending cash-out; returns its agent and amount.
    private func decide(
        _ cashoutId: String, status: String, by admin: String, reason: String?, event: ProjectedEvent,
        in tables: any ProjectionTables
    ) throws -> (agentId: String, amountCents: Int64) {
        let row = try tables.updateRequiringRow(
            Self.decide,
            [.text(status), .text(admin), .text(event.recordedAt.description), .text(reason), .text(cashoutId)],
            else: "\(event.event.eventType) for cash-out \(cashoutId), which is not a pending cash-out here")
        return (row[0].textOrNil ?? "", row[1].integerOrZero)
    }

    private static let insertLoan = ProjectionStatement(
        "INSERT INTO agent_loans (loan_id, agent_id, principal_cents) VALUES (?, ?, ?)")
    private static let selectLoan = ProjectionStatement(
        "SELECT agent_id, principal_cents FROM agent_loans WHERE loan_id = ?")
    private static let insertCashout = ProjectionStatement(
        """
        INSERT INTO cashouts (cashout_id, agent_id, amount_cents, status, requested_by, requested_at)
        VALUES (?, ?, ?, 'PENDING', ?, ?)
        """)
    private static let setRate = ProjectionStatement(
        """
        INSERT INTO commission_rates (agent_id, rate_bp, changed_by, changed_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (agent_id) DO UPDATE SET rate_bp = excluded.rate_bp, changed_by = excluded.changed_by,
          changed_at = excluded.changed_at
        """)
    private static let accumulate = ProjectionStatement(
        """
        INSERT INTO agent_earnings (agent_id, earned_cents, pending_cents, cashed_out_cents, collectible_cents,
          commissions_count, loans_count, loans_released, loans_released_cents, collected_cents, payments_count)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (agent_id) DO UPDATE SET
          earned_cents = earned_cents + excluded.earned_cents,
          pending_cents = pending_cents + excluded.pending_cents,
          cashed_out_cents = cashed_out_cents + excluded.cashed_out_cents,
          collectible_cents = collectible_cents + excluded.collectible_cents,
          commissions_count = commissions_count + excluded.commissions_count,
          loans_count = loans_count + excluded.loans_count,
          loans_released = loans_released + excluded.loans_released,
          loans_released_cents = loans_released_cents + excluded.loans_released_cents,
          collected_cents = collected_cents + excluded.collected_cents,
          payments_count = payments_count + excluded.payments_count
        """)
    private static let decide = ProjectionStatement(
        """
        UPDATE cashouts SET status = ?, decided_by = ?, decided_at = ?, reason = ?
        WHERE cashout_id = ? AND status = 'PENDING' RETURNING agent_id, amount_cents
        """)
}
