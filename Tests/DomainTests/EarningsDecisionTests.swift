import Domain
import Events
import StrataCore
import StrataTesting
import Testing

// Given/when/then for commission rates and cash-outs (DOMAIN.md "Agent earnings and
// cash-outs"). The agent's stream is its ledger; collectible = earned − approved − pending.

private func commission(_ cents: Int64, agent: String = People.agent, payment: String) -> StrataEvent {
    .commissionEarned(
        CommissionEarned(
            agentId: agent, loanId: "L0", paymentId: payment, interestCents: cents * 10, rateBp: 1_000, commissionCents: cents))
}

/// A cash-out already asked for: its own stream's request and the ledger's reservation.
private func requested(_ cashoutId: String, _ cents: Int64, agent: String = People.agent) -> [StrataEvent] {
    [
        .cashoutRequested(CashoutRequested(cashoutId: cashoutId, agentId: agent, amountCents: cents, requestedBy: agent)),
        .earningsReserved(EarningsReserved(agentId: agent, cashoutId: cashoutId, amountCents: cents)),
    ]
}

private func cashout(_ cashoutId: String, _ cents: Int64, agent: String = People.agent) -> Command {
    .requestCashout(RequestCashout(cashoutId: cashoutId, agentId: agent, amountCents: cents))
}

private func cashoutAccepted(_ cashoutId: String, _ cents: Int64, agent: String = People.agent) -> [StrataEvent] {
    requested(cashoutId, cents, agent: agent)
}

/// `lending()` and `agent` has earned `cents` of commission.
private func earning(_ cents: Int64, configuration: DomainConfiguration = .init()) -> DomainScenario {
    var s = DomainScenario.lending(configuration: configuration)
    s.given(commission(cents, payment: "P0"))
    return s
}

private func ledgerVersions(_ decision: Decision) -> [StreamRef: Int64]? {
    if case .accepted(let accepted) = decision { return accepted.expectedVersions }
    return nil
}

@Suite("Earnings decisions")
struct EarningsDecisionTests {
    // MARK: - SetCommissionRate

    @Test func anAdminSetsTheGlobalRate() {
        var s = DomainScenario.lending()
        let decision = s.when(.setCommissionRate(SetCommissionRate(rateBp: 1_500)), actor: People.admin)
        expectEvents(decision, [.commissionRateChanged(CommissionRateChanged(rateBp: 1_500, changedBy: People.admin))])
        #expect(ledgerVersions(decision) == [.user(People.admin): 1, .settings: 0])
        let again = s.when(.setCommissionRate(SetCommissionRate(rateBp: 1_200)), actor: People.admin)
        expectEvents(again, [.commissionRateChanged(CommissionRateChanged(rateBp: 1_200, changedBy: People.admin))])
        #expect(ledgerVersions(again) == [.user(People.admin): 1, .settings: 1])
    }

    @Test func anAdminSetsOneAgentsRate() {
        var s = DomainScenario.lending()
        let decision = s.when(
            .setCommissionRate(SetCommissionRate(agentId: People.agent, rateBp: 2_000)), actor: People.admin)
        expectEvents(
            decision,
            [.commissionRateChanged(CommissionRateChanged(agentId: People.agent, rateBp: 2_000, changedBy: People.admin))])
        #expect(ledgerVersions(decision) == [.user(People.admin): 1, .settings: 0, .user(People.agent): 2])
        // Any agent's rate, whatever the agent's status.
        expectEvents(
            s.when(.setCommissionRate(SetCommissionRate(agentId: People.pendingAgent, rateBp: 800)), actor: People.admin),
            [.commissionRateChanged(CommissionRateChanged(agentId: People.pendingAgent, rateBp: 800, changedBy: People.admin))])
    }

    @Test(arguments: [0, 1, 9_999, 10_000])
    func ratesFromZeroToAHundredPercentAreAccepted(rate: Int) {
        var s = DomainScenario.lending()
        expectEvents(
            s.when(.setCommissionRate(SetCommissionRate(rateBp: rate)), actor: People.admin),
            [.commissionRateChanged(CommissionRateChanged(rateBp: rate, changedBy: People.admin))])
        expectEvents(
            s.when(.setCommissionRate(SetCommissionRate(agentId: People.otherAgent, rateBp: rate)), actor: People.admin),
            [.commissionRateChanged(CommissionRateChanged(agentId: People.otherAgent, rateBp: rate, changedBy: People.admin))])
    }

