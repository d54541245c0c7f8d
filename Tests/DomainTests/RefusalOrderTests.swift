import Domain
import Events
import StrataCore
import StrataTesting
import Testing

// CONTRACT.md "Commands": each request gets exactly one answer, the earliest of INVALID
// (the payload alone), FORBIDDEN for what the actor's role or status can never do,
// NOT_FOUND, FORBIDDEN for ownership, CONFLICT (expectedVersion), REJECTED. Also: INVALID
// lists every problem, `expectedVersion` is about the command's own stream, and an
// accepted decision expects every stream it read at the version it read.

/// Something of everything: a pending loan L1, an active loan L2 with a payment, a global
/// commission rate, earnings and a pending cash-out C1, and invoice I1 for `party-1`.
private func busyScenario() -> DomainScenario {
    var s = DomainScenario.lending()
    s.when(.setCommissionRate(SetCommissionRate(rateBp: 1_200)), actor: People.admin)
    s.when(orderLoan("L1"), actor: People.agent)
    s.when(orderLoan("L2"), actor: People.agent)
    s.when(.approveLoan(ApproveLoan(loanId: "L2")), actor: People.admin)
    s.when(
        .receivePayment(ReceivePayment(paymentId: "P1", loanId: "L2", amountCents: 10_000, paidOn: s.today)), actor: People.agent)
    s.given(
        .commissionEarned(
            CommissionEarned(
                agentId: People.agent, loanId: "L0", paymentId: "P0", interestCents: 500_000, rateBp: 1_000,
                commissionCents: 50_000)))
    s.when(.requestCashout(RequestCashout(cashoutId: "C1", agentId: People.agent, amountCents: 20_000)), actor: People.agent)
    s.when(orderInvoice("I1"), actor: People.admin)
    return s
}

private func orderLoan(_ loanId: String, account: String = People.account) -> Command {
    .requestLoan(
        RequestLoan(
            loanId: loanId, accountId: account, principalCents: 1_000_000, monthlyRateBp: 400, tenureMonths: 3,
            frequency: .monthly))
}

private func orderInvoice(_ invoiceId: String) -> Command {
    .createInvoice(
        CreateInvoice(
            invoiceId: invoiceId, customer: InvoiceCustomer(partyId: "party-1", name: "Acme Traders"),
            issueDate: date("2026-11-20"), dueDate: date("2026-12-20"),
            lines: [InvoiceLineRequest(description: "Rice, 25 kg", quantityMilli: 2_000, unitPriceCents: 150_000, taxRateBp: 500)]))
}

/// A command `busyScenario()` accepts, and the stream its `expectedVersion` is about.
private struct AcceptedCommand: Sendable, CustomTestStringConvertible {
    var command: Command
    var actor: String
    var ownStream: StreamRef

    var testDescription: String { "\(command.type) by \(actor) on \(ownStream)" }
}

