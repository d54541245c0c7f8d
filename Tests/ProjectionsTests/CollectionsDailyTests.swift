import Events
import Projections
import StrataCore
import StrataTesting
import Testing

private func requested(_ loan: String, agent: String, by: String) -> StrataEvent {
    .loanRequested(
        LoanRequested(
            loanId: loan, accountId: "A-\(loan)", agentId: agent, principalCents: 5_000_000, monthlyRateBp: 400,
            tenureMonths: 6, frequency: .monthly, interestMethod: .reducing, requestedOn: LocalDate("2026-11-01")!,
            requestedBy: by))
}

private func received(
    _ id: String, loan: String, on day: String, penalty: Int64, interest: Int64, principal: Int64,
    by: String = "agent-7"
) -> StrataEvent {
    .paymentReceived(
        PaymentReceived(
            paymentId: id, loanId: loan, amountCents: penalty + interest + principal, paidOn: LocalDate(day)!,
            method: .cash, receivedBy: by, type: .regular,
            allocation: PaymentAllocation(penaltyCents: penalty, interestCents: interest, principalCents: principal),
            perInstallment: [
                InstallmentAllocation(
                    number: 1, penaltyAccruedCents: penalty, penaltyCents: penalty, interestCents: interest,
                    principalCents: principal)
            ],
            outstandingAfterCents: 1_000_000))
}

private func invoicePaid(_ id: String, on day: String, _ amount: Int64) -> StrataEvent {
    .invoicePaymentRecorded(
        InvoicePaymentRecorded(
            paymentId: id, invoiceId: "I1", amountCents: amount, paidOn: LocalDate(day)!, method: .bank,
            recordedBy: "admin-1", paidTotalCents: amount, balanceCents: 100_000, status: .partiallyPaid))
}

@Suite struct CollectionsDailyTests {
    @Test func loanAndInvoicePaymentsAddUpPerDayAndPerAgent() throws {
        let h = try ProjectionHarness([CollectionsDaily()])
        try h.given(requested("L1", agent: "agent-7", by: "agent-7"), stream: "loan-L1", actor: "agent-7")
        // Requested by an admin: the account's agent still owns the loan.
        try h.given(requested("L2", agent: "agent-8", by: "admin-1"), stream: "loan-L2")
        try h.given(
            received("P1", loan: "L1", on: "2026-12-02", penalty: 0, interest: 2000, principal: 8000),
            stream: "loan-L1", actor: "agent-7")
        // Recorded by an admin: counts for agent-8, the loan's agent.
        try h.given(
            received("P2", loan: "L2", on: "2026-12-02", penalty: 150, interest: 1000, principal: 3850, by: "admin-1"),
            stream: "loan-L2")
        try h.given(invoicePaid("IP1", on: "2026-12-02", 7000), stream: "invoice-I1")
        try h.given(
            received("P3", loan: "L1", on: "2026-12-03", penalty: 0, interest: 0, principal: 3000),
            stream: "loan-L1", actor: "agent-7")
        try h.given(invoicePaid("IP2", on: "2026-12-04", 2500), stream: "invoice-I1")
        // Entered late, paid on an earlier day: it counts on the day it was paid.
        try h.given(
            received("P4", loan: "L2", on: "2026-12-01", penalty: 0, interest: 500, principal: 3500),
            stream: "loan-L2", actor: "agent-8")

        #expect(
            try h.rows(
                """
                SELECT day, loan_payments_count, loan_collected_cents, loan_principal_cents, loan_interest_cents,
                    loan_penalty_cents, invoice_payments_count, invoice_collected_cents, total_collected_cents
                FROM collections_daily ORDER BY day
                """) == [
                    ["2026-12-01", 1, 4000, 3500, 500, 0, 0, 0, 4000],
                    ["2026-12-02", 2, 15000, 11850, 3000, 150, 1, 7000, 22000],
                    ["2026-12-03", 1, 3000, 3000, 0, 0, 0, 0, 3000],
                    ["2026-12-04", 0, 0, 0, 0, 0, 1, 2500, 2500],
                ])
        #expect(
            try h.rows(
                """
                SELECT day, agent_id, payments_count, collected_cents FROM collections_daily_by_agent
                ORDER BY day, agent_id
                """) == [
                    ["2026-12-01", "agent-8", 1, 4000],
                    ["2026-12-02", "agent-7", 1, 10000],
                    ["2026-12-02", "agent-8", 1, 5000],
                    ["2026-12-03", "agent-7", 1, 3000],
                ])
    }

    @Test func aPaymentOnALoanNeverRequestedStopsTheProjection() throws {
        let h = try ProjectionHarness([CollectionsDaily()])
        try h.given(
            received("P9", loan: "L9", on: "2026-12-02", penalty: 0, interest: 0, principal: 100), stream: "loan-L9")
        #expect(h.database.stop?.error.contains("payment P9 for loan L9, which was never requested") == true)
        #expect(try h.rows("SELECT count(*) FROM collections_daily") == [[0]])
    }
}
