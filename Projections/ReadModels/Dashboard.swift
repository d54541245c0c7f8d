/// The admin dashboard's headline figures, in one row.
///
/// A view over the other lending read models' tables (`users`, `accounts`, `loans`,
/// `loan_payments`, `pending_approvals`), so it stores nothing and reads no events:
/// - `approved_agents`, `pending_agents`: agents by status;
/// - `active_accounts`: borrower accounts with status ACTIVE;
/// - `loans_released`, `principal_released_cents`: loans ever approved (whatever their
///   status since) and the principal they released;
/// - `active_loans`, `collectible_cents`: loans ACTIVE now and what is still owed on them
///   (principal, interest and accrued penalty);
/// - `collected_cents`: every loan payment received;
/// - `pending_approvals`: agents, loans and cash-outs waiting for an admin.
public struct Dashboard: Projection {
    public init() {}

    public var name: String { "dashboard" }

    public var categories: [String]? { [] }

    public var schema: ProjectionSchema {
        ProjectionSchema(
            version: 1,
            statements: [
                """
                CREATE VIEW dashboard AS
                SELECT
                  (SELECT count(*) FROM users WHERE role = 'AGENT' AND status = 'APPROVED') AS approved_agents,
                  (SELECT count(*) FROM users WHERE role = 'AGENT' AND status = 'PENDING') AS pending_agents,
                  (SELECT count(*) FROM accounts WHERE status = 'ACTIVE') AS active_accounts,
                  (SELECT count(*) FROM loans WHERE approved_on IS NOT NULL) AS loans_released,
                  (SELECT coalesce(sum(principal_cents), 0) FROM loans WHERE approved_on IS NOT NULL)
                    AS principal_released_cents,
                  (SELECT count(*) FROM loans WHERE status = 'ACTIVE') AS active_loans,
                  (SELECT coalesce(sum(outstanding_cents), 0) FROM loans WHERE status = 'ACTIVE') AS collectible_cents,
                  (SELECT coalesce(sum(amount_cents), 0) FROM loan_payments) AS collected_cents,
                  (SELECT count(*) FROM pending_approvals) AS pending_approvals
                """
            ])
    }

    public func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {}
}
