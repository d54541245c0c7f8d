import Foundation
import StrataCore

/// `strata up`: the command service and both projectors on one machine, supervised.
enum UpCommand {
    static let spec = CommandSpec(
        ["up"], summary: "Run serve and both projectors together; restart a crashed one; Ctrl-C stops all.",
        options: Configuration.options + Configuration.endpointOptions + [CheckpointKeyFile.option]
            + ServeCommand.Tuning.options + [
            OptionSpec(
                "metrics-dir", value: "DIR",
                help: "Each process writes its metrics to DIR/serve.prom, DIR/readmodels.prom, DIR/audit.prom; "
                    + "up its own to DIR/up.prom."),
            Observability.intervalOption, Observability.logLevelOption,
            OptionSpec("print-services", help: "Print the processes it would start, one JSON line each, and exit."),
        ],
        discussion: """
            Starts `strata serve` and, once it is ready (its store open, its endpoints bound), `strata
            project readmodels` and `strata project audit`, as child processes with the same settings
            (each in its own process group, logging to this standard error), and watches them. The
            projectors wait so as never to reach whatever else holds serve's ports (another system's
            service, whose history they would take for this store's): a serve that stops before it is
            ready stops everything with no projector started, and one not ready after 120 s is stopped.
            The events and history endpoints must name a host and a port the projectors can connect to
            as given: `*` or port 0, which let serve choose, are refused (exit 2), and so is inproc://,
            which no other process reaches, and any endpoint serve could not bind or the projectors
            could not connect to (`strata serve --help`, `strata project --help`).

            A child that crashes (dies from a signal, or exits other than 0, 1 or 2 on its own), or
            cannot be started, is started again after 1 s, then 2, 4 … up to 30 s while it keeps
            crashing; one that had run 60 s when it crashed is started again after 1 s. A projector is
            started again only while serve is ready (one running reconnects by itself). A child that
            exits 1 or 2 reported a problem a restart would not fix (a projection stopped at an event,
            a locked file, a missing key) and stays down; one that exits 0 without being asked was
            stopped on purpose (a SIGTERM sent to it alone) and stays down too. When either is the
            command service, everything stops.

            SIGINT, SIGTERM or SIGHUP (a closed terminal) sends SIGTERM to each child (and SIGCONT, to
            wake one suspended) and waits for all of them (each stops gracefully); a child still
            running after 20 s is killed. A second signal
            kills every child at once. Exit codes: 0 stopped cleanly (every child stopped when asked, or
            on purpose); 1 a child stopped with a problem (exit 1 or 2 on its own, or other than 0 when
            asked), had to be killed, or serve was not ready in time; 2 usage or environment; 130 a
            second signal. Started with SIGHUP ignored (`nohup strata up &`), it keeps ignoring it, so
            a closed terminal leaves everything running.

            --metrics-dir DIR (created if missing, and again before a child starts if it went
            meanwhile) gives each child its own --metrics-file in DIR, a
            directory node_exporter's textfile collector can read as it is, and up writes DIR/up.prom:
            strata_up_child_running (1 or 0) and strata_up_child_restarts_total of each child, labelled
            process="serve", "project-readmodels" or "project-audit"; --metrics-interval and
            --log-level are passed to every child; --checkpoint-key, --publisher-hwm,
            --checkpoint-interval, --max-store-bytes and --cache-mib to serve, as `strata serve
            --help` describes them (--max-store-bytes caps events.db: past it commands are answered
            INTERNAL). A value serve would refuse is refused here, with serve's message (exit 2),
            before anything starts.

            --print-services starts nothing and reads no key file: it prints each process as one JSON
            line, {"arguments":[…],"essential":true|false,"name":"…"}, the arguments being those after
            `strata`, and exits 0. Deployments that run the processes separately (docker-compose.yml)
            are checked against it.
            """)

    static let subcommand = Subcommand(spec: spec, stopsOnSignals: true) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let observability = try Observability.resolve(arguments, environment: environment, metricsOption: "metrics-dir")
        // Checked here, once: a bad value would stop serve as it starts, and everything with it.
        _ = try ServeCommand.Tuning.resolve(arguments)
        let children = children(arguments)
        if arguments.flag("print-services") {
            for child in children {
                let json: JSONValue = [
                    "name": .string(child.name), "arguments": .array(child.arguments.map { .string($0) }),
                    "essential": .bool(child.isEssential),
                ]
                printLine(CanonicalJSON.string(json))
            }
            return 0
        }
        // Fail here, once, before serve makes anything, rather than in a restart loop.
        try configuration.requireUsableEndpoints(.up)
        // Before the key file, which the same config file may also name elsewhere now.
        try WorkingDirectoryHistory.requireNone(configuration)
        try ServeCommand.requireServiceCopy(configuration.readKeyFile(), configuration.keysFile)
        _ = try configuration.signingKey(for: .history)

