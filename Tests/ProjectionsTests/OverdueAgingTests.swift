import Events
import Projections
import StrataCore
import StrataTesting
import Testing

@Suite struct OverdueAgingTests {
    private typealias F = LendingFixtures

    /// L1: the story loan (due 2026-02-04, 03-06, 04-05). L2: 2,000.00 FLAT over two months,
    /// due 2025-10-31 and 2025-11-30, never paid. L4: L1's amounts due 2025-12-31, 2026-01-30
    /// and 2026-03-01, never paid. L3: still pending.
    private func portfolio() throws -> ProjectionHarness {
        let h = try ProjectionHarness(LoanPortfolio.withInstallments)
        try h.given(F.loanRequested("L1"), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanApproved("L1"), stream: "loan-L1")
        try h.given(
            .loanRequested(
                LoanRequested(
                    loanId: "L2", accountId: "A2", agentId: "agent-2", principalCents: 200_000, monthlyRateBp: 400,
                    tenureMonths: 2, frequency: .monthly, interestMethod: .flat, requestedOn: F.date("2025-09-30"),
                    requestedBy: "agent-2")),
            stream: "loan-L2", actor: "agent-2")
        try h.given(
            F.loanApproved(
                "L2", on: "2025-10-01",
                schedule: [
                    ScheduleEntry(
                        number: 1, dueDate: F.date("2025-10-31"), principalCents: 100_000, interestCents: 8_000,
                        totalCents: 108_000, remainingBalanceCents: 100_000),
                    ScheduleEntry(
                        number: 2, dueDate: F.date("2025-11-30"), principalCents: 100_000, interestCents: 8_000,
                        totalCents: 108_000, remainingBalanceCents: 0),
                ]),
            stream: "loan-L2")
        try h.given(F.loanRequested("L3"), stream: "loan-L3", actor: "agent-1")
        try h.given(F.loanRequested("L4", requestedOn: "2025-11-28"), stream: "loan-L4", actor: "agent-1")
        let shifted = zip(F.storySchedule, ["2025-12-31", "2026-01-30", "2026-03-01"]).map { entry, due in
            var moved = entry
            moved.dueDate = F.date(due)
            return moved
        }
        try h.given(F.loanApproved("L4", on: "2025-12-01", schedule: shifted), stream: "loan-L4")
        return h
    }

    private func loan(
        _ id: String, _ account: String, _ agent: String, _ due: String, _ days: Int, _ overdue: Int64,
        _ outstanding: Int64, _ bucket: OverdueAging.Bucket
    ) -> OverdueAging.Loan {
        OverdueAging.Loan(
            loanId: id, accountId: account, agentId: agent, oldestDueDate: F.date(due), daysOverdue: days,
            overdueCents: overdue, outstandingCents: outstanding, bucket: bucket)
    }

    @Test func anInstallmentIsLateFromTheDayAfterItsDueDate() throws {
        let h = try portfolio()
        let tables = h
        // On 2026-02-04 L1's first installment is due, not late; L4's first two are late.
        #expect(
            try OverdueAging.rows(asOf: F.date("2026-02-04"), in: tables) == [
                loan("L2", "A2", "agent-2", "2025-10-31", 96, 216_000, 216_000, .over90),
                loan("L4", "A1", "agent-1", "2025-12-31", 35, 2_162_092, 3_243_137, .days31to60),
            ])
        #expect(
            try OverdueAging.rows(asOf: F.date("2026-02-05"), in: tables).last
                == loan("L1", "A1", "agent-1", "2026-02-04", 1, 1_081_046, 3_243_137, .days1to30))
    }

    @Test func partlyPaidInstallmentsCountWhatIsLeftWithTheirPenalty() throws {
        let h = try portfolio()
        try h.given(F.partialPayment(), stream: "loan-L1", actor: "agent-1")
        let tables = h
        // L1 on 2026-03-17: installment 1 still owes 5,242.88, installment 2 owes 10,810.46
        // plus 108.10 of penalty: 16,161.44 overdue, 41 days after 2026-02-04.
        #expect(
            try OverdueAging.rows(asOf: F.date("2026-03-17"), in: tables) == [
                loan("L2", "A2", "agent-2", "2025-10-31", 137, 216_000, 216_000, .over90),
                loan("L4", "A1", "agent-1", "2025-12-31", 76, 3_243_137, 3_243_137, .days61to90),
                loan("L1", "A1", "agent-1", "2026-02-04", 41, 1_616_144, 2_697_189, .days31to60),
            ])
        #expect(
            try OverdueAging.summary(asOf: F.date("2026-03-17"), in: tables) == [
                OverdueAging.BucketTotal(bucket: .days1to30, loans: 0, overdueCents: 0),
                OverdueAging.BucketTotal(bucket: .days31to60, loans: 1, overdueCents: 1_616_144),
                OverdueAging.BucketTotal(bucket: .days61to90, loans: 1, overdueCents: 3_243_137),
                OverdueAging.BucketTotal(bucket: .over90, loans: 1, overdueCents: 216_000),
            ])
        // The plain SQL gives the same, with :as_of bound by name.
        #expect(
            try h.rows(OverdueAging.sql, ["2026-03-17"]).map { [$0[0], $0[4], $0[7]] }
                == [["L2", 137, "90+"], ["L4", 76, "61-90"], ["L1", 41, "31-60"]])
    }

    @Test func bucketBoundariesAndAClosedLoan() throws {
        let h = try portfolio()
        try h.given(F.partialPayment(), stream: "loan-L1", actor: "agent-1")
        try h.given(F.fullPayment(), stream: "loan-L1", actor: "agent-1")
        try h.given(F.loanClosed(), stream: "loan-L1")
        let tables = h
        // L4 from 2025-12-31: 30 days on 2026-01-30, 31 on 01-31, 60 on 03-01, 61 on 03-02,
        // 90 on 03-31, 91 on 04-01. L1 is closed and never overdue again.
        let days = ["2026-01-30", "2026-01-31", "2026-03-01", "2026-03-02", "2026-03-31", "2026-04-01"]
        let l4 = try days.map { day in
            try OverdueAging.rows(asOf: F.date(day), in: tables).filter { $0.loanId == "L4" }.map {
                "\($0.daysOverdue) \($0.bucket.rawValue)"
            }
        }
        #expect(l4 == [["30 1-30"], ["31 31-60"], ["60 31-60"], ["61 61-90"], ["90 61-90"], ["91 90+"]])
        #expect(try OverdueAging.rows(asOf: F.date("2026-12-31"), in: tables).map(\.loanId) == ["L2", "L4"])
        #expect(
            try OverdueAging.summary(asOf: F.date("2025-10-31"), in: tables).map(\.loans) == [0, 0, 0, 0])
    }
}
