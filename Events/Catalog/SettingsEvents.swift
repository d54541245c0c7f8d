// Stream `settings-global`: configuration admins change at run time.

/// An admin set the commission rate of one agent, or the global default (initially 10%)
/// when `agentId` is absent. Applies to payments received from then on.
public struct CommissionRateChanged: DomainEvent, Hashable {
    public static let eventType = "CommissionRateChanged"
    public static let schemaVersion = 1

    /// Absent: the global default for agents without a rate of their own.
    public var agentId: String?
    public var rateBp: Int
    public var changedBy: String

    public init(agentId: String? = nil, rateBp: Int, changedBy: String) {
        self.agentId = agentId
        self.rateBp = rateBp
        self.changedBy = changedBy
    }
}
