import Domain
import Events
import StrataCore
import StrataTesting
import Testing

// Given/when/then for users and agents (DOMAIN.md "Users and agents"): RegisterUser,
// ApproveAgent, RejectAgent, UpdateProfile.

/// An admin registered but not (or no longer) APPROVED: no command creates one, but the
/// rule is "an approved ADMIN", so the deciders must look at the status too.
private let unapprovedAdmin = "admin-u"

private func withUnapprovedAdmin(_ scenario: inout DomainScenario) {
    scenario.given(
        .userRegistered(
            UserRegistered(
                userId: unapprovedAdmin, username: "shadow", email: "shadow@example.com", role: .admin, status: .pending)))
}

/// `People.pendingAgent` turned away by the admin.
private func withRejectedPendingAgent(_ scenario: inout DomainScenario) {
    scenario.given(
        .agentRejected(AgentRejected(agentId: People.pendingAgent, rejectedBy: People.admin, reason: "no licence")))
}

private func registration(_ userId: String, _ username: String, _ email: PersonalData, _ role: Role) -> Command {
    .registerUser(RegisterUser(userId: userId, username: username, email: email, role: role))
}

private func acceptedVersions(_ decision: Decision) -> [StreamRef: Int64]? {
    if case .accepted(let accepted) = decision { return accepted.expectedVersions }
    return nil
}

@Suite("User decisions")
struct UserDecisionTests {
    // MARK: - RegisterUser

    @Test func anAgentRegistersThemselvesAndIsPending() {
        var s = DomainScenario.lending()
        let decision = s.when(registration("agent-new", "kavya", "kavya@example.com", .agent), actor: "agent-new")
        expectEvents(
            decision,
            [
                .userRegistered(
                    UserRegistered(
                        userId: "agent-new", username: "kavya", email: "kavya@example.com", role: .agent, status: .pending))
            ])
        #expect(acceptedVersions(decision) == [.user("agent-new"): 0])
    }

    @Test func selfRegistrationNeedsNoExistingUser() {
        var s = DomainScenario()
        expectEvents(
            s.when(registration("agent-1", "first", "first@example.com", .agent), actor: "agent-1"),
            [
                .userRegistered(
                    UserRegistered(userId: "agent-1", username: "first", email: "first@example.com", role: .agent, status: .pending))
            ])
    }

    @Test func anApprovedAdminRegistersAnApprovedAdmin() {
        var s = DomainScenario.lending()
        let decision = s.when(registration("admin-2", "asha", "asha@example.com", .admin), actor: People.admin)
        expectEvents(
            decision,
            [
                .userRegistered(
                    UserRegistered(userId: "admin-2", username: "asha", email: "asha@example.com", role: .admin, status: .approved))
            ])
        #expect(acceptedVersions(decision) == [.user(People.admin): 1, .user("admin-2"): 0])
        // The new admin may act at once.
        expectEvents(
            s.when(.approveAgent(ApproveAgent(agentId: People.pendingAgent)), actor: "admin-2"),
            [.agentApproved(AgentApproved(agentId: People.pendingAgent, approvedBy: "admin-2", approvedAt: s.context.now))])
    }

    @Test(arguments: [People.admin, People.agent, People.pendingAgent, "ghost"])
    func anAgentIsRegisteredOnlyByThemselves(actor: String) {
        let s = DomainScenario.lending()
        expectRefusal(
            s.decide(registration("agent-new", "kavya", "kavya@example.com", .agent), actor: actor),
            .forbidden, "AGENT_SELF_REGISTRATION_ONLY")
    }

    @Test(arguments: [People.agent, People.pendingAgent])
    func agentsMayNotRegisterAdmins(actor: String) {
        let s = DomainScenario.lending()
        expectRefusal(
            s.decide(registration("admin-2", "asha", "asha@example.com", .admin), actor: actor), .forbidden,
            "ROLE_NOT_ALLOWED")
    }

    @Test func anUnknownActorMayNotRegisterAnAdmin() {
        let s = DomainScenario.lending()
        expectRefusal(
            s.decide(registration("admin-2", "asha", "asha@example.com", .admin), actor: "ghost"), .forbidden,
            "UNKNOWN_ACTOR")
        // Not even the very first admin: that one is an operator bootstrap.
        expectRefusal(
            DomainScenario().decide(registration("admin-1", "root", "root@example.com", .admin), actor: "admin-1"),
            .forbidden, "UNKNOWN_ACTOR")
    }

