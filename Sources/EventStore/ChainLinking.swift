import StrataCore

/// One event's place in the chain: its hash, as bytes and as the stored lowercase hex.
package struct ChainLink: Sendable {
    package let hash: [UInt8]
    package let hex: String

    /// The link of `event`, which follows the event whose hash is `previous`.
    init(of event: NumberedEvent, after previous: [UInt8]) {
        hash = HashChain.hash(previous: previous, canonicalEvent: event.canonicalBody)
        hex = Hex.encode(hash)
    }
}

/// An event decided and numbered by an append, not yet hashed: a `RecordedEvent` but for
/// `prevHash` and `hash`.
package struct NumberedEvent: Sendable {
    package let position: Int64
    package let stream: String
    package let version: Int64
    package let type: String
    package let schemaVersion: Int
    package let recordedAt: String
    package let data: [UInt8]
    package let metadata: [UInt8]

    /// What the chain hashes (`RecordedEvent.canonicalBody`).
    var canonicalBody: [UInt8] {
        RecordedEvent.envelope(
            data: data, hash: nil, metadata: metadata, position: position, prevHash: nil, recordedAt: recordedAt,
            schemaVersion: schemaVersion, stream: stream, type: type, version: version)
    }
}

/// Extends the hash chain event by event, in the order the events are handed over:
/// `AppendPlanner` submits each event as it numbers it, and asks for the links when it
/// writes. Whether the hashing happens at once or on another thread is the
/// implementation's business; the links are the same.
package protocol ChainLinking {
    /// Hands over the next event of the chain.
    mutating func submit(_ event: NumberedEvent)
    /// The link of the `index`-th event submitted (from 0), waiting for it if need be.
    mutating func link(_ index: Int) -> ChainLink
}

/// The chain hashed on the caller's thread, as each body is submitted: for small appends,
/// where handing work to another thread costs more than it saves.
package struct InlineChain: ChainLinking {
    private var previous: [UInt8]
    private var links: [ChainLink] = []

    /// A chain that continues after the event whose hash is `previous` (32 bytes).
    package init(after previous: [UInt8]) {
        self.previous = previous
    }

    package mutating func submit(_ event: NumberedEvent) {
        let link = ChainLink(of: event, after: previous)
        links.append(link)
        previous = link.hash
    }

    package func link(_ index: Int) -> ChainLink { links[index] }
}
