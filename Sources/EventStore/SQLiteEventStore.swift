import StrataCore
import StrataSQLite
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The event store in one SQLite file (WAL, `synchronous=FULL`).
///
/// A writer holds `<file>-lock` for as long as it is open, so a second writer in
/// another process refuses to start; read-only stores (`status`, `replay`, `verify`,
/// sqlite3) keep working beside it. Calls are serialised by a mutex: the store is safe
/// to share between threads, and the command service calls it from its own writer thread.
public final class SQLiteEventStore: EventStore {
    /// `PRAGMA application_id` of a Strata event store ("STRA").
    public static let applicationId: Int64 = 0x5354_5241
    /// `PRAGMA user_version`: the schema this code writes and reads.
    public static let schemaVersion: Int64 = 1

    public let path: String
    public let isReadOnly: Bool
    private let clock: any WallClock
    /// Hears of the writer lock taken again or lost (`keepWriterLock()`).
    private let logger: Logger
    /// The file's device and inode when the writer opened it: `displacement()` compares the path
    /// with them.
    private let opened: FileIdentity?
    /// What the writer's open found of the file's structure (nil for readers, which do not check).
    public let structureCheck: StructureCheck?
    /// Internal rather than private for the checkpoint half of the store, in its own file.
    let state: Mutex<State>

    struct State: ~Copyable {
        let connection: SQLiteConnection
        var tip: ChainTip
        /// The instant of the last append (at open, of the last event): no append is recorded
        /// before it.
        var lastRecordedAt: Timestamp?
        /// Hashes the chain of large appends beside the writer; started by the first one.
        var chainThread: ChainHashingThread?
        /// The writer lock (nil for readers); taken again when its file goes (`keepWriterLock()`).
        var lock: WriterLock?
        /// Whether another process holds the lock at the path, said once when it starts.
        var lockHeldElsewhere = false
        /// Why this store appends nothing more, for good: another process appended while the
        /// lock file was missing.
        var superseded: String?
        /// Category sets (sorted) found to hold more than `smallCategory` events, whose pages
        /// walk the table: a category only grows, so its index need not be counted again.
        var largeCategories: Set<[String]> = []
    }

    /// Appends of at least this many events hash their chain on `chainThread`; smaller ones
    /// hash inline, as waking another thread would cost them more than it saves.
    package static let threadedChainMinimum = 16

    /// Opens (creating if needed) the store for writing, taking the writer lock. A damaged
    /// file is refused (`.corrupt`) before anything is written to it: the writer would
    /// otherwise chain new events onto whatever SQLite could still read.
    ///
    /// `maximumBytes` caps the file (`PRAGMA max_page_count`): an append that would grow it
    /// further fails as `.full`, as on a full disk, and writes nothing.
    ///
    /// `logger` hears of the file's background checkpoints failing, which the writer never sees.
    public init(
        path: String, clock: any WallClock = SystemClock(), maximumBytes: Int64? = nil,
        logger: Logger = Logger(label: "store")
    ) throws(StoreError) {
        let lock = try WriterLock.acquire(for: path)
        do {
            let connection = try SQLiteEventStore.open(path, mode: .readWrite)
            let check = try SQLiteEventStore.prepareForWriting(connection, path: path, logger: logger)
            if let maximumBytes { try SQLiteEventStore.limitSize(connection, to: maximumBytes, path: path) }
            let (tip, lastRecordedAt) = try SQLiteEventStore.loadTip(connection)
            self.path = path
            self.isReadOnly = false
            self.clock = clock
            self.logger = logger
            self.structureCheck = check
            self.opened = FileIdentity(path: path)
            self.state = Mutex(State(connection: connection, tip: tip, lastRecordedAt: lastRecordedAt, lock: lock))
        } catch {
            lock.release()
            throw error
        }
    }

    /// Opens an existing store for reading only; no lock, works while a writer runs.
    public init(readingAt path: String) throws(StoreError) {
        let connection = try SQLiteEventStore.open(path, mode: .readOnly)
        try SQLiteEventStore.checkIdentity(connection, path: path, allowEmpty: false)
        self.path = path
        self.isReadOnly = true
        self.clock = SystemClock()
        self.logger = Logger(label: "store")
        self.structureCheck = nil
        self.opened = nil
        self.state = Mutex(State(connection: connection, tip: .empty, lastRecordedAt: nil))
    }

