import Domain
import EventStore
import Events
import StrataCore
import SubjectKeys

/// The writer loop's work for one batch: decide every command against cached state (later
/// commands see earlier ones' effects), commit all decisions in one transaction (group
/// commit), and only then say what to reply and what to publish.
///
/// Not thread-safe: it belongs to the writer's own thread, which alone touches the store.
public final class CommandWriter {
    /// A command that passed the gate, waiting to be decided.
    ///
    /// A class: it passes from the commands thread through the arrival queue to the writer,
    /// into the batch, its decision and its reply, and each copy of it as a struct retained
    /// every string, array and payload value in it (four copies a command).
    public final class Pending: Sendable {
        public let routingId: [UInt8]
        public let keyId: String
        /// The actor roles the sending key may act for (nil: any).
        public let keyRoles: Set<Role>?
        public let body: CommandBody
        /// The digest of the body as sent, for the journal (`BodyDigest`, keyed; the plain SHA-256
        /// without a key), and the plain SHA-256 that commands journaled before digests were keyed
        /// hold: taken where the command is built (on the commands socket's thread), so the
        /// writer's thread does not spend its time on them.
        public let bodyDigest: [UInt8]
        public let plainBodyDigest: [UInt8]
        /// The payload read into a typed command, or the INVALID refusal listing what is wrong
        /// with it: also made where the command is built, against the clock as it arrived
        /// (dates in a payload may not be after that day), while the writer decides the
        /// command against the clock of its batch, a few milliseconds later.
        public let parsed: Result<ValidCommand, StrataError>

        public init(
            routingId: [UInt8], keyId: String, keyRoles: Set<Role>?, body: CommandBody, bodyBytes: [UInt8],
            digest: BodyDigest? = nil, arrivedAt: Timestamp, configuration: DomainConfiguration
        ) {
            self.routingId = routingId
            self.keyId = keyId
            self.keyRoles = keyRoles
            self.body = body
            plainBodyDigest = HashChain.sha256(bodyBytes)
            bodyDigest = digest?.of(sha256: plainBodyDigest) ?? plainBodyDigest
            let context = DecisionContext(now: arrivedAt, configuration: configuration, permittedRoles: keyRoles)
            self.parsed = Command.parse(
                type: body.type, payload: body.payload, numbers: body.payloadNumbers, context: context)
        }
    }

    /// What a batch produced: one reply per command, in order, and the events now durable,
    /// in position order, to publish after the replies.
    public struct Committed: Sendable {
        public var replies: [(routingId: [UInt8], reply: CommandReply)]
        public var events: [RecordedEvent]
        /// Why the store refused the whole batch (a full disk, an I/O error), if it did.
        public var failure: StoreError?

        /// How long the append transaction took (zero when it failed), for metrics.
        public var commitDuration: Duration
        /// Why a committed erasure's key could not be destroyed yet (it is tried again when
        /// the cache is next rebuilt, at the latest when the service starts again).
        public var erasureFailure: String?
        /// What the cache of folded streams held once the batch was decided, for metrics.
        public var cache = CacheFootprint()
        /// What the batch was worked from, for the thread that takes the batch on to let go of.
        var retired: Retired?

        public init(
            replies: [(routingId: [UInt8], reply: CommandReply)], events: [RecordedEvent], failure: StoreError? = nil,
            commitDuration: Duration = .zero, erasureFailure: String? = nil
        ) {
            self.replies = replies
            self.events = events
            self.failure = failure
            self.commitDuration = commitDuration
            self.erasureFailure = erasureFailure
        }
    }

    private let store: any EventStore
    private let configuration: DomainConfiguration
    private let clock: any WallClock
    private let sealer: PersonalDataSealer?
    private var cache: StateCache
    private let encoder = EventEncodingThread()
    /// Subjects whose erasure is committed but whose key the key store failed to destroy:
    /// tried again by `finishErasures`, which the writer's thread calls every second or so.
    private var keysToDestroy: [DataSubject] = []
    /// The instant of the last batch (at start, when the store's last event was recorded): a
    /// batch is decided and recorded at the clock's time, or at this one when the clock is
    /// behind it, so times in the store never go back along its positions, and what a decision
    /// writes into its events (an approval's `approvedAt`) is never before what it follows.
    public private(set) var lastInstant: Timestamp?
    /// How far the clock was behind `lastInstant` at the last batch, in milliseconds (0 when
    /// not): while it is, every batch is recorded at that instant.
    public private(set) var clockBehindMilliseconds: Int64 = 0