private let acceptedCommands: [AcceptedCommand] = [
    AcceptedCommand(
        command: .registerUser(RegisterUser(userId: "agent-new", username: "kavya", email: "kavya@example.com", role: .agent)),
        actor: "agent-new", ownStream: .user("agent-new")),
    AcceptedCommand(
        command: .registerUser(RegisterUser(userId: "admin-2", username: "asha", email: "asha@example.com", role: .admin)),
        actor: People.admin, ownStream: .user("admin-2")),
    AcceptedCommand(
        command: .approveAgent(ApproveAgent(agentId: People.pendingAgent)), actor: People.admin,
        ownStream: .user(People.pendingAgent)),
    AcceptedCommand(
        command: .rejectAgent(RejectAgent(agentId: People.pendingAgent, reason: "no licence")), actor: People.admin,
        ownStream: .user(People.pendingAgent)),
    AcceptedCommand(
        command: .updateProfile(UpdateProfile(userId: People.agent, fullName: "Ravi Kumar")), actor: People.agent,
        ownStream: .user(People.agent)),
    AcceptedCommand(
        command: .updateProfile(UpdateProfile(userId: People.pendingAgent, fullName: "P. Rao")), actor: People.admin,
        ownStream: .user(People.pendingAgent)),
    AcceptedCommand(
        command: .openAccount(
            OpenAccount(accountId: "acct-2", name: "Suresh", phone: "+919845098450", address: "Hassan", assignedAgentId: People.agent)),
        actor: People.agent, ownStream: .account("acct-2")),
    AcceptedCommand(
        command: .openAccount(
            OpenAccount(
                accountId: "acct-3", name: "Girija", phone: "+919845098451", address: "Hassan", assignedAgentId: People.otherAgent)),
        actor: People.admin, ownStream: .account("acct-3")),
    AcceptedCommand(
        command: .updateAccount(UpdateAccount(accountId: People.account, name: "Lakshmi D.")), actor: People.agent,
        ownStream: .account(People.account)),
    AcceptedCommand(
        command: .updateAccount(UpdateAccount(accountId: People.account, assignedAgentId: People.otherAgent)),
        actor: People.admin, ownStream: .account(People.account)),
    AcceptedCommand(
        command: .changeAccountStatus(ChangeAccountStatus(accountId: People.account, status: .suspended, reason: "review")),
        actor: People.admin, ownStream: .account(People.account)),
    AcceptedCommand(command: orderLoan("L9"), actor: People.agent, ownStream: .loan("L9")),
    AcceptedCommand(command: .approveLoan(ApproveLoan(loanId: "L1")), actor: People.admin, ownStream: .loan("L1")),
    AcceptedCommand(
        command: .rejectLoan(RejectLoan(loanId: "L1", reason: "too much debt")), actor: People.admin, ownStream: .loan("L1")),
    AcceptedCommand(
        command: .receivePayment(ReceivePayment(paymentId: "P2", loanId: "L2", amountCents: 10_000, paidOn: date("2026-11-20"))),
        actor: People.agent, ownStream: .loan("L2")),
    AcceptedCommand(
        command: .setCommissionRate(SetCommissionRate(rateBp: 1_500)), actor: People.admin, ownStream: .settings),
    AcceptedCommand(
        command: .setCommissionRate(SetCommissionRate(agentId: People.otherAgent, rateBp: 900)), actor: People.admin,
        ownStream: .settings),
    AcceptedCommand(
        command: .requestCashout(RequestCashout(cashoutId: "C9", agentId: People.agent, amountCents: 10_000)),
        actor: People.agent, ownStream: .cashout("C9")),
    AcceptedCommand(command: .approveCashout(ApproveCashout(cashoutId: "C1")), actor: People.admin, ownStream: .cashout("C1")),
    AcceptedCommand(
        command: .rejectCashout(RejectCashout(cashoutId: "C1", reason: "bank details")), actor: People.admin,
        ownStream: .cashout("C1")),
    AcceptedCommand(command: orderInvoice("I9"), actor: People.agent, ownStream: .invoice("I9")),
    AcceptedCommand(
        command: .recordInvoicePayment(
            RecordInvoicePayment(paymentId: "IP1", invoiceId: "I1", amountCents: 1_000, paidOn: date("2026-11-20"), method: .bank)),
        actor: People.admin, ownStream: .invoice("I1")),
    AcceptedCommand(
        command: .cancelInvoice(CancelInvoice(invoiceId: "I1", reason: "issued twice")), actor: People.admin,
        ownStream: .invoice("I1")),
    // EraseSubject has no own stream until the subject is known: the subject's stream.
    AcceptedCommand(
        command: .eraseSubject(EraseSubject(subjectId: People.account, reason: "asked")), actor: People.admin,
        ownStream: .account(People.account)),
    AcceptedCommand(
        command: .eraseSubject(EraseSubject(subjectId: People.agent, kind: .user, reason: "asked")), actor: People.admin,
        ownStream: .user(People.agent)),
    AcceptedCommand(
        command: .eraseSubject(EraseSubject(subjectId: "party-1", reason: "asked")), actor: People.admin,
        ownStream: .party("party-1")),
]

private func versionsRead(_ decision: Decision) -> [StreamRef: Int64]? {
    if case .accepted(let accepted) = decision { return accepted.expectedVersions }
    return nil
}

private func accountUpdate(_ accountId: String = People.account, phone: PersonalData = "+919845000000") -> Command {
    .updateAccount(UpdateAccount(accountId: accountId, phone: phone))
}

@Suite("Refusal order")
struct RefusalOrderTests {
    // MARK: - expectedVersion and the versions a decision expects

    @Test(arguments: acceptedCommands)
    fileprivate func expectedVersionIsAboutTheOwnStream(_ c: AcceptedCommand) {
        let s = busyScenario()
        if case .eraseSubject = c.command {
            #expect(c.command.ownStream == nil)
        } else {
            #expect(c.command.ownStream == c.ownStream)
        }
        let version = s.version(of: c.ownStream)
        let unversioned = s.decide(c.command, actor: c.actor)
        guard case .accepted = unversioned else {
            Issue.record("\(c.testDescription) should be accepted: \(unversioned)")
            return
        }
        #expect(s.decide(c.command, actor: c.actor, expectedVersion: version) == unversioned)
        expectRefusal(
            s.decide(c.command, actor: c.actor, expectedVersion: version + 1), .conflict, "WRONG_EXPECTED_VERSION")
        if version > 0 {
            expectRefusal(
                s.decide(c.command, actor: c.actor, expectedVersion: version - 1), .conflict, "WRONG_EXPECTED_VERSION")
            expectRefusal(s.decide(c.command, actor: c.actor, expectedVersion: 0), .conflict, "WRONG_EXPECTED_VERSION")
        }
        // Another stream's version is not this command's.
        expectRefusal(s.decide(c.command, actor: c.actor, expectedVersion: 42), .conflict, "WRONG_EXPECTED_VERSION")
    }

