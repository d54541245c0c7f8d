/// Why a projector or a projection file could not do what was asked.
public struct ProjectorError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// Another process holds the projection file's writer lock.
        case locked = "LOCKED"
        /// The file is not a Strata projection file, or not this projection's.
        case foreign = "FOREIGN"
        /// The projection stopped at a poison event and will not go on until resumed.
        case stopped = "STOPPED"
        /// Events were handed over out of order (a bug in the caller).
        case outOfOrder = "OUT_OF_ORDER"
        /// An SQLite or file-system failure.
        case io = "IO"
        /// The projection file's disk is full: nothing of the batch was written, and the same batch
        /// goes through once there is room.
        case full = "FULL"
        /// Resume or skip was asked for where it does not apply.
        case invalidRequest = "INVALID_REQUEST"
        /// The file's checkpoint is beyond the store's head: the file holds events the store no
        /// longer has (events.db restored from an older backup). It must be rebuilt.
        case ahead = "AHEAD"
        /// The store's event at the file's checkpoint is not the one the file applied: the file
        /// was made from another store. It must be rebuilt.
        case otherStore = "OTHER_STORE"
        /// An endpoint libzmq cannot connect to at all (malformed, an unknown transport), as
        /// opposed to one where nothing answers yet.
        case endpoint = "ENDPOINT"
        /// Personal data cannot be opened for want of a key store that can be read. Nothing is
        /// wrong with the event: the process runs where it cannot reach the keys.
        case keyStore = "KEY_STORE"
        /// History refused a request it would refuse again, or sent what cannot be read.
        case history = "HISTORY"
        /// The subscriber's socket failed.
        case bus = "BUS"
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    /// Why a file whose checkpoint is beyond the store's head must be rebuilt, in the words
    /// `strata status` and the projectors both use.
    /// Why a file whose event at its checkpoint differs from the store's was not built from it.
    public static func otherStore(name: String, checkpoint: Int64, storeHash: String, fileHash: String) -> String {
        "\(name) is not from this store: the store's event at its checkpoint, position \(checkpoint), has hash "
            + "\(storeHash), where the file applied \(fileHash) (a file of another data directory, or events.db "
            + "restored from another system's backup?); rebuild it from the store"
    }

    public static func beyondHead(checkpoint: Int64, head: Int64) -> String {
        "checkpoint \(checkpoint) is beyond the store's head, position \(head): events.db is older than this file "
            + "(restored from a backup?); rebuild it from the store"
    }
}

/// Where and why a projection stopped: the first event it could not apply.
///
/// Recorded in the projection file with the checkpoint, so `strata status` shows it and
/// a restarted projector does not pass over it silently.
public struct ProjectionStop: Sendable, Equatable, CustomStringConvertible {
    /// Why the event was not applied, which decides what an operator may do about it.
    public enum Kind: String, Sendable {
        /// A projection cannot read or apply the event: a fix and `--resume`, or `--skip`.
        case poison = "POISON"
        /// The event does not continue the chain the file applied (its `prevHash` is not the
        /// hash before it, or its hash does not recompute): the store is not the history the
        /// file was built from. Nothing about the projection is wrong, and passing over the event
        /// would carry the file on along that other chain, so it cannot be skipped.
        case brokenChain = "BROKEN_CHAIN"

        /// The words every broken chain's error begins with (`EventPreparer`): how a stop recorded
        /// before kinds were, with its error alone, is told apart.
        static let brokenChainWords = "the hash chain is broken"

        /// The kind of a stop recorded with its error alone (by an earlier version).
        init(recordedError error: String) {
            self = error.hasPrefix(Self.brokenChainWords) ? .brokenChain : .poison
        }
    }

    public let position: Int64
    public let stream: String
    public let type: String
    public let error: String
    public let kind: Kind

    public init(position: Int64, stream: String, type: String, error: String, kind: Kind) {
        self.position = position
        self.stream = stream
        self.type = type
        self.error = error
        self.kind = kind
    }

    public var description: String { "stopped at position \(position) (\(type) on \(stream)): \(error)" }

    /// What an operator can do about the stop of projection `name`, in the words its projector
    /// ends with.
    public func wayOut(_ name: String) -> String {
        switch kind {
        case .poison:
            "fix the projection and run `strata project \(name) --resume`, or pass over the event with "
                + "`--skip \(position) --reason TEXT`"
        case .brokenChain:
            "the store is not the history this file applied, which no skip mends: "
                + Self.restoreOrRebuild(name)
        }
    }

    /// The way out of a broken chain: the store must be put right (or the file made from it).
    static func restoreOrRebuild(_ name: String) -> String {
        "run `strata verify`, restore events.db from a backup and run `strata project \(name) --resume`, or, if "
            + "the store verifies, rebuild the file from it (`strata rebuild \(name)`)"
    }
}

/// An event an operator told a projection to pass over, and why (`strata_skipped`).
public struct SkippedEvent: Sendable, Equatable {
    public let position: Int64
    public let stream: String
    public let type: String
    /// The error the projection stopped with.
    public let error: String
    /// The operator's reason.
    public let reason: String

    public init(position: Int64, stream: String, type: String, error: String, reason: String) {
        self.position = position
        self.stream = stream
        self.type = type
        self.error = error
        self.reason = reason
    }
}