    /// - Parameter sealer: seals every personal field before it is stored (CONTRACT.md
    ///   "Personal data"); `strata serve` always has one. Without one (tests of the writer
    ///   alone), personal data is stored as decided.
    public init(
        store: any EventStore, configuration: DomainConfiguration = .init(), clock: any WallClock,
        cacheCapacity: Int = 100_000, cacheBytes: Int = CommandWriter.defaultCacheBytes,
        sealer: PersonalDataSealer? = nil
    ) throws(StoreError) {
        self.store = store
        self.configuration = configuration
        self.clock = clock
        self.sealer = sealer
        self.cache = try StateCache(store: store, capacity: cacheCapacity, byteCapacity: cacheBytes, sealer: sealer)
        let head = try store.head()
        self.lastInstant = head == 0 ? nil : try store.events(after: head - 1, limit: 1).first
            .flatMap { Timestamp($0.recordedAt) }
    }

    deinit {
        encoder.close()
    }

    /// Decides and commits `batch`. When the commit fails, nothing is acknowledged: every
    /// command is answered INTERNAL (not journaled, so a retry is decided afresh) and the
    /// cache is rebuilt, so no uncommitted decision lingers; if the store cannot be read for
    /// that, the next batch rebuilds it first, and is answered INTERNAL while it cannot.
    /// A retry of a command journaled before the batch is answered from the journal all the
    /// same: its answer never depended on this commit, and an INTERNAL ("not recorded") would
    /// tell its client to send it anew under another id, and so do it twice.
    ///
    /// A command whose own streams cannot be read (a damaged page, an event this version
    /// cannot decode) is answered INTERNAL alone and not journaled, and the rest of the batch
    /// goes on: failing the batch for it would fail every command that shared a batch with
    /// it, again at each of its retries.
    // Never inlined: profiles count the writer's work by this function (docs/performance.md).
    @inline(never)
    public func process(_ batch: [Pending]) -> Committed {
        var committed = decideAndCommit(batch)
        committed.cache = cacheFootprint
        return committed
    }

    private func decideAndCommit(_ batch: [Pending]) -> Committed {
        cache.trimIfNeeded()
        let clockNow = clock.now()
        let now = max(clockNow, lastInstant ?? clockNow)
        lastInstant = now
        clockBehindMilliseconds = now.millisecondsSinceEpoch - clockNow.millisecondsSinceEpoch
        var decided: [Decided] = []
        decided.reserveCapacity(batch.count)
        var seen: Set<String> = []
        // By command id: the entries of commands journaled before the batch (retries, rare).
        var journaled: [String: JournalEntry] = [:]
        // By command id: the commands of the batch answered without being recorded (rare).
        var unrecorded: [String: StrataError] = [:]
        var encoding = EventEncoding(thread: encoder)
        do throws(StoreError) {
            try cache.refreshIfStale()
            try store.readingTogether { () throws(StoreError) in
                for pending in batch {
                    let id = pending.body.id
                    // The same id twice in one batch: the second is answered as the first.
                    var isRetry = !seen.insert(id).inserted
                    if isRetry, let error = unrecorded[id] {
                        decided.append(.unrecorded(error))
                        continue
                    }
                    if !isRetry, let earlier = try store.journalEntry(commandId: id) {
                        journaled[id] = earlier
                        isRetry = true
                    }
                    let decision = try decide(pending, now: now, isRetry: isRetry, encoding: &encoding)
                    if case .unrecorded(let error) = decision { unrecorded[id] = error }
                    decided.append(decision)
                }
            }
            let encoded = try encoding.finish()
            var writes: [CommandWrite] = []
            writes.reserveCapacity(decided.count)
            for decision in decided {
                switch decision {
                case .written(let write):
                    writes.append(write)
                case .appending(let pending, let actor, let type, let events, let expectations):
                    let append = CommandWrite.Decision.append(Array(encoded[events]), expectations: expectations)
                    writes.append(try Self.write(pending, actor: actor, type: type, decision: append))
                case .unrecorded:
                    break
                }
            }
            let commitStarted = ContinuousClock.now
            // The keys first, durably: never an event sealed under a key that was not stored.
            if let sealer, sealer.hasNewKeys {
                do throws(SubjectKeyStoreError) {
                    try sealer.storeNewKeys(at: now)
                } catch {
                    throw StoreError(.io, "the keys of new data subjects could not be stored: \(error)")
                }
            }
            let (results, events) = try store.appendReturningEvents(writes, at: now)
            let commitDuration = commitStarted.duration(to: .now)
            var replies: [(routingId: [UInt8], reply: CommandReply)] = []
            replies.reserveCapacity(batch.count)
            var partial = false
            var written = 0  // the write, and its result, of the next command recorded
            for (index, decision) in decided.enumerated() {
                let id = batch[index].body.id
                if case .unrecorded(let error) = decision {
                    replies.append((batch[index].routingId, .refused(id: id, duplicate: false, error: error)))
                    continue
                }
                let result = results[written]
                // The store refused what was decided (a version conflict): the cache holds
                // events that were never written.
                if case .recorded(.refused) = result, case .append = writes[written].decision { partial = true }
                replies.append((batch[index].routingId, Self.reply(to: result, id: id)))
                written += 1
            }
            // The batch is committed whatever the rebuild comes to: its replies stand.
            if partial { cache.discardUncommitted() }
            var committed = Committed(
                replies: replies, events: events, commitDuration: commitDuration,
                erasureFailure: destroyErasedKeys(in: events))
            committed.retired = Retired(decided: decided, encoding: encoding, writes: writes, results: results)
            return committed
        } catch {
            sealer?.discardNewKeys()
            cache.discardUncommitted()
            let failure = StrataError(.internal, reason: "STORE_FAILURE", "the command was not recorded: \(error)")
            let replies = batch.map { pending -> (routingId: [UInt8], reply: CommandReply) in
                guard let earlier = journaled[pending.body.id] else {
                    return (pending.routingId, .refused(id: pending.body.id, duplicate: false, error: failure))
                }
                let result = CommandResult.answering(
                    bodyDigest: pending.bodyDigest, legacyBodyDigest: pending.plainBodyDigest, keyId: pending.keyId,
                    journaledAs: earlier)
                return (pending.routingId, Self.reply(to: result, id: pending.body.id))
            }
            return Committed(replies: replies, events: [], failure: error)
        }
    }

