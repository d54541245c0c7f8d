import EventStore
import Events
import Foundation
import Projections
import StrataCore
import StrataSQLite

/// One projection file (`readmodels.db`, `audit.db`): the tables of its projections and,
/// in the same file, the checkpoint that says which events they reflect.
///
/// Every batch of events is applied in one SQLite transaction that also moves the
/// checkpoint, so a crash at any instant leaves the tables and the checkpoint agreeing:
/// nothing is lost, nothing applied twice. The chain is checked as events arrive (each
/// event's `prevHash` must be the last applied `hash`, and its `hash` must recompute),
/// so a projection never reflects events that are not the store's.
///
/// An event a projection cannot apply (a poison event) stops the file there: the events
/// before it are committed, the stop is recorded beside the checkpoint, and nothing
/// after it is applied until an operator resumes or explicitly skips it.
public final class ProjectionDatabase {
    /// `PRAGMA application_id` of a Strata projection file ("STRP").
    public static let applicationId: Int64 = 0x5354_5250

    /// How hard commits push to disk. A projection can always be rebuilt from the store,
    /// so `durable` uses WAL with `synchronous=NORMAL` (atomic, and consistent after a
    /// crash); `scratch` (rebuilds into a fresh file) does not sync at all.
    public enum Durability: Sendable {
        case durable
        case scratch
    }

    public let path: String
    public let name: String
    /// The SHA-256 of every projection's name, schema version and statements: a file made
    /// from another schema is rebuilt, never migrated in place.
    public let fingerprint: String
    /// The last position applied (or skipped); 0 for a new file.
    public private(set) var checkpoint: Int64
    /// The hash of the event at `checkpoint` (64 zeros at 0): the next event's prevHash.
    public private(set) var chainHash: String
    /// Set when the projection stopped at a poison event.
    public private(set) var stop: ProjectionStop?
    /// True when opening found a file of another schema and started it afresh.
    public private(set) var wasReset = false
    /// The stop that file of another schema had recorded (`wasReset`): what `resume()` and `skip`
    /// act on, since the new file, made again from position 0, records none. A fix of a projection
    /// often changes its statements, and `--resume` after it was refused as "not stopped" once the
    /// stop had gone with the old file, as was `--skip`, with nothing recorded.
    public private(set) var stopBeforeReset: ProjectionStop?
    /// A fresh scratch file's plain indexes, created by `finishBuilding()` in one pass over
    /// the finished tables instead of row by row as events are applied.
    private var deferredIndexes: [String] = []

    private let routes: [EventPreparer.Route]
    private var skipped: Set<Int64>
    private let opener: (any PersonalDataOpening)?
    /// An erasure was applied, or the file was opened with frames left in its WAL, but readers
    /// held the WAL's truncation back: tried again after each batch until it succeeds.
    private var truncationDue = false
    /// When an owed truncation may be tried again.
    private var nextTruncationAttempt = ContinuousClock.now
    private var connection: SQLiteConnection
    private let projectionTables: SQLiteProjectionTables
    private let lock: WriterLock
    /// The file's device and inode once open: what `displacement()` compares its path with.
    private var opened: FileIdentity?
    private var isClosed = false

    /// The file's tables as its projections see them (for tests and query helpers).
    public var tables: any ProjectionTables { projectionTables }

