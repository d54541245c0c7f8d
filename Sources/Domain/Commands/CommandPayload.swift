import Events
import StrataCore

/// The payload of one command type: a `Codable` value whose JSON is the `payload` of a
/// command body (CONTRACT.md "Commands"), and which can read itself from such a payload
/// with every problem reported.
public protocol CommandPayload: Codable, Sendable, Hashable {
    /// The body's `type` ("ApproveLoan").
    static var commandType: String { get }

    /// Reads every field, reporting each problem to `reader`. Returns nil when a field
    /// could not be read; the caller refuses whenever the reader holds a problem.
    init?(reading reader: inout PayloadReader)
}

/// Limits shared by several commands, beyond DOMAIN's business numbers.
public enum PayloadLimits {
    /// The largest amount any single money field may carry (10¹⁵ cents), which keeps every
    /// sum of amounts far inside `Int64`.
    public static let maximumAmountCents: Int64 = 1_000_000_000_000_000
    public static let nameLength = 200
    public static let addressLength = 500
    public static let reasonLength = 500
    public static let notesLength = 1_000
    public static let referenceLength = 128
}
