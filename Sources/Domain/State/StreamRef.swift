import Events
import StrataCore

/// One stream of the domain, by its category and id. Every aggregate lives in one
/// stream: `user-<id>`, `account-<id>`, `loan-<id>`, `agent-<id>` (earnings),
/// `cashout-<id>`, `invoice-<id>`, `invoiceseries-<series>`, `party-<id>` (an invoice
/// customer's erasure), and `settings-global`.
public enum StreamRef: Sendable, Hashable, Comparable, CustomStringConvertible {
    case user(String)
    case account(String)
    case loan(String)
    case agent(String)
    case cashout(String)
    case invoice(String)
    case invoiceSeries(String)
    case party(String)
    case settings

    /// The stream's name in the store (`loan-L1`). The ids come from validated commands
    /// or stored events, so they are valid identifiers.
    public var name: StreamName {
        let (category, id) = parts
        guard let name = StreamName(category: category, id: id) else {
            preconditionFailure("invalid stream id \(id) for category \(category)")
        }
        return name
    }

    public var description: String {
        let (category, id) = parts
        return category + "-" + id
    }

    /// Whether the stream's aggregate is its last event alone, whatever came before: an invoice
    /// series, whose state is the last number given out. Such a stream, one event per invoice, is
    /// folded from its last event and its version (`DomainState.apply(last:ofStreamAt:)`).
    public var isFoldedFromItsLastEvent: Bool {
        if case .invoiceSeries = self { true } else { false }
    }

    /// The stream a store name denotes, or nil for a category the domain does not know.
    public init?(_ name: StreamName) {
        switch name.category {
        case "user": self = .user(name.id)
        case "account": self = .account(name.id)
        case "loan": self = .loan(name.id)
        case "agent": self = .agent(name.id)
        case "cashout": self = .cashout(name.id)
        case "invoice": self = .invoice(name.id)
        case "invoiceseries": self = .invoiceSeries(name.id)
        case "party": self = .party(name.id)
        case "settings" where name.id == "global": self = .settings
        default: return nil
        }
    }

    private var parts: (category: String, id: String) {
        switch self {
        case .user(let id): ("user", id)
        case .account(let id): ("account", id)
        case .loan(let id): ("loan", id)
        case .agent(let id): ("agent", id)
        case .cashout(let id): ("cashout", id)
        case .invoice(let id): ("invoice", id)
        case .invoiceSeries(let id): ("invoiceseries", id)
        case .party(let id): ("party", id)
        case .settings: ("settings", "global")
        }
    }

    public static func < (a: StreamRef, b: StreamRef) -> Bool { a.description < b.description }
}

extension StrataEvent {
    /// The stream this event belongs to. Each event names its aggregate's id, so the
    /// stream follows from the event itself; deciders and tests never pick it by hand.
    public var stream: StreamRef {
        switch self {
        case .userRegistered(let e): .user(e.userId)
        case .agentApproved(let e): .user(e.agentId)
        case .agentRejected(let e): .user(e.agentId)
        case .profileUpdated(let e): .user(e.userId)
        case .accountOpened(let e): .account(e.accountId)
        case .accountUpdated(let e): .account(e.accountId)
        case .accountStatusChanged(let e): .account(e.accountId)
        case .loanRequested(let e): .loan(e.loanId)
        case .loanApproved(let e): .loan(e.loanId)
        case .loanRejected(let e): .loan(e.loanId)
        case .paymentReceived(let e): .loan(e.loanId)
        case .loanClosed(let e): .loan(e.loanId)
        case .commissionEarned(let e): .agent(e.agentId)
        case .earningsReserved(let e): .agent(e.agentId)
        case .earningsReleased(let e): .agent(e.agentId)
        case .cashoutRequested(let e): .cashout(e.cashoutId)
        case .cashoutApproved(let e): .cashout(e.cashoutId)
        case .cashoutRejected(let e): .cashout(e.cashoutId)
        case .commissionRateChanged: .settings
        case .invoiceCreated(let e): .invoice(e.invoiceId)
        case .invoicePaymentRecorded(let e): .invoice(e.invoiceId)
        case .invoicePaid(let e): .invoice(e.invoiceId)
        case .invoiceCancelled(let e): .invoice(e.invoiceId)
        case .invoiceNumberAllocated(let e): .invoiceSeries(e.series)
        case .personalDataErased(let e):
            switch e.kind {
            case .user: .user(e.subjectId)
            case .account: .account(e.subjectId)
            case .party: .party(e.subjectId)
            }
        }
    }
}