    /// Opens (creating if needed) the projection file for writing, holding its lock.
    ///
    /// - Parameters:
    ///   - opener: opens sealed personal data for the projections (through the key store);
    ///     without one, they see it sealed.
    ///   - heldLock: the file's writer lock when the caller took it already (a rebuild, before it
    ///     cleared the file); released with the file, or if opening fails.
    ///   - logger: hears of a durable file's background checkpoints failing.
    public init(
        path: String, name: String, projections: [any Projection], durability: Durability = .durable,
        opener: (any PersonalDataOpening)? = nil, holding heldLock: WriterLock? = nil,
        logger: Logger = Logger(label: "projection")
    ) throws(ProjectorError) {
        self.path = path
        self.name = name
        self.opener = opener
        self.routes = projections.map {
            EventPreparer.Route(projection: $0, categories: $0.categories.map { Set($0.map { Substring($0) }) })
        }
        self.fingerprint = ProjectionDatabase.fingerprint(of: projections)
        if let heldLock {
            lock = heldLock
        } else {
            do {
                lock = try WriterLock.acquire(for: path, holder: "strata project \(name)?")
            } catch {
                throw ProjectorError(error.kind == .locked ? .locked : .io, error.message)
            }
        }
        do {
            var connection = try ProjectionDatabase.open(path, durability: durability, logger: logger)
            var keptSkips: [SkippedEvent] = []
            if let existing = try ProjectionDatabase.readIdentity(connection, path: path, name: name),
                existing != fingerprint
            {
                // Another build's schema: start again from position 0 rather than migrate, passing
                // over what the operator skipped, as a rebuild does.
                keptSkips = try ProjectionDatabase.skips(in: connection)
                stopBeforeReset = try ProjectionDatabase.readState(connection, name: name).stop
                connection = try ProjectionDatabase.recreate(path, durability: durability, logger: logger) {
                    connection.close()
                }
                wasReset = true
            }
            deferredIndexes = try ProjectionDatabase.install(
                projections, fingerprint: fingerprint, name: name, in: connection,
                deferringIndexes: durability == .scratch)
            try ProjectionDatabase.addStopKind(connection, name: name)
            try ProjectionDatabase.record(keptSkips, in: connection, name: name)
            self.connection = connection
            projectionTables = SQLiteProjectionTables(connection: connection)
            let state = try ProjectionDatabase.readState(connection, name: name)
            (checkpoint, chainHash, stop) = (state.position, state.hash, state.stop)
            skipped = Set(try ProjectionDatabase.skips(in: connection).map(\.position))
        } catch {
            lock.release()
            throw error
        }
        // A WAL left with frames may hold personal data an erasure overwrote: the process that
        // applied it may have been killed before truncating, or stopped while a reader held the
        // truncation back (and the WAL open, so SQLite kept it).
        if Self.logHasFrames(path) { truncateAfterErasure(true) }
        opened = FileIdentity(path: path)
    }

    deinit {
        if !isClosed { lock.release() }
    }

    /// What became of the file at `path` since it was opened, when the path no longer names it:
    /// `"was removed"`, or `"was replaced by another file"`; nil while it does (or cannot be told).
    /// SQLite writes on into the file it opened, which no reader reaches once its name is gone.
    public func displacement() -> String? {
        switch opened?.change(at: path) {
        case nil: nil
        case .removed: "was removed"
        case .replaced: "was replaced by another file"
        }
    }

    /// Closes a file `displacement()` found gone from its path, clearing the path for the file
    /// that is there now, or will be. SQLite leaves the log (`-wal`) and its index (`-shm`) of a
    /// file that moved where they are, and the next connection at the path reads that log as its
    /// own: the pages of the file that went, laid over the one that came. Removed only while this
    /// file's lock is still the one at the path: else another projector may write there already.
    public func closeDisplaced() {
        guard !isClosed else { return }
        isClosed = true
        connection.close()
        if lock.isInPlace {
            for suffix in ["-wal", "-shm"] { unlink(path + suffix) }
        }
        lock.release()
    }

    // MARK: - Applying

    /// Applies `events`, which must start right after the checkpoint and be contiguous, in
    /// one transaction with the new checkpoint. When one of them is a poison event, the
    /// ones before it are committed, `stop` is set and recorded, and the rest are left.
    public func apply(_ events: some Collection<RecordedEvent>) throws(ProjectorError) {
        let events = Array(events)
        // A large batch: the rest of it is checked and decoded on another thread while
        // its first part is written.
        let split = events.count / 6
        guard split >= 16, let last = events.prefix(split).last else {
            return try apply(prepared: preparer.prepare(events, after: chainHash))
        }
        let first = preparer.prepare(events[..<split], after: chainHash)
        guard first.count == split else { return try apply(prepared: first) }  // it ends at a poison event
        let preparer = self.preparer
        let rest = events[split...]
        let preparing = Background { preparer.prepare(rest, after: last.hash) }
        try apply(prepared: first, then: preparing.result)
    }

    /// What checks and decodes events for this file, to be used on any thread.
    var preparer: EventPreparer { EventPreparer(routes: routes, skipped: skipped, opener: opener) }

