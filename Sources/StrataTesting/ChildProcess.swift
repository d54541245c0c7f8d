import Dispatch
import Foundation

/// Runs the package's own executables as real child processes, for tests that
/// exercise Strata the way its users do: exit codes, stdout, stderr, signals.
public enum ChildProcess {
    /// The finished run of a command.
    public struct Result: Sendable {
        public let exitCode: Int32
        public let stdout: String
        public let stderr: String
    }

    /// A built product of this package (`strata`, `StoreCrashWriter`), beside the running test binary.
    public static func product(_ name: String) -> URL {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        // On some layouts the test binary sits inside a bundle directory.
        while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(name).path),
            directory.path != "/"
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent(name)
    }

    /// Makes a write to a child's standard input after the child has gone an EPIPE error, not a
    /// SIGPIPE that ends the whole test run: a child that refuses its arguments at once may exit
    /// before the input meant for it is written, and on a busy machine it sometimes did. For the
    /// whole process, and harmless to repeat.
    public static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Runs `strata` with `arguments` in `directory`, waits for it and returns what it said.
    /// With `deadline` (seconds), one still running then is killed and the run throws: a test
    /// of a command that must end by itself fails where it would hang.
    public static func strata(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:], stdin: String? = nil,
        deadline: TimeInterval? = nil
    ) throws -> Result {
        try run(product("strata"), arguments, in: directory, environment: environment, stdin: stdin, deadline: deadline)
    }

    public static func run(
        _ executable: URL, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
        stdin: String? = nil, deadline: TimeInterval? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        // A clean, predictable environment: nothing of the caller's STRATA_* leaks in.
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("STRATA_") }
        env.merge(environment) { _, new in new }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        // Standard input written and standard error read on threads of their own while this one
        // reads standard output, all before waiting: one after another, a child that filled
        // the stderr pipe (64 KiB) while this thread waited for stdout's end blocked both for
        // good, and so would one that answers before it has read all its input.
        let errors = OutputBuffer()
        let errorsRead = DispatchSemaphore(value: 0)
        let errorHandle = err.fileHandleForReading
        DispatchQueue.global().async {
            errors.append(errorHandle.readDataToEndOfFile())
            errorsRead.signal()
        }
        let inputHandle = input.fileHandleForWriting
        let inputData = stdin.map { Data($0.utf8) }
        if inputData != nil { ignoreBrokenPipes() }
        DispatchQueue.global().async {
            // A child that ended without reading it has its say in its exit code and stderr.
            if let inputData { try? inputHandle.write(contentsOf: inputData) }
            try? inputHandle.close()
        }
        let exited = DispatchSemaphore(value: 0)
        let killed = DispatchSemaphore(value: 0)
        if let deadline {
            let pid = process.processIdentifier
            DispatchQueue.global().async {
                guard exited.wait(timeout: .now() + deadline) == .timedOut, process.isRunning else { return }
                kill(pid, SIGKILL)
                killed.signal()
            }
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        errorsRead.wait()
        process.waitUntilExit()
        exited.signal()
        if killed.wait(timeout: .now()) == .success {
            throw ServiceProcessError(
                "\(executable.lastPathComponent) \(arguments.prefix(2).joined(separator: " ")) still ran after "
                    + "\(deadline ?? 0) s, and was killed; it wrote:\n\(String(decoding: outData, as: UTF8.self))"
                    + errors.text)
        }
        return Result(
            exitCode: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: errors.text)
    }

    /// A fresh empty directory under the system's temporary directory.
    public static func temporaryDirectory(_ label: String = "strata-test") throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
