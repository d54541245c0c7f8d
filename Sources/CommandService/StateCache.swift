import Domain
import EventStore
import Events
import StrataCore
import SubjectKeys

/// The writer's view of the aggregates: a `DomainState` holding the streams folded so far,
/// and the `Directory`: every user, and the parties an erasure may ask about (a party is looked
/// up in the store when its stream is loaded; all are let go at a trim, when every decision
/// that named one is committed). Streams are folded from the store on first use.
///
/// Bounded by one rule: when more than `capacity` streams are held after a batch, or their
/// estimated size (`StreamFootprint`) passes `byteCapacity`, the streams the latest batches used
/// are kept, as many batches back as fit in half of each bound, and the others dropped, to be
/// folded again on demand (the directory stays). A business pays its recent loans and its
/// active borrowers' most, so those stay held through the trims instead of all being folded
/// again after each; a workload that reads streams at random loses nothing by it, the streams
/// kept being as likely to be read as any others. Kept as well, whatever batch used them
/// last, are the few streams that grow without end while their aggregate stays small
/// (`isKeptThroughTrims`): agents' ledgers, one event per commission, invoice series and the
/// settings. Folding a ledger again would stall the writer for as long as the ledger is long.
/// Only the writer thread touches it.
///
/// A stream is read a page at a time (`foldPage`), so a long one never sits in memory whole;
/// an invoice series, whose aggregate is its last event, is folded from that event alone.
///
/// With a sealer, the one personal field deciding reads, a user's email, is opened as it is
/// folded and kept only as its keyed digest (`Directory`); no other personal field is opened.
struct StateCache {
    private let store: any EventStore
    private let capacity: Int
    private let byteCapacity: Int
    private let sealer: PersonalDataSealer?
    private let opener: PersonalDataOpener?
    private let emailKey: EmailKey
    private(set) var state = DomainState()
    /// Every stream folded into `state`, with its estimated size and the last batch that read
    /// or wrote it, by which a trim tells the recent streams from the others.
    private var held: [StreamRef: Held] = [:]
    /// Batches begun since the writer started, counted by `trimIfNeeded`, which runs before each.
    private var batch = 0
    /// How many streams the last trim kept because they grow without end
    /// (`isKeptThroughTrims`); the next trim waits for `capacity` more.
    private var keptThroughTrim = 0
    /// The estimated size of the streams held (`StreamFootprint`), and of those the last trim
    /// kept because they grow without end.
    private(set) var heldBytes = 0
    private var keptBytes = 0
    /// Streams read from the store since the writer started: one for each miss.
    private(set) var foldedStreams = 0
    /// A rebuild failed: the state may hold decisions that were never committed (a user's
    /// name in the directory, a loan's approval), so nothing may be decided on it until a
    /// rebuild succeeds.
    private var isStale = false

    init(
        store: any EventStore, capacity: Int, byteCapacity: Int = CommandWriter.defaultCacheBytes,
        sealer: PersonalDataSealer? = nil
    ) throws(StoreError) {
        self.store = store
        self.capacity = capacity
        self.byteCapacity = byteCapacity
        self.sealer = sealer
        if let sealer {
            opener = sealer.opener
            let digest = sealer.emailDigest
            emailKey = EmailKey { digest.key($0) }
        } else {
            opener = nil
            emailKey = .plain
        }
        try reset()
    }

    /// What the cache knows of a stream it holds.
    private struct Held {
        /// Its estimated size: `StreamFootprint.perStream` and the growth of every event folded.
        var bytes: Int
        /// The last batch that read or wrote it.
        var lastBatch: Int
    }

    /// How many streams are held.
    var heldStreams: Int { held.count }

