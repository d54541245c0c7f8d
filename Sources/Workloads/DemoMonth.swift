import CommandService
import Domain
import Events
import StrataCore

/// A month in the life of a small lending and invoicing business, as the commands its apps
/// send: what `strata demo` drives through the running system.
///
/// Five agents sign up (four are approved, one turned away, one still waiting), open
/// two dozen borrower accounts and request forty loans of every frequency and both interest
/// methods, some back-dated a few months so the overdue book has every aging bucket. The
/// admin approves most, rejects some and leaves a few pending. Borrowers pay on time, late,
/// in part, not at all after the first installment, or pay off early. Invoices go to six
/// customers (CGST+SGST, IGST and unsplit tax) and are paid in full, in part, not at all,
/// or cancelled. Cash-outs come last, sized from what the read models say each agent may
/// collect (`cashouts(collectible:)`).
///
/// Deterministic for a given prefix, `today` and limits; every id starts with the prefix, so
/// demos can run again and again against one store. Schedules are computed with the same
/// calculator the service uses, so every payment fits what is owed. The commands keep within
/// the domain limits the service was configured with (`limits`): a principal is at most the
/// maximum, a tax rate is one of the slabs, and no cash-out below the minimum is asked for.
public struct DemoMonth: Sendable {
    public let admin: String
    public let prefix: String
    public let today: LocalDate
    public let limits: DomainConfiguration

    public static let agents = 6
    public static let approvedAgents = 4
    public static let accounts = 24
    public static let loans = 40
    public static let invoices = 15
    public static let customers = 6
    /// The loans of the older book, requested 40 to 130 days before today (`daysBack(ofOlderLoan:)`)
    /// so that the overdue book has every aging bucket; the rest are requested within the month.
    public static let olderLoans = 6

    /// How many days before `today` the oldest command is dated (the oldest loan request), which
    /// the service's limit on back-dating must allow.
    public static var furthestBackDays: Int { daysBack(ofOlderLoan: olderLoans - 1) }

    static func daysBack(ofOlderLoan n: Int) -> Int { 40 + n * 18 }

    public init(admin: String, prefix: String, today: LocalDate, limits: DomainConfiguration = DomainConfiguration()) {
        self.admin = admin
        self.prefix = prefix
        self.today = today
        self.limits = limits
    }

    /// The first day of the month that ends today.
    public var firstDay: LocalDate { today.adding(days: -29) }

    public func agentId(_ n: Int) -> String { "\(prefix)-agent-\(n)" }
    public func accountId(_ n: Int) -> String { "\(prefix)-acct-\(n)" }
    public func loanId(_ n: Int) -> String { "\(prefix)-loan-\(n)" }
    public func invoiceId(_ n: Int) -> String { "\(prefix)-inv-\(n)" }
    public func partyId(_ n: Int) -> String { "\(prefix)-party-\(n)" }
    public func cashoutId(_ n: Int) -> String { "\(prefix)-cashout-\(n)" }

    /// Everything but the cash-outs, in an order the service accepts when sent pipelined
    /// on one connection (commands from one connection are decided in order).
    public func commands() -> [CommandBody] {
        agentsAndAccounts() + loansAndPayments() + invoicesAndPayments()
            + [
                body(
                    "suspend-\(Self.accounts - 1)", actor: admin,
                    .changeAccountStatus(
                        ChangeAccountStatus(
                            accountId: accountId(Self.accounts - 1), status: .suspended, reason: "address not verified")))
            ]
    }

    // MARK: - Agents and accounts

    private func agentsAndAccounts() -> [CommandBody] {
        var bodies: [CommandBody] = []
        let names = ["Asha Rao", "Vikram Shetty", "Meena Iyer", "Farhan Khan", "Lakshmi Nair", "Deepak Gowda"]
        for n in 0..<Self.agents {
            let id = agentId(n)
            bodies.append(
                body(
                    "register-\(n)", actor: id,
                    .registerUser(
                        RegisterUser(
                            userId: id, username: "\(prefix)a\(n)", email: PersonalData("\(id)@field.example.com"),
                            role: .agent))))
            switch n {
            case 0..<Self.approvedAgents:
                bodies.append(body("approve-agent-\(n)", actor: admin, .approveAgent(ApproveAgent(agentId: id))))
                bodies.append(
                    body(
                        "profile-\(n)", actor: id,
                        .updateProfile(
                            UpdateProfile(
                                userId: id, fullName: PersonalData(names[n]),
                                phone: PersonalData("+9198860\(String(10_000 + n * 1111))")))))
            case Self.approvedAgents:
                bodies.append(
                    body(
                        "reject-agent-\(n)", actor: admin,
                        .rejectAgent(RejectAgent(agentId: id, reason: "identity documents incomplete"))))
            default:
                break  // still waiting for a decision
            }
        }
        bodies.append(
            body("rate-agent-0", actor: admin, .setCommissionRate(SetCommissionRate(agentId: agentId(0), rateBp: 1200))))
        let streets = ["Market Road", "Temple Street", "Lake View", "Station Road", "Mill Lane", "Fort Area"]
        for n in 0..<Self.accounts {
            let agent = agentId(agent(ofAccount: n))
            bodies.append(
                body(
                    "open-\(n)", actor: agent,
                    .openAccount(
                        OpenAccount(
                            accountId: accountId(n), name: PersonalData("Borrower \(n + 1)"),
                            phone: PersonalData("+9194480\(String(20_000 + n * 37))"),
                            email: n % 3 == 0 ? PersonalData("borrower\(n + 1)@mail.example.com") : nil,
                            address: PersonalData("\(n % 40 + 1) \(streets[n % streets.count]), Mysuru"),
                            assignedAgentId: agent))))
        }
        return bodies
    }

