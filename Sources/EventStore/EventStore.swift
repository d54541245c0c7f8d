import Events
import StrataCore

/// The event store: the system of record.
///
/// Guarantees every implementation keeps (the conformance tests run against each):
/// - one command's events, across all the streams it touches, are written entirely or
///   not at all; one `append` call may carry many commands (group commit), each
///   all-or-nothing on its own;
/// - positions are 1, 2, 3, … with no gaps, in commit order; a stream's versions are
///   1, 2, 3, …;
/// - every event is chained: `hash = SHA-256(prevHash ‖ canonical event)`;
/// - a command id is decided once: the journal answers retries with the first outcome.
public protocol EventStore: Sendable {
    /// Appends the decisions of several commands in one transaction. Returns one result per
    /// command, in order, and the events written, in position order, exactly as stored: what
    /// the command service publishes, without reading back what it just wrote. Throws only
    /// when nothing was written.
    ///
    /// `instant` is when the commands were decided (the command service's batch), recorded as
    /// their events' `recordedAt` and their journal rows' time, so that the times a decision
    /// writes into its events equal when they were recorded; nil takes the store's clock.
    /// Either way the store never records an instant before the last one it recorded: a wall
    /// clock stepped back would otherwise put later positions at earlier times, and a question
    /// asked by time (`replay --since`, `query --as-of TIME`) would get a history with holes.
    func appendReturningEvents(_ commands: [CommandWrite], at instant: Timestamp?) throws(StoreError)
        -> (results: [CommandResult], events: [RecordedEvent])

    /// The last committed position; 0 for an empty store.
    func head() throws(StoreError) -> Int64

    /// Events with position > `position`, in order, at most `limit`, that pass `filter`.
    func events(after position: Int64, limit: Int, filter: EventFilter) throws(StoreError) -> [RecordedEvent]

    /// One stream's events with version ≥ `fromVersion`, in order, at most `limit`.
    func events(in stream: StreamName, fromVersion: Int64, limit: Int) throws(StoreError) -> [RecordedEvent]

    /// A stream's version: its number of events; 0 when it does not exist.
    func version(of stream: StreamName) throws(StoreError) -> Int64

    /// The journal entry of a command id, if that id was ever decided.
    func journalEntry(commandId: String) throws(StoreError) -> JournalEntry?

    /// Walks the whole chain and reports the first problem, if any.
    func verify(progress: (@Sendable (Int64) -> Void)?) throws(StoreError) -> ChainReport

    /// Runs `body`, whose reads of this store all see one snapshot. For the store's one
    /// user while it runs: `body` appends nothing.
    func readingTogether<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T

    /// Makes sure this writer still holds the one-writer lock, taking it again when it can:
    /// its user calls it now and then while it has nothing to append (appends check it too).
    /// Throws `.locked` while another process holds it.
    func keepWriterLock() throws(StoreError)

    /// Whether an invoice names `partyId` as its customer (`InvoiceCreated`'s
    /// `customer.partyId`): all an erasure asks of a party. The store answers it, from an index
    /// where it has one, so that the command service need not hold every customer in memory.
    func hasInvoice(forParty partyId: String) throws(StoreError) -> Bool
}

extension EventStore {
    /// Appends the decisions of several commands in one transaction; one result per command.
    /// Appends, recorded at the store's clock (never before its last recorded instant).
    public func appendReturningEvents(_ commands: [CommandWrite]) throws(StoreError)
        -> (results: [CommandResult], events: [RecordedEvent])
    {
        try appendReturningEvents(commands, at: nil)
    }

    public func append(_ commands: [CommandWrite]) throws(StoreError) -> [CommandResult] {
        try appendReturningEvents(commands, at: nil).results
    }

    public func append(_ command: CommandWrite) throws(StoreError) -> CommandResult {
        try append([command])[0]
    }

    public func events(after position: Int64, limit: Int) throws(StoreError) -> [RecordedEvent] {
        try events(after: position, limit: limit, filter: .all)
    }

    public func events(in stream: StreamName) throws(StoreError) -> [RecordedEvent] {
        try events(in: stream, fromVersion: 1, limit: Int.max)
    }

    /// A store that has no transactions to share reads as it always does.
    public func readingTogether<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try body()
    }

    public func verify() throws(StoreError) -> ChainReport {
        try verify(progress: nil)
    }

    /// A store without a lock between processes has none to keep.
    public func keepWriterLock() throws(StoreError) {}

    /// Reads every invoice until one names the party: for stores that keep no index of them.
    public func hasInvoice(forParty partyId: String) throws(StoreError) -> Bool {
        var after: Int64 = 0
        while true {
            let page = try events(after: after, limit: 1000, filter: .types([InvoiceCreated.eventType]))
            for recorded in page {
                let event: StrataEvent
                do {
                    event = try recorded.decoded()
                } catch {
                    throw StoreError(.corrupt, "event \(recorded.position) cannot be read: \(error)")
                }
                if case .invoiceCreated(let invoice) = event, invoice.customer.partyId == partyId { return true }
            }
            guard let last = page.last else { return false }
            after = last.position
        }
    }
}

