// Stream `agent-<agentId>`: an agent's earnings (cash-outs have their own streams).

/// A loan payment earned the loan's agent a commission on the interest it collected.
/// Appended with the PaymentReceived that caused it; never written for a zero commission.
public struct CommissionEarned: DomainEvent, Hashable {
    public static let eventType = "CommissionEarned"
    public static let schemaVersion = 1

    public var agentId: String
    public var loanId: String
    public var paymentId: String
    /// The interest part of the payment (its allocation's interestCents).
    public var interestCents: Int64
    /// The rate in force: the agent's own, else the global default.
    public var rateBp: Int
    /// round(interestCents × rateBp / 10000), half away from zero.
    public var commissionCents: Int64

    public init(
        agentId: String, loanId: String, paymentId: String, interestCents: Int64, rateBp: Int, commissionCents: Int64
    ) {
        self.agentId = agentId
        self.loanId = loanId
        self.paymentId = paymentId
        self.interestCents = interestCents
        self.rateBp = rateBp
        self.commissionCents = commissionCents
    }
}
