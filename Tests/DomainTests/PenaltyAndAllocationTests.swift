import Domain
import Events
import StrataCore
import Testing

// DOMAIN.md, Loans:
// - Penalty: round(unpaid × days / 1000) per installment, unpaid = its unpaid principal +
//   unpaid interest, days = paidOn − max(dueDate, last accrual date) when positive.
// - Allocation: installments oldest first; within each penalty, then interest, then
//   principal; money beyond what is due flows on to later installments in order.
// - type, judged after allocation: FULL if it leaves 0 owed; PENALTY if it went to penalty
//   only; PARTIAL if the oldest installment unpaid before it is still not fully paid
//   after it; REGULAR otherwise.

/// The sample loan of DOMAIN.md (CatalogTests' sampleSchedule): ₹10,000 at 4% a month over
/// three monthly installments, approved 2026-11-20. 1,081,046 cents to repay in all.
///   #1 due 2026-12-20: 320,349 principal + 40,000 interest = 360,349
///   #2 due 2027-01-19: 333,163 principal + 27,186 interest = 360,349
///   #3 due 2027-02-18: 346,488 principal + 13,860 interest = 360,348
private func sampleLoan() -> [InstallmentState] {
    workedSchedule.map(InstallmentState.init(entry:))
}

/// An installment of 522,611 (480,000 principal + 42,611 interest) due 2026-12-20:
/// DOMAIN.md's penalty example.
private func domainExampleInstallment() -> InstallmentState {
    InstallmentState(
        entry: ScheduleEntry(
            number: 1, dueDate: date("2026-12-20"), principalCents: 480_000, interestCents: 42_611, totalCents: 522_611,
            remainingBalanceCents: 0))
}

private func part(_ number: Int, accrued: Int64 = 0, penalty: Int64 = 0, interest: Int64 = 0, principal: Int64 = 0)
    -> InstallmentAllocation
{
    InstallmentAllocation(
        number: number, penaltyAccruedCents: accrued, penaltyCents: penalty, interestCents: interest, principalCents: principal)
}

private func allocation(penalty: Int64, interest: Int64, principal: Int64) -> PaymentAllocation {
    PaymentAllocation(penaltyCents: penalty, interestCents: interest, principalCents: principal)
}

@Suite("Penalty accrual")
struct PenaltyAccrualTests {
    @Test func domainExample() {
        // 522,611 × 30 / 1000 = 15,678.33 → 15,678.
        #expect(PenaltyAccrual.penalty(unpaidCents: 522_611, days: 30) == 15_678)
        let installment = domainExampleInstallment()
        #expect(PenaltyAccrual.daysLate(installment, on: date("2027-01-19")) == 30)
        #expect(PenaltyAccrual.accrue([installment], on: date("2027-01-19")) == [15_678])
    }

    @Test func noPenaltyOnOrBeforeTheDueDate() {
        let installment = domainExampleInstallment()
        for paidOn in ["2026-11-20", "2026-12-19", "2026-12-20"] {
            #expect(PenaltyAccrual.daysLate(installment, on: date(paidOn)) == 0, "\(paidOn)")
            #expect(PenaltyAccrual.accrue([installment], on: date(paidOn)) == [0], "\(paidOn)")
        }
        // One day late: 522.611 → 523.
        #expect(PenaltyAccrual.accrue([installment], on: date("2026-12-21")) == [523])
        #expect(PenaltyAccrual.penalty(unpaidCents: 522_611, days: 0) == 0)
        #expect(PenaltyAccrual.penalty(unpaidCents: 522_611, days: -3) == 0)
        #expect(PenaltyAccrual.penalty(unpaidCents: 0, days: 30) == 0)
    }

