import Events
import StrataCore

/// The notifications inbox: what each user is told about decisions on their work.
///
/// One row per notification, keyed by `(user_id, position)`: the recipient and the
/// position of the event that caused it, so an inbox reads newest first straight from the
/// key and a client can page with "position below the last one seen". `entity_id` is the
/// id of the stream's entity (the account, the loan — also for its payments —, the
/// cash-out, the agent). Messages name people by id, never by personal data, and write
/// amounts as plain numbers with two decimals and thousands separators (`12,345.67`).
///
/// | event | kind | recipient |
/// |---|---|---|
/// | `AgentApproved` / `AgentRejected` | AGENT_APPROVED / AGENT_REJECTED | the agent |
/// | `AccountOpened` | ACCOUNT_CREATED | the assigned agent |
/// | `LoanApproved` / `LoanRejected` | LOAN_APPROVED / LOAN_REJECTED | the loan's agent |
/// | `PaymentReceived` | PAYMENT_RECEIVED | the loan's agent |
/// | `CashoutApproved` / `CashoutRejected` | CASHOUT_APPROVED / CASHOUT_REJECTED | the cash-out's agent |
///
/// The loan's agent is the one named by `LoanRequested`; the small `notification_loans`
/// table remembers it (with the account and principal for the messages), since later
/// loan events name only the loan.
public struct Notifications: Projection {
    public init() {}

    public var name: String { "notifications" }

    public var categories: [String]? { ["user", "account", "loan", "cashout"] }

    public var schema: ProjectionSchema {
        ProjectionSchema(
            version: 1,
            statements: [
                """
                CREATE TABLE notifications (
                    user_id    TEXT NOT NULL,
                    position   INTEGER NOT NULL,
                    kind       TEXT NOT NULL,
                    entity_id  TEXT NOT NULL,
                    message    TEXT NOT NULL,
                    created_at TEXT NOT NULL,
                    PRIMARY KEY (user_id, position)
                ) WITHOUT ROWID
                """,
                """
                CREATE TABLE notification_loans (
                    loan_id         TEXT PRIMARY KEY,
                    agent_id        TEXT NOT NULL,
                    account_id      TEXT NOT NULL,
                    principal_cents INTEGER NOT NULL
                ) WITHOUT ROWID
                """,
            ])
    }

    public func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {
        switch event.event {
        case .agentApproved(let e):
            try notify(
                e.agentId, kind: "AGENT_APPROVED", about: e.agentId,
                "Your agent registration was approved by \(e.approvedBy).", event: event, in: tables)
        case .agentRejected(let e):
            try notify(
                e.agentId, kind: "AGENT_REJECTED", about: e.agentId,
                "Your agent registration was rejected by \(e.rejectedBy): \(e.reason)", event: event, in: tables)
        case .accountOpened(let e):
            try notify(
                e.assignedAgentId, kind: "ACCOUNT_CREATED", about: e.accountId,
                "Account \(e.accountId) was opened by \(e.openedBy) and assigned to you.", event: event, in: tables)
        case .loanRequested(let e):
            try tables.run(
                Self.insertLoan, [.text(e.loanId), .text(e.agentId), .text(e.accountId), .integer(e.principalCents)])
        case .loanApproved(let e):
            let loan = try loan(e.loanId, event: "LoanApproved", in: tables)
            var message = "Loan \(e.loanId) on account \(loan.accountId) was approved by \(e.approvedBy) on "
            message += "\(e.approvedOn): \(MoneyText.of(loan.principalCents)) released, "
            message += e.schedule.count == 1 ? "1 installment" : "\(e.schedule.count) installments"
            if let first = e.schedule.first { message += ", the first due \(first.dueDate)" }
            try notify(loan.agentId, kind: "LOAN_APPROVED", about: e.loanId, message + ".", event: event, in: tables)
        case .loanRejected(let e):
            let loan = try loan(e.loanId, event: "LoanRejected", in: tables)
            try notify(
                loan.agentId, kind: "LOAN_REJECTED", about: e.loanId,
                "Loan \(e.loanId) on account \(loan.accountId) (\(MoneyText.of(loan.principalCents))) was rejected by "
                    + "\(e.rejectedBy): \(e.reason)", event: event, in: tables)
        case .paymentReceived(let e):
            let loan = try loan(e.loanId, event: "PaymentReceived \(e.paymentId)", in: tables)
            let left =
                e.outstandingAfterCents == 0
                ? "nothing is left to pay" : "\(MoneyText.of(e.outstandingAfterCents)) is still outstanding"
            try notify(
                loan.agentId, kind: "PAYMENT_RECEIVED", about: e.loanId,
                "Payment \(e.paymentId) of \(MoneyText.of(e.amountCents)) was received on loan \(e.loanId) on "
                    + "\(e.paidOn) by \(e.receivedBy); \(left).", event: event, in: tables)
        case .cashoutApproved(let e):
            try notify(
                e.agentId, kind: "CASHOUT_APPROVED", about: e.cashoutId,
                "Cash-out \(e.cashoutId) of \(MoneyText.of(e.amountCents)) was approved by \(e.approvedBy).",
                event: event, in: tables)
        case .cashoutRejected(let e):
            try notify(
                e.agentId, kind: "CASHOUT_REJECTED", about: e.cashoutId,
                "Cash-out \(e.cashoutId) of \(MoneyText.of(e.amountCents)) was rejected by \(e.rejectedBy): \(e.reason)",
                event: event, in: tables)
        default:
            break
        }
    }

    private func notify(
        _ userId: String, kind: String, about entityId: String, _ message: String, event: ProjectedEvent,
        in tables: any ProjectionTables
    ) throws {
        try tables.run(
            Self.insert,
            [
                .text(userId), .integer(event.position), .text(kind), .text(entityId), .text(message),
                .text(event.recordedAt.description),
            ])
    }

    private func loan(
        _ loanId: String, event: String, in tables: any ProjectionTables
    ) throws -> (agentId: String, accountId: String, principalCents: Int64) {
        let rows = try tables.rows(Self.selectLoan, [.text(loanId)])
        guard let row = rows.first, let agentId = row[0].textOrNil, let accountId = row[1].textOrNil else {
            throw ProjectionInconsistency("\(event) for loan \(loanId), whose request this read model has not seen")
        }
        return (agentId, accountId, row[2].integerOrZero)
    }

    private static let insert = ProjectionStatement(
        """
        INSERT INTO notifications (user_id, position, kind, entity_id, message, created_at)
        VALUES (?, ?, ?, ?, ?, ?)
        """)
    private static let insertLoan = ProjectionStatement(
        "INSERT INTO notification_loans (loan_id, agent_id, account_id, principal_cents) VALUES (?, ?, ?, ?)")
    private static let selectLoan = ProjectionStatement(
        "SELECT agent_id, account_id, principal_cents FROM notification_loans WHERE loan_id = ?")
}