    deinit {
        state.withLock { state in
            state.chainThread?.close()
            state.lock?.release()
        }
    }

    // MARK: - Opening

    static func open(_ path: String, mode: SQLiteConnection.Mode) throws(StoreError) -> SQLiteConnection {
        do {
            return try SQLiteConnection(path: path, mode: mode)
        } catch {
            throw StoreError(error, while: "opening the event store \(path)")
        }
    }

    /// Refuses, on a connection of the caller's, a file that is not a readable Strata event
    /// store: for readers of the store's own tables in SQL, such as the command journal.
    public static func checkIsStore(_ c: SQLiteConnection, path: String) throws(StoreError) {
        try checkIdentity(c, path: path, allowEmpty: false)
    }

    /// Refuses files that are not Strata event stores or come from a newer schema.
    static func checkIdentity(_ c: SQLiteConnection, path: String, allowEmpty: Bool) throws(StoreError) {
        do {
            let applicationId = try c.scalarInteger("PRAGMA application_id") ?? 0
            let userVersion = try c.scalarInteger("PRAGMA user_version") ?? 0
            let tables = try c.scalarInteger("SELECT count(*) FROM sqlite_master") ?? 0
            if applicationId == 0, tables == 0, allowEmpty { return }
            guard applicationId == SQLiteEventStore.applicationId, tables > 0 else {
                throw StoreError(.corrupt, "\(path) is not a Strata event store")
            }
            guard userVersion <= schemaVersion else {
                throw StoreError(
                    .unsupportedVersion, "\(path) has schema version \(userVersion); this strata reads up to \(schemaVersion)")
            }
            // Touch the table so a truncated or damaged file fails here, at start.
            _ = try c.scalarInteger("SELECT max(position) FROM events")
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError where error.isCorrupt {
            throw StoreError.damaged(path, "\(error.message) (SQLite \(error.code))")
        } catch let error as SQLiteError {
            throw StoreError(error, while: "reading \(path)")
        } catch {
            throw StoreError(.io, "reading \(path): \(error)")
        }
    }

    private static func prepareForWriting(
        _ c: SQLiteConnection, path: String, logger: Logger
    ) throws(StoreError) -> StructureCheck {
        try checkIdentity(c, path: path, allowEmpty: true)
        let check = try checkStructure(c, path: path)
        do {
            try c.usePageSizeForNewFile()
            guard try c.scalarText("PRAGMA journal_mode=WAL")?.lowercased() == "wal" else {
                throw StoreError(.io, "cannot switch \(path) to WAL mode")
            }
            try c.execute("PRAGMA synchronous=FULL")
            // The log is copied back into the file on a thread of its own, not inside the
            // group commit that crosses SQLite's checkpoint threshold.
            c.checkpointInBackground(logger: logger)
            try c.transaction {
                try c.execute(schema)
                try c.execute("PRAGMA application_id=\(applicationId)")
                try c.execute("PRAGMA user_version=\(schemaVersion)")
            }
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw StoreError(error, while: "preparing \(path)")
        } catch {
            throw StoreError(.io, "preparing \(path): \(error)")
        }
        return check
    }

    /// The tables as CONTRACT.md "Files" names them. `data` and `metadata` hold
    /// canonical JSON text; `prev_hash` and `hash` lowercase hex. `checkpoints` holds the
    /// command service's signed (position, hash) pairs (`SignedCheckpoint`); a store made
    /// before it existed gets it at its next writer open, and readers cope without it; so does
    /// `events_by_invoice_party` (`hasInvoice(forParty:)`).
    static let schema = """
        CREATE TABLE IF NOT EXISTS events (
            position       INTEGER PRIMARY KEY,
            stream         TEXT    NOT NULL,
            version        INTEGER NOT NULL,
            type           TEXT    NOT NULL,
            schema_version INTEGER NOT NULL,
            recorded_at    TEXT    NOT NULL,
            data           TEXT    NOT NULL,
            metadata       TEXT    NOT NULL,
            prev_hash      TEXT    NOT NULL,
            hash           TEXT    NOT NULL,
            UNIQUE (stream, version)
        );
        CREATE INDEX IF NOT EXISTS events_by_type ON events (type, position);
        CREATE INDEX IF NOT EXISTS events_by_invoice_party
            ON events (json_extract(data, '$.customer.partyId')) WHERE type = 'InvoiceCreated';
        CREATE TABLE IF NOT EXISTS commands (
            command_id   TEXT    PRIMARY KEY,
            body_digest  TEXT    NOT NULL,
            key_id       TEXT,
            actor        TEXT    NOT NULL,
            command_type TEXT    NOT NULL,
            outcome      TEXT    NOT NULL CHECK (outcome IN ('accepted', 'refused')),
            result       TEXT    NOT NULL,
            recorded_at  TEXT    NOT NULL,
            head         INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS checkpoints (
            position   INTEGER PRIMARY KEY,
            hash       TEXT    NOT NULL,
            signed_at  TEXT    NOT NULL,
            public_key TEXT    NOT NULL,
            signature  TEXT    NOT NULL
        );
        """

    /// The last event's position and hash, and when it was recorded.
    private static func loadTip(_ c: SQLiteConnection) throws(StoreError) -> (ChainTip, recordedAt: Timestamp?) {
        do {
            let s = try c.statement("SELECT position, hash, recorded_at FROM events ORDER BY position DESC LIMIT 1")
            defer { s.reset() }
            guard try s.step() else { return (.empty, nil) }
            let hex = s.text(1)
            guard let hash = Hex.decode(hex), hash.count == 32 else {
                throw StoreError(.corrupt, "the last event's hash is not 64 hex digits: \(hex)")
            }
            // Always an instant this code wrote; were it not, the clock alone would be the floor.
            return (ChainTip(position: s.int64(0), hash: hash, hashHex: hex), Timestamp(s.text(2)))
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw StoreError(error, while: "reading the chain's tip")
        } catch {
            throw StoreError(.io, "reading the chain's tip: \(error)")
        }
    }

    // MARK: - Appending

    /// Why nothing more may be appended when the path no longer names the file this writer
    /// opened; nil while it does. SQLite writes on into the file it has open: removed, or moved
    /// away and another put in its place (a backup restored by hand while the service ran), it
    /// would take commands that no reader, and no later start, ever sees. Checked before each
    /// append (one `stat`), so none is acknowledged once it happened.
    func displacement() -> String? {
        switch opened?.change(at: path) {
        case nil:
            return nil
        case .removed:
            return "\(path) was removed or moved away while this process had it open: nothing more is recorded. "
                + "The file stays readable through /proc/\(getpid())/fd until this process ends: copy it back, "
                + "or stop the service and restore a backup (strata restore)"
        case .replaced:
            return "\(path) was replaced by another file while this process had it open: nothing more is recorded "
            + "in the file it opened, which is no longer at that path. Stop the service, and start it on the file "
            + "there now (strata restore puts a backup in place with every process stopped)"
        }
    }

    public func appendReturningEvents(_ commands: [CommandWrite], at instant: Timestamp?) throws(StoreError)
        -> (results: [CommandResult], events: [RecordedEvent])
    {
        guard !isReadOnly else { throw StoreError(.readOnly, "\(path) was opened read-only") }
        guard !commands.isEmpty else { return ([], []) }
        if let displaced = displacement() { throw StoreError(.io, displaced) }
        let wanted = instant ?? clock.now()
        return try state.withLock { (state) throws(StoreError) -> (results: [CommandResult], events: [RecordedEvent]) in
            try keepWriterLock(&state)
            let instant = max(wanted, state.lastRecordedAt ?? wanted)
            let recordedAt = instant.description
            let c = state.connection
            do throws(SQLiteError) {
                try c.execute("BEGIN IMMEDIATE")
            } catch {
                throw StoreError(error, while: "starting a transaction")
            }
            var backend = SQLiteBackend(connection: c)
            do throws(StoreError) {
                let (results, tip, events) = try Self.append(
                    commands, to: &backend, state: &state, recordedAt: recordedAt)
                do throws(SQLiteError) {
                    try c.execute("COMMIT")
                } catch {
                    throw StoreError(error, while: "committing")
                }
                state.tip = tip
                state.lastRecordedAt = instant
                return (results, events)
            } catch {
                if !c.isAutocommit { try? c.execute("ROLLBACK") }
                throw error
            }
        }
    }

    /// Takes the writer lock again when its file was removed or replaced while this store was
    /// open (taken for a stale lock file, say): a second writer (another `serve`, `admin
    /// bootstrap`, `restore`) would otherwise create the file afresh, take its lock, and write
    /// beside this one. Each append calls it first; a writer with nothing to append calls it now
    /// and then, so that the lock is back within a moment even while nothing is appended.
    ///
    /// Throws `.locked` while another process holds the lock at the path, and for good once
    /// another appended while it was free: this store's tip, and what its user decided from
    /// what it read, belong to a history that has moved on without them.
    public func keepWriterLock() throws(StoreError) {
        try state.withLock { (state) throws(StoreError) in try keepWriterLock(&state) }
    }

    private func keepWriterLock(_ state: inout State) throws(StoreError) {
        if let superseded = state.superseded { throw StoreError(.locked, superseded) }
        guard let lock = state.lock, !lock.isInPlace else { return }
        do {
            state.lock = try lock.retaken()
        } catch {
            guard error.kind == .locked else { throw error }
            let refusal = StoreError(.locked, "\(error.message): nothing more is recorded here until it lets go")
            if !state.lockHeldElsewhere { logger.error("\(refusal.message)") }
            state.lockHeldElsewhere = true
            throw refusal
        }
        state.lockHeldElsewhere = false
        let (tip, _) = try Self.loadTip(state.connection)
        guard tip.position == state.tip.position, tip.hash == state.tip.hash else {
            let superseded =
                "another process appended to \(path) (its head is \(tip.position), this process's was "
                + "\(state.tip.position)) while its writer lock file was missing: this process decided from a history "
                + "that has moved on and records nothing more; restart it"
            state.superseded = superseded
            logger.error("\(superseded)")
            throw StoreError(.locked, superseded)
        }
        logger.warning(
            "\(lock.path) was removed or replaced while this process held it (taken for a stale lock file?): "
                + "the lock is taken again, so that no second writer starts")
    }

    /// `AppendPlanner.append`, its chain hashed on the chain thread when the append is large.
    private static func append(
        _ commands: [CommandWrite], to backend: inout SQLiteBackend, state: inout State, recordedAt: String
    ) throws(StoreError) -> (results: [CommandResult], tip: ChainTip, events: [RecordedEvent]) {
        let events = commands.reduce(0) { count, command in
            guard case .append(let events, _) = command.decision else { return count }
            return count + events.count
        }
        guard events >= threadedChainMinimum else {
            var chain = InlineChain(after: state.tip.hash)
            return try AppendPlanner.append(
                commands, to: &backend, tip: state.tip, recordedAt: recordedAt, chain: &chain)
        }
        let thread = state.chainThread ?? ChainHashingThread()
        state.chainThread = thread
        var chain = thread.chain(after: state.tip.hash)
        return try AppendPlanner.append(
            commands, to: &backend, tip: state.tip, recordedAt: recordedAt, chain: &chain)
    }

    // MARK: - Reading

    /// Runs `body` inside one read transaction. Each read on its own is a transaction of its
    /// own, which takes and releases the WAL's read lock (two `fcntl` calls); the writer
    /// reads the journal and the streams of every command it decides, so a batch's reads
    /// share one. The transaction ends before `body`'s caller appends. When one is open
    /// already (a call inside another), `body` runs in that one.
    public func readingTogether<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        let began = state.withLock { state -> Bool in
            guard state.connection.isAutocommit else { return false }
            return (try? state.connection.execute("BEGIN")) != nil
        }
        defer {
            if began {
                state.withLock { state in
                    // A read transaction that cannot commit (it cannot fail) is rolled back,
                    // never left open for the next append to trip over.
                    if (try? state.connection.execute("COMMIT")) == nil, !state.connection.isAutocommit {
                        try? state.connection.execute("ROLLBACK")
                    }
                }
            }
        }
        return try body()
    }

