import Domain
import Events
import Testing

// DOMAIN.md, Invoices: amount = round(quantityMilli × unitPriceCents / 1000); discount =
// round(amount × discountBp / 10000); tax = round(taxable × taxRateBp / 10000) on
// taxable = amount − discount. Both state codes given and equal: cgst = round(taxable ×
// taxRateBp / 20000), sgst = tax − cgst; given and different: igst = tax; otherwise only the
// tax. Totals are the sums of the lines.

private func request(_ quantityMilli: Int64, _ unitPriceCents: Int64, taxBp: Int, discountBp: Int? = nil)
    -> InvoiceLineRequest
{
    InvoiceLineRequest(
        description: "item", quantityMilli: quantityMilli, unitPriceCents: unitPriceCents, taxRateBp: taxBp,
        discountBp: discountBp)
}

@Suite("Invoice arithmetic")
struct InvoiceArithmeticTests {
    @Test(arguments: [
        // (quantityMilli, unitPriceCents, amount)
        (1_000, 15_000, 15_000),  // 1 unit
        (2_500, 48_000, 120_000),  // 2.5 units
        (1, 500, 1),  // 0.001 × 500 = 0.5 → 1
        (1, 499, 0),  // 0.499 → 0
        (333, 1, 0),  // 0.333 → 0
        (1_500, 333, 500),  // 499.5 → 500
        (2_500, 1, 3),  // 2.5 → 3, not banker's 2
        (1_234, 9_999, 12_339),  // 12,338.766 → 12,339
        (7_000, 0, 0),  // free of charge
    ] as [(Int64, Int64, Int64)])
    func lineAmountIsRoundedQuantityTimesPrice(quantityMilli: Int64, unitPriceCents: Int64, amount: Int64) {
        let line = InvoiceArithmetic.line(request(quantityMilli, unitPriceCents, taxBp: 0), split: .unsplit)
        #expect(line.amountCents == amount)
        #expect(line.discountCents == 0)
        #expect(line.taxableCents == amount)
        #expect(line.taxCents == 0)
    }

    @Test func largestLineNeedsInt128() {
        // 1,000,000 units (quantityMilli 10⁹) at 10¹⁰ cents: 10¹⁹ before dividing by 1000.
        let line = InvoiceArithmetic.line(
            request(InvoiceLineRequest.maximumQuantityMilli, InvoiceLineRequest.maximumUnitPriceCents, taxBp: 2_800, discountBp: 1),
            split: .centralAndState)
        #expect(line.amountCents == 10_000_000_000_000_000)
        #expect(line.discountCents == 1_000_000_000_000)  // 1 bp
        #expect(line.taxableCents == 9_999_000_000_000_000)
        #expect(line.taxCents == 2_799_720_000_000_000)  // 28%
        #expect(line.cgstCents == 1_399_860_000_000_000)
        #expect(line.sgstCents == 1_399_860_000_000_000)
    }

    @Test func discountIsRoundedThenTaxed() {
        // 12,345 at 2.5% off: 308.625 → 309; taxable 12,036; 12% of it 1,444.32 → 1,444.
        let line = InvoiceArithmetic.line(request(1_000, 12_345, taxBp: 1_200, discountBp: 250), split: .unsplit)
        #expect(line.amountCents == 12_345)
        #expect(line.discountCents == 309)
        #expect(line.taxableCents == 12_036)
        #expect(line.taxCents == 1_444)
        #expect(line.discountBp == 250)

        // A half cent of discount: 30 × 5% = 1.5 → 2; taxable 28; 5% of it 1.4 → 1.
        let half = InvoiceArithmetic.line(request(1_000, 30, taxBp: 500, discountBp: 500), split: .unsplit)
        #expect(half.discountCents == 2)
        #expect(half.taxableCents == 28)
        #expect(half.taxCents == 1)

        // No discount given, or 0 bp: nothing off.
        #expect(InvoiceArithmetic.line(request(1_000, 10_000, taxBp: 500), split: .unsplit).discountCents == 0)
        #expect(InvoiceArithmetic.line(request(1_000, 10_000, taxBp: 500, discountBp: 0), split: .unsplit).discountCents == 0)
        // 100% off: nothing taxable.
        let free = InvoiceArithmetic.line(request(1_000, 10_000, taxBp: 1_800, discountBp: 10_000), split: .unsplit)
        #expect(free.taxableCents == 0)
        #expect(free.taxCents == 0)
    }

