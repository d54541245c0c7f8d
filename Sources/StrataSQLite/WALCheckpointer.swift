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
/// The log starts again from its beginning only when a writer begins a transaction with the
/// whole log copied back. A writer that commits again while every background checkpoint is
/// still running would never find it so, and the log would grow without end: past
/// `inlinePages` frames the writer's commit checkpoints inline, as SQLite's own would, which
/// by then has little left to copy.
final class WALCheckpointer: Sendable {
    let pages: Int32
    let inlinePages: Int32
    private let path: String
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// A wake-up is pending: commits in between do not queue more.
    private let requested = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let counts = Mutex(Counts())

    /// How many checkpoints ran where, for tests and diagnostics.
    struct Counts: Sendable, Equatable {
        var background = 0
        var inline = 0
    }

    init(path: String, pages: Int32, inlinePages: Int32) {
        precondition(pages > 0 && inlinePages > pages, "checkpoint thresholds out of order")
        self.path = path
        self.pages = pages
        self.inlinePages = inlinePages
        startThread(named: "strata-checkpoint") { [self] in run() }
    }

    var checkpoints: Counts { counts.withLock { $0 } }

    /// Called by the writer's WAL hook after each commit, on the writer's thread, with the
    /// log's length in frames.
    func committed(frames: Int32, writer db: OpaquePointer?) {
        if frames >= inlinePages {
            // SQLITE_BUSY while the background one runs: it is copying the log already.
            if sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) == SQLITE_OK {
                counts.withLock { $0.inline += 1 }
            }
        } else if frames >= pages, !requested.exchange(true, ordering: .acquiringAndReleasing) {
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
        guard let connection = try? SQLiteConnection(path: path, mode: .readWrite) else { return }
        defer { connection.close() }
        while true {
            wake.wait()
            if stopping.load(ordering: .acquiring) { return }
            requested.store(false, ordering: .releasing)
            // PASSIVE never waits for the writer or for readers; what they still need is
            // copied at a later checkpoint. A failure (an I/O error) is SQLite's to report
            // to the writer, whose next inline checkpoint meets it too.
            if (try? connection.execute("PRAGMA wal_checkpoint(PASSIVE)")) != nil {
                counts.withLock { $0.background += 1 }
            }
        }
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
