import Events
import StrataCore

/// Borrower accounts, per agent and searchable by name or phone: the agent's list of
/// borrowers and the admin's account search.
///
/// One row per account, keyed by `account_id`, with its latest details and two loan
/// counters for the agent's screen. `name` and `phone` compare case-insensitively, so a
/// prefix search (`name LIKE 'ram%'`) uses their indexes.
///
/// - `AccountOpened` inserts the row; `AccountUpdated` overwrites the fields it carries
///   (a new `assigned_agent_id` moves the account to another agent's list);
///   `AccountStatusChanged` sets the status and why.
/// - `LoanRequested` counts a loan on its account; `LoanApproved` and `LoanClosed` move
///   `active_loans` up and down. The small `account_loans` table remembers each loan's
///   account, since those two events name only the loan.
/// - `PersonalDataErased` of an ACCOUNT replaces the account's personal columns with `[erased]`.
public struct Accounts: Projection {
    public init() {}

    public var name: String { "accounts" }

    public var categories: [String]? { ["account", "loan"] }

    public var schema: ProjectionSchema {
        ProjectionSchema(
            version: 1,
            statements: [
                """
                CREATE TABLE accounts (
                    account_id        TEXT PRIMARY KEY,
                    name              TEXT NOT NULL COLLATE NOCASE,
                    phone             TEXT NOT NULL COLLATE NOCASE,
                    email             TEXT,
                    alternate_phone   TEXT,
                    address           TEXT NOT NULL,
                    assigned_agent_id TEXT NOT NULL,
                    status            TEXT NOT NULL,
                    status_reason     TEXT,
                    status_changed_by TEXT,
                    status_changed_at TEXT,
                    opened_by         TEXT NOT NULL,
                    opened_at         TEXT NOT NULL,
                    loans_count       INTEGER NOT NULL DEFAULT 0,
                    active_loans      INTEGER NOT NULL DEFAULT 0
                )
                """,
                "CREATE INDEX accounts_by_agent ON accounts (assigned_agent_id)",
                "CREATE INDEX accounts_by_name ON accounts (name)",
                "CREATE INDEX accounts_by_phone ON accounts (phone)",
                """
                CREATE TABLE account_loans (
                    loan_id    TEXT PRIMARY KEY,
                    account_id TEXT NOT NULL
                ) WITHOUT ROWID
                """,
            ])
    }

    public func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {
        switch event.event {
        case .accountOpened(let e):
            try tables.run(
                Self.insert,
                [
                    .text(e.accountId), .text(e.name.value), .text(e.phone.value), .text(e.email?.value),
                    .text(e.alternatePhone?.value), .text(e.address.value), .text(e.assignedAgentId),
                    .text(e.status.rawValue), .text(e.openedBy), .text(event.recordedAt.description),
                ])
        case .accountUpdated(let e):
            try tables.update(
                Self.updateDetails,
                [
                    .text(e.name?.value), .text(e.phone?.value), .text(e.email?.value), .text(e.alternatePhone?.value),
                    .text(e.address?.value), .text(e.assignedAgentId), .text(e.accountId),
                ],
                else: "AccountUpdated for account \(e.accountId), which has no accounts row")
        case .accountStatusChanged(let e):
            try tables.update(
                Self.changeStatus,
                [
                    .text(e.status.rawValue), .text(e.reason), .text(e.changedBy), .text(event.recordedAt.description),
                    .text(e.accountId),
                ],
                else: "AccountStatusChanged for account \(e.accountId), which has no accounts row")
        case .loanRequested(let e):
            try tables.update(
                Self.countLoan, [.text(e.accountId)],
                else: "LoanRequested for loan \(e.loanId) on account \(e.accountId), which has no accounts row")
            try tables.run(Self.insertLoan, [.text(e.loanId), .text(e.accountId)])
        case .loanApproved(let e):
            try changeActiveLoans(by: 1, loanId: e.loanId, event: "LoanApproved", in: tables)
        case .loanClosed(let e):
            try changeActiveLoans(by: -1, loanId: e.loanId, event: "LoanClosed", in: tables)
        case .personalDataErased(let e) where e.kind == .account:
            try tables.run(Self.erase, [.text(e.subjectId)])
        default:
            break
        }
    }

    private func changeActiveLoans(
        by delta: Int64, loanId: String, event: String, in tables: any ProjectionTables
    ) throws {
        try tables.update(
            Self.changeActive, [.integer(delta), .text(loanId)],
            else: "\(event) for loan \(loanId), whose request this read model has not seen")
    }

    private static let insert = ProjectionStatement(
        """
        INSERT INTO accounts (account_id, name, phone, email, alternate_phone, address, assigned_agent_id,
          status, opened_by, opened_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """)
    private static let updateDetails = ProjectionStatement(
        """
        UPDATE accounts SET name = coalesce(?, name), phone = coalesce(?, phone), email = coalesce(?, email),
          alternate_phone = coalesce(?, alternate_phone), address = coalesce(?, address),
          assigned_agent_id = coalesce(?, assigned_agent_id)
        WHERE account_id = ?
        """)
    private static let changeStatus = ProjectionStatement(
        """
        UPDATE accounts SET status = ?, status_reason = ?, status_changed_by = ?, status_changed_at = ?
        WHERE account_id = ?
        """)
    private static let countLoan = ProjectionStatement(
        "UPDATE accounts SET loans_count = loans_count + 1 WHERE account_id = ?")
    private static let insertLoan = ProjectionStatement(
        "INSERT INTO account_loans (loan_id, account_id) VALUES (?, ?)")
    private static let changeActive = ProjectionStatement(
        """
        UPDATE accounts SET active_loans = active_loans + ?
        WHERE account_id = (SELECT account_id FROM account_loans WHERE loan_id = ?)
        """)
    private static let erase = ProjectionStatement(
        """
        UPDATE accounts SET name = '[erased]', phone = '[erased]', address = '[erased]',
          email = CASE WHEN email IS NOT NULL THEN '[erased]' END,
          alternate_phone = CASE WHEN alternate_phone IS NOT NULL THEN '[erased]' END
        WHERE account_id = ?
        """)
}
