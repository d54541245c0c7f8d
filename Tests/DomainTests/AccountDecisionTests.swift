import Domain
import Events
import StrataCore
import StrataTesting
import Testing

// Given/when/then for borrower accounts (DOMAIN.md "Borrower accounts"): OpenAccount,
// UpdateAccount, ChangeAccountStatus, and what an account's status means for a loan.

private let rejectedAgent = "agent-r"

/// `lending()` plus an agent the admin turned away.
private func accountScenario() -> DomainScenario {
    var s = DomainScenario.lending()
    s.given(
        .userRegistered(
            UserRegistered(userId: rejectedAgent, username: "rejected", email: "rejected@example.com", role: .agent, status: .pending)),
        .agentRejected(AgentRejected(agentId: rejectedAgent, rejectedBy: People.admin, reason: "no licence")))
    return s
}

private func opening(_ accountId: String, for agent: String) -> Command {
    .openAccount(
        OpenAccount(
            accountId: accountId, name: "Suresh Gowda", phone: "+919845098450", address: "21 Market Road, Hassan",
            assignedAgentId: agent))
}

private func opened(_ accountId: String, for agent: String, by actor: String) -> StrataEvent {
    .accountOpened(
        AccountOpened(
            accountId: accountId, name: "Suresh Gowda", phone: "+919845098450", address: "21 Market Road, Hassan",
            assignedAgentId: agent, openedBy: actor, status: .active))
}

private func loanRequest(_ loanId: String) -> Command {
    .requestLoan(
        RequestLoan(
            loanId: loanId, accountId: People.account, principalCents: 500_000, monthlyRateBp: 300, tenureMonths: 2,
            frequency: .monthly))
}

private func loanRequested(_ loanId: String, agent: String, by actor: String, on day: LocalDate) -> StrataEvent {
    .loanRequested(
        LoanRequested(
            loanId: loanId, accountId: People.account, agentId: agent, principalCents: 500_000, monthlyRateBp: 300,
            tenureMonths: 2, frequency: .monthly, interestMethod: .reducing, requestedOn: day, requestedBy: actor))
}

private func statusChange(_ status: AccountStatus, _ reason: String = "field review") -> Command {
    .changeAccountStatus(ChangeAccountStatus(accountId: People.account, status: status, reason: reason))
}

private func versionsOf(_ decision: Decision) -> [StreamRef: Int64]? {
    if case .accepted(let accepted) = decision { return accepted.expectedVersions }
    return nil
}

@Suite("Account decisions")
struct AccountDecisionTests {
    // MARK: - OpenAccount

    @Test func theAssignedAgentOpensAnActiveAccount() {
        var s = accountScenario()
        let decision = s.when(
            .openAccount(
                OpenAccount(
                    accountId: "acct-2", name: "Suresh Gowda", phone: "+91 98450 98450", email: "suresh@example.com",
                    alternatePhone: "0821-2345678", address: "21 Market Road\nHassan", assignedAgentId: People.agent)),
            actor: People.agent)
        expectEvents(
            decision,
            [
                .accountOpened(
                    AccountOpened(
                        accountId: "acct-2", name: "Suresh Gowda", phone: "+91 98450 98450", email: "suresh@example.com",
                        alternatePhone: "0821-2345678", address: "21 Market Road\nHassan", assignedAgentId: People.agent,
                        openedBy: People.agent, status: .active))
            ])
        // The actor is the assigned agent: one user stream, read once.
        #expect(versionsOf(decision) == [.user(People.agent): 2, .account("acct-2"): 0])
    }

