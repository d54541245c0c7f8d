import Events
import Foundation
import Projections
import ProjectorRuntime
import StrataCore
import StrataTesting

@testable import StrataCLI

/// A small book in a real readmodels.db, for `strata report`: every figure below is worked
/// out by hand, as of 2026-03-31.
///
/// Agents: agent-1 (ravi) and agent-2 (username `<i>meena</i>`) approved, agent-3 waiting.
/// Loans (principal): L1 30,000.00 (agent-1) partly paid, 55 days late (31-60), overdue
/// 16,161.44 of 26,971.89 outstanding; L2 10,000.00 (agent-2) never paid, 101 days late
/// (90+), 10,600.00 overdue and outstanding; L3 5,000.00 (agent-2) 11 days late (1-30),
/// 2,700.00 overdue of 5,300.00; L4 20,000.00 pending; L5 15,000.00 rejected; L6 4,000.00
/// (agent-1) paid off early (4,240.00 on 2026-02-05) and closed.
/// Invoices: customer C-1, "Tom & Jerry <script>alert(1)</script>", owes 2,000.00 of a
/// 3,000.00 invoice due 2026-03-03 (28 days: 1-30); C-2, Asha Traders, owes 4,500.00 of a
/// 5,000.00 invoice due 2025-12-31 (90 days: 61-90) and 1,500.00 not yet due.
/// Collections: 4,240.00 (loan) on 2026-02-05; 6,000.00 (loan) + 1,000.00 (invoice) on
/// 2026-03-16; 500.00 (invoice) on 2026-03-20.
enum ReportFixtures {
    static let asOf = LocalDate("2026-03-31")!
    static let generatedAt = Timestamp("2026-04-01T08:30:00.000Z")!
    static let hostileCustomer = "Tom & Jerry <script>alert(1)</script>"
    static let hostileUsername = "<i>meena</i>"

