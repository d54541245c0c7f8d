import EventStore
import StrataCore
import Synchronization

/// The event store's in-memory twin: the same append rules (the shared
/// `AppendPlanner`), the same chain, no file. For deciders' and projections' tests.
public final class InMemoryEventStore: EventStore {
    private let clock: any WallClock
    private let state: Mutex<Storage>

    struct Storage: AppendBackend, Sendable {
        var events: [RecordedEvent] = []
        var versions: [String: Int64] = [:]
        var journal: [String: JournalEntry] = [:]
        var tip = ChainTip.empty
        var lastRecordedAt: Timestamp?

        func journalEntry(commandId: String) throws(StoreError) -> JournalEntry? { journal[commandId] }
        func currentVersion(of stream: String) throws(StoreError) -> Int64 { versions[stream] ?? 0 }

        mutating func insert(_ event: RecordedEvent) throws(StoreError) {
            events.append(event)
            versions[event.stream] = event.version
        }

        mutating func insertIfNew(_ entry: JournalEntry) throws(StoreError) -> Bool {
            guard journal[entry.commandId] == nil else { return false }
            journal[entry.commandId] = entry
            return true
        }
    }

    public init(clock: any WallClock = SystemClock()) {
        self.clock = clock
        self.state = Mutex(Storage())
    }

    public func appendReturningEvents(_ commands: [CommandWrite], at instant: Timestamp?) throws(StoreError)
        -> (results: [CommandResult], events: [RecordedEvent])
    {
        let wanted = instant ?? clock.now()
        return try state.withLock { (storage) throws(StoreError) -> (results: [CommandResult], events: [RecordedEvent]) in
            let instant = max(wanted, storage.lastRecordedAt ?? wanted)
            let recordedAt = instant.description
            // Appends in place, without a copy of the history per call. All or nothing still
            // holds: this backend never fails, and the planner throws only what a backend throws.
            var chain = InlineChain(after: storage.tip.hash)
            let (results, tip, events) = try AppendPlanner.append(
                commands, to: &storage, tip: storage.tip, recordedAt: recordedAt, chain: &chain)
            storage.tip = tip
            storage.lastRecordedAt = instant
            return (results, events)
        }
    }

    public func head() throws(StoreError) -> Int64 { state.withLock { $0.tip.position } }

    public func events(after position: Int64, limit: Int, filter: EventFilter) throws(StoreError) -> [RecordedEvent] {
        guard limit > 0 else { throw StoreError(.invalidArgument, "limit must be ≥ 1, got \(limit)") }
        try filter.validate()
        return state.withLock { storage in
            let start = Int(max(0, min(position, Int64(storage.events.count))))
            return Array(storage.events[start...].lazy.filter { filter.matches(stream: $0.stream, type: $0.type) }.prefix(limit))
        }
    }

    public func events(in stream: StreamName, fromVersion: Int64, limit: Int) throws(StoreError) -> [RecordedEvent] {
        guard limit > 0 else { throw StoreError(.invalidArgument, "limit must be ≥ 1, got \(limit)") }
        let name = stream.description
        return state.withLock { storage in
            Array(storage.events.lazy.filter { $0.stream == name && $0.version >= fromVersion }.prefix(limit))
        }
    }

    public func version(of stream: StreamName) throws(StoreError) -> Int64 {
        state.withLock { $0.versions[stream.description] ?? 0 }
    }

    public func journalEntry(commandId: String) throws(StoreError) -> JournalEntry? {
        state.withLock { $0.journal[commandId] }
    }

    public func verify(progress: (@Sendable (Int64) -> Void)?) throws(StoreError) -> ChainReport {
        state.withLock { storage in
            var verifier = ChainVerifier()
            for event in storage.events where !verifier.check(event) { break }
            return verifier.report()
        }
    }
}
