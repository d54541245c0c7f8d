import Events
import Projections
import StrataCore
import StrataTesting
import Testing

@Suite struct LoanPaymentsTests {
    private typealias F = LendingFixtures

    @Test func everyPaymentAndWhatItDidToEachInstallment() throws {
        let h = try ProjectionHarness([LoanPayments()])
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanApproved("L1"), stream: "loan-L1")
        try h.given(F.partialPayment(), stream: "loan-L1", actor: "agent-1")
        try h.given(F.fullPayment(), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanClosed(), stream: "loan-L1")
        #expect(
            try h.rows(
                """
                SELECT payment_id, loan_id, position, paid_on, amount_cents, method, type, penalty_cents,
                       interest_cents, principal_cents, outstanding_after_cents, received_by, external_ref, notes,
                       recorded_at
                FROM loan_payments WHERE loan_id = 'L1' ORDER BY position
                """) == [
                    [
                        "P1", "L1", 3, "2026-03-16", 600_000, "CASH", "PARTIAL", 43_242, 120_000, 436_758, 2_697_189,
                        "agent-1", nil, "first visit", F.recordedAt(3),
                    ],
                    [
                        "P2", "L1", 4, "2026-03-20", 2_703_610, "WALLET", "FULL", 17_231, 123_137, 2_563_242, 0,
                        "agent-1", "0xfeed", nil, F.recordedAt(4),
                    ],
                ])
        #expect(
            try h.rows(
                """
                SELECT payment_id, number, loan_id, penalty_accrued_cents, penalty_cents, interest_cents,
                       principal_cents
                FROM loan_payment_installments ORDER BY loan_id, payment_id, number
                """) == [
                    ["P1", 1, "L1", 43_242, 43_242, 120_000, 436_758],
                    ["P1", 2, "L1", 10_810, 0, 0, 0],
                    ["P2", 1, "L1", 2_097, 2_097, 0, 524_288],
                    ["P2", 2, "L1", 4_324, 15_134, 81_558, 999_488],
                    ["P2", 3, "L1", 0, 0, 41_579, 1_039_466],
                ])
    }

    @Test func aPaymentIdIsUniqueOnlyOnItsLoan() throws {
        let h = try ProjectionHarness([LoanPayments()])
        try h.given(F.partialPayment("L1", id: "P1"), stream: "loan-L1", actor: "agent-1")
        try h.given(F.partialPayment("L2", id: "P1"), stream: "loan-L2", actor: "agent-1")
        #expect(h.database.stop == nil)
        #expect(
            try h.rows("SELECT loan_id, payment_id, amount_cents FROM loan_payments ORDER BY position")
                == [["L1", "P1", 600_000], ["L2", "P1", 600_000]])
        #expect(
            try h.rows(
                """
                SELECT paid_on, count(*), sum(amount_cents), sum(interest_cents)
                FROM loan_payments GROUP BY paid_on ORDER BY paid_on
                """) == [["2026-03-16", 2, 1_200_000, 240_000]])
    }
}
