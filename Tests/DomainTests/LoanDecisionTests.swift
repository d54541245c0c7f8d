import Domain
import Events
import StrataCore
import StrataTesting
import Testing

// Given/when/then for RequestLoan, ApproveLoan, RejectLoan and ReceivePayment (DOMAIN.md
// "Loans" and "Agent earnings"; refusal order from CONTRACT.md "Commands").
//
// The worked loan "L1": 1,000,000 cents at 400 bp a month over 3 months, MONTHLY,
// REDUCING, requested and approved on 2026-11-20 (today in `DomainScenario.lending()`).
// Its schedule, worked by hand from DOMAIN's formulas:
//   EMI A = round(1,000,000 · 0.04 · 1.04³ / (1.04³ − 1)) = 360,349
//   #1 due 2026-12-20: interest round(1,000,000 × 400 × 30 / 300,000) = 40,000, principal 320,349, balance 679,651
//   #2 due 2027-01-19: interest round(679,651 × 0.04) = 27,186, principal 333,163, balance 346,488
//   #3 due 2027-02-18: interest round(346,488 × 0.04) = 13,860, principal 346,488 (the rest), balance 0
// Everything scheduled: 1,081,046 (interest 81,046).

// MARK: - Fixtures (file-private; the `ld` prefix keeps them apart from other test files' helpers)


/// Everything L1 schedules: principal plus interest.
private let ldWorkedTotal: Int64 = 1_081_046

private func ldRequest(
    _ loanId: String = "L1", account: String = People.account, principal: Int64 = 1_000_000, rate: Int = 400,
    tenure: Int = 3, frequency: LoanFrequency = .monthly, method: InterestMethod? = nil, on requestedOn: LocalDate? = nil
) -> Command {
    .requestLoan(
        RequestLoan(
            loanId: loanId, accountId: account, principalCents: principal, monthlyRateBp: rate, tenureMonths: tenure,
            frequency: frequency, interestMethod: method, requestedOn: requestedOn))
}

private func ldRequested(
    _ loanId: String = "L1", agent: String = People.agent, principal: Int64 = 1_000_000, rate: Int = 400,
    tenure: Int = 3, frequency: LoanFrequency = .monthly, method: InterestMethod = .reducing,
    on requestedOn: LocalDate = date("2026-11-20"), by requestedBy: String = People.agent
) -> StrataEvent {
    .loanRequested(
        LoanRequested(
            loanId: loanId, accountId: People.account, agentId: agent, principalCents: principal, monthlyRateBp: rate,
            tenureMonths: tenure, frequency: frequency, interestMethod: method, requestedOn: requestedOn,
            requestedBy: requestedBy))
}

private func ldApprove(_ loanId: String = "L1", on approvedOn: LocalDate? = nil) -> Command {
    .approveLoan(ApproveLoan(loanId: loanId, approvedOn: approvedOn))
}

private func ldPay(
    _ paymentId: String, _ amount: Int64, on paidOn: LocalDate, loan: String = "L1", method: PaymentMethod? = nil,
    ref: String? = nil, notes: String? = nil
) -> Command {
    .receivePayment(
        ReceivePayment(
            paymentId: paymentId, loanId: loan, amountCents: amount, paidOn: paidOn, method: method, externalRef: ref,
            notes: notes))
}

/// One installment's part of a payment: (number, penaltyAccrued, penalty, interest, principal).
private typealias LDInstallmentPart = (number: Int, accrued: Int64, penalty: Int64, interest: Int64, principal: Int64)

private func ldReceived(
    _ paymentId: String, _ amount: Int64, on paidOn: LocalDate, loan: String = "L1", by receivedBy: String = People.agent,
    method: PaymentMethod = .cash, ref: String? = nil, notes: String? = nil, type: PaymentType,
    allocation: (penalty: Int64, interest: Int64, principal: Int64), parts: [LDInstallmentPart], outstandingAfter: Int64
) -> StrataEvent {
    .paymentReceived(
        PaymentReceived(
            paymentId: paymentId, loanId: loan, amountCents: amount, paidOn: paidOn, method: method, externalRef: ref,
            notes: notes, receivedBy: receivedBy, type: type,
            allocation: PaymentAllocation(
                penaltyCents: allocation.penalty, interestCents: allocation.interest,
                principalCents: allocation.principal),
            perInstallment: parts.map {
                InstallmentAllocation(
                    number: $0.number, penaltyAccruedCents: $0.accrued, penaltyCents: $0.penalty,
                    interestCents: $0.interest, principalCents: $0.principal)
            },
            outstandingAfterCents: outstandingAfter))
}

private func ldCommission(
    _ paymentId: String, interest: Int64, rate: Int = 1_000, commission: Int64, loan: String = "L1",
    agent: String = People.agent
) -> StrataEvent {
    .commissionEarned(
        CommissionEarned(
            agentId: agent, loanId: loan, paymentId: paymentId, interestCents: interest, rateBp: rate,
            commissionCents: commission))
}

private func ldClosed(_ paymentId: String, on closedOn: LocalDate, loan: String = "L1") -> StrataEvent {
    .loanClosed(LoanClosed(loanId: loan, closedOn: closedOn, paymentId: paymentId))
}

/// Given: `command` was accepted (fails the test, at the caller's line, if it was not).
private func ldGivenAccepted(
    _ s: inout DomainScenario, _ command: Command, actor: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    let decision = s.when(command, actor: actor)
    if let refusal = decision.refusal {
        Issue.record("setup command \(command.type) was refused: \(refusal)", sourceLocation: sourceLocation)
    }
}

/// Given: a loan requested by the account's agent and still pending.
private func ldGivenPendingLoan(
    _ s: inout DomainScenario, _ loanId: String = "L1", principal: Int64 = 1_000_000, rate: Int = 400, tenure: Int = 3,
    frequency: LoanFrequency = .monthly, method: InterestMethod? = nil, requestedOn: LocalDate? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    ldGivenAccepted(
        &s,
        ldRequest(
            loanId, principal: principal, rate: rate, tenure: tenure, frequency: frequency, method: method,
            on: requestedOn),
        actor: People.agent, sourceLocation: sourceLocation)
}

/// Given: a loan requested by the account's agent and approved by the admin.
private func ldGivenActiveLoan(
    _ s: inout DomainScenario, _ loanId: String = "L1", principal: Int64 = 1_000_000, rate: Int = 400, tenure: Int = 3,
    frequency: LoanFrequency = .monthly, method: InterestMethod? = nil, requestedOn: LocalDate? = nil,
    approvedOn: LocalDate? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    ldGivenPendingLoan(
        &s, loanId, principal: principal, rate: rate, tenure: tenure, frequency: frequency, method: method,
        requestedOn: requestedOn, sourceLocation: sourceLocation)
    ldGivenAccepted(&s, ldApprove(loanId, on: approvedOn), actor: People.admin, sourceLocation: sourceLocation)
}

/// Then: accepted, expecting exactly these stream versions.
private func ldExpectVersions(
    _ decision: Decision, _ expected: [StreamRef: Int64], sourceLocation: SourceLocation = #_sourceLocation
) {
    switch decision {
    case .accepted(let accepted):
        #expect(accepted.expectedVersions == expected, sourceLocation: sourceLocation)
    case .refused(let error):
        Issue.record("expected acceptance, got refusal \(error)", sourceLocation: sourceLocation)
    }
}

// MARK: - Tests

