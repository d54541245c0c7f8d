import Events
import Projections
import StrataCore
import StrataTesting
import Testing

/// One agent's whole story through every lending read model of `readmodels.db`: signed
/// up and approved, a borrower account, a 30,000.00 loan over three months, a late partial
/// payment with penalty, a payment that settles the loan, commission on both, one cash-out
/// approved and another rejected.
@Suite struct LendingStoryTests {
    private typealias F = LendingFixtures

    @Test func fromSignUpToCashOutAcrossEveryReadModel() throws {
        let h = try ProjectionHarness(ReadModels.all, name: "readmodels")
        try h.given(F.agentRegistered("agent-1", username: "ravi"), stream: "user-agent-1", actor: "agent-1")  // 1
        try h.given(F.agentApproved("agent-1", at: "2026-11-02T09:00:01.000Z"), stream: "user-agent-1")  // 2
        try h.given(F.accountOpened("A1"), stream: "account-A1", actor: "agent-1")  // 3
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")  // 4
        #expect(
            try h.rows("SELECT kind, entity_id, amount_cents FROM pending_approvals") == [["LOAN", "L1", 3_000_000]])
        try h.given(F.loanApproved("L1"), stream: "loan-L1")  // 5
        try h.given(F.partialPayment(), stream: "loan-L1", actor: "agent-1")  // 6
        try h.given(
            F.commission("P1", interestCents: 120_000, commissionCents: 12_000), stream: "agent-agent-1",
            actor: "agent-1")  // 7

