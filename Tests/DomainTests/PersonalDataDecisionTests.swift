import Domain
import Events
import StrataCore
import StrataTesting
import Testing

// Given/when/then for erasure (DOMAIN.md "Personal data"): EraseSubject for a user, an
// account and an invoice party, by an approved admin.

private let party = "party-1"

/// `lending()` plus an invoice whose customer is `party`: a party exists once an
/// InvoiceCreated names it.
private func erasureScenario() -> DomainScenario {
    var s = DomainScenario.lending()
    s.when(invoiceFor(party, invoiceId: "I1"), actor: People.admin)
    return s
}

private func invoiceFor(_ partyId: String, invoiceId: String) -> Command {
    .createInvoice(
        CreateInvoice(
            invoiceId: invoiceId, customer: InvoiceCustomer(partyId: partyId, name: "Acme Traders", taxId: "29ABCDE1234F1Z5"),
            issueDate: date("2026-11-20"), dueDate: date("2026-12-20"),
            lines: [InvoiceLineRequest(description: "Rice, 25 kg", quantityMilli: 2_000, unitPriceCents: 150_000, taxRateBp: 500)]))
}

private func erase(_ subjectId: String, _ kind: SubjectKind? = nil, reason: String = "data subject request") -> Command {
    .eraseSubject(EraseSubject(subjectId: subjectId, kind: kind, reason: reason))
}

private func erased(_ subjectId: String, _ kind: SubjectKind, by admin: String = People.admin, reason: String = "data subject request")
    -> StrataEvent
{
    .personalDataErased(PersonalDataErased(subjectId: subjectId, kind: kind, erasedBy: admin, reason: reason))
}

private func accepted(_ decision: Decision) -> Decision.Accepted? {
    if case .accepted(let accepted) = decision { return accepted }
    return nil
}

/// An id that is both a user and an account ("dup-1"), and one that is both a user and a
/// party ("dup-2").
private func ambiguousScenario() -> DomainScenario {
    var s = erasureScenario()
    s.given(
        .userRegistered(UserRegistered(userId: "dup-1", username: "dup1", email: "dup1@example.com", role: .agent, status: .pending)),
        .accountOpened(
            AccountOpened(
                accountId: "dup-1", name: "Dup One", phone: "+919845011111", address: "Hassan", assignedAgentId: People.agent,
                openedBy: People.agent, status: .active)),
        .userRegistered(UserRegistered(userId: "dup-2", username: "dup2", email: "dup2@example.com", role: .agent, status: .pending)))
    s.when(invoiceFor("dup-2", invoiceId: "I2"), actor: People.admin)
    return s
}

@Suite("Personal data decisions")
struct PersonalDataDecisionTests {
    // MARK: - Users

