import Events
import StrataCore

/// One line as a command gives it; the amounts are computed when the invoice is created.
public struct InvoiceLineRequest: Codable, Sendable, Hashable {
    public static let maximumQuantityMilli: Int64 = 1_000_000_000
    public static let maximumUnitPriceCents: Int64 = 10_000_000_000
    public static let notATaxSlab = "NOT_A_TAX_SLAB"
    /// Any rate a line may carry, before it is checked against the configured slabs.
    public static let taxRateRangeBp = 0...10_000

    public var description: String
    public var quantityMilli: Int64
    public var unitPriceCents: Int64
    public var taxRateBp: Int
    public var discountBp: Int?

    public init(description: String, quantityMilli: Int64, unitPriceCents: Int64, taxRateBp: Int, discountBp: Int? = nil) {
        self.description = description
        self.quantityMilli = quantityMilli
        self.unitPriceCents = unitPriceCents
        self.taxRateBp = taxRateBp
        self.discountBp = discountBp
    }

    init?(reading r: inout PayloadReader) {
        let slabs = r.context.configuration.taxSlabsBp
        let description = r.text("description", maximumLength: PayloadLimits.reasonLength)
        let quantity = r.integer(
            "quantityMilli", in: 1...InvoiceLineRequest.maximumQuantityMilli, low: PayloadReader.Reason.mustBePositive)
        let price = r.integer("unitPriceCents", in: 0...InvoiceLineRequest.maximumUnitPriceCents)
        let rate = r.int("taxRateBp", in: InvoiceLineRequest.taxRateRangeBp)
        if let rate, !slabs.contains(rate) { r.report("taxRateBp", InvoiceLineRequest.notATaxSlab) }
        let discount = r.int("discountBp", in: 0...10_000, required: false)
        guard let description, let quantity, let price, let rate else { return nil }
        self.init(
            description: description, quantityMilli: quantity, unitPriceCents: price, taxRateBp: rate,
            discountBp: discount)
    }
}

/// An approved admin or agent issues an invoice; its number comes from the series.
public struct CreateInvoice: CommandPayload {
    public static let commandType = "CreateInvoice"
    public static let maximumLines = 200
    public static let dueBeforeIssue = "DUE_BEFORE_ISSUE"
    public static let noLines = "NO_LINES"
    public static let tooManyLines = "TOO_MANY_LINES"
    public static let totalAboveMaximum = "TOTAL_ABOVE_MAXIMUM"

    public var invoiceId: String
    public var series: String?
    public var customer: InvoiceCustomer
    public var issueDate: LocalDate
    public var dueDate: LocalDate
    public var lines: [InvoiceLineRequest]
    public var sellerStateCode: String?
    public var notes: String?

    public init(
        invoiceId: String, series: String? = nil, customer: InvoiceCustomer, issueDate: LocalDate, dueDate: LocalDate,
        lines: [InvoiceLineRequest], sellerStateCode: String? = nil, notes: String? = nil
    ) {
        self.invoiceId = invoiceId
        self.series = series
        self.customer = customer
        self.issueDate = issueDate
        self.dueDate = dueDate
        self.lines = lines
        self.sellerStateCode = sellerStateCode
        self.notes = notes
    }

