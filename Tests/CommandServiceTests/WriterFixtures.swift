import CommandService
import Domain
import EventStore
import Events
import StrataCore
import StrataTesting

// What the writer tests share: the first admin, commands as the ingress hands them over, and
// a store that refuses every append.

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