    public func agent(ofAccount account: Int) -> Int { account % Self.approvedAgents }

    // MARK: - Loans

    /// How a loan's borrower pays.
    enum Habit {
        case onTime, late, partial, defaulting, earlyPayoff
        /// Never paid a thing: the oldest loan of the book, deep in the 90+ bucket.
        case neverPaid

        static let cycle: [Habit] = [.onTime, .late, .partial, .defaulting, .earlyPayoff]
    }

    private func loansAndPayments() -> [CommandBody] {
        var bodies: [CommandBody] = []
        for n in 0..<Self.loans {
            let account = n % Self.accounts
            let agent = agentId(agent(ofAccount: account))
            let id = loanId(n)
            let frequency = LoanFrequency.allCases[n % 3]
            let method: InterestMethod = n % 4 == 3 ? .flat : .reducing
            let principal = min(Int64(20_000 + (n * 7919) % 180_000) * 100, limits.maximumPrincipalCents)
            let rate = 300 + (n * 37) % 201
            let tenure = 2 + n % 11
            let requestedOn =
                n < Self.olderLoans
                ? today.adding(days: -Self.daysBack(ofOlderLoan: n)) : firstDay.adding(days: (n * 3) % 28)
            bodies.append(
                body(
                    "loan-\(n)-request", actor: agent,
                    .requestLoan(
                        RequestLoan(
                            loanId: id, accountId: accountId(account), principalCents: principal, monthlyRateBp: rate,
                            tenureMonths: tenure, frequency: frequency, interestMethod: method, requestedOn: requestedOn))))
            if n % 13 == 6 {
                bodies.append(
                    body("loan-\(n)-reject", actor: admin, .rejectLoan(RejectLoan(loanId: id, reason: "income not verified"))))
                continue
            }
            if n % 17 == 8 { continue }  // still pending approval
            let approvedOn = min(requestedOn.adding(days: n % 2), today)
            bodies.append(body("loan-\(n)-approve", actor: admin, .approveLoan(ApproveLoan(loanId: id, approvedOn: approvedOn))))
            let schedule = AmortizationSchedule.schedule(
                principalCents: principal, monthlyRateBp: rate, tenureMonths: tenure, frequency: frequency,
                method: method, approvedOn: approvedOn)
            let habit = n == 5 ? Habit.neverPaid : Habit.cycle[n % Habit.cycle.count]
            // A principal capped low enough leaves installments of 0 cents, which nobody pays.
            let paid = payments(schedule, habit: habit, approvedOn: approvedOn).filter { $0.amount > 0 }
            for (k, payment) in paid.enumerated() {
                let method = PaymentMethod.allCases[(n + k) % 3]
                bodies.append(
                    body(
                        "loan-\(n)-pay-\(k + 1)", actor: k % 4 == 3 ? admin : agent,
                        .receivePayment(
                            ReceivePayment(
                                paymentId: "\(id)-p\(k + 1)", loanId: id, amountCents: payment.amount, paidOn: payment.on,
                                method: method, externalRef: method == .wallet ? "wtx-\(prefix)-\(n)-\(k + 1)" : nil))))
            }
        }
        return bodies
    }

    /// The payments a borrower with `habit` makes by today, oldest first.
    func payments(_ schedule: [ScheduleEntry], habit: Habit, approvedOn: LocalDate) -> [(amount: Int64, on: LocalDate)] {
        let due = schedule.filter { $0.dueDate <= today }
        switch habit {
        case .onTime:
            return due.map { ($0.totalCents, $0.dueDate) }
        case .late:
            // Four days late, the installment's amount: the penalty accrued first leaves a little unpaid.
            return due.compactMap { entry in
                let on = entry.dueDate.adding(days: 4)
                return on <= today ? (entry.totalCents, on) : nil
            }
        case .partial:
            return due.map { ($0.totalCents / 2, $0.dueDate) }
        case .defaulting:
            return due.prefix(1).map { ($0.totalCents, $0.dueDate) }
        case .neverPaid:
            return []
        case .earlyPayoff:
            // The first installment on time, then everything left, before any is late.
            let total = schedule.reduce(Int64(0)) { $0 + $1.totalCents }
            guard let first = schedule.first else { return [] }
            if first.dueDate > today { return [(total, today)] }
            let payoffOn = min(schedule.count > 1 ? schedule[1].dueDate : today, today)
            return [(first.totalCents, first.dueDate), (total - first.totalCents, max(payoffOn, first.dueDate))]
        }
    }

