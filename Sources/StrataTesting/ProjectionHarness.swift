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
    private var versions: [String: Int64] = [:]
    private var position: Int64 = 0
    private var previousHash = HashChain.genesisHex
    /// The recorded events so far, in order (to replay them elsewhere).
    public private(set) var recorded: [RecordedEvent] = []
    /// recordedAt of the first event; each later one is a second later.
    public var start = Timestamp("2026-11-02T09:00:00.000Z")!

    public init(_ projections: [any Projection], name: String = "test") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-projection-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        database = try ProjectionDatabase(
            path: directory.appendingPathComponent("\(name).db").path, name: name, projections: projections)
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
        position += 1
        let version = (versions[stream] ?? 0) + 1
        versions[stream] = version
        let command = commandId ?? "cmd-\(position)"
        let metadata = EventMetadata(commandId: command, actor: actor, causationId: command)
        let unhashed = RecordedEvent(
            position: position, stream: stream, version: version, type: event.eventType,
            schemaVersion: event.schemaVersion, recordedAt: start.adding(milliseconds: (position - 1) * 1000).description,
            data: try event.canonicalData(), metadata: metadata.canonicalBytes, prevHash: previousHash, hash: "")
        let hash = Hex.encode(
            HashChain.hash(previous: Hex.decode(previousHash)!, canonicalEvent: unhashed.canonicalBody))
        let event = RecordedEvent(
            position: unhashed.position, stream: stream, version: version, type: unhashed.type,
            schemaVersion: unhashed.schemaVersion, recordedAt: unhashed.recordedAt, data: unhashed.data,
            metadata: unhashed.metadata, prevHash: previousHash, hash: hash)
        previousHash = hash
        recorded.append(event)
        return event
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
}