    @Test func anAdminOpensAnAccountForAnApprovedAgent() {
        var s = accountScenario()
        let decision = s.when(opening("acct-2", for: People.otherAgent), actor: People.admin)
        expectEvents(decision, [opened("acct-2", for: People.otherAgent, by: People.admin)])
        #expect(
            versionsOf(decision) == [.user(People.admin): 1, .account("acct-2"): 0, .user(People.otherAgent): 2])
        // The agent it was opened for may now borrow on it.
        expectEvents(
            s.when(
                .requestLoan(
                    RequestLoan(
                        loanId: "L2", accountId: "acct-2", principalCents: 100_000, monthlyRateBp: 500, tenureMonths: 12,
                        frequency: .weekly, interestMethod: .flat)),
                actor: People.otherAgent),
            [
                .loanRequested(
                    LoanRequested(
                        loanId: "L2", accountId: "acct-2", agentId: People.otherAgent, principalCents: 100_000,
                        monthlyRateBp: 500, tenureMonths: 12, frequency: .weekly, interestMethod: .flat,
                        requestedOn: s.today, requestedBy: People.otherAgent))
            ])
    }

    @Test func anAgentOpensAccountsOnlyForThemselves() {
        let s = accountScenario()
        expectRefusal(s.decide(opening("acct-2", for: People.otherAgent), actor: People.agent), .forbidden, "NOT_ASSIGNED_AGENT")
        expectRefusal(s.decide(opening("acct-2", for: People.pendingAgent), actor: People.agent), .forbidden, "NOT_ASSIGNED_AGENT")
        expectRefusal(s.decide(opening("acct-2", for: People.admin), actor: People.agent), .forbidden, "NOT_ASSIGNED_AGENT")
    }

    @Test func anAccountForAnUnknownAgentIsNotFound() {
        let s = accountScenario()
        expectRefusal(s.decide(opening("acct-2", for: "agent-404"), actor: People.admin), .notFound, "AGENT_NOT_FOUND")
        // NOT_FOUND comes before the ownership check.
        expectRefusal(s.decide(opening("acct-2", for: "agent-404"), actor: People.agent), .notFound, "AGENT_NOT_FOUND")
    }

    @Test func anAccountIsAssignedToAnAgentNotAnAdmin() {
        let s = accountScenario()
        expectRefusal(s.decide(opening("acct-2", for: People.admin), actor: People.admin), .rejected, "NOT_AN_AGENT")
    }

    @Test(arguments: [People.pendingAgent, rejectedAgent])
    func anAdminMayNotAssignAnUnapprovedAgent(agent: String) {
        let s = accountScenario()
        expectRefusal(s.decide(opening("acct-2", for: agent), actor: People.admin), .rejected, "AGENT_NOT_APPROVED")
    }

    @Test(arguments: [People.pendingAgent, rejectedAgent])
    func anUnapprovedAgentMayNotOpenAccounts(agent: String) {
        let s = accountScenario()
        expectRefusal(s.decide(opening("acct-2", for: agent), actor: agent), .forbidden, "ACTOR_NOT_APPROVED")
    }

    @Test func anUnknownActorMayNotOpenAccounts() {
        let s = accountScenario()
        expectRefusal(s.decide(opening("acct-2", for: People.agent), actor: "ghost"), .forbidden, "UNKNOWN_ACTOR")
    }

    @Test func anAccountIdIsOpenedOnce() {
        let s = accountScenario()
        expectRefusal(s.decide(opening(People.account, for: People.agent), actor: People.agent), .rejected, "ACCOUNT_ALREADY_EXISTS")
        expectRefusal(
            s.decide(opening(People.account, for: People.otherAgent), actor: People.admin), .rejected, "ACCOUNT_ALREADY_EXISTS")
    }

    @Test func everyProblemOfAnOpeningIsListed() {
        let s = accountScenario()
        expectInvalid(
            s.decide(
                .openAccount(
                    OpenAccount(
                        accountId: "acct 2", name: "  ", phone: "12", email: "suresh@", alternatePhone: "call me",
                        address: "", assignedAgentId: "agent/7")),
                actor: People.agent),
            [
                ("accountId", "INVALID_IDENTIFIER"), ("name", "EMPTY"), ("phone", "INVALID_FORMAT"), ("email", "INVALID_FORMAT"),
                ("alternatePhone", "INVALID_FORMAT"), ("address", "EMPTY"), ("assignedAgentId", "INVALID_IDENTIFIER"),
            ])
        expectInvalid(
            s.decide(type: "OpenAccount", payload: ["email": .null, "branch": "Hassan"], actor: People.agent),
            [
                ("accountId", "REQUIRED"), ("name", "REQUIRED"), ("phone", "REQUIRED"), ("address", "REQUIRED"),
                ("assignedAgentId", "REQUIRED"), ("branch", "UNKNOWN_FIELD"),
            ])
        expectInvalid(
            s.decide(
                .openAccount(
                    OpenAccount(
                        accountId: "acct-2", name: "Suresh\nGowda", phone: "+919845098450",
                        address: PersonalData(String(repeating: "a", count: 501)), assignedAgentId: People.agent)),
                actor: People.agent),
            [("name", "CONTROL_CHARACTER"), ("address", "TOO_LONG")])
    }

    // MARK: - UpdateAccount

    @Test func theAssignedAgentUpdatesDetails() {
        var s = accountScenario()
        let decision = s.when(
            .updateAccount(UpdateAccount(accountId: People.account, phone: "+919900099000", email: "lakshmi@example.com")),
            actor: People.agent)
        expectEvents(
            decision,
            [
                .accountUpdated(
                    AccountUpdated(
                        accountId: People.account, phone: "+919900099000", email: "lakshmi@example.com", updatedBy: People.agent))
            ])
        #expect(versionsOf(decision) == [.user(People.agent): 2, .account(People.account): 1])
    }

    @Test func anAdminUpdatesDetails() {
        var s = accountScenario()
        expectEvents(
            s.when(
                .updateAccount(
                    UpdateAccount(
                        accountId: People.account, name: "Lakshmi D.", alternatePhone: "0821 234 5678",
                        address: "9 New Street\nMysuru")),
                actor: People.admin),
            [
                .accountUpdated(
                    AccountUpdated(
                        accountId: People.account, name: "Lakshmi D.", alternatePhone: "0821 234 5678",
                        address: "9 New Street\nMysuru", updatedBy: People.admin))
            ])
    }

    @Test func anAdminMovesAnAccountToAnotherAgent() {
        var s = accountScenario()
        let decision = s.when(
            .updateAccount(UpdateAccount(accountId: People.account, assignedAgentId: People.otherAgent)), actor: People.admin)
        expectEvents(
            decision,
            [.accountUpdated(AccountUpdated(accountId: People.account, assignedAgentId: People.otherAgent, updatedBy: People.admin))])
        #expect(
            versionsOf(decision) == [.user(People.admin): 1, .account(People.account): 1, .user(People.otherAgent): 2])
        // From now on the account is the other agent's.
        expectRefusal(
            s.decide(.updateAccount(UpdateAccount(accountId: People.account, name: "L")), actor: People.agent), .forbidden,
            "NOT_ASSIGNED_AGENT")
        expectRefusal(s.decide(loanRequest("L1"), actor: People.agent), .forbidden, "NOT_ASSIGNED_AGENT")
        expectEvents(
            s.when(loanRequest("L1"), actor: People.otherAgent),
            [loanRequested("L1", agent: People.otherAgent, by: People.otherAgent, on: s.today)])
    }

    @Test func onlyAnAdminMovesAnAccount() {
        let s = accountScenario()
        expectRefusal(
            s.decide(
                .updateAccount(UpdateAccount(accountId: People.account, assignedAgentId: People.otherAgent)), actor: People.agent),
            .forbidden, "REASSIGNMENT_ADMIN_ONLY")
        expectRefusal(
            s.decide(
                .updateAccount(UpdateAccount(accountId: People.account, name: "Lakshmi", assignedAgentId: People.pendingAgent)),
                actor: People.agent),
            .forbidden, "REASSIGNMENT_ADMIN_ONLY")
    }

    @Test func anAgentNamingThemselvesMovesNothing() {
        var s = accountScenario()
        expectEvents(
            s.when(
                .updateAccount(UpdateAccount(accountId: People.account, name: "Lakshmi", assignedAgentId: People.agent)),
                actor: People.agent),
            [
                .accountUpdated(
                    AccountUpdated(accountId: People.account, name: "Lakshmi", assignedAgentId: People.agent, updatedBy: People.agent))
            ])
    }

    @Test func anotherAgentMayNotUpdateTheAccount() {
        let s = accountScenario()
        expectRefusal(
            s.decide(.updateAccount(UpdateAccount(accountId: People.account, name: "L")), actor: People.otherAgent), .forbidden,
            "NOT_ASSIGNED_AGENT")
    }

    @Test(arguments: [People.pendingAgent, rejectedAgent])
    func anUnapprovedAgentMayNotUpdateAccounts(agent: String) {
        let s = accountScenario()
        expectRefusal(
            s.decide(.updateAccount(UpdateAccount(accountId: People.account, name: "L")), actor: agent), .forbidden,
            "ACTOR_NOT_APPROVED")
    }

    @Test func anUpdateChangesSomething() {
        let s = accountScenario()
        expectInvalid(
            s.decide(.updateAccount(UpdateAccount(accountId: People.account)), actor: People.agent), [("payload", "NO_CHANGES")])
        expectInvalid(
            s.decide(
                type: "UpdateAccount",
                payload: ["accountId": .string(People.account), "name": .null, "assignedAgentId": .null], actor: People.agent),
            [("payload", "NO_CHANGES")])
    }

    @Test func everyProblemOfAnUpdateIsListed() {
        let s = accountScenario()
        expectInvalid(
            s.decide(
                .updateAccount(
                    UpdateAccount(
                        accountId: People.account, name: "", phone: "x", email: "@", alternatePhone: "1", address: " ",
                        assignedAgentId: "agent 9")),
                actor: People.agent),
            [
                ("name", "EMPTY"), ("phone", "INVALID_FORMAT"), ("email", "INVALID_FORMAT"), ("alternatePhone", "INVALID_FORMAT"),
                ("address", "EMPTY"), ("assignedAgentId", "INVALID_IDENTIFIER"),
            ])
    }

    @Test func updatingAnUnknownAccountIsNotFound() {
        let s = accountScenario()
        expectRefusal(
            s.decide(.updateAccount(UpdateAccount(accountId: "acct-404", name: "N")), actor: People.admin), .notFound,
            "ACCOUNT_NOT_FOUND")
        expectRefusal(
            s.decide(.updateAccount(UpdateAccount(accountId: "acct-404", name: "N")), actor: People.agent), .notFound,
            "ACCOUNT_NOT_FOUND")
    }

    @Test func anAccountMovesOnlyToAnApprovedAgent() {
        let s = accountScenario()
        func move(to agent: String) -> Decision {
            s.decide(.updateAccount(UpdateAccount(accountId: People.account, assignedAgentId: agent)), actor: People.admin)
        }
        expectRefusal(move(to: "agent-404"), .notFound, "AGENT_NOT_FOUND")
        expectRefusal(move(to: People.admin), .rejected, "NOT_AN_AGENT")
        expectRefusal(move(to: People.pendingAgent), .rejected, "AGENT_NOT_APPROVED")
        expectRefusal(move(to: rejectedAgent), .rejected, "AGENT_NOT_APPROVED")
    }

    @Test func anErasedAccountIsNotWrittenAgain() {
        var s = accountScenario()
        s.given(
            .personalDataErased(
                PersonalDataErased(subjectId: People.account, kind: .account, erasedBy: People.admin, reason: "borrower asked")))
        let update = Command.updateAccount(UpdateAccount(accountId: People.account, phone: "+919845000000"))
        expectRefusal(s.decide(update, actor: People.agent), .rejected, "SUBJECT_ERASED")
        expectRefusal(s.decide(update, actor: People.admin), .rejected, "SUBJECT_ERASED")
    }

    // MARK: - ChangeAccountStatus

    @Test func anAdminSuspendsAndReactivatesAnAccount() {
        var s = accountScenario()
        let suspend = s.when(statusChange(.suspended, "fraud check"), actor: People.admin)
        expectEvents(
            suspend,
            [
                .accountStatusChanged(
                    AccountStatusChanged(accountId: People.account, status: .suspended, reason: "fraud check", changedBy: People.admin))
            ])
        #expect(versionsOf(suspend) == [.user(People.admin): 1, .account(People.account): 1])
        expectEvents(
            s.when(statusChange(.active, "cleared"), actor: People.admin),
            [
                .accountStatusChanged(
                    AccountStatusChanged(accountId: People.account, status: .active, reason: "cleared", changedBy: People.admin))
            ])
    }

    @Test(arguments: [People.agent, People.otherAgent, People.pendingAgent])
    func onlyAnAdminChangesAnAccountsStatus(actor: String) {
        let s = accountScenario()
        expectRefusal(s.decide(statusChange(.inactive), actor: actor), .forbidden, "ROLE_NOT_ALLOWED")
    }

    @Test func anUnknownActorMayNotChangeStatus() {
        let s = accountScenario()
        expectRefusal(s.decide(statusChange(.inactive), actor: "ghost"), .forbidden, "UNKNOWN_ACTOR")
    }

    @Test func aStatusChangeChangesTheStatus() {
        var s = accountScenario()
        expectRefusal(s.decide(statusChange(.active), actor: People.admin), .rejected, "STATUS_UNCHANGED")
        s.when(statusChange(.inactive), actor: People.admin)
        expectRefusal(s.decide(statusChange(.inactive), actor: People.admin), .rejected, "STATUS_UNCHANGED")
    }

    @Test func changingAnUnknownAccountIsNotFound() {
        let s = accountScenario()
        expectRefusal(
            s.decide(
                .changeAccountStatus(ChangeAccountStatus(accountId: "acct-404", status: .inactive, reason: "x")), actor: People.admin),
            .notFound, "ACCOUNT_NOT_FOUND")
    }

    @Test func aStatusChangeNeedsAKnownStatusAndAReason() {
        let s = accountScenario()
        expectInvalid(s.decide(statusChange(.suspended, "  "), actor: People.admin), [("reason", "EMPTY")])
        expectInvalid(
            s.decide(
                type: "ChangeAccountStatus",
                payload: ["accountId": .string(People.account), "status": "CLOSED", "reason": "done"], actor: People.admin),
            [("status", "UNKNOWN_VALUE")])
        expectInvalid(
            s.decide(type: "ChangeAccountStatus", payload: ["accountId": .string(People.account)], actor: People.admin),
            [("status", "REQUIRED"), ("reason", "REQUIRED")])
    }

    @Test(arguments: [AccountStatus.inactive, .suspended])
    func anAccountNotActiveTakesNoLoanRequests(status: AccountStatus) {
        var s = accountScenario()
        s.when(statusChange(status), actor: People.admin)
        expectRefusal(s.decide(loanRequest("L1"), actor: People.agent), .rejected, "ACCOUNT_NOT_ACTIVE")
        expectRefusal(s.decide(loanRequest("L1"), actor: People.admin), .rejected, "ACCOUNT_NOT_ACTIVE")
        // Active again, it borrows again.
        s.when(statusChange(.active, "back in good standing"), actor: People.admin)
        expectEvents(
            s.when(loanRequest("L1"), actor: People.admin), [loanRequested("L1", agent: People.agent, by: People.admin, on: s.today)])
    }
}
