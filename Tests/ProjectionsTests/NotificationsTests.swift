import Events
import Projections
import StrataCore
import StrataTesting
import Testing

@Suite struct NotificationsTests {
    private typealias F = LendingFixtures

    /// A notifications row; created_at is the recordedAt of the event at `position`.
    private func row(
        _ user: String, _ position: Int64, _ kind: String, _ entity: String, _ message: String
    ) -> [ProjectionValue] {
        [.text(user), .integer(position), .text(kind), .text(entity), .text(message), F.recordedAt(position)]
    }

    @Test func eachDecisionNotifiesTheAgentConcerned() throws {
        let h = try ProjectionHarness([Notifications()])
        try h.given(F.agentRegistered("agent-1"), stream: "user-agent-1", actor: "agent-1")
        try h.given(F.agentApproved("agent-1"), stream: "user-agent-1")
        try h.given(F.agentRegistered("agent-2"), stream: "user-agent-2", actor: "agent-2")
        try h.given(
            .agentRejected(AgentRejected(agentId: "agent-2", rejectedBy: "admin-1", reason: "No ID documents")),
            stream: "user-agent-2")
        try h.given(F.accountOpened("A1"), stream: "account-A1", actor: "agent-1")
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanApproved("L1"), stream: "loan-L1")
        try h.given(F.loanRequested("L2", principalCents: 99_999_999), stream: "loan-L2", actor: "agent-1")
        try h.given(
            .loanRejected(LoanRejected(loanId: "L2", rejectedBy: "admin-1", reason: "Above the branch limit")),
            stream: "loan-L2")
        try h.given(F.partialPayment(), stream: "loan-L1", actor: "agent-1")
        try h.given(F.fullPayment(), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanClosed(), stream: "loan-L1")
        try h.given(F.cashoutApproved("C1", cents: 10_000), stream: "cashout-C1")
        try h.given(
            F.cashoutRejected("C2", cents: 1_000_005, reason: "Bank details missing"), stream: "cashout-C2")
        let loanApproved: String =
            "Loan L1 on account A1 was approved by admin-1 on 2026-01-05: 30,000.00 released, 3 installments, "
            + "the first due 2026-02-04."
        let firstPayment: String =
            "Payment P1 of 6,000.00 was received on loan L1 on 2026-03-16 by agent-1; 26,971.89 is still outstanding."
        let expected: [[ProjectionValue]] = [
            row("agent-1", 2, "AGENT_APPROVED", "agent-1", "Your agent registration was approved by admin-1."),
            row("agent-1", 5, "ACCOUNT_CREATED", "A1", "Account A1 was opened by agent-1 and assigned to you."),
            row("agent-1", 7, "LOAN_APPROVED", "L1", loanApproved),
            row(
                "agent-1", 9, "LOAN_REJECTED", "L2",
                "Loan L2 on account A1 (999,999.99) was rejected by admin-1: Above the branch limit"),
            row("agent-1", 10, "PAYMENT_RECEIVED", "L1", firstPayment),
            row(
                "agent-1", 11, "PAYMENT_RECEIVED", "L1",
                "Payment P2 of 27,036.10 was received on loan L1 on 2026-03-20 by agent-1; nothing is left to pay."),
            row("agent-1", 13, "CASHOUT_APPROVED", "C1", "Cash-out C1 of 100.00 was approved by admin-1."),
            row(
                "agent-1", 14, "CASHOUT_REJECTED", "C2",
                "Cash-out C2 of 10,000.05 was rejected by admin-1: Bank details missing"),
            row(
                "agent-2", 4, "AGENT_REJECTED", "agent-2",
                "Your agent registration was rejected by admin-1: No ID documents"),
        ]
        #expect(
            try h.rows(
                """
                SELECT user_id, position, kind, entity_id, message, created_at FROM notifications
                ORDER BY user_id, position
                """) == expected)

        // An inbox page: newest first, after the last one seen.
        #expect(
            try h.rows(
                """
                SELECT position, kind FROM notifications WHERE user_id = ? AND position < ?
                ORDER BY position DESC LIMIT 2
                """,
                ["agent-1", 13]) == [[11, "PAYMENT_RECEIVED"], [10, "PAYMENT_RECEIVED"]])
    }

    @Test func theLoansAgentIsNotifiedWhoeverActsAndWhereverTheAccountMoves() throws {
        let h = try ProjectionHarness([Notifications()])
        try h.given(F.accountOpened("A1", agent: "agent-1"), stream: "account-A1", actor: "admin-1")
        try h.given(F.loanRequested("L1", agent: "agent-1"), stream: "loan-L1", actor: "admin-1")
        try h.given(
            .accountUpdated(AccountUpdated(accountId: "A1", assignedAgentId: "agent-2", updatedBy: "admin-1")),
            stream: "account-A1")
        try h.given(F.loanApproved("L1"), stream: "loan-L1")
        #expect(
            try h.rows("SELECT user_id, kind FROM notifications ORDER BY position")
                == [["agent-1", "ACCOUNT_CREATED"], ["agent-1", "LOAN_APPROVED"]])
    }

    @Test func aDecisionOnALoanItHasNotSeenStopsTheProjection() throws {
        let h = try ProjectionHarness([Notifications()])
        try h.given(F.loanApproved("L9"), stream: "loan-L9")
        #expect(h.database.stop?.error.contains("LoanApproved for loan L9") == true)
    }
}
