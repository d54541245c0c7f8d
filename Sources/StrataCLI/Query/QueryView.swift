import EventStore
import Events
import Foundation
import Projections
import ProjectorRuntime
import StrataCore

/// What a query reads: a projection file, the live one (optionally once it has reached a
/// position) or one built from the store as it stood at a past position; or the store's
/// command journal.
struct QueryView {
    private enum Reader {
        case projection(ProjectionSnapshot)
        case journal(JournalSnapshot)
    }

    private let reader: Reader
    /// Which position the answer reflects, for people: `readmodels at position 1204`.
    let source: String
    /// The as-of day, the default day for aging: a time's own day, or a position's recorded day.
    let day: LocalDate?
    /// The scratch directory of an as-of build, removed by `close()` (or a signal).
    private let scratch: ScratchDirectory?

    private init(_ reader: Reader, source: String, day: LocalDate? = nil, scratch: ScratchDirectory? = nil) {
        self.reader = reader
        self.source = source
        self.day = day
        self.scratch = scratch
    }

    /// The last event the answer reflects: the projection's checkpoint, or the store's head.
    var position: Int64 {
        switch reader {
        case .projection(let snapshot): snapshot.checkpoint
        case .journal(let journal): journal.head
        }
    }

    /// The hash of the event the projection applied last; nil for the journal.
    var appliedHash: String? {
        guard case .projection(let snapshot) = reader else { return nil }
        return snapshot.chainHash
    }

    /// Why the projection stopped, if it has; the journal never stops.
    var stop: ProjectionStop? {
        guard case .projection(let snapshot) = reader else { return nil }
        return snapshot.stop
    }

    /// The query's rows, a row at a time, in the view's one read transaction: run twice, it
    /// gives the same rows.
    func forEachRow(
        _ sql: String, named values: [String: ProjectionValue], columns: ([String]) throws -> Void,
        row: ([ProjectionValue]) throws -> Bool
    ) throws {
        switch reader {
        case .projection(let snapshot): try snapshot.forEachRow(sql, named: values, columns: columns, row: row)
        case .journal(let journal): try journal.forEachRow(sql, named: values, columns: columns, row: row)
        }
    }

    /// The store's journal as it stands.
    static func journal(path: String) throws -> QueryView {
        let journal = try JournalSnapshot(path: path)
        return QueryView(.journal(journal), source: "the journal of events.db at position \(journal.head)")
    }

