import Foundation
import Synchronization

/// A fresh private directory (under TMPDIR unless told) that does not outlive the command unless
/// it is kept: `remove()` removes it, and so does SIGINT, SIGTERM or SIGHUP, before the process
/// ends (exit 128 + the signal's number, as a shell reports a process the signal ended). An as-of
/// query builds its copy of the read models there, personal data opened included, which a later
/// erasure would never reach; a backup builds its files there, then renames it into place.
///
/// Its files cannot simply be unlinked once open: the build writes its file by name, closes it
/// and opens it again, and SQLite's WAL finds its `-wal` and `-shm` files by name.
///
/// Nothing can remove it when the process is killed (SIGKILL, the kernel's OOM killer, a
/// crash), so the process holds a lock on it (`flock`), which ends with the process however
/// it ends, and the next scratch directory of the same prefix first removes every one whose
/// lock nobody holds (`swept` says how many).
final class ScratchDirectory {
    let path: String
    /// How many directories left by processes that did not end were removed first.
    let swept: Int
    private let made: MadePath
    private let signals: ShutdownSignals

    /// `stopping` runs at a signal before the directory goes: it stops what writes into it (a
    /// benchmark's child processes), which would otherwise make it again once it was gone.
    init(
        _ prefix: String, in base: String = NSTemporaryDirectory(), stopping: @escaping @Sendable () -> Void = {}
    ) throws(CommandFailure) {
        swept = Self.sweep(base, prefix: prefix)
        let made = MadePath()
        // Listening before the directory exists, so that no signal goes unseen once it does
        // (the command blocked them at its start: one sent before this waits for it).
        let signals = ShutdownSignals { signal in
            made.remove(after: stopping, thenExit: 128 + signal)
        }
        guard let path = made.make(base + "/\(prefix)-XXXXXX") else {
            let reason = String(cString: strerror(errno))
            signals.cancel()
            throw CommandFailure.environment("cannot create a scratch directory in \(base): \(reason)")
        }
        self.path = path
        self.made = made
        self.signals = signals
    }

    /// Removes the directory and everything in it, then stops listening for the signals.
    func remove() {
        made.remove()
        signals.cancel()
    }

    /// Renames the directory to `destination` (which must not exist, or be an empty directory,
    /// on the same file system) and keeps it: neither `remove()` nor a signal removes it now.
    /// A signal that came first has removed it already, and ended the process.
    func keep(as destination: String) throws(CommandFailure) {
        try made.rename(to: destination)
        signals.cancel()
    }

    /// Runs `body` with the directory's path while no signal can remove it: a signal that comes
    /// meanwhile waits for `body` to end, then removes what is left and ends the process. For a
    /// step that must be done whole once begun, as a restore moving its files into place.
    func whole<T>(_ body: (String) throws(CommandFailure) -> T) throws(CommandFailure) -> T {
        try made.holding(body)
    }

    /// Removes the directories named `prefix-XXXXXX` in `base` that a process which did not
    /// end left behind: those of this user, real directories (a link is never followed), whose
    /// lock no process holds. One younger than a minute is left alone: its maker locks it just
    /// after making it. Returns how many it removed.
    static func sweep(_ base: String, prefix: String) -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { return 0 }
        var removed = 0
        let now = time(nil)
        for name in names where name.hasPrefix(prefix + "-") && name.utf8.count == prefix.utf8.count + 7 {
            let path = base + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(),
                now - info.st_mtim.tv_sec > 60
            else { continue }
            let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { continue }
            if (try? FileManager.default.removeItem(atPath: path)) != nil { removed += 1 }
        }
        return removed
    }
}

/// The directory once made, shared with the signals' queue: made and removed under its lock,
/// so a signal that comes while it is being made removes it once it exists.
private final class MadePath: Sendable {
    private struct Made {
        let path: String
        /// The directory opened and locked for as long as it exists; -1 where the file system
        /// has no locks, which leaves it to this process alone (a sweep cannot lock it either).
        let lock: Int32
    }

    private let made = Mutex<Made?>(nil)

    /// Makes a directory from `template` (ending in XXXXXX) and locks it; its path, or nil
    /// when it cannot.
    func make(_ template: String) -> String? {
        made.withLock { made in
            var bytes = Array(template.utf8CString)
            guard
                let path = bytes.withUnsafeMutableBufferPointer({ buffer in
                    buffer.baseAddress.flatMap(mkdtemp).map { String(cString: $0) }
                })
            else { return nil }
            var lock = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if lock >= 0, flock(lock, LOCK_EX | LOCK_NB) != 0 {
                close(lock)
                lock = -1
            }
            made = Made(path: path, lock: lock)
            return path
        }
    }

    func rename(to destination: String) throws(CommandFailure) {
        try made.withLock { (made: inout Made?) throws(CommandFailure) in
            guard let directory = made else { return }
            guard Glibc.rename(directory.path, destination) == 0 else {
                throw CommandFailure.environment(
                    "cannot move \(directory.path) to \(destination): \(String(cString: strerror(errno)))")
            }
            if directory.lock >= 0 { close(directory.lock) }
            made = nil
        }
    }

    /// Runs `body` under the lock a signal's `remove()` takes.
    func holding<T>(_ body: (String) throws(CommandFailure) -> T) throws(CommandFailure) -> T {
        try made.withLock { (made: inout Made?) throws(CommandFailure) -> T in
            guard let directory = made else { throw CommandFailure.environment("the scratch directory is gone") }
            return try body(directory.path)
        }
    }

    /// Runs `first`, then removes the directory; with `status`, ends the process with it still
    /// holding the lock, so that a thread which meanwhile failed for the files gone or its
    /// children stopped waits in `remove()` rather than end the process first with its own exit
    /// code.
    func remove(after first: () -> Void = {}, thenExit status: Int32? = nil) {
        made.withLock { made in
            first()
            if let directory = made {
                // Again if a file appeared in it meanwhile; once the directory is gone none can.
                for _ in 0..<10 where FileManager.default.fileExists(atPath: directory.path) {
                    try? FileManager.default.removeItem(atPath: directory.path)
                }
                if directory.lock >= 0 { close(directory.lock) }
                made = nil
            }
            if let status { exit(status) }
        }
    }
}