    public func head() throws(StoreError) -> Int64 {
        try state.withLock { (state) throws(StoreError) -> Int64 in
            if !isReadOnly { return state.tip.position }
            do throws(SQLiteError) {
                return try state.connection.scalarInteger("SELECT max(position) FROM events") ?? 0
            } catch {
                throw StoreError(error, while: "reading the head")
            }
        }
    }

    /// The last position recorded at or before `instant` (0 when none): where `--as-of TIME`
    /// stops. recorded_at is fixed-width UTC text, so comparing text compares instants.
    public func lastPosition(recordedAtOrBefore instant: Timestamp) throws(StoreError) -> Int64 {
        try state.withLock { (state) throws(StoreError) -> Int64 in
            do throws(SQLiteError) {
                return try state.connection.scalarInteger(
                    "SELECT max(position) FROM events WHERE recorded_at <= ?", .text(instant.description)) ?? 0
            } catch {
                throw StoreError(error, while: "finding the last position at \(instant)")
            }
        }
    }

    static let columns = "position, stream, version, type, schema_version, recorded_at, data, metadata, prev_hash, hash"

    /// What each of `columns` holds in a row Strata wrote.
    private static let columnClasses: [SQLiteStorageClass] = [
        .integer, .text, .integer, .text, .integer, .text, .text, .text, .text, .text,
    ]
    private static let columnNames = columns.split(separator: ", ").map(String.init)
    /// `version` and `schema_version`: the columns whose typed read may give another value than
    /// the row holds (a REAL 1.5 reads as 1; text columns read back the bytes they hold).
    static let integerColumns = [2, 4]
    static let allColumns = Array(0..<10)