    /// A batch's decisions, its events as handed to the encoding thread and as encoded, and its
    /// writes and their results. Letting them go frees every command's parsed payload and
    /// every event made for it, a few percent of the writer's instructions (callgrind of
    /// `WriterThread.handle`): `Committed` carries them to the publisher's thread, which
    /// drops them once it has replied, while the writer goes on to the next batch.
    struct Retired: Sendable {
        fileprivate let decided: [Decided]
        fileprivate let encoding: EventEncoding
        fileprivate let writes: [CommandWrite]
        fileprivate let results: [CommandResult]
    }

    /// A command decided: its store write, or, when it appends, what the write needs once its
    /// events (`events` of the batch's encoding) are encoded; or not decided at all, since a
    /// stream it reads cannot be read, and answered INTERNAL without being recorded.
    fileprivate enum Decided: Sendable {
        case written(CommandWrite)
        case appending(
            Pending, actor: String, type: String, events: Range<Int>, expectations: [StreamName: ExpectedVersion])
        case unrecorded(StrataError)
    }

    private static func write(
        _ pending: Pending, actor: String, type: String, decision: CommandWrite.Decision
    ) throws(StoreError) -> CommandWrite {
        try CommandWrite(
            commandId: pending.body.id, bodyDigest: pending.bodyDigest, legacyBodyDigest: pending.plainBodyDigest,
            keyId: pending.keyId, actor: actor, commandType: type, correlationId: pending.body.correlationId,
            decision: decision)
    }

    /// One command's decision; accepted events are applied to the cache and handed to
    /// `encoding`.
    private func decide(
        _ pending: Pending, now: Timestamp, isRetry: Bool, encoding: inout EventEncoding
    ) throws(StoreError) -> Decided {
        let body = pending.body
        // The journal names the type and actor as sent when they can be names at all; a
        // body with an unknown type or an impossible actor is refused, and journaled too.
        let type = Command.isKnownType(body.type) ? body.type : "UnknownCommand"
        let actor = Identifier.isValid(body.actor) ? body.actor : "invalid-actor"
        func write(_ decision: CommandWrite.Decision, type: String) throws(StoreError) -> Decided {
            .written(try Self.write(pending, actor: actor, type: type, decision: decision))
        }
        // A retry (or the same id twice in one batch) is answered from the journal by the
        // store; deciding it again could only disturb the cache.
        if isRetry {
            return try write(.refuse(StrataError(.internal, "not decided: a retry")), type: type)
        }
        let context = DecisionContext(now: now, configuration: configuration, permittedRoles: pending.keyRoles)
        let valid: ValidCommand
        switch pending.parsed {
        case .failure(let error): return try write(.refuse(error), type: type)
        case .success(let command): valid = command
        }
        func unrecorded(_ error: StoreError) -> Decided {
            .unrecorded(StrataError(.internal, reason: "STORE_FAILURE", "the command was not recorded: \(error)"))
        }
        let reads = valid.command.reads(actor: body.actor, configuration: configuration)
        do throws(StoreError) {
            try cache.load(reads)
        } catch {
            return unrecorded(error)
        }
        let decision = Decider.decide(
            valid, actor: body.actor, expectedVersion: body.expectedVersion, reads: reads, state: cache.state,
            context: context)
        switch decision {
        case .refused(let error):
            return try write(.refuse(error), type: type)
        case .accepted(let accepted):
            // A stream written without being read (the agent's ledger a payment's commission
            // goes to) is folded before the new events join it: held with them alone, it would
            // read as the whole stream to the next command, a cash-out seeing only what was
            // earned since the cache was last filled, at a version the store refuses.
            do throws(StoreError) {
                try cache.load(accepted.events.lazy.map(\.stream))
            } catch {
                return unrecorded(error)
            }
            let first = encoding.count
            for event in accepted.events {
                let stream = event.stream.name
                encoding.add(try sealed(event, stream: stream).payload, stream: stream)
            }
            var expectations: [StreamName: ExpectedVersion] = [:]
            expectations.reserveCapacity(accepted.expectedVersions.count)
            for (stream, version) in accepted.expectedVersions { expectations[stream.name] = .exactly(version) }
            cache.apply(accepted.events)
            return .appending(
                pending, actor: actor, type: type, events: first..<encoding.count, expectations: expectations)
        }
    }

