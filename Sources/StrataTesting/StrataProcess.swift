import Foundation
import StrataCore
import Synchronization

/// A long-running `strata` child process (`serve`, `project`, `up`) whose standard error is
/// collected, for end-to-end tests that signal, kill and restart it.
public final class StrataProcess: Sendable {
    public let arguments: [String]
    private let process: Process
    private let stderr: OutputBuffer
    private let stdout: OutputBuffer
    /// Where to write the process's standard input, when it was given one of its own.
    private let input: FileHandle?

    /// Starts `strata` (or a copy of it at `executable`) with `arguments`, with none of the
    /// caller's STRATA_* variables; with `takingInput`, on a standard input of its own, which
    /// `write(input:)` feeds while it runs.
    public init(
        _ arguments: [String], environment: [String: String] = [:], executable: URL? = nil, takingInput: Bool = false
    ) throws {
        self.arguments = arguments
        let process = Process()
        process.executableURL = executable ?? ChildProcess.product("strata")
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("STRATA_") }
        env.merge(environment) { _, new in new }
        process.environment = env
        let errorPipe = Pipe()
        process.standardError = errorPipe
        let outputPipe = Pipe()
        process.standardOutput = outputPipe
        let stderr = OutputBuffer()
        let stdout = OutputBuffer()
        for (pipe, buffer) in [(errorPipe, stderr), (outputPipe, stdout)] {
            pipe.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                // Empty at the end of the stream: the handler would go on being called with nothing.
                if data.isEmpty { handle.readabilityHandler = nil }
                buffer.append(data)
            }
        }
        let inputPipe = takingInput ? Pipe() : nil
        if let inputPipe {
            process.standardInput = inputPipe
            ChildProcess.ignoreBrokenPipes()
        }
        try process.run()
        self.process = process
        self.input = inputPipe?.fileHandleForWriting
        self.stderr = stderr
        self.stdout = stdout
    }

    public var processIdentifier: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// What the process logged so far.
    public var log: String { stderr.text }

    /// What the process printed on standard output so far.
    public var output: String { stdout.text }

    /// The first log line containing `text`, waiting up to `timeout` for it; throws when the
    /// process ends or the time runs out first.
    @discardableResult
    public func waitForLine(containing text: String, timeout: TimeInterval = 60) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let line = log.split(separator: "\n").first(where: { $0.contains(text) }) { return String(line) }
            guard process.isRunning, Date() < deadline else {
                throw ServiceProcessError(
                    "strata \(arguments.prefix(2).joined(separator: " ")) never logged \"\(text)\":\n\(log)")
            }
            usleep(20_000)
        }
    }

    public func send(signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Writes `text` to the process's standard input (one it was started `takingInput`), and
    /// with `closing`, ends it.
    public func write(input text: String, closing: Bool = false) throws {
        guard let input else {
            throw ServiceProcessError("strata \(arguments.prefix(2).joined(separator: " ")) was started without input")
        }
        try input.write(contentsOf: Data(text.utf8))
        if closing { try input.close() }
    }

    /// Waits for the process to end; its exit code, or nil if it still runs after `timeout`
    /// (a process killed by a signal reports the signal's number). Once it returns a code, `log`
    /// and `output` hold all the process wrote (unless a child it left holds the pipes open
    /// for seconds more): a process that ends at once may end before a line of its log was read.
    public func waitForExit(timeout: TimeInterval = 30) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            guard Date() < deadline else { return nil }
            usleep(10_000)
        }
        let read = Date().addingTimeInterval(5)
        while !(stderr.isComplete && stdout.isComplete), Date() < read { usleep(10_000) }
        return process.terminationStatus
    }

    /// Stops the process with SIGTERM and returns its exit code.
    @discardableResult
    public func stop() -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        send(signal: SIGTERM)
        return waitForExit()
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}

/// What a child wrote, collected from libdispatch's reading thread.
final class OutputBuffer: Sendable {
    private let state = Mutex<(bytes: [UInt8], complete: Bool)>(([], false))

    /// Adds what was read; nothing at all means the end of the stream.
    func append(_ data: Data) {
        state.withLock { state in
            if data.isEmpty { state.complete = true } else { state.bytes.append(contentsOf: data) }
        }
    }

    var text: String { String(decoding: state.withLock { $0.bytes }, as: UTF8.self) }

    /// Whether the end of the stream was read.
    var isComplete: Bool { state.withLock { $0.complete } }
}

/// A loopback TCP port nothing listens on right now, for processes that must be told their
/// ports in advance (`strata up` hands the same endpoints to all three children), and never one
/// this process was handed before: the kernel may give a port it just gave back to the next
/// `bind`, and a test asking for three ports then told two endpoints to share one.
public func freeLoopbackPort() throws -> Int {
    for _ in 0..<100 {
        let port = try unboundLoopbackPort()
        if handedOutPorts.withLock({ $0.insert(port).inserted }) { return port }
    }
    throw ServiceProcessError("no loopback port this process was not handed before, in 100 tries")
}

private let handedOutPorts = Mutex<Set<Int>>([])

private func unboundLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ServiceProcessError("socket: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw ServiceProcessError("bind: \(String(cString: strerror(errno)))") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}