    @Test(arguments: acceptedCommands)
    fileprivate func anAcceptedDecisionExpectsEveryStreamItReadAtTheVersionItRead(_ c: AcceptedCommand) {
        let s = busyScenario()
        let reads = c.command.reads(actor: c.actor, configuration: s.context.configuration)
        #expect(reads.first == .user(c.actor))
        #expect(reads.contains(c.ownStream))
        let expected = Dictionary(uniqueKeysWithValues: reads.map { ($0, s.version(of: $0)) })
        #expect(versionsRead(s.decide(c.command, actor: c.actor)) == expected)
    }

    @Test func aCommandReadsEachStreamOnceInTheOrderItNamesThem() {
        let configuration = DomainConfiguration()
        // The actor is also the account's agent: one user stream, first.
        let update = Command.updateAccount(UpdateAccount(accountId: "A1", assignedAgentId: "agent-1"))
        #expect(update.reads(actor: "agent-1", configuration: configuration) == [.user("agent-1"), .account("A1")])
        #expect(
            update.reads(actor: "admin-1", configuration: configuration)
                == [.user("admin-1"), .account("A1"), .user("agent-1")])
        // An agent approving itself names its own stream twice.
        let approve = Command.approveAgent(ApproveAgent(agentId: "agent-1"))
        #expect(approve.reads(actor: "agent-1", configuration: configuration) == [.user("agent-1")])
        // An actor that is no identifier has no stream to read.
        #expect(approve.reads(actor: "no actor", configuration: configuration) == [.user("agent-1")])
        // The same id in three categories is three streams.
        let erase = Command.eraseSubject(EraseSubject(subjectId: "S1", reason: "asked"))
        #expect(
            erase.reads(actor: "S1", configuration: configuration)
                == [.user("S1"), .account("S1"), .party("S1")])
    }

    @Test func expectedVersionsInAFewCases() {
        var s = busyScenario()
        // The loan L2: requested, approved, paid once. Settings: one rate change.
        #expect(
            versionsRead(
                s.decide(
                    .receivePayment(ReceivePayment(paymentId: "P2", loanId: "L2", amountCents: 10_000, paidOn: s.today)),
                    actor: People.admin))
                == [.user(People.admin): 1, .loan("L2"): 3, .settings: 1])
        // The agent's ledger: one commission from P1, the P0 commission, C1's reservation.
        #expect(
            versionsRead(
                s.decide(
                    .requestCashout(RequestCashout(cashoutId: "C9", agentId: People.agent, amountCents: 10_000)),
                    actor: People.agent))
                == [.user(People.agent): 2, .cashout("C9"): 0, .agent(People.agent): 3])
        // The series has given out one number; the party has no stream yet.
        #expect(
            versionsRead(s.decide(orderInvoice("I9"), actor: People.otherAgent))
                == [.user(People.otherAgent): 2, .invoice("I9"): 0, .invoiceSeries("INV"): 1, .party("party-1"): 0])
        #expect(
            versionsRead(s.decide(orderLoan("L9"), actor: People.admin))
                == [.user(People.admin): 1, .account(People.account): 1, .loan("L9"): 0])
        // After a decision is recorded, the next one expects the new versions.
        s.when(.updateAccount(UpdateAccount(accountId: People.account, name: "L.")), actor: People.agent)
        #expect(
            versionsRead(s.decide(orderLoan("L9"), actor: People.agent))
                == [.user(People.agent): 2, .account(People.account): 2, .loan("L9"): 0])
    }

    @Test func anExpectedVersionOnAnAbsentStreamIsZero() {
        let s = busyScenario()
        expectRefusal(
            s.decide(orderLoan("L9"), actor: People.agent, expectedVersion: 1), .conflict, "WRONG_EXPECTED_VERSION")
        expectRefusal(
            s.decide(orderLoan("L9"), actor: People.agent, expectedVersion: -1), .conflict, "WRONG_EXPECTED_VERSION")
        #expect(s.decide(orderLoan("L9"), actor: People.agent, expectedVersion: 0).events?.count == 1)
    }

    // MARK: - The order, one rule at a time

    /// One command, peeled of its problems one at a time, answers each in turn.
    @Test func oneCommandBreakingEveryRuleAnswersInContractOrder() {
        var s = DomainScenario.lending()
        s.given(
            .personalDataErased(
                PersonalDataErased(subjectId: People.account, kind: .account, erasedBy: People.admin, reason: "asked")))
        // acct-1 is at version 2 now.
        expectInvalid(
            s.decide(accountUpdate("acct-404", phone: "x"), actor: People.pendingAgent, expectedVersion: 5),
            [("phone", "INVALID_FORMAT")])
        expectRefusal(
            s.decide(accountUpdate("acct-404"), actor: People.pendingAgent, expectedVersion: 5), .forbidden, "ACTOR_NOT_APPROVED")
        expectRefusal(
            s.decide(accountUpdate("acct-404"), actor: People.otherAgent, expectedVersion: 5), .notFound, "ACCOUNT_NOT_FOUND")
        expectRefusal(
            s.decide(accountUpdate(), actor: People.otherAgent, expectedVersion: 5), .forbidden, "NOT_ASSIGNED_AGENT")
        expectRefusal(s.decide(accountUpdate(), actor: People.agent, expectedVersion: 5), .conflict, "WRONG_EXPECTED_VERSION")
        expectRefusal(s.decide(accountUpdate(), actor: People.agent, expectedVersion: 2), .rejected, "SUBJECT_ERASED")
        expectRefusal(s.decide(accountUpdate(), actor: People.agent), .rejected, "SUBJECT_ERASED")
    }

    @Test func invalidComesFirst() {
        let s = busyScenario()
        // Whoever acts, whatever exists: the payload is judged first.
        expectInvalid(s.decide(.approveAgent(ApproveAgent(agentId: "agent 404")), actor: "ghost"), [("agentId", "INVALID_IDENTIFIER")])
        expectInvalid(
            s.decide(.approveAgent(ApproveAgent(agentId: "agent 404")), actor: People.agent), [("agentId", "INVALID_IDENTIFIER")])
        expectInvalid(
            s.decide(
                .requestCashout(RequestCashout(cashoutId: "C1", agentId: People.otherAgent, amountCents: 1)),
                actor: People.pendingAgent, expectedVersion: 9),
            [("amountCents", "BELOW_MINIMUM_CASHOUT")])
        expectInvalid(
            s.decide(.changeAccountStatus(ChangeAccountStatus(accountId: "acct-404", status: .active, reason: "")), actor: People.agent),
            [("reason", "EMPTY")])
        expectInvalid(
            s.decide(.setCommissionRate(SetCommissionRate(agentId: "agent-404", rateBp: 10_001)), actor: People.agent),
            [("rateBp", "OUT_OF_RANGE")])
        expectInvalid(
            s.decide(.updateProfile(UpdateProfile(userId: "user-404")), actor: People.otherAgent), [("payload", "NO_CHANGES")])
        expectInvalid(
            s.decide(.approveAgent(ApproveAgent(agentId: "agent 404")), actor: People.agent, permittedRoles: [.admin]),
            [("agentId", "INVALID_IDENTIFIER")])
    }

    @Test func forbiddenForRoleOrStatusComesBeforeNotFound() {
        let s = busyScenario()
        expectRefusal(s.decide(.approveAgent(ApproveAgent(agentId: "agent-404")), actor: People.agent), .forbidden, "ROLE_NOT_ALLOWED")
        expectRefusal(
            s.decide(.rejectAgent(RejectAgent(agentId: "agent-404", reason: "no")), actor: People.agent), .forbidden, "ROLE_NOT_ALLOWED")
        expectRefusal(
            s.decide(
                .changeAccountStatus(ChangeAccountStatus(accountId: "acct-404", status: .inactive, reason: "x")), actor: People.agent),
            .forbidden, "ROLE_NOT_ALLOWED")
        expectRefusal(
            s.decide(.setCommissionRate(SetCommissionRate(agentId: "agent-404", rateBp: 100)), actor: People.agent), .forbidden,
            "ROLE_NOT_ALLOWED")
        expectRefusal(s.decide(.approveCashout(ApproveCashout(cashoutId: "C404")), actor: People.agent), .forbidden, "ROLE_NOT_ALLOWED")
        expectRefusal(
            s.decide(.rejectCashout(RejectCashout(cashoutId: "C404", reason: "no")), actor: People.agent), .forbidden,
            "ROLE_NOT_ALLOWED")
        expectRefusal(
            s.decide(.eraseSubject(EraseSubject(subjectId: "nobody", reason: "x")), actor: People.agent), .forbidden,
            "ROLE_NOT_ALLOWED")
        expectRefusal(
            s.decide(.requestCashout(RequestCashout(cashoutId: "C9", agentId: "agent-404", amountCents: 10_000)), actor: People.admin),
            .forbidden, "ROLE_NOT_ALLOWED")
        // Status: a pending agent is refused before anything is looked up.
        expectRefusal(
            s.decide(
                .openAccount(
                    OpenAccount(accountId: "acct-9", name: "N", phone: "+919845098450", address: "A", assignedAgentId: "agent-404")),
                actor: People.pendingAgent),
            .forbidden, "ACTOR_NOT_APPROVED")
        expectRefusal(s.decide(orderLoan("L9", account: "acct-404"), actor: People.pendingAgent), .forbidden, "ACTOR_NOT_APPROVED")
        expectRefusal(s.decide(accountUpdate("acct-404"), actor: People.pendingAgent), .forbidden, "ACTOR_NOT_APPROVED")
        // An unknown actor is refused before anything is looked up.
        expectRefusal(s.decide(accountUpdate("acct-404"), actor: "ghost"), .forbidden, "UNKNOWN_ACTOR")
        expectRefusal(s.decide(.approveCashout(ApproveCashout(cashoutId: "C404")), actor: "ghost"), .forbidden, "UNKNOWN_ACTOR")
    }

    @Test func notFoundComesBeforeForbiddenForOwnership() {
        let s = busyScenario()
        expectRefusal(s.decide(accountUpdate("acct-404"), actor: People.otherAgent), .notFound, "ACCOUNT_NOT_FOUND")
        expectRefusal(
            s.decide(.updateProfile(UpdateProfile(userId: "user-404", fullName: "N")), actor: People.otherAgent), .notFound,
            "USER_NOT_FOUND")
        expectRefusal(
            s.decide(
                .openAccount(
                    OpenAccount(accountId: "acct-9", name: "N", phone: "+919845098450", address: "A", assignedAgentId: "agent-404")),
                actor: People.agent),
            .notFound, "AGENT_NOT_FOUND")
        expectRefusal(s.decide(orderLoan("L9", account: "acct-404"), actor: People.otherAgent), .notFound, "ACCOUNT_NOT_FOUND")
    }

    @Test func forbiddenForOwnershipComesBeforeConflict() {
        let s = busyScenario()
        expectRefusal(s.decide(accountUpdate(), actor: People.otherAgent, expectedVersion: 7), .forbidden, "NOT_ASSIGNED_AGENT")
        expectRefusal(
            s.decide(.updateProfile(UpdateProfile(userId: People.agent, fullName: "N")), actor: People.otherAgent, expectedVersion: 9),
            .forbidden, "NOT_OWN_PROFILE")
        expectRefusal(
            s.decide(
                .requestCashout(RequestCashout(cashoutId: "C9", agentId: People.otherAgent, amountCents: 10_000)),
                actor: People.agent, expectedVersion: 3),
            .forbidden, "NOT_OWN_EARNINGS")
        expectRefusal(
            s.decide(
                .openAccount(
                    OpenAccount(accountId: "acct-9", name: "N", phone: "+919845098450", address: "A", assignedAgentId: People.agent)),
                actor: People.otherAgent, expectedVersion: 4),
            .forbidden, "NOT_ASSIGNED_AGENT")
    }

    @Test func roleAndNotFoundComeBeforeConflict() {
        let s = busyScenario()
        expectRefusal(
            s.decide(.approveAgent(ApproveAgent(agentId: People.pendingAgent)), actor: People.agent, expectedVersion: 9),
            .forbidden, "ROLE_NOT_ALLOWED")
        expectRefusal(
            s.decide(.approveCashout(ApproveCashout(cashoutId: "C404")), actor: People.admin, expectedVersion: 3), .notFound,
            "CASHOUT_NOT_FOUND")
        expectRefusal(s.decide(accountUpdate("acct-404"), actor: People.admin, expectedVersion: 2), .notFound, "ACCOUNT_NOT_FOUND")
        expectRefusal(
            s.decide(.approveAgent(ApproveAgent(agentId: "agent-404")), actor: People.admin, expectedVersion: 1), .notFound,
            "USER_NOT_FOUND")
        expectRefusal(
            s.decide(.eraseSubject(EraseSubject(subjectId: "nobody", reason: "x")), actor: People.admin, expectedVersion: 1),
            .notFound, "SUBJECT_NOT_FOUND")
    }

    @Test func conflictComesBeforeRejected() {
        var s = busyScenario()
        // Each of these is REJECTED at the right version and CONFLICT at a wrong one.
        let cases: [(Command, String, StreamRef, String)] = [
            (.approveAgent(ApproveAgent(agentId: People.agent)), People.admin, .user(People.agent), "AGENT_NOT_PENDING"),
            (.approveAgent(ApproveAgent(agentId: People.admin)), People.admin, .user(People.admin), "NOT_AN_AGENT"),
            (
                .registerUser(RegisterUser(userId: "agent-new", username: "RAVI", email: "x@example.com", role: .agent)), "agent-new",
                .user("agent-new"), "USERNAME_TAKEN"
            ),
            (
                .openAccount(
                    OpenAccount(
                        accountId: People.account, name: "N", phone: "+919845098450", address: "A", assignedAgentId: People.agent)),
                People.admin, .account(People.account), "ACCOUNT_ALREADY_EXISTS"
            ),
            (
                .openAccount(
                    OpenAccount(accountId: "acct-9", name: "N", phone: "+919845098450", address: "A", assignedAgentId: People.pendingAgent)),
                People.admin, .account("acct-9"), "AGENT_NOT_APPROVED"
            ),
            (
                .changeAccountStatus(ChangeAccountStatus(accountId: People.account, status: .active, reason: "x")), People.admin,
                .account(People.account), "STATUS_UNCHANGED"
            ),
            (
                .setCommissionRate(SetCommissionRate(agentId: People.admin, rateBp: 100)), People.admin, .settings, "NOT_AN_AGENT"
            ),
            (
                .requestCashout(RequestCashout(cashoutId: "C9", agentId: People.agent, amountCents: 1_000_000)), People.agent,
                .cashout("C9"), "INSUFFICIENT_EARNINGS"
            ),
            (
                .requestCashout(RequestCashout(cashoutId: "C1", agentId: People.agent, amountCents: 10_000)), People.agent,
                .cashout("C1"), "CASHOUT_ALREADY_EXISTS"
            ),
            (orderLoan("L1"), People.agent, .loan("L1"), "LOAN_ALREADY_EXISTS"),
        ]
        for (command, actor, stream, reason) in cases {
            let version = s.version(of: stream)
            expectRefusal(s.decide(command, actor: actor, expectedVersion: version + 3), .conflict, "WRONG_EXPECTED_VERSION")
            expectRefusal(s.decide(command, actor: actor, expectedVersion: version), .rejected, reason)
        }
        s.when(.approveCashout(ApproveCashout(cashoutId: "C1")), actor: People.admin)
        expectRefusal(
            s.decide(.approveCashout(ApproveCashout(cashoutId: "C1")), actor: People.admin, expectedVersion: 1), .conflict,
            "WRONG_EXPECTED_VERSION")
        expectRefusal(
            s.decide(.approveCashout(ApproveCashout(cashoutId: "C1")), actor: People.admin, expectedVersion: 2), .rejected,
            "CASHOUT_NOT_PENDING")
        s.when(.eraseSubject(EraseSubject(subjectId: People.account, reason: "asked")), actor: People.admin)
        expectRefusal(
            s.decide(.eraseSubject(EraseSubject(subjectId: People.account, reason: "again")), actor: People.admin, expectedVersion: 1),
            .conflict, "WRONG_EXPECTED_VERSION")
        expectRefusal(
            s.decide(.eraseSubject(EraseSubject(subjectId: People.account, reason: "again")), actor: People.admin, expectedVersion: 2),
            .rejected, "ALREADY_ERASED")
    }

    /// Moving an account to another agent is for admins only: a rule about the actor's role,
    /// which CONTRACT.md orders before NOT_FOUND and before ownership. An agent probing
    /// with `assignedAgentId` must not learn which users or accounts exist.
    @Test func reassignmentByAnAgentIsRefusedForTheRoleBeforeAnythingIsLookedUp() {
        let s = busyScenario()
        // To a user that does not exist, on the agent's own account.
        expectRefusal(
            s.decide(.updateAccount(UpdateAccount(accountId: People.account, assignedAgentId: "agent-404")), actor: People.agent),
            .forbidden, "REASSIGNMENT_ADMIN_ONLY")
        // To another agent, on an account that does not exist.
        expectRefusal(
            s.decide(.updateAccount(UpdateAccount(accountId: "acct-404", assignedAgentId: People.otherAgent)), actor: People.agent),
            .forbidden, "REASSIGNMENT_ADMIN_ONLY")
    }

    // MARK: - Keys narrowed to roles

    @Test func aKeyForAgentsMayNotActForAnAdmin() {
        let s = busyScenario()
        let agentsOnly: Set<Role> = [.agent]
        expectRefusal(
            s.decide(.approveAgent(ApproveAgent(agentId: People.pendingAgent)), actor: People.admin, permittedRoles: agentsOnly),
            .forbidden, "KEY_ROLE_NOT_PERMITTED")
        expectRefusal(
            s.decide(orderLoan("L9"), actor: People.admin, permittedRoles: agentsOnly), .forbidden, "KEY_ROLE_NOT_PERMITTED")
        expectRefusal(
            s.decide(
                .updateProfile(UpdateProfile(userId: People.admin, fullName: "Root")), actor: People.admin, permittedRoles: agentsOnly),
            .forbidden, "KEY_ROLE_NOT_PERMITTED")
        expectRefusal(
            s.decide(
                .registerUser(RegisterUser(userId: "admin-2", username: "asha", email: "asha@example.com", role: .admin)),
                actor: People.admin, permittedRoles: agentsOnly),
            .forbidden, "KEY_ROLE_NOT_PERMITTED")
        // An admin naming itself in an agent's self-registration is still an admin: the key is
        // judged on the role the actor has, not on the one the payload names, and before the
        // expected version and the rule that the user exists already.
        let adminAsAgent = RegisterUser(
            userId: People.admin, username: "rootish", email: "rootish@example.com", role: .agent)
        expectRefusal(
            s.decide(.registerUser(adminAsAgent), actor: People.admin, permittedRoles: agentsOnly),
            .forbidden, "KEY_ROLE_NOT_PERMITTED")
        expectRefusal(
            s.decide(.registerUser(adminAsAgent), actor: People.admin, expectedVersion: 9, permittedRoles: agentsOnly),
            .forbidden, "KEY_ROLE_NOT_PERMITTED")
        // The key is judged before anything is looked up.
        expectRefusal(
            s.decide(.approveAgent(ApproveAgent(agentId: "agent-404")), actor: People.admin, permittedRoles: agentsOnly),
            .forbidden, "KEY_ROLE_NOT_PERMITTED")
        expectRefusal(
            s.decide(
                .eraseSubject(EraseSubject(subjectId: "nobody", reason: "x")), actor: People.admin, permittedRoles: agentsOnly),
            .forbidden, "KEY_ROLE_NOT_PERMITTED")
        // The same key acts for agents.
        #expect(s.decide(orderLoan("L9"), actor: People.agent, permittedRoles: agentsOnly).events?.count == 1)
        #expect(
            s.decide(
                .registerUser(RegisterUser(userId: "agent-new", username: "kavya", email: "kavya@example.com", role: .agent)),
                actor: "agent-new", permittedRoles: agentsOnly
            ).events?.count == 1)
        // A key for both, or not narrowed, acts for either.
        #expect(
            s.decide(.approveAgent(ApproveAgent(agentId: People.pendingAgent)), actor: People.admin, permittedRoles: [.agent, .admin])
                .events?.count == 1)
    }

    @Test func aKeyForAdminsMayNotActForAnAgent() {
        let s = busyScenario()
        let adminsOnly: Set<Role> = [.admin]
        expectRefusal(
            s.decide(orderLoan("L9"), actor: People.agent, permittedRoles: adminsOnly), .forbidden, "KEY_ROLE_NOT_PERMITTED")
        expectRefusal(
            s.decide(
                .registerUser(RegisterUser(userId: "agent-new", username: "kavya", email: "kavya@example.com", role: .agent)),
                actor: "agent-new", permittedRoles: adminsOnly),
            .forbidden, "KEY_ROLE_NOT_PERMITTED")
        expectRefusal(
            s.decide(
                .updateProfile(UpdateProfile(userId: People.pendingAgent, fullName: "P")), actor: People.pendingAgent,
                permittedRoles: adminsOnly),
            .forbidden, "KEY_ROLE_NOT_PERMITTED")
        // The admin naming itself in an agent's self-registration acts as the admin it is, which
        // this key may: the registration then fails on the user existing already.
        expectRefusal(
            s.decide(
                .registerUser(
                    RegisterUser(userId: People.admin, username: "rootish", email: "rootish@example.com", role: .agent)),
                actor: People.admin, permittedRoles: adminsOnly),
            .rejected, "USER_ALREADY_EXISTS")
        // Which users exist is judged before the key: an unknown actor has no role.
        expectRefusal(s.decide(orderLoan("L9"), actor: "ghost", permittedRoles: adminsOnly), .forbidden, "UNKNOWN_ACTOR")
        #expect(s.decide(orderLoan("L9"), actor: People.admin, permittedRoles: adminsOnly).events?.count == 1)
    }

    // MARK: - INVALID lists every problem

    @Test func invalidListsEveryProblemInReadingOrder() {
        let s = busyScenario()
        let decision = s.decide(
            type: "RequestLoan",
            payload: [
                "loanId": 42, "principalCents": 100_000_001, "monthlyRateBp": 600, "tenureMonths": 6, "frequency": "MONTHLY",
                "requestedOn": "2026-11-21", "colour": "red",
            ],
            actor: People.agent)
        expectInvalid(
            decision,
            [
                ("loanId", "WRONG_TYPE"), ("accountId", "REQUIRED"), ("principalCents", "ABOVE_MAXIMUM"),
                ("monthlyRateBp", "OUT_OF_RANGE"), ("requestedOn", "FUTURE_DATE"), ("colour", "UNKNOWN_FIELD"),
            ])
        // The reason repeats the first problem's.
        #expect(decision.refusal?.reason == "WRONG_TYPE")
    }

    @Test func invalidListsEveryProblemOfEveryField() {
        let s = busyScenario()
        expectInvalid(
            s.decide(
                type: "RequestLoan",
                payload: [
                    "loanId": "", "accountId": 12, "principalCents": 0, "monthlyRateBp": 299, "tenureMonths": 13,
                    "frequency": "DAILY", "interestMethod": "COMPOUND", "requestedOn": "2020-01-01", "zone": "south",
                    "amount": 5,
                ],
                actor: "ghost"),
            [
                ("loanId", "INVALID_IDENTIFIER"), ("accountId", "WRONG_TYPE"), ("principalCents", "MUST_BE_POSITIVE"),
                ("monthlyRateBp", "OUT_OF_RANGE"), ("tenureMonths", "OUT_OF_RANGE"), ("frequency", "UNKNOWN_VALUE"),
                ("interestMethod", "UNKNOWN_VALUE"), ("requestedOn", "TOO_FAR_IN_PAST"), ("amount", "UNKNOWN_FIELD"),
                ("zone", "UNKNOWN_FIELD"),
            ])
    }

    @Test func unknownCommandTypesAreInvalid() {
        let s = busyScenario()
        for type in ["LaunchRocket", "approveLoan", "APPROVE_LOAN", "", "ApproveLoan "] {
            expectRefusal(
                s.decide(type: type, payload: ["loanId": "L1"], actor: People.admin), .invalid, "UNKNOWN_COMMAND_TYPE",
                details: [StrataError.FieldProblem(field: "type", reason: "UNKNOWN_COMMAND_TYPE")])
        }
        #expect(
            Command.types == [
                "ApproveAgent", "ApproveCashout", "ApproveLoan", "CancelInvoice", "ChangeAccountStatus", "CreateInvoice",
                "EraseSubject", "OpenAccount", "ReceivePayment", "RecordInvoicePayment", "RegisterUser", "RejectAgent",
                "RejectCashout", "RejectLoan", "RequestCashout", "RequestLoan", "SetCommissionRate", "UpdateAccount",
                "UpdateProfile",
            ])
    }

    // MARK: - JSON null reads as absent

    @Test func nullReadsAsAbsent() {
        let s = busyScenario()
        expectEvents(
            s.decide(
                type: "RequestLoan",
                payload: [
                    "loanId": "L9", "accountId": .string(People.account), "principalCents": 1_000_000, "monthlyRateBp": 400,
                    "tenureMonths": 3, "frequency": "MONTHLY", "interestMethod": .null, "requestedOn": .null,
                ],
                actor: People.agent),
            [
                .loanRequested(
                    LoanRequested(
                        loanId: "L9", accountId: People.account, agentId: People.agent, principalCents: 1_000_000,
                        monthlyRateBp: 400, tenureMonths: 3, frequency: .monthly, interestMethod: .reducing,
                        requestedOn: date("2026-11-20"), requestedBy: People.agent))
            ])
        expectInvalid(
            s.decide(
                type: "RequestLoan",
                payload: [
                    "loanId": .null, "accountId": .string(People.account), "principalCents": .null, "monthlyRateBp": 400,
                    "tenureMonths": 3, "frequency": "MONTHLY",
                ],
                actor: People.agent),
            [("loanId", "REQUIRED"), ("principalCents", "REQUIRED")])
        expectEvents(
            s.decide(type: "SetCommissionRate", payload: ["agentId": .null, "rateBp": 1_500], actor: People.admin),
            [.commissionRateChanged(CommissionRateChanged(rateBp: 1_500, changedBy: People.admin))])
        expectEvents(
            s.decide(
                type: "OpenAccount",
                payload: [
                    "accountId": "acct-9", "name": "Suresh", "phone": "+919845098450", "email": .null, "alternatePhone": .null,
                    "address": "Hassan", "assignedAgentId": .string(People.agent),
                ],
                actor: People.agent),
            [
                .accountOpened(
                    AccountOpened(
                        accountId: "acct-9", name: "Suresh", phone: "+919845098450", address: "Hassan",
                        assignedAgentId: People.agent, openedBy: People.agent, status: .active))
            ])
        expectInvalid(
            s.decide(
                type: "UpdateAccount", payload: ["accountId": .string(People.account), "phone": .null], actor: People.agent),
            [("payload", "NO_CHANGES")])
    }
}
