import CSQLite

/// A value bound to a statement parameter. Input always travels as a binding,
/// never as SQL text.
public enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])
}

/// What a column of a row holds, whatever the table declares: SQLite keeps any value in any
/// column (a REAL in an INTEGER column, a BLOB in a TEXT one).
public enum SQLiteStorageClass: String, Sendable {
    case integer = "INTEGER"
    case real = "REAL"
    case text = "TEXT"
    case blob = "BLOB"
    case null = "NULL"
}

/// The destructor value that tells SQLite to copy bound bytes before returning.
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement, owned by its connection's cache.
public final class SQLiteStatement {
    private var handle: OpaquePointer?
    private unowned let connection: SQLiteConnection

    init(connection: SQLiteConnection, sql: String) throws(SQLiteError) {
        self.connection = connection
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.rawHandle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK else { throw connection.error(rc) }
        handle = statement
    }

    deinit { sqlite3_finalize(handle) }

    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// How many parameters the statement has (a named one counts once however often it appears).
    public var parameterCount: Int32 { sqlite3_bind_parameter_count(handle) }

    /// The name of parameter `index` (1-based) with its prefix, `":agent"`; nil for a plain `?`.
    public func parameterName(_ index: Int32) -> String? {
        sqlite3_bind_parameter_name(handle, index).map { String(cString: $0) }
    }

    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (i, value) in values.enumerated() { try bind(value, at: Int32(i + 1)) }
    }

    public func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let i): rc = sqlite3_bind_int64(handle, index, i)
        case .text(let s): rc = bind(text: s, at: index)
        case .blob(let bytes): rc = bind(bytes: bytes, at: index, asText: false)
        }
        guard rc == SQLITE_OK else { throw connection.error(rc) }
    }

    public func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        let rc = sqlite3_bind_int64(handle, index, value)
        guard rc == SQLITE_OK else { throw connection.error(rc) }
    }

    public func bind(_ value: String, at index: Int32) throws(SQLiteError) {
        let rc = bind(text: value, at: index)
        guard rc == SQLITE_OK else { throw connection.error(rc) }
    }

    /// A String's UTF-8 in place, with its length: passing the String itself as a C string
    /// would copy it into a new NUL-terminated array first, once per bound value.
    private func bind(text: String, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { bindText(UnsafeRawBufferPointer($0), at: index, copying: true) }
    }

    /// Binds UTF-8 bytes as TEXT without SQLite copying them (`SQLITE_STATIC`): the bytes
    /// must stay where they are, unchanged, until the statement is reset (which clears its
    /// bindings) or the parameter is bound again. For callers that bind many values per
    /// statement from one buffer they keep.
    public func bind(unretainedUTF8 bytes: UnsafeRawBufferPointer, at index: Int32) throws(SQLiteError) {
        let rc = bindText(bytes, at: index, copying: false)
        guard rc == SQLITE_OK else { throw connection.error(rc) }
    }

    /// Binds UTF-8 bytes as TEXT without going through `String`.
    public func bind(utf8 bytes: [UInt8], at index: Int32) throws(SQLiteError) {
        let rc = bind(bytes: bytes, at: index, asText: true)
        guard rc == SQLITE_OK else { throw connection.error(rc) }
    }

    private func bind(bytes: [UInt8], at index: Int32, asText: Bool) -> Int32 {
        bytes.withUnsafeBytes { raw in
            asText
                ? bindText(raw, at: index, copying: true)
                : sqlite3_bind_blob(handle, index, Self.start(of: raw), Int32(raw.count), SQLITE_TRANSIENT)
        }
    }

    /// The one place text is bound: SQLite copies it (`SQLITE_TRANSIENT`) or, not copying,
    /// reads it where it is until the statement is reset.
    private func bindText(_ bytes: UnsafeRawBufferPointer, at index: Int32, copying: Bool) -> Int32 {
        sqlite3_bind_text(
            handle, index, Self.start(of: bytes).assumingMemoryBound(to: CChar.self), Int32(bytes.count),
            copying ? SQLITE_TRANSIENT : nil)
    }

    /// Where `bytes` start, non-nil even when they are empty, so that SQLite stores '' or x''
    /// rather than NULL.
    private static func start(of bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer {
        bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
    }

    /// Advances to the next row; false when done.
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(rc)
        }
    }

    /// Runs a statement that returns no rows.
    public func run(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        if !values.isEmpty { try bind(values) }
        defer { reset() }
        while try step() {}
    }

    /// How many columns each row of this statement has.
    public var columnCount: Int32 { sqlite3_column_count(handle) }

    /// A result column's name (its alias when the query gives one).
    public func columnName(_ column: Int32) -> String {
        sqlite3_column_name(handle, column).map { String(cString: $0) } ?? ""
    }

    /// A column's value with its storage class, for code that reads any table.
    public func value(_ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER: return .integer(int64(column))
        case SQLITE_BLOB: return .blob(bytes(column))
        case SQLITE_FLOAT: return .text(String(sqlite3_column_double(handle, column)))
        default: return .text(text(column))
        }
    }

    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// What the column holds. The typed reads below convert without a word (`int64` cuts a
    /// REAL 1.5 to 1, `text` gives a BLOB's bytes), so code that must know a row holds what
    /// was written asks this first.
    public func storageClass(_ column: Int32) -> SQLiteStorageClass {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    public func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// The column's bytes (TEXT as UTF-8, or BLOB) where SQLite holds them, not copied:
    /// valid only until the statement steps, resets or reads this column as another type.
    public func unsafeBytes(_ column: Int32) -> UnsafeRawBufferPointer {
        // The pointer first, then the count: that order keeps SQLite from converting twice.
        guard let pointer = sqlite3_column_blob(handle, column) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column)))
    }

    /// The column's bytes (TEXT as UTF-8, or BLOB), copied.
    public func bytes(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
