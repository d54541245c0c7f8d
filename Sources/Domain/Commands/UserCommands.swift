import Events
import StrataCore

/// An agent signs up (actor = the new user), or an approved admin adds an admin.
public struct RegisterUser: CommandPayload {
    public static let commandType = "RegisterUser"
    public var userId: String
    public var username: String
    public var email: PersonalData
    public var role: Role

    public init(userId: String, username: String, email: PersonalData, role: Role) {
        self.userId = userId
        self.username = username
        self.email = email
        self.role = role
    }

    public init?(reading r: inout PayloadReader) {
        let userId = r.identifier("userId")
        let username = r.string("username") { FieldRules.isValidUsername($0) ? nil : PayloadReader.Reason.invalidFormat }
        let email = r.email("email")
        let role = r.choice("role", Role.self)
        guard let userId, let username, let email, let role else { return nil }
        self.init(userId: userId, username: username, email: email, role: role)
    }
}

/// An admin lets a pending agent work.
public struct ApproveAgent: CommandPayload {
    public static let commandType = "ApproveAgent"
    public var agentId: String

    public init(agentId: String) {
        self.agentId = agentId
    }

    public init?(reading r: inout PayloadReader) {
        guard let agentId = r.identifier("agentId") else { return nil }
        self.init(agentId: agentId)
    }
}

/// An admin turns a pending agent away.
public struct RejectAgent: CommandPayload {
    public static let commandType = "RejectAgent"
    public var agentId: String
    public var reason: String

    public init(agentId: String, reason: String) {
        self.agentId = agentId
        self.reason = reason
    }

    public init?(reading r: inout PayloadReader) {
        let agentId = r.identifier("agentId")
        let reason = r.text("reason", maximumLength: PayloadLimits.reasonLength, multiline: true)
        guard let agentId, let reason else { return nil }
        self.init(agentId: agentId, reason: reason)
    }
}

/// A user (or an admin for them) changes profile details; at least one field.
public struct UpdateProfile: CommandPayload {
    public static let commandType = "UpdateProfile"
    public var userId: String
    public var fullName: PersonalData?
    public var phone: PersonalData?
    public var address: PersonalData?
    /// `YYYY-MM-DD`, not in the future, not before 1900.
    public var dateOfBirth: PersonalData?

    public init(
        userId: String, fullName: PersonalData? = nil, phone: PersonalData? = nil, address: PersonalData? = nil,
        dateOfBirth: PersonalData? = nil
    ) {
        self.userId = userId
        self.fullName = fullName
        self.phone = phone
        self.address = address
        self.dateOfBirth = dateOfBirth
    }

    public init?(reading r: inout PayloadReader) {
        let userId = r.identifier("userId")
        let fullName = r.personal("fullName", maximumLength: PayloadLimits.nameLength, required: false)
        let phone = r.phone("phone", required: false)
        let address = r.personal("address", maximumLength: PayloadLimits.addressLength, multiline: true, required: false)
        let hasBirthDate = r.has("dateOfBirth")
        let birthDate = r.pastDate("dateOfBirth", required: false)
        if let birthDate, birthDate < LocalDate(year: 1900, month: 1, day: 1)! {
            r.report("dateOfBirth", PayloadReader.Reason.outOfRange)
        }
        let changes = [r.has("fullName"), r.has("phone"), r.has("address"), hasBirthDate]
        if !changes.contains(true) { r.report("payload", PayloadReader.Reason.noChanges) }
        guard let userId else { return nil }
        self.init(
            userId: userId, fullName: fullName, phone: phone, address: address,
            dateOfBirth: birthDate.map { PersonalData($0.description) })
    }
}
