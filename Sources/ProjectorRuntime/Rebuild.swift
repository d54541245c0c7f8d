import Foundation
import Projections
import StrataCore

/// Builds a projection from position 0 into a fresh file, reading history from a source
/// (the store file itself when co-located): what `strata rebuild` runs, and what proves
/// that a live projection equals its events.
public enum Rebuild {
    public struct Result: Sendable {
        public let events: Int64
        public let position: Int64
        public let seconds: Double
        /// Set when an event could not be applied: the rebuild stopped there.
        public let stop: ProjectionStop?

        public var eventsPerSecond: Double { seconds > 0 ? Double(events) / seconds : 0 }
    }

    /// Rebuilds into `path` (replaced if present) up to `target` (the head when nil),
    /// passing over `skips` as the live file does.
    public static func run(
        name: String, projections: [any Projection], from history: any HistorySource, into path: String,
        upTo target: Int64? = nil, skips: [SkippedEvent] = [], pageSize: Int = 5000,
        progress: ((_ position: Int64, _ head: Int64) -> Void)? = nil
    ) throws(ProjectorError) -> Result {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let database = try ProjectionDatabase(path: path, name: name, projections: projections, durability: .scratch)
        try database.adoptSkips(skips)
        let started = ContinuousClock.now
        var head = target ?? Int64.max
        while database.checkpoint < head, database.stop == nil {
            let page: HistoryPage
            do {
                page = try history.page(after: database.checkpoint, limit: pageSize)
            } catch {
                throw ProjectorError(.io, "rebuilding \(name): \(error)")
            }
            if target == nil { head = page.head }
            let events = page.events.prefix { $0.position <= head }
            if events.isEmpty { break }
            try database.apply(events)
            progress?(database.checkpoint, head)
        }
        database.checkpointWAL()
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if let target, database.stop == nil, database.checkpoint < target {
            throw ProjectorError(.io, "rebuilding \(name): the store ends at \(database.checkpoint), before position \(target)")
        }
        return Result(events: database.checkpoint, position: database.checkpoint, seconds: seconds, stop: database.stop)
    }
}