    /// Why the row `s` is on (a `SELECT` of `columns`) is not as Strata wrote it, when one of
    /// `checked` holds another storage class; nil for a row as written. Such a row still hashes
    /// as before through the typed reads (a `version` of 1.5 reads as 1, a `stream` made a BLOB
    /// as the same bytes) while SQL sees another value (`max(version)`, `WHERE stream = ?`):
    /// tampering the hash alone cannot show. `verify` checks every column; a replay, which
    /// prints what it reads, the integers (each check costs a call into SQLite, a tenth of a
    /// replay's work for all ten).
    static func mistypedColumn(_ s: SQLiteStatement, checking checked: [Int] = allColumns) -> String? {
        for index in checked {
            let held = s.storageClass(Int32(index))
            let expected = columnClasses[index]
            guard held != expected else { continue }
            return "its \(columnNames[index]) holds a \(held.rawValue) value where Strata writes \(expected.rawValue): "
                + "the row was changed outside Strata"
        }
        return nil
    }

    /// The refusal of a read that meets a row `mistypedColumn` finds changed.
    private static func damage(_ s: SQLiteStatement, checking checked: [Int] = allColumns) -> StoreError? {
        mistypedColumn(s, checking: checked).map {
            StoreError(.corrupt, "the event at position \(s.int64(0)) is damaged: \($0)")
        }
    }

