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

/// A cash-out request set part of the agent's collectible earnings aside. Appended to the
/// agent's stream with the `CashoutRequested` of the cash-out's own stream, so that the
/// earnings stream alone tells what the agent may still take out (and its version guards
/// two requests racing for the same money).
public struct EarningsReserved: DomainEvent, Hashable {
    public static let eventType = "EarningsReserved"
    public static let schemaVersion = 1

    public var agentId: String
    public var cashoutId: String
    public var amountCents: Int64

    public init(agentId: String, cashoutId: String, amountCents: Int64) {
        self.agentId = agentId
        self.cashoutId = cashoutId
        self.amountCents = amountCents
    }
}

/// A rejected cash-out gave its reservation back: the amount is collectible again.
/// Appended to the agent's stream with the `CashoutRejected` of the cash-out's stream.
public struct EarningsReleased: DomainEvent, Hashable {
    public static let eventType = "EarningsReleased"
    public static let schemaVersion = 1

    public var agentId: String
    public var cashoutId: String
    public var amountCents: Int64

    public init(agentId: String, cashoutId: String, amountCents: Int64) {
        self.agentId = agentId
        self.cashoutId = cashoutId
        self.amountCents = amountCents
    }
}
