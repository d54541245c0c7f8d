import Events
import StrataCore

/// The domain's parameters; the defaults are DOMAIN's. The first three are the limits DOMAIN
/// calls configured, which an operator sets in the config file (`domain`); the others are
/// fixed rules, held here so that tests can vary them.
public struct DomainConfiguration: Sendable, Hashable, Codable {
    /// The largest principal a loan may ask for; within `principalLimitRange`.
    public var maximumPrincipalCents: Int64 = 100_000_000
    /// The smallest cash-out an agent may request; within `cashoutLimitRange`.
    public var minimumCashoutCents: Int64 = 10_000
    /// The GST slabs an invoice line's tax rate must be one of: distinct, each within
    /// `taxSlabRange`, at least one.
    public var taxSlabsBp: [Int] = [0, 500, 1_200, 1_800, 2_800]
    /// The commission rate until an admin sets a global default.
    public var defaultCommissionRateBp: Int = 1_000
    /// How far back a loan request may be dated (entering paper records).
    public var maximumBackdatingDays: Int = 366
    /// The invoice numbering series used when a command names none.
    public var defaultInvoiceSeries: String = "INV"

    public init() {}

    /// What the maximum principal may be set to. Any money field is capped at
    /// `PayloadLimits.maximumAmountCents`, so a larger maximum would change nothing; below
    /// 1 no loan could be requested.
    public static let principalLimitRange: ClosedRange<Int64> = 1...PayloadLimits.maximumAmountCents
    /// What the minimum cash-out may be set to: a cash-out is a positive amount, and one above
    /// the cap on any amount could never be requested.
    public static let cashoutLimitRange: ClosedRange<Int64> = 1...PayloadLimits.maximumAmountCents
    /// What a tax slab may be: a rate an invoice line can carry (0–100 %).
    public static let taxSlabRange: ClosedRange<Int> = InvoiceLineRequest.taxRateRangeBp
}

/// What a decision may know besides the command and the state: "now", configuration,
/// and what the sending key allows. `decide` never reads a clock; the caller passes now.
public struct DecisionContext: Sendable, Hashable {
    public var now: Timestamp
    public var configuration: DomainConfiguration
    /// The actor roles the sending key may act for (a key narrowed with `"roles"` in the
    /// key file); nil when the key is not narrowed.
    public var permittedRoles: Set<Role>?

    public init(now: Timestamp, configuration: DomainConfiguration = DomainConfiguration(), permittedRoles: Set<Role>? = nil) {
        self.now = now
        self.configuration = configuration
        self.permittedRoles = permittedRoles
    }

    /// The business date of `now`: its UTC calendar date.
    public var today: LocalDate { LocalDate(now) }
}
