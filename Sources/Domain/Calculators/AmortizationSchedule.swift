#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Events
import StrataCore

/// A loan's installments, computed once at approval and stored in `LoanApproved`.
///
/// - period days d = 7 / 15 / 30 (WEEKLY / BI_MONTHLY / MONTHLY); installments
///   n = ceil(tenureMonths × 30 / d); per-period rate r = monthlyRateBp / 10000 × d / 30.
/// - REDUCING: the EMI A = P·r·(1+r)ⁿ / ((1+r)ⁿ − 1), in `Double`, rounded to a cent.
///   Each installment's interest = round(balance × monthlyRateBp × d / 300000) exactly;
///   its principal = A − interest; the last installment takes the whole remaining
///   balance as principal, with its own interest, so principals sum to P exactly.
/// - FLAT: total interest I = round(P × monthlyRateBp × tenureMonths / 10000); each
///   installment gets ⌊I / n⌋ interest and ⌊P / n⌋ principal; the last takes both remainders.
/// - Installment i is due approvedOn + i × d days; remainingBalance is the principal
///   still owed after it.
public enum AmortizationSchedule {
    /// n = ceil(tenureMonths × 30 / period days): weekly over 12 months is 52.
    public static func installmentCount(tenureMonths: Int, frequency: LoanFrequency) -> Int {
        let days = tenureMonths * 30
        let period = frequency.periodDays
        return (days + period - 1) / period
    }

    /// The REDUCING installment amount A (the EMI), rounded half away from zero.
    public static func equatedInstallment(
        principalCents: Int64, monthlyRateBp: Int, frequency: LoanFrequency, installments n: Int
    ) -> Int64 {
        let r = Double(monthlyRateBp) / 10_000 * Double(frequency.periodDays) / 30
        let growth = pow(1 + r, Double(n))
        return Money.round(Double(principalCents) * r * growth / (growth - 1))
    }

    public static func schedule(
        principalCents: Int64, monthlyRateBp: Int, tenureMonths: Int, frequency: LoanFrequency,
        method: InterestMethod, approvedOn: LocalDate
    ) -> [ScheduleEntry] {
        let n = installmentCount(tenureMonths: tenureMonths, frequency: frequency)
        let period = frequency.periodDays
        var balance = principalCents
        var entries: [ScheduleEntry] = []
        entries.reserveCapacity(n)

        func append(_ number: Int, principal: Int64, interest: Int64) {
            balance -= principal
            entries.append(
                ScheduleEntry(
                    number: number, dueDate: approvedOn.adding(days: number * period), principalCents: principal,
                    interestCents: interest, totalCents: principal + interest, remainingBalanceCents: balance))
        }

        switch method {
        case .reducing:
            let emi = equatedInstallment(
                principalCents: principalCents, monthlyRateBp: monthlyRateBp, frequency: frequency, installments: n)
            for number in 1...n {
                let interest = Money.divide(
                    Int128(balance) * Int128(monthlyRateBp) * Int128(period), by: 300_000)
                // The last installment clears the balance. Before it, the principal part
                // stays within 0...balance even for amounts so small that rounding the
                // EMI to a cent would otherwise overshoot.
                let principal = number == n ? balance : min(max(emi - interest, 0), balance)
                append(number, principal: principal, interest: interest)
            }
        case .flat:
            let totalInterest = Money.divide(
                Int128(principalCents) * Int128(monthlyRateBp) * Int128(tenureMonths), by: 10_000)
            let interestEach = totalInterest / Int64(n)
            let principalEach = principalCents / Int64(n)
            for number in 1...n {
                let last = number == n
                append(
                    number,
                    principal: last ? principalCents - principalEach * Int64(n - 1) : principalEach,
                    interest: last ? totalInterest - interestEach * Int64(n - 1) : interestEach)
            }
        }
        return entries
    }
}