        // up's own file beside its children's: which of them run, and how often each was restarted.
        let metricsDirectory = arguments.value("metrics-dir")
        let own = Observability(
            metricsFile: metricsDirectory.map { $0 + "/up.prom" },
            metricsIntervalSeconds: observability.metricsIntervalSeconds, logLevel: observability.logLevel)
        if let metricsDirectory {
            try Directories.create(metricsDirectory, "the metrics directory")
            try own.requireUsableMetricsFile(configuration, arguments, environment)
        }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let logger = observability.logger(label: "up")
        let registry = own.registry(process: "up")
        let metrics = registry.map { SupervisorMetrics(registry: $0, processes: children.map(\.process)) }
        let metricsFile = try own.startMetricsFile(registry, logger: logger)
        defer { metricsFile?.stop() }
        let supervisor = Supervisor(
            executable: executable, logger: logger, children: children, metrics: metrics,
            metricsChanged: { metricsFile?.writeNow() }, beforeStart: { makeAgain(metricsDirectory, logger) })
        let signals = ShutdownSignals(
            onFirst: { signal in
                logger.info("stopping (signal \(signal)): asking every process to stop")
                supervisor.requestStop()
            },
            onSecond: { signal in
                logger.warning("signal \(signal) again: killing every process")
                supervisor.requestKill()
            })
        defer { signals.cancel() }
        return supervisor.run()
    }

    /// Makes the metrics directory again if it went while `up` ran (removed by hand, a tmpfs
    /// cleared): a child writes its file as it starts and ends with exit 2 when it cannot, so a
    /// crash `up` would have restarted from stopped the whole system for good. One that cannot be
    /// made is logged; the child then says why it cannot start.
    static func makeAgain(_ metricsDirectory: String?, _ logger: Logger) {
        guard let metricsDirectory else { return }
        do throws(CommandFailure) {
            if try !Directories.create(metricsDirectory, "the metrics directory").isEmpty {
                logger.warning("the metrics directory \(metricsDirectory) was gone: made it again")
            }
        } catch {
            logger.error(error.message)
        }
    }

    /// The three processes, each with the settings it takes: serve no client key, the
    /// projectors no commands endpoint nor checkpoint key nor any of serve's own settings
    /// (`ServeCommand.Tuning`); with --metrics-dir, each writes its own file there. The projectors
    /// wait for serve to be ready (`Supervisor.Child.reportsReady`).
    static func children(_ arguments: ParsedArguments) -> [Supervisor.Child] {
        func passed(_ options: [String]) -> [String] {
            options.flatMap { option in arguments.value(option).map { ["--\(option)", $0] } ?? [] }
        }
        func metricsFile(_ name: String) -> [String] {
            arguments.value("metrics-dir").map { ["--metrics-file", $0 + "/\(name).prom"] } ?? []
        }
        let shared = ["data", "config", "keys", "events", "history"]
        let watched = passed(["metrics-interval", "log-level"])
        let serveOptions =
            passed(shared + ["commands", "checkpoint-key"] + ServeCommand.Tuning.options.map(\.name)) + watched
            + metricsFile("serve")
        let projectorOptions = passed(shared + ["key"]) + watched
        func projector(_ name: String) -> Supervisor.Child {
            .init(
                name: name, process: ProjectCommand.metricsProcess(name),
                arguments: ["project", name] + projectorOptions + metricsFile(name), isEssential: false,
                exitMeanings: projectorExits)
        }
        return [
            .init(
                name: "serve", process: "serve", arguments: ["serve"] + serveOptions, isEssential: true,
                reportsReady: true, exitMeanings: serveExits),
            projector("readmodels"),
            projector("audit"),
        ]
    }

    /// `strata serve --help`'s exit codes, for the log line of a serve that stopped on its own.
    private static let serveExits: [Int32: String] = [
        1: "a problem with the store (held by another writer, damaged, not matching its last signed checkpoint) "
            + "or a failure of the service",
        2: "its settings or environment (an endpoint it cannot bind, a key file or checkpoint key it cannot use, "
            + "a metrics file it cannot write)",
    ]

    /// `strata project --help`'s exit codes. Only a stop at an event is recorded in the file, for
    /// `strata status` to show; another projector holding the file is exit 2, and nothing is recorded.
    private static let projectorExits: [Int32: String] = [
        1: "an event it cannot apply (`strata status` shows the stop), its file ahead of the store or from "
            + "another one, or history refusing it for good",
        2: "its settings or environment (another projector holding its file, no usable key, a file or metrics "
            + "file it cannot open or write, no key store it can read)",
    ]
}
