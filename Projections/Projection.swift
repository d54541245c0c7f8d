import Events
import StrataCore

/// A read model or the audit log: a pure function of the events, written as SQL.
///
/// The projector runtime drives it: it creates the schema, then calls `apply` for
/// each event in position order, inside a transaction that also records the
/// checkpoint. A projection never reads the clock or anything but its own tables,
/// so rebuilding it from position 0 gives the same file as the live one.
public protocol Projection: Sendable {
    /// The projection's name, as `strata project NAME` and `strata status` know it.
    var name: String { get }
    /// Its tables, indexes and views, documented for analysts.
    var schema: ProjectionSchema { get }
    /// The stream categories it reads; nil for every event (the audit log).
    var categories: [String]? { get }
    /// Changes the tables for one event. A thrown error stops the projection at this
    /// event (a poison event); nothing after it is applied.
    func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws
}

/// How a projection declares its schema. When `version` changes, the runtime
/// rebuilds the projection from position 0 rather than migrating it in place.
public struct ProjectionSchema: Sendable, Equatable {
    public let version: Int
    /// `CREATE TABLE` / `CREATE INDEX` / `CREATE VIEW` statements, run once in order.
    public let statements: [String]
    /// The names of the plain indexes `apply` finds rows by, other than primary keys (an
    /// erasure finds a party's invoices by `party_id`). A rebuild creates the other plain
    /// indexes after the last event, once, rather than keeping them row by row; these it
    /// creates first, or each such search would read the whole table.
    public let searchedWhileApplying: Set<String>

    public init(version: Int, statements: [String], searchedWhileApplying: Set<String> = []) {
        self.version = version
        self.statements = statements
        self.searchedWhileApplying = searchedWhileApplying
    }
}

/// An event handed to a projection: decoded, upcast, with where it stands in the chain.
public struct ProjectedEvent: Sendable, Equatable {
    public let position: Int64
    public let stream: String
    public let version: Int64
    public let recordedAt: Timestamp
    public let metadata: EventMetadata
    public let hash: String
    public let event: StrataEvent

    public init(
        position: Int64, stream: String, version: Int64, recordedAt: Timestamp, metadata: EventMetadata, hash: String,
        event: StrataEvent
    ) {
        self.position = position
        self.stream = stream
        self.version = version
        self.recordedAt = recordedAt
        self.metadata = metadata
        self.hash = hash
        self.event = event
    }
}

/// A value bound into a projection's SQL. Input always travels as a binding.
public enum ProjectionValue: Sendable, Equatable, Hashable {
    case null
    case integer(Int64)
    case text(String)
}

/// The projection's view of its own database, inside the runtime's transaction.
public protocol ProjectionTables {
    /// Runs one statement with bound values.
    func execute(_ sql: String, _ values: [ProjectionValue]) throws
    /// Runs a query with bound values and returns its rows.
    func query(_ sql: String, _ values: [ProjectionValue]) throws -> [[ProjectionValue]]
    /// Runs a declared statement with bound values; returns how many rows it inserted,
    /// updated or deleted (an upsert counts one either way).
    @discardableResult
    func run(_ statement: ProjectionStatement, _ values: [ProjectionValue]) throws -> Int
    /// Runs a declared query (or a statement with `RETURNING`) and returns its rows.
    func rows(_ statement: ProjectionStatement, _ values: [ProjectionValue]) throws -> [[ProjectionValue]]
}

extension ProjectionValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(nilLiteral: ()) { self = .null }
}

extension ProjectionValue {
    /// The value as bound for an optional text column.
    public static func text(_ value: String?) -> ProjectionValue { value.map { .text($0) } ?? .null }
    /// The value as bound for an optional integer column.
    public static func integer(_ value: Int64?) -> ProjectionValue { value.map { .integer($0) } ?? .null }
    /// An `Int` column (counts, basis points, installment numbers).
    public static func int(_ value: Int) -> ProjectionValue { .integer(Int64(value)) }
}

extension ProjectionValue {
    /// The integer in a returned column: 0 for NULL (a sum over no rows) or text, which the
    /// read models never return there.
    public var integerOrZero: Int64 {
        if case .integer(let value) = self { return value }
        return 0
    }

    /// The text in a returned column, nil for NULL.
    public var textOrNil: String? {
        if case .text(let value) = self { return value }
        return nil
    }
}
