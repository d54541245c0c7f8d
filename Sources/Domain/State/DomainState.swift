import Events
import StrataCore

/// The state a decision reads: the aggregates of the streams the command declares
/// (`Command.reads`), each folded from its events, plus the `Directory`.
///
/// The command service keeps one of these as its bounded cache (folding a stream from the
/// store on a miss, forgetting streams to stay bounded); tests build one by folding only
/// the declared streams, so a decider that reads an undeclared stream fails its tests.
/// A stream that was never folded reads as empty (version 0, no aggregate).
public struct DomainState: Sendable {
    public private(set) var users: [String: UserState] = [:]
    public private(set) var accounts: [String: AccountState] = [:]
    public private(set) var loans: [String: LoanState] = [:]
    public private(set) var earnings: [String: EarningsState] = [:]
    public private(set) var cashouts: [String: CashoutState] = [:]
    public private(set) var invoices: [String: InvoiceState] = [:]
    public private(set) var series: [String: InvoiceSeriesState] = [:]
    public private(set) var parties: [String: PartyState] = [:]
    public private(set) var settings = SettingsState()
    public private(set) var directory: Directory
    /// Number of events folded per stream: the stream's version.
    public private(set) var versions: [StreamRef: Int64] = [:]

    public init(directory: Directory = Directory()) {
        self.directory = directory
    }

    /// A stream's version as folded here: its number of events, 0 for an empty stream.
    public func version(of stream: StreamRef) -> Int64 {
        versions[stream] ?? 0
    }

    /// Folds one event into its stream's aggregate (and the directory). Events must come
    /// in stream order, each exactly once.
    public mutating func apply(_ event: StrataEvent) {
        let stream = event.stream
        switch stream {
        case .user(let id): users[id] = UserState.evolve(users[id], event)
        case .account(let id): accounts[id] = AccountState.evolve(accounts[id], event)
        case .loan(let id): loans[id] = LoanState.evolve(loans[id], event)
        case .agent(let id): earnings[id] = EarningsState.evolve(earnings[id] ?? EarningsState(), event)
        case .cashout(let id): cashouts[id] = CashoutState.evolve(cashouts[id], event)
        case .invoice(let id): invoices[id] = InvoiceState.evolve(invoices[id], event)
        case .invoiceSeries(let id): series[id] = InvoiceSeriesState.evolve(series[id] ?? InvoiceSeriesState(), event)
        case .party(let id): parties[id] = PartyState.evolve(parties[id] ?? PartyState(), event)
        case .settings: settings = SettingsState.evolve(settings, event)
        }
        versions[stream, default: 0] += 1
        directory.apply(event)
    }

    /// Folds a stream whose aggregate is its last event alone (`isFoldedFromItsLastEvent`) from
    /// that event, the stream's `version`th: as folding every event before it would.
    public mutating func apply(last event: StrataEvent, ofStreamAt version: Int64) {
        precondition(event.stream.isFoldedFromItsLastEvent, "\(event.stream) is folded from every event")
        apply(event)
        versions[event.stream] = version
    }

    /// Takes `stream`'s aggregate and version from `other`, as if its events had been folded
    /// here (the directory stays as it is).
    public mutating func take(_ stream: StreamRef, from other: DomainState) {
        switch stream {
        case .user(let id): users[id] = other.users[id]
        case .account(let id): accounts[id] = other.accounts[id]
        case .loan(let id): loans[id] = other.loans[id]
        case .agent(let id): earnings[id] = other.earnings[id]
        case .cashout(let id): cashouts[id] = other.cashouts[id]
        case .invoice(let id): invoices[id] = other.invoices[id]
        case .invoiceSeries(let id): series[id] = other.series[id]
        case .party(let id): parties[id] = other.parties[id]
        case .settings: settings = other.settings
        }
        versions[stream] = other.versions[stream]
    }

    /// Records that an invoice names `partyId` (`Directory.addParty`).
    public mutating func addParty(_ partyId: String) {
        directory.addParty(partyId)
    }

    /// Lets the directory's parties go (`Directory.forgetParties`).
    public mutating func forgetParties() {
        directory.forgetParties()
    }

    /// This state with only the aggregates of the streams `keep` names, and the whole directory.
    public func keeping(_ keep: (StreamRef) -> Bool) -> DomainState {
        var kept = DomainState(directory: directory)
        for stream in versions.keys where keep(stream) { kept.take(stream, from: self) }
        return kept
    }

    /// Drops a stream's aggregate, as if it had never been folded (a cache eviction, or a
    /// failed commit whose effects must not be seen). The directory is kept: a caller
    /// undoing a failed commit puts back the directory it had before the batch.
    public mutating func forget(_ stream: StreamRef) {
        switch stream {
        case .user(let id): users[id] = nil
        case .account(let id): accounts[id] = nil
        case .loan(let id): loans[id] = nil
        case .agent(let id): earnings[id] = nil
        case .cashout(let id): cashouts[id] = nil
        case .invoice(let id): invoices[id] = nil
        case .invoiceSeries(let id): series[id] = nil
        case .party(let id): parties[id] = nil
        case .settings: settings = SettingsState()
        }
        versions[stream] = nil
    }
}
