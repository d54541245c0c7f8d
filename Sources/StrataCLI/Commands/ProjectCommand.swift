import Foundation
import ProjectorRuntime
import Projections
import StrataCore
import SubjectKeys

/// `strata project readmodels|audit`: a projector process, until SIGINT, SIGTERM or SIGHUP.
enum ProjectCommand {
    static let spec = CommandSpec(
        ["project"], summary: "Run a projector: keep readmodels.db or audit.db equal to the events.",
        arguments: [ArgumentSpec("NAME", help: "readmodels or audit")],
        options: Configuration.options + Configuration.endpointOptions.filter { $0.name != "commands" } + [
            OptionSpec(
                "subscriber-hwm", value: "N",
                help: "Live events that may wait before the bus drops them (default 100000; history refills drops)."),
            OptionSpec(
                "subscriber-buffer", value: "BYTES",
                help: "The subscriber's kernel receive buffer (default: the system's, growing as needed)."),
            OptionSpec("resume", help: "Clear a recorded stop and try the event again (after a fix)."),
            OptionSpec(
                "skip", value: "POSITION",
                help: "Pass over the event the projection stopped at (needs --reason; never a broken chain)."),
            OptionSpec("reason", value: "TEXT", help: "Why the event is skipped; recorded in strata_skipped."),
            OptionSpec(
                "open-through-history",
                help: "On another host than the service: personal data opened by history (a personal-data key)."),
        ] + Observability.options,
        discussion: """
            Subscribes to the events endpoint, catches up through the history endpoint from the file's
            checkpoint, then applies live events in batches, each in one transaction with the checkpoint.
            A gap, a heartbeat ahead of the checkpoint or a quiet bus sends it back to history, so
            whatever the bus drops, the file converges on the store. It signs history requests with
            --key (or STRATA_KEY), else the first key of the key file with the history scope (and a CURVE
            pair, when the key file holds the service's CURVE key: both sockets then connect with it).

            Personal data arrives sealed. Beside the service the read models open it through
            DATA/subject-keys.db (read-only); a key store that cannot be read ends the projector (exit 2,
            nothing recorded in the file). On another host, --open-through-history reads every event that
            carries personal data from history, which opens it for a key with the personal-data scope; the
            bus never carries it in clear. The audit log holds none: `project audit` needs neither.

            When it starts, and whenever the store seems to have gone back, it asks history for the event
            at its checkpoint: a head below the checkpoint (events.db restored from an older backup), or
            another event there (the file of another store), ends it with exit 1 and nothing recorded in
            the file, which must be rebuilt from the store. A file removed while it runs is made again
            from position 0 through history; one moved into its place is taken up and checked so too.

            An event a projection cannot apply stops it: the position, the event and the error are
            logged, recorded in the file and shown by `strata status`, and the process exits 1. Once the
            cause is fixed, --resume tries that event again; --skip POSITION --reason TEXT passes over it
            (recorded, and honoured by `strata rebuild`). Either is done only once the metrics file, the
            projection file and both endpoints have proved usable.

            An event that breaks the hash chain stops it too, but --skip refuses it (exit 1): the store
            is not the history the file applied, and the file would go on along another chain. Run
            `strata verify`, restore events.db from a backup and --resume, or rebuild the file from a
            store that verifies.

            While history does not answer, or answers that the service is stopping or its store or key
            store could not be read, it asks again a second after each try (one that gets no answer waits 5 s),
            reading the bus's heartbeats meanwhile. A refused key is asked again so for 5 s (the service
            rereads its key file once a second); any other refusal, and the key's past that, would come
            again (a key unknown to the service or without the scope, personal data history cannot open),
            so it exits 1 naming it. While history answers and the bus stays quiet (nothing, not even a
            heartbeat, for three catch-ups of 3 s), it connects its subscriber again and warns once: libzmq
            gives up for good on a CURVE handshake refused, as for a key the service admitted a moment later.

            A full disk does not end it: a batch it cannot write leaves nothing in the file, is said once,
            and is read again from history a second later, until there is room.

            --metrics-file PATH writes its position, the head it knows, the lag in events and seconds, in
            the Prometheus text exposition format, replacing the file whole every --metrics-interval
            seconds and once more when it stops.

            SIGINT, SIGTERM or SIGHUP stops it after the batch in hand (exit 0; 1 if that batch held an
            event a projection cannot apply); started with SIGHUP ignored (nohup), it keeps ignoring
            SIGHUP. Exit codes: 0 stopped; 1 stopped at an event, a refused --resume or
            --skip, a file ahead of or not from the store, a refusal from history; 2 usage or environment
            (no usable key, an endpoint no connect could reach, refused before anything is made: no
            transport, a port that is not one of 1 to 65535, an IPv6 address, inproc://; a projection
            file that cannot be opened or written, another projector on the file, no readable key store,
            a metrics file that cannot be written, is not a regular file (a FIFO, a directory, a device)
            or is one of the system's files).
            """)

