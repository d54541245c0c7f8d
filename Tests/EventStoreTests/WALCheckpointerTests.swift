import Foundation
import StrataSQLite
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
        // About 6,000 frames written in all: without restarts the log would hold them all.
        #expect(result.frames < 2500, "the log grew to \(result.frames) frames")
        #expect(try Self.rows(result.path) == 20000)
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
}