    @Test(arguments: [
        // (unpaid, days, expected)
        (500, 1, 1),  // 0.5 → 1
        (499, 1, 0),  // 0.499 → 0
        (1_500, 1, 2),  // 1.5 → 2
        (2_500, 1, 3),  // 2.5 → 3, not 2
        (100, 5, 1),  // 0.5 → 1
        (360_349, 6, 2_162),  // 2,162.094
        (360_349, 30, 10_810),  // 10,810.47
        (360_349, 45, 16_216),  // 16,215.705
        (100_000_000, 366, 36_600_000),  // 3% a month of the largest loan for a year: 36.6%
    ] as [(Int64, Int, Int64)])
    func roundsHalfAwayFromZero(unpaid: Int64, days: Int, expected: Int64) {
        #expect(PenaltyAccrual.penalty(unpaidCents: unpaid, days: days) == expected)
    }

    @Test func countedFromTheLastAccrualDate() {
        var installment = domainExampleInstallment()
        // A payment before the due date does not move the start: still counted from the due date.
        installment.lastAccrualDate = date("2026-12-10")
        #expect(PenaltyAccrual.daysLate(installment, on: date("2027-01-19")) == 30)
        #expect(PenaltyAccrual.accrue([installment], on: date("2027-01-19")) == [15_678])
        // A payment 10 days after the due date accrued those days already: 20 are left.
        // 522,611 × 20 / 1000 = 10,452.22 → 10,452.
        installment.lastAccrualDate = date("2026-12-30")
        #expect(PenaltyAccrual.daysLate(installment, on: date("2027-01-19")) == 20)
        #expect(PenaltyAccrual.accrue([installment], on: date("2027-01-19")) == [10_452])
        // Paid again on the day of the last accrual: nothing more.
        #expect(PenaltyAccrual.accrue([installment], on: date("2026-12-30")) == [0])
    }

    @Test func accruesOnUnpaidPrincipalAndInterestNotOnPenalty() {
        var installment = domainExampleInstallment()
        // Interest partly paid: 522,611 − 20,000 = 502,611; × 30 / 1000 = 15,078.33 → 15,078.
        installment.interestPaidCents = 20_000
        #expect(installment.unpaidScheduledCents == 502_611)
        #expect(PenaltyAccrual.accrue([installment], on: date("2027-01-19")) == [15_078])
        // Interest paid and principal partly paid: 180,000 left; × 30 / 1000 = 5,400.
        installment.interestPaidCents = 42_611
        installment.principalPaidCents = 300_000
        #expect(PenaltyAccrual.accrue([installment], on: date("2027-01-19")) == [5_400])
        // Unpaid penalty is not a base for more penalty.
        installment.penaltyAccruedCents = 15_678
        installment.penaltyPaidCents = 678
        #expect(installment.owedCents == 195_000)
        #expect(PenaltyAccrual.accrue([installment], on: date("2027-01-19")) == [5_400])
        // Principal and interest all paid, penalty still owed: it accrues nothing.
        installment.principalPaidCents = 480_000
        #expect(installment.owedCents == 15_000)
        #expect(PenaltyAccrual.accrue([installment], on: date("2027-06-30")) == [0])
    }

    @Test func eachInstallmentByItsOwnDueDate() {
        // Paid 2027-02-03: #1 is 45 days late, #2 15 days, #3 not yet due.
        #expect(PenaltyAccrual.accrue(sampleLoan(), on: date("2027-02-03")) == [16_216, 5_405, 0])
        // After a payment on 2027-01-19 accrued every installment through that date.
        var loan = sampleLoan()
        for index in loan.indices { loan[index].lastAccrualDate = date("2027-01-19") }
        // 2027-02-01: #1 and #2 13 days each (360,349 × 13 / 1000 = 4,684.537 → 4,685).
        #expect(PenaltyAccrual.accrue(loan, on: date("2027-02-01")) == [4_685, 4_685, 0])
    }

