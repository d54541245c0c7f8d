import Projections
import StrataSQLite

/// A projection's tables in an SQLite file: every statement prepared once and reused,
/// every value bound. Declared statements are kept by their number, so finding one again
/// costs an array index; SQL given as text goes through the connection's cache by text.
final class SQLiteProjectionTables: ProjectionTables {
    let connection: SQLiteConnection
    /// Used by one thread at a time, as the class is not `Sendable`: not checked for
    /// exclusive access at run time, which cost a check per statement run.
    @exclusivity(unchecked) private var prepared: [SQLiteStatement?] = []

    init(connection: SQLiteConnection) {
        self.connection = connection
    }

    func execute(_ sql: String, _ values: [ProjectionValue]) throws {
        _ = try run(try connection.statement(sql), values)
    }

    func query(_ sql: String, _ values: [ProjectionValue]) throws -> [[ProjectionValue]] {
        try rows(try connection.statement(sql), values)
    }

    func run(_ statement: ProjectionStatement, _ values: [ProjectionValue]) throws -> Int {
        try run(try self.statement(statement), values)
    }

    func rows(_ statement: ProjectionStatement, _ values: [ProjectionValue]) throws -> [[ProjectionValue]] {
        try rows(try self.statement(statement), values)
    }

    private func statement(_ declared: ProjectionStatement) throws(SQLiteError) -> SQLiteStatement {
        if declared.id < prepared.count, let statement = prepared[declared.id] { return statement }
        let statement = try connection.statement(declared.sql)
        if declared.id >= prepared.count { prepared += Array(repeating: nil, count: declared.id + 1 - prepared.count) }
        prepared[declared.id] = statement
        return statement
    }

    /// Runs `statement` to its end; returns the rows it inserted, updated or deleted.
    private func run(_ statement: SQLiteStatement, _ values: [ProjectionValue]) throws -> Int {
        try withBound(values, to: statement) {
            let before = connection.totalChanges
            while try statement.step() {}
            return connection.totalChanges - before
        }
    }

    private func rows(_ statement: SQLiteStatement, _ values: [ProjectionValue]) throws -> [[ProjectionValue]] {
        try withBound(values, to: statement) {
            var rows: [[ProjectionValue]] = []
            let columns = statement.columnCount
            while try statement.step() {
                rows.append((0..<columns).map { ProjectionValue(statement.value($0)) })
            }
            return rows
        }
    }

    /// Binds `values` to `statement`, runs `body`, and resets the statement (clearing the
    /// bindings) before the text they point into goes away. The text of the values is laid
    /// one after the other in one temporary buffer (on the stack when it is small), so that
    /// binding text costs SQLite no allocation and no copy of its own.
    ///
    /// The values are read in place: a `for` over them, or a `var` to reach a string's UTF-8,
    /// copied each one, a retain and a release of every string.
    private func withBound<T>(
        _ values: [ProjectionValue], to statement: SQLiteStatement, _ body: () throws -> T
    ) throws -> T {
        try values.withUnsafeBufferPointer { values in
            var length = 0
            for index in values.indices {
                if case .text(let value) = values[index] { length += value.utf8.count }
            }
            return try withUnsafeTemporaryAllocation(byteCount: length, alignment: 1) { text in
                defer { statement.reset() }
                var offset = 0
                for index in values.indices {
                    let parameter = Int32(index + 1)
                    switch values[index] {
                    case .null: try statement.bind(.null, at: parameter)
                    case .integer(let number): try statement.bind(number, at: parameter)
                    case .text(let value):
                        let count = value.utf8.count
                        let bytes = UnsafeMutableRawBufferPointer(rebasing: text[offset..<(offset + count)])
                        Self.copyUTF8(of: value, to: bytes)
                        try statement.bind(unretainedUTF8: UnsafeRawBufferPointer(bytes), at: parameter)
                        offset += count
                    }
                }
                return try body()
            }
        }
    }

    /// Copies the UTF-8 of `value` (`bytes.count` long) into `bytes`, from the string's own
    /// storage when it is contiguous (a native string always is).
    private static func copyUTF8(of value: String, to bytes: UnsafeMutableRawBufferPointer) {
        let copied: Void? = value.utf8.withContiguousStorageIfAvailable { utf8 in
            bytes.copyMemory(from: UnsafeRawBufferPointer(utf8))
        }
        if copied == nil { bytes.copyBytes(from: value.utf8) }
    }
}

extension ProjectionValue {
    var sqliteValue: SQLiteValue {
        switch self {
        case .null: .null
        case .integer(let value): .integer(value)
        case .text(let value): .text(value)
        }
    }

    init(_ value: SQLiteValue) {
        switch value {
        case .null: self = .null
        case .integer(let value): self = .integer(value)
        case .text(let value): self = .text(value)
        case .blob(let bytes): self = .text(String(decoding: bytes, as: UTF8.self))
        }
    }
}
