import StrataCore

// The earnings, cash-out and settings events write their own canonical data, members in key order (see
// `CanonicalObjectWriter`), mirroring their readers in `Events/Decoding`.

extension CommissionEarned: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("agentId", agentId)
            o.integer("commissionCents", commissionCents)
            o.integer("interestCents", interestCents)
            o.string("loanId", loanId)
            o.string("paymentId", paymentId)
            o.int("rateBp", rateBp)
        }
    }
}

extension EarningsReserved: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("agentId", agentId)
            o.integer("amountCents", amountCents)
            o.string("cashoutId", cashoutId)
        }
    }
}

extension EarningsReleased: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("agentId", agentId)
            o.integer("amountCents", amountCents)
            o.string("cashoutId", cashoutId)
        }
    }
}

extension CashoutRequested: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("agentId", agentId)
            o.integer("amountCents", amountCents)
            o.string("cashoutId", cashoutId)
            o.string("requestedBy", requestedBy)
        }
    }
}

extension CashoutApproved: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("agentId", agentId)
            o.integer("amountCents", amountCents)
            o.string("approvedBy", approvedBy)
            o.string("cashoutId", cashoutId)
        }
    }
}

extension CashoutRejected: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("agentId", agentId)
            o.integer("amountCents", amountCents)
            o.string("cashoutId", cashoutId)
            o.string("reason", reason)
            o.string("rejectedBy", rejectedBy)
        }
    }
}

extension CommissionRateChanged: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.optionalString("agentId", agentId)
            o.string("changedBy", changedBy)
            o.int("rateBp", rateBp)
        }
    }
}
