import StrataCore

// The invoice events write their own canonical data, members in key order (see
// `CanonicalObjectWriter`), mirroring their readers in `Events/Decoding`.

extension InvoiceCustomer: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.personalData("name", name)
            o.string("partyId", partyId)
            o.optionalString("stateCode", stateCode)
            o.optionalPersonalData("taxId", taxId)
        }
    }
}

extension InvoiceLine: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.integer("amountCents", amountCents)
            o.optionalInteger("cgstCents", cgstCents)
            o.string("description", description)
            o.optionalInt("discountBp", discountBp)
            o.integer("discountCents", discountCents)
            o.optionalInteger("igstCents", igstCents)
            o.integer("quantityMilli", quantityMilli)
            o.optionalInteger("sgstCents", sgstCents)
            o.integer("taxCents", taxCents)
            o.int("taxRateBp", taxRateBp)
            o.integer("taxableCents", taxableCents)
            o.integer("unitPriceCents", unitPriceCents)
        }
    }
}

extension InvoiceTotals: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.optionalInteger("cgstCents", cgstCents)
            o.integer("discountCents", discountCents)
            o.optionalInteger("igstCents", igstCents)
            o.optionalInteger("sgstCents", sgstCents)
            o.integer("subtotalCents", subtotalCents)
            o.integer("taxCents", taxCents)
            o.integer("taxableCents", taxableCents)
            o.integer("totalCents", totalCents)
        }
    }
}

extension InvoiceCreated: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("createdBy", createdBy)
            try o.object("customer", customer)
            try o.date("dueDate", dueDate)
            o.string("invoiceId", invoiceId)
            o.string("invoiceNumber", invoiceNumber)
            try o.date("issueDate", issueDate)
            try o.objects("lines", lines)
            o.optionalString("notes", notes)
            o.optionalString("sellerStateCode", sellerStateCode)
            o.string("series", series)
            try o.object("totals", totals)
        }
    }
}

extension InvoicePaymentRecorded: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.integer("amountCents", amountCents)
            o.integer("balanceCents", balanceCents)
            o.string("invoiceId", invoiceId)
            o.enumeration("method", method)
            try o.date("paidOn", paidOn)
            o.integer("paidTotalCents", paidTotalCents)
            o.string("paymentId", paymentId)
            o.string("recordedBy", recordedBy)
            o.enumeration("status", status)
        }
    }
}

extension InvoicePaid: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("invoiceId", invoiceId)
            try o.date("paidOn", paidOn)
            o.integer("paidTotalCents", paidTotalCents)
        }
    }
}

extension InvoiceCancelled: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("cancelledBy", cancelledBy)
            o.string("invoiceId", invoiceId)
            o.string("reason", reason)
        }
    }
}

extension InvoiceNumberAllocated: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("invoiceId", invoiceId)
            o.string("invoiceNumber", invoiceNumber)
            o.integer("sequence", sequence)
            o.string("series", series)
        }
    }
}
