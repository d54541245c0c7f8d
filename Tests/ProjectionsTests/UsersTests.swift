import Events
import Projections
import StrataCore
import StrataTesting
import Testing

@Suite struct UsersTests {
    private typealias F = LendingFixtures
    private let columns = """
        SELECT user_id, username, email, role, status, full_name, phone, address, date_of_birth, registered_at,
               registered_by, decided_by, decided_at, rejection_reason
        FROM users ORDER BY user_id
        """

    @Test func anAgentSignsUpPendingAndAnAdminApprovesIt() throws {
        let h = try ProjectionHarness([Users()])
        try h.given(F.agentRegistered("agent-1", username: "ravi"), stream: "user-agent-1", actor: "agent-1")
        #expect(
            try h.rows(columns) == [
                [
                    "agent-1", "ravi", "agent-1@example.com", "AGENT", "PENDING", nil, nil, nil, nil, F.recordedAt(1),
                    "agent-1", nil, nil, nil,
                ]
            ])

        try h.given(F.agentApproved("agent-1", at: "2026-11-02T09:30:00.000Z"), stream: "user-agent-1")
        #expect(
            try h.rows(columns) == [
                [
                    "agent-1", "ravi", "agent-1@example.com", "AGENT", "APPROVED", nil, nil, nil, nil, F.recordedAt(1),
                    "agent-1", "admin-1", "2026-11-02T09:30:00.000Z", nil,
                ]
            ])
    }

    @Test func anAdminIsApprovedAtOnceAndARejectedAgentKeepsTheReason() throws {
        let h = try ProjectionHarness([Users()])
        try h.given(
            .userRegistered(
                UserRegistered(userId: "admin-1", username: "root", email: "root@example.com", role: .admin,
                    status: .approved)),
            stream: "user-admin-1", actor: "operator")
        try h.given(F.agentRegistered("agent-2"), stream: "user-agent-2", actor: "agent-2")
        try h.given(
            .agentRejected(AgentRejected(agentId: "agent-2", rejectedBy: "admin-1", reason: "No ID documents")),
            stream: "user-agent-2")
        #expect(
            try h.rows(columns) == [
                [
                    "admin-1", "root", "root@example.com", "ADMIN", "APPROVED", nil, nil, nil, nil, F.recordedAt(1),
                    "operator", nil, nil, nil,
                ],
                [
                    "agent-2", "agent-2", "agent-2@example.com", "AGENT", "REJECTED", nil, nil, nil, nil,
                    F.recordedAt(2), "agent-2", "admin-1", F.recordedAt(3), "No ID documents",
                ],
            ])
        #expect(
            try h.rows("SELECT role, status, count(*) FROM users GROUP BY role, status ORDER BY role")
                == [["ADMIN", "APPROVED", 1], ["AGENT", "REJECTED", 1]])
    }

    @Test func aProfileUpdateChangesOnlyTheFieldsItCarries() throws {
        let h = try ProjectionHarness([Users()])
        try h.given(F.agentRegistered("agent-1"), stream: "user-agent-1", actor: "agent-1")
        try h.given(
            .profileUpdated(
                ProfileUpdated(
                    userId: "agent-1", fullName: "Ravi Kumar", phone: "+919811111111", address: "4 Hill St",
                    dateOfBirth: "1990-04-01", updatedBy: "agent-1")),
            stream: "user-agent-1", actor: "agent-1")
        try h.given(
            .profileUpdated(ProfileUpdated(userId: "agent-1", phone: "+919822222222", updatedBy: "admin-1")),
            stream: "user-agent-1")
        #expect(
            try h.rows("SELECT full_name, phone, address, date_of_birth, status FROM users")
                == [["Ravi Kumar", "+919822222222", "4 Hill St", "1990-04-01", "PENDING"]])
    }

    @Test func erasingAUserBlanksItsPersonalColumnsOnly() throws {
        let h = try ProjectionHarness([Users()])
        try h.given(F.agentRegistered("agent-1", username: "ravi"), stream: "user-agent-1", actor: "agent-1")
        try h.given(
            .profileUpdated(ProfileUpdated(userId: "agent-1", fullName: "Ravi Kumar", updatedBy: "agent-1")),
            stream: "user-agent-1", actor: "agent-1")
        try h.given(F.agentRegistered("agent-2"), stream: "user-agent-2", actor: "agent-2")
        try h.given(
            .personalDataErased(
                PersonalDataErased(subjectId: "agent-1", kind: .user, erasedBy: "admin-1", reason: "asked to")),
            stream: "user-agent-1")
        #expect(
            try h.rows("SELECT user_id, username, email, full_name, phone, status FROM users ORDER BY user_id") == [
                ["agent-1", "ravi", "[erased]", "[erased]", nil, "PENDING"],
                ["agent-2", "agent-2", "agent-2@example.com", nil, nil, "PENDING"],
            ])
    }

    @Test func approvingAnUnknownAgentStopsTheProjection() throws {
        let h = try ProjectionHarness([Users()])
        try h.given(F.agentRegistered("agent-1"), stream: "user-agent-1", actor: "agent-1")
        try h.given(F.agentApproved("agent-9"), stream: "user-agent-9")
        let stop = try #require(h.database.stop)
        #expect(stop.position == 2 && stop.error.contains("agent-9"))
        #expect(try h.rows("SELECT status FROM users") == [["PENDING"]])
    }
}