    @Test func anUnapprovedAdminMayNotRegisterAdmins() {
        var s = DomainScenario.lending()
        withUnapprovedAdmin(&s)
        expectRefusal(
            s.decide(registration("admin-2", "asha", "asha@example.com", .admin), actor: unapprovedAdmin), .forbidden,
            "ACTOR_NOT_APPROVED")
    }

    @Test func aUserIdIsRegisteredOnce() {
        let s = DomainScenario.lending()
        expectRefusal(
            s.decide(registration(People.agent, "ravi2", "ravi2@example.com", .agent), actor: People.agent), .rejected,
            "USER_ALREADY_EXISTS")
        expectRefusal(
            s.decide(registration(People.pendingAgent, "other", "other@example.com", .admin), actor: People.admin),
            .rejected, "USER_ALREADY_EXISTS")
    }

    @Test(arguments: ["ravi", "RAVI", "Ravi", "rAvI"])
    func usernamesAreUniqueWhateverTheirCase(username: String) {
        let s = DomainScenario.lending()
        expectRefusal(
            s.decide(registration("agent-new", username, "new@example.com", .agent), actor: "agent-new"), .rejected,
            "USERNAME_TAKEN")
        expectRefusal(
            s.decide(registration("admin-2", username, "new@example.com", .admin), actor: People.admin), .rejected,
            "USERNAME_TAKEN")
    }

    @Test(arguments: ["ravi@example.com", "RAVI@EXAMPLE.COM", "Ravi@Example.com"])
    func emailsAreUniqueWhateverTheirCase(email: String) {
        let s = DomainScenario.lending()
        expectRefusal(
            s.decide(registration("agent-new", "kavya", PersonalData(email), .agent), actor: "agent-new"), .rejected,
            "EMAIL_TAKEN")
    }

    @Test func aNameOrEmailTakenByARegistrationIsTakenForTheNext() {
        var s = DomainScenario.lending()
        s.when(registration("agent-new", "Kavya", "Kavya@Example.com", .agent), actor: "agent-new")
        expectRefusal(
            s.decide(registration("agent-x", "kavya", "x@example.com", .agent), actor: "agent-x"), .rejected,
            "USERNAME_TAKEN")
        expectRefusal(
            s.decide(registration("agent-x", "kavya-x", "kavya@example.com", .agent), actor: "agent-x"), .rejected,
            "EMAIL_TAKEN")
    }

