// Stream `invoiceseries-<series>`: gapless invoice numbering, one event per number.

/// The next number of a series was given to an invoice. The stream's version equals
/// `sequence`, so optimistic concurrency on it keeps numbers unique and gapless.
public struct InvoiceNumberAllocated: DomainEvent, Hashable {
    public static let eventType = "InvoiceNumberAllocated"
    public static let schemaVersion = 1

    public var series: String
    /// 1, 2, 3, … within the series.
    public var sequence: Int64
    /// The formatted number ("INV-000001").
    public var invoiceNumber: String
    public var invoiceId: String

    public init(series: String, sequence: Int64, invoiceNumber: String, invoiceId: String) {
        self.series = series
        self.sequence = sequence
        self.invoiceNumber = invoiceNumber
        self.invoiceId = invoiceId
    }
}
