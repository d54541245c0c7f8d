import Foundation
import Synchronization

/// A fresh private directory under TMPDIR that does not outlive the command: `remove()` removes
/// it, and so does SIGINT, SIGTERM or SIGHUP, before the process ends (exit 128 + the signal's number,
/// as a shell reports a process the signal ended). An as-of query builds its copy of the read
/// models there, personal data opened included, which a later erasure would never reach.
///
/// Its files cannot simply be unlinked once open: the build writes its file by name, closes it
/// and opens it again, and SQLite's WAL finds its `-wal` and `-shm` files by name.
final class ScratchDirectory {
    let path: String
    private let made: MadePath
    private let signals: ShutdownSignals

    init(_ prefix: String) throws(CommandFailure) {
        let made = MadePath()
        // Listening before the directory exists, so that no signal goes unseen once it does
        // (the command blocked them at its start: one sent before this waits for it).
        let signals = ShutdownSignals { signal in
            made.remove()
            exit(128 + signal)
        }
        let base = NSTemporaryDirectory()
        guard let path = made.make(base + "/\(prefix)-XXXXXX") else {
            signals.cancel()
            throw CommandFailure.environment("cannot create a scratch directory in \(base)")
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
}

/// The directory once made, shared with the signals' queue: made and removed under its lock,
/// so a signal that comes while it is being made removes it once it exists.
private final class MadePath: Sendable {
    private let path = Mutex<String?>(nil)

    /// Makes a directory from `template` (ending in XXXXXX); its path, or nil when it cannot.
    func make(_ template: String) -> String? {
        path.withLock { path in
            var bytes = Array(template.utf8CString)
            path = bytes.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress.flatMap(mkdtemp).map { String(cString: $0) }
            }
            return path
        }
    }

    func remove() {
        path.withLock { path in
            guard let made = path else { return }
            // Again if a file appeared in it meanwhile; once the directory is gone none can.
            for _ in 0..<10 where FileManager.default.fileExists(atPath: made) {
                try? FileManager.default.removeItem(atPath: made)
            }
            path = nil
        }
    }
}
