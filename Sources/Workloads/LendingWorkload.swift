import CommandService
import Domain
import Events
import StrataCore

/// A lending and invoicing business as a stream of command bodies, for the demo, the
/// benchmarks and the end-to-end tests: field agents who register and are approved,
/// borrowers' accounts, and per loan the request, the approval and a first payment.
///
/// Deterministic: the same settings give the same bodies, byte for byte. Every id starts
/// with `prefix`, so runs against one store never collide. Every business date is `today`
/// as the caller gives it (never the server's default), so a run that crosses midnight
/// still dates its payments on or after their approvals.
public struct LendingWorkload: Sendable {
    public let admin: String
    public let prefix: String
    public let agents: Int
    public let accountsPerAgent: Int
    public let today: LocalDate

    public init(admin: String, prefix: String, agents: Int = 4, accountsPerAgent: Int = 25, today: LocalDate) {
        precondition(agents > 0 && accountsPerAgent > 0)
        self.admin = admin
        self.prefix = prefix
        self.agents = agents
        self.accountsPerAgent = accountsPerAgent
        self.today = today
    }

    public var accounts: Int { agents * accountsPerAgent }

    public func agentId(_ agent: Int) -> String { "\(prefix)-agent-\(agent)" }
    public func accountId(_ account: Int) -> String { "\(prefix)-acct-\(account)" }
    public func loanId(_ loan: Int) -> String { "\(prefix)-loan-\(loan)" }
    public func invoiceId(_ invoice: Int) -> String { "\(prefix)-inv-\(invoice)" }
    /// The agent serving an account.
    public func agent(ofAccount account: Int) -> Int { account % agents }

    /// The agents register themselves and the admin approves them; then each agent opens
    /// its borrowers' accounts. Every later command depends on these.
    public func setup() -> [CommandBody] {
        var bodies: [CommandBody] = []
        for agent in 0..<agents {
            let id = agentId(agent)
            bodies.append(
                body(
                    "setup-register-\(agent)", actor: id,
                    .registerUser(
                        RegisterUser(
                            userId: id, username: "\(prefix)-agent\(agent)", email: PersonalData("\(id)@agents.example.com"),
                            role: .agent))))
            bodies.append(body("setup-approve-\(agent)", actor: admin, .approveAgent(ApproveAgent(agentId: id))))
        }
        for account in 0..<accounts {
            let agent = agentId(self.agent(ofAccount: account))
            bodies.append(
                body(
                    "setup-open-\(account)", actor: agent,
                    .openAccount(
                        OpenAccount(
                            accountId: accountId(account), name: PersonalData("Borrower \(account)"),
                            phone: PersonalData("+9198450\(String(100_000 + account % 900_000))"),
                            address: PersonalData("\(account % 97 + 1) Market Road, Mysuru"), assignedAgentId: agent))))
        }
        return bodies
    }

    /// One loan's life as a business runs it: requested by the account's agent, approved
    /// by the admin, and a first payment collected by the agent.
    public func loan(_ loan: Int) -> [CommandBody] {
        let account = loan % accounts
        let agent = agentId(self.agent(ofAccount: account))
        let id = loanId(loan)
        let principal = Int64(10_000 + (loan * 7919) % 490_000) * 100
        return [
            body(
                "loan-\(loan)-request", actor: agent,
                .requestLoan(
                    RequestLoan(
                        loanId: id, accountId: accountId(account), principalCents: principal,
                        monthlyRateBp: 300 + loan % 201, tenureMonths: 2 + loan % 11,
                        frequency: LoanFrequency.allCases[loan % 3], requestedOn: today))),
            body("loan-\(loan)-approve", actor: admin, .approveLoan(ApproveLoan(loanId: id, approvedOn: today))),
            body(
                "loan-\(loan)-pay", actor: agent,
                .receivePayment(
                    ReceivePayment(
                        paymentId: "\(id)-p1", loanId: id, amountCents: principal / 20, paidOn: today,
                        method: PaymentMethod.allCases[loan % 3]))),
        ]
    }

    /// One invoice: issued by an agent to a customer, then paid in full.
    public func invoice(_ invoice: Int) -> [CommandBody] {
        let agent = agentId(invoice % agents)
        let id = invoiceId(invoice)
        let quantityMilli: Int64 = 1000 * Int64(1 + invoice % 5)
        let unitPrice = Int64(500 + (invoice * 31) % 9500) * 100
        let line = InvoiceLineRequest(
            description: "Service visit \(invoice)", quantityMilli: quantityMilli, unitPriceCents: unitPrice,
            taxRateBp: DomainConfiguration().taxSlabsBp[invoice % 5])
        let total = InvoiceArithmetic.totals([InvoiceArithmetic.line(line, split: .unsplit)], split: .unsplit).totalCents
        return [
            body(
                "invoice-\(invoice)-create", actor: agent,
                .createInvoice(
                    CreateInvoice(
                        invoiceId: id,
                        customer: InvoiceCustomer(partyId: "\(prefix)-party-\(invoice % 50)", name: PersonalData("Customer \(invoice % 50)")),
                        issueDate: today, dueDate: today.adding(days: 30), lines: [line]))),
            body(
                "invoice-\(invoice)-pay", actor: agent,
                .recordInvoicePayment(
                    RecordInvoicePayment(
                        paymentId: "\(id)-p1", invoiceId: id, amountCents: total, paidOn: today,
                        method: .bank))),
        ]
    }

    private func body(_ name: String, actor: String, _ command: Command) -> CommandBody {
        guard case .object(let payload) = command.payloadJSON else { preconditionFailure("a payload is an object") }
        return CommandBody(id: "\(prefix)-\(name)", type: command.type, actor: actor, payload: payload)
    }
}
