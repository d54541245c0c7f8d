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

    public var description: String { "SQLite error \(code): \(message)" }
}
