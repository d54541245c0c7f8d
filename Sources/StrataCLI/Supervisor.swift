import Foundation
import StrataCore
import Synchronization

/// Runs child processes and keeps them running: what `strata up` is made of.
///
/// One thread (the caller's) spawns the children with `posix_spawn`, each in its own
/// process group with default signal handling, so a Ctrl-C at the terminal reaches only
/// this process, which then asks each child to stop exactly once. It reaps them with
/// `waitpid` and restarts a crashed one after a growing delay. Those that wait for another to be
/// ready (`Child.reportsReady`) start only once it says so, on a pipe. The children stop when this
/// process ends, however it ends (`SupervisedChild`), so the caller's thread must be the one
/// that lives as long as the process: the kernel's signal follows the thread that spawned.
final class Supervisor: Sendable {
    struct Child: Sendable {
        let name: String
        /// The `process` label of its metrics: in its own file, and in `up`'s (`SupervisorMetrics`).
        let process: String
        let arguments: [String]
        /// When it stops on its own with a problem, everything stops.
        let isEssential: Bool
        /// It says when it is ready (`SupervisedChild.reportReady`), and the others start only
        /// while it is: a projector started beside a service that has not bound its ports yet,
        /// or never will, reaches whatever holds them, another system's service included, and
        /// takes that history for its own.
        var reportsReady = false
        /// What an exit code it stops with on its own means, for the log line saying so.
        var exitMeanings: [Int32: String] = [:]
    }

    static let stopGraceSeconds = 20.0
    static let maximumBackoffSeconds = 30.0
    /// A child up this long is healthy again: its next crash restarts it after 1 s.
    static let healthySeconds = 60.0
    /// A child that reports readiness and has not done so within this is taken to be stuck:
    /// everything stops. Its start is bounded (the store's quick_check reads 2 GiB at most), and a wait
    /// without end would leave the others unstarted with nothing said.
    static let readySeconds = 120.0

    private let executable: String
    private let logger: Logger
    private let children: [Child]
    private let metrics: SupervisorMetrics?
    /// Called once `metrics` changed (a child started, ended, or is to start again): `up` writes
    /// its file then, not at the next interval, which could be an hour away.
    private let metricsChanged: @Sendable () -> Void
    /// Run before each start of a child: puts back what its start needs that may have gone
    /// while the others ran (`up`'s metrics directory).
    private let beforeStart: @Sendable () -> Void
    private let stopRequested = Atomic<Bool>(false)
    private let killRequested = Atomic<Bool>(false)

    init(
        executable: String, logger: Logger, children: [Child], metrics: SupervisorMetrics? = nil,
        metricsChanged: @escaping @Sendable () -> Void = {}, beforeStart: @escaping @Sendable () -> Void = {}
    ) {
        self.executable = executable
        self.logger = logger
        self.children = children
        self.metrics = metrics
        self.metricsChanged = metricsChanged
        self.beforeStart = beforeStart
    }