    @Test(arguments: [
        // (taxable, taxRateBp, tax, cgst, sgst)
        (114_000, 1_800, 20_520, 10_260, 10_260),  // even
        (25, 1_800, 5, 2, 3),  // tax 4.5 → 5; cgst 2.25 → 2; SGST takes the odd cent
        (1_010, 500, 51, 25, 26),  // tax 50.5 → 51; cgst 25.25 → 25
        (10, 500, 1, 0, 1),  // tax 0.5 → 1; cgst 0.25 → 0
        (30, 500, 2, 1, 1),  // tax 1.5 → 2; cgst 0.75 → 1
        (70, 500, 4, 2, 2),  // tax 3.5 → 4; cgst 1.75 → 2
        (1_005, 500, 50, 25, 25),  // tax 50.25 → 50; cgst 25.125 → 25
        (1_001, 1_800, 180, 90, 90),  // tax 180.18 → 180; cgst 90.09 → 90
        (1_250, 2_800, 350, 175, 175),
        (1_999, 1_200, 240, 120, 120),  // tax 239.88 → 240; cgst 119.94 → 120
        (12_345, 0, 0, 0, 0),
    ] as [(Int64, Int, Int64, Int64, Int64)])
    func withinOneStateCentralAndStateSplit(taxable: Int64, rateBp: Int, tax: Int64, cgst: Int64, sgst: Int64) {
        let line = InvoiceArithmetic.line(request(1_000, taxable, taxBp: rateBp), split: .centralAndState)
        #expect(line.taxableCents == taxable)
        #expect(line.taxCents == tax)
        #expect(line.cgstCents == cgst)
        #expect(line.sgstCents == sgst)
        #expect(line.igstCents == nil)
    }

    @Test func betweenStatesIntegratedOnly() {
        let line = InvoiceArithmetic.line(request(1_000, 25, taxBp: 1_800), split: .integrated)
        #expect(line.taxCents == 5)
        #expect(line.igstCents == 5)
        #expect(line.cgstCents == nil)
        #expect(line.sgstCents == nil)
    }

    @Test func withoutStateCodesOnlyTheTax() {
        let line = InvoiceArithmetic.line(request(1_000, 25, taxBp: 1_800), split: .unsplit)
        #expect(line.taxCents == 5)
        #expect(line.igstCents == nil)
        #expect(line.cgstCents == nil)
        #expect(line.sgstCents == nil)
    }

    @Test func splitIsJudgedByTheStateCodes() {
        #expect(InvoiceArithmetic.TaxSplit(sellerStateCode: "29", customerStateCode: "29") == .centralAndState)
        #expect(InvoiceArithmetic.TaxSplit(sellerStateCode: "29", customerStateCode: "27") == .integrated)
        #expect(InvoiceArithmetic.TaxSplit(sellerStateCode: "29", customerStateCode: nil) == .unsplit)
        #expect(InvoiceArithmetic.TaxSplit(sellerStateCode: nil, customerStateCode: "29") == .unsplit)
        #expect(InvoiceArithmetic.TaxSplit(sellerStateCode: nil, customerStateCode: nil) == .unsplit)
    }

    @Test func totalsAreTheSumsOfTheLines() {
        // Two lines of 10 at 5%: each tax 0.5 → 1, cgst 0.25 → 0, sgst 1. The totals add the
        // lines (cgst 0, sgst 2), not a split recomputed on the total taxable 20 (which
        // would give cgst 0.5 → 1).
        let lines = [request(1_000, 10, taxBp: 500), request(1_000, 10, taxBp: 500)].map {
            InvoiceArithmetic.line($0, split: .centralAndState)
        }
        let totals = InvoiceArithmetic.totals(lines, split: .centralAndState)
        #expect(
            totals
                == InvoiceTotals(
                    subtotalCents: 20, discountCents: 0, taxableCents: 20, taxCents: 2, cgstCents: 0, sgstCents: 2, totalCents: 22))

