import CSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A process that `strata up` started: it stops when `up` ends, however `up` ends. Each child
/// runs in a process group of its own (a Ctrl-C reaches only `up`), so without this a `up`
/// killed outright (SIGKILL, a crash) left the three running, holding the store's lock and the
/// ports, and the next `up` could not start.
enum SupervisedChild {
    /// Set by `up` in each child's environment: `up`'s process id.
    static let variable = "STRATA_SUPERVISOR_PID"

    /// With `variable` set: the kernel is to send a SIGTERM when the parent ends, which reaches
    /// `ShutdownSignals` like any other (a graceful stop). A parent that ended before the request
    /// was made sends nothing: then the process was adopted, and it sends itself the SIGTERM.
    ///
    /// SIGTTOU is ignored too. In a process group of its own, the process is in the background as
    /// `up`'s terminal sees it, and a terminal set to stop background writers (`stty tostop`)
    /// stopped it at its first log line: serve never said it was ready, and nothing said why.
    static func followParent(_ environment: [String: String]) {
        guard let value = environment[variable], let parent = pid_t(value) else { return }
        signal(SIGTTOU, SIG_IGN)
        _ = strata_set_parent_death_signal(SIGTERM)
        if getppid() != parent { kill(getpid(), SIGTERM) }
    }

    /// Set by `up` in the environment of a child that reports readiness (serve): the number of
    /// the descriptor to report it on, the write end of a pipe `up` reads.
    static let readyVariable = "STRATA_READY_FD"
    static let readyMessage = "ready\n"

    /// Tells `up` the process is ready (serve: its store open, its endpoints bound), so that it
    /// starts the projectors; nothing when not started by `up`. The descriptor is closed after.
    static func reportReady(_ environment: [String: String]) {
        guard environment[variable] != nil, let value = environment[readyVariable], let descriptor = Int32(value),
            descriptor > 2
        else { return }
        let message = Array(readyMessage.utf8)
        // A pipe `up` no longer reads is EPIPE here (SIGPIPE is ignored): `up` is gone, and the
        // kernel's SIGTERM stops this process.
        _ = message.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }
}
