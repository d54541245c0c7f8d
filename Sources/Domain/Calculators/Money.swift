/// Money arithmetic. Amounts are `Int64` minor units (cents); rates are basis points.
///
/// Strata has one rounding rule for money, **half away from zero** (0.5 → 1, −0.5 → −1),
/// applied once at the end of each formula. Formulas are exact integer ratios, so the
/// rule is applied to a quotient; only the EMI amount, which needs a power, rounds a
/// `Double`. Both entry points below implement the same rule.
public enum Money {
    /// `numerator / denominator`, rounded half away from zero.
    ///
    /// The intermediate products of the formulas (a balance × a rate × days, a quantity ×
    /// a unit price) can exceed `Int64`, so they are formed in `Int128`. The quotient must
    /// fit `Int64`; the validation limits on every input guarantee it.
    public static func divide(_ numerator: Int128, by denominator: Int128) -> Int64 {
        precondition(denominator > 0, "denominator must be positive")
        var quotient = numerator / denominator
        let remainder = numerator % denominator  // has the numerator's sign
        if remainder.magnitude * 2 >= denominator.magnitude {
            quotient += numerator < 0 ? -1 : 1
        }
        return Int64(quotient)
    }

    /// A `Double` amount of cents rounded half away from zero. Only the EMI formula uses it.
    public static func round(_ cents: Double) -> Int64 {
        Int64(cents.rounded(.toNearestOrAwayFromZero))
    }

    /// `amount × rateBp / 10000`, rounded: a rate in basis points applied to an amount.
    public static func apply(rateBp: Int, to amountCents: Int64) -> Int64 {
        divide(Int128(amountCents) * Int128(rateBp), by: 10_000)
    }
}
