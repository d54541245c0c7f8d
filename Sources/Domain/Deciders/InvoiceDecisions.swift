import Events
import StrataCore

/// GST-style invoices: issue with a gapless number, record payments, cancel.
enum InvoiceDecisions {
    /// An approved admin or agent issues an invoice. The next number of its series is
    /// allocated on the series stream in the same atomic write.
    static func create(_ c: CreateInvoice, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let actor = try d.actor([.admin, .agent], doing: "create invoices")
        try d.checkExpectedVersion(.invoice(c.invoiceId))
        if d.state.invoices[c.invoiceId] != nil {
            throw .rejected("INVOICE_ALREADY_EXISTS", "invoice \(c.invoiceId) already exists")
        }
        if d.state.parties[c.customer.partyId]?.erased == true {
            throw .rejected("SUBJECT_ERASED", "party \(c.customer.partyId)'s personal data was erased")
        }
        let series = c.series ?? d.context.configuration.defaultInvoiceSeries
        let sequence = (d.state.series[series] ?? InvoiceSeriesState()).lastSequence + 1
        let number = InvoiceNumbering.number(series: series, sequence: sequence)
        let split = InvoiceArithmetic.TaxSplit(
            sellerStateCode: c.sellerStateCode, customerStateCode: c.customer.stateCode)
        let lines = c.lines.map { InvoiceArithmetic.line($0, split: split) }
        let created = InvoiceCreated(
            invoiceId: c.invoiceId, series: series, invoiceNumber: number, customer: c.customer, issueDate: c.issueDate,
            dueDate: c.dueDate, lines: lines, sellerStateCode: c.sellerStateCode, notes: c.notes,
            totals: InvoiceArithmetic.totals(lines, split: split), createdBy: actor.userId)
        return d.accept([
            .invoiceNumberAllocated(
                InvoiceNumberAllocated(series: series, sequence: sequence, invoiceNumber: number, invoiceId: c.invoiceId)),
            .invoiceCreated(created),
        ])
    }

    /// Money against an issued or partly paid invoice, never more than its balance.
    static func recordPayment(_ c: RecordInvoicePayment, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let actor = try d.actor([.admin, .agent], doing: "record invoice payments")
        let invoice = try existing(c.invoiceId, d)
        try d.checkExpectedVersion(.invoice(c.invoiceId))
        if invoice.paymentIds.contains(c.paymentId) {
            throw .rejected("DUPLICATE_PAYMENT", "payment \(c.paymentId) is already recorded on invoice \(c.invoiceId)")
        }
        switch invoice.status {
        case .cancelled: throw .rejected("INVOICE_CANCELLED", "invoice \(c.invoiceId) was cancelled")
        case .paid: throw .rejected("INVOICE_ALREADY_PAID", "invoice \(c.invoiceId) is paid in full")
        case .issued, .partiallyPaid: break
        }
        if c.paidOn < invoice.issueDate {
            throw .rejected("PAYMENT_BEFORE_ISSUE", "paidOn \(c.paidOn) is before the invoice's issue date \(invoice.issueDate)")
        }
        if c.amountCents > invoice.balanceCents {
            throw .rejected(
                "AMOUNT_EXCEEDS_BALANCE", "\(c.amountCents) is more than the \(invoice.balanceCents) still owed")
        }
        let paidTotal = invoice.paidCents + c.amountCents
        let balance = invoice.totalCents - paidTotal
        var events: [StrataEvent] = [
            .invoicePaymentRecorded(
                InvoicePaymentRecorded(
                    paymentId: c.paymentId, invoiceId: c.invoiceId, amountCents: c.amountCents, paidOn: c.paidOn,
                    method: c.method, recordedBy: actor.userId, paidTotalCents: paidTotal, balanceCents: balance,
                    status: balance == 0 ? .paid : .partiallyPaid))
        ]
        if balance == 0 {
            events.append(.invoicePaid(InvoicePaid(invoiceId: c.invoiceId, paidOn: c.paidOn, paidTotalCents: paidTotal)))
        }
        return d.accept(events)
    }

    /// An admin, or the agent who issued it, cancels an invoice nothing has been paid on.
    static func cancel(_ c: CancelInvoice, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let actor = try d.actor([.admin, .agent], doing: "cancel invoices")
        let invoice = try existing(c.invoiceId, d)
        if actor.role == .agent && actor.userId != invoice.createdBy {
            throw .forbidden("NOT_INVOICE_CREATOR", "agents cancel only invoices they issued")
        }
        try d.checkExpectedVersion(.invoice(c.invoiceId))
        if invoice.status == .cancelled {
            throw .rejected("INVOICE_ALREADY_CANCELLED", "invoice \(c.invoiceId) is already cancelled")
        }
        if invoice.paidCents > 0 {
            throw .rejected("INVOICE_HAS_PAYMENTS", "invoice \(c.invoiceId) has payments recorded")
        }
        return d.accept([
            .invoiceCancelled(InvoiceCancelled(invoiceId: c.invoiceId, reason: c.reason, cancelledBy: actor.userId))
        ])
    }

    private static func existing(_ id: String, _ d: DecisionInput) throws(StrataError) -> InvoiceState {
        guard let invoice = d.state.invoices[id] else { throw .notFound("INVOICE_NOT_FOUND", "no invoice \(id)") }
        return invoice
    }
}