@Suite("Loan decisions")
struct LoanDecisionTests {

    // MARK: RequestLoan

    @Suite("RequestLoan")
    struct Request {
        @Test func byTheAccountsAgentWithDefaults() {
            var s = DomainScenario.lending()
            let decision = s.when(ldRequest(), actor: People.agent)
            expectEvents(decision, [ldRequested()])
            ldExpectVersions(decision, [.user(People.agent): 2, .account(People.account): 1, .loan("L1"): 0])
        }

        @Test func byAnAdminTheLoansAgentIsTheAccountsAgent() {
            var s = DomainScenario.lending()
            let decision = s.when(ldRequest(), actor: People.admin)
            expectEvents(decision, [ldRequested(agent: People.agent, by: People.admin)])
            ldExpectVersions(decision, [.user(People.admin): 1, .account(People.account): 1, .loan("L1"): 0])
        }

        @Test func afterTheAccountMovedTheNewAgentOwnsNewLoans() {
            var s = DomainScenario.lending()
            s.given(
                .accountUpdated(
                    AccountUpdated(accountId: People.account, assignedAgentId: People.otherAgent, updatedBy: People.admin)))
            expectEvents(
                s.decide(ldRequest(), actor: People.admin),
                [ldRequested(agent: People.otherAgent, by: People.admin)])
            expectEvents(
                s.decide(ldRequest(), actor: People.otherAgent),
                [ldRequested(agent: People.otherAgent, by: People.otherAgent)])
            expectRefusal(s.decide(ldRequest(), actor: People.agent), .forbidden, "NOT_ASSIGNED_AGENT")
        }

        @Test func explicitFieldsAreCarried() {
            let s = DomainScenario.lending()
            expectEvents(
                s.decide(
                    ldRequest(
                        "L-flat", principal: 250_000, rate: 450, tenure: 6, frequency: .weekly, method: .flat,
                        on: date("2026-10-01")),
                    actor: People.agent),
                [
                    ldRequested(
                        "L-flat", principal: 250_000, rate: 450, tenure: 6, frequency: .weekly, method: .flat,
                        on: date("2026-10-01"))
                ])
            expectEvents(
                s.decide(ldRequest(frequency: .biMonthly, method: .reducing), actor: People.agent),
                [ldRequested(frequency: .biMonthly, method: .reducing)])
        }

        @Test func backDatingUpTo366DaysIsAllowed() {
            let s = DomainScenario.lending()
            // 2025-11-19 is 366 days before 2026-11-20 (2026 has no 29 February).
            #expect(date("2025-11-19").days(until: s.today) == 366)
            expectEvents(
                s.decide(ldRequest(on: date("2025-11-19")), actor: People.agent),
                [ldRequested(on: date("2025-11-19"))])
            expectEvents(
                s.decide(ldRequest(on: date("2026-11-20")), actor: People.agent),
                [ldRequested(on: date("2026-11-20"))])
        }

        @Test func backDating367DaysIsInvalid() {
            let s = DomainScenario.lending()
            expectInvalid(
                s.decide(ldRequest(on: date("2025-11-18")), actor: People.agent),
                [("requestedOn", "TOO_FAR_IN_PAST")])
        }

        @Test func futureRequestDateIsInvalid() {
            let s = DomainScenario.lending()
            expectInvalid(
                s.decide(ldRequest(on: date("2026-11-21")), actor: People.agent),
                [("requestedOn", "FUTURE_DATE")])
        }

        @Test func zeroOrNegativePrincipalMustBePositive() {
            let s = DomainScenario.lending()
            expectInvalid(
                s.decide(ldRequest(principal: 0), actor: People.agent), [("principalCents", "MUST_BE_POSITIVE")])
            expectInvalid(
                s.decide(ldRequest(principal: -1), actor: People.agent), [("principalCents", "MUST_BE_POSITIVE")])
            expectEvents(
                s.decide(ldRequest(principal: 1), actor: People.agent), [ldRequested(principal: 1)])
        }

        @Test func principalUpToTheDefaultMaximum() {
            let s = DomainScenario.lending()
            expectEvents(
                s.decide(ldRequest(principal: 100_000_000), actor: People.agent),
                [ldRequested(principal: 100_000_000)])
            expectInvalid(
                s.decide(ldRequest(principal: 100_000_001), actor: People.agent),
                [("principalCents", "ABOVE_MAXIMUM")])
        }

        @Test func principalUpToAConfiguredMaximum() {
            var configuration = DomainConfiguration()
            configuration.maximumPrincipalCents = 5_000_000
            let s = DomainScenario.lending(configuration: configuration)
            expectEvents(
                s.decide(ldRequest(principal: 5_000_000), actor: People.agent),
                [ldRequested(principal: 5_000_000)])
            expectInvalid(
                s.decide(ldRequest(principal: 5_000_001), actor: People.agent),
                [("principalCents", "ABOVE_MAXIMUM")])
        }

        /// The largest maximum an operator may configure: a loan of it, weekly over a year at the
        /// highest rate, is scheduled, accrues a year of penalty and is paid, every sum in `Int64`.
        @Test(arguments: InterestMethod.allCases)
        func principalAtTheLargestConfigurableMaximum(method: InterestMethod) {
            var configuration = DomainConfiguration()
            configuration.maximumPrincipalCents = DomainConfiguration.principalLimitRange.upperBound
            let principal = configuration.maximumPrincipalCents
            var s = DomainScenario.lending(configuration: configuration)
            let longAgo = s.today.adding(days: -366)
            ldGivenActiveLoan(
                &s, principal: principal, rate: 500, tenure: 12, frequency: .weekly, method: method,
                requestedOn: longAgo, approvedOn: longAgo)
            guard case .loanApproved(let approved)? = s.history.last else {
                Issue.record("no approval: \(s.history)")
                return
            }
            #expect(approved.schedule.count == 52)
            #expect(approved.schedule.reduce(0) { $0 + $1.principalCents } == principal)
            let decision = s.decide(ldPay("P1", PayloadLimits.maximumAmountCents, on: s.today), actor: People.agent)
            guard case .paymentReceived(let payment)? = decision.events?.first else {
                Issue.record("\(decision)")
                return
            }
            #expect(payment.allocation.penaltyCents > 0)
            #expect(payment.outstandingAfterCents > 0)
        }

        @Test(arguments: [300, 400, 500])
        func rateWithinRange(rate: Int) {
            let s = DomainScenario.lending()
            expectEvents(s.decide(ldRequest(rate: rate), actor: People.agent), [ldRequested(rate: rate)])
        }

        @Test(arguments: [0, 299, 501, 10_000])
        func rateOutOfRange(rate: Int) {
            let s = DomainScenario.lending()
            expectInvalid(s.decide(ldRequest(rate: rate), actor: People.agent), [("monthlyRateBp", "OUT_OF_RANGE")])
        }

        @Test(arguments: [2, 7, 12])
        func tenureWithinRange(tenure: Int) {
            let s = DomainScenario.lending()
            expectEvents(
                s.decide(ldRequest(tenure: tenure), actor: People.agent), [ldRequested(tenure: tenure)])
        }

        @Test(arguments: [0, 1, 13])
        func tenureOutOfRange(tenure: Int) {
            let s = DomainScenario.lending()
            expectInvalid(
                s.decide(ldRequest(tenure: tenure), actor: People.agent), [("tenureMonths", "OUT_OF_RANGE")])
        }

