import CommandService
import Domain
import EventStore
import Events
import StrataCore
import StrataTesting
import Synchronization

// What the writer tests share: the first admin, commands as the ingress hands them over, a
// lending batch, and a store that fails on demand.

/// The operator bootstrap's act, written straight to the store: the first admin.
func bootstrap(_ store: any EventStore) throws {
    let event = UserRegistered(userId: "admin-1", username: "root", email: "root@example.com", role: .admin, status: .approved)
    _ = try store.append(
        CommandWrite(
            commandId: "operator-bootstrap-admin-1", bodyDigest: HashChain.sha256([]), actor: "operator",
            commandType: "BootstrapAdmin",
            decision: .append([try NewEvent(stream: StreamName("user-admin-1")!, event: event)], expectations: [:])))
}

/// `command` as the ingress hands it to the writer, sent by the key `svc`, arriving when the
/// tests' `FixedClock` says it is unless `arrivedAt` says otherwise.
func pending(
    _ id: String, actor: String, _ command: Command, expectedVersion: Int64? = nil, routing: UInt8 = 1,
    arrivedAt: Timestamp = FixedClock().now()
) -> CommandWriter.Pending {
    let body = CommandBody(
        id: id, type: command.type, actor: actor, payload: command.payloadJSON.objectValue!,
        expectedVersion: expectedVersion)
    return CommandWriter.Pending(
        routingId: [routing], keyId: "svc", keyRoles: nil, body: body, bodyBytes: body.json,
        arrivedAt: arrivedAt, configuration: DomainConfiguration())
}


/// A store that fails on demand, reading through to `inner` otherwise: its appends (a full
/// disk, an I/O error: for the rule that a failed commit acknowledges nothing), and its reads
/// by position, which is how the writer folds the directory again when it rebuilds its cache.
final class UnreliableStore: StoreReadingThrough {
    let inner: any EventStore
    private let failures: Mutex<(appends: StoreError?, positionReads: StoreError?)>

    /// Every append fails with `failure`, until told otherwise.
    init(_ inner: any EventStore, failingAppendsWith failure: StoreError? = nil) {
        self.inner = inner
        failures = Mutex((failure, nil))
    }

    func fail(appends: Bool, positionReads: Bool) {
        failures.withLock {
            $0 = (
                appends ? StoreError(.io, "the disk is gone") : nil,
                positionReads ? StoreError(.io, "the disk cannot be read") : nil
            )
        }
    }

    func appendReturningEvents(_ commands: [CommandWrite], at instant: Timestamp?) throws(StoreError)
        -> (results: [CommandResult], events: [RecordedEvent])
    {
        if let failure = failures.withLock({ $0.appends }) { throw failure }
        return try inner.appendReturningEvents(commands, at: instant)
    }
    func events(after position: Int64, limit: Int, filter: EventFilter) throws(StoreError) -> [RecordedEvent] {
        if let failure = failures.withLock({ $0.positionReads }) { throw failure }
        return try inner.events(after: position, limit: limit, filter: filter)
    }
}

/// A store that reads and writes through to `inner`: the tests' stores that watch or disturb
/// the writer's use of a real one (`UnreliableStore`, and those that count or record its reads)
/// write only what they do differently.
protocol StoreReadingThrough: EventStore {
    var inner: any EventStore { get }
}

extension StoreReadingThrough {
    func appendReturningEvents(_ commands: [CommandWrite], at instant: Timestamp?) throws(StoreError)
        -> (results: [CommandResult], events: [RecordedEvent])
    {
        try inner.appendReturningEvents(commands, at: instant)
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
    func hasInvoice(forParty partyId: String) throws(StoreError) -> Bool {
        try inner.hasInvoice(forParty: partyId)
    }
}
