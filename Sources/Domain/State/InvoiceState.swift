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
