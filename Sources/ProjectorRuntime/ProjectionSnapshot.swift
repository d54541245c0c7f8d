import Foundation
import Projections
import StrataSQLite

/// A projection file read without its lock, in one read transaction: a consistent view of
/// its checkpoint and rows while the projector keeps writing (WAL lets both run).
///
/// `strata status` reads the checkpoint through it; `strata rebuild --compare` holds it
/// while the rebuild catches up to the same position, then compares row for row.
public final class ProjectionSnapshot {
    public let path: String
    public let name: String
    public let checkpoint: Int64
    /// The hash of the event at the checkpoint, as the file applied it: equal to the store's
    /// at that position when the file was built from that store.
    public let chainHash: String
    public let stop: ProjectionStop?
    private let connection: SQLiteConnection

    /// Opens `path` read-only and starts the read transaction; nil when there is no file.
    public init?(path: String) throws(ProjectorError) {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        self.path = path
        do {
            connection = try SQLiteConnection(path: path, mode: .readOnly)
            try connection.execute("BEGIN")
            // A projector that is creating the file has not committed its schema yet:
            // to a reader that is no file at all, not a foreign one.
            if try connection.scalarInteger("PRAGMA application_id") == 0,
                try connection.scalarInteger("SELECT count(*) FROM sqlite_master") == 0
            {
                return nil
            }
            guard try connection.scalarInteger("PRAGMA application_id") == ProjectionDatabase.applicationId,
                let name = try connection.scalarText("SELECT name FROM strata_checkpoint")
            else {
                throw ProjectorError(.foreign, "\(path) is not a Strata projection file")
            }
            self.name = name
            let state = try ProjectionDatabase.readState(connection, name: name)
            checkpoint = state.position
            chainHash = state.hash
            stop = state.stop
        } catch let error as ProjectorError {
            throw error
        } catch {
            throw ProjectorError(.io, "cannot read \(path): \(error)")
        }
    }

    /// The skips an operator recorded, for a rebuild to honour.
    public func skips() throws(ProjectorError) -> [SkippedEvent] {
        do {
            return try ProjectionDatabase.readSkips(connection)
        } catch {
            throw ProjectorError(.io, "cannot read \(path): \(error)")
        }
    }

    /// A read query in the snapshot: its column names and rows.
    public func table(_ sql: String, _ values: [ProjectionValue] = []) throws(ProjectorError) -> (
        columns: [String], rows: [[ProjectionValue]]
    ) {
        do {
            let s = try connection.statement(sql)
            try s.bind(values.map(\.sqliteValue))
            defer { s.reset() }
            let columns = (0..<s.columnCount).map { s.columnName($0) }
            var rows: [[ProjectionValue]] = []
            while try s.step() { rows.append((0..<s.columnCount).map { ProjectionValue(s.value($0)) }) }
            return (columns, rows)
        } catch {
            throw ProjectorError(.io, "querying \(path): \(error)")
        }
    }

    /// A read query whose parameters are named (`:agent`), bound from `values` by name, a row
    /// at a time (`SQLiteConnection.forEachRow`).
    public func forEachRow(
        _ sql: String, named values: [String: ProjectionValue], columns: ([String]) throws -> Void,
        row: ([ProjectionValue]) throws -> Bool
    ) throws {
        try connection.forEachRow(sql, named: values, reading: path, columns: columns, row: row)
    }

    /// What the comparison found.
    public struct Comparison: Sendable {
        public let tables: Int
        public let rows: Int
        /// The first difference, in words; nil when the files are equal.
        public let difference: String?
    }

    /// Columns left out of the comparison: a stop the live file records is the projector's
    /// state, not what its projections made of the events, and a rebuild for `--compare` ends
    /// before the event it stopped at. The stop is reported apart (`stop`).
    static let uncompared: [String: Set<String>] = [
        "strata_checkpoint": ["stopped_position", "stopped_stream", "stopped_type", "stopped_error", "stopped_kind"]
    ]

    /// Tables whose rows are compared but not their definitions: the runtime's own, which a
    /// live file an earlier version wrote holds without `stopped_kind` until a projector opens it.
    static let definitionUncompared: Set<String> = ["strata_checkpoint"]

