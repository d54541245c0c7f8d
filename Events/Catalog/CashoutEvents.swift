// Stream `cashout-<cashoutId>`: an agent taking earned commission out.

/// An agent asked to be paid part of their collectible earnings; it waits for an admin.
public struct CashoutRequested: DomainEvent, Hashable {
    public static let eventType = "CashoutRequested"
    public static let schemaVersion = 1

    public var cashoutId: String
    public var agentId: String
    public var amountCents: Int64
    public var requestedBy: String

    public init(cashoutId: String, agentId: String, amountCents: Int64, requestedBy: String) {
        self.cashoutId = cashoutId
        self.agentId = agentId
        self.amountCents = amountCents
        self.requestedBy = requestedBy
    }
}

/// An admin approved a pending cash-out: the amount counts as cashed out.
public struct CashoutApproved: DomainEvent, Hashable {
    public static let eventType = "CashoutApproved"
    public static let schemaVersion = 1

    public var cashoutId: String
    /// Copied from the request so earnings read models need no lookup.
    public var agentId: String
    public var amountCents: Int64
    public var approvedBy: String

    public init(cashoutId: String, agentId: String, amountCents: Int64, approvedBy: String) {
        self.cashoutId = cashoutId
        self.agentId = agentId
        self.amountCents = amountCents
        self.approvedBy = approvedBy
    }
}

/// An admin refused a pending cash-out: the amount is collectible again.
public struct CashoutRejected: DomainEvent, Hashable {
    public static let eventType = "CashoutRejected"
    public static let schemaVersion = 1

    public var cashoutId: String
    /// Copied from the request so earnings read models need no lookup.
    public var agentId: String
    public var amountCents: Int64
    public var rejectedBy: String
    public var reason: String

    public init(cashoutId: String, agentId: String, amountCents: Int64, rejectedBy: String, reason: String) {
        self.cashoutId = cashoutId
        self.agentId = agentId
        self.amountCents = amountCents
        self.rejectedBy = rejectedBy
        self.reason = reason
    }
}