    /// The book in a file `readmodels.db` of the harness's directory (a data directory).
    static func book() throws -> ProjectionHarness {
        let h = try ProjectionHarness(ReadModels.all, name: "readmodels")
        for (agent, username) in [("agent-1", "ravi"), ("agent-2", hostileUsername), ("agent-3", "sunil")] {
            try h.given(
                .userRegistered(
                    UserRegistered(
                        userId: agent, username: username, email: PersonalData("\(agent)@example.com"), role: .agent,
                        status: .pending)), stream: "user-\(agent)", actor: agent)
        }
        for agent in ["agent-1", "agent-2"] {
            try h.given(
                .agentApproved(AgentApproved(agentId: agent, approvedBy: "admin-1", approvedAt: generatedAt)),
                stream: "user-\(agent)")
        }
        for (account, agent) in [("A1", "agent-1"), ("A2", "agent-2")] {
            try h.given(
                .accountOpened(
                    AccountOpened(
                        accountId: account, name: PersonalData("Borrower \(account)"), phone: "+919800000001",
                        address: "12 Lake Road, Pune", assignedAgentId: agent, openedBy: agent, status: .active)),
                stream: "account-\(account)", actor: agent)
        }

        // L1: 30,000.00 at 4% a month over three months, approved 2026-01-05, then 6,000.00 on
        // 2026-03-16 that pays the first installment's penalty and interest and part of it.
        try request(h, "L1", account: "A1", agent: "agent-1", cents: 3_000_000, on: "2026-01-02")
        try approve(
            h, "L1", on: "2026-01-05",
            [
                ("2026-02-04", 961_046, 120_000, 2_038_954), ("2026-03-06", 999_488, 81_558, 1_039_466),
                ("2026-04-05", 1_039_466, 41_579, 0),
            ])
        try h.given(
            .paymentReceived(
                PaymentReceived(
                    paymentId: "P1", loanId: "L1", amountCents: 600_000, paidOn: date("2026-03-16"), method: .cash,
                    receivedBy: "agent-1", type: .partial,
                    allocation: PaymentAllocation(
                        penaltyCents: 43_242, interestCents: 120_000, principalCents: 436_758),
                    perInstallment: [
                        InstallmentAllocation(
                            number: 1, penaltyAccruedCents: 43_242, penaltyCents: 43_242, interestCents: 120_000,
                            principalCents: 436_758),
                        InstallmentAllocation(
                            number: 2, penaltyAccruedCents: 10_810, penaltyCents: 0, interestCents: 0, principalCents: 0
                        ),
                    ],
                    outstandingAfterCents: 2_697_189)), stream: "loan-L1", actor: "agent-1")
        try commission(h, loan: "L1", interestCents: 120_000, commissionCents: 12_000)

        // L2 and L3, agent-2's: nothing paid.
        try request(h, "L2", account: "A2", agent: "agent-2", cents: 1_000_000, on: "2025-11-18")
        try approve(
            h, "L2", on: "2025-11-20", [("2025-12-20", 500_000, 40_000, 500_000), ("2026-01-19", 500_000, 20_000, 0)])
        try request(h, "L3", account: "A2", agent: "agent-2", cents: 500_000, on: "2026-02-18")
        try approve(
            h, "L3", on: "2026-02-20", [("2026-03-20", 250_000, 20_000, 250_000), ("2026-04-19", 250_000, 10_000, 0)])

        // L4 pending, L5 rejected.
        try request(h, "L4", account: "A1", agent: "agent-1", cents: 2_000_000, on: "2026-03-25")
        try request(h, "L5", account: "A1", agent: "agent-1", cents: 1_500_000, on: "2026-03-01")
        try h.given(
            .loanRejected(LoanRejected(loanId: "L5", rejectedBy: "admin-1", reason: "Too much")), stream: "loan-L5")

        // L6: paid off before its first due date, then closed.
        try request(h, "L6", account: "A1", agent: "agent-1", cents: 400_000, on: "2026-01-08")
        try approve(
            h, "L6", on: "2026-01-10", [("2026-02-09", 200_000, 16_000, 200_000), ("2026-03-11", 200_000, 8_000, 0)])
        try h.given(
            .paymentReceived(
                PaymentReceived(
                    paymentId: "P1", loanId: "L6", amountCents: 424_000, paidOn: date("2026-02-05"), method: .bank,
                    receivedBy: "agent-1", type: .full,
                    allocation: PaymentAllocation(penaltyCents: 0, interestCents: 24_000, principalCents: 400_000),
                    perInstallment: [
                        InstallmentAllocation(
                            number: 1, penaltyAccruedCents: 0, penaltyCents: 0, interestCents: 16_000,
                            principalCents: 200_000),
                        InstallmentAllocation(
                            number: 2, penaltyAccruedCents: 0, penaltyCents: 0, interestCents: 8_000,
                            principalCents: 200_000),
                    ],
                    outstandingAfterCents: 0)), stream: "loan-L6", actor: "agent-1")
        try commission(h, loan: "L6", interestCents: 24_000, commissionCents: 2_400)
        try h.given(
            .loanClosed(LoanClosed(loanId: "L6", closedOn: date("2026-02-05"), paymentId: "P1")), stream: "loan-L6")

        // Invoices.
        try invoice(
            h, "I1", party: "C-1", name: hostileCustomer, cents: 300_000, issued: "2026-02-01", due: "2026-03-03")
        try invoicePayment(
            h, "IP1", invoice: "I1", cents: 100_000, on: "2026-03-16", paidTotal: 100_000, balance: 200_000)
        try invoice(
            h, "I2", party: "C-2", name: "Asha Traders", cents: 500_000, issued: "2025-12-01", due: "2025-12-31")
        try invoicePayment(
            h, "IP2", invoice: "I2", cents: 50_000, on: "2026-03-20", paidTotal: 50_000, balance: 450_000)
        try invoice(
            h, "I3", party: "C-2", name: "Asha Traders", cents: 150_000, issued: "2026-03-25", due: "2026-04-24")
        guard h.database.stop == nil else { throw FixtureError(description: "the book stopped: \(h.database.stop!)") }
        return h
    }

