import Domain
import EventStore
import Events
import StrataCore

/// The writer's view of the aggregates: a `DomainState` holding the streams folded so far,
/// and the whole `Directory`. Streams are folded from the store on first use.
///
/// Bounded by a simple rule: when more than `capacity` streams are held after a batch, all
/// are dropped and folded again on demand (the directory stays). Only the writer thread
/// touches it.
struct StateCache {
    private let store: any EventStore
    private let capacity: Int
    private(set) var state = DomainState()
    private var loaded: Set<StreamRef> = []

    init(store: any EventStore, capacity: Int) throws(StoreError) {
        self.store = store
        self.capacity = capacity
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

    /// Folds every stream in `streams` that is not held yet.
    mutating func load(_ streams: [StreamRef]) throws(StoreError) {
        for stream in streams where !loaded.contains(stream) {
            for recorded in try store.events(in: stream.name) {
                state.apply(try Self.decode(recorded))
            }
            loaded.insert(stream)
        }
    }

    /// Applies events a decision just made (before they are committed), so the next
    /// command of the batch sees them. A failed commit must `reset`.
    mutating func apply(_ events: [StrataEvent]) {
        for event in events {
            state.apply(event)
            loaded.insert(event.stream)
        }
    }

    /// Forgets everything and folds the directory again from the store: after a commit
    /// that failed, or wrote less than was decided, nothing uncommitted may linger.
    mutating func reset() throws(StoreError) {
        var directory = Directory()
        var after: Int64 = 0
        let filter = EventFilter.types([UserRegistered.eventType, InvoiceCreated.eventType])
        while true {
            let page = try store.events(after: after, limit: 10_000, filter: filter)
            for recorded in page { directory.apply(try Self.decode(recorded)) }
            guard let last = page.last else { break }
            after = last.position
        }
        state = DomainState(directory: directory)
        loaded = []
    }

    private static func decode(_ recorded: RecordedEvent) throws(StoreError) -> StrataEvent {
        do {
            return try recorded.decoded()
        } catch {
            throw StoreError(.corrupt, "event \(recorded.position) cannot be read: \(error)")
        }
    }
}
