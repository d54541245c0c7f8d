import StrataCore

/// A LoanApproved carries one entry per installment, which makes this the most written value
/// of all (`CatalogTests` holds it to the generic form on random values).
extension ScheduleEntry: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            try o.date("dueDate", dueDate)
            o.integer("interestCents", interestCents)
            o.int("number", number)
            o.integer("principalCents", principalCents)
            o.integer("remainingBalanceCents", remainingBalanceCents)
            o.integer("totalCents", totalCents)
        }
    }
}
