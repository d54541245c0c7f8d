#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// The process's standard streams, as the command line writes them.
///
/// Foundation's `FileHandle.write` traps on any error (a full disk, a closed descriptor, a reader
/// that went away), which ended a command with a crash after it had done its work. Here every
/// write is write(2): a reader that went away (EPIPE) drops the rest of what was meant for it, as
/// `strata replay | head` expects, and any other failure is kept, so that the command ends with
/// exit 2 naming it.
enum StandardStreams {
    private static let failure = Mutex<String?>(nil)
    private static let closed = Mutex<Set<Int32>>([])

    /// Run once, before anything else. Opens /dev/null on each of descriptors 0, 1 and 2 that the
    /// caller closed (`strata … >&-`): otherwise the next file the command opens takes that number
    /// and what was meant for the terminal is written into it (the store's lock file, say). And
    /// makes a reader that went away an EPIPE from write(2) rather than a SIGPIPE that ends the
    /// process halfway through its work.
    static func prepare() {
        signal(SIGPIPE, SIG_IGN)
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            closed.withLock { _ = $0.insert(descriptor) }
            // `open` takes the lowest free number: this one, once those below it are open.
            let opened = open("/dev/null", O_RDWR)
            if opened > descriptor {
                dup2(opened, descriptor)
                close(opened)
            }
        }
    }

    /// Whether the caller had closed `descriptor` (it reads as /dev/null now): standard input
    /// that was closed is an error to a command that reads it, not an empty input.
    static func wasClosed(_ descriptor: Int32) -> Bool {
        closed.withLock { $0.contains(descriptor) }
    }

    /// Writes all of `bytes` to `descriptor` (1 or 2).
    static func write(_ bytes: [UInt8], to descriptor: Int32) {
        let error = Descriptor.writeAll(bytes, to: descriptor)
        guard error != 0, error != EPIPE else { return }
        let stream = descriptor == STDERR_FILENO ? "standard error" : "standard output"
        let reason = "cannot write \(stream): \(String(cString: strerror(error)))"
        failure.withLock { if $0 == nil { $0 = reason } }
    }

    /// The first write that failed other than to a reader that went away, once; nil if none.
    static func takeFailure() -> String? {
        failure.withLock { failure in
            defer { failure = nil }
            return failure
        }
    }
}