    /// A series name: 1–16 of `[A-Za-z0-9]`, so "INV" numbers read "INV-000001".
    static func seriesProblem(_ series: String) -> String? {
        let valid =
            (1...16).contains(series.utf8.count)
            && series.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }
        return valid ? nil : PayloadReader.Reason.invalidFormat
    }

    /// A state code: 1–8 of `[A-Za-z0-9]` ("29", "KA").
    static func stateCodeProblem(_ code: String) -> String? {
        seriesProblem(code) == nil && code.utf8.count <= 8 ? nil : PayloadReader.Reason.invalidFormat
    }

    /// A tax id (GSTIN and the like): 1–32 of `[A-Za-z0-9/-]`.
    static func taxIdProblem(_ id: String) -> String? {
        let valid =
            (1...32).contains(id.utf8.count)
            && id.utf8.allSatisfy {
                (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 45 || $0 == 47
            }
        return valid ? nil : PayloadReader.Reason.invalidFormat
    }

    /// Whether the lines' subtotal or total (tax included) is above the cap every amount has.
    /// A line alone may come to 10^16 cents, so 200 of them would carry sums that overflow
    /// the 64-bit totals the read models keep per customer and per day.
    static func exceedsMaximum(_ lines: [InvoiceLineRequest]) -> Bool {
        // The split only divides the tax; the sums are the same whatever it is.
        let totals = InvoiceArithmetic.totals(lines.map { InvoiceArithmetic.line($0, split: .unsplit) }, split: .unsplit)
        return max(totals.subtotalCents, totals.totalCents) > PayloadLimits.maximumAmountCents
    }

    public init?(reading r: inout PayloadReader) {
        let invoiceId = r.identifier("invoiceId")
        let series = r.string("series", required: false, check: CreateInvoice.seriesProblem)
        let customer = r.object("customer") { c -> InvoiceCustomer? in
            let partyId = c.identifier("partyId")
            let name = c.personal("name", maximumLength: PayloadLimits.nameLength)
            let taxId = c.string("taxId", required: false, check: CreateInvoice.taxIdProblem).map { PersonalData($0) }
            let stateCode = c.string("stateCode", required: false, check: CreateInvoice.stateCodeProblem)
            guard let partyId, let name else { return nil }
            return InvoiceCustomer(partyId: partyId, name: name, taxId: taxId, stateCode: stateCode)
        }
        let issueDate = r.pastDate("issueDate")
        let dueDate = r.date("dueDate")
        if let issueDate, let dueDate, dueDate < issueDate { r.report("dueDate", CreateInvoice.dueBeforeIssue) }
        let lines = r.objects(
            "lines", count: 1...CreateInvoice.maximumLines, tooFew: CreateInvoice.noLines,
            tooMany: CreateInvoice.tooManyLines
        ) { InvoiceLineRequest(reading: &$0) }
        if let lines, CreateInvoice.exceedsMaximum(lines) { r.report("lines", CreateInvoice.totalAboveMaximum) }
        let sellerStateCode = r.string("sellerStateCode", required: false, check: CreateInvoice.stateCodeProblem)
        let notes = r.text("notes", maximumLength: PayloadLimits.notesLength, multiline: true, required: false)
        guard let invoiceId, let customer, let issueDate, let dueDate, let lines else { return nil }
        self.init(
            invoiceId: invoiceId, series: series, customer: customer, issueDate: issueDate, dueDate: dueDate,
            lines: lines, sellerStateCode: sellerStateCode, notes: notes)
    }
}

/// Money received against an invoice.
public struct RecordInvoicePayment: CommandPayload {
    public static let commandType = "RecordInvoicePayment"
    public var paymentId: String
    public var invoiceId: String
    public var amountCents: Int64
    public var paidOn: LocalDate
    public var method: PaymentMethod

    public init(paymentId: String, invoiceId: String, amountCents: Int64, paidOn: LocalDate, method: PaymentMethod) {
        self.paymentId = paymentId
        self.invoiceId = invoiceId
        self.amountCents = amountCents
        self.paidOn = paidOn
        self.method = method
    }

    public init?(reading r: inout PayloadReader) {
        let paymentId = r.identifier("paymentId")
        let invoiceId = r.identifier("invoiceId")
        let amount = r.integer(
            "amountCents", in: 1...PayloadLimits.maximumAmountCents, low: PayloadReader.Reason.mustBePositive)
        let paidOn = r.pastDate("paidOn")
        let method = r.choice("method", PaymentMethod.self)
        guard let paymentId, let invoiceId, let amount, let paidOn, let method else { return nil }
        self.init(paymentId: paymentId, invoiceId: invoiceId, amountCents: amount, paidOn: paidOn, method: method)
    }
}

/// An invoice nothing has been paid on is withdrawn; its number stays used.
public struct CancelInvoice: CommandPayload {
    public static let commandType = "CancelInvoice"
    public var invoiceId: String
    public var reason: String

    public init(invoiceId: String, reason: String) {
        self.invoiceId = invoiceId
        self.reason = reason
    }

    public init?(reading r: inout PayloadReader) {
        let invoiceId = r.identifier("invoiceId")
        let reason = r.text("reason", maximumLength: PayloadLimits.reasonLength, multiline: true)
        guard let invoiceId, let reason else { return nil }
        self.init(invoiceId: invoiceId, reason: reason)
    }
}