        // Mixed rates and discounts between states.
        let mixed = [
            request(3_000, 1_999, taxBp: 1_800, discountBp: 1_000),  // 5,997; −599.7 → 600; 5,397; 971.46 → 971
            request(500, 1_001, taxBp: 500),  // 500.5 → 501; tax 25.05 → 25
            request(1_000, 7_777, taxBp: 0, discountBp: 333),  // 7,777; −258.9741 → 259; 7,518; 0
        ].map { InvoiceArithmetic.line($0, split: .integrated) }
        #expect(mixed.map(\.amountCents) == [5_997, 501, 7_777])
        #expect(mixed.map(\.discountCents) == [600, 0, 259])
        #expect(mixed.map(\.taxableCents) == [5_397, 501, 7_518])
        #expect(mixed.map(\.taxCents) == [971, 25, 0])
        #expect(
            InvoiceArithmetic.totals(mixed, split: .integrated)
                == InvoiceTotals(
                    subtotalCents: 14_275, discountCents: 859, taxableCents: 13_416, taxCents: 996, igstCents: 996,
                    totalCents: 14_412))

        let plain = [request(1_000, 10_000, taxBp: 1_200), request(2_000, 50, taxBp: 500)].map {
            InvoiceArithmetic.line($0, split: .unsplit)
        }
        #expect(
            InvoiceArithmetic.totals(plain, split: .unsplit)
                == InvoiceTotals(subtotalCents: 10_100, discountCents: 0, taxableCents: 10_100, taxCents: 1_205, totalCents: 11_305))
    }

    // CatalogTests' sampleInvoice: steel rods, 2.5 units at ₹480 with 5% off and 18% GST,
    // and delivery, 1 unit at ₹150 with 12% GST, within one state.
    //   rods: 2.5 × 48,000 = 120,000; 5% off 6,000; taxable 114,000; 18% = 20,520;
    //         cgst 114,000 × 1800 / 20000 = 10,260, sgst 10,260.
    //   delivery: 15,000; taxable 15,000; 12% = 1,800; cgst 900, sgst 900.
    //   totals: 135,000 − 6,000 = 129,000 taxable + 22,320 tax = 151,320.
    @Test func reproducesTheSampleInvoice() {
        let split = InvoiceArithmetic.TaxSplit(sellerStateCode: "29", customerStateCode: "29")
        let lines = [
            InvoiceLineRequest(description: "Steel rods 12 mm", quantityMilli: 2_500, unitPriceCents: 48_000, taxRateBp: 1_800, discountBp: 500),
            InvoiceLineRequest(description: "Delivery", quantityMilli: 1_000, unitPriceCents: 15_000, taxRateBp: 1_200),
        ].map { InvoiceArithmetic.line($0, split: split) }
        #expect(
            lines == [
                InvoiceLine(
                    description: "Steel rods 12 mm", quantityMilli: 2_500, unitPriceCents: 48_000, taxRateBp: 1_800,
                    discountBp: 500, amountCents: 120_000, discountCents: 6_000, taxableCents: 114_000, taxCents: 20_520,
                    cgstCents: 10_260, sgstCents: 10_260),
                InvoiceLine(
                    description: "Delivery", quantityMilli: 1_000, unitPriceCents: 15_000, taxRateBp: 1_200,
                    amountCents: 15_000, discountCents: 0, taxableCents: 15_000, taxCents: 1_800, cgstCents: 900,
                    sgstCents: 900),
            ])
        #expect(
            InvoiceArithmetic.totals(lines, split: split)
                == InvoiceTotals(
                    subtotalCents: 135_000, discountCents: 6_000, taxableCents: 129_000, taxCents: 22_320, cgstCents: 11_160,
                    sgstCents: 11_160, totalCents: 151_320))

        // The same sale to another state (CatalogTests' interStateInvoiceCarriesIGSTOnly).
        let integrated = InvoiceArithmetic.TaxSplit(sellerStateCode: "27", customerStateCode: "29")
        let interState = [
            InvoiceLineRequest(description: "Steel rods 12 mm", quantityMilli: 2_500, unitPriceCents: 48_000, taxRateBp: 1_800, discountBp: 500),
            InvoiceLineRequest(description: "Delivery", quantityMilli: 1_000, unitPriceCents: 15_000, taxRateBp: 1_200),
        ].map { InvoiceArithmetic.line($0, split: integrated) }
        #expect(interState.map(\.igstCents) == [20_520, 1_800])
        #expect(
            InvoiceArithmetic.totals(interState, split: integrated)
                == InvoiceTotals(
                    subtotalCents: 135_000, discountCents: 6_000, taxableCents: 129_000, taxCents: 22_320, igstCents: 22_320,
                    totalCents: 151_320))
    }
}

@Suite("Invoice numbering")
struct InvoiceNumberingTests {
    @Test(arguments: [
        ("INV", 1, "INV-000001"),
        ("INV", 2, "INV-000002"),
        ("INV", 42, "INV-000042"),
        ("INV", 99_999, "INV-099999"),
        ("INV", 999_999, "INV-999999"),
        ("INV", 1_000_000, "INV-1000000"),  // seven digits: no truncation
        ("INV", 1_234_567, "INV-1234567"),
        ("INV", 98_765_432_101, "INV-98765432101"),
        ("B2B", 7, "B2B-000007"),
        ("INV2027", 10, "INV2027-000010"),
        ("credit-notes", 123_456, "credit-notes-123456"),
    ] as [(String, Int64, String)])
    func numbers(series: String, sequence: Int64, expected: String) {
        #expect(InvoiceNumbering.number(series: series, sequence: sequence) == expected)
    }
}

@Suite("Commission")
struct CommissionTests {
    @Test(arguments: [
        // (interestCents, rateBp, commission)
        (40_000, 1_000, 4_000),  // the sample's first installment at the default 10%
        (27_186, 1_000, 2_719),  // 2,718.6 → 2,719
        (27_186, 1_200, 3_262),  // 3,262.32 → 3,262
        (13_860, 1_250, 1_733),  // 1,732.5 → 1,733 (half away from zero)
        (81_046, 1_000, 8_105),  // 8,104.6 → 8,105
        (5, 1_000, 1),  // 0.5 → 1
        (4, 1_000, 0),  // 0.4 → 0: no CommissionEarned
        (25, 1_000, 3),  // 2.5 → 3, not 2
        (1_234, 1_500, 185),  // 185.1 → 185
        (0, 1_000, 0),  // a penalty-only payment earns nothing
        (40_000, 0, 0),
        (40_000, 10_000, 40_000),
    ] as [(Int64, Int, Int64)])
    func amount(interest: Int64, rateBp: Int, expected: Int64) {
        #expect(Commission.amount(interestCents: interest, rateBp: rateBp) == expected)
    }
}
