import Events
import StrataCore

/// Loans from request to closing, and the payments on them.
enum LoanDecisions {
    /// The account's agent or an admin asks for a loan on an ACTIVE account. The loan's
    /// agent is the account's agent now, whoever asks and wherever the account moves later.
    static func request(_ c: RequestLoan, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let actor = try d.actor([.admin, .agent], doing: "request loans")
        let account = try AccountDecisions.existing(c.accountId, d)
        if actor.role == .agent && actor.userId != account.assignedAgentId {
            throw .forbidden("NOT_ASSIGNED_AGENT", "account \(c.accountId) is assigned to another agent")
        }
        try d.checkExpectedVersion(.loan(c.loanId))
        if d.state.loans[c.loanId] != nil { throw .rejected("LOAN_ALREADY_EXISTS", "loan \(c.loanId) already exists") }
        guard account.status == .active else {
            throw .rejected("ACCOUNT_NOT_ACTIVE", "account \(c.accountId) is \(account.status.rawValue), not ACTIVE")
        }
        let event = LoanRequested(
            loanId: c.loanId, accountId: c.accountId, agentId: account.assignedAgentId,
            principalCents: c.principalCents, monthlyRateBp: c.monthlyRateBp, tenureMonths: c.tenureMonths,
            frequency: c.frequency, interestMethod: c.interestMethod ?? .reducing, requestedOn: c.requestedOn ?? d.today,
            requestedBy: actor.userId)
        return d.accept([.loanRequested(event)])
    }

    /// An admin approves a pending loan on or after the day it was requested; the
    /// schedule is computed now and kept in the event.
    static func approve(_ c: ApproveLoan, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let admin = try d.admin(doing: "approve loans")
        let loan = try pending(c.loanId, d)
        let approvedOn = c.approvedOn ?? d.today
        if approvedOn < loan.request.requestedOn {
            throw .rejected(
                "APPROVED_BEFORE_REQUEST",
                "approvedOn \(approvedOn) is before the loan was requested on \(loan.request.requestedOn)")
        }
        let request = loan.request
        let schedule = AmortizationSchedule.schedule(
            principalCents: request.principalCents, monthlyRateBp: request.monthlyRateBp,
            tenureMonths: request.tenureMonths, frequency: request.frequency, method: request.interestMethod,
            approvedOn: approvedOn)
        let event = LoanApproved(loanId: c.loanId, approvedBy: admin.userId, approvedOn: approvedOn, schedule: schedule)
        return d.accept([.loanApproved(event)])
    }

    static func reject(_ c: RejectLoan, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let admin = try d.admin(doing: "reject loans")
        _ = try pending(c.loanId, d)
        return d.accept([.loanRejected(LoanRejected(loanId: c.loanId, rejectedBy: admin.userId, reason: c.reason))])
    }

    private static func pending(_ id: String, _ d: DecisionInput) throws(StrataError) -> LoanState {
        let loan = try existing(id, d)
        try d.checkExpectedVersion(.loan(id))
        guard loan.status == .pendingApproval else {
            throw .rejected("LOAN_NOT_PENDING", "loan \(id) is \(loan.status.rawValue), not PENDING_APPROVAL")
        }
        return loan
    }

    private static func existing(_ id: String, _ d: DecisionInput) throws(StrataError) -> LoanState {
        guard let loan = d.state.loans[id] else { throw .notFound("LOAN_NOT_FOUND", "no loan \(id)") }
        return loan
    }

    /// The loan's agent or an admin records a payment on an ACTIVE loan. Penalty is
    /// accrued as of paidOn, the money allocated, the loan's agent earns commission on the
    /// interest part, and the loan closes when nothing is left to pay.
    static func receivePayment(_ c: ReceivePayment, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let actor = try d.actor([.admin, .agent], doing: "take payments")
        let loan = try existing(c.loanId, d)
        if actor.role == .agent && actor.userId != loan.agentId {
            throw .forbidden("NOT_LOAN_AGENT", "loan \(c.loanId) belongs to another agent")
        }
        try d.checkExpectedVersion(.loan(c.loanId))
        guard loan.status == .active, let approvedOn = loan.approvedOn else {
            throw .rejected("LOAN_NOT_ACTIVE", "loan \(c.loanId) is \(loan.status.rawValue), not ACTIVE")
        }
        if loan.paymentIds.contains(c.paymentId) {
            throw .rejected("DUPLICATE_PAYMENT", "payment \(c.paymentId) is already recorded on loan \(c.loanId)")
        }
        if let reference = c.externalRef, loan.externalRefs.contains(reference) {
            throw .rejected(
                "DUPLICATE_PAYMENT_REFERENCE", "a payment with reference \(reference) is already recorded on this loan")
        }
        if c.paidOn < approvedOn {
            throw .rejected("PAYMENT_BEFORE_APPROVAL", "paidOn \(c.paidOn) is before the loan was approved on \(approvedOn)")
        }
        if let last = loan.lastPaidOn, c.paidOn < last {
            throw .rejected("PAYMENT_DATE_OUT_OF_ORDER", "paidOn \(c.paidOn) is before the previous payment's \(last)")
        }
        let owed = PaymentAllocator.owed(loan.installments, on: c.paidOn)
        if c.amountCents > owed {
            throw .rejected(
                "AMOUNT_EXCEEDS_OUTSTANDING", "\(c.amountCents) is more than the \(owed) owed on \(c.paidOn)")
        }

        let result = PaymentAllocator.allocate(amountCents: c.amountCents, to: loan.installments, paidOn: c.paidOn)
        var events: [StrataEvent] = [
            .paymentReceived(
                PaymentReceived(
                    paymentId: c.paymentId, loanId: c.loanId, amountCents: c.amountCents, paidOn: c.paidOn,
                    method: c.method ?? .cash, externalRef: c.externalRef, notes: c.notes, receivedBy: actor.userId,
                    type: result.type, allocation: result.allocation, perInstallment: result.perInstallment,
                    outstandingAfterCents: result.outstandingAfterCents))
        ]
        let rate = d.state.settings.commissionRateBp(
            for: loan.agentId, configuredDefault: d.context.configuration.defaultCommissionRateBp)
        let commission = Commission.amount(interestCents: result.allocation.interestCents, rateBp: rate)
        if commission > 0 {
            events.append(
                .commissionEarned(
                    CommissionEarned(
                        agentId: loan.agentId, loanId: c.loanId, paymentId: c.paymentId,
                        interestCents: result.allocation.interestCents, rateBp: rate, commissionCents: commission)))
        }
        if result.outstandingAfterCents == 0 {
            events.append(.loanClosed(LoanClosed(loanId: c.loanId, closedOn: c.paidOn, paymentId: c.paymentId)))
        }
        return d.accept(events)
    }
}
