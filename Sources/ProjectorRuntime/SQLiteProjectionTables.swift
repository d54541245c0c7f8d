import Projections
import StrataSQLite

/// A projection's tables in an SQLite file: every statement prepared once and reused
/// (the connection caches them by SQL text), every value bound.
struct SQLiteProjectionTables: ProjectionTables {
    let connection: SQLiteConnection

    func execute(_ sql: String, _ values: [ProjectionValue]) throws {
        let statement = try connection.statement(sql)
        try statement.bind(values.map(\.sqliteValue))
        defer { statement.reset() }
        while try statement.step() {}
    }

    func query(_ sql: String, _ values: [ProjectionValue]) throws -> [[ProjectionValue]] {
        let statement = try connection.statement(sql)
        try statement.bind(values.map(\.sqliteValue))
        defer { statement.reset() }
        var rows: [[ProjectionValue]] = []
        let columns = statement.columnCount
        while try statement.step() {
            rows.append((0..<columns).map { ProjectionValue(statement.value($0)) })
        }
        return rows
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
