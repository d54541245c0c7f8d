import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Files the command line writes whole: a temporary file beside the target, synced, then
/// renamed over it, so a reader sees the old file or the new one, never a part.
enum AtomicFile {
    /// Writes `contents` to `path` with permission bits `mode` (less the umask).
    static func write(_ path: String, contents: [UInt8], mode: mode_t) throws {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw CommandFailure.environment("cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        var offset = 0
        var failure: Int32 = 0
        while offset < contents.count {
            let written = contents.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            offset += written
        }
        if failure == 0, fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        guard failure == 0 else {
            unlink(temporary)
            throw CommandFailure.environment("cannot write \(path): \(String(cString: strerror(failure)))")
        }
    }
}
