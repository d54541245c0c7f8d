/// Gapless invoice numbers per series: "INV-000001", "INV-000002", …
///
/// The number is the series stream's next version: `InvoiceNumberAllocated` is appended
/// to `invoiceseries-<series>` expecting the version the decision saw, so two invoices
/// decided on the same version cannot both be written, and none is skipped.
public enum InvoiceNumbering {
    /// `<series>-<sequence>`, the sequence zero-padded to at least six digits.
    public static func number(series: String, sequence: Int64) -> String {
        let digits = String(sequence)
        let padding = String(repeating: "0", count: max(0, 6 - digits.count))
        return series + "-" + padding + digits
    }
}
