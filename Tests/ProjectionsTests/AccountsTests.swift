import Events
import Projections
import StrataCore
import StrataTesting
import Testing

@Suite struct AccountsTests {
    private typealias F = LendingFixtures
    private let columns = """
        SELECT account_id, name, phone, email, alternate_phone, address, assigned_agent_id, status, status_reason,
               status_changed_by, status_changed_at, opened_by, opened_at, loans_count, active_loans
        FROM accounts ORDER BY account_id
        """

    @Test func anAccountIsOpenedUpdatedAndSuspended() throws {
        let h = try ProjectionHarness([Accounts()])
        try h.given(F.accountOpened("A1"), stream: "account-A1", actor: "agent-1")
        #expect(
            try h.rows(columns) == [
                [
                    "A1", "Asha Rao", "+919800000001", nil, nil, "12 Lake Road, Pune", "agent-1", "ACTIVE", nil, nil,
                    nil, "agent-1", F.recordedAt(1), 0, 0,
                ]
            ])

        try h.given(
            .accountUpdated(
                AccountUpdated(
                    accountId: "A1", email: "asha@example.com", alternatePhone: "+919800000002",
                    assignedAgentId: "agent-2", updatedBy: "admin-1")),
            stream: "account-A1")
        try h.given(
            .accountStatusChanged(
                AccountStatusChanged(accountId: "A1", status: .suspended, reason: "Fraud check", changedBy: "admin-1")),
            stream: "account-A1")
        #expect(
            try h.rows(columns) == [
                [
                    "A1", "Asha Rao", "+919800000001", "asha@example.com", "+919800000002", "12 Lake Road, Pune",
                    "agent-2", "SUSPENDED", "Fraud check", "admin-1", F.recordedAt(3), "agent-1", F.recordedAt(1), 0, 0,
                ]
            ])
    }

    @Test func loanCountersFollowRequestsApprovalsAndClosing() throws {
        let h = try ProjectionHarness([Accounts()])
        try h.given(F.accountOpened("A1"), stream: "account-A1", actor: "agent-1")
        try h.given(F.accountOpened("A2", name: "Bilal Khan"), stream: "account-A2", actor: "agent-1")
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanRequested("L2"), stream: "loan-L2", actor: "agent-1")
        try h.given(F.loanRequested("L3", account: "A2"), stream: "loan-L3", actor: "agent-1")
        try h.given(F.loanApproved("L1"), stream: "loan-L1")
        try h.given(F.loanApproved("L3"), stream: "loan-L3")
        try h.given(
            .loanRejected(LoanRejected(loanId: "L2", rejectedBy: "admin-1", reason: "One loan at a time")),
            stream: "loan-L2")
        #expect(
            try h.rows("SELECT account_id, loans_count, active_loans FROM accounts ORDER BY account_id")
                == [["A1", 2, 1], ["A2", 1, 1]])

        try h.given(F.partialPayment(), stream: "loan-L1", actor: "agent-1")
        try h.given(F.fullPayment(), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanClosed(), stream: "loan-L1")
        #expect(
            try h.rows("SELECT account_id, loans_count, active_loans FROM accounts ORDER BY account_id")
                == [["A1", 2, 0], ["A2", 1, 1]])
        #expect(
            try h.rows("SELECT loan_id, account_id FROM account_loans ORDER BY loan_id")
                == [["L1", "A1"], ["L2", "A1"], ["L3", "A2"]])
    }

    @Test func anAgentSearchesItsAccountsByNamePrefixOrPhone() throws {
        let h = try ProjectionHarness([Accounts()])
        try h.given(F.accountOpened("A1", name: "Asha Rao"), stream: "account-A1", actor: "agent-1")
        try h.given(F.accountOpened("A2", name: "asha Menon"), stream: "account-A2", actor: "agent-1")
        try h.given(F.accountOpened("A3", agent: "agent-2", name: "Ashok Rao"), stream: "account-A3", actor: "agent-2")
        let search = "SELECT account_id FROM accounts WHERE assigned_agent_id = ? AND name LIKE ? ORDER BY name"
        #expect(try h.rows(search, ["agent-1", "ASHA%"]) == [["A2"], ["A1"]])
        #expect(try h.rows(search, ["agent-2", "ash%"]) == [["A3"]])
        #expect(try h.rows("SELECT count(*) FROM accounts WHERE phone = ?", ["+919800000001"]) == [[3]])

        // Name and phone are NOCASE columns, so a prefix LIKE can use their index.
        let plan = try h.rows("EXPLAIN QUERY PLAN SELECT account_id FROM accounts WHERE name LIKE 'ash%'")
        let details = plan.flatMap { $0 }.compactMap { value -> String? in
            if case .text(let text) = value { text } else { nil }
        }
        #expect(details.contains { $0.hasPrefix("SEARCH") && $0.contains("INDEX accounts_by_name") })
    }

    @Test func erasingAnAccountBlanksItsPersonalColumns() throws {
        let h = try ProjectionHarness([Accounts()])
        try h.given(F.accountOpened("A1"), stream: "account-A1", actor: "agent-1")
        try h.given(
            .accountUpdated(AccountUpdated(accountId: "A1", email: "asha@example.com", updatedBy: "agent-1")),
            stream: "account-A1", actor: "agent-1")
        try h.given(
            .personalDataErased(
                PersonalDataErased(subjectId: "A1", kind: .account, erasedBy: "admin-1", reason: "borrower asked")),
            stream: "account-A1")
        #expect(
            try h.rows("SELECT name, phone, email, alternate_phone, address, assigned_agent_id, status FROM accounts")
                == [["[erased]", "[erased]", "[erased]", nil, "[erased]", "agent-1", "ACTIVE"]])
    }

    @Test func aLoanOnAnUnknownAccountStopsTheProjection() throws {
        let h = try ProjectionHarness([Accounts()])
        try h.given(F.loanRequested("L1", account: "A9"), stream: "loan-L1", actor: "agent-1")
        let stop = try #require(h.database.stop)
        #expect(stop.position == 1 && stop.error.contains("A9") && stop.error.contains("L1"))
    }
}
