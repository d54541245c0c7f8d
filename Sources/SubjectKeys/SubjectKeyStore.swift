import CSodium
import Events
import Foundation
import StrataSQLite
import Synchronization

/// The key store: every data subject's key, in its own SQLite file (`DATA/subject-keys.db`,
/// mode 0600), apart from the event store, so that destroying a key rewrites nothing the
/// hash chain covers.
///
/// Only the process holding the event store's writer lock writes it (`strata serve`,
/// `strata admin bootstrap`); projectors, `rebuild`, `query --as-of` and `report` read it.
/// A key is stored, in its own committed transaction, before the first event sealed under
/// it: a crash in between leaves a key with no events (harmless), never the reverse.
///
/// Destroying a key deletes its row with `secure_delete` on (SQLite overwrites the freed
/// bytes with zeros) and then checkpoints the WAL with TRUNCATE, so no copy of the key is left
/// in the file or its WAL.
public final class SubjectKeyStore: Sendable {
    /// `PRAGMA application_id` of a Strata key store ("STSK").
    public static let applicationId: Int64 = 0x5354_534B
    public static let fileName = "subject-keys.db"

    public let path: String
    public let isReadOnly: Bool
    /// A short wait for a lock another connection holds: the writer's thread must not stall
    /// long behind a reader.
    static let busyTimeout: Int32 = 500
    private let state: Mutex<State>

    private struct State: ~Copyable {
        let connection: SQLiteConnection
        /// A key was deleted (or the store opened) while readers kept the WAL from being
        /// truncated: the next `destroyKey` truncates it, whatever it deletes itself.
        var truncationOwed = false
    }

    /// The key store of a data directory.
    public static func path(inDataDirectory directory: String) -> String {
        (directory as NSString).appendingPathComponent(fileName)
    }

    /// Opens the key store for writing, creating it (mode 0600) when missing.
    public init(writingAt path: String) throws(SubjectKeyStoreError) {
        self.path = path
        self.isReadOnly = false
        if !FileManager.default.fileExists(atPath: path) {
            // SQLite gives its -wal and -shm files the mode of the database file.
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd < 0, errno != EEXIST {
                throw SubjectKeyStoreError("cannot create the key store \(path): \(String(cString: strerror(errno)))")
            }
            if fd >= 0 { Glibc.close(fd) }
        }
        do {
            let c = try SQLiteConnection(path: path, mode: .readWrite, busyTimeoutMilliseconds: Self.busyTimeout)
            try Self.checkIdentity(c, path: path, allowEmpty: true)
            guard try c.scalarText("PRAGMA journal_mode=WAL")?.lowercased() == "wal" else {
                throw SubjectKeyStoreError("cannot switch \(path) to WAL mode")
            }
            // A key must be on disk before the events sealed under it are.
            try c.execute("PRAGMA synchronous=FULL")
            try c.execute("PRAGMA secure_delete=ON")
            try c.transaction {
                try c.execute(Self.schema)
                try c.execute("PRAGMA application_id=\(Self.applicationId)")
                try c.execute("PRAGMA user_version=1")
            }
            // Whatever an earlier erasure could not truncate goes now, or, while a reader holds
            // it back, when the writer's thread tries again (`finishTruncation`).
            let busy = try c.scalarInteger("PRAGMA wal_checkpoint(TRUNCATE)") != 0
            state = Mutex(State(connection: c, truncationOwed: busy))
        } catch let error as SubjectKeyStoreError {
            throw error
        } catch {
            throw SubjectKeyStoreError("cannot open the key store \(path): \(error)")
        }
    }

    /// Opens an existing key store for reading only; it works while the service writes it.
    public init(readingAt path: String) throws(SubjectKeyStoreError) {
        self.path = path
        self.isReadOnly = true
        guard FileManager.default.fileExists(atPath: path) else {
            throw SubjectKeyStoreError("there is no key store at \(path)")
        }
        do {
            let c = try SQLiteConnection(path: path, mode: .readOnly)
            try Self.checkIdentity(c, path: path, allowEmpty: false)
            state = Mutex(State(connection: c))
        } catch let error as SubjectKeyStoreError {
            throw error
        } catch {
            throw SubjectKeyStoreError("cannot open the key store \(path): \(error)")
        }
    }

