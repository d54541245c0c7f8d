import StrataCore

/// `strata up`'s own metrics (`DIR/up.prom` with `--metrics-dir`): which of its children run, and
/// how often each had to be started again. The children's own files cannot tell this: a child
/// that is down writes nothing, and one started again counts from zero.
///
/// Each series carries `process` with the value the child's own file gives
/// `strata_process_start_time_seconds` (`serve`, `project-readmodels`, `project-audit`), so the
/// two join. Every series is there from the start, at 0.
struct SupervisorMetrics: Sendable {
    let registry: MetricsRegistry
    private let processes: [String]
    private let running: MetricSet.Gauge
    private let restarts: MetricSet.Counter

    /// `processes`: each child's `process` label, in the order the supervisor numbers them.
    init(registry: MetricsRegistry, processes: [String]) {
        self.registry = registry
        self.processes = processes
        (running, restarts) = registry.update { metrics in
            let running = metrics.gauge(
                "strata_up_child_running", help: "1 while strata up has the child process running, else 0.",
                labels: ["process"])
            let restarts = metrics.counter(
                "strata_up_child_restarts_total",
                help: "Times strata up was to start the child again after it crashed or could not be started.",
                labels: ["process"])
            for process in processes {
                metrics.set(running, 0, labels: [process])
                metrics.add(restarts, 0, labels: [process])
            }
            return (running, restarts)
        }
    }

    /// The child numbered `index` was started (or ended, `isRunning` false).
    func setRunning(_ index: Int, _ isRunning: Bool) {
        registry.update { $0.set(running, isRunning ? 1 : 0, labels: [processes[index]]) }
    }

    /// The child numbered `index` is to be started again after a delay.
    func restartScheduled(_ index: Int) {
        registry.update { $0.add(restarts, labels: [processes[index]]) }
    }
}
