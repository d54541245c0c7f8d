import Events

/// An agent's earnings ledger (`agent-<id>`): commission in, cash-outs set aside.
public struct EarningsState: Sendable, Hashable {
    public var earnedCents: Int64 = 0
    /// Set aside by cash-out requests, pending or approved.
    public var reservedCents: Int64 = 0
    /// Given back by rejected cash-outs.
    public var releasedCents: Int64 = 0

    public init() {}

    /// What the agent may still take out: earned − cashed out − pending.
    public var collectibleCents: Int64 { earnedCents - reservedCents + releasedCents }

    public static func evolve(_ state: EarningsState, _ event: StrataEvent) -> EarningsState {
        var ledger = state
        switch event {
        case .commissionEarned(let e): ledger.earnedCents += e.commissionCents
        case .earningsReserved(let e): ledger.reservedCents += e.amountCents
        case .earningsReleased(let e): ledger.releasedCents += e.amountCents
        default: break
        }
        return ledger
    }
}