    @Test(arguments: [-1, 10_001, -10_000, 1_000_000])
    func ratesOutsideZeroToAHundredPercentAreInvalid(rate: Int) {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(.setCommissionRate(SetCommissionRate(rateBp: rate)), actor: People.admin), [("rateBp", "OUT_OF_RANGE")])
        expectInvalid(
            s.decide(.setCommissionRate(SetCommissionRate(agentId: People.agent, rateBp: rate)), actor: People.admin),
            [("rateBp", "OUT_OF_RANGE")])
    }

    @Test func aRateIsAnInteger() {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(type: "SetCommissionRate", payload: ["rateBp": "15%"], actor: People.admin), [("rateBp", "WRONG_TYPE")])
        expectInvalid(
            s.decide(type: "SetCommissionRate", payload: ["agentId": "agent 7"], actor: People.admin),
            [("agentId", "INVALID_IDENTIFIER"), ("rateBp", "REQUIRED")])
    }

    @Test func aRateForAnUnknownAgentIsNotFound() {
        let s = DomainScenario.lending()
        expectRefusal(
            s.decide(.setCommissionRate(SetCommissionRate(agentId: "agent-404", rateBp: 1_000)), actor: People.admin),
            .notFound, "AGENT_NOT_FOUND")
    }

    @Test func aRateIsForAnAgentNotAnAdmin() {
        let s = DomainScenario.lending()
        expectRefusal(
            s.decide(.setCommissionRate(SetCommissionRate(agentId: People.admin, rateBp: 1_000)), actor: People.admin),
            .rejected, "NOT_AN_AGENT")
    }

    @Test(arguments: [People.agent, People.otherAgent, People.pendingAgent])
    func agentsMayNotSetRates(actor: String) {
        let s = DomainScenario.lending()
        expectRefusal(
            s.decide(.setCommissionRate(SetCommissionRate(rateBp: 5_000)), actor: actor), .forbidden, "ROLE_NOT_ALLOWED")
        expectRefusal(
            s.decide(.setCommissionRate(SetCommissionRate(agentId: actor, rateBp: 5_000)), actor: actor), .forbidden,
            "ROLE_NOT_ALLOWED")
        expectRefusal(
            s.decide(.setCommissionRate(SetCommissionRate(rateBp: 5_000)), actor: "ghost"), .forbidden, "UNKNOWN_ACTOR")
    }

    /// The rate in force: the agent's own, else the global default, else the configured
    /// 10%. A 40,000-cent interest payment earns 4,000 / 6,000 / 8,000.
    @Test func theRateInForceEarnsTheCommission() {
        func commissionOnFirstInterest(_ setUp: (inout DomainScenario) -> Void) -> [StrataEvent] {
            var s = DomainScenario.lending()
            setUp(&s)
            s.when(
                .requestLoan(
                    RequestLoan(
                        loanId: "L1", accountId: People.account, principalCents: 1_000_000, monthlyRateBp: 400,
                        tenureMonths: 3, frequency: .monthly)),
                actor: People.agent)
            s.when(.approveLoan(ApproveLoan(loanId: "L1")), actor: People.admin)
            let pay = s.when(
                .receivePayment(ReceivePayment(paymentId: "P1", loanId: "L1", amountCents: 40_000, paidOn: s.today)),
                actor: People.admin)
            return (pay.events ?? []).filter { $0.eventType == "CommissionEarned" }
        }
        func earned(_ rate: Int, _ cents: Int64) -> [StrataEvent] {
            [
                .commissionEarned(
                    CommissionEarned(
                        agentId: People.agent, loanId: "L1", paymentId: "P1", interestCents: 40_000, rateBp: rate,
                        commissionCents: cents))
            ]
        }
        #expect(commissionOnFirstInterest { _ in } == earned(1_000, 4_000))
        #expect(
            commissionOnFirstInterest { s in
                s.when(.setCommissionRate(SetCommissionRate(rateBp: 1_500)), actor: People.admin)
            } == earned(1_500, 6_000))
        #expect(
            commissionOnFirstInterest { s in
                s.when(.setCommissionRate(SetCommissionRate(agentId: People.agent, rateBp: 2_000)), actor: People.admin)
                s.when(.setCommissionRate(SetCommissionRate(rateBp: 1_500)), actor: People.admin)
                s.when(.setCommissionRate(SetCommissionRate(agentId: People.otherAgent, rateBp: 3_000)), actor: People.admin)
            } == earned(2_000, 8_000))
        #expect(
            commissionOnFirstInterest { s in
                s.when(.setCommissionRate(SetCommissionRate(agentId: People.agent, rateBp: 0)), actor: People.admin)
            } == [])
    }

    // MARK: - RequestCashout

    @Test func anAgentCashesOutTheirEarnings() {
        var s = earning(50_000)
        let decision = s.when(cashout("C1", 30_000), actor: People.agent)
        expectEvents(decision, cashoutAccepted("C1", 30_000))
        #expect(ledgerVersions(decision) == [.user(People.agent): 2, .cashout("C1"): 0, .agent(People.agent): 1])
        // What is reserved is no longer collectible.
        expectRefusal(s.decide(cashout("C2", 20_001), actor: People.agent), .rejected, "INSUFFICIENT_EARNINGS")
        expectEvents(s.when(cashout("C2", 20_000), actor: People.agent), cashoutAccepted("C2", 20_000))
        expectRefusal(s.decide(cashout("C3", 10_000), actor: People.agent), .rejected, "INSUFFICIENT_EARNINGS")
    }

    @Test func anAgentCashesOutOnlyTheirOwnEarnings() {
        var s = earning(50_000)
        s.given(commission(50_000, agent: People.otherAgent, payment: "P9"))
        expectRefusal(
            s.decide(cashout("C1", 20_000, agent: People.otherAgent), actor: People.agent), .forbidden, "NOT_OWN_EARNINGS")
        expectRefusal(
            s.decide(cashout("C1", 20_000, agent: "agent-404"), actor: People.agent), .forbidden, "NOT_OWN_EARNINGS")
    }

    @Test func anAdminDoesNotCashOut() {
        let s = earning(50_000)
        expectRefusal(s.decide(cashout("C1", 20_000), actor: People.admin), .forbidden, "ROLE_NOT_ALLOWED")
        expectRefusal(
            s.decide(cashout("C1", 20_000, agent: People.admin), actor: People.admin), .forbidden, "ROLE_NOT_ALLOWED")
    }

    @Test func anUnapprovedAgentDoesNotCashOut() {
        var s = DomainScenario.lending()
        s.given(commission(50_000, agent: People.pendingAgent, payment: "P0"))
        expectRefusal(
            s.decide(cashout("C1", 20_000, agent: People.pendingAgent), actor: People.pendingAgent), .forbidden,
            "ACTOR_NOT_APPROVED")
        expectRefusal(s.decide(cashout("C1", 20_000), actor: "ghost"), .forbidden, "UNKNOWN_ACTOR")
    }

    @Test(arguments: [Int64(9_999), 1, 0, -1, -50_000])
    func aCashoutBelowTheMinimumIsInvalid(amount: Int64) {
        let s = earning(1_000_000)
        expectInvalid(
            s.decide(cashout("C1", amount), actor: People.agent), [("amountCents", "BELOW_MINIMUM_CASHOUT")])
    }

    @Test func aCashoutOfExactlyTheMinimumIsAccepted() {
        var s = earning(10_000)
        expectEvents(s.when(cashout("C1", 10_000), actor: People.agent), cashoutAccepted("C1", 10_000))
    }

    @Test func theMinimumIsConfigured() {
        var lower = DomainConfiguration()
        lower.minimumCashoutCents = 5_000
        var s = earning(100_000, configuration: lower)
        expectInvalid(s.decide(cashout("C1", 4_999), actor: People.agent), [("amountCents", "BELOW_MINIMUM_CASHOUT")])
        expectEvents(s.when(cashout("C1", 5_000), actor: People.agent), cashoutAccepted("C1", 5_000))

        var higher = DomainConfiguration()
        higher.minimumCashoutCents = 50_000
        var t = earning(100_000, configuration: higher)
        expectInvalid(t.decide(cashout("C1", 10_000), actor: People.agent), [("amountCents", "BELOW_MINIMUM_CASHOUT")])
        expectInvalid(t.decide(cashout("C1", 49_999), actor: People.agent), [("amountCents", "BELOW_MINIMUM_CASHOUT")])
        expectEvents(t.when(cashout("C1", 50_000), actor: People.agent), cashoutAccepted("C1", 50_000))

        // No minimum still means a positive amount.
        var none = DomainConfiguration()
        none.minimumCashoutCents = 0
        var u = earning(100, configuration: none)
        expectInvalid(u.decide(cashout("C1", 0), actor: People.agent), [("amountCents", "BELOW_MINIMUM_CASHOUT")])
        expectEvents(u.when(cashout("C1", 1), actor: People.agent), cashoutAccepted("C1", 1))
    }

    @Test func belowTheMinimumComesBeforeAnyStateCheck() {
        // INVALID is about the payload alone: no earnings, another agent's id, an admin.
        let s = DomainScenario.lending()
        expectInvalid(s.decide(cashout("C1", 500), actor: People.agent), [("amountCents", "BELOW_MINIMUM_CASHOUT")])
        expectInvalid(
            s.decide(cashout("C1", 500, agent: People.otherAgent), actor: People.admin),
            [("amountCents", "BELOW_MINIMUM_CASHOUT")])
    }

    @Test func everyProblemOfACashoutIsListed() {
        let s = earning(100_000)
        expectInvalid(
            s.decide(
                type: "RequestCashout", payload: ["cashoutId": "C 1", "amountCents": "100.00", "bank": "SBI"], actor: People.agent),
            [("cashoutId", "INVALID_IDENTIFIER"), ("agentId", "REQUIRED"), ("amountCents", "WRONG_TYPE"), ("bank", "UNKNOWN_FIELD")])
        expectInvalid(
            s.decide(
                cashout("C1", 1_000_000_000_000_001), actor: People.agent), [("amountCents", "OUT_OF_RANGE")])
    }

    @Test func noEarningsNoCashout() {
        let s = DomainScenario.lending()
        expectRefusal(s.decide(cashout("C1", 10_000), actor: People.agent), .rejected, "INSUFFICIENT_EARNINGS")
    }

    /// Earned 30,000 + 50,000 = 80,000; C1 approved 20,000, C2 pending 15,000, C3 rejected
    /// 10,000 (reserved, then released): collectible 80,000 − 20,000 − 15,000 = 45,000.
    @Test func collectibleIsEarnedLessApprovedLessPending() {
        var s = DomainScenario.lending()
        s.given(commission(30_000, payment: "P1"))
        s.given(requested("C1", 20_000))
        s.given(
            .cashoutApproved(CashoutApproved(cashoutId: "C1", agentId: People.agent, amountCents: 20_000, approvedBy: People.admin)))
        s.given(commission(50_000, payment: "P2"))
        s.given(requested("C2", 15_000))
        s.given(requested("C3", 10_000))
        s.given(
            .cashoutRejected(
                CashoutRejected(
                    cashoutId: "C3", agentId: People.agent, amountCents: 10_000, rejectedBy: People.admin, reason: "bank details")),
            .earningsReleased(EarningsReleased(agentId: People.agent, cashoutId: "C3", amountCents: 10_000)))
        // Another agent's ledger does not count.
        s.given(commission(90_000, agent: People.otherAgent, payment: "P3"))

        expectRefusal(s.decide(cashout("C4", 45_001), actor: People.agent), .rejected, "INSUFFICIENT_EARNINGS")
        let decision = s.when(cashout("C4", 45_000), actor: People.agent)
        expectEvents(decision, cashoutAccepted("C4", 45_000))
        #expect(ledgerVersions(decision) == [.user(People.agent): 2, .cashout("C4"): 0, .agent(People.agent): 6])
        expectRefusal(s.decide(cashout("C5", 10_000), actor: People.agent), .rejected, "INSUFFICIENT_EARNINGS")
    }

    @Test func aCashoutIdIsUsedOnce() {
        var s = earning(100_000)
        s.when(cashout("C1", 20_000), actor: People.agent)
        expectRefusal(s.decide(cashout("C1", 20_000), actor: People.agent), .rejected, "CASHOUT_ALREADY_EXISTS")
        // Even by another agent, with plenty to collect.
        s.given(commission(100_000, agent: People.otherAgent, payment: "P9"))
        expectRefusal(
            s.decide(cashout("C1", 20_000, agent: People.otherAgent), actor: People.otherAgent), .rejected,
            "CASHOUT_ALREADY_EXISTS")
    }

    // MARK: - ApproveCashout / RejectCashout

    @Test func anAdminApprovesAPendingCashout() {
        var s = earning(50_000)
        s.when(cashout("C1", 30_000), actor: People.agent)
        let decision = s.when(.approveCashout(ApproveCashout(cashoutId: "C1")), actor: People.admin)
        expectEvents(
            decision,
            [.cashoutApproved(CashoutApproved(cashoutId: "C1", agentId: People.agent, amountCents: 30_000, approvedBy: People.admin))])
        #expect(ledgerVersions(decision) == [.user(People.admin): 1, .cashout("C1"): 1])
        // Cashed out is gone for good.
        expectRefusal(s.decide(cashout("C2", 20_001), actor: People.agent), .rejected, "INSUFFICIENT_EARNINGS")
        expectEvents(s.when(cashout("C2", 20_000), actor: People.agent), cashoutAccepted("C2", 20_000))
    }

    @Test func aRejectedCashoutIsCollectibleAgain() {
        var s = earning(30_000)
        s.when(cashout("C1", 30_000), actor: People.agent)
        expectRefusal(s.decide(cashout("C2", 30_000), actor: People.agent), .rejected, "INSUFFICIENT_EARNINGS")
        let decision = s.when(.rejectCashout(RejectCashout(cashoutId: "C1", reason: "wrong bank account")), actor: People.admin)
        expectEvents(
            decision,
            [
                .cashoutRejected(
                    CashoutRejected(
                        cashoutId: "C1", agentId: People.agent, amountCents: 30_000, rejectedBy: People.admin,
                        reason: "wrong bank account")),
                .earningsReleased(EarningsReleased(agentId: People.agent, cashoutId: "C1", amountCents: 30_000)),
            ])
        // The ledger is written, not read: any version of it will do.
        #expect(ledgerVersions(decision) == [.user(People.admin): 1, .cashout("C1"): 1])
        expectEvents(s.when(cashout("C2", 30_000), actor: People.agent), cashoutAccepted("C2", 30_000))
    }

    @Test(arguments: [People.agent, People.otherAgent, People.pendingAgent])
    func onlyAnAdminDecidesCashouts(actor: String) {
        var s = earning(50_000)
        s.when(cashout("C1", 30_000), actor: People.agent)
        expectRefusal(s.decide(.approveCashout(ApproveCashout(cashoutId: "C1")), actor: actor), .forbidden, "ROLE_NOT_ALLOWED")
        expectRefusal(
            s.decide(.rejectCashout(RejectCashout(cashoutId: "C1", reason: "no")), actor: actor), .forbidden, "ROLE_NOT_ALLOWED")
        expectRefusal(s.decide(.approveCashout(ApproveCashout(cashoutId: "C1")), actor: "ghost"), .forbidden, "UNKNOWN_ACTOR")
    }

    @Test func decidingAnUnknownCashoutIsNotFound() {
        let s = earning(50_000)
        expectRefusal(
            s.decide(.approveCashout(ApproveCashout(cashoutId: "C404")), actor: People.admin), .notFound, "CASHOUT_NOT_FOUND")
        expectRefusal(
            s.decide(.rejectCashout(RejectCashout(cashoutId: "C404", reason: "no")), actor: People.admin), .notFound,
            "CASHOUT_NOT_FOUND")
    }

    @Test func anApprovedCashoutIsNotDecidedAgain() {
        var s = earning(50_000)
        s.when(cashout("C1", 30_000), actor: People.agent)
        s.when(.approveCashout(ApproveCashout(cashoutId: "C1")), actor: People.admin)
        expectRefusal(
            s.decide(.approveCashout(ApproveCashout(cashoutId: "C1")), actor: People.admin), .rejected, "CASHOUT_NOT_PENDING")
        expectRefusal(
            s.decide(.rejectCashout(RejectCashout(cashoutId: "C1", reason: "late")), actor: People.admin), .rejected,
            "CASHOUT_NOT_PENDING")
    }

    @Test func aRejectedCashoutIsNotDecidedAgain() {
        var s = earning(50_000)
        s.when(cashout("C1", 30_000), actor: People.agent)
        s.when(.rejectCashout(RejectCashout(cashoutId: "C1", reason: "no")), actor: People.admin)
        expectRefusal(
            s.decide(.rejectCashout(RejectCashout(cashoutId: "C1", reason: "again")), actor: People.admin), .rejected,
            "CASHOUT_NOT_PENDING")
        expectRefusal(
            s.decide(.approveCashout(ApproveCashout(cashoutId: "C1")), actor: People.admin), .rejected, "CASHOUT_NOT_PENDING")
    }

    @Test func aCashoutRejectionNeedsAReason() {
        var s = earning(50_000)
        s.when(cashout("C1", 30_000), actor: People.agent)
        expectInvalid(s.decide(.rejectCashout(RejectCashout(cashoutId: "C1", reason: " \n ")), actor: People.admin), [("reason", "EMPTY")])
        expectInvalid(
            s.decide(type: "RejectCashout", payload: ["cashoutId": "C1"], actor: People.admin), [("reason", "REQUIRED")])
        expectInvalid(
            s.decide(type: "ApproveCashout", payload: ["cashoutId": "C1", "amountCents": 30_000], actor: People.admin),
            [("amountCents", "UNKNOWN_FIELD")])
    }
}