    public func events(after position: Int64, limit: Int, filter: EventFilter) throws(StoreError) -> [RecordedEvent] {
        guard limit > 0 else { throw StoreError(.invalidArgument, "limit must be ≥ 1, got \(limit)") }
        try filter.validate()
        if case .types(let types) = filter, Set(types).count > 1 {
            // Each type on its own, in the order of its index, merged in one read transaction:
            // with `type IN (…) ORDER BY position`, SQLite gathered and sorted every later event
            // of those types for each page, so paging through many of them (the writer's
            // directory, from every invoice, at each start) cost the square of their number.
            return try readingTogether { () throws(StoreError) -> [RecordedEvent] in
                var merged: [RecordedEvent] = []
                for type in Set(types) { merged += try events(after: position, limit: limit, filter: .types([type])) }
                merged.sort { $0.position < $1.position }
                return Array(merged.prefix(limit))
            }
        }
        var sql = "SELECT \(SQLiteEventStore.columns) FROM events WHERE position > ?"
        var bindings: [SQLiteValue] = [.integer(position)]
        switch filter {
        case .all:
            break
        case .categories(let categories):
            return try events(after: position, limit: limit, categories: categories)
        case .types(let types):
            sql += " AND type IN (" + types.map { _ in "?" }.joined(separator: ", ") + ")"
            bindings += types.map { .text($0) }
        }
        sql += " ORDER BY position LIMIT ?"
        bindings.append(.integer(Int64(clamping: limit)))
        return try read(sql, bindings)
    }

