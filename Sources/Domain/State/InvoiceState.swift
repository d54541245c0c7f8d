import Events
import StrataCore

/// An invoice (`invoice-<id>`): what it is owed and what it has been paid.
public struct InvoiceState: Sendable, Hashable {
    public var invoiceId: String
    public var status: InvoiceStatus
    public var issueDate: LocalDate
    public var totalCents: Int64
    public var paidCents: Int64 = 0
    public var createdBy: String
    /// Payment ids already recorded on this invoice (a retried payment is refused).
    public var paymentIds: Set<String> = []

    public init(invoiceId: String, status: InvoiceStatus, issueDate: LocalDate, totalCents: Int64, createdBy: String) {
        self.invoiceId = invoiceId
        self.status = status
        self.issueDate = issueDate
        self.totalCents = totalCents
        self.createdBy = createdBy
    }

    public var balanceCents: Int64 { totalCents - paidCents }

    public static func evolve(_ state: InvoiceState?, _ event: StrataEvent) -> InvoiceState? {
        switch event {
        case .invoiceCreated(let e):
            return InvoiceState(
                invoiceId: e.invoiceId, status: .issued, issueDate: e.issueDate, totalCents: e.totals.totalCents,
                createdBy: e.createdBy)
        case .invoicePaymentRecorded(let e):
            guard var invoice = state else { return nil }
            invoice.paidCents = e.paidTotalCents
            invoice.status = e.status
            invoice.paymentIds.insert(e.paymentId)
            return invoice
        case .invoicePaid:
            guard var invoice = state else { return nil }
            invoice.status = .paid
            return invoice
        case .invoiceCancelled:
            guard var invoice = state else { return nil }
            invoice.status = .cancelled
            return invoice
        default:
            return state
        }
    }
}

/// An invoice numbering series (`invoiceseries-<series>`): the last number given out.
/// The stream's version equals `lastSequence`, one event per number.
public struct InvoiceSeriesState: Sendable, Hashable {
    public var lastSequence: Int64 = 0

    public init() {}

    public static func evolve(_ state: InvoiceSeriesState, _ event: StrataEvent) -> InvoiceSeriesState {
        guard case .invoiceNumberAllocated(let e) = event else { return state }
        var series = state
        series.lastSequence = e.sequence
        return series
    }
}

/// An invoice customer (`party-<id>`). Parties have no stream of their own until they are
/// erased; that they exist at all is known from the `Directory`.
public struct PartyState: Sendable, Hashable {
    public var erased = false

    public init() {}

    public static func evolve(_ state: PartyState, _ event: StrataEvent) -> PartyState {
        guard case .personalDataErased = event else { return state }
        var party = state
        party.erased = true
        return party
    }
}
