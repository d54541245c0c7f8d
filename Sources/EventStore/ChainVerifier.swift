import StrataCore

/// The first thing wrong with a chain.
public struct ChainProblem: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// A position is missing or out of order.
        case gap = "GAP"
        /// `prev_hash` is not the previous event's `hash`.
        case brokenLink = "BROKEN_LINK"
        /// `hash` is not the SHA-256 of the event's own columns.
        case hashMismatch = "HASH_MISMATCH"
    }

    public let position: Int64
    public let kind: Kind
    public let message: String

    public var description: String { "position \(position): \(kind.rawValue): \(message)" }
}

/// What `verify` found.
public struct ChainReport: Sendable, Equatable {
    /// Events checked before the first problem (all of them when intact).
    public let eventsChecked: Int64
    /// The last position checked and found intact (0 when none).
    public let lastGoodPosition: Int64
    /// The hash at `lastGoodPosition`.
    public let lastGoodHash: String
    public let problem: ChainProblem?

    public var isIntact: Bool { problem == nil }
}

/// Checks events one at a time, in position order, in constant memory.
public struct ChainVerifier: Sendable {
    private var expectedPosition: Int64 = 1
    private var previousHash = HashChain.genesisHex
    private var previousHashBytes = HashChain.genesis
    public private(set) var checked: Int64 = 0
    public private(set) var problem: ChainProblem?

    public init() {}

    /// Checks the next event; returns false once a problem is found (later events are not checked).
    @discardableResult
    public mutating func check(_ event: RecordedEvent) -> Bool {
        guard problem == nil else { return false }
        guard event.position == expectedPosition else {
            problem = ChainProblem(
                position: expectedPosition, kind: .gap,
                message: "expected position \(expectedPosition), found \(event.position)")
            return false
        }
        guard event.prevHash == previousHash else {
            problem = ChainProblem(
                position: event.position, kind: .brokenLink,
                message: "prevHash \(event.prevHash) is not the previous hash \(previousHash)")
            return false
        }
        let computed = HashChain.hash(previous: previousHashBytes, canonicalEvent: event.canonicalBody)
        let computedHex = Hex.encode(computed)
        guard computedHex == event.hash else {
            problem = ChainProblem(
                position: event.position, kind: .hashMismatch,
                message: "stored hash \(event.hash) but the event's columns hash to \(computedHex)")
            return false
        }
        previousHash = computedHex
        previousHashBytes = computed
        expectedPosition += 1
        checked += 1
        return true
    }

    public func report() -> ChainReport {
        ChainReport(eventsChecked: checked, lastGoodPosition: expectedPosition - 1, lastGoodHash: previousHash, problem: problem)
    }
}
