import Events
import StrataCore

/// An admin sets one agent's commission rate, or the global default without `agentId`.
public struct SetCommissionRate: CommandPayload {
    public static let commandType = "SetCommissionRate"
    public var agentId: String?
    public var rateBp: Int

    public init(agentId: String? = nil, rateBp: Int) {
        self.agentId = agentId
        self.rateBp = rateBp
    }

    public init?(reading r: inout PayloadReader) {
        let agentId = r.identifier("agentId", required: false)
        let rate = r.int("rateBp", in: 0...10_000)
        guard let rate else { return nil }
        self.init(agentId: agentId, rateBp: rate)
    }
}

/// An agent asks to take out part of their collectible earnings.
public struct RequestCashout: CommandPayload {
    public static let commandType = "RequestCashout"
    public static let belowMinimum = "BELOW_MINIMUM_CASHOUT"
    public var cashoutId: String
    public var agentId: String
    public var amountCents: Int64

    public init(cashoutId: String, agentId: String, amountCents: Int64) {
        self.cashoutId = cashoutId
        self.agentId = agentId
        self.amountCents = amountCents
    }

    public init?(reading r: inout PayloadReader) {
        let minimum = r.context.configuration.minimumCashoutCents
        let cashoutId = r.identifier("cashoutId")
        let agentId = r.identifier("agentId")
        let amount = r.integer(
            "amountCents", in: max(1, minimum)...PayloadLimits.maximumAmountCents, low: RequestCashout.belowMinimum)
        guard let cashoutId, let agentId, let amount else { return nil }
        self.init(cashoutId: cashoutId, agentId: agentId, amountCents: amount)
    }
}

/// An admin approves a pending cash-out.
public struct ApproveCashout: CommandPayload {
    public static let commandType = "ApproveCashout"
    public var cashoutId: String

    public init(cashoutId: String) {
        self.cashoutId = cashoutId
    }

    public init?(reading r: inout PayloadReader) {
        guard let cashoutId = r.identifier("cashoutId") else { return nil }
        self.init(cashoutId: cashoutId)
    }
}

/// An admin refuses a pending cash-out; the amount is collectible again.
public struct RejectCashout: CommandPayload {
    public static let commandType = "RejectCashout"
    public var cashoutId: String
    public var reason: String

    public init(cashoutId: String, reason: String) {
        self.cashoutId = cashoutId
        self.reason = reason
    }

    public init?(reading r: inout PayloadReader) {
        let cashoutId = r.identifier("cashoutId")
        let reason = r.text("reason", maximumLength: PayloadLimits.reasonLength, multiline: true)
        guard let cashoutId, let reason else { return nil }
        self.init(cashoutId: cashoutId, reason: reason)
    }
}
