import CommandService
import EventStore
import Foundation
import StrataCore

/// `strata serve`: the command service, until SIGINT, SIGTERM or SIGHUP.
enum ServeCommand {
    static let spec = CommandSpec(
        ["serve"], summary: "Run the command service: signed commands in, events out, history.",
        options: Configuration.options + Configuration.endpointOptions.filter { $0.name != "key" }
            + [CheckpointKeyFile.option] + Tuning.options + Observability.options,
        discussion: """
            Holds the writer lock on DATA/events.db (a second serve or admin bootstrap refuses to
            start), binds the commands (ROUTER), events (PUB) and history (ROUTER) endpoints, and logs
            to standard error. A port of * binds any free port; the "ready" line names the ports bound.
            An endpoint no bind could take (no transport, a port beyond 65535, a host that is no IPv4
            address or network interface here, such as localhost, inproc://) is refused before anything
            is made.

            When the key file holds a CURVE server pair ("curveServer", made by `strata keys new … --curve`),
            all three endpoints are CURVE-encrypted and admit only connections presenting a key file
            entry's "curvePublic"; refusals are logged at warning level (at most one line per client key
            every 10 s). Requests are still signed and checked the same way on top.

            It signs checkpoints of the chain, (position, hash) with an Ed25519 key, into the store's
            checkpoints table: every --checkpoint-interval seconds while the head advances, and at a
            graceful stop. On its first start it creates the key pair (DATA/checkpoint.key, mode 0600)
            and DATA/checkpoint.pub, and logs the public key; it makes none for a store whose
            checkpoints are signed already (restored or moved without its key: put that key in place).
            It refuses to start when the chain no longer matches its last signed checkpoint.

            At start it runs PRAGMA quick_check over the store (up to 2 GiB) and refuses a damaged,
            truncated or overwritten file, naming it and what SQLite found. When the disk is full (or
            the store reaches --max-store-bytes) the batch being committed is answered INTERNAL
            (STORE_FAILURE) and nothing of it is recorded, so a retry is decided afresh; the service
            keeps running and records commands again as soon as there is room.

            It decides by the domain limits of the config file ("domain": maximumPrincipalCents,
            minimumCashoutCents, taxSlabsBp; DOMAIN's defaults for those it leaves out), and logs them
            before the "ready" line. Events keep what was decided, so a changed limit applies to commands
            from then on and never to the history.

            SIGINT, SIGTERM or SIGHUP stops it gracefully: commands that arrive from then on are answered
            UNAVAILABLE, those already taken are decided, committed, answered and published, the head
            is signed, and it exits 0. A second signal ends it at once (exit 130). Started with SIGHUP
            ignored (nohup), it keeps ignoring SIGHUP.

            --metrics-file PATH writes the service's metrics (commands by type and outcome, batch sizes,
            commit times, the head) in the Prometheus text exposition format, replacing the file whole
            every --metrics-interval seconds and once more at a graceful stop (docs/cli.md lists them).
            --log-level debug logs every command decided, with its id and positions.

            Exit codes: 0 stopped cleanly, 1 the store is held by another writer, is damaged, does not
            match its last signed checkpoint, holds no event while a projection in DATA has applied some
            (emptied or removed: restore it), holds personal data sealed under a subject-keys.db that is
            missing (put it back), or the service failed, 2 usage or environment (a config file's
            relative data directory that holds no event, where the working directory's reading of it
            holds a store with events, or its relative key file where nothing is, where the working
            directory's reading of it is a file: write them as absolute paths; no key file, one that is
            malformed, holds an unknown member or is readable by others, a checkpoint key that is
            malformed or readable by others, an endpoint no bind could take or that is in use, a key
            file with the CURVE server's public key but not its secret, a metrics file that cannot be
            written, is not a regular file (a FIFO, a directory, a device) or is one of the system's files).
            """)

