import Foundation
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
        /// The chain's hash at a signed position is not the signed one (or not the one
        /// `--expect` names): the chain was rewritten with its hashes recomputed.
        case checkpointMismatch = "CHECKPOINT_MISMATCH"
        /// A checkpoint's signature does not verify under the public key it names.
        case badSignature = "BAD_SIGNATURE"
        /// A checkpoint is signed by a key other than the trusted one.
        case untrustedKey = "UNTRUSTED_KEY"
        /// A checkpoint (or `--expect`) names a position the store no longer has: events
        /// were deleted from the end.
        case checkpointBeyondHead = "CHECKPOINT_BEYOND_HEAD"
    }

    public let position: Int64
    public let kind: Kind
    public let message: String

    public var description: String { "position \(position): \(kind.rawValue): \(message)" }
}

/// A (position, hash) known from outside the store (`strata verify --expect P:HASH`): an
/// auditor's own copy of a signed checkpoint, which no one with write access to the data
/// directory can take away.
public struct ExpectedHash: Sendable, Equatable {
    public let position: Int64
    public let hash: String

    public init(position: Int64, hash: String) {
        self.position = position
        self.hash = hash
    }
}

/// What `verify` found.
public struct ChainReport: Sendable, Equatable {
    /// Events checked before the first problem (all of them when intact). After a
    /// `CHECKPOINT_MISMATCH`, only those up to the last good checkpoint: the chain was rewritten
    /// somewhere after it, its hashes recomputed, so the events since check out on their own.
    public let eventsChecked: Int64
    /// The last position checked and found intact (0 when none); after a `CHECKPOINT_MISMATCH`,
    /// the last good checkpoint's.
    public let lastGoodPosition: Int64
    /// The hash at `lastGoodPosition`.
    public let lastGoodHash: String
    /// Checkpoints whose signature, key and hash were all found good.
    public let checkpointsChecked: Int64
    /// The position of the last good checkpoint (0 when none).
    public let lastSignedPosition: Int64
    /// When that checkpoint was signed.
    public let lastSignedAt: String?
    /// The public keys (hex) signatures had to be made with, oldest first, the last in force;
    /// empty when none was pinned and each checkpoint was checked against the key it names.
    public let trustedKeys: [String]
    public let problem: ChainProblem?

    public var isIntact: Bool { problem == nil }

    /// Events after the last signed position: not covered by a signature yet. A running
    /// service signs them within its interval, so they are reported, not a failure.
    public var unsignedEvents: Int64 { max(0, lastGoodPosition - lastSignedPosition) }
}

/// Checks events and signed checkpoints in position order, in constant memory.
///
/// Feed it every event in position order (`check(_:)` for an event), and each checkpoint
/// right after the event at its position and before the next event; checkpoints beyond
/// the last event come last. Once a problem is found nothing more is checked.
public struct ChainVerifier: Sendable {
    private var expectedPosition: Int64 = 1
    private var previousHash = HashChain.genesis
    /// `previousHash` in hex, when `previousHexIsCurrent`: events whose checks were made on a
    /// hashing thread leave it to be written only when something reads it.
    private var previousHashHex = Array(HashChain.genesisHex.utf8)
    private var previousHexIsCurrent = true
    /// Scratch buffers reused for every event: its hash and that hash in hex.
    private var computedHash = [UInt8](repeating: 0, count: 32)
    private var computedHashHex = [UInt8](repeating: 0, count: 64)
    private let trustedKeys: TrustedCheckpointKeys?
    /// The rank among `trustedKeys` of the key that signed the last checkpoint: an earlier key
    /// may sign no later one.
    private var signingRank = 0
    private let expected: ExpectedHash?
    public private(set) var checked: Int64 = 0
    public private(set) var checkpointsChecked: Int64 = 0
    private var lastSigned: (position: Int64, signedAt: String, hash: String)?
    public private(set) var problem: ChainProblem?
    /// The problem is a hash the chain does not have where a signature or `--expect` says it
    /// must: every event since the last good checkpoint may be one rewritten.
    private var rewritten = false

    /// - Parameters:
    ///   - trustedKeys: the Ed25519 public keys checkpoints must be signed with, each only
    ///     until the next one signs; nil checks each signature against the key its row names.
    ///   - expected: a hash the chain must have at a position, known from outside the store.
    public init(trustedKeys: TrustedCheckpointKeys? = nil, expected: ExpectedHash? = nil) {
        self.trustedKeys = trustedKeys
        self.expected = expected
    }

    /// A verifier that goes on from a point already trusted (a signed checkpoint): the next
    /// event it checks must be at `position` + 1 and link to `hash`. Nil when `hash` is not
    /// 64 hex characters.
    public init?(after position: Int64, hash: String) {
        guard let bytes = Hex.decode(hash), bytes.count == 32 else { return nil }
        self.init()
        expectedPosition = position + 1
        previousHash = bytes
        previousHashHex = Array(hash.utf8)
    }

