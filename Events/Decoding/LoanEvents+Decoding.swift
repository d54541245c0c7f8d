import StrataCore

// The loan events read from their canonical data, members in key order (see
// `CanonicalEventDecoder`).

extension LoanRequested {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let accountId = try r.string("accountId")
        let agentId = try r.string("agentId")
        let frequency = try r.enumeration("frequency", LoanFrequency.self)
        let interestMethod = try r.enumeration("interestMethod", InterestMethod.self)
        let loanId = try r.string("loanId")
        let monthlyRateBp = try r.int("monthlyRateBp")
        let principalCents = try r.integer("principalCents")
        let requestedBy = try r.string("requestedBy")
        let requestedOn = try r.date("requestedOn")
        let tenureMonths = try r.int("tenureMonths")
        self.init(
            loanId: loanId, accountId: accountId, agentId: agentId, principalCents: principalCents,
            monthlyRateBp: monthlyRateBp, tenureMonths: tenureMonths, frequency: frequency,
            interestMethod: interestMethod, requestedOn: requestedOn, requestedBy: requestedBy)
    }
}

extension ScheduleEntry {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let dueDate = try r.date("dueDate")
        let interestCents = try r.integer("interestCents")
        let number = try r.int("number")
        let principalCents = try r.integer("principalCents")
        let remainingBalanceCents = try r.integer("remainingBalanceCents")
        let totalCents = try r.integer("totalCents")
        self.init(
            number: number, dueDate: dueDate, principalCents: principalCents, interestCents: interestCents,
            totalCents: totalCents, remainingBalanceCents: remainingBalanceCents)
    }
}

extension LoanApproved {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let approvedBy = try r.string("approvedBy")
        let approvedOn = try r.date("approvedOn")
        let loanId = try r.string("loanId")
        let schedule = try r.objects("schedule") { r throws(CanonicalJSONReader.GiveUp) in
            try ScheduleEntry(canonical: &r)
        }
        self.init(loanId: loanId, approvedBy: approvedBy, approvedOn: approvedOn, schedule: schedule)
    }
}

extension LoanRejected {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let loanId = try r.string("loanId")
        let reason = try r.string("reason")
        let rejectedBy = try r.string("rejectedBy")
        self.init(loanId: loanId, rejectedBy: rejectedBy, reason: reason)
    }
}

extension PaymentAllocation {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let interestCents = try r.integer("interestCents")
        let penaltyCents = try r.integer("penaltyCents")
        let principalCents = try r.integer("principalCents")
        self.init(penaltyCents: penaltyCents, interestCents: interestCents, principalCents: principalCents)
    }
}

extension InstallmentAllocation {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let interestCents = try r.integer("interestCents")
        let number = try r.int("number")
        let penaltyAccruedCents = try r.integer("penaltyAccruedCents")
        let penaltyCents = try r.integer("penaltyCents")
        let principalCents = try r.integer("principalCents")
        self.init(
            number: number, penaltyAccruedCents: penaltyAccruedCents, penaltyCents: penaltyCents,
            interestCents: interestCents, principalCents: principalCents)
    }
}

extension PaymentReceived {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let allocation = try r.object("allocation") { r throws(CanonicalJSONReader.GiveUp) in
            try PaymentAllocation(canonical: &r)
        }
        let amountCents = try r.integer("amountCents")
        let externalRef = try r.optionalString("externalRef")
        let loanId = try r.string("loanId")
        let method = try r.enumeration("method", PaymentMethod.self)
        let notes = try r.optionalString("notes")
        let outstandingAfterCents = try r.integer("outstandingAfterCents")
        let paidOn = try r.date("paidOn")
        let paymentId = try r.string("paymentId")
        let perInstallment = try r.objects("perInstallment") { r throws(CanonicalJSONReader.GiveUp) in
            try InstallmentAllocation(canonical: &r)
        }
        let receivedBy = try r.string("receivedBy")
        let type = try r.enumeration("type", PaymentType.self)
        self.init(
            paymentId: paymentId, loanId: loanId, amountCents: amountCents, paidOn: paidOn, method: method,
            externalRef: externalRef, notes: notes, receivedBy: receivedBy, type: type, allocation: allocation,
            perInstallment: perInstallment, outstandingAfterCents: outstandingAfterCents)
    }
}

extension LoanClosed {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let closedOn = try r.date("closedOn")
        let loanId = try r.string("loanId")
        let paymentId = try r.string("paymentId")
        self.init(loanId: loanId, closedOn: closedOn, paymentId: paymentId)
    }
}
