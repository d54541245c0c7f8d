import Foundation
import StrataCore

/// This same `strata` executable run as a child of a benchmark, so that what is measured
/// is the real command as an operator runs it, in a process of its own: its start, its
/// memory, its output to a real file descriptor. Standard input and output are /dev/null;
/// standard error goes to a file, read back for the "ready" line or to explain a failure.
struct BenchChildProcess {
    let pid: pid_t
    let arguments: [String]
    let standardError: String

    /// What `wait` found: the exit status (as `waitpid` gives it) and the peak resident
    /// memory of the child (`ru_maxrss`, KiB).
    struct Exit {
        let status: Int32
        let peakKiB: Int

        var exitCode: Int32? { status & 0x7f == 0 ? (status >> 8) & 0xff : nil }
    }

    /// This executable, which the benchmarks run as a child.
    static var strata: String { URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path }

    /// Starts `EXECUTABLE ARGUMENTS` (this `strata` unless told otherwise), standard output
    /// into the file `standardOutput` (or /dev/null), standard error into the file
    /// `standardError`, both truncated.
    static func start(
        _ arguments: [String], executable: String = strata, standardOutput: String = "/dev/null",
        standardError: String
    ) throws -> BenchChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // The stopping signals unblocked, as a shell starts a command: this process blocks them
        // for its scratch directory to take them, and a child keeps the mask it is started with,
        // so a Ctrl-C stopped neither a replay nor the peer.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var cArguments = ([executable] + arguments).map { strdup($0) }
        cArguments.append(nil)
        defer { for pointer in cArguments { free(pointer) } }
        // A `strata serve` follows this process as it follows `strata up` (`SupervisedChild`):
        // it stops when the benchmark ends, however it ends, rather than run on, orphaned,
        // serving a store whose directory is gone.
        var environment = ProcessInfo.processInfo.environment.filter { $0.key != SupervisedChild.variable }
            .map { strdup("\($0.key)=\($0.value)") }
        environment.append(strdup("\(SupervisedChild.variable)=\(getpid())"))
        environment.append(nil)
        defer { for pointer in environment { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, cArguments, environment)
        guard rc == 0 else {
            let reason = String(cString: strerror(rc))
            throw CommandFailure.environment("cannot start \(executable) \(arguments.joined(separator: " ")): \(reason)")
        }
        running.withLock { _ = $0.insert(pid) }
        return BenchChildProcess(pid: pid, arguments: arguments, standardError: standardError)
    }

    /// The children started and not yet waited for.
    private static let running = Locked<Set<pid_t>>([])

    /// Stops every child still running (SIGTERM, then SIGKILL after 10 s) and waits for it:
    /// at a signal, before the scratch directory they write into goes. Else a `strata serve`
    /// still starting made its data directory again once the scratch directory was removed.
    static func stopAll() {
        let pids = running.withLock { $0 }
        for pid in pids { kill(pid, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(10)
        for pid in pids {
            var status: Int32 = 0
            // 0 while it runs; -1 once the thread waiting for it in `wait()` has reaped it.
            while waitpid(pid, &status, WNOHANG) == 0 {
                if ContinuousClock.now > deadline { kill(pid, SIGKILL) }
                usleep(10_000)
            }
        }
    }

    /// Runs `strata ARGUMENTS` to its end; fails unless it exits 0. Returns its wall time,
    /// from just before the start to the end of `wait`, and its exit.
    static func run(_ arguments: [String], standardError: String) throws -> (seconds: Double, exit: Exit) {
        let start = ContinuousClock.now
        let child = try BenchChildProcess.start(arguments, standardError: standardError)
        let exit = child.wait()
        let seconds = BenchCommand.seconds(since: start)
        guard exit.exitCode == 0 else { throw CommandFailure.problem(child.failure(exit)) }
        return (seconds, exit)
    }

    /// Waits for the child to end.
    func wait() -> Exit {
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        Self.running.withLock { _ = $0.remove(pid) }
        return Exit(status: status, peakKiB: Int(usage.ru_maxrss))
    }

    func signal(_ signal: Int32) {
        kill(pid, signal)
    }

    /// What the child wrote to standard error so far.
    var log: String {
        (try? String(contentsOfFile: standardError, encoding: .utf8)) ?? ""
    }

    /// Waits until a line of standard error contains `text` and returns that line; fails
    /// when the child ends first or `timeout` passes.
    func waitForLine(containing text: String, timeout: Duration) throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = log.split(separator: "\n").first(where: { $0.contains(text) }) { return String(line) }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                Self.running.withLock { _ = $0.remove(pid) }
                throw CommandFailure.problem(failure(Exit(status: status, peakKiB: 0)))
            }
            usleep(20_000)
        }
        signal(SIGKILL)
        _ = wait()
        throw CommandFailure.problem(
            "strata \(arguments.joined(separator: " ")) did not log '\(text)' within \(timeout)")
    }

    /// A field of /proc/PID/status in KiB (`VmRSS`, `VmHWM`): the kernel's own count of the
    /// child's resident memory, now and at its peak.
    func memoryKiB(_ field: String) throws -> Int {
        let path = "/proc/\(pid)/status"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let kib = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) })
        else {
            throw CommandFailure.environment("cannot read \(field) from \(path)")
        }
        return kib
    }

    func failure(_ exit: Exit) -> String {
        let how = exit.exitCode.map { "exited \($0)" } ?? "ended by signal \(exit.status & 0x7f)"
        return "strata \(arguments.joined(separator: " ")) \(how): \(log.suffix(2000))"
    }
}