        @Test func everyProblemIsListedAtOnce() {
            let s = DomainScenario.lending()
            expectInvalid(
                s.decide(
                    ldRequest(principal: 0, rate: 299, tenure: 13, on: date("2026-11-21")), actor: People.agent),
                [
                    ("principalCents", "MUST_BE_POSITIVE"), ("monthlyRateBp", "OUT_OF_RANGE"),
                    ("tenureMonths", "OUT_OF_RANGE"), ("requestedOn", "FUTURE_DATE"),
                ])
        }

        @Test func rawPayloadProblems() {
            let s = DomainScenario.lending()
            let payload: [String: JSONValue] = [
                "loanId": .string("L1"), "accountId": .string(People.account), "principalCents": .integer(1_000),
                "monthlyRateBp": .integer(400), "tenureMonths": .integer(3), "frequency": .string("DAILY"),
                "interestMethod": .string("COMPOUND"), "principal": .integer(5),
            ]
            expectInvalid(
                s.decide(type: "RequestLoan", payload: payload, actor: People.agent),
                [("frequency", "UNKNOWN_VALUE"), ("interestMethod", "UNKNOWN_VALUE"), ("principal", "UNKNOWN_FIELD")])
        }

        @Test func anotherAgentIsNotTheAssignedAgent() {
            let s = DomainScenario.lending()
            expectRefusal(s.decide(ldRequest(), actor: People.otherAgent), .forbidden, "NOT_ASSIGNED_AGENT")
        }

        @Test func aPendingAgentMayNotAct() {
            let s = DomainScenario.lending()
            expectRefusal(s.decide(ldRequest(), actor: People.pendingAgent), .forbidden, "ACTOR_NOT_APPROVED")
        }

        @Test func anUnknownAccountIsNotFound() {
            let s = DomainScenario.lending()
            expectRefusal(
                s.decide(ldRequest(account: "acct-missing"), actor: People.agent), .notFound, "ACCOUNT_NOT_FOUND")
            expectRefusal(
                s.decide(ldRequest(account: "acct-missing"), actor: People.admin), .notFound, "ACCOUNT_NOT_FOUND")
        }

        @Test func aLoanIdCanBeUsedOnce() {
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s)
            expectRefusal(s.decide(ldRequest(), actor: People.agent), .rejected, "LOAN_ALREADY_EXISTS")
            expectRefusal(
                s.decide(ldRequest(principal: 5_000), actor: People.admin), .rejected, "LOAN_ALREADY_EXISTS")
            ldGivenAccepted(&s, ldApprove(), actor: People.admin)
            expectRefusal(s.decide(ldRequest(), actor: People.agent), .rejected, "LOAN_ALREADY_EXISTS")
        }

        @Test(arguments: [AccountStatus.inactive, .suspended])
        func theAccountMustBeActive(status: AccountStatus) {
            var s = DomainScenario.lending()
            s.given(
                .accountStatusChanged(
                    AccountStatusChanged(accountId: People.account, status: status, reason: "audit", changedBy: People.admin)))
            expectRefusal(s.decide(ldRequest(), actor: People.agent), .rejected, "ACCOUNT_NOT_ACTIVE")
            expectRefusal(s.decide(ldRequest(), actor: People.admin), .rejected, "ACCOUNT_NOT_ACTIVE")
        }

        @Test func anAccountActiveAgainMayBorrow() {
            var s = DomainScenario.lending()
            s.given(
                .accountStatusChanged(
                    AccountStatusChanged(
                        accountId: People.account, status: .suspended, reason: "audit", changedBy: People.admin)),
                .accountStatusChanged(
                    AccountStatusChanged(
                        accountId: People.account, status: .active, reason: "cleared", changedBy: People.admin)))
            expectEvents(s.decide(ldRequest(), actor: People.agent), [ldRequested()])
        }

