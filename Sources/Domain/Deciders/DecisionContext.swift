import Events
import StrataCore

/// The limits an operator may configure. The defaults are DOMAIN's.
public struct DomainConfiguration: Sendable, Hashable, Codable {
    /// The largest principal a loan may ask for.
    public var maximumPrincipalCents: Int64 = 100_000_000
    /// The smallest cash-out an agent may request.
    public var minimumCashoutCents: Int64 = 10_000
    /// The GST slabs an invoice line's tax rate must be one of.
    public var taxSlabsBp: [Int] = [0, 500, 1_200, 1_800, 2_800]
    /// The commission rate until an admin sets a global default.
    public var defaultCommissionRateBp: Int = 1_000
    /// How far back a loan request may be dated (entering paper records).
    public var maximumBackdatingDays: Int = 366
    /// The invoice numbering series used when a command names none.
    public var defaultInvoiceSeries: String = "INV"

    public init() {}
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