    @Test(arguments: [SubjectKind.user, nil])
    func anAdminErasesAUser(kind: SubjectKind?) {
        var s = erasureScenario()
        let decision = s.when(erase(People.agent, kind), actor: People.admin)
        expectEvents(decision, [erased(People.agent, .user)])
        #expect(decision.events?.first?.stream == .user(People.agent))
        #expect(
            accepted(decision)?.expectedVersions
                == [.user(People.admin): 1, .user(People.agent): 2, .account(People.agent): 0, .party(People.agent): 0])
    }

    @Test func anAdminMayEraseThemselves() {
        var s = erasureScenario()
        expectEvents(s.when(erase(People.admin), actor: People.admin), [erased(People.admin, .user)])
    }

    // MARK: - Accounts

    @Test(arguments: [SubjectKind.account, nil])
    func anAdminErasesAnAccount(kind: SubjectKind?) {
        var s = erasureScenario()
        let decision = s.when(erase(People.account, kind, reason: "borrower closed the relationship"), actor: People.admin)
        expectEvents(decision, [erased(People.account, .account, reason: "borrower closed the relationship")])
        #expect(decision.events?.first?.stream == .account(People.account))
        #expect(
            accepted(decision)?.expectedVersions
                == [.user(People.admin): 1, .user(People.account): 0, .account(People.account): 1, .party(People.account): 0])
    }

    // MARK: - Parties

    @Test(arguments: [SubjectKind.party, nil])
    func anAdminErasesAnInvoiceParty(kind: SubjectKind?) {
        var s = erasureScenario()
        let decision = s.when(erase(party, kind), actor: People.admin)
        expectEvents(decision, [erased(party, .party)])
        // A party has no stream until its erasure starts one.
        #expect(decision.events?.first?.stream == .party(party))
        #expect(decision.events?.first?.stream.description == "party-party-1")
        #expect(
            accepted(decision)?.expectedVersions
                == [.user(People.admin): 1, .user(party): 0, .account(party): 0, .party(party): 0])
        #expect(s.version(of: .party(party)) == 1)
    }

    @Test func aPartyIsKnownOnlyFromAnInvoice() {
        var s = DomainScenario.lending()
        expectRefusal(s.decide(erase(party), actor: People.admin), .notFound, "SUBJECT_NOT_FOUND")
        expectRefusal(s.decide(erase(party, .party), actor: People.admin), .notFound, "SUBJECT_NOT_FOUND")
        s.when(invoiceFor(party, invoiceId: "I1"), actor: People.agent)
        expectEvents(s.when(erase(party, .party), actor: People.admin), [erased(party, .party)])
    }

    @Test func anErasedPartyIsNotInvoicedAgain() {
        var s = erasureScenario()
        s.when(erase(party), actor: People.admin)
        expectRefusal(s.decide(invoiceFor(party, invoiceId: "I9"), actor: People.admin), .rejected, "SUBJECT_ERASED")
    }

    // MARK: - Ambiguity

    @Test func anIdThatIsAUserAndAnAccountIsAmbiguous() {
        var s = ambiguousScenario()
        expectRefusal(
            s.decide(erase("dup-1"), actor: People.admin), .invalid, "AMBIGUOUS_SUBJECT",
            details: [StrataError.FieldProblem(field: "subjectId", reason: "AMBIGUOUS_SUBJECT")])
        expectEvents(s.when(erase("dup-1", .account), actor: People.admin), [erased("dup-1", .account)])
        // Still both; the kind resolves it either way.
        expectRefusal(
            s.decide(erase("dup-1"), actor: People.admin), .invalid, "AMBIGUOUS_SUBJECT",
            details: [StrataError.FieldProblem(field: "subjectId", reason: "AMBIGUOUS_SUBJECT")])
        expectEvents(s.when(erase("dup-1", .user), actor: People.admin), [erased("dup-1", .user)])
    }

    @Test func anIdThatIsAUserAndAPartyIsAmbiguous() {
        var s = ambiguousScenario()
        expectRefusal(
            s.decide(erase("dup-2"), actor: People.admin), .invalid, "AMBIGUOUS_SUBJECT",
            details: [StrataError.FieldProblem(field: "subjectId", reason: "AMBIGUOUS_SUBJECT")])
        let decision = s.when(erase("dup-2", .party), actor: People.admin)
        expectEvents(decision, [erased("dup-2", .party)])
        #expect(decision.events?.first?.stream == .party("dup-2"))
        expectEvents(s.when(erase("dup-2", .user), actor: People.admin), [erased("dup-2", .user)])
    }

    // MARK: - Not found, already erased

    @Test func anUnknownSubjectIsNotFound() {
        let s = erasureScenario()
        expectRefusal(s.decide(erase("nobody"), actor: People.admin), .notFound, "SUBJECT_NOT_FOUND")
        for kind in SubjectKind.allCases {
            expectRefusal(s.decide(erase("nobody", kind), actor: People.admin), .notFound, "SUBJECT_NOT_FOUND")
        }
    }

    @Test func aSubjectOfAnotherKindIsNotFound() {
        let s = erasureScenario()
        expectRefusal(s.decide(erase(People.agent, .account), actor: People.admin), .notFound, "SUBJECT_NOT_FOUND")
        expectRefusal(s.decide(erase(People.agent, .party), actor: People.admin), .notFound, "SUBJECT_NOT_FOUND")
        expectRefusal(s.decide(erase(People.account, .user), actor: People.admin), .notFound, "SUBJECT_NOT_FOUND")
        expectRefusal(s.decide(erase(party, .account), actor: People.admin), .notFound, "SUBJECT_NOT_FOUND")
    }

    @Test(arguments: [(People.agent, SubjectKind.user), (People.account, .account), (party, .party)])
    func aSubjectIsErasedOnce(subject: String, kind: SubjectKind) {
        var s = erasureScenario()
        s.when(erase(subject), actor: People.admin)
        expectRefusal(s.decide(erase(subject), actor: People.admin), .rejected, "ALREADY_ERASED")
        expectRefusal(s.decide(erase(subject, kind), actor: People.admin), .rejected, "ALREADY_ERASED")
    }

    // MARK: - Who may

    @Test(arguments: [People.agent, People.otherAgent, People.pendingAgent])
    func onlyAnAdminErases(actor: String) {
        let s = erasureScenario()
        expectRefusal(s.decide(erase(People.account), actor: actor), .forbidden, "ROLE_NOT_ALLOWED")
        // Their own data too.
        expectRefusal(s.decide(erase(actor, .user), actor: actor), .forbidden, "ROLE_NOT_ALLOWED")
        // Before NOT_FOUND: an agent learns nothing about which ids exist.
        expectRefusal(s.decide(erase("nobody"), actor: actor), .forbidden, "ROLE_NOT_ALLOWED")
    }

    @Test func anUnknownOrUnapprovedAdminMayNotErase() {
        var s = erasureScenario()
        s.given(
            .userRegistered(
                UserRegistered(userId: "admin-u", username: "shadow", email: "shadow@example.com", role: .admin, status: .pending)))
        expectRefusal(s.decide(erase(People.account), actor: "ghost"), .forbidden, "UNKNOWN_ACTOR")
        expectRefusal(s.decide(erase(People.account), actor: "admin-u"), .forbidden, "ACTOR_NOT_APPROVED")
    }

    // MARK: - Payload and versions

    @Test func everyProblemOfAnErasureIsListed() {
        let s = erasureScenario()
        expectInvalid(s.decide(erase(People.account, reason: "  "), actor: People.admin), [("reason", "EMPTY")])
        expectInvalid(
            s.decide(type: "EraseSubject", payload: ["subjectId": "acct 1", "kind": "BORROWER"], actor: People.admin),
            [("subjectId", "INVALID_IDENTIFIER"), ("kind", "UNKNOWN_VALUE"), ("reason", "REQUIRED")])
        // A null kind is no kind: looked up.
        expectEvents(
            s.decide(
                type: "EraseSubject",
                payload: ["subjectId": .string(People.account), "kind": .null, "reason": "data subject request"],
                actor: People.admin),
            [erased(People.account, .account)])
    }

    @Test func expectedVersionIsTheSubjectsStream() {
        let s = erasureScenario()
        expectRefusal(s.decide(erase(People.account), actor: People.admin, expectedVersion: 0), .conflict, "WRONG_EXPECTED_VERSION")
        expectEvents(s.decide(erase(People.account), actor: People.admin, expectedVersion: 1), [erased(People.account, .account)])
        expectRefusal(s.decide(erase(People.agent), actor: People.admin, expectedVersion: 1), .conflict, "WRONG_EXPECTED_VERSION")
        expectEvents(s.decide(erase(People.agent), actor: People.admin, expectedVersion: 2), [erased(People.agent, .user)])
        expectRefusal(s.decide(erase(party), actor: People.admin, expectedVersion: 1), .conflict, "WRONG_EXPECTED_VERSION")
        expectEvents(s.decide(erase(party), actor: People.admin, expectedVersion: 0), [erased(party, .party)])
    }
}


