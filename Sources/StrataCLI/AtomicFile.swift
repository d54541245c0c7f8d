import Foundation
import StrataCore

#if canImport(Glibc)
    import Glibc
#endif

/// Files the command line writes whole (key files, public keys, reports): a temporary file
/// beside the target, written, given its mode, synced, then moved into place, so a reader
/// sees the old file or the new one, never a part. The directory is synced after the move:
/// a rename lives in the directory, and until the directory reaches the disk a power cut can
/// undo it, leaving the old file (a key file without the key just printed) or none at all.
/// A path that is a symbolic link is written where the link leads, and the link stays. A path
/// that is neither a file nor a directory (a FIFO, `/dev/stdout`, a terminal) is written
/// into, as a shell's `>` would: a rename would put a plain file in its place, a device node
/// replaced for every other user of the machine.
enum AtomicFile {
    /// Writes `contents` to `path` with exactly `mode` (the umask neither widens nor narrows
    /// it); with `creatingDirectory`, the directory too if it is missing (a data directory).
    /// With `replacing` false the file is linked into place only if nothing has that name
    /// yet, and an existing file is a problem (exit 1). Without `synchronizing` the file is
    /// synced before the rename, nor its directory after: still never seen half-written, only
    /// perhaps lost in a power cut (for a file rewritten every few seconds, like the metrics).
    static func write(
        _ path: String, contents: [UInt8], mode: mode_t, replacing: Bool = true, creatingDirectory: Bool = false,
        synchronizing: Bool = true
    ) throws {
        let path = try following(path)
        let created = creatingDirectory ? try createDirectory(of: path, mode: mode) : []
        try put(
            path, contents: contents, mode: mode, replacing: replacing, synchronizing: synchronizing, created: created)
    }

    /// Rewrites `path` with what `contents` returns, calling it while this process holds an
    /// exclusive `flock` on `PATH.lock` (made with mode 0600 and left in place): `contents`
    /// reads the file and decides the new one. Without the lock, two processes adding to one
    /// file both start from the same contents, and the later rename drops the other's addition.
    static func update(
        _ path: String, mode: mode_t, creatingDirectory: Bool = false, contents: () throws -> [UInt8]
    ) throws {
        let path = try following(path)
        let created = creatingDirectory ? try createDirectory(of: path, mode: mode) : []
        let lockPath = path + ".lock"
        let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else {
            throw CommandFailure.environment("cannot open \(lockPath): \(String(cString: strerror(errno)))")
        }
        // Closing the descriptor releases the lock, however this returns.
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw CommandFailure.environment("cannot lock \(lockPath): \(String(cString: strerror(errno)))")
            }
        }
        try put(path, contents: try contents(), mode: mode, replacing: true, synchronizing: true, created: created)
    }

    /// `path`, or where it leads when it is a symbolic link, followed link by link (to a file
    /// not made yet too): a rename over the link would replace it by a plain file, and what it
    /// points at (a mounted secret, say) would silently go stale.
    private static func following(_ path: String) throws -> String {
        var current = path
        // As many links as the kernel follows in one path (SYMLOOP_MAX on Linux).
        for _ in 0..<40 {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: current) else {
                return current
            }
            // A relative target is relative to the link's own directory.
            let directory = PathName.directory(of: current)
            current = target.hasPrefix("/") || directory.isEmpty ? target : directory + "/" + target
        }
        throw CommandFailure.environment("cannot write \(path): too many levels of symbolic links")
    }

    /// Creates the directory that holds `path`, and any missing above it; returns those it
    /// created, deepest first, whose entries `put` syncs after the rename. For a file only its
    /// owner may read (`mode` lets no group or others in), they too are its owner's only (0700):
    /// a data directory made for the key file is where the stores and read models will live.
    private static func createDirectory(of path: String, mode: mode_t) throws -> [String] {
        let directory = PathName.directory(of: path)
        guard !directory.isEmpty else { return [] }
        return try Directories.create(directory, "the directory", mode: mode & 0o077 == 0 ? 0o700 : 0o777).reversed()
    }

    /// The write itself, once the directories are there: `created` are those made for it.
    private static func put(
        _ path: String, contents: [UInt8], mode: mode_t, replacing: Bool, synchronizing: Bool, created: [String]
    ) throws {
        var existing = stat()
        if replacing, stat(path, &existing) == 0, existing.st_mode & S_IFMT != S_IFREG {
            return try writeInto(path, contents: contents, isDirectory: existing.st_mode & S_IFMT == S_IFDIR)
        }
        let directory = PathName.directory(of: path)
        let temporary = path + ".tmp-\(getpid())"
        // Only this process writes that name; one left by a killed process with the same id
        // (pid 1 in a container, every time) would otherwise block every later write, in either
        // mode: the temporary file is made afresh before the rename or the link.
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        // The target is named, not the temporary file: it is the name the user gave.
        guard fd >= 0 else {
            throw CommandFailure.environment("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        var failure = Descriptor.writeAll(contents, to: fd)
        if failure == 0, fchmod(fd, mode) != 0 { failure = errno }
        if failure == 0, synchronizing, fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == 0 {
            if replacing {
                if rename(temporary, path) != 0 { failure = errno }
            } else {
                let linked = link(temporary, path)
                let linkError = errno
                unlink(temporary)
                guard linked == 0 else {
                    if linkError == EEXIST {
                        throw CommandFailure.problem("\(path) exists already; it is left as it is")
                    }
                    throw CommandFailure.environment("cannot write \(path): \(String(cString: strerror(linkError)))")
                }
            }
        }
        guard failure == 0 else {
            unlink(temporary)
            throw CommandFailure.environment("cannot write \(path): \(String(cString: strerror(failure)))")
        }
        guard synchronizing else { return }
        // Deepest first: the file's own directory, then each created one's parent.
        for parent in [directory] + created.map(PathName.directory(of:)) {
            try synchronize(directory: parent, holding: path)
        }
    }

    /// Writes `contents` into what `path` already is (a FIFO, a device), in place.
    private static func writeInto(_ path: String, contents: [UInt8], isDirectory: Bool) throws {
        guard !isDirectory else {
            throw CommandFailure.environment("cannot write \(path): \(String(cString: strerror(EISDIR)))")
        }
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CommandFailure.environment("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let failure = Descriptor.writeAll(contents, to: fd)
        guard failure == 0 else {
            throw CommandFailure.environment("cannot write \(path): \(String(cString: strerror(failure)))")
        }
    }

    /// Syncs a directory's entries (`fsync` on the directory itself, as POSIX asks for a
    /// rename or a link to be durable).
    static func synchronize(directory: String, holding path: String) throws {
        let failure = sync(directory.isEmpty ? "." : directory, directory: true)
        guard failure == 0 else {
            throw CommandFailure.environment(
                "wrote \(path) but cannot sync its directory \(directory): \(String(cString: strerror(failure)))")
        }
    }

    /// `fsync` of the file (or the directory) at `path`: 0, or the `errno` of what failed.
    static func sync(_ path: String, directory: Bool = false) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0))
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        return fsync(fd) == 0 ? 0 : errno
    }
}