    /// An installment is held once per installment of every loan in the writer's cache, which is
    /// bounded by bytes: it keeps its 64-byte layout, and gives back its entry's number, date and
    /// amounts and any accrual date in years 1 to 9999.
    @Test func anInstallmentTakesSixtyFourBytesAndKeepsWhatItWasGiven() {
        #expect(MemoryLayout<InstallmentState>.stride == 64)
        var installment = domainExampleInstallment()
        #expect(installment.number == 1)
        #expect(installment.dueDate == date("2026-12-20"))
        #expect(installment.principalCents == 480_000 && installment.interestCents == 42_611)
        #expect(installment.lastAccrualDate == nil)
        for day in ["0001-01-01", "1969-12-31", "1970-01-01", "2026-12-20", "9999-12-31"] {
            installment.lastAccrualDate = date(day)
            #expect(installment.lastAccrualDate == date(day))
        }
        installment.lastAccrualDate = nil
        #expect(installment.lastAccrualDate == nil)
    }
}

@Suite("Payment allocation")
struct PaymentAllocationTests {
    @Test func firstInstallmentOnItsDueDateIsRegular() {
        // CatalogTests' samplePayment.
        let result = PaymentAllocator.allocate(amountCents: 360_349, to: sampleLoan(), paidOn: date("2026-12-20"))
        #expect(result.allocation == allocation(penalty: 0, interest: 40_000, principal: 320_349))
        #expect(result.perInstallment == [part(1, interest: 40_000, principal: 320_349)])
        #expect(result.type == .regular)
        #expect(result.outstandingAfterCents == 720_697)
    }

    @Test func interestBeforePrincipalAndPartial() {
        // 100,000 on the due date: 40,000 interest, then 60,000 principal; #1 still owes 260,349.
        let result = PaymentAllocator.allocate(amountCents: 100_000, to: sampleLoan(), paidOn: date("2026-12-20"))
        #expect(result.allocation == allocation(penalty: 0, interest: 40_000, principal: 60_000))
        #expect(result.perInstallment == [part(1, interest: 40_000, principal: 60_000)])
        #expect(result.type == .partial)
        #expect(result.outstandingAfterCents == 981_046)

        // Less than the interest: all of it to interest.
        let small = PaymentAllocator.allocate(amountCents: 25_000, to: sampleLoan(), paidOn: date("2026-12-01"))
        #expect(small.allocation == allocation(penalty: 0, interest: 25_000, principal: 0))
        #expect(small.perInstallment == [part(1, interest: 25_000)])
        #expect(small.type == .partial)
        #expect(small.outstandingAfterCents == 1_056_046)
    }