        // Between the two payments: late, in the 31-60 bucket, on the dashboard as collectible.
        let tables = h
        #expect(
            try OverdueAging.rows(asOf: F.date("2026-03-17"), in: tables) == [
                OverdueAging.Loan(
                    loanId: "L1", accountId: "A1", agentId: "agent-1", oldestDueDate: F.date("2026-02-04"),
                    daysOverdue: 41, overdueCents: 1_616_144, outstandingCents: 2_697_189, bucket: .days31to60)
            ])
        #expect(
            try h.rows("SELECT active_loans, collectible_cents, collected_cents FROM dashboard")
                == [[1, 2_697_189, 600_000]])
        #expect(try h.rows("SELECT active_loans FROM accounts") == [[1]])

        try h.given(F.fullPayment(), stream: "loan-L1", actor: "agent-1")  // 8
        try h.given(
            F.commission("P2", interestCents: 123_137, commissionCents: 12_314), stream: "agent-agent-1",
            actor: "agent-1")  // 9
        try h.given(F.loanClosed(), stream: "loan-L1")  // 10
        try h.given(F.cashoutRequested("C1", cents: 10_000), stream: "cashout-C1", actor: "agent-1")  // 11
        try h.given(
            .earningsReserved(EarningsReserved(agentId: "agent-1", cashoutId: "C1", amountCents: 10_000)),
            stream: "agent-agent-1", actor: "agent-1")  // 12
        try h.given(F.cashoutApproved("C1", cents: 10_000), stream: "cashout-C1")  // 13
        try h.given(F.cashoutRequested("C2", cents: 12_000), stream: "cashout-C2", actor: "agent-1")  // 14
        try h.given(
            .earningsReserved(EarningsReserved(agentId: "agent-1", cashoutId: "C2", amountCents: 12_000)),
            stream: "agent-agent-1", actor: "agent-1")  // 15
        #expect(
            try h.rows("SELECT kind, entity_id, amount_cents FROM pending_approvals") == [["CASHOUT", "C2", 12_000]])
        try h.given(F.cashoutRejected("C2", cents: 12_000, reason: "Bank details missing"), stream: "cashout-C2")  // 16
        try h.given(
            .earningsReleased(EarningsReleased(agentId: "agent-1", cashoutId: "C2", amountCents: 12_000)),
            stream: "agent-agent-1")  // 17

        #expect(h.database.stop == nil)
        #expect(try h.rows("SELECT position FROM strata_checkpoint") == [[17]])
        #expect(
            try h.rows("SELECT user_id, role, status, decided_by, decided_at FROM users")
                == [["agent-1", "AGENT", "APPROVED", "admin-1", "2026-11-02T09:00:01.000Z"]])
        #expect(
            try h.rows("SELECT account_id, assigned_agent_id, status, loans_count, active_loans FROM accounts")
                == [["A1", "agent-1", "ACTIVE", 1, 0]])
        #expect(
            try h.rows(
                """
                SELECT status, total_due_cents, total_paid_cents, principal_paid_cents, interest_paid_cents,
                       penalty_paid_cents, penalty_accrued_cents, outstanding_cents, next_due_date, payments_count,
                       closed_on
                FROM loans
                """) == [["CLOSED", 3_243_137, 3_303_610, 3_000_000, 243_137, 60_473, 60_473, 0, nil, 2, "2026-03-20"]])
        #expect(
            try h.rows(
                """
                SELECT number, penalty_accrued_cents, penalty_paid_cents, status, paid_on
                FROM loan_installments ORDER BY number
                """) == [
                    [1, 45_339, 45_339, "PAID", "2026-03-20"],
                    [2, 15_134, 15_134, "PAID", "2026-03-20"],
                    [3, 0, 0, "PAID", "2026-03-20"],
                ])
        #expect(
            try h.rows(
                "SELECT payment_id, type, amount_cents, outstanding_after_cents FROM loan_payments ORDER BY position")
                == [["P1", "PARTIAL", 600_000, 2_697_189], ["P2", "FULL", 2_703_610, 0]])
        #expect(
            try h.rows(
                """
                SELECT earned_cents, pending_cents, cashed_out_cents, collectible_cents, commissions_count, loans_count,
                       loans_released, loans_released_cents, collected_cents, payments_count
                FROM agent_earnings
                """) == [[24_314, 0, 10_000, 14_314, 2, 1, 1, 3_000_000, 3_303_610, 2]])
        #expect(
            try h.rows("SELECT cashout_id, status, decided_by, reason FROM cashouts ORDER BY cashout_id")
                == [["C1", "APPROVED", "admin-1", nil], ["C2", "REJECTED", "admin-1", "Bank details missing"]])
        #expect(
            try h.rows(
                "SELECT position, kind, entity_id FROM notifications WHERE user_id = 'agent-1' ORDER BY position")
                == [
                    [2, "AGENT_APPROVED", "agent-1"], [3, "ACCOUNT_CREATED", "A1"], [5, "LOAN_APPROVED", "L1"],
                    [6, "PAYMENT_RECEIVED", "L1"], [8, "PAYMENT_RECEIVED", "L1"], [13, "CASHOUT_APPROVED", "C1"],
                    [16, "CASHOUT_REJECTED", "C2"],
                ])
        #expect(try h.rows("SELECT count(*) FROM pending_approvals") == [[0]])
        #expect(
            try h.rows(
                """
                SELECT approved_agents, pending_agents, active_accounts, loans_released, principal_released_cents,
                       active_loans, collectible_cents, collected_cents, pending_approvals
                FROM dashboard
                """) == [[1, 0, 1, 1, 3_000_000, 0, 0, 3_303_610, 0]])
        #expect(try OverdueAging.rows(asOf: F.date("2026-12-31"), in: tables) == [])

        // The models agree on the money: payments, the loan's totals and the agent's collections.
        #expect(
            try h.rows(
                """
                SELECT (SELECT sum(amount_cents) FROM loan_payments), (SELECT total_paid_cents FROM loans),
                       (SELECT collected_cents FROM agent_earnings),
                       (SELECT sum(penalty_accrued_cents) FROM loan_payment_installments),
                       (SELECT sum(penalty_accrued_cents) FROM loan_installments)
                """) == [[3_303_610, 3_303_610, 3_303_610, 60_473, 60_473]])

        // Rebuilt from the same events, the file has the same rows.
        let rebuilt = try ProjectionHarness(ReadModels.all, name: "readmodels")
        try rebuilt.database.apply(h.recorded)
        let names = try h.rows("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")
        #expect(
            names.joined().map { $0 } == [
                "account_loans", "accounts", "agent_earnings", "agent_loans", "cashouts", "collections_daily",
                "collections_daily_by_agent", "collections_loan_agents", "commission_rates", "customers",
                "dashboard", "invoice_lines", "invoice_payments", "invoices", "loan_installments",
                "loan_payment_installments", "loan_payments", "loans",
                "notification_loans", "notifications", "pending_approvals", "receivable_invoices",
                "receivable_payments", "strata_checkpoint", "strata_skipped", "users",
            ])
        for case .text(let name) in names.joined() {
            let all = "SELECT * FROM \(name) ORDER BY 1, 2"
            #expect(try rebuilt.rows(all) == h.rows(all), "\(name)")
        }
    }
}
