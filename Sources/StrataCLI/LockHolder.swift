import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Which process holds a writer lock (`WriterLock`: an exclusive `flock` on `<file>-lock`), read
/// from the kernel's table of locks, `/proc/locks`. Nothing is locked to find out, so asking never
/// stands in the way of a writer that is starting.
enum LockHolder {
    /// The pid that holds the lock of the file at `lockPath`; nil when no process on this machine
    /// does, or the table cannot be read.
    static func pid(ofLock lockPath: String) -> Int32? {
        var status = stat()
        guard stat(lockPath, &status) == 0,
            let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8)
        else { return nil }
        return pid(in: table, device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// The holder of an exclusive `flock` on the file (`device`, `inode`) in `table`, whose lines
    /// read `1: FLOCK  ADVISORY  WRITE 4242 fe:00:16228233 0 EOF` (a waiter's have `->` after the
    /// number, and are not holders). The device is written as major:minor in hex, as glibc splits
    /// a `dev_t`.
    static func pid(in table: String, device: UInt64, inode: UInt64) -> Int32? {
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & 0xffff_f000)
        let minor = (device & 0xff) | ((device >> 12) & 0xffff_ff00)
        let file = String(format: "%02llx:%02llx:%llu", major, minor, inode)
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "WRITE", fields[5] == file else { continue }
            return Int32(fields[4])
        }
        return nil
    }
}
