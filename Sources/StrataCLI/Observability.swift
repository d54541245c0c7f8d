import StrataCore

/// What the long-running processes (`serve`, `project`, `up`) take to be watched: the log
/// level, and where and how often to write their metrics.
struct Observability: Sendable {
    /// nil: no metrics are recorded at all.
    let metricsFile: String?
    let metricsIntervalSeconds: Double
    let logLevel: Logger.Level

    static let logLevelOption = OptionSpec(
        "log-level", value: "LEVEL",
        help: "debug, info, warning or error (env STRATA_LOG_LEVEL; default info). debug logs every command.")
    static let intervalOption = OptionSpec(
        "metrics-interval", value: "SECONDS",
        help: "How often the metrics file is rewritten (default \(MetricsFile.defaultIntervalSeconds); 0.1 to 3600).")

    /// The options of `serve` and `project`.
    static let options: [OptionSpec] = [
        OptionSpec(
            "metrics-file", value: "PATH",
            help: "Write Prometheus text exposition to PATH (replaced whole, every --metrics-interval and at a stop)."),
        intervalOption, logLevelOption,
    ]

    /// `metricsOption` is what --metrics-interval needs beside it: `metrics-file`, or for
    /// `up`, `metrics-dir`.
    static func resolve(
        _ arguments: ParsedArguments, environment: [String: String], metricsOption: String = "metrics-file"
    ) throws(UsageError) -> Observability {
        var interval: Double?
        if let text = arguments.value("metrics-interval") {
            guard let seconds = Double(text), seconds >= 0.1, seconds <= 3600 else {
                throw UsageError("--metrics-interval must be a number of seconds from 0.1 to 3600, got '\(text)'")
            }
            interval = seconds
        }
        let file = arguments.value("metrics-file")
        if interval != nil && arguments.value(metricsOption) == nil {
            throw UsageError("--metrics-interval goes with --\(metricsOption)")
        }
        return Observability(
            metricsFile: file, metricsIntervalSeconds: interval ?? Double(MetricsFile.defaultIntervalSeconds),
            logLevel: try logLevel(arguments, environment: environment))
    }

    /// `--log-level`, else STRATA_LOG_LEVEL, else info.
    static func logLevel(
        _ arguments: ParsedArguments, environment: [String: String]
    ) throws(UsageError) -> Logger.Level {
        if let name = arguments.value("log-level") {
            guard let level = Logger.Level(name: name) else {
                throw UsageError("--log-level must be debug, info, warning or error, got '\(name)'")
            }
            return level
        }
        if let name = environment["STRATA_LOG_LEVEL"], !name.isEmpty {
            guard let level = Logger.Level(name: name) else {
                throw UsageError("STRATA_LOG_LEVEL must be debug, info, warning or error, got '\(name)'")
            }
            return level
        }
        return .info
    }

    func logger(label: String) -> Logger {
        Logger(label: label, minimumLevel: logLevel)
    }

    /// A registry holding the process's start time, labelled `process`, or nil without a
    /// metrics file. The label keeps the series apart when several processes' files sit in
    /// one textfile directory (the collector refuses a series that two files both hold).
    func registry(process: String) -> MetricsRegistry? {
        guard metricsFile != nil else { return nil }
        var metrics = MetricSet()
        let started = metrics.gauge(
            "strata_process_start_time_seconds", help: "When the process started (unix seconds).",
            labels: ["process"])
        metrics.set(started, Double(Timestamp.now().millisecondsSinceEpoch) / 1000, labels: [process])
        return MetricsRegistry(metrics)
    }

    /// Refuses (exit 2) a metrics file that is one of the system's files by any name (`SystemFiles`):
    /// each write renames the new text over it, so `--metrics-file DATA/events.db`, a slip for
    /// `events.prom`, replaced the event store. And one that is not a regular file (a FIFO, a
    /// device). Asked before the process opens or makes anything: refused later, `serve` had
    /// already made a new store, its checkpoint key and its key store.
    func requireUsableMetricsFile(
        _ configuration: Configuration, _ arguments: ParsedArguments, _ environment: [String: String]
    ) throws(CommandFailure) {
        guard let metricsFile else { return }
        try SystemFiles.requireApart(
            metricsFile, writing: [metricsFile], by: "the metrics file", configuration, arguments, environment)
        do {
            try MetricsFile.requireRegularFile(metricsFile)
        } catch {
            throw CommandFailure.environment("--metrics-file: \(error)")
        }
    }

    /// Starts writing `registry` to the metrics file, if there is one.
    func startMetricsFile(
        _ registry: MetricsRegistry?, logger: Logger, beforeWrite: @escaping @Sendable () -> Void = {}
    ) throws -> MetricsFile? {
        guard let metricsFile, let registry else { return nil }
        return try MetricsFile.start(
            path: metricsFile, intervalSeconds: metricsIntervalSeconds, registry: registry, logger: logger,
            beforeWrite: beforeWrite)
    }
}
