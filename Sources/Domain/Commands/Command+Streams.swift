import Events
import StrataCore

extension Command {
    /// The streams a decision on this command reads, the actor's own user stream first.
    /// The caller folds exactly these (from its cache or the store) into the
    /// `DomainState` it passes to `decide`; the `Directory` is always whole.
    public func reads(actor: String, configuration: DomainConfiguration) -> [StreamRef] {
        var streams: [StreamRef] = Identifier.isValid(actor) ? [.user(actor)] : []
        switch self {
        case .registerUser(let c): streams.append(.user(c.userId))
        case .approveAgent(let c): streams.append(.user(c.agentId))
        case .rejectAgent(let c): streams.append(.user(c.agentId))
        case .updateProfile(let c): streams.append(.user(c.userId))
        case .openAccount(let c): streams += [.account(c.accountId), .user(c.assignedAgentId)]
        case .updateAccount(let c):
            streams.append(.account(c.accountId))
            if let agent = c.assignedAgentId { streams.append(.user(agent)) }
        case .changeAccountStatus(let c): streams.append(.account(c.accountId))
        case .requestLoan(let c): streams += [.account(c.accountId), .loan(c.loanId)]
        case .approveLoan(let c): streams.append(.loan(c.loanId))
        case .rejectLoan(let c): streams.append(.loan(c.loanId))
        case .receivePayment(let c): streams += [.loan(c.loanId), .settings]
        case .setCommissionRate(let c):
            streams.append(.settings)
            if let agent = c.agentId { streams.append(.user(agent)) }
        case .requestCashout(let c): streams += [.cashout(c.cashoutId), .agent(c.agentId)]
        case .approveCashout(let c): streams.append(.cashout(c.cashoutId))
        case .rejectCashout(let c): streams.append(.cashout(c.cashoutId))
        case .createInvoice(let c):
            streams += [
                .invoice(c.invoiceId), .invoiceSeries(c.series ?? configuration.defaultInvoiceSeries),
                .party(c.customer.partyId),
            ]
        case .recordInvoicePayment(let c): streams.append(.invoice(c.invoiceId))
        case .cancelInvoice(let c): streams.append(.invoice(c.invoiceId))
        case .eraseSubject(let c): streams += [.user(c.subjectId), .account(c.subjectId), .party(c.subjectId)]
        }
        // At most four streams: comparing each with those kept is far cheaper than hashing
        // them into a set (which cost more than the rest of this on the writer's thread).
        var unique: [StreamRef] = []
        unique.reserveCapacity(streams.count)
        for stream in streams where !unique.contains(stream) { unique.append(stream) }
        return unique
    }

    /// The command's own aggregate stream, which a body's `expectedVersion` is about. For
    /// `EraseSubject` it depends on which subject the id turns out to be (nil here).
    public var ownStream: StreamRef? {
        switch self {
        case .registerUser(let c): .user(c.userId)
        case .approveAgent(let c): .user(c.agentId)
        case .rejectAgent(let c): .user(c.agentId)
        case .updateProfile(let c): .user(c.userId)
        case .openAccount(let c): .account(c.accountId)
        case .updateAccount(let c): .account(c.accountId)
        case .changeAccountStatus(let c): .account(c.accountId)
        case .requestLoan(let c): .loan(c.loanId)
        case .approveLoan(let c): .loan(c.loanId)
        case .rejectLoan(let c): .loan(c.loanId)
        case .receivePayment(let c): .loan(c.loanId)
        case .setCommissionRate: .settings
        case .requestCashout(let c): .cashout(c.cashoutId)
        case .approveCashout(let c): .cashout(c.cashoutId)
        case .rejectCashout(let c): .cashout(c.cashoutId)
        case .createInvoice(let c): .invoice(c.invoiceId)
        case .recordInvoicePayment(let c): .invoice(c.invoiceId)
        case .cancelInvoice(let c): .invoice(c.invoiceId)
        case .eraseSubject: nil
        }
    }
}
