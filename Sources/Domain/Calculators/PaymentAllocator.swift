import Events
import StrataCore

/// Where a loan payment's money goes: installments oldest first; within each, accrued
/// penalty, then interest, then principal; whatever one installment does not need flows
/// on to the next, so money beyond what is due prepays later installments in order.
public enum PaymentAllocator {
    public struct Result: Sendable, Hashable {
        public var allocation: PaymentAllocation
        /// The installments touched (penalty accrued on, or money paid to), in order.
        public var perInstallment: [InstallmentAllocation]
        public var type: PaymentType
        /// What is owed after the payment: unpaid principal + interest + accrued penalty.
        public var outstandingAfterCents: Int64
    }

    /// What is owed on `installments` once penalty is accrued on `paidOn`.
    public static func owed(_ installments: [InstallmentState], on paidOn: LocalDate) -> Int64 {
        zip(installments, PenaltyAccrual.accrue(installments, on: paidOn)).reduce(0) { $0 + $1.0.owedCents + $1.1 }
    }

    /// Accrues penalty as of `paidOn`, then allocates `amountCents`. The amount must not
    /// exceed `owed(installments, on: paidOn)`; the decider refuses it before.
    public static func allocate(amountCents: Int64, to installments: [InstallmentState], paidOn: LocalDate) -> Result {
        let accrued = PenaltyAccrual.accrue(installments, on: paidOn)
        // The oldest installment not settled before this payment (penalty included).
        let oldestUnpaid = installments.indices.first { installments[$0].owedCents + accrued[$0] > 0 }

        var remaining = amountCents
        var total = PaymentAllocation(penaltyCents: 0, interestCents: 0, principalCents: 0)
        var parts: [InstallmentAllocation] = []
        var owedAfter: Int64 = 0
        var oldestSettled = true

        for (index, installment) in installments.enumerated() {
            let penaltyOwed = installment.unpaidPenaltyCents + accrued[index]
            let penalty = min(remaining, penaltyOwed)
            remaining -= penalty
            let interest = min(remaining, installment.unpaidInterestCents)
            remaining -= interest
            let principal = min(remaining, installment.unpaidPrincipalCents)
            remaining -= principal

            let left = installment.owedCents + accrued[index] - penalty - interest - principal
            owedAfter += left
            if index == oldestUnpaid { oldestSettled = left == 0 }
            total.penaltyCents += penalty
            total.interestCents += interest
            total.principalCents += principal
            if accrued[index] > 0 || penalty + interest + principal > 0 {
                parts.append(
                    InstallmentAllocation(
                        number: installment.number, penaltyAccruedCents: accrued[index], penaltyCents: penalty,
                        interestCents: interest, principalCents: principal))
            }
        }

        let type: PaymentType
        if owedAfter == 0 {
            type = .full
        } else if total.interestCents == 0 && total.principalCents == 0 {
            type = .penalty
        } else if !oldestSettled {
            type = .partial
        } else {
            type = .regular
        }
        return Result(allocation: total, perInstallment: parts, type: type, outstandingAfterCents: owedAfter)
    }
}
