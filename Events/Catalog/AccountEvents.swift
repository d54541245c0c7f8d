import StrataCore

// Stream `account-<accountId>`: borrower accounts, the data subjects agents lend to.

/// A borrower account was opened, assigned to an approved agent, ACTIVE from the start.
public struct AccountOpened: DomainEvent, Hashable {
    public static let eventType = "AccountOpened"
    public static let schemaVersion = 1

    public var accountId: String
    public var name: PersonalData
    public var phone: PersonalData
    public var email: PersonalData?
    public var alternatePhone: PersonalData?
    public var address: PersonalData
    /// The agent who looks after this borrower and earns commission on its loans.
    public var assignedAgentId: String
    public var openedBy: String
    /// Always ACTIVE when written by `OpenAccount`; kept so the event states the decision.
    public var status: AccountStatus

    public init(
        accountId: String, name: PersonalData, phone: PersonalData, email: PersonalData? = nil,
        alternatePhone: PersonalData? = nil, address: PersonalData, assignedAgentId: String, openedBy: String,
        status: AccountStatus
    ) {
        self.accountId = accountId
        self.name = name
        self.phone = phone
        self.email = email
        self.alternatePhone = alternatePhone
        self.address = address
        self.assignedAgentId = assignedAgentId
        self.openedBy = openedBy
        self.status = status
    }
}

/// Some details of a borrower account changed. Only the fields that changed are present.
public struct AccountUpdated: DomainEvent, Hashable {
    public static let eventType = "AccountUpdated"
    public static let schemaVersion = 1

    public var accountId: String
    public var name: PersonalData?
    public var phone: PersonalData?
    public var email: PersonalData?
    public var alternatePhone: PersonalData?
    public var address: PersonalData?
    /// The account moved to another agent (loans already requested keep their agent).
    public var assignedAgentId: String?
    public var updatedBy: String

    public init(
        accountId: String, name: PersonalData? = nil, phone: PersonalData? = nil, email: PersonalData? = nil,
        alternatePhone: PersonalData? = nil, address: PersonalData? = nil, assignedAgentId: String? = nil,
        updatedBy: String
    ) {
        self.accountId = accountId
        self.name = name
        self.phone = phone
        self.email = email
        self.alternatePhone = alternatePhone
        self.address = address
        self.assignedAgentId = assignedAgentId
        self.updatedBy = updatedBy
    }
}

/// An admin activated, deactivated or suspended a borrower account.
public struct AccountStatusChanged: DomainEvent, Hashable {
    public static let eventType = "AccountStatusChanged"
    public static let schemaVersion = 1

    public var accountId: String
    /// The new status.
    public var status: AccountStatus
    public var reason: String
    public var changedBy: String

    public init(accountId: String, status: AccountStatus, reason: String, changedBy: String) {
        self.accountId = accountId
        self.status = status
        self.reason = reason
        self.changedBy = changedBy
    }
}