    static let schema = """
        CREATE TABLE IF NOT EXISTS subject_keys (
            subject    TEXT PRIMARY KEY,
            key_id     TEXT NOT NULL UNIQUE,
            secret     BLOB NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS service_secrets (
            name   TEXT PRIMARY KEY,
            secret BLOB NOT NULL
        );
        """

    static func checkIdentity(_ c: SQLiteConnection, path: String, allowEmpty: Bool) throws {
        let applicationId = try c.scalarInteger("PRAGMA application_id") ?? 0
        let tables = try c.scalarInteger("SELECT count(*) FROM sqlite_master") ?? 0
        if applicationId == 0, tables == 0, allowEmpty { return }
        guard applicationId == Self.applicationId, tables > 0 else {
            throw SubjectKeyStoreError("\(path) is not a Strata key store")
        }
    }

    // MARK: - Reading

    /// The key of `subject`, if it has one.
    public func key(of subject: DataSubject) throws(SubjectKeyStoreError) -> SubjectKey? {
        try withConnection("reading the key of \(subject)") { c in
            let s = try c.statement("SELECT key_id, secret FROM subject_keys WHERE subject = ?")
            try s.bind(.text(subject.description), at: 1)
            defer { s.reset() }
            guard try s.step() else { return nil }
            return SubjectKey(id: s.text(0), subject: subject, secret: s.bytes(1))
        }
    }

    /// The secret of the key named `keyId`; nil once that key is destroyed (or never was).
    public func secret(ofKey keyId: String) throws(SubjectKeyStoreError) -> [UInt8]? {
        try withConnection("reading key \(keyId)") { c in
            let s = try c.statement("SELECT secret FROM subject_keys WHERE key_id = ?")
            try s.bind(.text(keyId), at: 1)
            defer { s.reset() }
            guard try s.step() else { return nil }
            return s.bytes(0)
        }
    }

    /// Every subject that has a key, sorted.
    public func subjects() throws(SubjectKeyStoreError) -> [DataSubject] {
        try withConnection("listing subjects") { c in
            let s = try c.statement("SELECT subject FROM subject_keys ORDER BY subject")
            defer { s.reset() }
            var subjects: [DataSubject] = []
            while try s.step() {
                if let subject = DataSubject(s.text(0)) { subjects.append(subject) }
            }
            return subjects
        }
    }

    // MARK: - Writing

    /// Stores `keys` in one durable transaction. A subject that has a key already keeps it:
    /// its key is never replaced, since events may be sealed under it.
    public func insert(_ keys: [SubjectKey], at time: String) throws(SubjectKeyStoreError) {
        guard !keys.isEmpty else { return }
        try withConnection("storing \(keys.count) keys") { c in
            try c.transaction {
                let s = try c.statement(
                    "INSERT INTO subject_keys (subject, key_id, secret, created_at) VALUES (?, ?, ?, ?)")
                for key in keys {
                    s.reset()
                    try s.run([.text(key.subject.description), .text(key.id), .blob(key.secret), .text(time)])
                }
            }
        }
    }

    /// Destroys the key of `subject`: deletes its row (zeroed by `secure_delete`) and
    /// checkpoints the WAL with TRUNCATE. Returns whether there was a key.
    ///
    /// A reader in the middle of a read can hold the checkpoint back: it is tried a few times
    /// (a second or two at most), then reported as an error; the row is gone either way, and the
    /// truncation is owed: `finishTruncation` (the writer's thread, every second), the next
    /// erasure or the store's next opening for writing does it.
    @discardableResult
    public func destroyKey(of subject: DataSubject) throws(SubjectKeyStoreError) -> Bool {
        let destroyed = try withConnection("destroying the key of \(subject)") { c in
            let s = try c.statement("DELETE FROM subject_keys WHERE subject = ?")
            try s.run([.text(subject.description)])
            return c.changes > 0
        }
        if destroyed {
            let truncated = try truncateLog()
            state.withLock { $0.truncationOwed = !truncated }
            guard truncated else {
                throw SubjectKeyStoreError(
                    "the key of \(subject) is deleted, but readers kept the WAL of \(path) from being truncated; "
                        + "it is tried again while the service runs, and when the store is next opened")
            }
        }
        return destroyed
    }

