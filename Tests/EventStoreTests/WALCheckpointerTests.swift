import Foundation
import StrataCore
@testable import StrataSQLite
import Synchronization
import Testing

/// A connection's checkpoints on a thread of their own: the log is copied back in the
/// background, and it starts again from its beginning however the writer keeps writing,
/// with every committed row in the file.
@Suite struct WALCheckpointerTests {
    /// A WAL file written by `commits` transactions of 10 rows of 1 KB each (about three
    /// pages a commit), pausing after every tenth commit if asked; returns the file's path, the
    /// checkpoints run, and the longest the log grew, in frames.
    static func write(
        commits: Int, pauseMicroseconds: UInt32?, pages: Int32, inlinePages: Int32
    ) throws -> (path: String, checkpoints: (background: Int, inline: Int), frames: Int) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-wal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("file.db").path
        let writer = try SQLiteConnection(path: path, mode: .readWrite)
        #expect(try writer.scalarText("PRAGMA journal_mode=WAL") == "wal")
        try writer.execute("PRAGMA synchronous=NORMAL")
        try writer.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, text TEXT NOT NULL)")
        writer.checkpointInBackground(pages: pages, inlinePages: inlinePages)
        var frames = 0
        for commit in 0..<commits {
            try writer.transaction {
                for row in 0..<10 {
                    try writer.execute("INSERT INTO t (n, text) VALUES (\(commit * 10 + row), hex(randomblob(500)))")
                }
            }
            let walBytes = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            frames = max(frames, (walBytes - 32) / (4096 + 24))
            if let pauseMicroseconds, commit % 10 == 9 { usleep(pauseMicroseconds) }
        }
        let checkpoints = try #require(writer.backgroundCheckpoints)
        writer.close()
        return (path, checkpoints, frames)
    }

    /// The rows in the file, checked whole; the file is removed.
    static func rows(_ path: String) throws -> Int64? {
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let reader = try SQLiteConnection(path: path, mode: .readOnly)
        #expect(try reader.scalarText("PRAGMA integrity_check") == "ok")
        return try reader.scalarInteger("SELECT count(*) FROM t")
    }

    @Test func aWriterThatPausesLeavesTheCopyingToTheThread() throws {
        // Pauses of 20 ms every ten commits: time for a checkpoint, fsync included, to copy the
        // log whole on a busy machine, which 2 ms after every commit was not (it never caught up).
        let result = try Self.write(commits: 300, pauseMicroseconds: 20_000, pages: 100, inlinePages: 2000)
        #expect(result.checkpoints.background > 0)
        #expect(result.checkpoints.inline == 0)
        // About 900 frames written in all, the log started again well before.
        #expect(result.frames < 600, "the log grew to \(result.frames) frames")
        #expect(try Self.rows(result.path) == 3000)
    }

    @Test func aWriterThatNeverPausesStillRestartsTheLog() throws {
        let result = try Self.write(commits: 2000, pauseMicroseconds: nil, pages: 100, inlinePages: 400)
        #expect(result.checkpoints.background + result.checkpoints.inline > 0)
        // One background checkpoint a hundred frames written (a few commits' worth), not one
        // for every commit past the threshold while the last one was copying: that was
        // 541–781 here, each syncing the log and the file.
        #expect(result.checkpoints.background < 250, "\(result.checkpoints.background) background checkpoints")
        // About 6,000 frames written in all: without restarts the log would hold them all. The
        // bound leaves room for a checkpoint thread starved of a core for a while (2,610 frames
        // seen at a load of 9 on two cores, where 2,500 was the bound).
        #expect(result.frames < 4000, "the log grew to \(result.frames) frames")
        #expect(try Self.rows(result.path) == 20000)
    }

    /// A reader that holds its snapshot keeps the log from starting again, so it grows while the
    /// writer goes on; once the reader lets go and the log starts again, its file is cut back to
    /// `inlinePages` frames. SQLite reuses a log file without shrinking it: one grown so beside a
    /// running service or projector kept its size (701 MB, 3.7 GB) for as long as it ran.
    @Test func aLogGrownWhileAReaderHeldItBackIsCutBackOnceItStartsAgain() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-wal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("file.db").path
        let writer = try SQLiteConnection(path: path, mode: .readWrite)
        defer { writer.close() }
        #expect(try writer.scalarText("PRAGMA journal_mode=WAL") == "wal")
        // No syncs: the other tests of the suite time their checkpoints, and this one's writes
        // run beside them; what is cut back does not depend on them.
        try writer.execute("PRAGMA synchronous=OFF")
        try writer.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, text TEXT NOT NULL)")
        writer.checkpointInBackground(pages: 20, inlinePages: 100)
        let pageSize = try #require(try writer.scalarInteger("PRAGMA page_size"))
        let limit = 32 + 100 * (Int(pageSize) + 24)
        func walBytes() -> Int {
            (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        }
        var row = 0
        func commit() throws {
            try writer.transaction {
                for _ in 0..<10 {
                    try writer.execute("INSERT INTO t (n, text) VALUES (\(row), hex(randomblob(500)))")
                    row += 1
                }
            }
        }

        let reader = try SQLiteConnection(path: path, mode: .readOnly)
        defer { reader.close() }
        try reader.execute("BEGIN")
        #expect(try reader.scalarInteger("SELECT count(*) FROM t") == 0)
        for _ in 0..<200 { try commit() }
        let grown = walBytes()
        #expect(grown > 2 * limit, "the log grew to \(grown) bytes only, where \(limit) is the limit")
        try reader.execute("COMMIT")

        // The background checkpoint copies the log whole now that no reader needs it, and the
        // next commit starts it again from its beginning.
        #expect(
            Self.waitUntil {
                (try? commit()) != nil && walBytes() <= limit
            }, "the log stayed at \(walBytes()) bytes, where \(limit) is the limit (\(grown) at most)")
        #expect(try writer.scalarInteger("SELECT count(*) FROM t") == Int64(row))
    }

    /// The names of this process's threads, as `top -H` and `perf` read them.
    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))
                .map { $0.trimmingCharacters(in: .newlines) }
        }
    }

    /// Waits up to five seconds for `condition` on the thread names.
    static func eventually(_ condition: ([String]) -> Bool) -> Bool {
        for _ in 0..<500 {
            if condition(threadNames()) { return true }
            usleep(10_000)
        }
        return false
    }

    /// Each file's checkpoint thread carries the file's name, so that the store's and the
    /// projections' are told apart; it ends when its connection closes.
    @Test func theCheckpointThreadIsNamedAfterItsFileAndEndsWithItsConnection() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-wal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A name no other test's file has, short enough for the kernel's 15 bytes.
        let file = "w\(UInt32.random(in: 0..<1_000_000)).db"
        let writer = try SQLiteConnection(path: directory.appendingPathComponent(file).path, mode: .readWrite)
        #expect(try writer.scalarText("PRAGMA journal_mode=WAL") == "wal")
        writer.checkpointInBackground()
        #expect(Self.eventually { $0.contains("ckpt-\(file)") }, "threads: \(Self.threadNames())")
        writer.close()
        #expect(Self.eventually { !$0.contains("ckpt-\(file)") }, "threads: \(Self.threadNames())")
    }

    /// Waits up to five seconds for `condition`.
    static func waitUntil(_ condition: () -> Bool) -> Bool {
        for _ in 0..<500 {
            if condition() { return true }
            usleep(10_000)
        }
        return false
    }

    /// A logger that keeps its lines, and what it has kept.
    static func collectingLogger() -> (Logger, @Sendable () -> [String]) {
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "test") { line in lines.withLock { $0.append(line) } }
        return (logger, { lines.withLock { $0 } })
    }

    /// Without its connection the thread never checkpoints: the writer's commits copy the
    /// log back only past `inlinePages`, each waiting for it, so the operator hears of it,
    /// once however often commits wake the thread.
    @Test func aConnectionThatCannotOpenIsLoggedOnceAndCounted() throws {
        let (logger, logged) = Self.collectingLogger()
        // A parent directory that does not exist: SQLite cannot create the file.
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-wal-\(UUID().uuidString)/missing/file.db").path
        let checkpointer = WALCheckpointer(path: path, pages: 10, inlinePages: 100, logger: logger)
        for frames: Int32 in [10, 20, 30] { checkpointer.committed(frames: frames, writer: nil) }
        checkpointer.stop()
        #expect(checkpointer.checkpoints == .init(background: 0, inline: 0, failed: 1))
        let lines = logged()
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.allSatisfy { $0.contains(" warning test: ") && $0.contains(path) }, "\(lines)")
    }

    /// The bytes of a small database file, made in a directory of its own: in WAL mode, or
    /// with its first page's b-tree header damaged (a valid header, a file SQLite calls malformed).
    static func databaseBytes(damaged: Bool) throws -> Data {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-wal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("file.db").path
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        if !damaged { #expect(try connection.scalarText("PRAGMA journal_mode=WAL") == "wal") }
        try connection.execute("CREATE TABLE t (n INTEGER PRIMARY KEY)")
        connection.close()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        if damaged {
            bytes[100] = 0  // no page type
            // A change counter no fresh file has: SQLite keeps the pages it read while the
            // counter stays the same, and would go on reading this page after the file is mended.
            bytes.replaceSubrange(24..<28, with: [0xFF, 0xFF, 0xFF, 0xFF])
        }
        return bytes
    }

    /// Replaces the file's bytes in place: the thread's connection holds the file open, and
    /// SQLite reads it through that descriptor.
    static func overwrite(_ path: String, with bytes: Data) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: bytes)
        try handle.close()
    }

    /// A failing checkpoint is counted and the writer never hears of it, so it is logged: when
    /// failures start, when their error changes, and when a checkpoint works again, not once a
    /// failure.
    @Test func failingCheckpointsAreCountedAndLoggedWhenTheyStartChangeAndStop() throws {
        let (logger, logged) = Self.collectingLogger()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-wal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("file.db").path
        // Not a database: the connection opens, for SQLite reads nothing yet; checkpoints fail.
        try Data(repeating: UInt8(ascii: "x"), count: 8192).write(to: URL(fileURLWithPath: path))
        let checkpointer = WALCheckpointer(path: path, pages: 10, inlinePages: 100, logger: logger)
        defer { checkpointer.stop() }
        /// Wakes the thread as a commit past `pages` does, and waits for its checkpoint.
        func checkpoint(until expected: WALCheckpointer.Counts) {
            checkpointer.committed(frames: 10, writer: nil)
            #expect(Self.waitUntil { checkpointer.checkpoints == expected }, "\(checkpointer.checkpoints)")
        }
        checkpoint(until: .init(background: 0, inline: 0, failed: 1))
        checkpoint(until: .init(background: 0, inline: 0, failed: 2))
        try Self.overwrite(path, with: Self.databaseBytes(damaged: true))
        checkpoint(until: .init(background: 0, inline: 0, failed: 3))
        checkpoint(until: .init(background: 0, inline: 0, failed: 4))
        try Self.overwrite(path, with: Self.databaseBytes(damaged: false))
        checkpoint(until: .init(background: 1, inline: 0, failed: 4))
        checkpoint(until: .init(background: 2, inline: 0, failed: 4))

        let lines = logged()
        #expect(lines.count == 3, "\(lines)")
        guard lines.count == 3 else { return }
        #expect(lines[0].contains(" warning test: ") && lines[0].contains("file is not a database"), "\(lines[0])")
        #expect(lines[1].contains(" warning test: ") && lines[1].contains("malformed"), "\(lines[1])")
        #expect(lines[2].contains(" info test: ") && lines[2].contains("work again after 4 failures"), "\(lines[2])")
    }
}
