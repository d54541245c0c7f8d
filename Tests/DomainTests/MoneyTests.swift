import Domain
import Testing

// DOMAIN.md, conventions: rounding to a cent is always half away from zero (0.5 → 1,
// -0.5 → -1), applied once at the end of each formula.

@Suite("Money")
struct MoneyTests {
    // MARK: - divide(_:by:)

    @Test(arguments: [
        // (numerator, denominator, expected)
        (0, 7, 0),
        (10, 5, 2),
        (1, 3, 0),
        (2, 3, 1),
        (14, 10, 1),
        (15, 10, 2),
        (16, 10, 2),
        (1, 2, 1),
        (5, 2, 3),
        (7, 2, 4),
        (25, 10, 3),  // not banker's rounding: 2.5 → 3, not 2
        (45, 10, 5),
        (4_999, 10_000, 0),
        (5_000, 10_000, 1),
        (5_001, 10_000, 1),
        (15_678_330, 1_000, 15_678),  // 522,611 × 30 / 1000, DOMAIN's penalty example
    ] as [(Int64, Int64, Int64)])
    func positiveNumerators(numerator: Int64, denominator: Int64, expected: Int64) {
        #expect(Money.divide(Int128(numerator), by: Int128(denominator)) == expected)
    }

    @Test(arguments: [
        (-10, 5, -2),
        (-1, 3, 0),
        (-2, 3, -1),
        (-14, 10, -1),
        (-15, 10, -2),
        (-16, 10, -2),
        (-1, 2, -1),
        (-5, 2, -3),
        (-7, 2, -4),
        (-25, 10, -3),  // -2.5 → -3, away from zero
        (-4_999, 10_000, 0),
        (-5_000, 10_000, -1),
    ] as [(Int64, Int64, Int64)])
    func negativeNumerators(numerator: Int64, denominator: Int64, expected: Int64) {
        #expect(Money.divide(Int128(numerator), by: Int128(denominator)) == expected)
    }