    /// Applies events `preparer` made ready, as `apply(_:)` does, followed in the same
    /// transaction by those `more` gives once the first are written.
    func apply(prepared first: [PreparedEvent], then more: (() -> [PreparedEvent])? = nil) throws(ProjectorError) {
        if let stop { throw ProjectorError(.stopped, "\(name) \(stop)") }
        guard let head = first.first else { return }
        // One beyond the next is a store without the positions between: `applyOne` stops there.
        guard head.event.position > checkpoint else {
            throw ProjectorError(
                .outOfOrder, "\(name) is at position \(checkpoint); handed position \(head.event.position)")
        }
        // Kept apart rather than appended to `first`: a copy of every prepared event, per
        // batch, for the rare poison event that needs them together.
        var rest: [PreparedEvent] = []
        var cursor = Cursor(position: checkpoint, hash: chainHash)
        do {
            try connection.transaction {
                try requireCheckpointUnmoved()
                // By index: `for event in first` would copy each prepared event (a retain
                // of every string it holds) only to read it.
                for index in first.indices { try applyOne(first[index], cursor: &cursor) }
                if let more {
                    rest = more()
                    for index in rest.indices { try applyOne(rest[index], cursor: &cursor) }
                }
                try writeCheckpoint(cursor, stop: nil)
            }
            (checkpoint, chainHash) = (cursor.position, cursor.hash)
            truncateAfterErasure(cursor.erased)
        } catch let poison as Poison {
            // Rolled back: apply the good prefix again and record the stop, in one transaction.
            let events = first + rest
            var good = Cursor(position: checkpoint, hash: chainHash)
            do {
                try connection.transaction {
                    try requireCheckpointUnmoved()
                    for event in events.prefix(while: { $0.event.position < poison.stop.position }) {
                        try applyOne(event, cursor: &good)
                    }
                    try writeCheckpoint(good, stop: poison.stop)
                }
            } catch let error as ProjectorError {
                throw error
            } catch {
                throw ProjectorError(.io, "\(name): recording the stop at position \(poison.stop.position) failed: \(error)")
            }
            (checkpoint, chainHash, stop) = (good.position, good.hash, poison.stop)
            truncateAfterErasure(good.erased)
        } catch let error as ProjectorError {
            throw error
        } catch let error as SQLiteError where error.isFull {
            throw ProjectorError(.full, "\(name): applying events after position \(checkpoint) failed: \(error)")
        } catch {
            throw ProjectorError(.io, "\(name): applying events after position \(checkpoint) failed: \(error)")
        }
    }

    /// Tries again a truncation that readers held back (`truncateAfterErasure`), once its second
    /// is up; nothing when none is owed. The projector calls it while no events come, so that a
    /// quiet system does not keep an erased subject's personal data in the WAL until the next
    /// batch, however long that is.
    public func finishOwedTruncation() {
        truncateAfterErasure(false)
    }

    /// After a batch that applied an erasure, the pages that held the subject's personal
    /// data are gone from the file (`secure_delete` zeroes what an update frees) but may still
    /// sit in the WAL: a TRUNCATE checkpoint writes the WAL back and empties it. A reader in
    /// the middle of a read holds it back; then it is tried again after a later batch, or while
    /// none comes (`finishOwedTruncation`), at most once a second, each time waiting at most
    /// 100 ms for the readers: one that reads for minutes must not stall every batch by the
    /// connection's whole busy timeout.
    private func truncateAfterErasure(_ erasure: Bool) {
        guard erasure || (truncationDue && ContinuousClock.now >= nextTruncationAttempt) else { return }
        truncationDue = true
        nextTruncationAttempt = .now + .seconds(1)
        let connection = self.connection
        let truncated = try? connection.waitingAtMost(milliseconds: 100) { () throws(SQLiteError) -> Bool in
            let s = try connection.statement("PRAGMA wal_checkpoint(TRUNCATE)")
            defer { s.reset() }
            return try s.step() && s.int64(0) == 0
        }
        if truncated == true { truncationDue = false }
    }