    /// Begins a batch: once more than `capacity` streams are held, or they are estimated at more
    /// than `byteCapacity`, keeps those the latest batches used, whole batches, newest first, as
    /// long as they fit in half of each bound, and those that grow without end, and drops the
    /// rest. Half, so that a trim frees room for as many streams again before the next. Only
    /// between batches: within one, the state holds decisions not yet committed, which a later
    /// command of the same batch must see (dropping them there decided it against stale
    /// versions). A batch may take the cache past its bounds by the streams it touches, until
    /// the next call.
    mutating func trimIfNeeded() {
        batch += 1
        guard held.count > capacity + keptThroughTrim || heldBytes > byteCapacity + keptBytes else { return }
        var usedBy: [Int: (streams: Int, bytes: Int)] = [:]
        for (stream, entry) in held where !Self.isKeptThroughTrims(stream) {
            usedBy[entry.lastBatch, default: (0, 0)].streams += 1
            usedBy[entry.lastBatch, default: (0, 0)].bytes += entry.bytes
        }
        var oldestKept = batch
        var streams = 0
        var bytes = 0
        for (used, total) in usedBy.sorted(by: { $0.key > $1.key }) {
            streams += total.streams
            bytes += total.bytes
            guard streams <= capacity / 2 && bytes <= byteCapacity / 2 else { break }
            oldestKept = used
        }
        held = held.filter { Self.isKeptThroughTrims($0.key) || $0.value.lastBatch >= oldestKept }
        state = state.keeping { held[$0] != nil }
        // Each invoice decided added its party, and each is committed now: the store answers.
        state.forgetParties()
        keptThroughTrim = 0
        keptBytes = 0
        heldBytes = 0
        for (stream, entry) in held {
            heldBytes += entry.bytes
            if Self.isKeptThroughTrims(stream) {
                keptThroughTrim += 1
                keptBytes += entry.bytes
            }
        }
    }

    /// The streams a trim keeps, whatever batch used them last: each grows by an event per
    /// payment or invoice, for as long as the business runs, while its aggregate is a few numbers.
    static func isKeptThroughTrims(_ stream: StreamRef) -> Bool {
        switch stream {
        case .agent, .invoiceSeries, .settings: true
        default: false
        }
    }

    /// Events read from the store at a time while folding a stream.
    static let foldPage = 4096

    /// Folds every stream in `streams` that is not held yet, and marks each as used by this
    /// batch, for `trimIfNeeded`. A stream is folded whole or not at all: a short one is read
    /// whole before any of it is applied, a longer one folded page by page into a state of its
    /// own and taken over once it is all read, so one that cannot be read leaves nothing of its
    /// stream behind (the writer refuses the command that reads it and goes on with the batch,
    /// on this state).
    mutating func load(_ streams: some Sequence<StreamRef>) throws(StoreError) {
        for stream in streams {
            if case .party(let id) = stream, !state.directory.parties.contains(id) {
                do throws(StoreError) {
                    if try store.hasInvoice(forParty: id) { state.addParty(id) }
                } catch {
                    throw StoreError(error.kind, "party \(id) cannot be looked up: \(error.message)")
                }
            }
            if let index = held.index(forKey: stream) {
                held.values[index].lastBatch = batch
                continue
            }
            let growth: Int
            do throws(StoreError) {
                growth = try fold(stream)
            } catch {
                throw StoreError(error.kind, "stream \(stream.name) cannot be read: \(error.message)")
            }
            let bytes = StreamFootprint.perStream(stream) + growth
            held[stream] = Held(bytes: bytes, lastBatch: batch)
            heldBytes += bytes
            foldedStreams += 1
        }
    }

