import Events

/// A cash-out (`cashout-<id>`) from request to an admin's decision.
public struct CashoutState: Sendable, Hashable {
    public enum Status: Sendable, Hashable {
        case pending, approved, rejected
    }

    public var cashoutId: String
    public var agentId: String
    public var amountCents: Int64
    public var status: Status

    public init(cashoutId: String, agentId: String, amountCents: Int64, status: Status) {
        self.cashoutId = cashoutId
        self.agentId = agentId
        self.amountCents = amountCents
        self.status = status
    }

    public static func evolve(_ state: CashoutState?, _ event: StrataEvent) -> CashoutState? {
        switch event {
        case .cashoutRequested(let e):
            return CashoutState(cashoutId: e.cashoutId, agentId: e.agentId, amountCents: e.amountCents, status: .pending)
        case .cashoutApproved:
            guard var cashout = state else { return nil }
            cashout.status = .approved
            return cashout
        case .cashoutRejected:
            guard var cashout = state else { return nil }
            cashout.status = .rejected
            return cashout
        default:
            return state
        }
    }
}
