import Events

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