    static let subcommand = Subcommand(spec: spec, stopsOnSignals: true) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let observability = try Observability.resolve(arguments, environment: environment)
        try observability.requireUsableMetricsFile(configuration, arguments, environment)
        let tuning = try Tuning.resolve(arguments)
        // Before the key file, which the same config file may also name elsewhere now.
        try WorkingDirectoryHistory.requireNone(configuration)
        let keys = try configuration.readKeyFile()
        try requireServiceCopy(keys, configuration.keysFile)
        // Before anything is made: the key is made only once the store has opened.
        try CheckpointKeyFile.requireApart(
            CheckpointKeyFile.keyPath(arguments, environment, configuration), configuration)
        try configuration.requireUsableEndpoints(.serve)
        try Directories.create(configuration.dataDirectory, "the data directory", mode: 0o700)
        try EarlierHistory.requireNone(configuration)
        let logger = observability.logger(label: "serve")
        var settings = CommandServer.Settings(
            storePath: configuration.eventStorePath, keys: keys, commandsEndpoint: configuration.commandsEndpoint,
            eventsEndpoint: configuration.eventsEndpoint, historyEndpoint: configuration.historyEndpoint)
        // Read again, with the same checks, once it changes: keys are added and revoked live.
        let keysFile = configuration.keysFile
        settings.keyFileSource = KeyFileSource(path: keysFile) {
            let keys = try readKeyFile(keysFile)
            try requireServiceCopy(keys, keysFile)
            return keys
        }
        tuning.apply(to: &settings)
        settings.domain = configuration.domain
        settings.checkpointKey = { (lastSigned) throws(ServerError) in
            do {
                return try checkpointKey(arguments, environment, configuration, lastSigned: lastSigned, logger: logger)
            } catch {
                throw ServerError(.environment, "\(error)")
            }
        }
        let registry = observability.registry(process: "serve")
        settings.metrics = registry.map(ServiceMetrics.init)

