import StrataCore

/// What the events endpoint sends about once a second, on topic `heartbeat`:
/// `{"head":<last committed position>}`. A subscriber whose last applied position is
/// below `head` has missed something (the last event, say) and reads history; one that
/// hears nothing at all knows the publisher is gone.
public struct Heartbeat: Sendable, Equatable {
    public static let topic: [UInt8] = Array("heartbeat".utf8)

    public var head: Int64

    public init(head: Int64) {
        self.head = head
    }

    /// The message's frames: `["heartbeat", {"head":N}]`.
    public var frames: [[UInt8]] {
        [Heartbeat.topic, CanonicalJSON.bytes(.object(["head": .integer(head)]))]
    }

    /// Reads a heartbeat's JSON frame; nil unless it is exactly `{"head":N}` with N ≥ 0.
    public init?(json bytes: [UInt8]) {
        guard case .object(let members)? = try? JSONParser.parse(bytes), members.count == 1,
            let head = members["head"]?.integerValue, head >= 0
        else { return nil }
        self.head = head
    }
}

/// The topic an event is published under: `<category>.<Type>` (`loan.LoanApproved`), so a
/// subscriber filters by category prefix (`loan.`) or by exact type.
public func eventTopic(category: some StringProtocol, type: String) -> [UInt8] {
    var topic: [UInt8] = []
    topic.reserveCapacity(category.utf8.count + 1 + type.utf8.count)
    // In one piece where the text has its bytes in one place (a native string or a slice of
    // one): the UTF-8 view's iterator copies byte by byte.
    if category.utf8.withContiguousStorageIfAvailable({ topic.append(contentsOf: $0) }) == nil {
        topic.append(contentsOf: category.utf8)
    }
    topic.append(UInt8(ascii: "."))
    if type.utf8.withContiguousStorageIfAvailable({ topic.append(contentsOf: $0) }) == nil {
        topic.append(contentsOf: type.utf8)
    }
    return topic
}
