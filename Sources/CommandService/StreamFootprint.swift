import Domain
import Events

/// An estimate of what a folded stream costs the writer's memory, so that its cache is bounded
/// by bytes and not only by a count of streams: a loan holds its whole schedule (a weekly loan
/// of a year, 52 installments) and every payment id it was paid under, so a count alone let the
/// same cache hold 30 MB or 300 MB depending on what the streams were.
///
/// The estimate adds a fixed cost per stream (its entries in the state's dictionaries, in the
/// versions and in the set of streams held, and the ids they hold) and what the events folded
/// into it add: an installment per schedule entry, an id per payment. It is computed from the
/// events alone, as they are folded, so it costs no look-up; it errs on the high side, as the
/// allocator's own overhead is counted in.
enum StreamFootprint {
    /// What any held stream costs before its events add to it: a dictionary entry for its
    /// aggregate and one for its version (with the tables' free slots), its entry in the cache's
    /// table of held streams, and the few strings of ids its aggregate holds.
    static func perStream(_ stream: StreamRef) -> Int {
        switch stream {
        case .loan: fixed + MemoryLayout<LoanState>.stride * 4 / 3
        case .invoice: fixed + MemoryLayout<InvoiceState>.stride * 4 / 3
        default: fixed
        }
    }

    /// What every stream costs whatever its aggregate: 320 bytes for its entries and ids, and the
    /// two integers its entry in the table of held streams carries (its estimate and the last
    /// batch that used it, by which a trim keeps the recent streams), with the table's free slots.
    static let fixed = 320 + 2 * MemoryLayout<Int>.stride * 4 / 3

    /// What `event` adds to its stream's aggregate once folded.
    static func growth(by event: StrataEvent) -> Int {
        switch event {
        case .loanApproved(let e): arrayHeader + e.schedule.count * MemoryLayout<InstallmentState>.stride
        case .paymentReceived(let e): idInASet * (e.externalRef == nil ? 1 : 2)
        case .invoicePaymentRecorded: idInASet
        default: 0
        }
    }

    /// An array's heap header and the allocator's overhead for its buffer.
    static let arrayHeader = 48
    /// An id of up to 64 characters in a set: its slot (with the table's free slots) and, past
    /// 15 bytes, its own allocation.
    static let idInASet = 96
}
