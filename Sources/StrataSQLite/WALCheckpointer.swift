import CSQLite
import Dispatch
import Foundation
import StrataCore
import Synchronization

/// Checkpoints a WAL file on a thread of its own, with its own connection, so that the
/// connection that writes never stalls in the commit that crosses SQLite's threshold.
///
/// SQLite's automatic checkpoint runs inside that commit: it copies every page of the log
/// back into the database file and syncs it before the commit returns, tens of milliseconds
/// every thousand pages. Here the writer's commit only notes the log's length (its WAL hook,
/// which replaces the automatic one); past `pages` frames it wakes this thread, which runs a
/// `PASSIVE` checkpoint: it copies what no reader still needs and never blocks the writer.
///
/// Once it has run, it is woken again only when the log has grown by another `pages` frames
/// past what that run copied (or has started again and reached `pages`). A writer that never
/// pauses keeps adding to the log while a checkpoint copies it, so waking on every commit
/// past the threshold ran one small checkpoint after another, each syncing the log and the
/// file: under `bench append`, 607 syncs of the file for 100,000 events where SQLite's own
/// checkpoints made 14.
///
/// The log starts again from its beginning only when a writer begins a transaction with the
/// whole log copied back. A writer that commits again while every background checkpoint is
/// still running would never find it so, and the log would grow without end: past
/// `inlinePages` frames the writer's commit checkpoints inline, as SQLite's own would, which
/// by then has little left to copy.
///
/// The thread's own failures, its connection not opening or a checkpoint failing, go to
/// `logger` and are counted: the writer never sees them, and never waits for them.
final class WALCheckpointer: Sendable {
    let pages: Int32
    let inlinePages: Int32
    private let path: String
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// A wake-up is pending: commits in between do not queue more.
    private let requested = Atomic<Bool>(false)
    /// The log's length, in frames, when the last background checkpoint ran; 0 once the
    /// log has started again.
    private let covered = Atomic<Int32>(0)
    /// The log's length at the writer's last commit: a shorter one means it started again.
    private let lastFrames = Atomic<Int32>(0)
    private let stopping = Atomic<Bool>(false)
    private let counts = Mutex(Counts())
    private let logger: Logger

    /// How many checkpoints ran where, for tests and diagnostics.
    struct Counts: Sendable, Equatable {
        var background = 0
        var inline = 0
        /// Background checkpoints that failed; 1 when the thread could not open its connection.
        var failed = 0
    }

    init(path: String, pages: Int32, inlinePages: Int32, logger: Logger) {
        precondition(pages > 0 && inlinePages > pages, "checkpoint thresholds out of order")
        self.path = path
        self.pages = pages
        self.inlinePages = inlinePages
        self.logger = logger
        // At the writer's priority: while a background checkpoint runs, the writer's inline one
        // is refused, so a checkpoint starved of the cores lets the log grow without bound.
        startThread(named: Self.threadName(for: path)) { [self] in run() }
    }

    /// `ckpt-` and the file's name (`startThread` cuts it to the kernel's 15 bytes): the
    /// store's and each projection's checkpoints are told apart in `top -H` and `perf`
    /// (`ckpt-events.db`, `ckpt-readmodels`), where one shared name lumped them together.
    static func threadName(for path: String) -> String {
        "ckpt-" + (path as NSString).lastPathComponent
    }

    var checkpoints: Counts { counts.withLock { $0 } }

    /// Called by the writer's WAL hook after each commit, on the writer's thread, with the
    /// log's length in frames.
    func committed(frames: Int32, writer db: OpaquePointer?) {
        if frames < lastFrames.exchange(frames, ordering: .relaxed) {
            covered.store(0, ordering: .relaxed)
        }
        if frames >= inlinePages {
            // SQLITE_BUSY while the background one runs: it is copying the log already.
            if sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) == SQLITE_OK {
                counts.withLock { $0.inline += 1 }
            }
        } else if frames >= pages, frames - covered.load(ordering: .relaxed) >= pages,
            !requested.exchange(true, ordering: .acquiringAndReleasing)
        {
            wake.signal()
        }
    }

    /// Ends the thread after the checkpoint it is running, if any. Called once, by the
    /// connection that owns it, after its hook is removed.
    func stop() {
        stopping.store(true, ordering: .releasing)
        wake.signal()
        finished.wait()
    }

    private func run() {
        defer { finished.signal() }
        // Opened here: a connection stays on the thread that uses it.
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, mode: .readWrite)
        } catch {
            // Without this thread the log is copied back only by commits past `inlinePages`,
            // each of which then waits for it: an operator must hear of it, once.
            counts.withLock { $0.failed += 1 }
            logger.warning(
                "no background checkpoints for \(path), their connection did not open: \(error); "
                    + "commits copy the log back themselves past \(inlinePages) frames")
            return
        }
        defer { connection.close() }
        // The failure logged last and how many since a checkpoint last worked: a failing disk
        // fails every checkpoint, and one line each would bury what the log is for.
        var logged: SQLiteError?
        var failures = 0
        while true {
            wake.wait()
            if stopping.load(ordering: .acquiring) { return }
            requested.store(false, ordering: .releasing)
            // PASSIVE never waits for the writer or for readers; what they still need is
            // copied at a later checkpoint.
            do throws(SQLiteError) {
                // nil: another checkpoint (the writer's inline one) holds SQLite's checkpoint
                // lock and is copying the log already; nothing ran, and nothing failed.
                guard let frames = try Self.checkpoint(connection) else { continue }
                // Stored after the log may have started again (its next commit resets it):
                // then the next run comes later than it could, never sooner.
                covered.store(frames, ordering: .relaxed)
                counts.withLock { $0.background += 1 }
                if failures > 0 {
                    logger.info("background checkpoints of \(path) work again after \(failures) failures")
                    logged = nil
                    failures = 0
                }
            } catch {
                // The writer goes on, none the wiser: past `inlinePages` its commits checkpoint
                // inline, and until then the log grows.
                counts.withLock { $0.failed += 1 }
                failures += 1
                if error != logged {
                    logger.warning(
                        "a background checkpoint of \(path) failed: \(error); "
                            + "not logged again until the error changes or checkpoints work again")
                    logged = error
                }
            }
        }
    }
}

extension WALCheckpointer {
    /// Runs a PASSIVE checkpoint; returns the log's length in frames as it found it, or nil
    /// when another connection's checkpoint was running.
    fileprivate static func checkpoint(_ connection: SQLiteConnection) throws(SQLiteError) -> Int32? {
        let s = try connection.statement("PRAGMA wal_checkpoint(PASSIVE)")
        defer { s.reset() }
        // One row: busy, frames in the log, frames copied back. The pragma reports the
        // SQLITE_BUSY of a checkpoint lock held elsewhere as busy = 1, not as an error.
        guard try s.step() else { return 0 }
        if s.int64(0) != 0 { return nil }
        return Int32(clamping: s.int64(1))
    }
}

/// `sqlite3_wal_hook`'s callback: context, connection, database name, frames in the log.
typealias WALHook = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32

/// The WAL hook installed by `SQLiteConnection.checkpointInBackground`: `context` is the
/// connection's checkpointer, which outlives the hook.
let walCheckpointHook: WALHook = { context, db, _, frames in
    guard let context else { return SQLITE_OK }
    Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(frames: frames, writer: db)
    return SQLITE_OK
}
