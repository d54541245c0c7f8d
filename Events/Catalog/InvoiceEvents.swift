import StrataCore

// Stream `invoice-<invoiceId>`: GST-style invoices and what they are paid.

/// Who an invoice is issued to. The party is the data subject of its personal data.
public struct InvoiceCustomer: Codable, Sendable, Hashable {
    public var partyId: String
    public var name: PersonalData
    /// GSTIN or similar.
    public var taxId: PersonalData?
    /// The customer's state code (e.g. "29"); with the seller's, decides CGST+SGST or IGST.
    public var stateCode: String?

    public init(partyId: String, name: PersonalData, taxId: PersonalData? = nil, stateCode: String? = nil) {
        self.partyId = partyId
        self.name = name
        self.taxId = taxId
        self.stateCode = stateCode
    }
}

/// One invoice line: what was asked for, plus the amounts computed at creation.
public struct InvoiceLine: Codable, Sendable, Hashable {
    public var description: String
    /// Thousandths of a unit (1.5 units = 1500).
    public var quantityMilli: Int64
    public var unitPriceCents: Int64
    /// One of the configured slabs (default 0, 500, 1200, 1800, 2800).
    public var taxRateBp: Int
    public var discountBp: Int?
    /// round(quantityMilli × unitPriceCents / 1000).
    public var amountCents: Int64
    /// round(amountCents × discountBp / 10000); 0 without a discount.
    public var discountCents: Int64
    /// amountCents − discountCents.
    public var taxableCents: Int64
    /// round(taxableCents × taxRateBp / 10000).
    public var taxCents: Int64
    /// Present with sgstCents when both state codes are given and equal.
    public var cgstCents: Int64?
    public var sgstCents: Int64?
    /// Present when both state codes are given and differ.
    public var igstCents: Int64?

    public init(
        description: String, quantityMilli: Int64, unitPriceCents: Int64, taxRateBp: Int, discountBp: Int? = nil,
        amountCents: Int64, discountCents: Int64, taxableCents: Int64, taxCents: Int64, cgstCents: Int64? = nil,
        sgstCents: Int64? = nil, igstCents: Int64? = nil
    ) {
        self.description = description
        self.quantityMilli = quantityMilli
        self.unitPriceCents = unitPriceCents
        self.taxRateBp = taxRateBp
        self.discountBp = discountBp
        self.amountCents = amountCents
        self.discountCents = discountCents
        self.taxableCents = taxableCents
        self.taxCents = taxCents
        self.cgstCents = cgstCents
        self.sgstCents = sgstCents
        self.igstCents = igstCents
    }
}

/// An invoice's totals: the sums of its lines.
public struct InvoiceTotals: Codable, Sendable, Hashable {
    /// Sum of the lines' amountCents.
    public var subtotalCents: Int64
    public var discountCents: Int64
    public var taxableCents: Int64
    public var taxCents: Int64
    public var cgstCents: Int64?
    public var sgstCents: Int64?
    public var igstCents: Int64?
    /// taxableCents + taxCents: what the customer owes.
    public var totalCents: Int64

    public init(
        subtotalCents: Int64, discountCents: Int64, taxableCents: Int64, taxCents: Int64, cgstCents: Int64? = nil,
        sgstCents: Int64? = nil, igstCents: Int64? = nil, totalCents: Int64
    ) {
        self.subtotalCents = subtotalCents
        self.discountCents = discountCents
        self.taxableCents = taxableCents
        self.taxCents = taxCents
        self.cgstCents = cgstCents
        self.sgstCents = sgstCents
        self.igstCents = igstCents
        self.totalCents = totalCents
    }
}

/// An invoice was issued, with its gapless number and every amount fixed here.
public struct InvoiceCreated: DomainEvent, Hashable {
    public static let eventType = "InvoiceCreated"
    public static let schemaVersion = 1

    public var invoiceId: String
    /// The numbering series (decided: the default series when the command left it out).
    public var series: String
    /// Allocated through the series stream ("INV-000001").
    public var invoiceNumber: String
    public var customer: InvoiceCustomer
    public var issueDate: LocalDate
    public var dueDate: LocalDate
    public var lines: [InvoiceLine]
    public var sellerStateCode: String?
    public var notes: String?
    public var totals: InvoiceTotals
    public var createdBy: String

    public init(
        invoiceId: String, series: String, invoiceNumber: String, customer: InvoiceCustomer, issueDate: LocalDate,
        dueDate: LocalDate, lines: [InvoiceLine], sellerStateCode: String? = nil, notes: String? = nil,
        totals: InvoiceTotals, createdBy: String
    ) {
        self.invoiceId = invoiceId
        self.series = series
        self.invoiceNumber = invoiceNumber
        self.customer = customer
        self.issueDate = issueDate
        self.dueDate = dueDate
        self.lines = lines
        self.sellerStateCode = sellerStateCode
        self.notes = notes
        self.totals = totals
        self.createdBy = createdBy
    }
}

/// A payment against an invoice was recorded; the invoice is now PARTIALLY_PAID or PAID.
public struct InvoicePaymentRecorded: DomainEvent, Hashable {
    public static let eventType = "InvoicePaymentRecorded"
    public static let schemaVersion = 1

    public var paymentId: String
    public var invoiceId: String
    public var amountCents: Int64
    public var paidOn: LocalDate
    public var method: PaymentMethod
    public var recordedBy: String
    /// Everything paid on the invoice so far, this payment included.
    public var paidTotalCents: Int64
    /// What is still owed after this payment.
    public var balanceCents: Int64
    /// PARTIALLY_PAID or PAID.
    public var status: InvoiceStatus

    public init(
        paymentId: String, invoiceId: String, amountCents: Int64, paidOn: LocalDate, method: PaymentMethod,
        recordedBy: String, paidTotalCents: Int64, balanceCents: Int64, status: InvoiceStatus
    ) {
        self.paymentId = paymentId
        self.invoiceId = invoiceId
        self.amountCents = amountCents
        self.paidOn = paidOn
        self.method = method
        self.recordedBy = recordedBy
        self.paidTotalCents = paidTotalCents
        self.balanceCents = balanceCents
        self.status = status
    }
}

/// The invoice is settled in full (appended with the payment that settled it).
public struct InvoicePaid: DomainEvent, Hashable {
    public static let eventType = "InvoicePaid"
    public static let schemaVersion = 1

    public var invoiceId: String
    /// The settling payment's paidOn.
    public var paidOn: LocalDate
    public var paidTotalCents: Int64

    public init(invoiceId: String, paidOn: LocalDate, paidTotalCents: Int64) {
        self.invoiceId = invoiceId
        self.paidOn = paidOn
        self.paidTotalCents = paidTotalCents
    }
}

/// An invoice nothing had been paid on was cancelled. Its number stays used (no gaps).
public struct InvoiceCancelled: DomainEvent, Hashable {
    public static let eventType = "InvoiceCancelled"
    public static let schemaVersion = 1

    public var invoiceId: String
    public var reason: String
    public var cancelledBy: String

    public init(invoiceId: String, reason: String, cancelledBy: String) {
        self.invoiceId = invoiceId
        self.reason = reason
        self.cancelledBy = cancelledBy
    }
}
