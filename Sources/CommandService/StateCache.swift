import Domain
import EventStore
import Events
import StrataCore
import SubjectKeys

/// The writer's view of the aggregates: a `DomainState` holding the streams folded so far,
/// and the whole `Directory`. Streams are folded from the store on first use.
///
/// Bounded by a simple rule: when more than `capacity` streams are held after a batch, all
/// are dropped and folded again on demand (the directory stays). Only the writer thread
/// touches it.
///
/// With a sealer, the one personal field deciding reads, a user's email, is opened as it is
/// folded and kept only as its keyed digest (`Directory`); no other personal field is opened.
struct StateCache {
    private let store: any EventStore
    private let capacity: Int
    private let sealer: PersonalDataSealer?
    private let opener: PersonalDataOpener?
    private let emailKey: EmailKey
    private(set) var state = DomainState()
    private var loaded: Set<StreamRef> = []
    /// A rebuild failed: the state may hold decisions that were never committed (a user's
    /// name in the directory, a loan's approval), so nothing may be decided on it until a
    /// rebuild succeeds.
    private var isStale = false

    init(store: any EventStore, capacity: Int, sealer: PersonalDataSealer? = nil) throws(StoreError) {
        self.store = store
        self.capacity = capacity
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

    /// Drops every folded stream once more than `capacity` are held. Only between batches:
    /// within one, the state holds decisions not yet committed, which a later command of the
    /// same batch must see (dropping them there decided it against stale versions). A batch
    /// may take the cache past `capacity` by the streams it touches, until the next call.
    mutating func trimIfNeeded() {
        if loaded.count > capacity {
            state = DomainState(directory: state.directory)
            loaded = []
        }
    }

    /// Folds every stream in `streams` that is not held yet. A stream is folded whole or not
    /// at all: every event is read before any is applied, so one that cannot be read leaves
    /// nothing of its stream behind (the writer refuses the command that reads it and goes
    /// on with the batch, on this state).
    mutating func load(_ streams: some Sequence<StreamRef>) throws(StoreError) {
        for stream in streams where !loaded.contains(stream) {
            var events: [StrataEvent] = []
            do throws(StoreError) {
                let stored = try store.events(in: stream.name)
                events.reserveCapacity(stored.count)
                for recorded in stored { events.append(try decode(recorded)) }
            } catch {
                throw StoreError(error.kind, "stream \(stream.name) cannot be read: \(error.message)")
            }
            for event in events { state.apply(event) }
            loaded.insert(stream)
        }
    }

    /// Applies events a decision just made (before they are committed), so the next
    /// command of the batch sees them. Their streams must be loaded first: a stream is held
    /// whole or not at all. A failed commit must `reset`.
    mutating func apply(_ events: [StrataEvent]) {
        for event in events {
            state.apply(event)
            loaded.insert(event.stream)
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

    /// Forgets everything and folds the directory again from the store: after a commit
    /// that failed, or wrote less than was decided, nothing uncommitted may linger. It also
    /// finishes any erasure whose key a crash left behind.
    mutating func reset() throws(StoreError) {
        var directory = Directory(emailKey: emailKey)
        var after: Int64 = 0
        let filter = EventFilter.types(
            [UserRegistered.eventType, InvoiceCreated.eventType, PersonalDataErased.eventType])
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
        loaded = []
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
