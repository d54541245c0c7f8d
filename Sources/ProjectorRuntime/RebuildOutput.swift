import EventStore
import Foundation

/// The file a rebuild writes, with the `-wal`, `-shm` and `-lock` SQLite and the writer lock
/// keep beside it. A rebuild replaces an earlier rebuild of the same projection and nothing
/// else, so that a mistyped path costs a refusal, never a file; `strata rebuild` refuses the
/// system's files by any name before it comes here (`SystemFiles` in the command line).
public enum RebuildOutput {
    /// The files that go with a build at `path`: itself, its `-wal` and `-shm`, and last the lock.
    public static func companions(of path: String) -> [String] {
        ["", "-wal", "-shm", "-lock"].map { path + $0 }
    }

    /// Makes `path` ready for a fresh build of `name` and returns its writer lock, held. The lock
    /// comes first, so nothing is removed while another process writes the file; then a file that
    /// is there must be an earlier rebuild of `name` (or empty), and each file beside it a regular
    /// file. The earlier build is then removed, file by file, and the file made again, empty, with
    /// mode 0600: a rebuild holds personal data in clear that no later erasure reaches.
    static func claim(_ path: String, name: String) throws(ProjectorError) -> WriterLock {
        for companion in companions(of: path) {
            var info = stat()
            guard lstat(companion, &info) == 0 else { continue }
            let kind = info.st_mode & S_IFMT
            guard kind != S_IFDIR else {
                throw ProjectorError(.foreign, "\(companion) is a directory, not a file to rebuild into")
            }
            // A link is refused, not followed: opening the lock would truncate whatever it leads to.
            guard kind == S_IFREG else {
                throw ProjectorError(
                    .foreign, "\(companion) is not a regular file; a rebuild replaces only an earlier rebuild")
            }
        }
        let lockPath = path + "-lock"
        let lockExisted = access(lockPath, F_OK) == 0
        let lock: WriterLock
        do {
            lock = try WriterLock.acquire(for: path, holder: "strata rebuild \(name)?")
        } catch {
            throw ProjectorError(error.kind == .locked ? .locked : .io, error.message)
        }
        do throws(ProjectorError) {
            try requireEarlierBuild(path, name: name)
            for file in companions(of: path).dropLast() {  // all but the lock, which is held
                guard unlink(file) == 0 || errno == ENOENT else {
                    throw ProjectorError(.io, "cannot remove \(file): \(String(cString: strerror(errno)))")
                }
            }
            try create(path)
        } catch {
            // A lock file this refusal made would be all it leaves behind.
            if !lockExisted { unlink(lockPath) }
            lock.release()
            throw error
        }
        return lock
    }

    /// Removes a build: the file and what SQLite and the lock kept beside it, each on its own
    /// (a directory in their place is left, never emptied).
    public static func remove(_ path: String) {
        for file in companions(of: path) { unlink(file) }
    }

    /// Refuses a file at `path` that is neither empty nor a projection file of `name`.
    private static func requireEarlierBuild(_ path: String, name: String) throws(ProjectorError) {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_size > 0 else { return }
        let refusal = "\(path) is not an earlier rebuild of \(name), and a rebuild replaces nothing else"
        let earlier: ProjectionSnapshot?
        do {
            earlier = try ProjectionSnapshot(path: path)
        } catch {
            throw ProjectorError(.foreign, "\(refusal) (\(error.message))")
        }
        if let earlier, earlier.name != name {
            throw ProjectorError(.foreign, "\(refusal): it holds the projection \(earlier.name)")
        }
    }

    /// Creates `path` empty with mode 0600 exactly, whatever the umask: SQLite gives the `-wal`
    /// and `-shm` it makes the mode of the file.
    private static func create(_ path: String) throws(ProjectorError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ProjectorError(.io, "cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard fchmod(fd, 0o600) == 0 else {
            throw ProjectorError(.io, "cannot set the mode of \(path): \(String(cString: strerror(errno)))")
        }
    }
}