/// Which events a position read returns.
public enum EventFilter: Sendable, Equatable {
    case all
    /// Events whose stream category is one of these (`loan`, `invoice`, …).
    case categories([String])
    /// Events of one of these types (`LoanApproved`, …).
    case types([String])

    /// Refuses empty lists and names that cannot be categories or event types.
    package func validate() throws(StoreError) {
        switch self {
        case .all: return
        case .categories(let categories):
            guard !categories.isEmpty, categories.allSatisfy(StreamName.isValidCategory) else {
                throw StoreError(.invalidArgument, "categories must be 1–32 lowercase letters each: \(categories)")
            }
        case .types(let types):
            guard !types.isEmpty, types.allSatisfy(NewEvent.isValidType) else {
                throw StoreError(.invalidArgument, "event types must be ASCII letters and digits: \(types)")
            }
        }
    }

    package func matches(stream: String, type: String) -> Bool {
        switch self {
        case .all: return true
        case .categories(let categories):
            let category = stream.prefix(while: { $0 != "-" })
            return categories.contains { $0 == category }
        case .types(let types): return types.contains(type)
        }
    }
}

/// What a command expects of a stream's version before its events are appended.
public enum ExpectedVersion: Sendable, Equatable, Hashable {
    /// No check.
    case any
    /// The stream's version must be exactly this; 0 means the stream must not exist.
    case exactly(Int64)
}

/// An event about to be appended: its stream, type, schema version and canonical data.
///
/// The data bytes are canonical JSON (RFC 8785) by construction: they come from a
/// catalog event or a `JSONValue`, through the one canonical encoder.
public struct NewEvent: Sendable, Equatable {
    public let stream: StreamName
    public let type: String
    public let schemaVersion: Int
    public let data: [UInt8]

    public init<Event: DomainEvent>(stream: StreamName, event: Event) throws(StoreError) {
        let data: [UInt8]
        do {
            data = try event.canonicalData()
        } catch {
            throw StoreError(.invalidArgument, "event \(Event.eventType) does not encode: \(error)")
        }
        try self.init(stream: stream, type: Event.eventType, schemaVersion: Event.schemaVersion, canonicalData: data)
    }

    public init(stream: StreamName, type: String, schemaVersion: Int, data: JSONValue) throws(StoreError) {
        guard case .object = data else { throw StoreError(.invalidArgument, "event data must be a JSON object") }
        try self.init(stream: stream, type: type, schemaVersion: schemaVersion, canonicalData: CanonicalJSON.bytes(data))
    }

    private init(stream: StreamName, type: String, schemaVersion: Int, canonicalData: [UInt8]) throws(StoreError) {
        guard NewEvent.isValidType(type) else {
            throw StoreError(.invalidArgument, "event type must be 1–64 ASCII letters and digits, starting with a letter: \(type)")
        }
        guard schemaVersion >= 1 else { throw StoreError(.invalidArgument, "schema version must be ≥ 1, got \(schemaVersion)") }
        self.stream = stream
        self.type = type
        self.schemaVersion = schemaVersion
        self.data = canonicalData
    }

    /// An event type name: 1–64 ASCII letters and digits, from a capital (`LoanApproved`).
    public static func isValidType(_ type: String) -> Bool {
        let utf8 = Array(type.utf8)
        guard (1...64).contains(utf8.count), (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(utf8[0]) else { return false }
        return utf8.allSatisfy { b in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b)
        }
    }
}

/// One command's decision, ready for the store: events to append, or a refusal to journal.
public struct CommandWrite: Sendable, Equatable {
    public enum Decision: Sendable, Equatable {
        /// Append these events (at least one), if every stream is at the expected version.
        case append([NewEvent], expectations: [StreamName: ExpectedVersion])
        /// Journal this refusal (INVALID, NOT_FOUND, FORBIDDEN, CONFLICT, REJECTED).
        case refuse(StrataError)
    }

    /// Unique across the whole system. Operator acts use `operator-<what>-<id>`.
    public let commandId: String
    /// A 32-byte digest of the exact body bytes, so a retry can be told from a reuse of the id:
    /// the command service's is keyed (`BodyDigest`), so that the journal confirms no guess at
    /// the body.
    public let bodyDigest: [UInt8]
    /// The body's plain SHA-256, which commands journaled before digests were keyed hold: a
    /// retry of one of them is still a duplicate. Nil where there are none to match.
    public let legacyBodyDigest: [UInt8]?
    public let keyId: String?
    public let actor: String
    public let commandType: String
    public let correlationId: String?
    public let decision: Decision