    @Test func roundingIsSymmetricAroundZero() {
        for numerator in Int128(-2_000)...2_000 {
            for denominator in [Int128(1), 2, 3, 4, 7, 10, 1_000, 10_000] {
                #expect(
                    Money.divide(-numerator, by: denominator) == -Money.divide(numerator, by: denominator),
                    "\(numerator) / \(denominator)")
            }
        }
    }

    @Test func agreesWithAnExactHalfUpRuleOnMagnitudes() {
        // round(|n| / d) = ⌊(2|n| + d) / 2d⌋, with the numerator's sign.
        for numerator in Int128(-3_000)...3_000 {
            for denominator in [Int128(2), 3, 6, 8, 30, 1_000, 20_000, 300_000] {
                let magnitude = (2 * numerator.magnitude + denominator.magnitude) / (2 * denominator.magnitude)
                let expected = numerator < 0 ? -Int64(magnitude) : Int64(magnitude)
                #expect(Money.divide(numerator, by: denominator) == expected, "\(numerator) / \(denominator)")
            }
        }
    }

    @Test func productsBeyondInt64() {
        // The largest invoice line: 1,000,000 units (quantityMilli 10⁹) at 10¹⁰ cents,
        // a product of 10¹⁹ > Int64.max ≈ 9.22 × 10¹⁸.
        let largest = Int128(1_000_000_000) * Int128(10_000_000_000)
        #expect(largest > Int128(Int64.max))
        #expect(Money.divide(largest, by: 1_000) == 10_000_000_000_000_000)
        #expect(Money.divide(largest + 499, by: 1_000) == 10_000_000_000_000_000)
        #expect(Money.divide(largest + 500, by: 1_000) == 10_000_000_000_000_001)
        #expect(Money.divide(-(largest + 499), by: 1_000) == -10_000_000_000_000_000)
        #expect(Money.divide(-(largest + 500), by: 1_000) == -10_000_000_000_000_001)

        // Int64.max × 10000 / 10000 comes back exactly; so does Int64.min.
        #expect(Money.divide(Int128(Int64.max) * 10_000, by: 10_000) == Int64.max)
        #expect(Money.divide(Int128(Int64.min) * 10_000, by: 10_000) == Int64.min)
        // 9,223,372,036,854,775,807 / 2 = 4,611,686,018,427,387,903.5 → …904.
        #expect(Money.divide(Int128(Int64.max), by: 2) == 4_611_686_018_427_387_904)
        #expect(Money.divide(-Int128(Int64.max), by: 2) == -4_611_686_018_427_387_904)
        // A balance × rate × days product of a REDUCING schedule, far beyond Int64:
        // (2⁶³ − 1) × 500 × 30 / 300000 = (2⁶³ − 1) / 20 = 461,168,601,842,738,790.35.
        #expect(Money.divide(Int128(Int64.max) * 500 * 30, by: 300_000) == 461_168_601_842_738_790)
        // An exact half with a 19-digit numerator: (2 × 10¹⁸ + 1) / 2.
        #expect(Money.divide(Int128(2_000_000_000_000_000_001), by: 2) == 1_000_000_000_000_000_001)
        #expect(Money.divide(-Int128(2_000_000_000_000_000_001), by: 2) == -1_000_000_000_000_000_001)
    }

    // MARK: - round(_ cents: Double)

    @Test(arguments: [
        (0.0, 0),
        (0.4, 0),
        (0.5, 1),
        (1.5, 2),
        (2.5, 3),  // not banker's rounding
        (3.5, 4),
        (2.4999999, 2),
        (2.5000001, 3),
        (-0.4, 0),
        (-0.5, -1),
        (-1.5, -2),
        (-2.5, -3),
        (-2.4999999, -2),
        // The largest Double below 0.5: a naive ⌊x + 0.5⌋ would give 1.
        (0.49999999999999994, 0),
        (-0.49999999999999994, 0),
        // The EMI of the sample loan (DOMAIN.md; CatalogTests' sampleSchedule).
        (360_348.539_210_661, 360_349),
        (57_518.083_721_952, 57_518),
        // Beyond 2⁵² every Double is a whole number or a half.
        (4_503_599_627_370_495.5, 4_503_599_627_370_496),
        (-4_503_599_627_370_495.5, -4_503_599_627_370_496),
        (9_007_199_254_740_992.0, 9_007_199_254_740_992),
    ] as [(Double, Int64)])
    func roundsDoublesHalfAwayFromZero(cents: Double, expected: Int64) {
        #expect(Money.round(cents) == expected)
    }

    // MARK: - apply(rateBp:to:)

    @Test(arguments: [
        // (rateBp, amount, expected)
        (1_000, 40_000, 4_000),  // 10% of ₹400
        (1_800, 114_000, 20_520),  // 18% GST of the sample invoice's rods
        (500, 120_000, 6_000),
        (10_000, 123_456, 123_456),
        (0, 123_456, 0),
        (1, 5_000, 1),  // 0.5 → 1
        (1, 4_999, 0),  // 0.4999 → 0
        (1, 15_000, 2),  // 1.5 → 2
        (1, 25_000, 3),  // 2.5 → 3
        (1_800, 3, 1),  // 0.54 → 1
        (1_800, 2, 0),  // 0.36 → 0
        (1_250, 13_860, 1_733),  // 1732.5 → 1733
        (1, -5_000, -1),  // -0.5 → -1
        (1, -4_999, 0),
        (1_250, -13_860, -1_733),
    ] as [(Int, Int64, Int64)])
    func appliesBasisPoints(rateBp: Int, amount: Int64, expected: Int64) {
        #expect(Money.apply(rateBp: rateBp, to: amount) == expected)
    }

    @Test func applyFormsItsProductInInt128() {
        // Int64.max × 10000 overflows Int64; the result does not.
        #expect(Money.apply(rateBp: 10_000, to: Int64.max) == Int64.max)
        #expect(Money.apply(rateBp: 5_000, to: Int64.max) == 4_611_686_018_427_387_904)
        #expect(Money.apply(rateBp: 5_000, to: Int64.min) == -4_611_686_018_427_387_904)
        // 28% GST on a 10¹⁶-cent line: 2.8 × 10¹⁹ in between.
        #expect(Money.apply(rateBp: 2_800, to: 10_000_000_000_000_000) == 2_800_000_000_000_000)
    }
}