    /// The live file, read in one snapshot; with `minimumPosition`, polled until the
    /// projection has applied it, for at most `waitSeconds`.
    static func live(query: NamedQuery, path: String, minimumPosition: Int64?, waitSeconds: Int) throws -> QueryView {
        let minimum = minimumPosition ?? 0
        let deadline = ContinuousClock.now + .seconds(waitSeconds)
        while true {
            let snapshot: ProjectionSnapshot?
            do throws(ProjectorError) {
                snapshot = try ProjectionSnapshot(path: path)
                if let snapshot { try requireProjection(snapshot, of: query) }
            } catch {
                throw CommandFailure.environment(error.message)
            }
            if let snapshot, snapshot.checkpoint >= minimum {
                return QueryView(.projection(snapshot), source: "\(query.file) at position \(snapshot.checkpoint)")
            }
            if snapshot == nil, minimumPosition == nil {
                throw CommandFailure.environment(
                    "no \(query.file) at \(path): is `strata project \(query.file)` running? (set --data or STRATA_DATA)"
                )
            }
            if let stop = snapshot?.stop {
                throw CommandFailure.problem(
                    "\(query.file) is stopped and will not reach position \(minimum) until an operator acts: \(stop)")
            }
            guard ContinuousClock.now < deadline else {
                let stands = snapshot.map { "it is at position \($0.checkpoint)" } ?? "its file does not exist yet"
                throw CommandFailure.problem(
                    "\(query.file) did not reach position \(minimum) within \(waitSeconds) s: \(stands)")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// The projections the query needs, built from the store up to `asOf` in a scratch
    /// file, passing over the skips an operator recorded in the live file.
    static func asOf(
        _ asOf: AsOf, query: NamedQuery, livePath: String, storePath: String, opener: any PersonalDataOpening
    ) throws -> QueryView {
        let store = try VerifyCommand.openReadOnly(storePath)
        let head: Int64
        let position: Int64
        do throws(StoreError) {
            head = try store.head()
            switch asOf {
            case .position(let p): position = p
            case .time(let instant): position = try store.lastPosition(recordedAtOrBefore: instant)
            }
        } catch {
            throw CommandFailure.environment("cannot read \(storePath): \(error)")
        }
        guard position <= head else {
            throw CommandFailure.problem("--as-of \(position) is beyond the store's head, position \(head)")
        }
        let recordedAt: Timestamp?
        do throws(StoreError) {
            let event = position == 0 ? nil : try store.events(after: position - 1, limit: 1).first
            recordedAt = event.flatMap { Timestamp($0.recordedAt) }
        } catch {
            throw CommandFailure.environment("cannot read \(storePath): \(error)")
        }

        // The skips an operator recorded in the live file, read before anything is built: a file
        // of the other projection has skips that are not this one's to honour.
        let skips: [SkippedEvent]
        do throws(ProjectorError) {
            let live = try ProjectionSnapshot(path: livePath)
            if let live { try requireProjection(live, of: query) }
            skips = try live?.skips() ?? []
        } catch {
            throw CommandFailure.environment(error.message)
        }

        let scratch = try ScratchDirectory("strata-as-of")
        if scratch.swept > 0 {
            write(
                "strata query: removed \(scratch.swept) scratch cop\(scratch.swept == 1 ? "y" : "ies") of the read "
                    + "models that as-of queries which did not end (killed, crashed) left in the temporary "
                    + "directory\n", to: .standardError)
        }
        let path = scratch.path + "/\(query.file).db"
        let built: Result<ProjectionSnapshot?, ProjectorError>
        let progress = TerminalProgress.forStandardError("as of position \(position)", total: position)
        defer { progress?.finish() }
        do throws(ProjectorError) {
            let result = try Rebuild.run(
                name: query.file, projections: query.projections, from: StoreHistory(store: store), into: path,
                upTo: position, skips: skips, opener: opener,
                progress: progress.map { progress in { done, _ in progress.update(done) } })
            progress?.finish()
            if let stop = result.stop {
                throw ProjectorError(.stopped, "the history up to position \(position) cannot be applied: \(stop)")
            }
            built = .success(try ProjectionSnapshot(path: path))
        } catch {
            built = .failure(error)
        }
        guard case .success(let snapshot?) = built else {
            scratch.remove()
            // Placed as `strata rebuild` places the same: what the history holds (an event that
            // cannot be applied) is exit 1; what the machine lacks (a key store it can read, room
            // for the copy) is exit 2, the copy's place named, since nothing else says where it was.
            if case .failure(let error) = built {
                guard error.kind == .full else { throw RebuildCommand.failure(error) }
                throw CommandFailure.environment(
                    "no room for the copy as of position \(position) in \(scratch.path) (set TMPDIR to a place "
                        + "with room): \(error.message)")
            }
            throw CommandFailure.environment("the as-of build left no file at \(path)")
        }
        let when = recordedAt.map { " (recorded \($0))" } ?? ""
        // Aging is counted on the day asked about: a time's own day (a date's, for a date), which
        // may be well after the last event recorded by then; a position's, the day it was recorded.
        let day: LocalDate? =
            switch asOf {
            case .time(let instant): LocalDate(instant)
            case .position: recordedAt.map(LocalDate.init)
            }
        return QueryView(
            .projection(snapshot), source: "\(query.file) as of position \(position)\(when)", day: day,
            scratch: scratch)
    }

    /// A file that holds the other projection (audit.db copied over readmodels.db) is named as
    /// `strata status` names it, rather than queried into "no such table".
    private static func requireProjection(_ snapshot: ProjectionSnapshot, of query: NamedQuery) throws(ProjectorError) {
        guard snapshot.name != query.file else { return }
        throw ProjectorError(.foreign, "\(snapshot.path) holds the \(snapshot.name) projection, not \(query.file)")
    }

    /// Ends the read, and removes the scratch directory of an as-of build.
    func close() {
        if case .journal(let journal) = reader { journal.close() }
        scratch?.remove()
    }
}
