import StrataCore

// The invoice events read from their canonical data, members in key order (see
// `CanonicalEventDecoder`).

extension InvoiceCustomer {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let name = try r.personalData("name")
        let partyId = try r.string("partyId")
        let stateCode = try r.optionalString("stateCode")
        let taxId = try r.optionalPersonalData("taxId")
        self.init(partyId: partyId, name: name, taxId: taxId, stateCode: stateCode)
    }
}

extension InvoiceLine {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let amountCents = try r.integer("amountCents")
        let cgstCents = try r.optionalInteger("cgstCents")
        let description = try r.string("description")
        let discountBp = try r.optionalInt("discountBp")
        let discountCents = try r.integer("discountCents")
        let igstCents = try r.optionalInteger("igstCents")
        let quantityMilli = try r.integer("quantityMilli")
        let sgstCents = try r.optionalInteger("sgstCents")
        let taxCents = try r.integer("taxCents")
        let taxRateBp = try r.int("taxRateBp")
        let taxableCents = try r.integer("taxableCents")
        let unitPriceCents = try r.integer("unitPriceCents")
        self.init(
            description: description, quantityMilli: quantityMilli, unitPriceCents: unitPriceCents,
            taxRateBp: taxRateBp, discountBp: discountBp, amountCents: amountCents, discountCents: discountCents,
            taxableCents: taxableCents, taxCents: taxCents, cgstCents: cgstCents, sgstCents: sgstCents,
            igstCents: igstCents)
    }
}

extension InvoiceTotals {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let cgstCents = try r.optionalInteger("cgstCents")
        let discountCents = try r.integer("discountCents")
        let igstCents = try r.optionalInteger("igstCents")
        let sgstCents = try r.optionalInteger("sgstCents")
        let subtotalCents = try r.integer("subtotalCents")
        let taxCents = try r.integer("taxCents")
        let taxableCents = try r.integer("taxableCents")
        let totalCents = try r.integer("totalCents")
        self.init(
            subtotalCents: subtotalCents, discountCents: discountCents, taxableCents: taxableCents,
            taxCents: taxCents, cgstCents: cgstCents, sgstCents: sgstCents, igstCents: igstCents,
            totalCents: totalCents)
    }
}

extension InvoiceCreated {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let createdBy = try r.string("createdBy")
        let customer = try r.object("customer") { r throws(CanonicalJSONReader.GiveUp) in
            try InvoiceCustomer(canonical: &r)
        }
        let dueDate = try r.date("dueDate")
        let invoiceId = try r.string("invoiceId")
        let invoiceNumber = try r.string("invoiceNumber")
        let issueDate = try r.date("issueDate")
        let lines = try r.objects("lines") { r throws(CanonicalJSONReader.GiveUp) in try InvoiceLine(canonical: &r) }
        let notes = try r.optionalString("notes")
        let sellerStateCode = try r.optionalString("sellerStateCode")
        let series = try r.string("series")
        let totals = try r.object("totals") { r throws(CanonicalJSONReader.GiveUp) in
            try InvoiceTotals(canonical: &r)
        }
        self.init(
            invoiceId: invoiceId, series: series, invoiceNumber: invoiceNumber, customer: customer,
            issueDate: issueDate, dueDate: dueDate, lines: lines, sellerStateCode: sellerStateCode, notes: notes,
            totals: totals, createdBy: createdBy)
    }
}

extension InvoicePaymentRecorded {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let amountCents = try r.integer("amountCents")
        let balanceCents = try r.integer("balanceCents")
        let invoiceId = try r.string("invoiceId")
        let method = try r.enumeration("method", PaymentMethod.self)
        let paidOn = try r.date("paidOn")
        let paidTotalCents = try r.integer("paidTotalCents")
        let paymentId = try r.string("paymentId")
        let recordedBy = try r.string("recordedBy")
        let status = try r.enumeration("status", InvoiceStatus.self)
        self.init(
            paymentId: paymentId, invoiceId: invoiceId, amountCents: amountCents, paidOn: paidOn, method: method,
            recordedBy: recordedBy, paidTotalCents: paidTotalCents, balanceCents: balanceCents, status: status)
    }
}

extension InvoicePaid {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let invoiceId = try r.string("invoiceId")
        let paidOn = try r.date("paidOn")
        let paidTotalCents = try r.integer("paidTotalCents")
        self.init(invoiceId: invoiceId, paidOn: paidOn, paidTotalCents: paidTotalCents)
    }
}

extension InvoiceCancelled {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let cancelledBy = try r.string("cancelledBy")
        let invoiceId = try r.string("invoiceId")
        let reason = try r.string("reason")
        self.init(invoiceId: invoiceId, reason: reason, cancelledBy: cancelledBy)
    }
}

extension InvoiceNumberAllocated {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let invoiceId = try r.string("invoiceId")
        let invoiceNumber = try r.string("invoiceNumber")
        let sequence = try r.integer("sequence")
        let series = try r.string("series")
        self.init(series: series, sequence: sequence, invoiceNumber: invoiceNumber, invoiceId: invoiceId)
    }
}