    /// Inside a write transaction: the checkpoint in the file is still the one this connection
    /// last wrote. Another writer moved it (a second projector, started once this one's lock file
    /// was removed): the events it applied are in the file already, and applying them again
    /// failed as a "poison" event (`UNIQUE constraint failed`), a stop recorded for nothing.
    private func requireCheckpointUnmoved() throws(ProjectorError) {
        let recorded: Int64?
        do {
            recorded = try connection.scalarInteger("SELECT position FROM strata_checkpoint")
        } catch {
            throw ProjectorError(.io, "cannot read the checkpoint in \(path): \(error)")
        }
        guard let recorded, recorded != checkpoint else { return }
        throw ProjectorError(
            .locked,
            "another process wrote to \(path) (its checkpoint is now \(recorded), where this projector left "
                + "\(checkpoint)): a second projector, started once \(lock.path) was removed? This one ends; "
                + "nothing of its batch is recorded")
    }

    private struct Cursor {
        var position: Int64
        var hash: String
        /// An erasure was among the events applied (or passed over) since the cursor began.
        var erased = false
    }

    /// An event that stops the projection (thrown inside the transaction to roll it back).
    private struct Poison: Error {
        let stop: ProjectionStop
    }

    private func applyOne(_ prepared: PreparedEvent, cursor: inout Cursor) throws {
        let event = prepared.event
        func poison(_ message: String, _ kind: ProjectionStop.Kind = .poison) -> Poison {
            Poison(
                stop: ProjectionStop(
                    position: event.position, stream: event.stream, type: event.type, error: message, kind: kind))
        }
        guard event.position == cursor.position + 1 else {
            guard event.position > cursor.position + 1 else {
                throw ProjectorError(
                    .outOfOrder, "\(name) expected position \(cursor.position + 1), handed \(event.position)")
            }
            // Events come in position order from the store (the bus's gaps are filled from history
            // first), so the store has no event there: a row removed from events.db, which breaks
            // the chain as an altered event does, and is stopped at as one, for `status` to show.
            throw poison(
                "\(ProjectionStop.Kind.brokenChainWords): no event at position \(cursor.position + 1); "
                    + "the store's next after position \(cursor.position) is \(event.position)",
                .brokenChain)
        }
        switch prepared.work {
        case .pass:
            break
        case .poison(let reason):
            throw poison(reason)
        case .brokenChain(let reason):
            throw poison(reason, .brokenChain)
        case .keyStoreUnreadable(let reason):
            // Rolls the batch back and records nothing: the file is fine, the keys are out of reach.
            throw ProjectorError(
                .keyStore,
                "\(name) cannot apply position \(event.position) (\(event.type) on \(event.stream)): \(reason)")
        case .apply(let projected, let projections):
            for projection in projections {
                do {
                    try projection.apply(projected, to: projectionTables)
                } catch let error as SQLiteError where error.isEnvironmental {
                    throw error
                } catch {
                    throw poison("\(projection.name) cannot apply it: \(error)")
                }
            }
        }
        cursor.position = event.position
        cursor.hash = event.hash
        if event.type == PersonalDataErased.eventType { cursor.erased = true }
    }

    private func writeCheckpoint(_ cursor: Cursor, stop: ProjectionStop?) throws {
        try connection.statement(
            """
            UPDATE strata_checkpoint SET position = ?, hash = ?, stopped_position = ?, stopped_stream = ?,
              stopped_type = ?, stopped_error = ?, stopped_kind = ? WHERE name = ?
            """
        ).run([
            .integer(cursor.position), .text(cursor.hash), stop.map { .integer($0.position) } ?? .null,
            stop.map { .text($0.stream) } ?? .null, stop.map { .text($0.type) } ?? .null,
            stop.map { .text($0.error) } ?? .null, stop.map { .text($0.kind.rawValue) } ?? .null, .text(name),
        ])
    }

    // MARK: - After a stop

    /// Clears a recorded stop so the next batch tries the poison event again (after the
    /// projection's code was fixed).
    public func resume() throws(ProjectorError) {
        // Made again from position 0: every event, the one it stopped at included, is tried again.
        if stop == nil && stopBeforeReset != nil {
            stopBeforeReset = nil
            return
        }
        guard stop != nil else { throw ProjectorError(.invalidRequest, "\(name) is not stopped") }
        do {
            try writeCheckpoint(Cursor(position: checkpoint, hash: chainHash), stop: nil)
        } catch {
            throw ProjectorError(.io, "\(name): clearing the stop failed: \(error)")
        }
        stop = nil
    }