    /// Asks each child to stop (SIGTERM, then SIGCONT to wake a suspended one), waiting
    /// `stopGraceSeconds` before killing it.
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
        /// When to start it: now at first, later after a crash's delay; nil while it runs.
        var startAt: ContinuousClock.Instant? = .now
        var backoff = 1.0
        /// The read end of the pipe a child that reports readiness writes to, until it has.
        var readyPipe: Int32?
        /// It reported ready since it was last started.
        var isReady = false
    }

    /// Runs until asked to stop or until an essential child stops on its own; returns the
    /// exit code for `strata up`: 0 when every child stopped when asked or on purpose, 1 when
    /// one stopped with a problem (on its own or when asked), had to be killed or was not
    /// ready in time, 130 after `requestKill`.
    func run() -> Int32 {
        var states = children.map { _ in Running() }
        var exitCode: Int32 = 0
        var stopSentAt: ContinuousClock.Instant?
        var killed = false

        while true {
            if isStopping, stopSentAt == nil {
                stopSentAt = .now
                // SIGCONT after it: a child suspended (SIGSTOP) keeps a SIGTERM pending until it
                // runs again, and was killed after the grace instead of stopping gracefully.
                for state in states {
                    if let pid = state.pid {
                        kill(pid, SIGTERM)
                        kill(pid, SIGCONT)
                    }
                }
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
            if isStopping && states.allSatisfy({ $0.pid == nil }) {
                for state in states { if let pipe = state.readyPipe { close(pipe) } }
                return exitCode
            }

            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            if pid > 0, let index = states.firstIndex(where: { $0.pid == pid }) {
                let wasReady = states[index].isReady
                reaped(index, &states)
                let child = children[index]
                let how = "(\(Self.describe(status)))" + (child.reportsReady && !wasReady ? " before it was ready" : "")
                if isStopping {
                    logger.info("\(child.name) stopped \(how)")
                    if status != 0, exitCode == 0 { exitCode = 1 }
                    continue
                }
                if Self.isDeliberate(status) {
                    // Exit code 0 without being asked: stopped by someone, on purpose. Any other
                    // is a problem `up` ends with, even when the child was not essential.
                    let problem = status != 0
                    if problem, exitCode == 0 { exitCode = 1 }
                    let what = child.isEssential ? ", stopping everything" : " and stays down"
                    let meaning = child.exitMeanings[(status >> 8) & 0xff].map { ": \($0); its log says which" } ?? ""
                    logger.log(problem ? .error : .info, "\(child.name) stopped on its own \(how)\(what)\(meaning)")
                    if child.isEssential { requestStop() }
                    continue
                }
                let uptime = ContinuousClock.now - states[index].startedAt
                if uptime > .seconds(Self.healthySeconds) { states[index].backoff = 1 }
                logger.warning("\(child.name) crashed \(how): restarting in \(Int(states[index].backoff)) s")
                scheduleRestart(index, &states)
                continue
            }
            if !isStopping {
                readReadiness(&states)
                if let late = lateToBeReady(states) {
                    logger.error(
                        "\(children[late].name) is not ready after \(Int(Self.readySeconds)) s: stopping everything")
                    if exitCode == 0 { exitCode = 1 }
                    requestStop()
                    continue
                }
                // Those that wait for readiness start (or start again) only while every child
                // that reports it is ready; one running already is left to reconnect.
                let othersMayStart = zip(children, states).allSatisfy { !$0.reportsReady || $1.isReady }
                for index in states.indices where children[index].reportsReady || othersMayStart {
                    guard let at = states[index].startAt, ContinuousClock.now >= at else { continue }
                    states[index].startAt = nil
                    start(index, &states)
                }
            }
            usleep(50_000)
        }
    }

    /// Starts a child; one that cannot be started at all (the executable gone, no memory for a
    /// process) is tried again after the same growing delay as a crash.
    private func start(_ index: Int, _ states: inout [Running]) {
        let child = children[index]
        beforeStart()
        states[index].startedAt = .now
        states[index].isReady = false
        var ready: (read: Int32, write: Int32)?
        if child.reportsReady {
            ready = readinessPipe(child)
            if ready == nil {
                scheduleRestart(index, &states)
                return
            }
        }
        states[index].pid = spawn(child, readyDescriptor: ready?.write)
        // Only the child holds the write end now: the read end sees the end of the file when
        // the child ends, and no child started later inherits it.
        if let ready { close(ready.write) }
        if states[index].pid == nil {
            if let ready { close(ready.read) }
            logger.warning("trying to start \(child.name) again in \(Int(states[index].backoff)) s")
            scheduleRestart(index, &states)
        } else {
            states[index].readyPipe = ready?.read
            metrics?.setRunning(index, true)
            metricsChanged()
        }
    }

    /// A child was reaped: no longer running, nor ready.
    private func reaped(_ index: Int, _ states: inout [Running]) {
        states[index].pid = nil
        states[index].isReady = false
        metrics?.setRunning(index, false)
        metricsChanged()
        if let pipe = states[index].readyPipe { close(pipe) }
        states[index].readyPipe = nil
    }

    /// A pipe whose write end the child inherits, both ends closed on exec otherwise and the
    /// read end not blocking; nil (logged) when there is none to be had.
    private func readinessPipe(_ child: Child) -> (read: Int32, write: Int32)? {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else {
            logger.error("cannot start \(child.name): no pipe for its readiness: \(String(cString: strerror(errno)))")
            return nil
        }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(descriptors[0], F_SETFL, O_NONBLOCK)
        return (descriptors[0], descriptors[1])
    }

    /// Reads what each child that reports readiness wrote: "ready", or the end of the pipe
    /// (it ended first, which `waitpid` reports).
    private func readReadiness(_ states: inout [Running]) {
        for index in states.indices {
            guard let pipe = states[index].readyPipe else { continue }
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = read(pipe, &buffer, buffer.count)
            if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            close(pipe)
            states[index].readyPipe = nil
            if count > 0, buffer[0..<count].starts(with: Array(SupervisedChild.readyMessage.utf8)) {
                states[index].isReady = true
                logger.info("\(children[index].name) is ready")
            }
        }
    }

    /// A child that reports readiness, running and not ready after `readySeconds`.
    private func lateToBeReady(_ states: [Running]) -> Int? {
        states.indices.first { index in
            children[index].reportsReady && states[index].pid != nil && !states[index].isReady
                && ContinuousClock.now - states[index].startedAt > .seconds(Self.readySeconds)
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
        metrics?.restartScheduled(index)
        metricsChanged()
        states[index].startAt = .now + .seconds(states[index].backoff)
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

    /// Starts one child, giving it `readyDescriptor` (and its number in its environment); nil
    /// (logged) when it cannot be started at all.
    private func spawn(_ child: Child, readyDescriptor: Int32?) -> pid_t? {
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
        let own = [SupervisedChild.variable, SupervisedChild.readyVariable]
        var environment = ProcessInfo.processInfo.environment.filter { !own.contains($0.key) }
            .map { strdup("\($0.key)=\($0.value)") }
        environment.append(strdup("\(SupervisedChild.variable)=\(getpid())"))
        if let readyDescriptor {
            // Inherited by this child alone: this thread starts every child, and the caller
            // closes the descriptor once this returns.
            _ = fcntl(readyDescriptor, F_SETFD, 0)
            environment.append(strdup("\(SupervisedChild.readyVariable)=\(readyDescriptor)"))
        }
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