    /// Whether a key was deleted (or the store opened) while readers kept the WAL, which may
    /// still hold the key, from being truncated.
    public var owesTruncation: Bool { state.withLock { $0.truncationOwed } }

    /// Closes the store at a graceful stop, its WAL first copied into the file and truncated, so
    /// that the file alone holds every key. The connection was never closed: the keys made
    /// since the last automatic checkpoint stayed in `subject-keys.db-wal` after a clean stop,
    /// and a copy of the file without it (a cold backup of a stopped system) lost them, and with
    /// them every personal field they seal. Later calls fail.
    public func close() {
        _ = try? truncateLog()
        state.withLock { $0.connection.close() }
    }

    /// Truncates the WAL if a truncation is owed, without waiting for readers (the writer's
    /// thread tries it every second and must not stall behind one that reads for long);
    /// returns whether none is owed now.
    public func finishTruncation() throws(SubjectKeyStoreError) -> Bool {
        guard owesTruncation else { return true }
        let truncated = try truncateLog(attempts: 1, waiting: false)
        state.withLock { $0.truncationOwed = !truncated }
        return truncated
    }

    /// `PRAGMA wal_checkpoint(TRUNCATE)`, retried while readers hold it back; returns whether
    /// the WAL is now empty. Without `waiting`, an attempt does not wait for readers at all.
    func truncateLog(attempts: Int = 3, waiting: Bool = true) throws(SubjectKeyStoreError) -> Bool {
        for attempt in 0..<attempts {
            let busy = try withConnection("checkpointing") { c in
                try c.waitingAtMost(milliseconds: waiting ? Self.busyTimeout : 0) { () throws(SQLiteError) -> Bool in
                    let s = try c.statement("PRAGMA wal_checkpoint(TRUNCATE)")
                    defer { s.reset() }
                    return try s.step() && s.int64(0) != 0
                }
            }
            if !busy { return true }
            if attempt + 1 < attempts { usleep(50_000) }
        }
        return false
    }

    /// The service-wide secret called `name`, made and stored on first use (writers only).
    public func serviceSecret(named name: String, bytes: Int = 32) throws(SubjectKeyStoreError) -> [UInt8] {
        try withConnection("reading the \(name) secret") { c in
            let read = try c.statement("SELECT secret FROM service_secrets WHERE name = ?")
            try read.bind(.text(name), at: 1)
            if try read.step() {
                defer { read.reset() }
                return read.bytes(0)
            }
            read.reset()
            guard !isReadOnly else { throw SubjectKeyStoreError("the key store has no \(name) secret") }
            Sodium.ready()
            var secret = [UInt8](repeating: 0, count: bytes)
            randombytes_buf(&secret, bytes)
            try c.statement("INSERT INTO service_secrets (name, secret) VALUES (?, ?)")
                .run([.text(name), .blob(secret)])
            return secret
        }
    }

    private func withConnection<T>(
        _ what: String, _ body: @Sendable (SQLiteConnection) throws -> T
    ) throws(SubjectKeyStoreError) -> T {
        do {
            return try state.withLock { state in try body(state.connection) }
        } catch let error as SubjectKeyStoreError {
            throw error
        } catch {
            throw SubjectKeyStoreError("\(what) in the key store \(path): \(error)")
        }
    }
}

/// Why the key store could not be opened, read or written.
public struct SubjectKeyStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    /// The file is damaged (SQLite finds it malformed): a problem found in it, not one of
    /// the environment, which a backup or restore reports as such (exit 1).
    public let isDamage: Bool

    public init(_ message: String, isDamage: Bool = false) {
        self.message = message
        self.isDamage = isDamage
    }

    public var description: String { message }
}
