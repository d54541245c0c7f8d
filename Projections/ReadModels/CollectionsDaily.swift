import Events
import StrataCore

/// Money collected per business day: loan payments (split into principal, interest and
/// penalty as they were allocated) and invoice payments, and the loan collections of each
/// agent per day.
///
/// The day is the payment's `paid_on`, the date the money changed hands, not the day it
/// was recorded: a payment entered late (or back-dated) counts on the day it was paid. The
/// agent of a loan payment is the loan's agent (`LoanRequested.agentId`, who earns its
/// commission), whoever recorded it; a small lookup of loan to agent is kept for that.
public struct CollectionsDaily: Projection {
    public init() {}

    public var name: String { "collections_daily" }
    public var categories: [String]? { ["loan", "invoice"] }

    public var schema: ProjectionSchema {
        ProjectionSchema(
            version: 1,
            statements: [
                """
                CREATE TABLE collections_daily (
                    day                     TEXT    PRIMARY KEY,
                    loan_payments_count     INTEGER NOT NULL,
                    loan_collected_cents    INTEGER NOT NULL,
                    loan_principal_cents    INTEGER NOT NULL,
                    loan_interest_cents     INTEGER NOT NULL,
                    loan_penalty_cents      INTEGER NOT NULL,
                    invoice_payments_count  INTEGER NOT NULL,
                    invoice_collected_cents INTEGER NOT NULL,
                    total_collected_cents   INTEGER NOT NULL
                )
                """,
                """
                CREATE TABLE collections_daily_by_agent (
                    day             TEXT    NOT NULL,
                    agent_id        TEXT    NOT NULL,
                    payments_count  INTEGER NOT NULL,
                    collected_cents INTEGER NOT NULL,
                    PRIMARY KEY (day, agent_id)
                ) WITHOUT ROWID
                """,
                "CREATE INDEX collections_daily_by_agent_agent ON collections_daily_by_agent (agent_id, day)",
                """
                CREATE TABLE collections_loan_agents (
                    loan_id  TEXT PRIMARY KEY,
                    agent_id TEXT NOT NULL
                ) WITHOUT ROWID
                """,
            ])
    }

    struct UnknownLoan: Error, CustomStringConvertible {
        let loanId: String
        let paymentId: String
        var description: String { "payment \(paymentId) for loan \(loanId), which was never requested" }
    }

    public func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {
        switch event.event {
        case .loanRequested(let e):
            try tables.run(Self.insertLoan, [.text(e.loanId), .text(e.agentId)])
        case .paymentReceived(let e):
            let agent = try tables.rows(Self.selectAgent, [.text(e.loanId)])
            guard let agentId = agent.first?.first else { throw UnknownLoan(loanId: e.loanId, paymentId: e.paymentId) }
            let day = ProjectionValue.text(e.paidOn.description)
            let a = e.allocation
            try tables.run(
                Self.addLoanPayment,
                [
                    day, .integer(e.amountCents), .integer(a.principalCents), .integer(a.interestCents),
                    .integer(a.penaltyCents), .integer(e.amountCents),
                ])
            try tables.run(Self.addAgentPayment, [day, agentId, .integer(e.amountCents)])
        case .invoicePaymentRecorded(let e):
            try tables.run(
                Self.addInvoicePayment, [.text(e.paidOn.description), .integer(e.amountCents), .integer(e.amountCents)])
        default:
            return
        }
    }

    private static let insertLoan = ProjectionStatement(
        "INSERT INTO collections_loan_agents (loan_id, agent_id) VALUES (?, ?)")
    private static let selectAgent = ProjectionStatement(
        "SELECT agent_id FROM collections_loan_agents WHERE loan_id = ?")
    private static let addLoanPayment = ProjectionStatement(
        """
        INSERT INTO collections_daily (day, loan_payments_count, loan_collected_cents, loan_principal_cents,
            loan_interest_cents, loan_penalty_cents, invoice_payments_count, invoice_collected_cents,
            total_collected_cents)
        VALUES (?, 1, ?, ?, ?, ?, 0, 0, ?)
        ON CONFLICT (day) DO UPDATE SET loan_payments_count = loan_payments_count + 1,
            loan_collected_cents = loan_collected_cents + excluded.loan_collected_cents,
            loan_principal_cents = loan_principal_cents + excluded.loan_principal_cents,
            loan_interest_cents = loan_interest_cents + excluded.loan_interest_cents,
            loan_penalty_cents = loan_penalty_cents + excluded.loan_penalty_cents,
            total_collected_cents = total_collected_cents + excluded.total_collected_cents
        """)
    private static let addAgentPayment = ProjectionStatement(
        """
        INSERT INTO collections_daily_by_agent (day, agent_id, payments_count, collected_cents)
        VALUES (?, ?, 1, ?)
        ON CONFLICT (day, agent_id) DO UPDATE SET payments_count = payments_count + 1,
            collected_cents = collected_cents + excluded.collected_cents
        """)
    private static let addInvoicePayment = ProjectionStatement(
        """
        INSERT INTO collections_daily (day, loan_payments_count, loan_collected_cents, loan_principal_cents,
            loan_interest_cents, loan_penalty_cents, invoice_payments_count, invoice_collected_cents,
            total_collected_cents)
        VALUES (?, 0, 0, 0, 0, 0, 1, ?, ?)
        ON CONFLICT (day) DO UPDATE SET invoice_payments_count = invoice_payments_count + 1,
            invoice_collected_cents = invoice_collected_cents + excluded.invoice_collected_cents,
            total_collected_cents = total_collected_cents + excluded.total_collected_cents
        """)
}