    /// The last position checked and found intact.
    public var lastPosition: Int64 { expectedPosition - 1 }

    /// Checks the next event; returns false once a problem is found (later events are not checked).
    @discardableResult
    public mutating func check(_ event: RecordedEvent) -> Bool {
        var prevHash = event.prevHash
        var hash = event.hash
        return event.canonicalBody.withUnsafeBytes { body in
            prevHash.withUTF8 { prevHash in
                hash.withUTF8 { hash in
                    check(
                        position: event.position, prevHash: UnsafeRawBufferPointer(prevHash),
                        hash: UnsafeRawBufferPointer(hash), canonicalBody: body)
                }
            }
        }
    }

    /// Checks the next event from its stored pieces: `prevHash` and `hash` as the stored hex
    /// text, `canonicalBody` the canonical event without them. Nothing is allocated unless
    /// there is a problem to describe.
    mutating func check(
        position: Int64, prevHash: UnsafeRawBufferPointer, hash: UnsafeRawBufferPointer,
        canonicalBody: UnsafeRawBufferPointer
    ) -> Bool {
        guard positionHolds(position), linkHolds(position: position, prevHash: prevHash) else { return false }
        HashChain.hash(previous: previousHash, canonicalEvent: canonicalBody, into: &computedHash)
        return hashHolds(position: position, hash: hash)
    }

    /// The same check with the event's chain hash (32 bytes) computed elsewhere, as
    /// `SHA-256(stored prevHash ‖ canonical event)`: a hashing thread computes it from the
    /// stored `prevHash`, which the link check here finds equal to the previous event's
    /// computed hash before `computedHash` is used, so the outcome is the same.
    mutating func check(
        position: Int64, prevHash: UnsafeRawBufferPointer, hash: UnsafeRawBufferPointer,
        computedHash: UnsafeRawBufferPointer
    ) -> Bool {
        precondition(computedHash.count == 32, "a chain hash is 32 bytes")
        guard positionHolds(position), linkHolds(position: position, prevHash: prevHash) else { return false }
        self.computedHash.withUnsafeMutableBytes { $0.copyMemory(from: computedHash) }
        return hashHolds(position: position, hash: hash)
    }

    /// The next event when a hashing thread has already checked its link and its hash
    /// (`StoredEventBatch.chainHashes`): its stored `prevHash` is the stored `hash` of the
    /// event before it, which this verifier has just checked and found good, and its stored
    /// `hash` is the hex of `computedHash`. What is left is its position and, when the
    /// expected hash is at its position, that one.
    mutating func checkHashed(position: Int64, computedHash: UnsafeRawBufferPointer) -> Bool {
        precondition(computedHash.count == 32, "a chain hash is 32 bytes")
        guard positionHolds(position) else { return false }
        previousHash.withUnsafeMutableBytes { $0.copyMemory(from: computedHash) }
        previousHexIsCurrent = false
        return advance(past: position)
    }

    /// The next event, at `position`, is not as Strata stored it although its columns may hash
    /// as before (a column of another storage class: `SQLiteEventStore.mistypedColumn`): a
    /// `HASH_MISMATCH` there, once its position holds. Always false.
    mutating func reject(position: Int64, because message: String) -> Bool {
        guard positionHolds(position) else { return false }
        problem = ChainProblem(position: position, kind: .hashMismatch, message: message)
        return false
    }

    /// The next position is `position`.
    private mutating func positionHolds(_ position: Int64) -> Bool {
        guard problem == nil else { return false }
        guard position == expectedPosition else {
            problem = ChainProblem(
                position: expectedPosition, kind: .gap,
                message: "expected position \(expectedPosition), found \(position)")
            return false
        }
        return true
    }

    /// `prevHash` is the previous event's hash.
    private mutating func linkHolds(position: Int64, prevHash: UnsafeRawBufferPointer) -> Bool {
        guard HashChain.equal(prevHash, previousHex()) else {
            problem = ChainProblem(
                position: position, kind: .brokenLink,
                message: "prevHash \(text(prevHash)) is not the previous hash \(text(previousHashHex))")
            return false
        }
        return true
    }

    /// The stored hash is the one in `computedHash`, which then becomes the previous hash.
    private mutating func hashHolds(position: Int64, hash: UnsafeRawBufferPointer) -> Bool {
        Hex.encode(computedHash, into: &computedHashHex)
        guard HashChain.equal(hash, computedHashHex) else {
            problem = ChainProblem(
                position: position, kind: .hashMismatch,
                message: "stored hash \(text(hash)) but the event's columns hash to \(text(computedHashHex))")
            return false
        }
        swap(&previousHash, &computedHash)
        swap(&previousHashHex, &computedHashHex)
        previousHexIsCurrent = true
        return advance(past: position)
    }

