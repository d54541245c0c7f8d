#if canImport(Glibc)
    import Glibc
#endif

/// write(2) to the end, for everything the command line writes to a descriptor: the standard
/// streams, buffered output and files written whole. Each caller decides what a failure means
/// (a reader gone, a full disk); the loop, retrying EINTR and short writes, is this one.
enum Descriptor {
    /// Writes all of `bytes` to `fd`; returns 0, or the errno of the write that failed.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return 0
    }

    /// Writes all of `bytes` to `fd`; returns 0, or the errno of the write that failed.
    static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Int32 {
        bytes.withUnsafeBytes { writeAll($0, to: fd) }
    }
}
