import Foundation

/// The one-writer rule across processes: an exclusive `flock` on `<file>-lock`, for the
/// event store and for each projection file alike.
///
/// The kernel drops the lock when the holder exits, SIGKILL included, so a crashed
/// writer never leaves a file locked. Readers never take it.
public struct WriterLock: Sendable {
    public let path: String
    private let fd: Int32
    /// The lock file this lock is held on, which `isInPlace` compares the path with.
    private let identity: FileIdentity?
    /// What `acquire` was given, for taking the lock again (`retaken()`).
    private let storePath: String
    private let hint: String

    /// Takes the lock of `storePath`, or refuses naming the process that holds it;
    /// `holder` says which program usually does.
    public static func acquire(for storePath: String, holder hint: String = "strata serve?") throws(StoreError) -> WriterLock {
        try acquire(for: storePath, hint: hint) { holder in
            "another process\(holder.map { " (pid \($0))" } ?? "") is writing to \(storePath); "
                + "stop it (\(hint)) before writing"
        }
    }

    /// Takes the lock, or refuses as `.locked` with what `refusal` says of the holder's pid.
    private static func acquire(
        for storePath: String, hint: String, whenHeld refusal: (Int32?) -> String
    ) throws(StoreError) -> WriterLock {
        let path = storePath + "-lock"
        // Never through a symbolic link: the holder's pid is written over what the lock file
        // holds, so a link planted in a shared data directory would truncate its target.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            throw StoreError(.io, "cannot open the writer lock \(path): \(String(cString: strerror(errno)))")
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let reason = errno
            let holder = readHolder(fd)
            close(fd)
            if reason == EWOULDBLOCK { throw StoreError(.locked, refusal(holder)) }
            throw StoreError(.io, "cannot lock \(path): \(String(cString: strerror(reason)))")
        }
        // Record the holder for the next one's error message.
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return WriterLock(path: path, fd: fd, identity: FileIdentity(descriptor: fd), storePath: storePath, hint: hint)
    }

    /// Whether `path` still names the file this lock is held on (false when that cannot be
    /// told). A lock file removed while held (taken for a stale one, say) or replaced guards
    /// nothing: the next writer creates the file afresh and takes its lock, beside this one.
    public var isInPlace: Bool {
        identity != nil && FileIdentity(path: path) == identity
    }

    /// The lock taken again, on whatever file is at `path` now (created if there is none),
    /// this one let go; or, when another process holds that one, `.locked` naming it, with
    /// this one kept.
    public func retaken() throws(StoreError) -> WriterLock {
        let fresh = try WriterLock.acquire(for: storePath, hint: hint) { holder in
            "\(path) was removed or replaced while this process held it, and another process"
                + "\(holder.map { " (pid \($0))" } ?? "") holds the lock there now"
        }
        release()
        return fresh
    }

    public func release() {
        flock(fd, LOCK_UN)
        close(fd)
    }

    private static func readHolder(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
