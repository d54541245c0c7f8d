/// What waits for an admin's decision: pending agents, loans and cash-outs, in one list.
///
/// A view over `users` (`Users`), `loans` (`LoanPortfolio`) and `cashouts`
/// (`AgentEarnings`), so it stores nothing and reads no events; it is always exactly as
/// current as those tables. One row per pending item:
/// - `kind`: AGENT, LOAN or CASHOUT; `entity_id`: the agent, loan or cash-out id;
/// - `requested_by`, `requested_at`: who asked and when it was recorded;
///   `requested_on`: the loan's (possibly back-dated) request date, else the date of `requested_at`;
/// - `amount_cents`: the loan's principal or the cash-out's amount (NULL for agents);
/// - `agent_id`: the agent concerned (for an agent, itself).
public struct PendingApprovals: Projection {
    public init() {}

    /// The values of `pending_approvals.kind`, as the SQL below writes them.
    public static let kinds = ["AGENT", "LOAN", "CASHOUT"]

    public var name: String { "pending_approvals" }

    public var categories: [String]? { [] }

    public var schema: ProjectionSchema {
        ProjectionSchema(
            version: 1,
            statements: [
                """
                CREATE VIEW pending_approvals AS
                SELECT 'AGENT' AS kind, user_id AS entity_id, registered_by AS requested_by,
                       registered_at AS requested_at, substr(registered_at, 1, 10) AS requested_on,
                       NULL AS amount_cents, user_id AS agent_id
                FROM users WHERE role = 'AGENT' AND status = 'PENDING'
                UNION ALL
                SELECT 'LOAN', loan_id, requested_by, requested_at, requested_on, principal_cents, agent_id
                FROM loans WHERE status = 'PENDING_APPROVAL'
                UNION ALL
                SELECT 'CASHOUT', cashout_id, requested_by, requested_at, substr(requested_at, 1, 10), amount_cents,
                       agent_id
                FROM cashouts WHERE status = 'PENDING'
                """
            ])
    }

    public func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {}
}
