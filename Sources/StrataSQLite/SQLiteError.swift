import CSQLite

/// A failure reported by SQLite, with its result code and message.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int32
    public let message: String

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The primary result code (the low byte of an extended code).
    public var primaryCode: Int32 { code & 0xFF }

    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    public var isFull: Bool { primaryCode == SQLITE_FULL }
    public var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }
    public var isConstraint: Bool { primaryCode == SQLITE_CONSTRAINT }
    /// A failure of the machine rather than of the SQL: the disk, the file, memory, a
    /// lock. Retrying later may succeed; the statement itself is not at fault.
    public var isEnvironmental: Bool {
        isBusy || isFull || isCorrupt
            || [SQLITE_IOERR, SQLITE_NOMEM, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PROTOCOL, SQLITE_INTERRUPT].contains(primaryCode)
    }

    public var description: String { "SQLite error \(code): \(message)" }
}
