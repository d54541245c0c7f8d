import Events
import StrataCore

/// An admin or the assigned agent opens a borrower account.
public struct OpenAccount: CommandPayload {
    public static let commandType = "OpenAccount"
    public var accountId: String
    public var name: PersonalData
    public var phone: PersonalData
    public var email: PersonalData?
    public var alternatePhone: PersonalData?
    public var address: PersonalData
    public var assignedAgentId: String

    public init(
        accountId: String, name: PersonalData, phone: PersonalData, email: PersonalData? = nil,
        alternatePhone: PersonalData? = nil, address: PersonalData, assignedAgentId: String
    ) {
        self.accountId = accountId
        self.name = name
        self.phone = phone
        self.email = email
        self.alternatePhone = alternatePhone
        self.address = address
        self.assignedAgentId = assignedAgentId
    }

    public init?(reading r: inout PayloadReader) {
        let accountId = r.identifier("accountId")
        let name = r.personal("name", maximumLength: PayloadLimits.nameLength)
        let phone = r.phone("phone")
        let email = r.email("email", required: false)
        let alternatePhone = r.phone("alternatePhone", required: false)
        let address = r.personal("address", maximumLength: PayloadLimits.addressLength, multiline: true)
        let assignedAgentId = r.identifier("assignedAgentId")
        guard let accountId, let name, let phone, let address, let assignedAgentId else { return nil }
        self.init(
            accountId: accountId, name: name, phone: phone, email: email, alternatePhone: alternatePhone,
            address: address, assignedAgentId: assignedAgentId)
    }
}

/// An admin or the assigned agent changes account details; only an admin may move the
/// account to another agent. At least one field.
public struct UpdateAccount: CommandPayload {
    public static let commandType = "UpdateAccount"
    public var accountId: String
    public var name: PersonalData?
    public var phone: PersonalData?
    public var email: PersonalData?
    public var alternatePhone: PersonalData?
    public var address: PersonalData?
    public var assignedAgentId: String?

    public init(
        accountId: String, name: PersonalData? = nil, phone: PersonalData? = nil, email: PersonalData? = nil,
        alternatePhone: PersonalData? = nil, address: PersonalData? = nil, assignedAgentId: String? = nil
    ) {
        self.accountId = accountId
        self.name = name
        self.phone = phone
        self.email = email
        self.alternatePhone = alternatePhone
        self.address = address
        self.assignedAgentId = assignedAgentId
    }

    public init?(reading r: inout PayloadReader) {
        let accountId = r.identifier("accountId")
        let changes = ["name", "phone", "email", "alternatePhone", "address", "assignedAgentId"].map { r.has($0) }
        let name = r.personal("name", maximumLength: PayloadLimits.nameLength, required: false)
        let phone = r.phone("phone", required: false)
        let email = r.email("email", required: false)
        let alternatePhone = r.phone("alternatePhone", required: false)
        let address = r.personal("address", maximumLength: PayloadLimits.addressLength, multiline: true, required: false)
        let assignedAgentId = r.identifier("assignedAgentId", required: false)
        if !changes.contains(true) { r.report("payload", PayloadReader.Reason.noChanges) }
        guard let accountId else { return nil }
        self.init(
            accountId: accountId, name: name, phone: phone, email: email, alternatePhone: alternatePhone,
            address: address, assignedAgentId: assignedAgentId)
    }
}

/// An admin activates, deactivates or suspends an account.
public struct ChangeAccountStatus: CommandPayload {
    public static let commandType = "ChangeAccountStatus"
    public var accountId: String
    public var status: AccountStatus
    public var reason: String

    public init(accountId: String, status: AccountStatus, reason: String) {
        self.accountId = accountId
        self.status = status
        self.reason = reason
    }

    public init?(reading r: inout PayloadReader) {
        let accountId = r.identifier("accountId")
        let status = r.choice("status", AccountStatus.self)
        let reason = r.text("reason", maximumLength: PayloadLimits.reasonLength, multiline: true)
        guard let accountId, let status, let reason else { return nil }
        self.init(accountId: accountId, status: status, reason: reason)
    }
}