    /// Passes over the poison event the projection stopped at: recorded in
    /// `strata_skipped` with the reason, so rebuilds skip it too and the act stays visible.
    /// A broken chain is refused: a skipped event's hash is taken as it is, so the file would
    /// go on along the store's chain from there, splicing a history it never applied onto its
    /// own (and the audit log would attest to it).
    public func skip(position: Int64, reason: String) throws(ProjectorError) {
        guard let stop = stop ?? stopBeforeReset else {
            throw ProjectorError(.invalidRequest, "\(name) is not stopped; only a stopped event can be skipped")
        }
        guard stop.position == position else {
            throw ProjectorError(.invalidRequest, "\(name) stopped at position \(stop.position), not \(position)")
        }
        guard stop.kind == .poison else {
            throw ProjectorError(
                .invalidRequest,
                "\(name) cannot skip position \(position): the hash chain is broken there, so the store is not the "
                    + "history this file applied, and the file would go on along another chain; "
                    + ProjectionStop.restoreOrRebuild(name))
        }
        guard !reason.isEmpty else { throw ProjectorError(.invalidRequest, "say why the event is skipped (--reason)") }
        do {
            try connection.transaction {
                try connection.statement(
                    "INSERT INTO strata_skipped (position, stream, type, error, reason) VALUES (?, ?, ?, ?, ?)"
                ).run([.integer(stop.position), .text(stop.stream), .text(stop.type), .text(stop.error), .text(reason)])
                try writeCheckpoint(Cursor(position: checkpoint, hash: chainHash), stop: nil)
            }
        } catch {
            throw ProjectorError(.io, "\(name): recording the skip failed: \(error)")
        }
        skipped.insert(position)
        self.stop = nil
        stopBeforeReset = nil
    }

    /// Records skips copied from another file (a rebuild honouring the live file's).
    public func adoptSkips(_ skips: [SkippedEvent]) throws(ProjectorError) {
        try Self.record(skips, in: connection, name: name)
        skipped.formUnion(skips.map(\.position))
    }

    private static func record(_ skips: [SkippedEvent], in c: SQLiteConnection, name: String) throws(ProjectorError) {
        guard !skips.isEmpty else { return }
        do {
            try c.transaction {
                for skip in skips {
                    try c.statement(
                        """
                        INSERT OR IGNORE INTO strata_skipped (position, stream, type, error, reason)
                        VALUES (?, ?, ?, ?, ?)
                        """
                    ).run([
                        .integer(skip.position), .text(skip.stream), .text(skip.type), .text(skip.error),
                        .text(skip.reason),
                    ])
                }
            }
        } catch {
            throw ProjectorError(.io, "\(name): recording skips failed: \(error)")
        }
    }

