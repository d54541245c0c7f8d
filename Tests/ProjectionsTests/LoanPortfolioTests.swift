import Events
import Projections
import StrataCore
import StrataTesting
import Testing

@Suite struct LoanPortfolioTests {
    private typealias F = LendingFixtures
    private let columns = """
        SELECT loan_id, account_id, agent_id, status, principal_cents, monthly_rate_bp, tenure_months, frequency,
               interest_method, requested_on, requested_by, requested_at, approved_on, approved_by, rejected_by,
               rejected_reason, closed_on, installments, total_due_cents, total_paid_cents, principal_paid_cents,
               interest_paid_cents, penalty_paid_cents, penalty_accrued_cents, outstanding_cents, next_due_date,
               payments_count, last_paid_on
        FROM loans ORDER BY loan_id
        """

    /// An L1 row: its status, the request's columns (requested at position 1), then `rest`.
    private func l1(_ status: ProjectionValue, _ rest: [ProjectionValue]) -> [ProjectionValue] {
        let requested: [ProjectionValue] = [
            3_000_000, 400, 3, "MONTHLY", "REDUCING", "2026-01-02", "agent-1", F.recordedAt(1),
        ]
        return ["L1", "A1", "agent-1", status] + requested + rest
    }

    @Test func aLoanFromRequestThroughAPartialAndAFullPaymentToClosing() throws {
        let h = try ProjectionHarness(LoanPortfolio.withInstallments)
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        #expect(
            try h.rows(columns) == [
                l1("PENDING_APPROVAL", [nil, nil, nil, nil, nil, 0, 0, 0, 0, 0, 0, 0, 0, nil, 0, nil])
            ])

        // Approved: 3 installments, 10,810.46 + 10,810.46 + 10,810.45 due in all.
        try h.given(F.loanApproved("L1"), stream: "loan-L1")
        #expect(
            try h.rows(columns) == [
                l1(
                    "ACTIVE",
                    [
                        "2026-01-05", "admin-1", nil, nil, nil, 3, 3_243_137, 0, 0, 0, 0, 0, 3_243_137, "2026-02-04", 0,
                        nil,
                    ])
            ])

        // P1: 6,000.00 with 432.42 + 108.10 of penalty accrued; installment 1 still owes 5,242.88,
        // so it is still the next one due. 32,431.37 − 6,000.00 + 540.52 = 26,971.89 outstanding.
        try h.given(F.partialPayment(), stream: "loan-L1", actor: "agent-1")
        #expect(
            try h.rows(columns) == [
                l1(
                    "ACTIVE",
                    [
                        "2026-01-05", "admin-1", nil, nil, nil, 3, 3_243_137, 600_000, 436_758, 120_000, 43_242, 54_052,
                        2_697_189, "2026-02-04", 1, "2026-03-16",
                    ])
            ])

        // P2 settles everything; the loan closes.
        try h.given(F.fullPayment(), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanClosed(), stream: "loan-L1")
        #expect(
            try h.rows(columns) == [
                l1(
                    "CLOSED",
                    [
                        "2026-01-05", "admin-1", nil, nil, "2026-03-20", 3, 3_243_137, 3_303_610, 3_000_000, 243_137,
                        60_473, 60_473, 0, nil, 2, "2026-03-20",
                    ])
            ])
        #expect(try h.rows("SELECT count(*) FROM loan_installments WHERE status <> 'PAID'") == [[0]])
    }

    @Test func aPaymentThatSettlesInstallmentsMovesTheNextDueDate() throws {
        let h = try ProjectionHarness(LoanPortfolio.withInstallments)
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanApproved("L1"), stream: "loan-L1")
        // Exactly installment 1, on its due date (no penalty): REGULAR.
        try h.given(F.firstInstallmentOnTime(), stream: "loan-L1", actor: "agent-1")
        #expect(
            try h.rows("SELECT outstanding_cents, next_due_date, payments_count FROM loans")
                == [[2_162_091, "2026-03-06", 1]])

        // 15,000.00 early: installment 2 in full and 4,189.54 of installment 3.
        try h.given(
            .paymentReceived(
                PaymentReceived(
                    paymentId: "P2", loanId: "L1", amountCents: 1_500_000, paidOn: F.date("2026-02-10"), method: .cash,
                    receivedBy: "admin-1", type: .regular,
                    allocation: PaymentAllocation(penaltyCents: 0, interestCents: 123_137, principalCents: 1_376_863),
                    perInstallment: [
                        InstallmentAllocation(
                            number: 2, penaltyAccruedCents: 0, penaltyCents: 0, interestCents: 81_558,
                            principalCents: 999_488),
                        InstallmentAllocation(
                            number: 3, penaltyAccruedCents: 0, penaltyCents: 0, interestCents: 41_579,
                            principalCents: 377_375),
                    ],
                    outstandingAfterCents: 662_091)),
            stream: "loan-L1")
        #expect(
            try h.rows(
                """
                SELECT status, total_paid_cents, principal_paid_cents, interest_paid_cents, outstanding_cents,
                       next_due_date, payments_count, last_paid_on
                FROM loans
                """) == [["ACTIVE", 2_581_046, 2_337_909, 243_137, 662_091, "2026-04-05", 2, "2026-02-10"]])
        #expect(
            try h.rows("SELECT number, due_date, status FROM loan_installments WHERE status <> 'PAID'")
                == [[3, "2026-04-05", "PARTIAL"]])
    }

    @Test func aRejectedLoanKeepsWhoAndWhy() throws {
        let h = try ProjectionHarness(LoanPortfolio.withInstallments)
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        try h.given(
            .loanRejected(LoanRejected(loanId: "L1", rejectedBy: "admin-1", reason: "Income not verified")),
            stream: "loan-L1")
        #expect(
            try h.rows(columns) == [
                l1("REJECTED", [nil, nil, "admin-1", "Income not verified", nil, 0, 0, 0, 0, 0, 0, 0, 0, nil, 0, nil])
            ])
    }

    @Test func aPaymentOnAnUnknownLoanStopsTheProjection() throws {
        let h = try ProjectionHarness(LoanPortfolio.withInstallments)
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        try h.given(F.partialPayment("L7"), stream: "loan-L7", actor: "agent-1")
        let stop = try #require(h.database.stop)
        #expect(stop.position == 2 && stop.error.contains("L7") && stop.error.contains("P1"))
    }
}