    /// Folds `stream` into the state; returns what its events add to its estimated size.
    private mutating func fold(_ stream: StreamRef) throws(StoreError) -> Int {
        if stream.isFoldedFromItsLastEvent {
            let version = try store.version(of: stream.name)
            guard version > 0 else { return 0 }
            guard let last = try store.events(in: stream.name, fromVersion: version, limit: 1).first else {
                throw StoreError(.corrupt, "its event \(version), the last by its version, is missing")
            }
            let event = try decode(last)
            state.apply(last: event, ofStreamAt: version)
            return StreamFootprint.growth(by: event)
        }
        var page = try store.events(in: stream.name, fromVersion: 1, limit: Self.foldPage)
        if page.count < Self.foldPage {
            var events: [StrataEvent] = []
            events.reserveCapacity(page.count)
            for recorded in page { events.append(try decode(recorded)) }
            var growth = 0
            for event in events {
                state.apply(event)
                growth += StreamFootprint.growth(by: event)
            }
            return growth
        }
        var scratch = DomainState()
        var growth = 0
        while true {
            for recorded in page {
                let event = try decode(recorded)
                scratch.apply(event)
                growth += StreamFootprint.growth(by: event)
            }
            guard page.count == Self.foldPage else { break }
            page = try store.events(
                in: stream.name, fromVersion: scratch.version(of: stream) + 1, limit: Self.foldPage)
        }
        state.take(stream, from: scratch)
        return growth
    }

    /// Applies events a decision just made (before they are committed), so the next
    /// command of the batch sees them. Their streams must be loaded first: a stream is held
    /// whole or not at all. A failed commit must `reset`.
    mutating func apply(_ events: [StrataEvent]) {
        for event in events {
            state.apply(event)
            var bytes = StreamFootprint.growth(by: event)
            if let index = held.index(forKey: event.stream) {
                held.values[index].bytes += bytes
            } else {
                bytes += StreamFootprint.perStream(event.stream)
                held[event.stream] = Held(bytes: bytes, lastBatch: batch)
            }
            heldBytes += bytes
        }
    }

    /// After a commit that failed, or wrote less than was decided: rebuilds the cache, or,
    /// when the store cannot be read just then, marks it stale for `refreshIfStale`.
    mutating func discardUncommitted() {
        do throws(StoreError) {
            try reset()
        } catch {
            isStale = true
        }
    }

    /// Rebuilds a stale cache before anything is decided on it; throws while it cannot.
    mutating func refreshIfStale() throws(StoreError) {
        if isStale { try reset() }
    }

    /// Forgets everything and folds the directory's users again from the store: after a commit
    /// that failed, or wrote less than was decided, nothing uncommitted may linger. It also
    /// finishes any erasure whose key a crash left behind. Invoices are not read: the store
    /// answers for parties (`load`).
    mutating func reset() throws(StoreError) {
        var directory = Directory(emailKey: emailKey)
        var after: Int64 = 0
        let filter = EventFilter.types([UserRegistered.eventType, PersonalDataErased.eventType])
        while true {
            let page = try store.events(after: after, limit: 10_000, filter: filter)
            for recorded in page {
                let event = try decode(recorded)
                if case .personalDataErased(let e) = event, let sealer {
                    do throws(SubjectKeyStoreError) {
                        try sealer.destroyKey(of: DataSubject(e.kind, e.subjectId))
                    } catch {
                        throw StoreError(.io, "finishing the erasure of \(e.subjectId): \(error)")
                    }
                }
                directory.apply(event)
            }
            guard let last = page.last else { break }
            after = last.position
        }
        state = DomainState(directory: directory)
        held = [:]
        keptThroughTrim = 0
        heldBytes = 0
        keptBytes = 0
        isStale = false
    }

    private func decode(_ recorded: RecordedEvent) throws(StoreError) -> StrataEvent {
        let event: StrataEvent
        do {
            event = try recorded.decoded()
        } catch {
            throw StoreError(.corrupt, "event \(recorded.position) cannot be read: \(error)")
        }
        guard case .userRegistered = event, let opener else { return event }
        do {
            return try event.openingPersonalData(stream: recorded.stream, with: opener)
        } catch {
            throw StoreError(.corrupt, "the email in event \(recorded.position) cannot be opened: \(error)")
        }
    }
}