        @Test func severalOpenRequestsPerAccountAreAllowed() {
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s, "L1")
            expectEvents(
                s.when(ldRequest("L2", principal: 20_000), actor: People.agent),
                [ldRequested("L2", principal: 20_000)])
            expectEvents(
                s.when(ldRequest("L3", principal: 30_000), actor: People.admin),
                [ldRequested("L3", principal: 30_000, by: People.admin)])
        }

        @Test func refusalOrder() {
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s)
            // INVALID (the payload alone) before FORBIDDEN for the actor's status.
            expectInvalid(
                s.decide(ldRequest(principal: 0), actor: People.pendingAgent),
                [("principalCents", "MUST_BE_POSITIVE")])
            // FORBIDDEN for the actor's status before NOT_FOUND.
            expectRefusal(
                s.decide(ldRequest("L9", account: "acct-missing"), actor: People.pendingAgent), .forbidden,
                "ACTOR_NOT_APPROVED")
            // NOT_FOUND before FORBIDDEN for ownership.
            expectRefusal(
                s.decide(ldRequest("L9", account: "acct-missing"), actor: People.otherAgent), .notFound,
                "ACCOUNT_NOT_FOUND")
            // FORBIDDEN for ownership before REJECTED.
            expectRefusal(s.decide(ldRequest("L1"), actor: People.otherAgent), .forbidden, "NOT_ASSIGNED_AGENT")
            // CONFLICT before REJECTED.
            expectRefusal(
                s.decide(ldRequest("L1"), actor: People.agent, expectedVersion: 0), .conflict,
                "WRONG_EXPECTED_VERSION")
            expectRefusal(
                s.decide(ldRequest("L1"), actor: People.agent, expectedVersion: 1), .rejected,
                "LOAN_ALREADY_EXISTS")
        }
    }

    // MARK: ApproveLoan / RejectLoan

    @Suite("ApproveLoan and RejectLoan")
    struct Approve {
        @Test func approvalCarriesTheWorkedSchedule() {
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s)
            let decision = s.when(ldApprove(), actor: People.admin)
            expectEvents(
                decision,
                [
                    .loanApproved(
                        LoanApproved(
                            loanId: "L1", approvedBy: People.admin, approvedOn: date("2026-11-20"),
                            schedule: workedSchedule))
                ])
            ldExpectVersions(decision, [.user(People.admin): 1, .loan("L1"): 1])
        }

        @Test func weeklyReducingLiteralSchedule() {
            // 1,000,000 at 400 bp over 2 months weekly: n = ceil(60 / 7) = 9, r = 0.04 × 7 / 30,
            // EMI 116,361; interest round(balance × 400 × 7 / 300,000).
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s, tenure: 2, frequency: .weekly)
            let rows: [(String, Int64, Int64, Int64)] = [
                ("2026-11-27", 107_028, 9_333, 892_972), ("2026-12-04", 108_027, 8_334, 784_945),
                ("2026-12-11", 109_035, 7_326, 675_910), ("2026-12-18", 110_053, 6_308, 565_857),
                ("2026-12-25", 111_080, 5_281, 454_777), ("2027-01-01", 112_116, 4_245, 342_661),
                ("2027-01-08", 113_163, 3_198, 229_498), ("2027-01-15", 114_219, 2_142, 115_279),
                ("2027-01-22", 115_279, 1_076, 0),
            ]
            let schedule = rows.enumerated().map { index, row in
                ScheduleEntry(
                    number: index + 1, dueDate: date(row.0), principalCents: row.1, interestCents: row.2,
                    totalCents: row.1 + row.2, remainingBalanceCents: row.3)
            }
            expectEvents(
                s.decide(ldApprove(), actor: People.admin),
                [
                    .loanApproved(
                        LoanApproved(
                            loanId: "L1", approvedBy: People.admin, approvedOn: date("2026-11-20"), schedule: schedule))
                ])
        }

        @Test func flatLiteralScheduleWithRemainders() {
            // 1,234,567 at 300 bp over 2 months, BI_MONTHLY, FLAT: n = 4;
            // I = round(1,234,567 × 300 × 2 / 10,000) = 74,074 → 18,518 each, the last 18,520;
            // principal ⌊1,234,567 / 4⌋ = 308,641 each, the last 308,644.
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s, principal: 1_234_567, rate: 300, tenure: 2, frequency: .biMonthly, method: .flat)
            let schedule = [
                ScheduleEntry(
                    number: 1, dueDate: date("2026-12-05"), principalCents: 308_641, interestCents: 18_518,
                    totalCents: 327_159, remainingBalanceCents: 925_926),
                ScheduleEntry(
                    number: 2, dueDate: date("2026-12-20"), principalCents: 308_641, interestCents: 18_518,
                    totalCents: 327_159, remainingBalanceCents: 617_285),
                ScheduleEntry(
                    number: 3, dueDate: date("2027-01-04"), principalCents: 308_641, interestCents: 18_518,
                    totalCents: 327_159, remainingBalanceCents: 308_644),
                ScheduleEntry(
                    number: 4, dueDate: date("2027-01-19"), principalCents: 308_644, interestCents: 18_520,
                    totalCents: 327_164, remainingBalanceCents: 0),
            ]
            expectEvents(
                s.decide(ldApprove(), actor: People.admin),
                [
                    .loanApproved(
                        LoanApproved(
                            loanId: "L1", approvedBy: People.admin, approvedOn: date("2026-11-20"), schedule: schedule))
                ])
        }

        @Test(arguments: LoanFrequency.allCases, InterestMethod.allCases)
        func scheduleIsTheCalculatorsForTheRequest(frequency: LoanFrequency, method: InterestMethod) {
            for (principal, rate, tenure) in [(Int64(1), 300, 2), (987_654, 437, 7), (100_000_000, 500, 12)] {
                var s = DomainScenario.lending()
                ldGivenPendingLoan(
                    &s, principal: principal, rate: rate, tenure: tenure, frequency: frequency, method: method,
                    requestedOn: date("2026-09-01"))
                let schedule = AmortizationSchedule.schedule(
                    principalCents: principal, monthlyRateBp: rate, tenureMonths: tenure, frequency: frequency,
                    method: method, approvedOn: date("2026-09-03"))
                #expect(schedule.count == (tenure * 30 + frequency.periodDays - 1) / frequency.periodDays)
                #expect(schedule.reduce(0) { $0 + $1.principalCents } == principal)
                expectEvents(
                    s.decide(ldApprove(on: date("2026-09-03")), actor: People.admin),
                    [
                        .loanApproved(
                            LoanApproved(
                                loanId: "L1", approvedBy: People.admin, approvedOn: date("2026-09-03"), schedule: schedule))
                    ])
            }
        }

        @Test func backDatedApprovalMovesTheDueDates() {
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s, requestedOn: date("2026-06-01"))
            let shifted = workedSchedule.enumerated().map { index, entry in
                var entry = entry
                entry.dueDate = date("2026-06-15").adding(days: 30 * (index + 1))
                return entry
            }
            #expect(shifted.map(\.dueDate) == [date("2026-07-15"), date("2026-08-14"), date("2026-09-13")])
            expectEvents(
                s.decide(ldApprove(on: date("2026-06-15")), actor: People.admin),
                [
                    .loanApproved(
                        LoanApproved(
                            loanId: "L1", approvedBy: People.admin, approvedOn: date("2026-06-15"), schedule: shifted))
                ])
        }

        @Test func approvalOnTheRequestDayIsAllowed() {
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s, requestedOn: date("2026-06-01"))
            let decision = s.decide(ldApprove(on: date("2026-06-01")), actor: People.admin)
            guard case .loanApproved(let approved)? = decision.events?.first else {
                Issue.record("\(decision)")
                return
            }
            #expect(approved.approvedOn == date("2026-06-01"))
            #expect(approved.schedule.first?.dueDate == date("2026-07-01"))
        }

        @Test func approvalBeforeTheRequestIsRejected() {
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s, requestedOn: date("2026-06-01"))
            expectRefusal(
                s.decide(ldApprove(on: date("2026-05-31")), actor: People.admin), .rejected,
                "APPROVED_BEFORE_REQUEST")
        }

        @Test func futureApprovalIsInvalid() {
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s)
            expectInvalid(
                s.decide(ldApprove(on: date("2026-11-21")), actor: People.admin), [("approvedOn", "FUTURE_DATE")])
        }

        @Test func onlyAnAdminApproves() {
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s)
            expectRefusal(s.decide(ldApprove(), actor: People.agent), .forbidden, "ROLE_NOT_ALLOWED")
            expectRefusal(s.decide(ldApprove(), actor: People.otherAgent), .forbidden, "ROLE_NOT_ALLOWED")
            expectRefusal(s.decide(ldApprove(), actor: People.pendingAgent), .forbidden, "ROLE_NOT_ALLOWED")
            expectRefusal(s.decide(ldApprove(), actor: "nobody"), .forbidden, "UNKNOWN_ACTOR")
        }

        @Test func approvalNeedsAPendingLoan() {
            var s = DomainScenario.lending()
            expectRefusal(s.decide(ldApprove(), actor: People.admin), .notFound, "LOAN_NOT_FOUND")
            ldGivenActiveLoan(&s)
            expectRefusal(s.decide(ldApprove(), actor: People.admin), .rejected, "LOAN_NOT_PENDING")
            ldGivenPendingLoan(&s, "L2")
            ldGivenAccepted(&s, .rejectLoan(RejectLoan(loanId: "L2", reason: "no income proof")), actor: People.admin)
            expectRefusal(s.decide(ldApprove("L2"), actor: People.admin), .rejected, "LOAN_NOT_PENDING")
        }

        @Test func approvalRefusalOrder() {
            var s = DomainScenario.lending()
            // FORBIDDEN for the role before NOT_FOUND.
            expectRefusal(s.decide(ldApprove("L-missing"), actor: People.agent), .forbidden, "ROLE_NOT_ALLOWED")
            // INVALID before everything.
            expectInvalid(
                s.decide(ldApprove("L-missing", on: date("2026-11-21")), actor: People.agent),
                [("approvedOn", "FUTURE_DATE")])
            ldGivenActiveLoan(&s)
            // CONFLICT before REJECTED.
            expectRefusal(
                s.decide(ldApprove(), actor: People.admin, expectedVersion: 1), .conflict, "WRONG_EXPECTED_VERSION")
        }

        @Test func rejection() {
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s)
            let decision = s.when(.rejectLoan(RejectLoan(loanId: "L1", reason: "no income proof")), actor: People.admin)
            expectEvents(
                decision, [.loanRejected(LoanRejected(loanId: "L1", rejectedBy: People.admin, reason: "no income proof"))])
            ldExpectVersions(decision, [.user(People.admin): 1, .loan("L1"): 1])
            expectRefusal(
                s.decide(.rejectLoan(RejectLoan(loanId: "L1", reason: "again")), actor: People.admin), .rejected,
                "LOAN_NOT_PENDING")
        }

        @Test func onlyAnAdminRejectsAPendingLoan() {
            var s = DomainScenario.lending()
            let reject = Command.rejectLoan(RejectLoan(loanId: "L1", reason: "no"))
            expectRefusal(s.decide(reject, actor: People.admin), .notFound, "LOAN_NOT_FOUND")
            ldGivenPendingLoan(&s)
            expectRefusal(s.decide(reject, actor: People.agent), .forbidden, "ROLE_NOT_ALLOWED")
            expectInvalid(
                s.decide(.rejectLoan(RejectLoan(loanId: "L1", reason: "   ")), actor: People.admin), [("reason", "EMPTY")])
            ldGivenAccepted(&s, ldApprove(), actor: People.admin)
            expectRefusal(s.decide(reject, actor: People.admin), .rejected, "LOAN_NOT_PENDING")
        }
    }

    // MARK: ReceivePayment: who, when, how much

    @Suite("ReceivePayment refusals and actors")
    struct PaymentRules {
        @Test func theLoansAgentTakesAPaymentWithExpectedVersions() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.advance(days: 30)
            let decision = s.when(ldPay("P1", 360_349, on: date("2026-12-20")), actor: People.agent)
            expectEvents(
                decision,
                [
                    ldReceived(
                        "P1", 360_349, on: date("2026-12-20"), type: .regular, allocation: (0, 40_000, 320_349),
                        parts: [(1, 0, 0, 40_000, 320_349)], outstandingAfter: 720_697),
                    ldCommission("P1", interest: 40_000, commission: 4_000),
                ])
            // The loan, the actor and the settings, as read; never the agent's ledger.
            ldExpectVersions(decision, [.loan("L1"): 2, .user(People.agent): 2, .settings: 0])
            if case .accepted(let accepted) = decision {
                #expect(accepted.expectedVersions[.agent(People.agent)] == nil)
                #expect(accepted.events.map(\.stream) == [.loan("L1"), .agent(People.agent)])
            }
        }

        @Test func anAdminTakesAPaymentTheLoansAgentEarns() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.advance(days: 30)
            let decision = s.when(ldPay("P1", 360_349, on: date("2026-12-20")), actor: People.admin)
            expectEvents(
                decision,
                [
                    ldReceived(
                        "P1", 360_349, on: date("2026-12-20"), by: People.admin, type: .regular,
                        allocation: (0, 40_000, 320_349), parts: [(1, 0, 0, 40_000, 320_349)], outstandingAfter: 720_697),
                    ldCommission("P1", interest: 40_000, commission: 4_000),
                ])
            ldExpectVersions(decision, [.loan("L1"): 2, .user(People.admin): 1, .settings: 0])
        }

        @Test func theLoansAgentKeepsItAfterTheAccountMoved() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.given(
                .accountUpdated(
                    AccountUpdated(accountId: People.account, assignedAgentId: People.otherAgent, updatedBy: People.admin)))
            s.advance(days: 30)
            let expected: [StrataEvent] = [
                ldReceived(
                    "P1", 360_349, on: date("2026-12-20"), type: .regular, allocation: (0, 40_000, 320_349),
                    parts: [(1, 0, 0, 40_000, 320_349)], outstandingAfter: 720_697),
                ldCommission("P1", interest: 40_000, commission: 4_000, agent: People.agent),
            ]
            expectEvents(s.decide(ldPay("P1", 360_349, on: date("2026-12-20")), actor: People.agent), expected)
            expectRefusal(
                s.decide(ldPay("P1", 360_349, on: date("2026-12-20")), actor: People.otherAgent), .forbidden,
                "NOT_LOAN_AGENT")
            // An admin's payment still earns the loan's agent, not the account's new one.
            expectEvents(
                s.decide(ldPay("P1", 360_349, on: date("2026-12-20")), actor: People.admin),
                [
                    ldReceived(
                        "P1", 360_349, on: date("2026-12-20"), by: People.admin, type: .regular,
                        allocation: (0, 40_000, 320_349), parts: [(1, 0, 0, 40_000, 320_349)], outstandingAfter: 720_697),
                    ldCommission("P1", interest: 40_000, commission: 4_000, agent: People.agent),
                ])
        }

        @Test func anotherAgentIsNotTheLoansAgent() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            expectRefusal(
                s.decide(ldPay("P1", 1_000, on: s.today), actor: People.otherAgent), .forbidden, "NOT_LOAN_AGENT")
            expectRefusal(
                s.decide(ldPay("P1", 1_000, on: s.today), actor: People.pendingAgent), .forbidden,
                "ACTOR_NOT_APPROVED")
        }

        @Test func theLoanMustExist() {
            let s = DomainScenario.lending()
            expectRefusal(s.decide(ldPay("P1", 1_000, on: s.today), actor: People.agent), .notFound, "LOAN_NOT_FOUND")
            expectRefusal(s.decide(ldPay("P1", 1_000, on: s.today), actor: People.admin), .notFound, "LOAN_NOT_FOUND")
        }

        @Test func aPendingLoanIsNotActive() {
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s)
            expectRefusal(
                s.decide(ldPay("P1", 1_000, on: s.today), actor: People.agent), .rejected, "LOAN_NOT_ACTIVE")
        }

        @Test func aRejectedLoanIsNotActive() {
            var s = DomainScenario.lending()
            ldGivenPendingLoan(&s)
            ldGivenAccepted(&s, .rejectLoan(RejectLoan(loanId: "L1", reason: "no")), actor: People.admin)
            expectRefusal(
                s.decide(ldPay("P1", 1_000, on: s.today), actor: People.admin), .rejected, "LOAN_NOT_ACTIVE")
        }

        @Test func aClosedLoanIsNotActive() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            ldGivenAccepted(&s, ldPay("P1", ldWorkedTotal, on: s.today), actor: People.agent)
            expectRefusal(
                s.decide(ldPay("P2", 1, on: s.today), actor: People.agent), .rejected, "LOAN_NOT_ACTIVE")
        }

        @Test func aPaymentIdIsRecordedOnce() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            ldGivenAccepted(&s, ldPay("P1", 10_000, on: s.today), actor: People.agent)
            expectRefusal(
                s.decide(ldPay("P1", 10_000, on: s.today), actor: People.agent), .rejected, "DUPLICATE_PAYMENT")
            expectRefusal(
                s.decide(ldPay("P1", 777, on: s.today, ref: "other"), actor: People.admin), .rejected,
                "DUPLICATE_PAYMENT")
        }

        @Test func anExternalReferenceIsUniquePerLoan() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s, "L1")
            ldGivenActiveLoan(&s, "L2")
            ldGivenAccepted(&s, ldPay("P1", 10_000, on: s.today, method: .wallet, ref: "0xabc"), actor: People.agent)
            expectRefusal(
                s.decide(ldPay("P2", 10_000, on: s.today, method: .wallet, ref: "0xabc"), actor: People.agent),
                .rejected, "DUPLICATE_PAYMENT_REFERENCE")
            // The same reference on another loan is fine.
            expectEvents(
                s.decide(ldPay("P2", 10_000, on: s.today, loan: "L2", method: .wallet, ref: "0xabc"), actor: People.agent),
                [
                    ldReceived(
                        "P2", 10_000, on: date("2026-11-20"), loan: "L2", method: .wallet, ref: "0xabc", type: .partial,
                        allocation: (0, 10_000, 0), parts: [(1, 0, 0, 10_000, 0)], outstandingAfter: ldWorkedTotal - 10_000),
                    ldCommission("P2", interest: 10_000, commission: 1_000, loan: "L2"),
                ])
            // Another reference on the same loan is fine too.
            #expect(
                s.decide(ldPay("P3", 10_000, on: s.today, method: .wallet, ref: "0xdef"), actor: People.agent)
                    .refusal == nil)
        }

        @Test func notBeforeApproval() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s, requestedOn: date("2026-11-01"), approvedOn: date("2026-11-10"))
            expectRefusal(
                s.decide(ldPay("P1", 1_000, on: date("2026-11-09")), actor: People.agent), .rejected,
                "PAYMENT_BEFORE_APPROVAL")
            expectRefusal(
                s.decide(ldPay("P1", 1_000, on: date("2026-11-01")), actor: People.agent), .rejected,
                "PAYMENT_BEFORE_APPROVAL")
            #expect(s.decide(ldPay("P1", 1_000, on: date("2026-11-10")), actor: People.agent).refusal == nil)
        }

        @Test func notBeforeThePreviousPayment() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s, requestedOn: date("2026-11-01"), approvedOn: date("2026-11-01"))
            ldGivenAccepted(&s, ldPay("P1", 1_000, on: date("2026-11-15")), actor: People.agent)
            expectRefusal(
                s.decide(ldPay("P2", 1_000, on: date("2026-11-14")), actor: People.agent), .rejected,
                "PAYMENT_DATE_OUT_OF_ORDER")
            #expect(s.decide(ldPay("P2", 1_000, on: date("2026-11-15")), actor: People.agent).refusal == nil)
            #expect(s.decide(ldPay("P2", 1_000, on: date("2026-11-20")), actor: People.agent).refusal == nil)
        }

        @Test func aFuturePaymentDateIsInvalid() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            expectInvalid(
                s.decide(ldPay("P1", 1_000, on: date("2026-11-21")), actor: People.agent),
                [("paidOn", "FUTURE_DATE")])
        }

        @Test func theAmountMustBePositive() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            expectInvalid(
                s.decide(ldPay("P1", 0, on: s.today), actor: People.agent), [("amountCents", "MUST_BE_POSITIVE")])
            expectInvalid(
                s.decide(ldPay("P1", -500, on: s.today), actor: People.agent),
                [("amountCents", "MUST_BE_POSITIVE")])
            expectInvalid(
                s.decide(ldPay("P1", 0, on: date("2026-11-21")), actor: People.agent),
                [("amountCents", "MUST_BE_POSITIVE"), ("paidOn", "FUTURE_DATE")])
        }

        @Test func notMoreThanEverythingOwedOnTime() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.advance(days: 30)
            expectRefusal(
                s.decide(ldPay("P1", ldWorkedTotal + 1, on: date("2026-12-20")), actor: People.agent),
                .rejected, "AMOUNT_EXCEEDS_OUTSTANDING")
            // Exactly everything owed is accepted and closes the loan.
            expectEvents(
                s.decide(ldPay("P1", ldWorkedTotal, on: date("2026-12-20")), actor: People.agent),
                [
                    ldReceived(
                        "P1", 1_081_046, on: date("2026-12-20"), type: .full, allocation: (0, 81_046, 1_000_000),
                        parts: [(1, 0, 0, 40_000, 320_349), (2, 0, 0, 27_186, 333_163), (3, 0, 0, 13_860, 346_488)],
                        outstandingAfter: 0),
                    ldCommission("P1", interest: 81_046, commission: 8_105),
                    ldClosed("P1", on: date("2026-12-20")),
                ])
        }

        @Test func notMoreThanEverythingOwedIncludingAccruedPenalty() {
            // Paid on 2027-01-19, installment 1 is 30 days late:
            // penalty round(360,349 × 30 / 1000) = 10,810; everything owed 1,081,046 + 10,810.
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.advance(days: 60)
            expectRefusal(
                s.decide(ldPay("P1", 1_091_857, on: date("2027-01-19")), actor: People.agent), .rejected,
                "AMOUNT_EXCEEDS_OUTSTANDING")
            expectEvents(
                s.decide(ldPay("P1", 1_091_856, on: date("2027-01-19")), actor: People.agent),
                [
                    ldReceived(
                        "P1", 1_091_856, on: date("2027-01-19"), type: .full, allocation: (10_810, 81_046, 1_000_000),
                        parts: [(1, 10_810, 10_810, 40_000, 320_349), (2, 0, 0, 27_186, 333_163), (3, 0, 0, 13_860, 346_488)],
                        outstandingAfter: 0),
                    ldCommission("P1", interest: 81_046, commission: 8_105),
                    ldClosed("P1", on: date("2027-01-19")),
                ])
        }

        @Test func notMoreThanWhatIsLeftAfterEarlierPayments() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            ldGivenAccepted(&s, ldPay("P1", 81_046, on: s.today), actor: People.agent)
            expectRefusal(
                s.decide(ldPay("P2", 1_000_001, on: s.today), actor: People.agent), .rejected,
                "AMOUNT_EXCEEDS_OUTSTANDING")
            let decision = s.decide(ldPay("P2", 1_000_000, on: s.today), actor: People.agent)
            #expect(decision.events?.map(\.eventType) == ["PaymentReceived", "CommissionEarned", "LoanClosed"], "\(decision)")
        }

        @Test func methodNotesAndReferenceAreCarried() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            expectEvents(
                s.decide(
                    ldPay("P1", 40_000, on: s.today, method: .bank, ref: "UTR-0042", notes: "first EMI\nby NEFT"),
                    actor: People.agent),
                [
                    ldReceived(
                        "P1", 40_000, on: date("2026-11-20"), method: .bank, ref: "UTR-0042", notes: "first EMI\nby NEFT",
                        type: .partial, allocation: (0, 40_000, 0), parts: [(1, 0, 0, 40_000, 0)],
                        outstandingAfter: 1_041_046),
                    ldCommission("P1", interest: 40_000, commission: 4_000),
                ])
        }

        @Test func refusalOrder() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            ldGivenAccepted(&s, ldPay("P1", ldWorkedTotal, on: s.today), actor: People.agent)
            // INVALID first.
            expectInvalid(
                s.decide(ldPay("P2", 0, on: s.today, loan: "L-missing"), actor: People.pendingAgent),
                [("amountCents", "MUST_BE_POSITIVE")])
            // FORBIDDEN for the actor's status before NOT_FOUND.
            expectRefusal(
                s.decide(ldPay("P2", 1, on: s.today, loan: "L-missing"), actor: People.pendingAgent), .forbidden,
                "ACTOR_NOT_APPROVED")
            // NOT_FOUND before FORBIDDEN for ownership.
            expectRefusal(
                s.decide(ldPay("P2", 1, on: s.today, loan: "L-missing"), actor: People.otherAgent), .notFound,
                "LOAN_NOT_FOUND")
            // FORBIDDEN for ownership before REJECTED.
            expectRefusal(
                s.decide(ldPay("P2", 1, on: s.today), actor: People.otherAgent), .forbidden, "NOT_LOAN_AGENT")
            // CONFLICT before REJECTED: the closed loan is at version 4.
            expectRefusal(
                s.decide(ldPay("P2", 1, on: s.today), actor: People.agent, expectedVersion: 3), .conflict,
                "WRONG_EXPECTED_VERSION")
            expectRefusal(
                s.decide(ldPay("P2", 1, on: s.today), actor: People.agent, expectedVersion: 4), .rejected,
                "LOAN_NOT_ACTIVE")
        }

        @Test func expectedVersionIsTheLoans() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            #expect(s.version(of: .loan("L1")) == 2)
            expectRefusal(
                s.decide(ldPay("P1", 1_000, on: s.today), actor: People.agent, expectedVersion: 1), .conflict,
                "WRONG_EXPECTED_VERSION")
            #expect(s.decide(ldPay("P1", 1_000, on: s.today), actor: People.agent, expectedVersion: 2).refusal == nil)
        }
    }

    // MARK: ReceivePayment: worked examples

    @Suite("ReceivePayment worked examples")
    struct PaymentExamples {
        @Test func onTimeRegular() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.advance(days: 30)
            expectEvents(
                s.when(ldPay("P1", 360_349, on: date("2026-12-20")), actor: People.agent),
                [
                    ldReceived(
                        "P1", 360_349, on: date("2026-12-20"), type: .regular, allocation: (0, 40_000, 320_349),
                        parts: [(1, 0, 0, 40_000, 320_349)], outstandingAfter: 720_697),
                    ldCommission("P1", interest: 40_000, commission: 4_000),
                ])
            // The second installment on its due date, 30 days later: REGULAR again.
            s.advance(days: 30)
            expectEvents(
                s.when(ldPay("P2", 360_349, on: date("2027-01-19")), actor: People.agent),
                [
                    ldReceived(
                        "P2", 360_349, on: date("2027-01-19"), type: .regular, allocation: (0, 27_186, 333_163),
                        parts: [(2, 0, 0, 27_186, 333_163)], outstandingAfter: 360_348),
                    ldCommission("P2", interest: 27_186, commission: 2_719),
                ])
            // The last one closes the loan.
            s.advance(days: 30)
            expectEvents(
                s.when(ldPay("P3", 360_348, on: date("2027-02-18")), actor: People.agent),
                [
                    ldReceived(
                        "P3", 360_348, on: date("2027-02-18"), type: .full, allocation: (0, 13_860, 346_488),
                        parts: [(3, 0, 0, 13_860, 346_488)], outstandingAfter: 0),
                    ldCommission("P3", interest: 13_860, commission: 1_386),
                    ldClosed("P3", on: date("2027-02-18")),
                ])
        }

        @Test func partial() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.advance(days: 30)
            expectEvents(
                s.when(ldPay("P1", 100_000, on: date("2026-12-20")), actor: People.agent),
                [
                    ldReceived(
                        "P1", 100_000, on: date("2026-12-20"), type: .partial, allocation: (0, 40_000, 60_000),
                        parts: [(1, 0, 0, 40_000, 60_000)], outstandingAfter: 981_046),
                    ldCommission("P1", interest: 40_000, commission: 4_000),
                ])
            // The rest of installment 1 the same day settles it: REGULAR.
            expectEvents(
                s.when(ldPay("P2", 260_349, on: date("2026-12-20")), actor: People.agent),
                [
                    ldReceived(
                        "P2", 260_349, on: date("2026-12-20"), type: .regular, allocation: (0, 0, 260_349),
                        parts: [(1, 0, 0, 0, 260_349)], outstandingAfter: 720_697)
                ])
        }

        @Test func lateWithPenalty() {
            // 30 days late on installment 1: round(360,349 × 30 / 1000) = 10,810 accrued and
            // paid first; installment 2 falls due that very day and accrues nothing.
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.advance(days: 60)
            expectEvents(
                s.when(ldPay("P1", 371_159, on: date("2027-01-19")), actor: People.agent),
                [
                    ldReceived(
                        "P1", 371_159, on: date("2027-01-19"), type: .regular, allocation: (10_810, 40_000, 320_349),
                        parts: [(1, 10_810, 10_810, 40_000, 320_349)], outstandingAfter: 720_697),
                    ldCommission("P1", interest: 40_000, commission: 4_000),
                ])
        }

        @Test func lateOnTwoInstallments() {
            // On 2027-02-18: #1 is 60 days late, round(360,349 × 60 / 1000) = 21,621;
            // #2 is 30 days late, 10,810; #3 is due that day. 500,000 pays #1 whole
            // (21,621 + 40,000 + 320,349) and then #2's penalty, interest and 80,034 principal.
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.advance(days: 90)
            expectEvents(
                s.when(ldPay("P1", 500_000, on: date("2027-02-18")), actor: People.agent),
                [
                    ldReceived(
                        "P1", 500_000, on: date("2027-02-18"), type: .regular, allocation: (32_431, 67_186, 400_383),
                        parts: [(1, 21_621, 21_621, 40_000, 320_349), (2, 10_810, 10_810, 27_186, 80_034)],
                        outstandingAfter: 613_477),
                    ldCommission("P1", interest: 67_186, commission: 6_719),
                ])
        }

        @Test func penaltyOnly() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.advance(days: 60)
            // 5,000 of the 10,810 accrued: PENALTY, no interest so no commission.
            expectEvents(
                s.when(ldPay("P1", 5_000, on: date("2027-01-19")), actor: People.agent),
                [
                    ldReceived(
                        "P1", 5_000, on: date("2027-01-19"), type: .penalty, allocation: (5_000, 0, 0),
                        parts: [(1, 10_810, 5_000, 0, 0)], outstandingAfter: 1_086_856)
                ])
            // The rest of the penalty the same day: nothing new accrues, still PENALTY.
            expectEvents(
                s.when(ldPay("P2", 5_810, on: date("2027-01-19")), actor: People.agent),
                [
                    ldReceived(
                        "P2", 5_810, on: date("2027-01-19"), type: .penalty, allocation: (5_810, 0, 0),
                        parts: [(1, 0, 5_810, 0, 0)], outstandingAfter: 1_081_046)
                ])
        }

        @Test func overflowPrepaysLaterInstallments() {
            // 500,000 on 2026-12-20: #1 whole (40,000 + 320,349), the remaining 139,651 to
            // #2's interest 27,186 and 112,465 of its principal.
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.advance(days: 30)
            expectEvents(
                s.when(ldPay("P1", 500_000, on: date("2026-12-20")), actor: People.agent),
                [
                    ldReceived(
                        "P1", 500_000, on: date("2026-12-20"), type: .regular, allocation: (0, 67_186, 432_814),
                        parts: [(1, 0, 0, 40_000, 320_349), (2, 0, 0, 27_186, 112_465)], outstandingAfter: 581_046),
                    ldCommission("P1", interest: 67_186, commission: 6_719),
                ])
            // Paid 30 days later, on #2's due date, what is left of #2: no penalty (not late).
            s.advance(days: 30)
            expectEvents(
                s.when(ldPay("P2", 220_698, on: date("2027-01-19")), actor: People.agent),
                [
                    ldReceived(
                        "P2", 220_698, on: date("2027-01-19"), type: .regular, allocation: (0, 0, 220_698),
                        parts: [(2, 0, 0, 0, 220_698)], outstandingAfter: 360_348)
                ])
        }

        @Test func earlyPaymentOnApprovalDay() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            expectEvents(
                s.when(ldPay("P1", 400_000, on: date("2026-11-20")), actor: People.agent),
                [
                    ldReceived(
                        "P1", 400_000, on: date("2026-11-20"), type: .regular, allocation: (0, 67_186, 332_814),
                        parts: [(1, 0, 0, 40_000, 320_349), (2, 0, 0, 27_186, 12_465)], outstandingAfter: 681_046),
                    ldCommission("P1", interest: 67_186, commission: 6_719),
                ])
        }

        @Test func fullSettlementInOnePayment() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.advance(days: 30)
            expectEvents(
                s.when(ldPay("P1", ldWorkedTotal, on: date("2026-12-20")), actor: People.admin),
                [
                    ldReceived(
                        "P1", 1_081_046, on: date("2026-12-20"), by: People.admin, type: .full,
                        allocation: (0, 81_046, 1_000_000),
                        parts: [(1, 0, 0, 40_000, 320_349), (2, 0, 0, 27_186, 333_163), (3, 0, 0, 13_860, 346_488)],
                        outstandingAfter: 0),
                    ldCommission("P1", interest: 81_046, commission: 8_105),
                    ldClosed("P1", on: date("2026-12-20")),
                ])
            s.advance(days: 1)
            expectRefusal(
                s.decide(ldPay("P2", 1, on: date("2026-12-21")), actor: People.agent), .rejected,
                "LOAN_NOT_ACTIVE")
        }

        @Test func penaltyAccruesOncePerDayRange() {
            // P1 on 2027-01-04, 15 days late: round(360,349 × 15 / 1000) = 5,405 accrued;
            // 100,000 pays it, the interest and 54,595 of the principal (PARTIAL), leaving
            // 265,754 unpaid on #1. P2 on 2027-01-19 accrues from P1's date only:
            // round(265,754 × 15 / 1000) = 3,986 (not 30 days' worth), and #2, due that day, nothing.
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.advance(days: 45)
            expectEvents(
                s.when(ldPay("P1", 100_000, on: date("2027-01-04")), actor: People.agent),
                [
                    ldReceived(
                        "P1", 100_000, on: date("2027-01-04"), type: .partial, allocation: (5_405, 40_000, 54_595),
                        parts: [(1, 5_405, 5_405, 40_000, 54_595)], outstandingAfter: 986_451),
                    ldCommission("P1", interest: 40_000, commission: 4_000),
                ])
            s.advance(days: 15)
            expectEvents(
                s.when(ldPay("P2", 269_740, on: date("2027-01-19")), actor: People.agent),
                [
                    ldReceived(
                        "P2", 269_740, on: date("2027-01-19"), type: .regular, allocation: (3_986, 0, 265_754),
                        parts: [(1, 3_986, 3_986, 0, 265_754)], outstandingAfter: 720_697)
                ])
        }

        @Test func aSecondPaymentTheSameDayAccruesNothing() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.advance(days: 60)
            ldGivenAccepted(&s, ldPay("P1", 5_000, on: date("2027-01-19")), actor: People.agent)
            expectEvents(
                s.when(ldPay("P2", 20_000, on: date("2027-01-19")), actor: People.agent),
                [
                    ldReceived(
                        "P2", 20_000, on: date("2027-01-19"), type: .partial, allocation: (5_810, 14_190, 0),
                        parts: [(1, 0, 5_810, 14_190, 0)], outstandingAfter: 1_066_856),
                    ldCommission("P2", interest: 14_190, commission: 1_419),
                ])
        }
    }

    // MARK: Commission

    @Suite("Commission on payments")
    struct Commissions {
        private func payInterest(_ s: DomainScenario, _ amount: Int64) -> Decision {
            s.decide(ldPay("P1", amount, on: s.today), actor: People.agent)
        }

        private func expectedPayment(_ amount: Int64) -> StrataEvent {
            ldReceived(
                "P1", amount, on: date("2026-11-20"), type: .partial, allocation: (0, amount, 0),
                parts: [(1, 0, 0, amount, 0)], outstandingAfter: ldWorkedTotal - amount)
        }

        @Test func theConfiguredDefaultRate() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            expectEvents(
                payInterest(s, 33_335),
                [expectedPayment(33_335), ldCommission("P1", interest: 33_335, rate: 1_000, commission: 3_334)])
        }

        @Test func aCustomConfiguredDefaultRate() {
            var configuration = DomainConfiguration()
            configuration.defaultCommissionRateBp = 750
            var s = DomainScenario.lending(configuration: configuration)
            ldGivenActiveLoan(&s)
            // 33,335 × 750 / 10,000 = 2,500.125 → 2,500.
            expectEvents(
                payInterest(s, 33_335),
                [expectedPayment(33_335), ldCommission("P1", interest: 33_335, rate: 750, commission: 2_500)])
        }

        @Test func theGlobalDefaultSetByAnAdmin() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.given(.commissionRateChanged(CommissionRateChanged(rateBp: 1_500, changedBy: People.admin)))
            // Another agent's own rate does not apply to this loan's agent.
            s.given(
                .commissionRateChanged(
                    CommissionRateChanged(agentId: People.otherAgent, rateBp: 3_000, changedBy: People.admin)))
            let decision = payInterest(s, 33_335)
            // 33,335 × 0.15 = 5,000.25 → 5,000.
            expectEvents(
                decision, [expectedPayment(33_335), ldCommission("P1", interest: 33_335, rate: 1_500, commission: 5_000)])
            ldExpectVersions(decision, [.loan("L1"): 2, .user(People.agent): 2, .settings: 2])
        }

        @Test func theAgentsOwnRateWins() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.given(
                .commissionRateChanged(CommissionRateChanged(agentId: People.agent, rateBp: 2_000, changedBy: People.admin)),
                .commissionRateChanged(CommissionRateChanged(rateBp: 1_500, changedBy: People.admin)))
            // 33,335 × 0.2 = 6,667.
            expectEvents(
                payInterest(s, 33_335),
                [expectedPayment(33_335), ldCommission("P1", interest: 33_335, rate: 2_000, commission: 6_667)])
        }

        @Test func theRateInForceWhenPaid() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.given(
                .commissionRateChanged(CommissionRateChanged(agentId: People.agent, rateBp: 2_000, changedBy: People.admin)),
                .commissionRateChanged(CommissionRateChanged(agentId: People.agent, rateBp: 500, changedBy: People.admin)))
            expectEvents(
                payInterest(s, 33_335),
                [expectedPayment(33_335), ldCommission("P1", interest: 33_335, rate: 500, commission: 1_667)])
        }

        @Test func roundsHalfAwayFromZero() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            // 5 × 1000 / 10,000 = 0.5 → 1; 15 → 1.5 → 2.
            expectEvents(payInterest(s, 5), [expectedPayment(5), ldCommission("P1", interest: 5, commission: 1)])
            expectEvents(payInterest(s, 15), [expectedPayment(15), ldCommission("P1", interest: 15, commission: 2)])
        }

        @Test func noEventWhenTheCommissionRoundsToZero() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            // 4 × 1000 / 10,000 = 0.4 → 0.
            expectEvents(payInterest(s, 4), [expectedPayment(4)])
            expectEvents(payInterest(s, 1), [expectedPayment(1)])
        }

        @Test func noEventAtAZeroRate() {
            var s = DomainScenario.lending()
            ldGivenActiveLoan(&s)
            s.given(.commissionRateChanged(CommissionRateChanged(agentId: People.agent, rateBp: 0, changedBy: People.admin)))
            expectEvents(payInterest(s, 33_335), [expectedPayment(33_335)])
        }
    }
}
