import StrataCore

/// Turns the `data` of one schema version of an event type into the next version's.
///
/// Upcasters are pure and total: they never fail. Data they cannot make sense of is
/// passed on, and decoding the result then reports it as invalid data.
public typealias Upcaster = @Sendable (JSONValue) -> JSONValue

/// Every upcaster of the catalog, keyed by event type and the version it reads.
///
/// Reading version n of a type whose current version is m applies the upcasters for
/// n, n+1, …, m−1 in turn. Stored events are never rewritten: the store, the bus and
/// history keep each event's stored version and bytes; upcasting happens on decode only.
///
/// When a type's schema changes: bump its `schemaVersion`, add one entry here from the
/// old version, and keep a literal old-version sample in the tests.
public enum Upcasters {
    public struct Key: Hashable, Sendable, CustomStringConvertible {
        public let type: String
        /// The version the upcaster reads; it produces `fromVersion + 1`.
        public let fromVersion: Int

        public init(type: String, fromVersion: Int) {
            self.type = type
            self.fromVersion = fromVersion
        }

        public var description: String { "\(type) v\(fromVersion)→v\(fromVersion + 1)" }
    }

    public static let table: [Key: Upcaster] = [
        Key(type: PaymentReceived.eventType, fromVersion: 1): paymentReceivedV1ToV2
    ]

    /// The upcaster from `fromVersion` to `fromVersion + 1` of `type`, if there is one.
    public static func upcaster(type: String, fromVersion: Int) -> Upcaster? {
        table[Key(type: type, fromVersion: fromVersion)]
    }

    /// PaymentReceived v1 → v2. Version 1 had no `method`: every payment then was cash.
    /// Nor did it record the penalty accrued per installment; the penalty it paid is the
    /// only accrual it shows, so each installment's accrual reads as its penalty paid,
    /// which keeps every installment's penalty balance whole when the loan is folded.
    public static func paymentReceivedV1ToV2(_ data: JSONValue) -> JSONValue {
        guard case .object(var members) = data else { return data }
        if members["method"] == nil {
            members["method"] = .string(PaymentMethod.cash.rawValue)
        }
        if case .array(let entries)? = members["perInstallment"] {
            members["perInstallment"] = .array(
                entries.map { entry in
                    guard case .object(var fields) = entry, fields["penaltyAccruedCents"] == nil else { return entry }
                    fields["penaltyAccruedCents"] = fields["penaltyCents"] ?? .integer(0)
                    return .object(fields)
                })
        }
        return .object(members)
    }
}
