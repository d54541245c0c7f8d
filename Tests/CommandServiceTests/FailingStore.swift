import EventStore
import StrataCore

/// A store whose every append fails with `failure` (a full disk, an I/O error), reading
/// through to `inner` otherwise: for the rule that a failed commit acknowledges nothing.
final class FailingStore: EventStore {
    let inner: any EventStore
    let failure: StoreError

    init(_ inner: any EventStore, failure: StoreError) {
        self.inner = inner
        self.failure = failure
    }

    func appendReturningEvents(_ commands: [CommandWrite]) throws(StoreError)
        -> (results: [CommandResult], events: [RecordedEvent])
    {
        throw failure
    }
    func head() throws(StoreError) -> Int64 { try inner.head() }
    func events(after position: Int64, limit: Int, filter: EventFilter) throws(StoreError) -> [RecordedEvent] {
        try inner.events(after: position, limit: limit, filter: filter)
    }
    func events(in stream: StreamName, fromVersion: Int64, limit: Int) throws(StoreError) -> [RecordedEvent] {
        try inner.events(in: stream, fromVersion: fromVersion, limit: limit)
    }
    func version(of stream: StreamName) throws(StoreError) -> Int64 { try inner.version(of: stream) }
    func journalEntry(commandId: String) throws(StoreError) -> JournalEntry? {
        try inner.journalEntry(commandId: commandId)
    }
    func verify(progress: (@Sendable (Int64) -> Void)?) throws(StoreError) -> ChainReport {
        try inner.verify(progress: progress)
    }
}