        // Listening for signals before starting (`PendingStop`).
        let pendingStop = PendingStop<CommandServer> { $0.stop() }
        let signals = ShutdownSignals { signal in
            logger.info("stopping (signal \(signal)): finishing the commands already taken")
            pendingStop.request()
        }
        defer { signals.cancel() }
        let server: CommandServer
        do throws(ServerError) {
            server = try CommandServer.start(settings, logger: logger)
        } catch {
            switch error.kind {
            case .storeLocked, .integrity: throw CommandFailure.problem("refused: \(error.message)")
            case .environment: throw CommandFailure.environment(error.message)
            }
        }
        let metricsFile: MetricsFile?
        do {
            metricsFile = try observability.startMetricsFile(registry, logger: logger)
        } catch {
            server.stop()
            server.wait()
            throw error
        }
        pendingStop.started(server)
        let endpoints = server.endpoints
        if let curve = keys.curveServerPair {
            let admitted = keys.keys.filter { $0.curvePublic != nil }
            let subscribers = admitted.filter { $0.scopes.contains(.history) }
            logger.info(
                "CURVE on every endpoint: server public key \(curve.publicKey.z85), "
                    + "\(String.counted(admitted.count, "client key")) admitted "
                    + "(\(admitted.map(\.id).joined(separator: ", "))), on the events endpoint the "
                    + "\(subscribers.count) with the history scope")
            for key in keys.keys where key.curvePublic == nil {
                logger.warning("key \(key.id) has no \"curvePublic\": the service refuses its connections")
            }
        }
        if let checkpoint = server.startingCheckpoint {
            logger.info(
                "the chain matches its last signed checkpoint position=\(checkpoint.position) "
                    + "signedAt=\(checkpoint.signedAt)")
        }
        let limits = configuration.domain
        logger.info(
            "domain limits maximumPrincipalCents=\(limits.maximumPrincipalCents) "
                + "minimumCashoutCents=\(limits.minimumCashoutCents) "
                + "taxSlabsBp=\(limits.taxSlabsBp.map(String.init).joined(separator: ","))")
        logger.info(
            "ready commands=\(endpoints.commands) events=\(endpoints.events) history=\(endpoints.history) "
                + "head=\(server.startingHead) store=\(configuration.eventStorePath)")
        SupervisedChild.reportReady(environment)
        let failure = server.wait()
        metricsFile?.stop()
        if let failure {
            throw CommandFailure.problem("stopped after a failure: \(failure)")
        }
        logger.info("stopped")
        return 0
    }

    /// The settings of the service that only a flag gives (no config file or environment
    /// variable holds them), defined and checked here for `serve` and for `up`, which passes them
    /// to its serve: both accept the same values, and `up` refuses a bad one with serve's own
    /// message before it starts anything, where its serve would refuse it only once started.
    struct Tuning: Sendable {
        /// nil: the bus's default (100,000).
        var publisherHighWaterMark: Int32?
        /// nil: every 5 s.
        var checkpointInterval: TimeInterval?
        /// nil: no limit but the disk's.
        var maximumStoreBytes: Int64?
        /// nil: `CommandWriter.defaultCacheBytes` (64 MiB).
        var cacheMebibytes: Int64?

        static let options: [OptionSpec] = [
            OptionSpec(
                "publisher-hwm", value: "N",
                help: "Events queued per subscriber before the bus drops them (default 100000)."),
            OptionSpec(
                "checkpoint-interval", value: "SECONDS",
                help: "Sign the head this often while it advances (default 5; 0: only when stopping)."),
            OptionSpec(
                "max-store-bytes", value: "N",
                help: "Let events.db grow to N bytes at most; past it commands are answered INTERNAL, "
                    + "not recorded."),
            OptionSpec(
                "cache-mib", value: "N",
                help: "Hold up to N MiB of folded streams for deciding (default 64; 1 to 65536): more keeps "
                    + "a larger book of loans from being read again, at that much more memory."),
        ]

        /// The options given, each within its range; one out of it, or no integer, is a usage
        /// error naming the option and the range.
        static func resolve(_ arguments: ParsedArguments) throws(UsageError) -> Tuning {
            Tuning(
                publisherHighWaterMark: try arguments.integer("publisher-hwm", in: 1...10_000_000).map { Int32($0) },
                checkpointInterval: try arguments.integer("checkpoint-interval", in: 0...86_400).map {
                    TimeInterval($0)
                },
                maximumStoreBytes: try arguments.integer("max-store-bytes", in: 65_536...Int64.max),
                cacheMebibytes: try arguments.integer("cache-mib", in: 1...65_536))
        }

        /// Sets what was given, leaving the service's defaults for the rest.
        func apply(to settings: inout CommandServer.Settings) {
            if let publisherHighWaterMark { settings.publisherHighWaterMark = publisherHighWaterMark }
            if let checkpointInterval { settings.checkpointInterval = checkpointInterval }
            settings.maximumStoreBytes = maximumStoreBytes
            if let cacheMebibytes { settings.cacheBytes = Int(cacheMebibytes) << 20 }
        }
    }

    /// The checkpoint key: read (and `checkpoint.pub` written if missing), or created on
    /// the first start, like an SSH host key. A missing key whose public half is still in
    /// the data directory was lost or moved, not never made: that is refused. So is a missing
    /// key where the store's last checkpoint (`lastSigned`) is signed by one: a store restored or
    /// moved without its key, which a new key would sign on from, leaving every earlier
    /// checkpoint one `strata verify` calls UNTRUSTED_KEY.
    static func checkpointKey(
        _ arguments: ParsedArguments, _ environment: [String: String], _ configuration: Configuration,
        lastSigned: SignedCheckpoint?, logger: Logger
    ) throws -> CheckpointKey {
        let keyPath = CheckpointKeyFile.keyPath(arguments, environment, configuration)
        let publicPath = CheckpointKeyFile.publicKeyPath(configuration)
        let key: CheckpointKey
        if FileManager.default.fileExists(atPath: keyPath) {
            key = try CheckpointKeyFile.load(keyPath)
            try CheckpointKeyFile.ensurePublicKeyFile(publicPath, for: key, keyPath: keyPath)
        } else {
            guard !FileManager.default.fileExists(atPath: publicPath) else {
                throw CommandFailure.environment(
                    "no checkpoint key at \(keyPath), but \(publicPath) exists: restore the key, or, if it is lost, "
                        + "make a new pair after it with `strata keys checkpoint --rotate`")
            }
            if let lastSigned {
                throw CommandFailure.environment(
                    "no checkpoint key at \(keyPath), but \(configuration.eventStorePath) is signed by the key "
                        + "\(lastSigned.publicKey) (position \(lastSigned.position)): put that key in place "
                        + "(checkpoint.key and checkpoint.pub, which a backup leaves out), or, if it is lost, put "
                        + "checkpoint.pub in place and run `strata keys checkpoint --rotate`")
            }
            key = try CheckpointKeyFile.create(keyPath: keyPath, publicKeyPath: publicPath)
            logger.info("created the checkpoint key \(keyPath); public key \(key.publicKeyHex) (also in \(publicPath))")
        }
        logger.info("signing checkpoints with public key \(key.publicKeyHex)")
        return key
    }

    /// Refuses, before anything is created, a client's copy of a key file with CURVE keys:
    /// the service needs the secret half of its own pair.
    static func requireServiceCopy(_ keys: KeyFile, _ path: String) throws {
        do throws(ServerError) {
            _ = try CommandServer.curveServerPair(keys)
        } catch {
            throw CommandFailure.environment("\(path): \(error.message)")
        }
    }

    /// Reads the key file, or says how to make one; refuses one that others may read.
    static func readKeyFile(_ path: String) throws -> KeyFile {
        let bytes: [UInt8]
        switch FileContents.read(path) {
        case .success(let read): bytes = read
        case .failure(let error) where error.code == ENOENT:
            throw CommandFailure.environment(
                "no key file at \(path); create a key with `strata keys new ID --scope commands,history`")
        case .failure(let error): throw CommandFailure.environment("cannot read the key file \(path): \(error)")
        }
        try PrivateFile.requireOwnerOnly(path, "the key file")
        do {
            return try KeyFile(json: bytes)
        } catch {
            throw CommandFailure.environment("\(path): \(error)")
        }
    }
}
