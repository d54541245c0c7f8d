import Events
import StrataSQLite

/// Which parties invoices name, answered from the store's `events_by_invoice_party` index.
///
/// An erasure of a party must know that the party exists, and nothing but its invoices says
/// so. The command service held every invoice's party id in memory for that, folded from every
/// `InvoiceCreated` at each start: about 63 MB and 7 s a start with a million customers, growing
/// for as long as the business invoices. The index holds each invoice's party id beside its
/// position, and only invoices' (a partial index), so it costs a little on each invoice written
/// and nothing on other events. It is in `schema`, so a store made before it gets it at its
/// next writer open; `json_extract` being deterministic, SQLite keeps it up to date as rows
/// are written, by whichever program writes them.
extension SQLiteEventStore {
    /// The same expression and condition as the index, written out in full: SQLite uses a
    /// partial index only when the query's condition names its condition as written.
    static let invoiceForParty = SQLiteStatementKey(
        "SELECT 1 FROM events WHERE type = 'InvoiceCreated' AND json_extract(data, '$.customer.partyId') = ? LIMIT 1")

    public func hasInvoice(forParty partyId: String) throws(StoreError) -> Bool {
        try state.withLock { (state) throws(StoreError) -> Bool in
            do throws(SQLiteError) {
                let s = try state.connection.statement(Self.invoiceForParty)
                defer { s.reset() }
                try s.bind(partyId, at: 1)
                return try s.step()
            } catch {
                throw StoreError(error, while: "looking up the invoices of party \(partyId)")
            }
        }
    }
}