    /// The command writer loads every stream its cache lacks through this, so it is found by
    /// number, not by building its SQL and hashing it on each call (1% of the writer's work).
    private static let streamEvents = SQLiteStatementKey(
        "SELECT \(columns) FROM events WHERE stream = ? AND version >= ? ORDER BY version LIMIT ?")

    public func events(in stream: StreamName, fromVersion: Int64, limit: Int) throws(StoreError) -> [RecordedEvent] {
        guard limit > 0 else { throw StoreError(.invalidArgument, "limit must be ≥ 1, got \(limit)") }
        return try read { (c) throws(SQLiteError) in
            let s = try c.statement(Self.streamEvents)
            try s.bind(stream.description, at: 1)
            try s.bind(fromVersion, at: 2)
            try s.bind(Int64(clamping: limit), at: 3)
            return s
        }
    }

    public func version(of stream: StreamName) throws(StoreError) -> Int64 {
        try state.withLock { (state) throws(StoreError) -> Int64 in
            try SQLiteBackend(connection: state.connection).currentVersion(of: stream.description)
        }
    }

    public func journalEntry(commandId: String) throws(StoreError) -> JournalEntry? {
        try state.withLock { (state) throws(StoreError) -> JournalEntry? in
            try SQLiteBackend(connection: state.connection).journalEntry(commandId: commandId)
        }
    }

    /// Streams the events that pass `filter`, in position order, without holding more than
    /// one row: `body` sees each row in turn and returns false to stop early. It all runs in
    /// one read transaction, a snapshot: events appended meanwhile are not seen, and `began`
    /// is told the head the read ends at before the first row. Returns how many rows `body` saw.
    @discardableResult
    public func forEachEvent(
        matching filter: ReplayFilter, began: ((_ head: Int64) -> Void)? = nil,
        _ body: (borrowing StoredEventRow) -> Bool
    ) throws(StoreError) -> Int64 {
        try filter.validate()
        return try state.withLock { (state) throws(StoreError) -> Int64 in
            let c = state.connection
            var seen: Int64 = 0
            var damage: StoreError?
            do throws(SQLiteError) {
                try c.execute("BEGIN")
                defer { try? c.execute("COMMIT") }
                let head = try c.scalarInteger("SELECT max(position) FROM events") ?? 0
                began?(head)
                let (sql, bindings) = filter.query(head: head)
                let s = try c.statement(sql)
                defer { s.reset() }
                try s.bind(bindings)
                while try s.step() {
                    damage = SQLiteEventStore.damage(s, checking: SQLiteEventStore.integerColumns)
                    guard damage == nil else { break }
                    seen += 1
                    guard body(StoredEventRow(s)) else { break }
                }
            } catch {
                throw StoreError(error, while: "reading events")
            }
            if let damage { throw damage }
            return seen
        }
    }

    func read(_ sql: String, _ bindings: [SQLiteValue]) throws(StoreError) -> [RecordedEvent] {
        try read { (c) throws(SQLiteError) in
            let s = try c.statement(sql)
            try s.bind(bindings)
            return s
        }
    }

    /// The events of the statement `prepare` gives, bound and ready to step.
    func read(
        _ prepare: (SQLiteConnection) throws(SQLiteError) -> SQLiteStatement
    ) throws(StoreError) -> [RecordedEvent] {
        try state.withLock { (state) throws(StoreError) -> [RecordedEvent] in
            var events: [RecordedEvent] = []
            var damage: StoreError?
            do throws(SQLiteError) {
                let s = try prepare(state.connection)
                defer { s.reset() }
                while try s.step() {
                    damage = SQLiteEventStore.damage(s)
                    guard damage == nil else { break }
                    events.append(SQLiteEventStore.event(from: s))
                }
            } catch {
                throw StoreError(error, while: "reading events")
            }
            if let damage { throw damage }
            return events
        }
    }

    static func event(from s: SQLiteStatement) -> RecordedEvent {
        RecordedEvent(
            position: s.int64(0), stream: s.text(1), version: s.int64(2), type: s.text(3),
            schemaVersion: Int(s.int64(4)), recordedAt: s.text(5), data: s.bytes(6), metadata: s.bytes(7),
            prevHash: s.text(8), hash: s.text(9))
    }
}

