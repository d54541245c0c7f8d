import Events
import Projections
import StrataCore
import StrataTesting
import Testing

@Suite struct AgentEarningsTests {
    private typealias F = LendingFixtures
    private let earnings = """
        SELECT agent_id, earned_cents, pending_cents, cashed_out_cents, collectible_cents, commissions_count,
               loans_count, loans_released, loans_released_cents, collected_cents, payments_count
        FROM agent_earnings ORDER BY agent_id
        """
    private let cashouts = """
        SELECT cashout_id, agent_id, amount_cents, status, requested_by, requested_at, decided_by, decided_at, reason
        FROM cashouts ORDER BY cashout_id
        """

    @Test func lendingCollectingEarningAndCashingOut() throws {
        let h = try ProjectionHarness([AgentEarnings()])
        try h.given(F.agentApproved("agent-1"), stream: "user-agent-1")
        try h.given(F.agentApproved("agent-2"), stream: "user-agent-2")
        #expect(
            try h.rows(earnings) == [
                ["agent-1", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                ["agent-2", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            ])

        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanRequested("L2", principalCents: 500_000), stream: "loan-L2", actor: "agent-1")
        try h.given(F.loanApproved("L1"), stream: "loan-L1")
        try h.given(
            .loanRejected(LoanRejected(loanId: "L2", rejectedBy: "admin-1", reason: "One loan at a time")),
            stream: "loan-L2")
        // 10% of the interest each payment collected: 120,000 → 12,000 and 123,137 → 12,314 (rounded).
        try h.given(F.partialPayment(), stream: "loan-L1", actor: "agent-1")
        try h.given(F.commission("P1", interestCents: 120_000, commissionCents: 12_000), stream: "agent-agent-1")
        try h.given(F.fullPayment(), stream: "loan-L1", actor: "agent-1")
        try h.given(F.commission("P2", interestCents: 123_137, commissionCents: 12_314), stream: "agent-agent-1")
        try h.given(F.loanClosed(), stream: "loan-L1")
        #expect(
            try h.rows(earnings) == [
                ["agent-1", 24_314, 0, 0, 24_314, 2, 2, 1, 3_000_000, 3_303_610, 2],
                ["agent-2", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            ])

        // C1 (100.00) approved. C2 (120.00) pending, then rejected. The agent stream's
        // EarningsReserved / EarningsReleased repeat the amounts and change nothing here.
        try h.given(F.cashoutRequested("C1", cents: 10_000), stream: "cashout-C1", actor: "agent-1")
        try h.given(
            .earningsReserved(EarningsReserved(agentId: "agent-1", cashoutId: "C1", amountCents: 10_000)),
            stream: "agent-agent-1", actor: "agent-1")
        try h.given(F.cashoutApproved("C1", cents: 10_000), stream: "cashout-C1")
        try h.given(F.cashoutRequested("C2", cents: 12_000), stream: "cashout-C2", actor: "agent-1")
        try h.given(
            .earningsReserved(EarningsReserved(agentId: "agent-1", cashoutId: "C2", amountCents: 12_000)),
            stream: "agent-agent-1", actor: "agent-1")
        #expect(
            try h.rows(earnings).first == ["agent-1", 24_314, 12_000, 10_000, 2_314, 2, 2, 1, 3_000_000, 3_303_610, 2])

        try h.given(F.cashoutRejected("C2", cents: 12_000, reason: "Bank details missing"), stream: "cashout-C2")
        try h.given(
            .earningsReleased(EarningsReleased(agentId: "agent-1", cashoutId: "C2", amountCents: 12_000)),
            stream: "agent-agent-1")
        #expect(try h.rows(earnings).first == ["agent-1", 24_314, 0, 10_000, 14_314, 2, 2, 1, 3_000_000, 3_303_610, 2])
        #expect(
            try h.rows(cashouts) == [
                ["C1", "agent-1", 10_000, "APPROVED", "agent-1", F.recordedAt(12), "admin-1", F.recordedAt(14), nil],
                [
                    "C2", "agent-1", 12_000, "REJECTED", "agent-1", F.recordedAt(15), "admin-1", F.recordedAt(17),
                    "Bank details missing",
                ],
            ])
    }

    @Test func theCurrentCommissionRatesPerAgentAndByDefault() throws {
        let h = try ProjectionHarness([AgentEarnings()])
        try h.given(
            .commissionRateChanged(CommissionRateChanged(rateBp: 1200, changedBy: "admin-1")),
            stream: "settings-global")
        try h.given(
            .commissionRateChanged(CommissionRateChanged(agentId: "agent-1", rateBp: 1500, changedBy: "admin-1")),
            stream: "settings-global")
        try h.given(
            .commissionRateChanged(CommissionRateChanged(rateBp: 800, changedBy: "admin-2")), stream: "settings-global",
            actor: "admin-2")
        #expect(
            try h.rows("SELECT agent_id, rate_bp, changed_by, changed_at FROM commission_rates ORDER BY agent_id") == [
                ["*", 800, "admin-2", F.recordedAt(3)],
                ["agent-1", 1500, "admin-1", F.recordedAt(2)],
            ])
        // The rate in force for an agent: its own, else the default.
        let inForce = """
            SELECT coalesce((SELECT rate_bp FROM commission_rates WHERE agent_id = ?),
                            (SELECT rate_bp FROM commission_rates WHERE agent_id = '*'))
            """
        #expect(try h.rows(inForce, ["agent-1"]) == [[1500]])
        #expect(try h.rows(inForce, ["agent-7"]) == [[800]])
    }

    @Test func aDecisionOnACashoutThatIsNotPendingStopsTheProjection() throws {
        let h = try ProjectionHarness([AgentEarnings()])
        try h.given(F.commission("P1", interestCents: 200_000, commissionCents: 20_000), stream: "agent-agent-1")
        try h.given(F.cashoutRequested("C1", cents: 10_000), stream: "cashout-C1", actor: "agent-1")
        try h.given(F.cashoutApproved("C1", cents: 10_000), stream: "cashout-C1")
        try h.given(F.cashoutRejected("C1", cents: 10_000, reason: "twice"), stream: "cashout-C1")
        let stop = try #require(h.database.stop)
        #expect(stop.position == 4 && stop.error.contains("CashoutRejected for cash-out C1"))
        #expect(try h.rows(earnings) == [["agent-1", 20_000, 0, 10_000, 10_000, 1, 0, 0, 0, 0, 0]])
    }

    /// Only a store Strata did not write holds such an amount (it records at most 10¹⁵ cents): the
    /// projection stops there, where the process trapped on the overflow before.
    @Test func anAmountAtInt64sEndStopsTheProjection() throws {
        let h = try ProjectionHarness([AgentEarnings()])
        try h.given(F.cashoutRequested("C1", cents: .min), stream: "cashout-C1", actor: "agent-1")
        let stop = try #require(h.database.stop)
        #expect(stop.position == 1)
        #expect(stop.error.contains("agent agent-1's amounts go beyond what 64 bits of cents hold"), "\(stop)")
    }

    @Test func aPaymentOnALoanItHasNotSeenStopsTheProjection() throws {
        let h = try ProjectionHarness([AgentEarnings()])
        try h.given(F.partialPayment("L5"), stream: "loan-L5", actor: "agent-1")
        #expect(h.database.stop?.error.contains("PaymentReceived P1 for loan L5") == true)
    }
}
