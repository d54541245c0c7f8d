import Events
import Projections
import StrataCore
import StrataTesting
import Testing

@Suite struct DashboardTests {
    private typealias F = LendingFixtures
    private let dashboard = """
        SELECT approved_agents, pending_agents, active_accounts, loans_released, principal_released_cents,
               active_loans, collectible_cents, collected_cents, pending_approvals
        FROM dashboard
        """

    @Test func anEmptyFileShowsZeros() throws {
        let h = try ProjectionHarness(ReadModels.all)
        #expect(try h.rows(dashboard) == [[0, 0, 0, 0, 0, 0, 0, 0, 0]])
    }

    @Test func theHeadlineFiguresAcrossAgentsAccountsAndLoans() throws {
        let h = try ProjectionHarness(ReadModels.all)
        try h.given(
            .userRegistered(
                UserRegistered(userId: "admin-1", username: "root", email: "root@example.com", role: .admin,
                    status: .approved)),
            stream: "user-admin-1", actor: "operator")
        for agent in ["agent-1", "agent-2", "agent-3"] {
            try h.given(F.agentRegistered(agent), stream: "user-\(agent)", actor: agent)
        }
        try h.given(F.agentApproved("agent-1"), stream: "user-agent-1")
        try h.given(
            .agentRejected(AgentRejected(agentId: "agent-3", rejectedBy: "admin-1", reason: "Duplicate")),
            stream: "user-agent-3")
        try h.given(F.accountOpened("A1"), stream: "account-A1", actor: "agent-1")
        try h.given(F.accountOpened("A2", name: "Bilal Khan"), stream: "account-A2", actor: "agent-1")
        try h.given(
            .accountStatusChanged(
                AccountStatusChanged(accountId: "A2", status: .inactive, reason: "Moved away", changedBy: "admin-1")),
            stream: "account-A2")
        // L1 active after a partial payment; L2 pending; L3 paid off and closed; L4 rejected.
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanApproved("L1"), stream: "loan-L1")
        try h.given(F.partialPayment("L1"), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanRequested("L2"), stream: "loan-L2", actor: "agent-1")
        try h.given(F.loanRequested("L3"), stream: "loan-L3", actor: "agent-1")
        try h.given(F.loanApproved("L3"), stream: "loan-L3")
        try h.given(F.partialPayment("L3"), stream: "loan-L3", actor: "agent-1")
        try h.given(F.fullPayment("L3"), stream: "loan-L3", actor: "agent-1")
        try h.given(F.loanClosed("L3"), stream: "loan-L3")
        try h.given(F.loanRequested("L4"), stream: "loan-L4", actor: "agent-1")
        try h.given(
            .loanRejected(LoanRejected(loanId: "L4", rejectedBy: "admin-1", reason: "One loan at a time")),
            stream: "loan-L4")
        #expect(h.database.stop == nil)
        // Released: L1 and L3, 30,000.00 each. Collectible: L1's 26,971.89. Collected:
        // 6,000.00 on L1, 6,000.00 + 27,036.10 on L3. Pending: agent-2 and L2.
        #expect(try h.rows(dashboard) == [[1, 1, 1, 2, 6_000_000, 1, 2_697_189, 3_903_610, 2]])
    }
}
