import Events
import Projections
import StrataCore
import StrataTesting

/// Events of the lending read models' tests, built with the catalog's initializers.
///
/// The story loan L1: 30,000.00 at 4% a month over 3 months, monthly, reducing balance,
/// approved on 2026-01-05 with the schedule the domain's calculator gives (EMI 10,810.46;
/// total due 32,431.37). Payment P1 (6,000.00 on 2026-03-16, 40 days after the first
/// due date) accrues 432.42 + 108.10 of penalty and leaves the first installment partly
/// paid; payment P2 (27,036.10 on 2026-03-20) accrues 20.97 + 43.24 more and settles all.
enum LendingFixtures {
    static func date(_ text: String) -> LocalDate { LocalDate(text)! }
    static func instant(_ text: String) -> Timestamp { Timestamp(text)! }

    /// recordedAt of the harness's event at `position` (one second apart from 09:00:00).
    static func recordedAt(_ position: Int64) -> ProjectionValue {
        .text(instant("2026-11-02T09:00:00.000Z").adding(milliseconds: (position - 1) * 1000).description)
    }

    static func agentRegistered(_ id: String, username: String? = nil) -> StrataEvent {
        .userRegistered(
            UserRegistered(
                userId: id, username: username ?? id, email: PersonalData("\(id)@example.com"), role: .agent,
                status: .pending))
    }

    static func agentApproved(_ id: String, at: String = "2026-11-02T09:30:00.000Z") -> StrataEvent {
        .agentApproved(AgentApproved(agentId: id, approvedBy: "admin-1", approvedAt: instant(at)))
    }

    static func accountOpened(_ id: String, agent: String = "agent-1", name: String = "Asha Rao") -> StrataEvent {
        .accountOpened(
            AccountOpened(
                accountId: id, name: PersonalData(name), phone: "+919800000001", address: "12 Lake Road, Pune",
                assignedAgentId: agent, openedBy: agent, status: .active))
    }

    static func loanRequested(
        _ id: String, account: String = "A1", agent: String = "agent-1", principalCents: Int64 = 3_000_000,
        requestedOn: String = "2026-01-02"
    ) -> StrataEvent {
        .loanRequested(
            LoanRequested(
                loanId: id, accountId: account, agentId: agent, principalCents: principalCents, monthlyRateBp: 400,
                tenureMonths: 3, frequency: .monthly, interestMethod: .reducing, requestedOn: date(requestedOn),
                requestedBy: agent))
    }

    /// L1's schedule: 30,000.00 at 400 bp a month, 3 monthly installments from 2026-01-05.
    static let storySchedule = [
        ScheduleEntry(
            number: 1, dueDate: date("2026-02-04"), principalCents: 961_046, interestCents: 120_000,
            totalCents: 1_081_046, remainingBalanceCents: 2_038_954),
        ScheduleEntry(
            number: 2, dueDate: date("2026-03-06"), principalCents: 999_488, interestCents: 81_558,
            totalCents: 1_081_046, remainingBalanceCents: 1_039_466),
        ScheduleEntry(
            number: 3, dueDate: date("2026-04-05"), principalCents: 1_039_466, interestCents: 41_579,
            totalCents: 1_081_045, remainingBalanceCents: 0),
    ]

    static func loanApproved(
        _ id: String, on approvedOn: String = "2026-01-05", schedule: [ScheduleEntry] = storySchedule
    ) -> StrataEvent {
        .loanApproved(LoanApproved(loanId: id, approvedBy: "admin-1", approvedOn: date(approvedOn), schedule: schedule))
    }