    // MARK: - Invoices

    private func invoicesAndPayments() -> [CommandBody] {
        var bodies: [CommandBody] = []
        let customerNames = [
            "Sri Ganesh Traders", "Kaveri Textiles", "Nandi Agro Foods", "Deccan Hardware", "Malnad Spices",
            "Coastal Fisheries",
        ]
        let items = ["Field survey", "Loan documentation", "Collection service", "Training session", "Audit support"]
        for n in 0..<Self.invoices {
            let party = n % Self.customers
            let customerState: String? = party < 3 ? "29" : party < 5 ? "27" : nil
            let lines = (0..<(1 + n % 3)).map { k in
                InvoiceLineRequest(
                    description: "\(items[(n + k) % items.count]) \(n + 1)", quantityMilli: Int64(1000 * (1 + (n + k) % 4)),
                    unitPriceCents: Int64(1_500 + (n * 311 + k * 97) % 8_500) * 100,
                    taxRateBp: limits.taxSlabsBp[(n + k) % limits.taxSlabsBp.count], discountBp: k == 1 ? 500 : nil)
            }
            let issueDate = firstDay.adding(days: n * 2)
            let dueDate = issueDate.adding(days: 15)
            let id = invoiceId(n)
            let creator = n % 3 == 0 ? admin : agentId(n % Self.approvedAgents)
            bodies.append(
                body(
                    "invoice-\(n)-create", actor: creator,
                    .createInvoice(
                        CreateInvoice(
                            invoiceId: id,
                            customer: InvoiceCustomer(
                                partyId: partyId(party), name: PersonalData(customerNames[party]),
                                taxId: party < 5 ? PersonalData("29ABCDE\(1000 + party)F1Z\(party)") : nil,
                                stateCode: customerState),
                            issueDate: issueDate, dueDate: dueDate, lines: lines, sellerStateCode: "29"))))
            let split = InvoiceArithmetic.TaxSplit(sellerStateCode: "29", customerStateCode: customerState)
            let total = InvoiceArithmetic.totals(lines.map { InvoiceArithmetic.line($0, split: split) }, split: split).totalCents
            func pay(_ k: Int, _ amount: Int64, on date: LocalDate) {
                guard date <= today else { return }
                bodies.append(
                    body(
                        "invoice-\(n)-pay-\(k)", actor: creator,
                        .recordInvoicePayment(
                            RecordInvoicePayment(
                                paymentId: "\(id)-p\(k)", invoiceId: id, amountCents: amount, paidOn: date,
                                method: k == 1 ? .bank : .wallet))))
            }
            switch n % 5 {
            case 0: pay(1, total, on: issueDate.adding(days: 10))
            case 1:
                pay(1, total / 2, on: issueDate.adding(days: 7))
                pay(2, total - total / 2, on: dueDate.adding(days: 3))
            case 2: pay(1, total / 3, on: dueDate)
            case 3: break  // unpaid: overdue once its due date passes
            default:
                bodies.append(
                    body(
                        "invoice-\(n)-cancel", actor: admin,
                        .cancelInvoice(CancelInvoice(invoiceId: id, reason: "issued to the wrong branch"))))
            }
        }
        return bodies
    }

    // MARK: - Cash-outs

    /// Each approved agent with enough collectible commission asks for half of it; the admin
    /// approves two, rejects one and leaves the rest pending.
    public func cashouts(collectible: [String: Int64]) -> [CommandBody] {
        var bodies: [CommandBody] = []
        for n in 0..<Self.approvedAgents {
            let agent = agentId(n)
            let amount = (collectible[agent] ?? 0) / 2 / 100 * 100
            guard amount >= limits.minimumCashoutCents else { continue }
            bodies.append(
                body(
                    "cashout-\(n)-request", actor: agent,
                    .requestCashout(RequestCashout(cashoutId: cashoutId(n), agentId: agent, amountCents: amount))))
            switch n % 4 {
            case 0, 1: bodies.append(body("cashout-\(n)-approve", actor: admin, .approveCashout(ApproveCashout(cashoutId: cashoutId(n)))))
            case 2:
                bodies.append(
                    body(
                        "cashout-\(n)-reject", actor: admin,
                        .rejectCashout(RejectCashout(cashoutId: cashoutId(n), reason: "bank details missing"))))
            default: break
            }
        }
        return bodies
    }

    private func body(_ name: String, actor: String, _ command: Command) -> CommandBody {
        guard case .object(let payload) = command.payloadJSON else { preconditionFailure("a payload is an object") }
        return CommandBody(id: "\(prefix)-\(name)", type: command.type, actor: actor, payload: payload)
    }
}
