import Events
import StrataCore

/// Commission rates and cash-outs. The agent's stream is its ledger (commission earned,
/// money reserved by cash-outs and released by rejections); each cash-out has its own
/// stream for its approval.
enum EarningsDecisions {
    static func setCommissionRate(_ c: SetCommissionRate, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let admin = try d.admin(doing: "set commission rates")
        if let agentId = c.agentId {
            guard let user = d.state.users[agentId] else { throw .notFound("AGENT_NOT_FOUND", "no user \(agentId)") }
            try d.checkExpectedVersion(.settings)
            guard user.role == .agent else {
                throw .rejected("NOT_AN_AGENT", "\(agentId) is \(user.role.rawValue), not an agent")
            }
        } else {
            try d.checkExpectedVersion(.settings)
        }
        let event = CommissionRateChanged(agentId: c.agentId, rateBp: c.rateBp, changedBy: admin.userId)
        return d.accept([.commissionRateChanged(event)])
    }

    /// An approved agent asks for some of their own collectible earnings (earned −
    /// cashed out − pending); the amount is reserved on their ledger until an admin decides.
    static func requestCashout(_ c: RequestCashout, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let agent = try d.actor([.agent], doing: "request cash-outs")
        guard agent.userId == c.agentId else {
            throw .forbidden("NOT_OWN_EARNINGS", "agents cash out only their own earnings, not \(c.agentId)'s")
        }
        try d.checkExpectedVersion(.cashout(c.cashoutId))
        if d.state.cashouts[c.cashoutId] != nil {
            throw .rejected("CASHOUT_ALREADY_EXISTS", "cash-out \(c.cashoutId) already exists")
        }
        let collectible = (d.state.earnings[c.agentId] ?? EarningsState()).collectibleCents
        if c.amountCents > collectible {
            throw .rejected(
                "INSUFFICIENT_EARNINGS", "\(c.amountCents) is more than the \(collectible) collectible")
        }
        return d.accept([
            .cashoutRequested(
                CashoutRequested(
                    cashoutId: c.cashoutId, agentId: c.agentId, amountCents: c.amountCents, requestedBy: agent.userId)),
            .earningsReserved(EarningsReserved(agentId: c.agentId, cashoutId: c.cashoutId, amountCents: c.amountCents)),
        ])
    }

    static func approveCashout(_ c: ApproveCashout, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let admin = try d.admin(doing: "approve cash-outs")
        let cashout = try pending(c.cashoutId, d)
        return d.accept([
            .cashoutApproved(
                CashoutApproved(
                    cashoutId: c.cashoutId, agentId: cashout.agentId, amountCents: cashout.amountCents,
                    approvedBy: admin.userId))
        ])
    }

    static func rejectCashout(_ c: RejectCashout, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let admin = try d.admin(doing: "reject cash-outs")
        let cashout = try pending(c.cashoutId, d)
        return d.accept([
            .cashoutRejected(
                CashoutRejected(
                    cashoutId: c.cashoutId, agentId: cashout.agentId, amountCents: cashout.amountCents,
                    rejectedBy: admin.userId, reason: c.reason)),
            .earningsReleased(
                EarningsReleased(agentId: cashout.agentId, cashoutId: c.cashoutId, amountCents: cashout.amountCents)),
        ])
    }

    private static func pending(_ id: String, _ d: DecisionInput) throws(StrataError) -> CashoutState {
        guard let cashout = d.state.cashouts[id] else { throw .notFound("CASHOUT_NOT_FOUND", "no cash-out \(id)") }
        try d.checkExpectedVersion(.cashout(id))
        guard cashout.status == .pending else {
            throw .rejected("CASHOUT_NOT_PENDING", "cash-out \(id) was already decided")
        }
        return cashout
    }
}