    @Test func everyProblemOfARegistrationIsListed() {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(
                type: "RegisterUser",
                payload: ["userId": "new agent", "username": "ab", "email": "kavya@", "role": "ROOT", "nickname": "k"],
                actor: "agent-new"),
            [
                ("userId", "INVALID_IDENTIFIER"), ("username", "INVALID_FORMAT"), ("email", "INVALID_FORMAT"),
                ("role", "UNKNOWN_VALUE"), ("nickname", "UNKNOWN_FIELD"),
            ])
        expectInvalid(
            s.decide(type: "RegisterUser", payload: [:], actor: "agent-new"),
            [("userId", "REQUIRED"), ("username", "REQUIRED"), ("email", "REQUIRED"), ("role", "REQUIRED")])
        expectInvalid(
            s.decide(registration("agent-new", "k", "not-an-email", .agent), actor: "agent-new"),
            [("username", "INVALID_FORMAT"), ("email", "INVALID_FORMAT")])
    }

    @Test(arguments: [
        "ab", String(repeating: "a", count: 33), "has space", "ravi!", "ravi@home", "कविता", "",
    ])
    func aUsernameIsThreeToThirtyTwoPlainCharacters(username: String) {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(registration("agent-new", username, "new@example.com", .agent), actor: "agent-new"),
            [("username", "INVALID_FORMAT")])
    }

    @Test(arguments: ["abc", String(repeating: "z", count: 32), "k.v_r-1", "ABC"])
    func usernamesAtTheLimitsAreAccepted(username: String) {
        var s = DomainScenario.lending()
        expectEvents(
            s.when(registration("agent-new", username, "new@example.com", .agent), actor: "agent-new"),
            [
                .userRegistered(
                    UserRegistered(userId: "agent-new", username: username, email: "new@example.com", role: .agent, status: .pending))
            ])
    }

    @Test(arguments: [
        "kavya", "kavya@", "@example.com", "kavya@example", "kavya@@example.com", "kav ya@example.com",
        "kavya@example..com", "kavya@-example.com", "a@b@c.com",
    ])
    func anEmailMustBeAnAddress(email: String) {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(registration("agent-new", "kavya", PersonalData(email), .agent), actor: "agent-new"),
            [("email", "INVALID_FORMAT")])
    }

    // MARK: - ApproveAgent

    @Test func anAdminApprovesAPendingAgentNow() {
        var s = DomainScenario.lending()
        s.advance(days: 2)
        let decision = s.when(.approveAgent(ApproveAgent(agentId: People.pendingAgent)), actor: People.admin)
        expectEvents(
            decision,
            [
                .agentApproved(
                    AgentApproved(
                        agentId: People.pendingAgent, approvedBy: People.admin, approvedAt: instant("2026-11-22T10:00:00.000Z")))
            ])
        #expect(s.context.now == instant("2026-11-22T10:00:00.000Z"))
        #expect(acceptedVersions(decision) == [.user(People.admin): 1, .user(People.pendingAgent): 1])
    }

    @Test func anApprovedAgentMayWork() {
        var s = DomainScenario.lending()
        let open = Command.openAccount(
            OpenAccount(
                accountId: "acct-p", name: "Kumar", phone: "+919900011122", address: "Mandya", assignedAgentId: People.pendingAgent))
        expectRefusal(s.decide(open, actor: People.pendingAgent), .forbidden, "ACTOR_NOT_APPROVED")
        s.when(.approveAgent(ApproveAgent(agentId: People.pendingAgent)), actor: People.admin)
        expectEvents(
            s.when(open, actor: People.pendingAgent),
            [
                .accountOpened(
                    AccountOpened(
                        accountId: "acct-p", name: "Kumar", phone: "+919900011122", address: "Mandya",
                        assignedAgentId: People.pendingAgent, openedBy: People.pendingAgent, status: .active))
            ])
    }

    @Test func approvingAnUnknownUserIsNotFound() {
        let s = DomainScenario.lending()
        expectRefusal(
            s.decide(.approveAgent(ApproveAgent(agentId: "agent-404")), actor: People.admin), .notFound, "USER_NOT_FOUND")
    }

    @Test func onlyAgentsAreApproved() {
        var s = DomainScenario.lending()
        withUnapprovedAdmin(&s)
        expectRefusal(
            s.decide(.approveAgent(ApproveAgent(agentId: People.admin)), actor: People.admin), .rejected, "NOT_AN_AGENT")
        expectRefusal(
            s.decide(.approveAgent(ApproveAgent(agentId: unapprovedAdmin)), actor: People.admin), .rejected, "NOT_AN_AGENT")
    }

    @Test func onlyPendingAgentsAreApproved() {
        var s = DomainScenario.lending()
        expectRefusal(
            s.decide(.approveAgent(ApproveAgent(agentId: People.agent)), actor: People.admin), .rejected, "AGENT_NOT_PENDING")
        withRejectedPendingAgent(&s)
        expectRefusal(
            s.decide(.approveAgent(ApproveAgent(agentId: People.pendingAgent)), actor: People.admin), .rejected,
            "AGENT_NOT_PENDING")
    }

    @Test func approvingTwiceIsRefusedTheSecondTime() {
        var s = DomainScenario.lending()
        s.when(.approveAgent(ApproveAgent(agentId: People.pendingAgent)), actor: People.admin)
        expectRefusal(
            s.decide(.approveAgent(ApproveAgent(agentId: People.pendingAgent)), actor: People.admin), .rejected,
            "AGENT_NOT_PENDING")
    }

    @Test func onlyApprovedAdminsApproveAgents() {
        var s = DomainScenario.lending()
        withUnapprovedAdmin(&s)
        let approve = Command.approveAgent(ApproveAgent(agentId: People.pendingAgent))
        // An agent can never approve, whatever their own status: the role decides first.
        expectRefusal(s.decide(approve, actor: People.agent), .forbidden, "ROLE_NOT_ALLOWED")
        expectRefusal(s.decide(approve, actor: People.pendingAgent), .forbidden, "ROLE_NOT_ALLOWED")
        expectRefusal(s.decide(approve, actor: unapprovedAdmin), .forbidden, "ACTOR_NOT_APPROVED")
        expectRefusal(s.decide(approve, actor: "ghost"), .forbidden, "UNKNOWN_ACTOR")
    }

    @Test func approvalNeedsAnAgentId() {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(type: "ApproveAgent", payload: ["agentId": "agent p"], actor: People.admin),
            [("agentId", "INVALID_IDENTIFIER")])
        expectInvalid(s.decide(type: "ApproveAgent", payload: [:], actor: People.admin), [("agentId", "REQUIRED")])
    }

    // MARK: - RejectAgent

    @Test func anAdminRejectsAPendingAgent() {
        var s = DomainScenario.lending()
        let decision = s.when(
            .rejectAgent(RejectAgent(agentId: People.pendingAgent, reason: "documents do not match")), actor: People.admin)
        expectEvents(
            decision,
            [
                .agentRejected(
                    AgentRejected(agentId: People.pendingAgent, rejectedBy: People.admin, reason: "documents do not match"))
            ])
        #expect(acceptedVersions(decision) == [.user(People.admin): 1, .user(People.pendingAgent): 1])
    }

    @Test func aRejectedAgentMayNotWork() {
        var s = DomainScenario.lending()
        s.when(.rejectAgent(RejectAgent(agentId: People.pendingAgent, reason: "no licence")), actor: People.admin)
        expectRefusal(
            s.decide(
                .openAccount(
                    OpenAccount(
                        accountId: "acct-p", name: "Kumar", phone: "+919900011122", address: "Mandya",
                        assignedAgentId: People.pendingAgent)),
                actor: People.pendingAgent),
            .forbidden, "ACTOR_NOT_APPROVED")
    }

    @Test(arguments: ["", " ", "   ", "\n", "\t \n"])
    func aRejectionNeedsAReason(reason: String) {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(.rejectAgent(RejectAgent(agentId: People.pendingAgent, reason: reason)), actor: People.admin),
            [("reason", "EMPTY")])
    }

    @Test func aRejectionWithoutReasonIsInvalid() {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(type: "RejectAgent", payload: ["agentId": .string(People.pendingAgent)], actor: People.admin),
            [("reason", "REQUIRED")])
        expectInvalid(
            s.decide(
                type: "RejectAgent",
                payload: ["agentId": 7, "reason": .string(String(repeating: "x", count: 501))], actor: People.admin),
            [("agentId", "WRONG_TYPE"), ("reason", "TOO_LONG")])
    }

    @Test func rejectingAnUnknownUserIsNotFound() {
        let s = DomainScenario.lending()
        expectRefusal(
            s.decide(.rejectAgent(RejectAgent(agentId: "agent-404", reason: "no")), actor: People.admin), .notFound,
            "USER_NOT_FOUND")
    }

    @Test func onlyPendingAgentsAreRejected() {
        var s = DomainScenario.lending()
        expectRefusal(
            s.decide(.rejectAgent(RejectAgent(agentId: People.admin, reason: "no")), actor: People.admin), .rejected,
            "NOT_AN_AGENT")
        expectRefusal(
            s.decide(.rejectAgent(RejectAgent(agentId: People.agent, reason: "no")), actor: People.admin), .rejected,
            "AGENT_NOT_PENDING")
        withRejectedPendingAgent(&s)
        expectRefusal(
            s.decide(.rejectAgent(RejectAgent(agentId: People.pendingAgent, reason: "again")), actor: People.admin),
            .rejected, "AGENT_NOT_PENDING")
    }

    @Test func onlyApprovedAdminsRejectAgents() {
        var s = DomainScenario.lending()
        withUnapprovedAdmin(&s)
        let reject = Command.rejectAgent(RejectAgent(agentId: People.pendingAgent, reason: "no"))
        expectRefusal(s.decide(reject, actor: People.agent), .forbidden, "ROLE_NOT_ALLOWED")
        expectRefusal(s.decide(reject, actor: People.pendingAgent), .forbidden, "ROLE_NOT_ALLOWED")
        expectRefusal(s.decide(reject, actor: unapprovedAdmin), .forbidden, "ACTOR_NOT_APPROVED")
        expectRefusal(s.decide(reject, actor: "ghost"), .forbidden, "UNKNOWN_ACTOR")
    }

    // MARK: - UpdateProfile

    @Test func aPendingAgentUpdatesTheirOwnProfile() {
        var s = DomainScenario.lending()
        let decision = s.when(
            .updateProfile(UpdateProfile(userId: People.pendingAgent, fullName: "Prakash Rao")), actor: People.pendingAgent)
        expectEvents(
            decision,
            [.profileUpdated(ProfileUpdated(userId: People.pendingAgent, fullName: "Prakash Rao", updatedBy: People.pendingAgent))])
        #expect(acceptedVersions(decision) == [.user(People.pendingAgent): 1])
    }

    @Test func aRejectedAgentStillUpdatesTheirOwnProfile() {
        var s = DomainScenario.lending()
        withRejectedPendingAgent(&s)
        expectEvents(
            s.when(.updateProfile(UpdateProfile(userId: People.pendingAgent, phone: "+91 98450 12345")), actor: People.pendingAgent),
            [.profileUpdated(ProfileUpdated(userId: People.pendingAgent, phone: "+91 98450 12345", updatedBy: People.pendingAgent))])
    }

    @Test func anAgentUpdatesEveryFieldOfTheirProfile() {
        var s = DomainScenario.lending()
        expectEvents(
            s.when(
                .updateProfile(
                    UpdateProfile(
                        userId: People.agent, fullName: "Ravi Kumar", phone: "(080) 2345-6789",
                        address: "12 MG Road\nBengaluru", dateOfBirth: "1990-02-28")),
                actor: People.agent),
            [
                .profileUpdated(
                    ProfileUpdated(
                        userId: People.agent, fullName: "Ravi Kumar", phone: "(080) 2345-6789",
                        address: "12 MG Road\nBengaluru", dateOfBirth: "1990-02-28", updatedBy: People.agent))
            ])
    }

    @Test func anAdminUpdatesAnyonesProfile() {
        var s = DomainScenario.lending()
        let decision = s.when(
            .updateProfile(UpdateProfile(userId: People.agent, address: "7 Lake View, Mysuru")), actor: People.admin)
        expectEvents(
            decision,
            [.profileUpdated(ProfileUpdated(userId: People.agent, address: "7 Lake View, Mysuru", updatedBy: People.admin))])
        #expect(acceptedVersions(decision) == [.user(People.admin): 1, .user(People.agent): 2])
        expectEvents(
            s.when(.updateProfile(UpdateProfile(userId: People.pendingAgent, fullName: "P. Rao")), actor: People.admin),
            [.profileUpdated(ProfileUpdated(userId: People.pendingAgent, fullName: "P. Rao", updatedBy: People.admin))])
        expectEvents(
            s.when(.updateProfile(UpdateProfile(userId: People.admin, fullName: "Root Admin")), actor: People.admin),
            [.profileUpdated(ProfileUpdated(userId: People.admin, fullName: "Root Admin", updatedBy: People.admin))])
    }

    @Test func agentsUpdateOnlyTheirOwnProfile() {
        var s = DomainScenario.lending()
        withUnapprovedAdmin(&s)
        let update = Command.updateProfile(UpdateProfile(userId: People.agent, fullName: "Someone Else"))
        expectRefusal(s.decide(update, actor: People.otherAgent), .forbidden, "NOT_OWN_PROFILE")
        expectRefusal(s.decide(update, actor: People.pendingAgent), .forbidden, "NOT_OWN_PROFILE")
        // Only an approved admin acts for others.
        expectRefusal(s.decide(update, actor: unapprovedAdmin), .forbidden, "NOT_OWN_PROFILE")
        expectRefusal(s.decide(update, actor: "ghost"), .forbidden, "UNKNOWN_ACTOR")
    }

    @Test func updatingAnUnknownUserIsNotFound() {
        let s = DomainScenario.lending()
        expectRefusal(
            s.decide(.updateProfile(UpdateProfile(userId: "user-404", fullName: "Nobody")), actor: People.admin), .notFound,
            "USER_NOT_FOUND")
    }

    @Test func anUpdateChangesSomething() {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(.updateProfile(UpdateProfile(userId: People.agent)), actor: People.agent), [("payload", "NO_CHANGES")])
        expectInvalid(
            s.decide(
                type: "UpdateProfile",
                payload: [
                    "userId": .string(People.agent), "fullName": .null, "phone": .null, "address": .null, "dateOfBirth": .null,
                ], actor: People.agent),
            [("payload", "NO_CHANGES")])
    }

    @Test func aBirthDateIsNotInTheFuture() {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(.updateProfile(UpdateProfile(userId: People.agent, dateOfBirth: "2026-11-21")), actor: People.agent),
            [("dateOfBirth", "FUTURE_DATE")])
        expectInvalid(
            s.decide(.updateProfile(UpdateProfile(userId: People.agent, dateOfBirth: "2090-01-01")), actor: People.agent),
            [("dateOfBirth", "FUTURE_DATE")])
    }

    @Test func aBirthDateIsNotBefore1900() {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(.updateProfile(UpdateProfile(userId: People.agent, dateOfBirth: "1899-12-31")), actor: People.agent),
            [("dateOfBirth", "OUT_OF_RANGE")])
        expectInvalid(
            s.decide(.updateProfile(UpdateProfile(userId: People.agent, dateOfBirth: "1066-10-14")), actor: People.agent),
            [("dateOfBirth", "OUT_OF_RANGE")])
    }

    @Test(arguments: ["1900-01-01", "2026-11-20"])
    func birthDatesAtTheLimitsAreAccepted(birthDate: String) {
        var s = DomainScenario.lending()
        expectEvents(
            s.when(.updateProfile(UpdateProfile(userId: People.agent, dateOfBirth: PersonalData(birthDate))), actor: People.agent),
            [
                .profileUpdated(
                    ProfileUpdated(userId: People.agent, dateOfBirth: PersonalData(birthDate), updatedBy: People.agent))
            ])
    }

    @Test(arguments: ["20-11-1990", "1990/11/20", "1990-02-30", "1990-13-01", "yesterday"])
    func aBirthDateIsACalendarDate(birthDate: String) {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(.updateProfile(UpdateProfile(userId: People.agent, dateOfBirth: PersonalData(birthDate))), actor: People.agent),
            [("dateOfBirth", "INVALID_FORMAT")])
    }

    @Test(arguments: ["12345", "phone", "+91-98450-1234x", "98450 12345 67890 1", "+", "91+9845012345", "-9845012345"])
    func aPhoneMustLookLikeOne(phone: String) {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(.updateProfile(UpdateProfile(userId: People.agent, phone: PersonalData(phone))), actor: People.agent),
            [("phone", "INVALID_FORMAT")])
    }

    @Test func everyProblemOfAProfileUpdateIsListed() {
        let s = DomainScenario.lending()
        expectInvalid(
            s.decide(
                .updateProfile(
                    UpdateProfile(
                        userId: "agent 7", fullName: "  ", phone: "12", address: "Line\u{0}One", dateOfBirth: "2030-01-01")),
                actor: People.agent),
            [
                ("userId", "INVALID_IDENTIFIER"), ("fullName", "EMPTY"), ("phone", "INVALID_FORMAT"),
                ("address", "CONTROL_CHARACTER"), ("dateOfBirth", "FUTURE_DATE"),
            ])
        expectInvalid(
            s.decide(
                .updateProfile(UpdateProfile(userId: People.agent, fullName: PersonalData(String(repeating: "n", count: 201)))),
                actor: People.agent),
            [("fullName", "TOO_LONG")])
    }

    @Test func anErasedUsersProfileIsNotWrittenAgain() {
        var s = DomainScenario.lending()
        s.given(
            .personalDataErased(
                PersonalDataErased(subjectId: People.agent, kind: .user, erasedBy: People.admin, reason: "asked to be forgotten")))
        let update = Command.updateProfile(UpdateProfile(userId: People.agent, fullName: "Ravi"))
        expectRefusal(s.decide(update, actor: People.agent), .rejected, "SUBJECT_ERASED")
        expectRefusal(s.decide(update, actor: People.admin), .rejected, "SUBJECT_ERASED")
    }
}