    public static let maximumCommandIdLength = 128

    public init(
        commandId: String, bodyDigest: [UInt8], legacyBodyDigest: [UInt8]? = nil, keyId: String? = nil,
        actor: String, commandType: String, correlationId: String? = nil, decision: Decision
    ) throws(StoreError) {
        guard Identifier.isValid(commandId, maximumLength: CommandWrite.maximumCommandIdLength) else {
            throw StoreError(.invalidArgument, "command id must be 1–128 characters of [A-Za-z0-9_-]: \(commandId)")
        }
        guard bodyDigest.count == 32 else { throw StoreError(.invalidArgument, "body digest must be 32 bytes (SHA-256)") }
        guard !actor.isEmpty, actor.utf8.count <= 128 else { throw StoreError(.invalidArgument, "actor must be 1–128 bytes") }
        guard NewEvent.isValidType(commandType) else {
            throw StoreError(.invalidArgument, "command type must be ASCII letters and digits: \(commandType)")
        }
        if case .append(let events, let expectations) = decision {
            guard !events.isEmpty else { throw StoreError(.invalidArgument, "an accepted command appends at least one event") }
            for (stream, expected) in expectations {
                if case .exactly(let v) = expected, v < 0 {
                    throw StoreError(.invalidArgument, "expected version of \(stream) must be ≥ 0, got \(v)")
                }
            }
        }
        self.commandId = commandId
        self.bodyDigest = bodyDigest
        self.legacyBodyDigest = legacyBodyDigest
        self.keyId = keyId
        self.actor = actor
        self.commandType = commandType
        self.correlationId = correlationId
        self.decision = decision
    }
}

/// Where one appended event landed.
public struct AppendedEvent: Sendable, Equatable, Codable {
    public let position: Int64
    public let stream: String
    public let version: Int64
    public let type: String

    public init(position: Int64, stream: String, version: Int64, type: String) {
        self.position = position
        self.stream = stream
        self.version = version
        self.type = type
    }
}

/// What was decided for a command.
public enum CommandOutcome: Sendable, Equatable {
    case accepted([AppendedEvent])
    case refused(StrataError)
}

/// The journal's record of a decided command id. It keeps a digest of the body, never the body.
public struct JournalEntry: Sendable, Equatable {
    public let commandId: String
    public let bodyDigest: [UInt8]
    public let keyId: String?
    public let actor: String
    public let commandType: String
    public let outcome: CommandOutcome
    public let recordedAt: String
    /// The store's head right after this command was decided.
    public let head: Int64

    public init(
        commandId: String, bodyDigest: [UInt8], keyId: String?, actor: String, commandType: String,
        outcome: CommandOutcome, recordedAt: String, head: Int64
    ) {
        self.commandId = commandId
        self.bodyDigest = bodyDigest
        self.keyId = keyId
        self.actor = actor
        self.commandType = commandType
        self.outcome = outcome
        self.recordedAt = recordedAt
        self.head = head
    }
}

/// The answer to one command of an `append` call.
public enum CommandResult: Sendable, Equatable {
    /// The answer to a command whose id `earlier` journaled: a retry is the same body from
    /// the same key; anything else under that id must not learn (or share) the first
    /// command's outcome.
    /// The answer to a command whose id was journaled before: its original outcome when the same
    /// key sent the same body (the journaled digest is `bodyDigest`, or for a command journaled
    /// before digests were keyed, `legacyBodyDigest`), else a reuse of the id.
    public static func answering(
        bodyDigest: [UInt8], legacyBodyDigest: [UInt8]? = nil, keyId: String?, journaledAs earlier: JournalEntry
    ) -> CommandResult {
        let sameBody = earlier.bodyDigest == bodyDigest || (legacyBodyDigest.map { earlier.bodyDigest == $0 } ?? false)
        return sameBody && earlier.keyId == keyId ? .duplicate(earlier) : .idReused(earlier)
    }

    /// Decided now and journaled: accepted (events written) or refused (a version
    /// conflict found by the store, or the refusal the caller decided).
    case recorded(CommandOutcome)
    /// The id was decided before with the same body from the same key: its original
    /// outcome; nothing written.
    case duplicate(JournalEntry)
    /// The id was decided before with a different body, or by another key: refuse as
    /// CONFLICT; nothing written.
    case idReused(JournalEntry)

    public var outcome: CommandOutcome {
        switch self {
        case .recorded(let outcome): return outcome
        case .duplicate(let entry): return entry.outcome
        case .idReused(let entry):
            return .refused(
                StrataError(.conflict, reason: "COMMAND_ID_REUSED", "command id \(entry.commandId) was used before for another body or by another key"))
        }
    }
}
