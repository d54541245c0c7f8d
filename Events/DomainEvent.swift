import StrataCore

/// One kind of fact in the catalog.
///
/// `eventType` is the stable name written to the store and used in bus topics;
/// `schemaVersion` is the version this code writes. Older stored versions are upcast
/// by `EventRegistry` when read, never rewritten in the store.
///
/// An event type names no stream category: the deciding command picks the stream, and
/// one type may go to several categories (`PersonalDataErased`: accounts, parties, users).
public protocol DomainEvent: Codable, Sendable, Equatable {
    static var eventType: String { get }
    static var schemaVersion: Int { get }
}

extension DomainEvent {
    public var eventType: String { Self.eventType }

    /// The event's `data` as canonical JSON (RFC 8785), the bytes stored and hashed.
    public func canonicalData() throws -> [UInt8] {
        try CanonicalJSON.encode(self)
    }
}
