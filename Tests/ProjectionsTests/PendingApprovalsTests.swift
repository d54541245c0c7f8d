import Events
import Projections
import StrataCore
import StrataTesting
import Testing

@Suite struct PendingApprovalsTests {
    private typealias F = LendingFixtures
    private let pending = """
        SELECT kind, entity_id, requested_by, requested_at, requested_on, amount_cents, agent_id
        FROM pending_approvals ORDER BY requested_at
        """

    @Test func agentsLoansAndCashoutsWaitUntilAnAdminDecides() throws {
        let h = try ProjectionHarness(
            [Users()] + LoanPortfolio.withInstallments + [AgentEarnings(), PendingApprovals()])
        #expect(try h.rows(pending) == [])
        try h.given(F.agentRegistered("agent-1"), stream: "user-agent-1", actor: "agent-1")
        try h.given(F.agentRegistered("agent-2"), stream: "user-agent-2", actor: "agent-2")
        try h.given(F.agentApproved("agent-1"), stream: "user-agent-1")
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        try h.given(F.commission("P0", interestCents: 200_000, commissionCents: 20_000), stream: "agent-agent-1")
        try h.given(F.cashoutRequested("C1", cents: 10_000), stream: "cashout-C1", actor: "agent-1")
        #expect(
            try h.rows(pending) == [
                ["AGENT", "agent-2", "agent-2", F.recordedAt(2), "2026-11-02", nil, "agent-2"],
                ["LOAN", "L1", "agent-1", F.recordedAt(4), "2026-01-02", 3_000_000, "agent-1"],
                ["CASHOUT", "C1", "agent-1", F.recordedAt(6), "2026-11-02", 10_000, "agent-1"],
            ])

        try h.given(F.loanApproved("L1"), stream: "loan-L1")
        try h.given(F.cashoutApproved("C1", cents: 10_000), stream: "cashout-C1")
        #expect(try h.rows(pending) == [["AGENT", "agent-2", "agent-2", F.recordedAt(2), "2026-11-02", nil, "agent-2"]])
        try h.given(
            .agentRejected(AgentRejected(agentId: "agent-2", rejectedBy: "admin-1", reason: "No ID documents")),
            stream: "user-agent-2")
        #expect(try h.rows(pending) == [])
    }

    @Test func pendingAdminsAreNotAgentsToApprove() throws {
        // Admins are registered APPROVED; only agents wait.
        let h = try ProjectionHarness(
            [Users()] + LoanPortfolio.withInstallments + [AgentEarnings(), PendingApprovals()])
        try h.given(
            .userRegistered(
                UserRegistered(userId: "admin-2", username: "second", email: "second@example.com", role: .admin,
                    status: .approved)),
            stream: "user-admin-2")
        #expect(try h.rows("SELECT count(*) FROM pending_approvals") == [[0]])
    }
}