    /// Writes the WAL back into the main file (after a rebuild), so the file stands alone.
    public func checkpointWAL() {
        try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Ends building a scratch file: creates the indexes put off until the tables were
    /// filled, and puts the file in WAL mode, as a live projection file is.
    public func finishBuilding() throws(ProjectorError) {
        do {
            if !deferredIndexes.isEmpty {
                try connection.transaction {
                    for statement in deferredIndexes { try connection.execute(statement) }
                }
                deferredIndexes = []
            }
            _ = try connection.scalarText("PRAGMA journal_mode=WAL")
        } catch {
            throw ProjectorError(.io, "cannot finish building \(name) in \(path): \(error)")
        }
        checkpointWAL()
    }

    // MARK: - Opening

    static let metaSchema = """
        CREATE TABLE IF NOT EXISTS strata_checkpoint (
            name             TEXT    PRIMARY KEY,
            position         INTEGER NOT NULL,
            hash             TEXT    NOT NULL,
            fingerprint      TEXT    NOT NULL,
            stopped_position INTEGER,
            stopped_stream   TEXT,
            stopped_type     TEXT,
            stopped_error    TEXT
        );
        CREATE TABLE IF NOT EXISTS strata_skipped (
            position INTEGER PRIMARY KEY,
            stream   TEXT NOT NULL,
            type     TEXT NOT NULL,
            error    TEXT NOT NULL,
            reason   TEXT NOT NULL
        );
        """

    private static func open(
        _ path: String, durability: Durability, logger: Logger
    ) throws(ProjectorError) -> SQLiteConnection {
        do {
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            try connection.usePageSizeForNewFile()
            // A scratch file keeps its rollback journal in memory while it is built (a crash
            // leaves a file the next build deletes anyway), so that pages are written once,
            // not to the WAL and again at its checkpoint; `finishBuilding` turns WAL on.
            _ = try connection.scalarText(
                durability == .durable ? "PRAGMA journal_mode=WAL" : "PRAGMA journal_mode=MEMORY")
            try connection.execute(durability == .durable ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=OFF")
            // Personal data a projection overwrites (an erasure) must not linger in freed space.
            try connection.execute("PRAGMA secure_delete=ON")
            // A batch touches pages all over the read models' indexes: with SQLite's default
            // 2 MB cache it spilled and re-read pages within one transaction.
            try connection.execute(durability == .durable ? "PRAGMA cache_size=-65536" : "PRAGMA cache_size=-262144")
            // A batch whose commit copied the log back into the file (SQLite's automatic
            // checkpoint) waited tens of milliseconds more: the lag's tail.
            if durability == .durable { connection.checkpointInBackground(logger: logger) }
            return connection
        } catch {
            throw ProjectorError(.io, "cannot open \(path): \(error.message)")
        }
    }

    /// The fingerprint recorded in an existing file, nil for a new one; refuses files
    /// that are not this projection's.
    private static func readIdentity(_ c: SQLiteConnection, path: String, name: String) throws(ProjectorError) -> String? {
        do {
            let applicationId = try c.scalarInteger("PRAGMA application_id") ?? 0
            let tables = try c.scalarInteger("SELECT count(*) FROM sqlite_master") ?? 0
            if applicationId == 0 && tables == 0 { return nil }
            guard applicationId == ProjectionDatabase.applicationId else {
                throw ProjectorError(.foreign, "\(path) is not a Strata projection file")
            }
            guard let recorded = try c.scalarText("SELECT name FROM strata_checkpoint") else { return nil }
            guard recorded == name else {
                throw ProjectorError(.foreign, "\(path) holds the projection \(recorded), not \(name)")
            }
            return try c.scalarText("SELECT fingerprint FROM strata_checkpoint")
        } catch let error as ProjectorError {
            throw error
        } catch {
            throw ProjectorError(.io, "cannot read \(path): \(error)")
        }
    }

    /// Whether the file's WAL exists and is not empty.
    private static func logHasFrames(_ path: String) -> Bool {
        let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? UInt64
        return (size ?? 0) > 0
    }

    private static func recreate(
        _ path: String, durability: Durability, logger: Logger, closingOld close: () -> Void
    ) throws(ProjectorError) -> SQLiteConnection {
        close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return try open(path, durability: durability, logger: logger)
    }

    /// Creates the schema in a new file; returns the index statements it put off when
    /// `deferringIndexes`: nothing an event does can fail on a plain index, so a build may
    /// create them last, all but those a projection finds rows by while applying
    /// (`searchedWhileApplying`), without which each such search would read its whole table.
    private static func install(
        _ projections: [any Projection], fingerprint: String, name: String, in c: SQLiteConnection,
        deferringIndexes: Bool
    ) throws(ProjectorError) -> [String] {
        var deferred: [String] = []
        do {
            let installed = try c.scalarText("SELECT name FROM sqlite_master WHERE name = 'strata_checkpoint'") != nil
            guard !installed else { return [] }
            try c.transaction {
                try c.execute(metaSchema)
                for projection in projections {
                    for statement in projection.schema.statements {
                        if deferringIndexes && isPlainIndex(statement)
                            && !projection.schema.searchedWhileApplying.contains(indexName(statement))
                        {
                            deferred.append(statement)
                        } else {
                            try c.execute(statement)
                        }
                    }
                }
                try c.statement("INSERT INTO strata_checkpoint (name, position, hash, fingerprint) VALUES (?, 0, ?, ?)")
                    .run([.text(name), .text(HashChain.genesisHex), .text(fingerprint)])
                try c.execute("PRAGMA application_id=\(applicationId)")
            }
        } catch {
            throw ProjectorError(.io, "cannot create the \(name) schema in \(c.path): \(error)")
        }
        return deferred
    }

    /// Files written before stops had a kind lack `stopped_kind`: it is added to them, and to a
    /// new file right after `metaSchema`, so that both end with the same definition (which
    /// `rebuild --compare` holds a live file to). A stop recorded without it is told by its
    /// error (`readState`).
    private static func addStopKind(_ c: SQLiteConnection, name: String) throws(ProjectorError) {
        do {
            guard try !hasStopKind(c) else { return }
            try c.execute("ALTER TABLE strata_checkpoint ADD COLUMN stopped_kind TEXT")
        } catch {
            throw ProjectorError(.io, "cannot add stopped_kind to the \(name) checkpoint in \(c.path): \(error)")
        }
    }

    /// Whether the checkpoint table has `stopped_kind` (a file an earlier version wrote may not).
    private static func hasStopKind(_ c: SQLiteConnection) throws -> Bool {
        try c.scalarInteger(
            "SELECT count(*) FROM pragma_table_info('strata_checkpoint') WHERE name = 'stopped_kind'") == 1
    }

    /// Whether a schema statement creates an index that is not UNIQUE.
    static func isPlainIndex(_ statement: String) -> Bool {
        let words = statement.split(whereSeparator: \.isWhitespace).prefix(2).map { $0.uppercased() }
        return words == ["CREATE", "INDEX"]
    }

    /// The name a `CREATE INDEX [IF NOT EXISTS] name ON …` statement gives its index.
    static func indexName(_ statement: String) -> String {
        let words = statement.split(whereSeparator: \.isWhitespace).dropFirst(2)
        let name = words.first?.uppercased() == "IF" ? words.dropFirst(3).first : words.first
        return name.map(String.init) ?? ""
    }

    struct State {
        let position: Int64
        let hash: String
        let stop: ProjectionStop?
    }

    static func readState(_ c: SQLiteConnection, name: String) throws(ProjectorError) -> State {
        do {
            // Read-only (`strata status`), a file an earlier version wrote is read as it is.
            let kind = try hasStopKind(c) ? "stopped_kind" : "NULL"
            let s = try c.statement(
                """
                SELECT position, hash, stopped_position, stopped_stream, stopped_type, stopped_error, \(kind)
                FROM strata_checkpoint WHERE name = ?
                """)
            try s.bind([.text(name)])
            defer { s.reset() }
            guard try s.step() else { throw ProjectorError(.foreign, "\(c.path) has no checkpoint for \(name)") }
            var stop: ProjectionStop?
            if !s.isNull(2) {
                let error = s.text(5)
                stop = ProjectionStop(
                    position: s.int64(2), stream: s.text(3), type: s.text(4), error: error,
                    kind: (s.isNull(6) ? nil : ProjectionStop.Kind(rawValue: s.text(6)))
                        ?? ProjectionStop.Kind(recordedError: error))
            }
            return State(position: s.int64(0), hash: s.text(1), stop: stop)
        } catch let error as ProjectorError {
            throw error
        } catch {
            throw ProjectorError(.io, "cannot read the checkpoint in \(c.path): \(error)")
        }
    }

    private static func skips(in c: SQLiteConnection) throws(ProjectorError) -> [SkippedEvent] {
        do {
            return try readSkips(c)
        } catch {
            throw ProjectorError(.io, "cannot read skipped events in \(c.path): \(error)")
        }
    }

    static func readSkips(_ c: SQLiteConnection) throws -> [SkippedEvent] {
        let s = try c.statement("SELECT position, stream, type, error, reason FROM strata_skipped ORDER BY position")
        defer { s.reset() }
        var rows: [SkippedEvent] = []
        while try s.step() {
            rows.append(SkippedEvent(position: s.int64(0), stream: s.text(1), type: s.text(2), error: s.text(3), reason: s.text(4)))
        }
        return rows
    }

    static func fingerprint(of projections: [any Projection]) -> String {
        var text = ""
        for projection in projections {
            text += "\(projection.name)\n\(projection.schema.version)\n"
            for statement in projection.schema.statements { text += statement + "\n;\n" }
        }
        return Hex.encode(HashChain.sha256(Array(text.utf8)))
    }
}

extension ProjectionDatabase {
    /// Runs a read query against the file (tests, `rebuild --compare`, the demo's dashboard).
    public func query(_ sql: String, _ values: [ProjectionValue] = []) throws -> [[ProjectionValue]] {
        try projectionTables.query(sql, values)
    }
}