    /// `event` as it is stored: its personal fields sealed, when there is a sealer.
    private func sealed(_ event: StrataEvent, stream: StreamName) throws(StoreError) -> StrataEvent {
        guard let sealer else { return event }
        do throws(SubjectKeyStoreError) {
            return try sealer.seal(event, stream: stream.description)
        } catch {
            throw StoreError(.io, "personal data could not be sealed: \(error)")
        }
    }

    /// Takes the store's writer lock again if its file went while nothing was appended; what
    /// happens is the store's to log, and an append meets the same refusal.
    public func keepWriterLock() {
        try? store.keepWriterLock()
    }

    /// The default bound of the cache of folded streams, by their estimated size
    /// (`StreamFootprint`): 64 MiB, some 25,000 loans of a weekly schedule over a year, or
    /// 100,000 of the shortest.
    public static let defaultCacheBytes = 64 << 20

    /// What the cache of folded streams holds: how many, their estimated size
    /// (`StreamFootprint`), and how many streams were read from the store since the writer
    /// started, one for each miss.
    public struct CacheFootprint: Sendable, Equatable {
        public var streams = 0
        public var bytes = 0
        public var folded = 0
    }

    public var cacheFootprint: CacheFootprint {
        CacheFootprint(streams: cache.heldStreams, bytes: cache.heldBytes, folded: cache.foldedStreams)
    }

    /// Whether a committed erasure is not complete yet: its key not deleted, or the key
    /// store's WAL, which may still hold it, not truncated.
    public var owesErasures: Bool { !keysToDestroy.isEmpty || sealer?.owesTruncation == true }

    /// Tries again to complete the erasures that the key store kept from completing when they
    /// were committed: deletes their keys, then truncates its WAL. Returns the subjects whose
    /// erasure is complete now (none while any delete or the truncation still fails).
    public func finishErasures() -> [DataSubject] {
        guard let sealer else { return [] }
        let deletesFailed = keysToDestroy.contains { subject in
            do throws(SubjectKeyStoreError) {
                try sealer.destroyKey(of: subject)
                return false
            } catch {
                return true
            }
        }
        // A truncation that fails is owed still, and tried again like one a reader held back.
        guard !deletesFailed, (try? sealer.finishTruncation()) == true else { return [] }
        defer { keysToDestroy = [] }
        return keysToDestroy
    }

    /// Destroys the keys of the subjects whose erasure was just committed; after the commit,
    /// so that a key is never gone while its erasure is not recorded. A failure is reported,
    /// and the key destroyed by `finishErasures` (or when the cache is next rebuilt, or at
    /// start) once the key store lets it.
    private func destroyErasedKeys(in events: [RecordedEvent]) -> String? {
        guard let sealer else { return nil }
        var failure: String?
        // By index: looking at each event's type does not copy the event.
        for index in events.indices where events[index].type == PersonalDataErased.eventType {
            guard case .personalDataErased(let erased)? = try? events[index].decoded() else { continue }
            let subject = DataSubject(erased.kind, erased.subjectId)
            do throws(SubjectKeyStoreError) {
                try sealer.destroyKey(of: subject)
            } catch {
                failure = "the key of \(subject) is not destroyed yet (tried again every second): \(error)"
                if !keysToDestroy.contains(subject) { keysToDestroy.append(subject) }
            }
        }
        return failure
    }

    /// The reply to command `id` for what the store made of it: decided now, a retry answered
    /// with its original outcome, or a CONFLICT for another body or key under a journaled id.
    private static func reply(to result: CommandResult, id: String) -> CommandReply {
        let duplicate = if case .duplicate = result { true } else { false }
        switch result.outcome {
        case .accepted(let events): return .accepted(id: id, duplicate: duplicate, events: events)
        case .refused(let error): return .refused(id: id, duplicate: duplicate, error: error)
        }
    }
}
