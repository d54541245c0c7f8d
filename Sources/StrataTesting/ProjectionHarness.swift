import EventStore
import Events
import Foundation
import ProjectorRuntime
import Projections
import StrataCore

/// Given/then for projections: events go in as the store would record them (positions,
/// stream versions, metadata, the hash chain), through the real runtime into a real
/// SQLite file; tests then read exactly the rows they expect. It is itself the file's
/// `ProjectionTables`, for the query helpers that take one (`OverdueAging`, `Receivables`).
public final class ProjectionHarness: ProjectionTables {
    public let database: ProjectionDatabase
    public let directory: URL
    /// Records events with the store's own rules: positions, stream versions, metadata, chain.
    private let store: InMemoryEventStore
    private let clock: FixedClock
    /// The recorded events so far, in order (to replay them elsewhere).
    public private(set) var recorded: [RecordedEvent] = []
    /// recordedAt of the first event; each later one is a second later.
    public var start = Timestamp("2026-11-02T09:00:00.000Z")!

    public init(
        _ projections: [any Projection], name: String = "test", opener: (any PersonalDataOpening)? = nil
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-projection-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        clock = FixedClock()
        store = InMemoryEventStore(clock: clock)
        database = try ProjectionDatabase(
            path: directory.appendingPathComponent("\(name).db").path, name: name, projections: projections,
            opener: opener)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Records one event on `stream` by `actor` and applies it.
    @discardableResult
    public func given(
        _ event: StrataEvent, stream: String, actor: String = "admin-1", commandId: String? = nil
    ) throws -> RecordedEvent {
        let recorded = try record(event, stream: stream, actor: actor, commandId: commandId)
        try database.apply([recorded])
        return recorded
    }

    /// Records one event as the store would, without applying it.
    public func record(
        _ event: StrataEvent, stream: String, actor: String = "admin-1", commandId: String? = nil
    ) throws -> RecordedEvent {
        guard let name = StreamName(stream) else { throw ProjectionHarnessError("not a stream name: \(stream)") }
        clock.set(start.adding(milliseconds: Int64(recorded.count) * 1000))
        let command = commandId ?? "cmd-\(recorded.count + 1)"
        let write = try CommandWrite(
            commandId: command, bodyDigest: HashChain.sha256(Array(command.utf8)), actor: actor,
            commandType: "Given", decision: .append([try NewEvent(stream: name, event: event.payload)], expectations: [:]))
        guard case .accepted(let appended) = try store.append(write).outcome, let position = appended.first?.position,
            let stored = try store.events(after: position - 1, limit: 1).first
        else { throw ProjectionHarnessError("the store did not record \(event.eventType) on \(stream)") }
        recorded.append(stored)
        return stored
    }

    /// The rows of a query against the projection file.
    public func rows(_ sql: String, _ values: [ProjectionValue] = []) throws -> [[ProjectionValue]] {
        try database.query(sql, values)
    }

    public func query(_ sql: String, _ values: [ProjectionValue]) throws -> [[ProjectionValue]] {
        try database.query(sql, values)
    }

    public func execute(_ sql: String, _ values: [ProjectionValue]) throws {
        _ = try database.query(sql, values)
    }

    public func run(_ statement: ProjectionStatement, _ values: [ProjectionValue]) throws -> Int {
        try database.tables.run(statement, values)
    }

    public func rows(_ statement: ProjectionStatement, _ values: [ProjectionValue]) throws -> [[ProjectionValue]] {
        try database.tables.rows(statement, values)
    }
}

struct ProjectionHarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
