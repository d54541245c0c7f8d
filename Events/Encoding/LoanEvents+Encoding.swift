import StrataCore

// The loan events write their own canonical data, members in key order (see
// `CanonicalObjectWriter`), mirroring their readers in `Events/Decoding`.

extension LoanRequested: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("accountId", accountId)
            o.string("agentId", agentId)
            o.enumeration("frequency", frequency)
            o.enumeration("interestMethod", interestMethod)
            o.string("loanId", loanId)
            o.int("monthlyRateBp", monthlyRateBp)
            o.integer("principalCents", principalCents)
            o.string("requestedBy", requestedBy)
            try o.date("requestedOn", requestedOn)
            o.int("tenureMonths", tenureMonths)
        }
    }
}

extension LoanApproved: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("approvedBy", approvedBy)
            try o.date("approvedOn", approvedOn)
            o.string("loanId", loanId)
            try o.objects("schedule", schedule)
        }
    }
}

extension LoanRejected: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("loanId", loanId)
            o.string("reason", reason)
            o.string("rejectedBy", rejectedBy)
        }
    }
}

extension PaymentAllocation: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.integer("interestCents", interestCents)
            o.integer("penaltyCents", penaltyCents)
            o.integer("principalCents", principalCents)
        }
    }
}

extension InstallmentAllocation: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.integer("interestCents", interestCents)
            o.int("number", number)
            o.integer("penaltyAccruedCents", penaltyAccruedCents)
            o.integer("penaltyCents", penaltyCents)
            o.integer("principalCents", principalCents)
        }
    }
}

extension PaymentReceived: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            try o.object("allocation", allocation)
            o.integer("amountCents", amountCents)
            o.optionalString("externalRef", externalRef)
            o.string("loanId", loanId)
            o.enumeration("method", method)
            o.optionalString("notes", notes)
            o.integer("outstandingAfterCents", outstandingAfterCents)
            try o.date("paidOn", paidOn)
            o.string("paymentId", paymentId)
            try o.objects("perInstallment", perInstallment)
            o.string("receivedBy", receivedBy)
            o.enumeration("type", type)
        }
    }
}

extension LoanClosed: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            try o.date("closedOn", closedOn)
            o.string("loanId", loanId)
            o.string("paymentId", paymentId)
        }
    }
}