// MARK: - Emails in the directory

@Suite("The directory keeps emails as keys")
struct DirectoryEmailTests {
    private let registered = StrataEvent.userRegistered(
        UserRegistered(userId: "agent-9", username: "kavya", email: "Kavya@Example.com", role: .agent, status: .pending))

    @Test func emailsAreKeptAsWhatTheKeyMakesOfThem() {
        var directory = Directory(emailKey: EmailKey { "digest:" + String($0.reversed()) })
        directory.apply(registered)
        #expect(directory.emails == ["digest:moc.elpmaxe@ayvak": "agent-9"])
        #expect(directory.userId(forEmail: "KAVYA@example.com") == "agent-9")
        #expect(directory.userId(forEmail: "ravi@example.com") == nil)
    }

    @Test func aSealedOrErasedEmailIsNotKept() {
        var directory = Directory()
        directory.apply(
            .userRegistered(
                UserRegistered(
                    userId: "agent-8", username: "u8", email: "pd1.user:agent-8:0011223344556677.AAAA", role: .agent,
                    status: .pending)))
        directory.apply(
            .userRegistered(UserRegistered(userId: "agent-7", username: "u7", email: .erased, role: .agent, status: .pending)))
        #expect(directory.emails == [:])
        #expect(directory.userId(forUsername: "U8") == "agent-8")
    }

    @Test func anErasedUsersEmailIsFreeAgainButTheUsernameIsNot() {
        var s = DomainScenario.lending()
        let registered = s.when(
            .registerUser(RegisterUser(userId: "agent-90", username: "kavya", email: "kavya@example.com", role: .agent)),
            actor: "agent-90")
        #expect(registered.refusal == nil, "\(registered)")
        expectEvents(s.when(erase("agent-90", .user), actor: People.admin), [erased("agent-90", .user)])
        expectEvents(
            s.decide(
                .registerUser(RegisterUser(userId: "agent-91", username: "kavya2", email: "KAVYA@example.com", role: .agent)),
                actor: "agent-91"),
            [
                .userRegistered(
                    UserRegistered(userId: "agent-91", username: "kavya2", email: "KAVYA@example.com", role: .agent, status: .pending))
            ])
        expectRefusal(
            s.decide(
                .registerUser(RegisterUser(userId: "agent-91", username: "Kavya", email: "k10@example.com", role: .agent)),
                actor: "agent-91"),
            .rejected, "USERNAME_TAKEN")
    }
}
