#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Output for a command that may write gigabytes: bytes gather in one large buffer and go to
/// the file descriptor with write(2) once there is a good amount, not a call per line.
/// A reader that goes away (`strata replay | head`) is not an error: `isClosed` turns true
/// and the rest is dropped (SIGPIPE is ignored, by `StandardStreams.prepare`).
final class BufferedOutput {
    let descriptor: Int32
    /// `drainIfFull` writes once the buffer holds this many bytes.
    let threshold: Int
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    private(set) var count = 0
    /// The reader closed its end (EPIPE).
    private(set) var isClosed = false

    init(descriptor: Int32 = STDOUT_FILENO, threshold: Int = 1 << 20) {
        self.descriptor = descriptor
        self.threshold = threshold
        capacity = threshold + threshold / 4
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Room for `byteCount` more bytes at the end of the buffer; `commit` says how many were used.
    func space(_ byteCount: Int) -> UnsafeMutableRawPointer {
        if count + byteCount > capacity {
            // Only an event larger than the slack gets here; the buffer grows to hold it.
            capacity = count + byteCount
            let larger = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
            larger.copyMemory(from: storage, byteCount: count)
            storage.deallocate()
            storage = larger
        }
        return storage + count
    }

    func commit(_ byteCount: Int) {
        count += byteCount
    }

    func append(_ bytes: some Collection<UInt8>) {
        let target = space(bytes.count)
        UnsafeMutableRawBufferPointer(start: target, count: bytes.count).copyBytes(from: bytes)
        count += bytes.count
    }

    func append(_ byte: UInt8) {
        space(1).storeBytes(of: byte, as: UInt8.self)
        count += 1
    }

    /// Writes the buffer out when it holds at least `threshold` bytes.
    func drainIfFull() throws(CommandFailure) {
        if count >= threshold { try drain() }
    }

    /// Writes everything buffered; a closed reader drops it.
    func drain() throws(CommandFailure) {
        defer { count = 0 }
        guard !isClosed else { return }
        let error = Descriptor.writeAll(UnsafeRawBufferPointer(start: storage, count: count), to: descriptor)
        if error == EPIPE {
            isClosed = true
        } else if error != 0 {
            throw CommandFailure.environment("cannot write the output: \(String(cString: strerror(error)))")
        }
    }
}
