import CSQLite
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import StrataCore

/// One SQLite connection with a cache of prepared statements.
///
/// Not thread-safe by itself (`SQLITE_OPEN_NOMUTEX`): an owner confines it to one
/// thread or guards it with a lock, as the store does.
public final class SQLiteConnection {
    public enum Mode: Sendable {
        case readWrite  // creates the file if missing
        case readOnly
    }

    public let path: String
    private var handle: OpaquePointer?
    private var cache: [String: SQLiteStatement] = [:]
    /// The statements of `SQLiteStatementKey`s, by their index.
    private var keyed: [SQLiteStatement?] = []
    /// Checkpoints this connection's WAL file on another thread, once started.
    private var checkpointer: WALCheckpointer?
    /// How long a statement waits for a lock another connection holds.
    private let busyTimeout: Int32

    /// Settings SQLite takes only before its first connection: made once, by the first.
    private static let configured: Void = {
        // SQLITE_MISUSE once SQLite is initialised already; the setting then stays as it was.
        _ = strata_sqlite3_disable_memory_statistics()
    }()

    public init(path: String, mode: Mode, busyTimeoutMilliseconds: Int32 = 5000) throws(SQLiteError) {
        Self.configured
        self.path = path
        self.busyTimeout = busyTimeoutMilliseconds
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        switch mode {
        case .readWrite: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        }
        var db: OpaquePointer?
        var rc = sqlite3_open_v2(path, &db, flags, nil)
        if rc == SQLITE_OK, mode == .readOnly, let opened = db,
            let immutable = try Self.immutableReading(opened, path)
        {
            sqlite3_close_v2(opened)
            db = nil
            rc = sqlite3_open_v2(immutable, &db, flags, nil)
        }
        guard rc == SQLITE_OK, let db else {
            let message = db.map { Self.message(of: $0, code: rc) } ?? "cannot open"
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: "\(message) (\(path))")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
    }

    deinit {
        close()
    }

    /// The URI that reads `path` as an immutable file, when a read-only connection cannot read it
    /// where it is; nil when it can, or must not be read so.
    ///
    /// SQLite reads a file in WAL mode through an index it keeps beside it (`-shm`), which it
    /// creates on the first read when it is not there: in a directory that cannot be written (a
    /// stopped system's files on read-only media, or a directory an auditor's account may only
    /// read) that read fails, `unable to open database file` or `attempt to write a readonly
    /// database`. With neither `-wal` nor `-shm` beside the file, no connection has it open in WAL
    /// mode (each keeps both while it does) and every commit is in the file itself, so reading
    /// it with no index and no locks (`immutable=1`) reads exactly what it holds. A `-wal` there
    /// holds commits the file does not, which only the index can read: an error that says so,
    /// where SQLite's own names neither (`No such file or directory` of a file that is there).
    private static func immutableReading(_ db: OpaquePointer, _ path: String) throws(SQLiteError) -> String? {
        let rc = sqlite3_exec(db, "PRAGMA schema_version", nil, nil, nil) & 0xFF
        guard rc == SQLITE_CANTOPEN || rc == SQLITE_READONLY, access(path + "-shm", F_OK) != 0 else { return nil }
        guard access(path + "-wal", F_OK) != 0 else {
            sqlite3_close_v2(db)
            throw SQLiteError(
                code: rc,
                message: "cannot make \(path)-shm, the index SQLite reads \(path)-wal through, in a directory that "
                    + "cannot be written, and \(path)-wal holds commits the file does not: read a copy of the "
                    + "directory made where it can be written")
        }
        return "file:" + uriEscaped(path) + "?immutable=1"
    }

    /// `path` as the path of a `file:` URI: every byte but letters, digits and `/._~-` as `%HH`,
    /// so `?`, `#` and `%` in a directory's name stay part of the path.
    private static func uriEscaped(_ path: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var escaped: [UInt8] = []
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "-"):
                escaped.append(byte)
            default:
                escaped += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    /// Closes the connection now (finalizing its statements); later calls fail with
    /// SQLITE_MISUSE. Used before a file is deleted and created again.
    public func close() {
        if let checkpointer {
            // No commit may reach the checkpointer once it is gone.
            sqlite3_wal_hook(handle, nil, nil)
            checkpointer.stop()
            self.checkpointer = nil
        }
        cache.removeAll()  // statements finalize before the connection closes
        keyed.removeAll()
        sqlite3_close_v2(handle)
        handle = nil
    }

    /// Runs `body` waiting at most `milliseconds` for a lock another connection holds, then
    /// as configured again: for work that can wait for a better moment, like truncating a WAL
    /// that a reader may hold for minutes, which must not stall the thread each time it tries.
    public func waitingAtMost<T, E: Error>(milliseconds: Int32, _ body: () throws(E) -> T) throws(E) -> T {
        sqlite3_busy_timeout(handle, milliseconds)
        defer { sqlite3_busy_timeout(handle, busyTimeout) }
        return try body()
    }

