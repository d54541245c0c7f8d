import Events
import Projections
import StrataCore
import StrataTesting
import Testing

@Suite struct LoanInstallmentsTests {
    private typealias F = LendingFixtures
    private let columns = """
        SELECT loan_id, number, due_date, principal_cents, interest_cents, total_cents, remaining_balance_cents,
               principal_paid_cents, interest_paid_cents, penalty_accrued_cents, penalty_paid_cents, status, paid_on
        FROM loan_installments ORDER BY loan_id, number
        """

    @Test func theScheduleFixedAtApprovalThenWhatEachPaymentDidToIt() throws {
        let h = try ProjectionHarness([LoanInstallments()])
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        #expect(try h.rows(columns) == [])

        try h.given(F.loanApproved("L1"), stream: "loan-L1")
        #expect(
            try h.rows(columns) == [
                ["L1", 1, "2026-02-04", 961_046, 120_000, 1_081_046, 2_038_954, 0, 0, 0, 0, "UNPAID", nil],
                ["L1", 2, "2026-03-06", 999_488, 81_558, 1_081_046, 1_039_466, 0, 0, 0, 0, "UNPAID", nil],
                ["L1", 3, "2026-04-05", 1_039_466, 41_579, 1_081_045, 0, 0, 0, 0, 0, "UNPAID", nil],
            ])

        // P1: installment 1 gets its penalty (432.42), its interest and 4,367.58 of principal;
        // installment 2 only accrues 108.10 of penalty and stays UNPAID.
        try h.given(F.partialPayment(), stream: "loan-L1", actor: "agent-1")
        #expect(
            try h.rows(columns) == [
                ["L1", 1, "2026-02-04", 961_046, 120_000, 1_081_046, 2_038_954, 436_758, 120_000, 43_242, 43_242,
                    "PARTIAL", nil],
                ["L1", 2, "2026-03-06", 999_488, 81_558, 1_081_046, 1_039_466, 0, 0, 10_810, 0, "UNPAID", nil],
                ["L1", 3, "2026-04-05", 1_039_466, 41_579, 1_081_045, 0, 0, 0, 0, 0, "UNPAID", nil],
            ])

        // P2 pays everything, penalty included (20.97 and 43.24 more accrued); installment 3 early.
        try h.given(F.fullPayment(), stream: "loan-L1", actor: "agent-1")
        #expect(
            try h.rows(columns) == [
                ["L1", 1, "2026-02-04", 961_046, 120_000, 1_081_046, 2_038_954, 961_046, 120_000, 45_339, 45_339,
                    "PAID", "2026-03-20"],
                ["L1", 2, "2026-03-06", 999_488, 81_558, 1_081_046, 1_039_466, 999_488, 81_558, 15_134, 15_134,
                    "PAID", "2026-03-20"],
                ["L1", 3, "2026-04-05", 1_039_466, 41_579, 1_081_045, 0, 1_039_466, 41_579, 0, 0, "PAID",
                    "2026-03-20"],
            ])
    }

    @Test func aPaymentThatOnlyReachesPenaltyLeavesTheInstallmentPartial() throws {
        let h = try ProjectionHarness([LoanInstallments()])
        try h.given(F.loanApproved("L1"), stream: "loan-L1")
        // 100.00 on 2026-03-16 goes to installment 1's 432.42 of new penalty; installment 2
        // accrues 108.10 and gets nothing.
        try h.given(
            .paymentReceived(
                PaymentReceived(
                    paymentId: "P1", loanId: "L1", amountCents: 10_000, paidOn: F.date("2026-03-16"), method: .cash,
                    receivedBy: "agent-1", type: .penalty,
                    allocation: PaymentAllocation(penaltyCents: 10_000, interestCents: 0, principalCents: 0),
                    perInstallment: [
                        InstallmentAllocation(
                            number: 1, penaltyAccruedCents: 43_242, penaltyCents: 10_000, interestCents: 0,
                            principalCents: 0),
                        InstallmentAllocation(
                            number: 2, penaltyAccruedCents: 10_810, penaltyCents: 0, interestCents: 0,
                            principalCents: 0),
                    ],
                    outstandingAfterCents: 3_287_189)),
            stream: "loan-L1")
        #expect(
            try h.rows(
                """
                SELECT number, principal_paid_cents, interest_paid_cents, penalty_accrued_cents, penalty_paid_cents,
                       status, paid_on
                FROM loan_installments ORDER BY number
                """) == [
                    [1, 0, 0, 43_242, 10_000, "PARTIAL", nil],
                    [2, 0, 0, 10_810, 0, "UNPAID", nil],
                    [3, 0, 0, 0, 0, "UNPAID", nil],
                ])
    }

    @Test func anInstallmentOfNothingIsPaidFromTheStart() throws {
        // A FLAT loan of 0.02 over 3 installments: ⌊2 / 3⌋ = 0 for the first two.
        let h = try ProjectionHarness([LoanInstallments()])
        let tiny = [
            ScheduleEntry(
                number: 1, dueDate: F.date("2026-02-04"), principalCents: 0, interestCents: 0, totalCents: 0,
                remainingBalanceCents: 2),
            ScheduleEntry(
                number: 2, dueDate: F.date("2026-03-06"), principalCents: 0, interestCents: 0, totalCents: 0,
                remainingBalanceCents: 2),
            ScheduleEntry(
                number: 3, dueDate: F.date("2026-04-05"), principalCents: 2, interestCents: 0, totalCents: 2,
                remainingBalanceCents: 0),
        ]
        try h.given(F.loanApproved("L1", schedule: tiny), stream: "loan-L1")
        #expect(
            try h.rows("SELECT number, status, paid_on FROM loan_installments ORDER BY number")
                == [[1, "PAID", "2026-01-05"], [2, "PAID", "2026-01-05"], [3, "UNPAID", nil]])
    }

    @Test func aPaymentOnAnInstallmentNotInTheScheduleStopsTheProjection() throws {
        let h = try ProjectionHarness([LoanInstallments()])
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        try h.given(F.partialPayment(), stream: "loan-L1", actor: "agent-1")
        let stop = try #require(h.database.stop)
        #expect(stop.position == 2 && stop.error.contains("installment 1 of loan L1"))
    }

    /// Installments settle oldest first and a settled one is never paid again: a part for an
    /// installment already PAID means the events and this file disagree.
    @Test func aPaymentOnAnInstallmentAlreadyPaidStopsTheProjection() throws {
        let h = try ProjectionHarness([LoanInstallments()])
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanApproved("L1"), stream: "loan-L1")
        try h.given(F.firstInstallmentOnTime(id: "P1"), stream: "loan-L1", actor: "agent-1")
        #expect(try h.rows("SELECT status FROM loan_installments WHERE number = 1") == [["PAID"]])
        #expect(h.database.stop == nil)
        try h.given(F.firstInstallmentOnTime(id: "P2"), stream: "loan-L1", actor: "agent-1")
        let stop = try #require(h.database.stop)
        #expect(stop.position == 4 && stop.error.contains("P2") && stop.error.contains("installment 1 of loan L1"))
    }
}