/// The append primitives over one SQLite connection, inside its open transaction.
private struct SQLiteBackend: AppendBackend {
    let connection: SQLiteConnection

    private static let journalLookup = SQLiteStatementKey(
        "SELECT body_digest, key_id, actor, command_type, result, recorded_at, head FROM commands WHERE command_id = ?")
    private static let streamVersion = SQLiteStatementKey("SELECT max(version) FROM events WHERE stream = ?")
    private static let insertEvent = SQLiteStatementKey(
        "INSERT INTO events (\(SQLiteEventStore.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    private static let insertJournalEntry = SQLiteStatementKey(
        """
        INSERT INTO commands (command_id, body_digest, key_id, actor, command_type, outcome, result, recorded_at, head)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (command_id) DO NOTHING
        """)

    func journalEntry(commandId: String) throws(StoreError) -> JournalEntry? {
        do {
            let s = try connection.statement(Self.journalLookup)
            defer { s.reset() }
            try s.bind(commandId, at: 1)
            guard try s.step() else { return nil }
            let resultText = s.bytes(4)
            guard let digest = Hex.decode(s.text(0)), let json = try? JSONParser.parse(resultText),
                let outcome = CommandOutcome(journalJSON: json)
            else {
                throw StoreError(.corrupt, "the journal entry of command \(commandId) is unreadable")
            }
            return JournalEntry(
                commandId: commandId, bodyDigest: digest, keyId: s.isNull(1) ? nil : s.text(1), actor: s.text(2),
                commandType: s.text(3), outcome: outcome, recordedAt: s.text(5), head: s.int64(6))
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw StoreError(error, while: "reading the command journal")
        } catch {
            throw StoreError(.io, "reading the command journal: \(error)")
        }
    }

    func currentVersion(of stream: String) throws(StoreError) -> Int64 {
        do {
            return try connection.scalarInteger(Self.streamVersion, .text(stream)) ?? 0
        } catch {
            throw StoreError(error, while: "reading the version of \(stream)")
        }
    }

    mutating func insert(_ event: RecordedEvent) throws(StoreError) {
        do throws(SQLiteError) {
            let s = try connection.statement(Self.insertEvent)
            defer { s.reset() }
            try s.bind(event.position, at: 1)
            try s.bind(event.stream, at: 2)
            try s.bind(event.version, at: 3)
            try s.bind(event.type, at: 4)
            try s.bind(Int64(event.schemaVersion), at: 5)
            try s.bind(event.recordedAt, at: 6)
            try s.bind(event.prevHash, at: 9)
            try s.bind(event.hash, at: 10)
            // The two large columns without a copy: they are bound only while they are in reach.
            var failure: SQLiteError?
            event.data.withUnsafeBytes { data in
                event.metadata.withUnsafeBytes { metadata in
                    do throws(SQLiteError) {
                        try s.bind(unretainedUTF8: data, at: 7)
                        try s.bind(unretainedUTF8: metadata, at: 8)
                        while try s.step() {}
                    } catch {
                        failure = error
                    }
                }
            }
            if let failure { throw failure }
        } catch {
            throw StoreError(error, while: "appending event \(event.position)")
        }
    }

    mutating func insertIfNew(_ entry: JournalEntry) throws(StoreError) -> Bool {
        let outcome: String
        if case .accepted = entry.outcome { outcome = "accepted" } else { outcome = "refused" }
        do {
            let s = try connection.statement(Self.insertJournalEntry)
            defer { s.reset() }
            try s.bind(entry.commandId, at: 1)
            try s.bind(Hex.encode(entry.bodyDigest), at: 2)
            try s.bind(entry.keyId.map { .text($0) } ?? .null, at: 3)
            try s.bind(entry.actor, at: 4)
            try s.bind(entry.commandType, at: 5)
            try s.bind(outcome, at: 6)
            try s.bind(utf8: entry.outcome.journalBytes, at: 7)
            try s.bind(entry.recordedAt, at: 8)
            try s.bind(entry.head, at: 9)
            while try s.step() {}
            return connection.changes == 1
        } catch {
            throw StoreError(error, while: "journaling command \(entry.commandId)")
        }
    }
}
