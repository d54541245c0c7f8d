import StrataCore

// Stream `user-<userId>`: who may use the system, and as what.

/// A user joined: an agent signing up (PENDING until an admin decides), or an admin
/// created by another admin or by the operator bootstrap (APPROVED at once).
public struct UserRegistered: DomainEvent, Hashable {
    public static let eventType = "UserRegistered"
    public static let schemaVersion = 1

    public var userId: String
    /// A handle, unique across users; not personal data.
    public var username: String
    public var email: PersonalData
    public var role: Role
    /// Decided from the role: PENDING for agents, APPROVED for admins.
    public var status: UserStatus

    public init(userId: String, username: String, email: PersonalData, role: Role, status: UserStatus) {
        self.userId = userId
        self.username = username
        self.email = email
        self.role = role
        self.status = status
    }
}

/// An admin let a pending agent start working (open accounts, request loans, take payments).
public struct AgentApproved: DomainEvent, Hashable {
    public static let eventType = "AgentApproved"
    public static let schemaVersion = 1

    public var agentId: String
    public var approvedBy: String
    /// The instant of the decision (the command service's "now").
    public var approvedAt: Timestamp

    public init(agentId: String, approvedBy: String, approvedAt: Timestamp) {
        self.agentId = agentId
        self.approvedBy = approvedBy
        self.approvedAt = approvedAt
    }
}

/// An admin turned a pending agent away.
public struct AgentRejected: DomainEvent, Hashable {
    public static let eventType = "AgentRejected"
    public static let schemaVersion = 1

    public var agentId: String
    public var rejectedBy: String
    public var reason: String

    public init(agentId: String, rejectedBy: String, reason: String) {
        self.agentId = agentId
        self.rejectedBy = rejectedBy
        self.reason = reason
    }
}

/// A user's profile details changed. Only the fields that changed are present.
public struct ProfileUpdated: DomainEvent, Hashable {
    public static let eventType = "ProfileUpdated"
    public static let schemaVersion = 1

    public var userId: String
    public var fullName: PersonalData?
    public var phone: PersonalData?
    public var address: PersonalData?
    /// `YYYY-MM-DD`, typed as personal data (not `LocalDate`) so that it can be sealed.
    public var dateOfBirth: PersonalData?
    /// The user themself or an admin.
    public var updatedBy: String

    public init(
        userId: String, fullName: PersonalData? = nil, phone: PersonalData? = nil, address: PersonalData? = nil,
        dateOfBirth: PersonalData? = nil, updatedBy: String
    ) {
        self.userId = userId
        self.fullName = fullName
        self.phone = phone
        self.address = address
        self.dateOfBirth = dateOfBirth
        self.updatedBy = updatedBy
    }
}
