import EventStore
import Events
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

    /// Rebuilds into `path` up to `target` (the head when nil), passing over `skips` as the
    /// live file does. A file at `path` is replaced only when it is an earlier rebuild of
    /// `name` (`RebuildOutput`); the new one has mode 0600.
    public static func run(
        name: String, projections: [any Projection], from history: any HistorySource & Sendable, into path: String,
        upTo target: Int64? = nil, skips: [SkippedEvent] = [], pageSize: Int = 5000,
        opener: (any PersonalDataOpening)? = nil, progress: ((_ position: Int64, _ head: Int64) -> Void)? = nil
    ) throws(ProjectorError) -> Result {
        let lock = try RebuildOutput.claim(path, name: name)
        let database = try ProjectionDatabase(
            path: path, name: name, projections: projections, durability: .scratch, opener: opener, holding: lock)
        try database.adoptSkips(skips)
        let reader = PageReader(history: history, name: name, target: target, pageSize: pageSize)
        let preparer = database.preparer
        let started = ContinuousClock.now
        var page = try reader.page(after: database.checkpoint, head: target ?? Int64.max)
        var prepared = preparer.prepare(page.events, after: database.chainHash)
        // Two cores: while one page is written to the file, the next is read, its chain
        // checked and its events decoded on another thread. When that thread was the slower
        // one last time (a file of cheap writes, such as audit.db), half the next page's
        // chain is checked on a third, in the time the writer leaves free.
        var writing = Duration.zero
        var reading = Duration.zero
        // The page written last time, until it is let go (below).
        var written = Written.none
        while let last = page.events.last, database.stop == nil {
            let head = page.head
            let inHalves = reading > writing
            // Freeing a page of decoded events (every string, array and box in it) is work
            // the writer need not wait for: when the writer is the slower side, the reading
            // thread takes the page written last and lets it go once the next is ready. Its
            // closure then holds the only reference, so the page is freed where that ends.
            var retiring = Written.none
            if !inHalves { swap(&retiring, &written) }
            let ahead = Background { [retiring] () -> Swift.Result<(Page, [PreparedEvent], Duration), ProjectorError> in
                defer { withExtendedLifetime(retiring) {} }
                let started = ContinuousClock.now
                do throws(ProjectorError) {
                    let next = try reader.page(after: last.position, head: head)
                    let ready = preparer.prepare(next.events, after: last.hash, checkingInHalves: inHalves)
                    return .success((next, ready, ContinuousClock.now - started))
                } catch {
                    return .failure(error)
                }
            }
            retiring = .none
            defer { _ = ahead.result() }
            let started = ContinuousClock.now
            try database.apply(prepared: prepared)
            writing = ContinuousClock.now - started
            progress?(database.checkpoint, head)
            let next = try ahead.result().get()
            written = Written(page: page, prepared: prepared)
            (page, prepared, reading) = next
        }
        try database.finishBuilding()
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if let target, database.stop == nil, database.checkpoint < target {
            throw ProjectorError(.io, "rebuilding \(name): the store ends at \(database.checkpoint), before position \(target)")
        }
        return Result(events: database.checkpoint, position: database.checkpoint, seconds: seconds, stop: database.stop)
    }

    /// A page and its events as prepared, once written.
    struct Written: Sendable {
        var page: Page
        var prepared: [PreparedEvent]

        static let none = Written(page: Page(events: [], head: 0), prepared: [])
    }

    /// Events of a page of history, cut at the head, and that head.
    struct Page: Sendable {
        let events: [RecordedEvent]
        let head: Int64
    }

    /// Reads history page by page, on whichever thread asks.
    struct PageReader: Sendable {
        let history: any HistorySource & Sendable
        let name: String
        let target: Int64?
        let pageSize: Int

        /// The events after `position`, up to `head`, or up to the head history reports
        /// now when rebuilding to the head.
        func page(after position: Int64, head: Int64) throws(ProjectorError) -> Page {
            guard position < head else { return Page(events: [], head: head) }
            let page: HistoryPage
            do {
                page = try history.page(after: position, limit: pageSize)
            } catch {
                throw ProjectorError(.io, "rebuilding \(name): \(error)")
            }
            let head = target == nil ? page.head : head
            return Page(events: Array(page.events.prefix { $0.position <= head }), head: head)
        }
    }
}
