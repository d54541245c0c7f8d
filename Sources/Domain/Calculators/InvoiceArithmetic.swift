import Events

/// Invoice line and tax arithmetic (GST style), computed once when the invoice is created.
///
/// Per line: amount = round(quantityMilli × unitPriceCents / 1000); discount =
/// round(amount × discountBp / 10000); taxable = amount − discount; tax =
/// round(taxable × taxRateBp / 10000). When the seller's and the customer's state codes
/// are both given and equal (a sale within one state), cgst = round(taxable × taxRateBp /
/// 20000) and sgst = tax − cgst; when both are given and differ, igst = tax; otherwise
/// only the tax is stated. Totals are the sums of the lines; total = taxable + tax.
public enum InvoiceArithmetic {
    public enum TaxSplit: Sendable, Hashable {
        /// Central and state GST, half each (the state half takes the odd cent).
        case centralAndState
        /// Integrated GST, all of it.
        case integrated
        /// No state codes to judge by: the tax alone.
        case unsplit

        public init(sellerStateCode: String?, customerStateCode: String?) {
            guard let seller = sellerStateCode, let customer = customerStateCode else {
                self = .unsplit
                return
            }
            self = seller == customer ? .centralAndState : .integrated
        }
    }

    public static func line(_ request: InvoiceLineRequest, split: TaxSplit) -> InvoiceLine {
        let amount = Money.divide(Int128(request.quantityMilli) * Int128(request.unitPriceCents), by: 1_000)
        let discount = request.discountBp.map { Money.apply(rateBp: $0, to: amount) } ?? 0
        let taxable = amount - discount
        let tax = Money.apply(rateBp: request.taxRateBp, to: taxable)
        var line = InvoiceLine(
            description: request.description, quantityMilli: request.quantityMilli,
            unitPriceCents: request.unitPriceCents, taxRateBp: request.taxRateBp, discountBp: request.discountBp,
            amountCents: amount, discountCents: discount, taxableCents: taxable, taxCents: tax)
        switch split {
        case .centralAndState:
            let central = Money.divide(Int128(taxable) * Int128(request.taxRateBp), by: 20_000)
            line.cgstCents = central
            line.sgstCents = tax - central
        case .integrated:
            line.igstCents = tax
        case .unsplit:
            break
        }
        return line
    }

    public static func totals(_ lines: [InvoiceLine], split: TaxSplit) -> InvoiceTotals {
        var totals = InvoiceTotals(subtotalCents: 0, discountCents: 0, taxableCents: 0, taxCents: 0, totalCents: 0)
        for line in lines {
            totals.subtotalCents += line.amountCents
            totals.discountCents += line.discountCents
            totals.taxableCents += line.taxableCents
            totals.taxCents += line.taxCents
        }
        switch split {
        case .centralAndState:
            totals.cgstCents = lines.reduce(0) { $0 + ($1.cgstCents ?? 0) }
            totals.sgstCents = lines.reduce(0) { $0 + ($1.sgstCents ?? 0) }
        case .integrated:
            totals.igstCents = totals.taxCents
        case .unsplit:
            break
        }
        totals.totalCents = totals.taxableCents + totals.taxCents
        return totals
    }
}