    @Test func overflowPrepaysLaterInstallmentsInOrder() {
        // 500,000 on 2026-12-20: #1 takes 360,349; the 139,651 left go to #2: 27,186
        // interest, then 112,465 principal.
        let result = PaymentAllocator.allocate(amountCents: 500_000, to: sampleLoan(), paidOn: date("2026-12-20"))
        #expect(result.allocation == allocation(penalty: 0, interest: 67_186, principal: 432_814))
        #expect(result.perInstallment == [part(1, interest: 40_000, principal: 320_349), part(2, interest: 27_186, principal: 112_465)])
        #expect(result.type == .regular)
        #expect(result.outstandingAfterCents == 581_046)

        // 800,000 before any due date: #1 and #2 whole, #3 13,860 interest + 65,442 principal.
        let early = PaymentAllocator.allocate(amountCents: 800_000, to: sampleLoan(), paidOn: date("2026-12-01"))
        #expect(early.allocation == allocation(penalty: 0, interest: 81_046, principal: 718_954))
        #expect(
            early.perInstallment == [
                part(1, interest: 40_000, principal: 320_349), part(2, interest: 27_186, principal: 333_163),
                part(3, interest: 13_860, principal: 65_442),
            ])
        #expect(early.type == .regular)
        #expect(early.outstandingAfterCents == 281_046)
    }

    @Test func latePaymentPaysPenaltyFirst() {
        // 2027-01-19: #1 is 30 days late (accrues 10,810); #2 is due that day (nothing).
        let loan = sampleLoan()
        #expect(PaymentAllocator.owed(loan, on: date("2027-01-19")) == 1_091_856)
        let result = PaymentAllocator.allocate(amountCents: 371_159, to: loan, paidOn: date("2027-01-19"))
        #expect(result.allocation == allocation(penalty: 10_810, interest: 40_000, principal: 320_349))
        #expect(result.perInstallment == [part(1, accrued: 10_810, penalty: 10_810, interest: 40_000, principal: 320_349)])
        #expect(result.type == .regular)
        #expect(result.outstandingAfterCents == 720_697)
    }

    @Test func penaltyOnlyIsPenalty() {
        // 5,000 of the 10,810 accrued on #1.
        let some = PaymentAllocator.allocate(amountCents: 5_000, to: sampleLoan(), paidOn: date("2027-01-19"))
        #expect(some.allocation == allocation(penalty: 5_000, interest: 0, principal: 0))
        #expect(some.perInstallment == [part(1, accrued: 10_810, penalty: 5_000)])
        #expect(some.type == .penalty)
        #expect(some.outstandingAfterCents == 1_086_856)

        // Exactly the accrued penalty: still PENALTY, though #1 is not paid.
        let all = PaymentAllocator.allocate(amountCents: 10_810, to: sampleLoan(), paidOn: date("2027-01-19"))
        #expect(all.allocation == allocation(penalty: 10_810, interest: 0, principal: 0))
        #expect(all.type == .penalty)
        #expect(all.outstandingAfterCents == 1_081_046)
    }

    @Test func installmentsThatOnlyAccruedPenaltyAreListed() {
        // 2027-02-03: #1 accrues 16,216 (45 days), #2 5,405 (15 days), #3 nothing.
        // 100,000: 16,216 penalty, 40,000 interest, 43,784 principal, all on #1.
        let result = PaymentAllocator.allocate(amountCents: 100_000, to: sampleLoan(), paidOn: date("2027-02-03"))
        #expect(result.allocation == allocation(penalty: 16_216, interest: 40_000, principal: 43_784))
        #expect(
            result.perInstallment == [
                part(1, accrued: 16_216, penalty: 16_216, interest: 40_000, principal: 43_784), part(2, accrued: 5_405),
            ])
        #expect(result.type == .partial)
        // 1,081,046 + 16,216 + 5,405 − 100,000.
        #expect(result.outstandingAfterCents == 1_002_667)
    }

    @Test func everythingOwedIsFull() {
        let onTime = PaymentAllocator.allocate(amountCents: 1_081_046, to: sampleLoan(), paidOn: date("2026-12-20"))
        #expect(onTime.allocation == allocation(penalty: 0, interest: 81_046, principal: 1_000_000))
        #expect(onTime.perInstallment.map(\.number) == [1, 2, 3])
        #expect(onTime.type == .full)
        #expect(onTime.outstandingAfterCents == 0)

        // Late: 1,081,046 + 16,216 + 5,405 = 1,102,667 on 2027-02-03.
        #expect(PaymentAllocator.owed(sampleLoan(), on: date("2027-02-03")) == 1_102_667)
        let late = PaymentAllocator.allocate(amountCents: 1_102_667, to: sampleLoan(), paidOn: date("2027-02-03"))
        #expect(late.allocation == allocation(penalty: 21_621, interest: 81_046, principal: 1_000_000))
        #expect(
            late.perInstallment == [
                part(1, accrued: 16_216, penalty: 16_216, interest: 40_000, principal: 320_349),
                part(2, accrued: 5_405, penalty: 5_405, interest: 27_186, principal: 333_163),
                part(3, interest: 13_860, principal: 346_488),
            ])
        #expect(late.type == .full)
        #expect(late.outstandingAfterCents == 0)
    }

    @Test func reproducesTheSparsePaymentSample() {
        // CatalogTests' sparse PaymentReceived: #1 paid on its due date 2026-12-20, then
        // 100,000 on 2027-01-25, 6 days after #2 fell due: 360,349 × 6 / 1000 = 2,162.094
        // → 2,162 penalty, 27,186 interest, 70,652 principal.
        var loan = sampleLoan()
        loan[0].interestPaidCents = 40_000
        loan[0].principalPaidCents = 320_349
        for index in loan.indices { loan[index].lastAccrualDate = date("2026-12-20") }
        let result = PaymentAllocator.allocate(amountCents: 100_000, to: loan, paidOn: date("2027-01-25"))
        #expect(result.allocation == allocation(penalty: 2_162, interest: 27_186, principal: 70_652))
        #expect(result.perInstallment == [part(2, accrued: 2_162, penalty: 2_162, interest: 27_186, principal: 70_652)])
        #expect(result.type == .partial)
        #expect(result.outstandingAfterCents == 622_859)
    }

    @Test func oldestUnpaidIsJudgedAfterEarlierPayments() {
        // #1 half paid on its due date (40,000 interest + 60,000 principal; 260,349 left),
        // and accrued through 2027-01-01 by a later payment of penalty only.
        var loan = sampleLoan()
        loan[0].interestPaidCents = 40_000
        loan[0].principalPaidCents = 60_000
        for index in loan.indices { loan[index].lastAccrualDate = date("2027-01-01") }
        // 2027-01-09: 8 days since the last accrual, 260,349 × 8 / 1000 = 2,082.792 → 2,083.
        #expect(PenaltyAccrual.accrue(loan, on: date("2027-01-09")) == [2_083, 0, 0])

        // Exactly what #1 owes: it is settled, so REGULAR.
        let settles = PaymentAllocator.allocate(amountCents: 262_432, to: loan, paidOn: date("2027-01-09"))
        #expect(settles.allocation == allocation(penalty: 2_083, interest: 0, principal: 260_349))
        #expect(settles.perInstallment == [part(1, accrued: 2_083, penalty: 2_083, principal: 260_349)])
        #expect(settles.type == .regular)
        #expect(settles.outstandingAfterCents == 720_697)

        // One cent short: #1 still owes a cent, so PARTIAL.
        let short = PaymentAllocator.allocate(amountCents: 262_431, to: loan, paidOn: date("2027-01-09"))
        #expect(short.allocation == allocation(penalty: 2_083, interest: 0, principal: 260_348))
        #expect(short.type == .partial)
        #expect(short.outstandingAfterCents == 720_698)

        // Without the later accrual date, 20 days are counted from the due date:
        // 260,349 × 20 / 1000 = 5,206.98 → 5,207.
        for index in loan.indices { loan[index].lastAccrualDate = date("2026-12-20") }
        #expect(PenaltyAccrual.accrue(loan, on: date("2027-01-09")) == [5_207, 0, 0])
    }

    @Test func unpaidPenaltyKeepsAnInstallmentTheOldestUnpaid() {
        // #1's principal and interest are paid, 5,810 of its 10,810 penalty is not; paid on
        // 2027-01-19, #2's due date, so nothing accrues now.
        var loan = sampleLoan()
        loan[0].interestPaidCents = 40_000
        loan[0].principalPaidCents = 320_349
        loan[0].penaltyAccruedCents = 10_810
        loan[0].penaltyPaidCents = 5_000
        for index in loan.indices { loan[index].lastAccrualDate = date("2027-01-19") }
        #expect(PaymentAllocator.owed(loan, on: date("2027-01-19")) == 726_507)

        // Part of that penalty: PENALTY.
        let some = PaymentAllocator.allocate(amountCents: 3_000, to: loan, paidOn: date("2027-01-19"))
        #expect(some.allocation == allocation(penalty: 3_000, interest: 0, principal: 0))
        #expect(some.perInstallment == [part(1, penalty: 3_000)])
        #expect(some.type == .penalty)
        #expect(some.outstandingAfterCents == 723_507)

        // All of it, and nothing else: still PENALTY (it went to penalty only).
        let exactly = PaymentAllocator.allocate(amountCents: 5_810, to: loan, paidOn: date("2027-01-19"))
        #expect(exactly.type == .penalty)
        #expect(exactly.outstandingAfterCents == 720_697)

        // The penalty and 4,190 of #2's interest: #1, the oldest unpaid, is settled, so
        // REGULAR even though #2 is far from paid.
        let more = PaymentAllocator.allocate(amountCents: 10_000, to: loan, paidOn: date("2027-01-19"))
        #expect(more.allocation == allocation(penalty: 5_810, interest: 4_190, principal: 0))
        #expect(more.perInstallment == [part(1, penalty: 5_810), part(2, interest: 4_190)])
        #expect(more.type == .regular)
        #expect(more.outstandingAfterCents == 716_507)
    }

    @Test func settledInstallmentsAreSkipped() {
        // #1 settled on its due date; on 2027-02-01 #2 is 13 days late:
        // 360,349 × 13 / 1000 = 4,684.537 → 4,685. #1 accrues nothing and is not listed.
        var loan = sampleLoan()
        loan[0].interestPaidCents = 40_000
        loan[0].principalPaidCents = 320_349
        for index in loan.indices { loan[index].lastAccrualDate = date("2026-12-20") }
        let result = PaymentAllocator.allocate(amountCents: 365_034, to: loan, paidOn: date("2027-02-01"))
        #expect(result.allocation == allocation(penalty: 4_685, interest: 27_186, principal: 333_163))
        #expect(result.perInstallment == [part(2, accrued: 4_685, penalty: 4_685, interest: 27_186, principal: 333_163)])
        #expect(result.type == .regular)
        #expect(result.outstandingAfterCents == 360_348)

        // The last installment alone, and nothing more: FULL.
        loan[1].interestPaidCents = 27_186
        loan[1].principalPaidCents = 333_163
        loan[1].penaltyAccruedCents = 4_685
        loan[1].penaltyPaidCents = 4_685
        for index in loan.indices { loan[index].lastAccrualDate = date("2027-02-01") }
        let last = PaymentAllocator.allocate(amountCents: 360_348, to: loan, paidOn: date("2027-02-18"))
        #expect(last.perInstallment == [part(3, interest: 13_860, principal: 346_488)])
        #expect(last.type == .full)
        #expect(last.outstandingAfterCents == 0)
    }

    @Test func moneyIsConservedAndOwedFallsByTheAmount() {
        // Every amount from 1 cent to all that is owed, on several dates: the allocation
        // sums to the amount and what is left is what was owed less the amount.
        let dates = ["2026-12-01", "2026-12-20", "2027-01-19", "2027-02-03", "2027-03-31"].map(date)
        let loan = sampleLoan()
        for paidOn in dates {
            let owed = PaymentAllocator.owed(loan, on: paidOn)
            for amount in stride(from: Int64(1), through: owed, by: 9_973) + [owed] {
                let result = PaymentAllocator.allocate(amountCents: amount, to: loan, paidOn: paidOn)
                let a = result.allocation
                #expect(a.penaltyCents + a.interestCents + a.principalCents == amount, "\(amount) on \(paidOn)")
                #expect(result.outstandingAfterCents == owed - amount, "\(amount) on \(paidOn)")
                #expect(
                    result.perInstallment.reduce(0) { $0 + $1.penaltyCents + $1.interestCents + $1.principalCents } == amount,
                    "\(amount) on \(paidOn)")
                #expect((result.type == .full) == (amount == owed), "\(amount) on \(paidOn)")
            }
        }
    }
}
