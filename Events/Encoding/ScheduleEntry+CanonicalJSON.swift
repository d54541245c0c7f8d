import StrataCore

/// A LoanApproved carries one entry per installment, and going through the generic encoder's
/// containers field by field was a sixth of the command service's work: an entry writes its
/// own canonical JSON, members in RFC 8785 order. `CatalogTests` holds it to the generic form.
extension ScheduleEntry: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        out.append(contentsOf: #"{"dueDate":"#.utf8)
        try dueDate.writeCanonicalJSON(to: &out)
        out.append(contentsOf: #","interestCents":"#.utf8)
        CanonicalJSON.appendInteger(interestCents, to: &out)
        out.append(contentsOf: #","number":"#.utf8)
        CanonicalJSON.appendInteger(Int64(number), to: &out)
        out.append(contentsOf: #","principalCents":"#.utf8)
        CanonicalJSON.appendInteger(principalCents, to: &out)
        out.append(contentsOf: #","remainingBalanceCents":"#.utf8)
        CanonicalJSON.appendInteger(remainingBalanceCents, to: &out)
        out.append(contentsOf: #","totalCents":"#.utf8)
        CanonicalJSON.appendInteger(totalCents, to: &out)
        out.append(UInt8(ascii: "}"))
    }
}