    /// Compares every object's schema and every table's rows with another file, row for
    /// row in a total order (every compared column), stopping at the first difference.
    public func compare(with otherPath: String) throws(ProjectorError) -> Comparison {
        do {
            let other = try SQLiteConnection(path: otherPath, mode: .readOnly)
            let ours = try Self.objects(connection)
            let theirs = try Self.objects(other)
            for (name, sql) in ours
            where !Self.definitionUncompared.contains(name) && theirs[name]?.utf8.elementsEqual(sql.utf8) != true {
                return Comparison(
                    tables: 0, rows: 0,
                    difference: theirs[name] == nil
                        ? "\(name) is missing from \(otherPath)" : "\(name) is defined differently in \(otherPath)")
            }
            if let extra = theirs.keys.sorted().first(where: { ours[$0] == nil }) {
                return Comparison(tables: 0, rows: 0, difference: "\(extra) exists only in \(otherPath)")
            }
            let tables = try Self.tables(connection)
            var rows = 0
            for table in tables {
                let uncompared = Self.uncompared[table] ?? []
                // The live file's columns: a rebuild has every column an earlier file has.
                let columns = try Self.columns(connection, table).filter { !uncompared.contains($0) }
                let list = columns.map { "\"\($0)\"" }.joined(separator: ", ")
                let order = (1...columns.count).map(String.init).joined(separator: ", ")
                let sql = "SELECT \(list) FROM \"\(table)\" ORDER BY \(order)"
                let left = try connection.statement(sql)
                let right = try other.statement(sql)
                defer {
                    left.reset()
                    right.reset()
                }
                var index = 0
                while true {
                    let hasLeft = try left.step()
                    let hasRight = try right.step()
                    if !hasLeft && !hasRight { break }
                    index += 1
                    let a = hasLeft ? (0..<left.columnCount).map { left.value($0) } : nil
                    let b = hasRight ? (0..<right.columnCount).map { right.value($0) } : nil
                    if !Self.identical(a, b) {
                        let (live, rebuilt) = (Self.describe(a), Self.describe(b))
                        // Such as text in another Unicode normalization, which reads the same.
                        let bytes = live == rebuilt ? " (they print the same, but their bytes differ)" : ""
                        return Comparison(
                            tables: tables.count, rows: rows,
                            difference:
                                "table \(table), row \(index) in order: live \(live), rebuilt \(rebuilt)\(bytes)")
                    }
                    rows += 1
                }
            }
            return Comparison(tables: tables.count, rows: rows, difference: nil)
        } catch {
            throw ProjectorError(.io, "comparing \(path) with \(otherPath): \(error)")
        }
    }

    /// Whether two rows hold the same values, text compared byte for byte: Swift's `==` on
    /// strings is canonical equivalence, so "José" precomposed would equal "José" with a
    /// combining accent, although the files hold different bytes (and a query for one misses
    /// the other).
    private static func identical(_ a: [SQLiteValue]?, _ b: [SQLiteValue]?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return a.count == b.count && zip(a, b).allSatisfy { identical($0, $1) }
    }

    private static func identical(_ a: SQLiteValue?, _ b: SQLiteValue?) -> Bool {
        switch (a, b) {
        case (.text(let x)?, .text(let y)?): x.utf8.elementsEqual(y.utf8)
        default: a == b
        }
    }

    private static func objects(_ c: SQLiteConnection) throws -> [String: String] {
        let s = try c.statement("SELECT name, coalesce(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        defer { s.reset() }
        var objects: [String: String] = [:]
        while try s.step() { objects[s.text(0)] = s.text(1) }
        return objects
    }

    private static func tables(_ c: SQLiteConnection) throws -> [String] {
        let s = try c.statement("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        defer { s.reset() }
        var names: [String] = []
        while try s.step() { names.append(s.text(0)) }
        return names
    }

    private static func columns(_ c: SQLiteConnection, _ table: String) throws -> [String] {
        let s = try c.statement("SELECT name FROM pragma_table_info(?) ORDER BY cid")
        try s.bind([.text(table)])
        defer { s.reset() }
        var names: [String] = []
        while try s.step() { names.append(s.text(0)) }
        return names
    }

    private static func describe(_ row: [SQLiteValue]?) -> String {
        guard let row else { return "(no row)" }
        return "("
            + row.map { value in
                switch value {
                case .null: "NULL"
                case .integer(let i): String(i)
                case .text(let t): "'\(t)'"
                case .blob(let b): "x'\(b.count) bytes'"
                }
            }.joined(separator: ", ") + ")"
    }
}

/// The snapshot as the query helpers of the read models take it (`OverdueAging`,
/// `Receivables`): reads only, since the connection is read-only.
extension ProjectionSnapshot: ProjectionTables {
    public func execute(_ sql: String, _ values: [ProjectionValue]) throws {
        _ = try table(sql, values)
    }

    public func query(_ sql: String, _ values: [ProjectionValue]) throws -> [[ProjectionValue]] {
        try SQLiteProjectionTables(connection: connection).query(sql, values)
    }

    public func run(_ statement: ProjectionStatement, _ values: [ProjectionValue]) throws -> Int {
        try SQLiteProjectionTables(connection: connection).run(statement, values)
    }

    public func rows(_ statement: ProjectionStatement, _ values: [ProjectionValue]) throws -> [[ProjectionValue]] {
        try SQLiteProjectionTables(connection: connection).rows(statement, values)
    }
}