    /// P1 on L1: 6,000.00 on 2026-03-16. Installment 1 (due 2026-02-04, 40 days late)
    /// accrues round(1,081,046 × 40 / 1000) = 43,242 and receives all of it; installment 2
    /// (due 2026-03-06, 10 days late) accrues round(1,081,046 × 10 / 1000) = 10,810.
    static func partialPayment(_ loan: String = "L1", id: String = "P1") -> StrataEvent {
        .paymentReceived(
            PaymentReceived(
                paymentId: id, loanId: loan, amountCents: 600_000, paidOn: date("2026-03-16"), method: .cash,
                notes: "first visit", receivedBy: "agent-1", type: .partial,
                allocation: PaymentAllocation(penaltyCents: 43_242, interestCents: 120_000, principalCents: 436_758),
                perInstallment: [
                    InstallmentAllocation(
                        number: 1, penaltyAccruedCents: 43_242, penaltyCents: 43_242, interestCents: 120_000,
                        principalCents: 436_758),
                    InstallmentAllocation(
                        number: 2, penaltyAccruedCents: 10_810, penaltyCents: 0, interestCents: 0, principalCents: 0),
                ],
                outstandingAfterCents: 2_697_189))
    }

    /// A payment on L1 of exactly installment 1, on its due date (no penalty): REGULAR.
    static func firstInstallmentOnTime(id: String = "P1") -> StrataEvent {
        .paymentReceived(
            PaymentReceived(
                paymentId: id, loanId: "L1", amountCents: 1_081_046, paidOn: date("2026-02-04"), method: .bank,
                receivedBy: "agent-1", type: .regular,
                allocation: PaymentAllocation(penaltyCents: 0, interestCents: 120_000, principalCents: 961_046),
                perInstallment: [
                    InstallmentAllocation(
                        number: 1, penaltyAccruedCents: 0, penaltyCents: 0, interestCents: 120_000,
                        principalCents: 961_046)
                ],
                outstandingAfterCents: 2_162_091))
    }

    /// P2 on L1: everything owed on 2026-03-20 (4 more days of penalty on installments 1
    /// and 2: round(524,288 × 4 / 1000) = 2,097 and round(1,081,046 × 4 / 1000) = 4,324).
    static func fullPayment(_ loan: String = "L1", id: String = "P2") -> StrataEvent {
        .paymentReceived(
            PaymentReceived(
                paymentId: id, loanId: loan, amountCents: 2_703_610, paidOn: date("2026-03-20"), method: .wallet,
                externalRef: "0xfeed", receivedBy: "agent-1", type: .full,
                allocation: PaymentAllocation(penaltyCents: 17_231, interestCents: 123_137, principalCents: 2_563_242),
                perInstallment: [
                    InstallmentAllocation(
                        number: 1, penaltyAccruedCents: 2_097, penaltyCents: 2_097, interestCents: 0,
                        principalCents: 524_288),
                    InstallmentAllocation(
                        number: 2, penaltyAccruedCents: 4_324, penaltyCents: 15_134, interestCents: 81_558,
                        principalCents: 999_488),
                    InstallmentAllocation(
                        number: 3, penaltyAccruedCents: 0, penaltyCents: 0, interestCents: 41_579,
                        principalCents: 1_039_466),
                ],
                outstandingAfterCents: 0))
    }

    static func loanClosed(_ loan: String = "L1", on closedOn: String = "2026-03-20") -> StrataEvent {
        .loanClosed(LoanClosed(loanId: loan, closedOn: date(closedOn), paymentId: "P2"))
    }

    static func commission(_ payment: String, interestCents: Int64, commissionCents: Int64) -> StrataEvent {
        .commissionEarned(
            CommissionEarned(
                agentId: "agent-1", loanId: "L1", paymentId: payment, interestCents: interestCents, rateBp: 1000,
                commissionCents: commissionCents))
    }

    static func cashoutRequested(_ id: String, cents: Int64, agent: String = "agent-1") -> StrataEvent {
        .cashoutRequested(CashoutRequested(cashoutId: id, agentId: agent, amountCents: cents, requestedBy: agent))
    }

    static func cashoutApproved(_ id: String, cents: Int64, agent: String = "agent-1") -> StrataEvent {
        .cashoutApproved(CashoutApproved(cashoutId: id, agentId: agent, amountCents: cents, approvedBy: "admin-1"))
    }

    static func cashoutRejected(_ id: String, cents: Int64, agent: String = "agent-1", reason: String) -> StrataEvent {
        .cashoutRejected(
            CashoutRejected(cashoutId: id, agentId: agent, amountCents: cents, rejectedBy: "admin-1", reason: reason))
    }
}

