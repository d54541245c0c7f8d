import CommandService
import Foundation
import StrataCore

/// `strata serve`: the command service, until SIGINT or SIGTERM.
enum ServeCommand {
    static let spec = CommandSpec(
        ["serve"], summary: "Run the command service: signed commands in, events out, history.",
        options: Configuration.options + Configuration.endpointOptions.filter { $0.name != "key" } + [
            OptionSpec(
                "publisher-hwm", value: "N",
                help: "Events queued per subscriber before the bus drops them (default 100000)."),
        ],
        discussion: """
            Holds the writer lock on DATA/events.db (a second serve or admin bootstrap refuses to
            start), binds the commands (ROUTER), events (PUB) and history (ROUTER) endpoints, and logs
            to standard error. A port of * binds any free port; the "ready" line names the ports bound.

            SIGINT or SIGTERM stops it gracefully: commands that arrive from then on are answered
            UNAVAILABLE, those already taken are decided, committed, answered and published, and it
            exits 0. A second signal ends it at once (exit 130).

            Exit codes: 0 stopped cleanly, 1 the store is held by another writer or the service failed,
            2 usage or environment (no key file, an endpoint that cannot be bound).
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let keys = try readKeyFile(configuration.keysFile)
        do {
            try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure.environment("cannot create \(configuration.dataDirectory): \(error.localizedDescription)")
        }
        let logger = Logger(label: "serve")
        var settings = CommandServer.Settings(
            storePath: configuration.eventStorePath, keys: keys, commandsEndpoint: configuration.commandsEndpoint,
            eventsEndpoint: configuration.eventsEndpoint, historyEndpoint: configuration.historyEndpoint)
        if let hwm = try arguments.integer("publisher-hwm", in: 1...10_000_000) { settings.publisherHighWaterMark = Int32(hwm) }

        let server: CommandServer
        do throws(ServerError) {
            server = try CommandServer.start(settings, logger: logger)
        } catch {
            switch error.kind {
            case .storeLocked: throw CommandFailure.problem("refused: \(error.message)")
            case .environment: throw CommandFailure.environment(error.message)
            }
        }
        let signals = ShutdownSignals { signal in
            logger.info("stopping (signal \(signal)): finishing the commands already taken")
            server.stop()
        }
        defer { signals.cancel() }
        let endpoints = server.endpoints
        logger.info(
            "ready commands=\(endpoints.commands) events=\(endpoints.events) history=\(endpoints.history) "
                + "head=\(server.startingHead) store=\(configuration.eventStorePath)")
        if let failure = server.wait() {
            throw CommandFailure.problem("stopped after a failure: \(failure)")
        }
        logger.info("stopped")
        return 0
    }

    /// Reads the key file, or says how to make one.
    static func readKeyFile(_ path: String) throws -> KeyFile {
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw CommandFailure.environment(
                FileManager.default.fileExists(atPath: path)
                    ? "cannot read the key file \(path)"
                    : "no key file at \(path); create a key with `strata keys new ID --scope commands,history`")
        }
        do {
            return try KeyFile(json: bytes)
        } catch {
            throw CommandFailure.environment("\(path): \(error)")
        }
    }
}
