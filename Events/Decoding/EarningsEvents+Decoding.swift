import StrataCore

// The earnings, cash-out and settings events read from their canonical data, members in
// key order (see `CanonicalEventDecoder`).

extension CommissionEarned {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let agentId = try r.string("agentId")
        let commissionCents = try r.integer("commissionCents")
        let interestCents = try r.integer("interestCents")
        let loanId = try r.string("loanId")
        let paymentId = try r.string("paymentId")
        let rateBp = try r.int("rateBp")
        self.init(
            agentId: agentId, loanId: loanId, paymentId: paymentId, interestCents: interestCents, rateBp: rateBp,
            commissionCents: commissionCents)
    }
}

extension EarningsReserved {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let agentId = try r.string("agentId")
        let amountCents = try r.integer("amountCents")
        let cashoutId = try r.string("cashoutId")
        self.init(agentId: agentId, cashoutId: cashoutId, amountCents: amountCents)
    }
}

extension EarningsReleased {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let agentId = try r.string("agentId")
        let amountCents = try r.integer("amountCents")
        let cashoutId = try r.string("cashoutId")
        self.init(agentId: agentId, cashoutId: cashoutId, amountCents: amountCents)
    }
}

extension CashoutRequested {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let agentId = try r.string("agentId")
        let amountCents = try r.integer("amountCents")
        let cashoutId = try r.string("cashoutId")
        let requestedBy = try r.string("requestedBy")
        self.init(cashoutId: cashoutId, agentId: agentId, amountCents: amountCents, requestedBy: requestedBy)
    }
}

extension CashoutApproved {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let agentId = try r.string("agentId")
        let amountCents = try r.integer("amountCents")
        let approvedBy = try r.string("approvedBy")
        let cashoutId = try r.string("cashoutId")
        self.init(cashoutId: cashoutId, agentId: agentId, amountCents: amountCents, approvedBy: approvedBy)
    }
}

extension CashoutRejected {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let agentId = try r.string("agentId")
        let amountCents = try r.integer("amountCents")
        let cashoutId = try r.string("cashoutId")
        let reason = try r.string("reason")
        let rejectedBy = try r.string("rejectedBy")
        self.init(
            cashoutId: cashoutId, agentId: agentId, amountCents: amountCents, rejectedBy: rejectedBy, reason: reason)
    }
}

extension CommissionRateChanged {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let agentId = try r.optionalString("agentId")
        let changedBy = try r.string("changedBy")
        let rateBp = try r.int("rateBp")
        self.init(agentId: agentId, rateBp: rateBp, changedBy: changedBy)
    }
}
