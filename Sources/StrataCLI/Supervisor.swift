import Foundation
import StrataCore
import Synchronization

/// Runs child processes and keeps them running: what `strata up` is made of.
///
/// One thread (the caller's) spawns the children with `posix_spawn`, each in its own
/// process group with default signal handling, so a Ctrl-C at the terminal reaches only
/// this process, which then asks each child to stop exactly once. It reaps them with
/// `waitpid` and restarts a crashed one after a growing delay. The children stop when this
/// process ends, however it ends (`SupervisedChild`), so the caller's thread must be the one
/// that lives as long as the process: the kernel's signal follows the thread that spawned.
final class Supervisor: Sendable {
    struct Child: Sendable {
        let name: String
        let arguments: [String]
        /// When it stops on its own with a problem, everything stops.
        let isEssential: Bool
    }

    static let stopGraceSeconds = 20.0
    static let maximumBackoffSeconds = 30.0
    /// A child up this long is healthy again: its next crash restarts it after 1 s.
    static let healthySeconds = 60.0

    private let executable: String
    private let logger: Logger
    private let children: [Child]
    private let stopRequested = Atomic<Bool>(false)
    private let killRequested = Atomic<Bool>(false)

    init(executable: String, logger: Logger, children: [Child]) {
        self.executable = executable
        self.logger = logger
        self.children = children
    }

    /// Asks each child to stop (SIGTERM), waiting `stopGraceSeconds` before killing it.
    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
    }

    /// Kills every child now (SIGKILL) and ends with exit code 130 once they are reaped: a
    /// second Ctrl-C. Before, that ended this process at once, often before the first had
    /// reached the children, and they ran on without it.
    func requestKill() {
        killRequested.store(true, ordering: .releasing)
        requestStop()
    }

    private var isStopping: Bool { stopRequested.load(ordering: .acquiring) }

    private struct Running {
        var pid: pid_t?
        var startedAt = ContinuousClock.now
        var restartAt: ContinuousClock.Instant?
        var backoff = 1.0
        var gaveUp = false
    }

    /// Runs until asked to stop or until an essential child stops on its own; returns the
    /// exit code for `strata up`: 0 when every child stopped when asked, 1 when one stopped
    /// with a problem or had to be killed, 130 after `requestKill`.
    func run() -> Int32 {
        var states = children.map { _ in Running() }
        for index in children.indices { start(index, &states) }
        var exitCode: Int32 = 0
        var stopSentAt: ContinuousClock.Instant?
        var killed = false

        while true {
            if isStopping, stopSentAt == nil {
                stopSentAt = .now
                for state in states { if let pid = state.pid { kill(pid, SIGTERM) } }
            }
            if !killed, killRequested.load(ordering: .acquiring) {
                killed = true
                exitCode = 130
                killRunning(states) { "killing \($0) (pid \($1))" }
            }
            if let sent = stopSentAt, ContinuousClock.now - sent > .seconds(Self.stopGraceSeconds) {
                if killRunning(states, { "\($0) (pid \($1)) did not stop in time: killing it" }), exitCode == 0 {
                    exitCode = 1
                }
                stopSentAt = .now
            }
            if isStopping && states.allSatisfy({ $0.pid == nil }) { return exitCode }

            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            if pid > 0, let index = states.firstIndex(where: { $0.pid == pid }) {
                states[index].pid = nil
                let child = children[index]
                let how = Self.describe(status)
                if isStopping {
                    logger.info("\(child.name) stopped (\(how))")
                    if status != 0, exitCode == 0 { exitCode = 1 }
                    continue
                }
                if Self.isDeliberate(status) {
                    states[index].gaveUp = true
                    // Exit code 0 without being asked: stopped by someone, on purpose.
                    let problem = status != 0
                    if child.isEssential {
                        logger.log(
                            problem ? .error : .info, "\(child.name) stopped on its own (\(how)): stopping everything")
                        if problem { exitCode = 1 }
                        requestStop()
                    } else if problem {
                        logger.error(
                            "\(child.name) stopped on its own (\(how)) and stays down; its log says why, "
                                + "`strata status` shows a stopped projection")
                    } else {
                        logger.info("\(child.name) stopped on its own (\(how)) and stays down")
                    }
                    continue
                }
                let uptime = ContinuousClock.now - states[index].startedAt
                if uptime > .seconds(Self.healthySeconds) { states[index].backoff = 1 }
                logger.warning("\(child.name) crashed (\(how)): restarting in \(Int(states[index].backoff)) s")
                scheduleRestart(index, &states)
                continue
            }
            if !isStopping {
                for index in states.indices {
                    guard let at = states[index].restartAt, ContinuousClock.now >= at else { continue }
                    states[index].restartAt = nil
                    start(index, &states)
                }
            }
            usleep(50_000)
        }
    }

    /// Starts a child; one that cannot be started at all (the executable gone, no memory for a
    /// process) is tried again after the same growing delay as a crash.
    private func start(_ index: Int, _ states: inout [Running]) {
        states[index].startedAt = .now
        states[index].pid = spawn(children[index])
        if states[index].pid == nil {
            logger.warning("trying to start \(children[index].name) again in \(Int(states[index].backoff)) s")
            scheduleRestart(index, &states)
        }
    }

    /// SIGKILLs every child still running, logging `message(name, pid)` for each; whether
    /// there was one.
    @discardableResult
    private func killRunning(_ states: [Running], _ message: (String, pid_t) -> String) -> Bool {
        var any = false
        for (index, state) in states.enumerated() {
            guard let pid = state.pid else { continue }
            logger.warning(message(children[index].name, pid))
            kill(pid, SIGKILL)
            any = true
        }
        return any
    }

    private func scheduleRestart(_ index: Int, _ states: inout [Running]) {
        states[index].restartAt = .now + .seconds(states[index].backoff)
        states[index].backoff = min(states[index].backoff * 2, Self.maximumBackoffSeconds)
    }

    /// Exit code 0, 1 or 2: the child stopped on purpose, or reported a problem a restart
    /// would not fix. Anything else (another code, a signal) is a crash.
    private static func isDeliberate(_ status: Int32) -> Bool {
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        return exited && code <= 2
    }

    private static func describe(_ status: Int32) -> String {
        if (status & 0x7f) == 0 { return "exit code \((status >> 8) & 0xff)" }
        return "signal \(status & 0x7f)"
    }

    /// Starts one child; nil (logged) when it cannot be started at all.
    private func spawn(_ child: Child) -> pid_t? {
        let argv = [executable] + child.arguments
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group (Ctrl-C reaches only `up`), default handling of the stopping
        // signals, and those signals blocked, as the child's own start blocks them: one sent
        // before the child listens waits for it (`ShutdownSignals`).
        var signals = ShutdownSignals.set
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var cArguments = argv.map { strdup($0) }
        cArguments.append(nil)
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        var environment = ProcessInfo.processInfo.environment.filter { $0.key != SupervisedChild.variable }
            .map { strdup("\($0.key)=\($0.value)") }
        environment.append(strdup("\(SupervisedChild.variable)=\(getpid())"))
        environment.append(nil)
        defer { for pointer in environment { free(pointer) } }
        let rc = posix_spawn(&pid, executable, nil, &attributes, cArguments, environment)
        guard rc == 0 else {
            logger.error("cannot start \(child.name): \(String(cString: strerror(rc)))")
            return nil
        }
        logger.info("started \(child.name) (pid \(pid)): strata \(child.arguments.joined(separator: " "))")
        return pid
    }
}
