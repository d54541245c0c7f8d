import StrataCore

/// Late-payment penalty: 3% a month of an overdue installment's unpaid amount (its unpaid
/// principal plus unpaid interest), simple, accrued daily (0.1% a day), when a payment is
/// received.
///
/// For each installment: days = paidOn − max(dueDate, last accrual date) when positive,
/// penalty = round(unpaid × days / 1000). After a payment the installment's last accrual
/// date is that payment's paidOn, so no day is charged twice.
/// Example: 522,611 unpaid, 30 days late → round(522,611 × 30 / 1000) = 15,678.
public enum PenaltyAccrual {
    /// The penalty on `unpaidCents` for `days` days late.
    public static func penalty(unpaidCents: Int64, days: Int) -> Int64 {
        guard days > 0, unpaidCents > 0 else { return 0 }
        return Money.divide(Int128(unpaidCents) * Int128(days), by: 1_000)
    }

    /// Days of penalty an installment accrues when paid on `date`.
    public static func daysLate(_ installment: InstallmentState, on date: LocalDate) -> Int {
        let from = max(installment.dueDate, installment.lastAccrualDate ?? installment.dueDate)
        return max(0, from.days(until: date))
    }

    /// The penalty each installment accrues when a payment is received on `date`, in order.
    public static func accrue(_ installments: [InstallmentState], on date: LocalDate) -> [Int64] {
        installments.map { penalty(unpaidCents: $0.unpaidScheduledCents, days: daysLate($0, on: date)) }
    }
}