    static let subcommand = Subcommand(spec: spec, stopsOnSignals: true) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        guard let name = arguments.positionals.first, let target = ProjectionTarget(name: name, configuration: configuration)
        else {
            throw UsageError("say which projector: readmodels or audit")
        }
        let observability = try Observability.resolve(arguments, environment: environment)
        try observability.requireUsableMetricsFile(configuration, arguments, environment)
        try configuration.requireUsableEndpoints(.projector)
        let signing = try configuration.signingKey(for: .history)
        let logger = observability.logger(label: "project-\(name)")
        let act = try operatorAct(arguments, target: target)
        try Directories.create(configuration.dataDirectory, "the data directory", mode: 0o700)

        var settings = Projector.Settings(
            name: target.name, databasePath: target.path, eventsEndpoint: configuration.eventsEndpoint,
            historyEndpoint: configuration.historyEndpoint, key: signing.key)
        settings.curve = signing.curve
        settings.operatorAct = act
        // The audit log reads no personal value: its projector opens nothing, and needs neither.
        if let opener = target.opener {
            if arguments.flag("open-through-history") {
                guard signing.key.scopes.contains(.personalData) else {
                    throw CommandFailure.environment(
                        "--open-through-history needs a key with the personal-data scope; \(signing.key.id) has "
                            + signing.key.scopes.sorted().map(\.rawValue).joined(separator: ", "))
                }
                settings.openThroughHistory = true
            } else {
                try checkKeyStore(opener.keyStorePath, logger: logger)
                settings.opener = opener
            }
        }
        if let hwm = try arguments.integer("subscriber-hwm", in: 1...10_000_000) { settings.receiveHighWaterMark = Int32(hwm) }
        if let bytes = try arguments.integer("subscriber-buffer", in: 4096...1_073_741_824) {
            settings.receiveBufferBytes = Int32(bytes)
        }
        let registry = observability.registry(process: metricsProcess(target.name))
        let metrics = registry.map { ProjectorMetrics(registry: $0, projection: target.name) }
        settings.metrics = metrics
        // Written once now: a metrics file that cannot be written is refused before the
        // operator's act changes the projection file (the projector does it as it starts).
        let metricsFile = try observability.startMetricsFile(registry, logger: logger) { metrics?.refresh() }
        defer { metricsFile?.stop() }
        // Listening for signals before starting (`PendingStop`).
        let pendingStop = PendingStop<Projector> { $0.stop() }
        let signals = ShutdownSignals { signal in
            logger.info("stopping (signal \(signal)) after the batch in hand")
            pendingStop.request()
        }
        defer { signals.cancel() }
        let projector: Projector
        do throws(ProjectorError) {
            projector = try Projector.start(settings, projections: target.projections, logger: logger)
        } catch {
            throw failure(error)
        }
        metricsFile?.writeNow()  // with the position the projector started at
        pendingStop.started(projector)
        logger.info(
            "ready name=\(target.name) checkpoint=\(projector.startingCheckpoint) events=\(configuration.eventsEndpoint) "
                + "history=\(configuration.historyEndpoint) file=\(target.path) key=\(signing.key.id)"
                + (signing.curve.map { " curve=\($0.client.publicKey.z85)" } ?? ""))
        let exit = projector.wait()
        metricsFile?.stop()
        switch exit {
        case .stopped:
            logger.info("stopped position=\(projector.finalCheckpoint)")
            return 0
        case .poisoned(let stop):
            throw CommandFailure.problem("\(target.name) \(stop); \(stop.wayOut(target.name))")
        case .failed(let error):
            throw failure(ProjectorError(error.kind, "stopped after a failure: \(error.message)"))
        }
    }

    /// How a projector's error ends the process: exit 2 for what is wrong around it (the file,
    /// an endpoint, the key store, another projector on the file), 1 for a problem found in what
    /// it reads or was asked to do (a stop, a store that is not the file's, history's refusal).
    static func failure(_ error: ProjectorError) -> CommandFailure {
        switch error.kind {
        case .locked, .foreign, .io, .full, .endpoint:
            return .environment(error.message)
        case .keyStore:
            return .environment(error.message + "; nothing is recorded in the file. " + keyStoreHint)
        case .stopped, .invalidRequest, .outOfOrder, .ahead, .otherStore, .history, .bus:
            return .problem(error.message)
        }
    }

    /// Beside the service, personal data opens through its key store. One that is there but
    /// cannot be read (another user's file) is refused now; one that is not there yet is only
    /// warned of, as the service makes it when it first starts (`strata up` starts both at
    /// once) and a store with nothing sealed needs none: an event that needs it ends the
    /// projector then.
    private static func checkKeyStore(_ path: String, logger: Logger) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            logger.warning(
                "no key store at \(path) yet: personal data cannot be opened until there is one. \(keyStoreHint)")
            return
        }
        guard access(path, R_OK) == 0 else {
            throw CommandFailure.environment(
                "cannot read the key store \(path): \(String(cString: strerror(errno))). \(keyStoreHint)")
        }
    }

    /// The `process` label of projector NAME's metrics, in its own file and in `up`'s.
    static func metricsProcess(_ name: String) -> String { "project-\(name)" }

    /// What a projector without a key store it can read should do instead.
    static let keyStoreHint =
        "Away from the service's data directory, run with --open-through-history (and a key with the personal-data "
        + "scope)."

    /// --resume and --skip: what the operator asks of a stopped file, checked here and done by
    /// the projector once the file is open and both endpoints are connected.
    private static func operatorAct(
        _ arguments: ParsedArguments, target: ProjectionTarget
    ) throws -> Projector.OperatorAct? {
        let skip = try arguments.integer("skip", in: 1...Int64.max)
        let reason = arguments.value("reason")
        // With --resume too: a reason given is not silently dropped.
        if reason != nil && skip == nil { throw UsageError("--reason goes with --skip") }
        if arguments.flag("resume") && skip != nil { throw UsageError("--resume or --skip, not both") }
        let act: Projector.OperatorAct
        if let skip {
            guard let reason, !reason.isEmpty else { throw UsageError("say why the event is skipped: --reason TEXT") }
            act = .skip(position: skip, reason: reason)
        } else if arguments.flag("resume") {
            act = .resume
        } else {
            return nil
        }
        guard FileManager.default.fileExists(atPath: target.path) else {
            throw CommandFailure.problem("\(target.path) does not exist: nothing to resume")
        }
        return act
    }
}

/// A projector the command line knows: its name, its file, its projections, and what opens
/// their personal data.
struct ProjectionTarget {
    let name: String
    let path: String
    let projections: [any Projection]
    /// nil for the audit log, which names people by id only and reads no personal value
    /// (`AuditLog`): its projector and its rebuild then need no key store.
    let opener: PersonalDataOpener?

    static let names = ["readmodels", "audit"]

    init?(name: String, configuration: Configuration) {
        switch name {
        case "readmodels":
            self.name = name
            path = configuration.readModelsPath
            projections = ReadModels.all
            opener = configuration.personalDataOpener
        case "audit":
            self.name = name
            path = configuration.auditPath
            projections = ReadModels.audit
            opener = nil
        default:
            return nil
        }
    }
}