    /// The report of a projection file as of `asOf`, generated at `generatedAt`.
    static func render(_ h: ProjectionHarness, asOf: LocalDate = asOf, generatedAt: Timestamp = generatedAt) throws
        -> String
    {
        HTMLReport.render(try figures(h, asOf: asOf), generatedAt: generatedAt)
    }

    static func figures(_ h: ProjectionHarness, asOf: LocalDate = asOf) throws -> ReportFigures {
        let path = h.directory.appendingPathComponent("readmodels.db").path
        guard let snapshot = try ProjectionSnapshot(path: path) else {
            throw FixtureError(description: "no file at \(path)")
        }
        return try ReportFigures.read(snapshot, asOf: asOf)
    }

    static func date(_ text: String) -> LocalDate { LocalDate(text)! }

    struct FixtureError: Error, CustomStringConvertible {
        let description: String
    }

    private static func request(
        _ h: ProjectionHarness, _ loan: String, account: String, agent: String, cents: Int64, on day: String
    ) throws {
        try h.given(
            .loanRequested(
                LoanRequested(
                    loanId: loan, accountId: account, agentId: agent, principalCents: cents, monthlyRateBp: 400,
                    tenureMonths: 3, frequency: .monthly, interestMethod: .reducing, requestedOn: date(day),
                    requestedBy: agent)), stream: "loan-\(loan)", actor: agent)
    }

    /// Approves `loan` with installments of (due date, principal, interest, remaining balance).
    private static func approve(
        _ h: ProjectionHarness, _ loan: String, on day: String, _ installments: [(String, Int64, Int64, Int64)]
    ) throws {
        let schedule = installments.enumerated().map { index, entry in
            ScheduleEntry(
                number: index + 1, dueDate: date(entry.0), principalCents: entry.1, interestCents: entry.2,
                totalCents: entry.1 + entry.2, remainingBalanceCents: entry.3)
        }
        try h.given(
            .loanApproved(LoanApproved(loanId: loan, approvedBy: "admin-1", approvedOn: date(day), schedule: schedule)),
            stream: "loan-\(loan)")
    }

    private static func commission(_ h: ProjectionHarness, loan: String, interestCents: Int64, commissionCents: Int64)
        throws
    {
        try h.given(
            .commissionEarned(
                CommissionEarned(
                    agentId: "agent-1", loanId: loan, paymentId: "P1", interestCents: interestCents, rateBp: 1000,
                    commissionCents: commissionCents)), stream: "agent-agent-1", actor: "agent-1")
    }

    /// An invoice of one untaxed line, so its total is `cents`.
    static func invoice(
        _ h: ProjectionHarness, _ id: String, party: String, name: String, cents: Int64, issued: String, due: String
    ) throws {
        try h.given(
            .invoiceCreated(
                InvoiceCreated(
                    invoiceId: id, series: "INV", invoiceNumber: "INV-\(id)",
                    customer: InvoiceCustomer(partyId: party, name: PersonalData(name)), issueDate: date(issued),
                    dueDate: date(due),
                    lines: [
                        InvoiceLine(
                            description: "Goods", quantityMilli: 1000, unitPriceCents: cents, taxRateBp: 0,
                            amountCents: cents, discountCents: 0, taxableCents: cents, taxCents: 0)
                    ],
                    totals: InvoiceTotals(
                        subtotalCents: cents, discountCents: 0, taxableCents: cents, taxCents: 0, totalCents: cents),
                    createdBy: "admin-1")), stream: "invoice-\(id)")
    }

    private static func invoicePayment(
        _ h: ProjectionHarness, _ id: String, invoice: String, cents: Int64, on day: String, paidTotal: Int64,
        balance: Int64
    ) throws {
        try h.given(
            .invoicePaymentRecorded(
                InvoicePaymentRecorded(
                    paymentId: id, invoiceId: invoice, amountCents: cents, paidOn: date(day), method: .bank,
                    recordedBy: "admin-1", paidTotalCents: paidTotal, balanceCents: balance,
                    status: balance == 0 ? .paid : .partiallyPaid)), stream: "invoice-\(invoice)")
    }
}