    /// Counts the event at `position` as good, then checks the expected hash if it is there.
    private mutating func advance(past position: Int64) -> Bool {
        expectedPosition += 1
        checked += 1
        guard let expected, expected.position == position else { return true }
        guard expected.hash.utf8.elementsEqual(previousHex()) else {
            rewritten = true
            problem = ChainProblem(
                position: position, kind: .checkpointMismatch,
                message: "the chain's hash here is \(text(previousHashHex)), not the expected \(expected.hash)")
            return false
        }
        return true
    }

    /// `previousHashHex`, written first if it is behind `previousHash`.
    private mutating func previousHex() -> [UInt8] {
        if !previousHexIsCurrent {
            Hex.encode(previousHash, into: &previousHashHex)
            previousHexIsCurrent = true
        }
        return previousHashHex
    }

    /// Checks a signed checkpoint: its signature, its key, and the chain's hash at its
    /// position (or that the position still exists). Returns false once a problem is found.
    @discardableResult
    public mutating func check(_ checkpoint: SignedCheckpoint) -> Bool {
        guard problem == nil else { return false }
        let position = checkpoint.position
        guard checkpoint.hasValidSignature else {
            problem = ChainProblem(
                position: position, kind: .badSignature,
                message: "the checkpoint's signature does not verify under the key it names (\(checkpoint.publicKey))")
            return false
        }
        if let trustedKeys {
            guard let rank = checkpoint.publicKeyBytes.flatMap(trustedKeys.rank(of:)) else {
                let trusted = trustedKeys.keys.map { Hex.encode($0) }.joined(separator: ", then ")
                problem = ChainProblem(
                    position: position, kind: .untrustedKey,
                    message: "signed by \(checkpoint.publicKey), not by the trusted "
                        + (trustedKeys.keys.count == 1 ? "key " : "keys ") + trusted)
                return false
            }
            guard rank >= signingRank else {
                problem = ChainProblem(
                    position: position, kind: .untrustedKey,
                    message: "signed by \(checkpoint.publicKey), a key replaced by "
                        + "\(Hex.encode(trustedKeys.keys[signingRank])), which signed an earlier checkpoint")
                return false
            }
            signingRank = rank
        }
        guard position >= 1 else {
            problem = ChainProblem(
                position: position, kind: .checkpointMismatch,
                message: "a checkpoint names position \(position): no event has it")
            return false
        }
        if position > lastPosition {
            problem = ChainProblem(
                position: position, kind: .checkpointBeyondHead,
                message: "a checkpoint signed at \(checkpoint.signedAt) names position \(position), "
                    + "but the store ends at \(lastPosition): events were removed from the end")
            return false
        }
        guard position == lastPosition, checkpoint.hash.utf8.elementsEqual(previousHex()) else {
            let actual = position == lastPosition ? "is \(text(previousHashHex))" : "was not checked in position order"
            let since = lastSigned.map { "after the checkpoint at \($0.position)" } ?? "at or before this position"
            rewritten = true
            problem = ChainProblem(
                position: position, kind: .checkpointMismatch,
                message: "signed hash \(checkpoint.hash) (at \(checkpoint.signedAt)) but the chain's hash here "
                    + "\(actual): the chain was rewritten \(since)")
            return false
        }
        checkpointsChecked += 1
        lastSigned = (position, checkpoint.signedAt, checkpoint.hash)
        return true
    }

    public func report() -> ChainReport {
        var problem = self.problem
        if problem == nil, let expected, expected.position > lastPosition {
            problem = ChainProblem(
                position: expected.position, kind: .checkpointBeyondHead,
                message: "the expected position \(expected.position) is beyond the store's end \(lastPosition)")
        }
        let hash = previousHexIsCurrent ? text(previousHashHex) : Hex.encode(previousHash)
        var lastGood = (position: lastPosition, hash: hash)
        if rewritten { lastGood = lastSigned.map { ($0.position, $0.hash) } ?? (0, HashChain.genesisHex) }
        return ChainReport(
            eventsChecked: rewritten ? lastGood.position : checked, lastGoodPosition: lastGood.position,
            lastGoodHash: lastGood.hash,
            checkpointsChecked: checkpointsChecked, lastSignedPosition: lastSigned?.position ?? 0,
            lastSignedAt: lastSigned?.signedAt, trustedKeys: trustedKeys?.keys.map { Hex.encode($0) } ?? [],
            problem: problem)
    }

    private func text(_ bytes: some Sequence<UInt8>) -> String { String(decoding: Array(bytes), as: UTF8.self) }
}