    /// Runs SQL without results (schema, pragmas, BEGIN/COMMIT). Never with input values.
    public func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) + Self.systemCause(of: handle, code: rc) }
                ?? Self.message(of: handle, code: rc)
            sqlite3_free(errorMessage)
            throw SQLiteError(code: rc, message: message)
        }
    }

    /// The page size of new event stores and projection files: 8 KiB, where SQLite's default is 4 KiB.
    /// An event's row is 0.3 to 2.5 KB, so a 4 KiB page held one to three of them and
    /// every few inserts split one; with 8 KiB pages the command writer runs ≈ 2% fewer
    /// instructions, a rebuild's writer as many fewer, and the WAL is written in half the
    /// calls for the same bytes (docs/performance.md).
    public static let pageSize = 8192

    /// Makes a new, still empty file use `pageSize`. Call it before anything writes to the
    /// file (a journal mode included): on a file that has pages already SQLite keeps the
    /// size the file was made with, so older files go on as they are.
    public func usePageSizeForNewFile() throws(SQLiteError) {
        try execute("PRAGMA page_size=\(Self.pageSize)")
    }

    /// A cached prepared statement for `sql`, reset and with bindings cleared.
    public func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = cache[sql] {
            cached.reset()
            return cached
        }
        let statement = try SQLiteStatement(connection: self, sql: sql)
        cache[sql] = statement
        return statement
    }

    /// The cached prepared statement of `key`, reset and with bindings cleared.
    public func statement(_ key: SQLiteStatementKey) throws(SQLiteError) -> SQLiteStatement {
        if key.index < keyed.count, let cached = keyed[key.index] {
            cached.reset()
            return cached
        }
        let statement = try SQLiteStatement(connection: self, sql: key.sql)
        if key.index >= keyed.count { keyed += repeatElement(nil, count: key.index - keyed.count + 1) }
        keyed[key.index] = statement
        return statement
    }

    /// The first column of the first row, as an integer; nil when there is no row or it is NULL.
    public func scalarInteger(_ sql: String, _ bindings: SQLiteValue...) throws(SQLiteError) -> Int64? {
        try Self.scalarInteger(of: statement(sql), bindings)
    }

    /// The same, for a keyed statement.
    public func scalarInteger(_ key: SQLiteStatementKey, _ bindings: SQLiteValue...) throws(SQLiteError) -> Int64? {
        try Self.scalarInteger(of: statement(key), bindings)
    }

    private static func scalarInteger(
        of s: SQLiteStatement, _ bindings: [SQLiteValue]
    ) throws(SQLiteError) -> Int64? {
        try s.bind(bindings)
        defer { s.reset() }
        guard try s.step(), !s.isNull(0) else { return nil }
        return s.int64(0)
    }

    /// The first column of the first row, as text.
    public func scalarText(_ sql: String, _ bindings: SQLiteValue...) throws(SQLiteError) -> String? {
        let s = try statement(sql)
        try s.bind(bindings)
        defer { s.reset() }
        guard try s.step(), !s.isNull(0) else { return nil }
        return s.text(0)
    }

    /// Moves this connection's WAL checkpoints to a thread of their own (`WALCheckpointer`):
    /// its commits then never copy the log back into the file themselves, unless the log
    /// reaches `inlinePages` frames. For a file in WAL mode that this connection writes.
    /// The thread's failures go to `logger`: its connection not opening, a checkpoint failing.
    ///
    /// The log file is also cut back to `inlinePages` frames whenever it starts again
    /// (`journal_size_limit`). SQLite reuses a log from its beginning and never shrinks the file,
    /// so a log that grew while a reader held it back (a backup, a report, an analyst's open
    /// `sqlite3`) kept that size for as long as the process ran: 701 MB beside a running
    /// `serve`, 3.7 GB beside a projector, where the steady log is at most 32 MB.
    public func checkpointInBackground(
        pages: Int32 = 1000, inlinePages: Int32 = 4000, logger: Logger = Logger(label: "sqlite")
    ) {
        guard checkpointer == nil else { return }
        do throws(SQLiteError) {
            let pageSize = try scalarInteger("PRAGMA page_size") ?? Int64(Self.pageSize)
            // A frame is a page and its 24-byte header, after the log's 32-byte header.
            _ = try scalarInteger("PRAGMA journal_size_limit=\(32 + Int64(inlinePages) * (pageSize + 24))")
        } catch {
            logger.warning("the log of \(path) will not be cut back after it grew: \(error)")
        }
        let checkpointer = WALCheckpointer(path: path, pages: pages, inlinePages: inlinePages, logger: logger)
        sqlite3_wal_hook(handle, walCheckpointHook, Unmanaged.passUnretained(checkpointer).toOpaque())
        self.checkpointer = checkpointer
    }

    /// How many checkpoints the background checkpointer ran, and how many its commits ran
    /// inline; nil when checkpoints are SQLite's own.
    public var backgroundCheckpoints: (background: Int, inline: Int)? {
        checkpointer.map { ($0.checkpoints.background, $0.checkpoints.inline) }
    }

    /// Runs `body` inside `BEGIN IMMEDIATE ... COMMIT`, rolling back if it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    public var changes: Int { Int(sqlite3_changes(handle)) }
    /// Rows inserted, updated or deleted by every statement completed on this connection:
    /// the difference across one statement is what it changed, whatever kind of statement it is.
    public var totalChanges: Int { Int(sqlite3_total_changes64(handle)) }
    public var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    var rawHandle: OpaquePointer? { handle }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, message: Self.message(of: handle, code: code))
    }

    /// SQLite's message for the last failure on `db`, with the operating system's cause when
    /// the disk or a file failed: "disk I/O error" alone does not tell a full disk from a
    /// failing one.
    private static func message(of db: OpaquePointer?, code: Int32) -> String {
        String(cString: sqlite3_errmsg(db)) + systemCause(of: db, code: code)
    }

    /// ` (No space left on device)`: the `errno` behind an I/O, open or full failure; empty
    /// for any other, whose `errno` is left over from something else.
    private static func systemCause(of db: OpaquePointer?, code: Int32) -> String {
        guard [SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_FULL].contains(code & 0xFF) else { return "" }
        let number = sqlite3_system_errno(db)
        guard number != 0 else { return "" }
        return " (\(String(cString: strerror(number))))"
    }
}
