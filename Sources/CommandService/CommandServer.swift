import Bus
import Domain
import EventStore
import Events
import Foundation
import StrataCore
import SubjectKeys

/// `strata serve`: the command service. Three threads own its sockets, and a fourth writes:
///
/// - **commands** (ROUTER): reads requests, runs the gate, queues them for the writer,
///   sends the replies back;
/// - **writer** (no sockets): decides each batch against cached state, commits it in one
///   transaction, and hands it to the publisher while it goes on to the next;
/// - **publisher** (PUB, and PUSH to the commands thread): replies to each batch in arrival
///   order, then publishes its events in position order, with a heartbeat every second;
/// - **history** (ROUTER): pages of stored events for catch-up, from its own read-only
///   connection.
///
/// When the key file holds a CURVE server pair, all three endpoints are CURVE servers, and a
/// fifth thread runs the ZAP handler that admits only the key file's client keys; it binds
/// before the endpoints and closes after them.
///
/// `stop()` is graceful: commands that arrive from then on are answered UNAVAILABLE, the
/// writer finishes and answers everything already taken, events are published, sockets
/// closed.
public final class CommandServer: Sendable {
    public struct Settings: Sendable {
        public var storePath: String
        /// The key store (CONTRACT.md "Personal data"): every personal field is sealed under
        /// its subject's key from here before it is stored. By default `subject-keys.db`
        /// beside the event store.
        public var subjectKeysPath: String
        public var keys: KeyFile
        /// Where the key file is read again once it changes (`LiveKeys`); nil keeps `keys`.
        public var keyFileSource: KeyFileSource?
        public var commandsEndpoint: String
        public var eventsEndpoint: String
        public var historyEndpoint: String
        public var domain = DomainConfiguration()
        public var maximumBodyBytes = RequestGate.defaultMaximumBodyBytes
        /// Most commands decided and committed in one transaction.
        public var batchLimit = 2000
        /// Most arrivals waiting for the writer before the commands thread stops reading.
        public var queueCapacity = 20_000
        /// Most aggregate streams held in the writer's cache.
        public var cacheCapacity = 100_000
        /// Most bytes of folded streams held in the writer's cache, as `StreamFootprint`
        /// estimates them.
        public var cacheBytes = CommandWriter.defaultCacheBytes
        public var heartbeatInterval: TimeInterval = 1
        /// Events queued per subscriber before the publisher drops (the subscriber then
        /// catches up through history).
        public var publisherHighWaterMark: Int32 = 100_000
        public var clock: any WallClock = SystemClock()
        /// Gives the Ed25519 key that signs checkpoints of the chain; nil signs none (the
        /// check of the last checkpoint at start happens either way). Asked once, after the
        /// store has opened and matched its last signed checkpoint, which it is handed (nil when
        /// none): a store refused at start leaves no new key behind (`serve` makes the key on the
        /// first start, and makes none for a store another key has signed).
        public var checkpointKey: (@Sendable (_ lastSigned: SignedCheckpoint?) throws(ServerError) -> CheckpointKey)?
        /// How often the head is signed while it advances; 0 signs only at a graceful stop.
        public var checkpointInterval: TimeInterval = 5
        /// The most the event store's file may grow to (nil: as far as the disk allows). Past
        /// it, commands are answered INTERNAL and nothing is recorded, as on a full disk.
        public var maximumStoreBytes: Int64?
        /// Where the service counts what it does (`serve --metrics-file`); nil counts nothing.
        public var metrics: ServiceMetrics?

        public init(
            storePath: String, keys: KeyFile, commandsEndpoint: String, eventsEndpoint: String, historyEndpoint: String
        ) {
            self.storePath = storePath
            self.subjectKeysPath = SubjectKeyStore.path(
                inDataDirectory: PathName.directory(of: storePath))
            self.keys = keys
            self.commandsEndpoint = commandsEndpoint
            self.eventsEndpoint = eventsEndpoint
            self.historyEndpoint = historyEndpoint
        }
    }

    /// The endpoints as bound (a `*` port resolved to the port the system chose).
    public struct Endpoints: Sendable, Equatable {
        public let commands: String
        public let events: String
        public let history: String
    }

    /// Committed turns of the writer waiting for the publisher. Two let the writer commit the
    /// next while the publisher answers one; more would only hold replies back in memory.
    static let publicationDepth = 2

    public let endpoints: Endpoints
    /// The head position when the service started.
    public let startingHead: Int64
    /// The last signed checkpoint when the service started (it matched the chain).
    public let startingCheckpoint: SignedCheckpoint?
    private let control: ServerControl

    private init(
        endpoints: Endpoints, startingHead: Int64, startingCheckpoint: SignedCheckpoint?, control: ServerControl
    ) {
        self.endpoints = endpoints
        self.startingHead = startingHead
        self.startingCheckpoint = startingCheckpoint
        self.control = control
    }

    /// Opens the store (taking the writer lock), checks it against its last signed
    /// checkpoint, binds every endpoint and starts the threads. Returns once the service
    /// answers requests.
    public static func start(_ settings: Settings, logger: Logger) throws(ServerError) -> CommandServer {
        let liveKeys = try LiveKeys(settings.keys, source: settings.keyFileSource, logger: logger)
        let curve = liveKeys.current.curve
        let writerStore: HandOff<SQLiteEventStore>
        let readerStore: HandOff<SQLiteEventStore>
        let head: Int64
        let store: SQLiteEventStore
        do {
            store = try SQLiteEventStore(
                path: settings.storePath, clock: settings.clock, maximumBytes: settings.maximumStoreBytes,
                logger: logger)
            head = try store.head()
            readerStore = HandOff(try SQLiteEventStore(readingAt: settings.storePath))
        } catch let error where error.kind == .locked {
            throw ServerError(.storeLocked, error.message)
        } catch let error where error.kind == .corrupt {
            throw ServerError(.integrity, error.message)
        } catch {
            throw ServerError(.environment, "cannot open the event store \(settings.storePath): \(error.message)")
        }
        logStructureCheck(store, logger: logger)
        // The store is checked before anything is created beside it: a start refused for a
        // damaged or rewritten history leaves no new key store and no new checkpoint key.
        let checkpoint = try CheckpointSigner.checkStart(store, head: head)
        let missingKeyStore: String?
        do throws(StoreError) {
            missingKeyStore = try SealedHistory.missingKeyStore(
                settings.subjectKeysPath, beside: store, storePath: settings.storePath)
        } catch {
            throw ServerError(.integrity, "cannot read \(settings.storePath): \(error.message)")
        }
        if let missingKeyStore { throw ServerError(.integrity, missingKeyStore) }
        let signingKey = try settings.checkpointKey?(checkpoint)
        let subjectKeys: SubjectKeyStore
        let bodyDigest: BodyDigest
        do throws(SubjectKeyStoreError) {
            subjectKeys = try SubjectKeyStore(writingAt: settings.subjectKeysPath)
            bodyDigest = try BodyDigest(store: subjectKeys)
        } catch {
            throw ServerError(.environment, error.message)
        }
        settings.metrics?.started(head: head)
        writerStore = HandOff(store)
        let context: ZMQContext
        do {
            context = try ZMQContext()
        } catch {
            throw ServerError(.environment, "cannot create a libzmq context: \(error)")
        }
        let control = ServerControl(context: context, logger: logger, curveSecretKey: curve?.secretKey)
        let queue = ArrivalQueue(capacity: settings.queueCapacity)
        // One inproc name per server, so two servers in one process never meet.
        let repliesEndpoint = "inproc://strata-replies-\(UUID().uuidString)"
        let clock = settings.clock

        func started(_ latch: StartupLatch) throws(ServerError) -> String {
            switch latch.wait() {
            case .success(let endpoint): return endpoint
            case .failure(let error):
                control.fail("start-up failed: \(error.message)")
                control.waitForThreads()
                throw error
            }
        }

        if curve != nil {
            _ = try started(
                control.spawn("strata-zap", priority: .yielding, ownsClientSockets: false) { ready in
                    let handler: ZAPHandler
                    do throws(ZMQError) {
                        handler = try ZAPHandler(
                            context,
                            allowList: { domain in
                                let keys = liveKeys.current
                                return domain == .events ? keys.eventsAllowList : keys.allowList
                            }, logger: control.logger)
                    } catch {
                        let failure = ServerError(.environment, "cannot start the ZAP handler: \(error)")
                        return ready.report(.failure(failure))
                    }
                    ready.report(.success(ZAPHandler.endpoint))
                    // Until every endpoint has closed: without a handler, libzmq would admit anyone.
                    run("zap", control) { () throws(ZMQError) in
                        try handler.run(until: { control.isStopping && control.clientSocketsClosed })
                    }
                })
        }

        // The writer's connection to events.db closes after the history thread's read-only one:
        // the last connection to close checkpoints the WAL into the file and removes it, which a
        // read-only connection cannot do.
        let historyRunning = DispatchGroup()

        let commandsGate = FollowingGate(liveKeys, scope: .commands, maximumBodyBytes: settings.maximumBodyBytes)
        let commands = try started(
            control.spawn("strata-commands", priority: .yielding) { ready in
                let ingress: CommandIngress
                do throws(ZMQError) {
                    ingress = try CommandIngress(
                        endpoint: settings.commandsEndpoint, repliesEndpoint: repliesEndpoint, gate: commandsGate,
                        configuration: settings.domain, bodyDigest: bodyDigest, queue: queue, control: control,
                        clock: clock, metrics: settings.metrics)
                } catch {
                    return ready.report(.failure(bindFailure("commands", settings.commandsEndpoint, error)))
                }
                ready.report(.success(ingress.endpoint))
                run("commands", control) { () throws(ZMQError) in try ingress.run() }
            })

        // The writer's turns go to the publisher's thread, which owns the events endpoint.
        let publications = PublicationQueue(capacity: Self.publicationDepth)
        let events = try started(
            control.spawn("strata-publisher", priority: .yielding) { ready in
                let thread: PublisherThread
                do throws(ZMQError) {
                    thread = try PublisherThread(
                        head: head, eventsEndpoint: settings.eventsEndpoint, repliesEndpoint: repliesEndpoint,
                        publications: publications, heartbeatInterval: settings.heartbeatInterval,
                        publisherHighWaterMark: settings.publisherHighWaterMark, keys: curve == nil ? nil : liveKeys,
                        control: control,
                        metrics: settings.metrics)
                } catch {
                    publications.close()
                    return ready.report(.failure(bindFailure("events", settings.eventsEndpoint, error)))
                }
                ready.report(.success(thread.endpoint))
                run("publisher", control) { () throws(ZMQError) in try thread.run() }
            })

        _ = try started(
            control.spawn("strata-writer", priority: .normal, ownsClientSockets: false) { ready in
                let thread: WriterThread
                do throws(ServerError) {
                    let store = writerStore.take()!
                    let writer: CommandWriter
                    let sealer: PersonalDataSealer
                    do throws(SubjectKeyStoreError) {
                        sealer = try PersonalDataSealer(store: subjectKeys)
                    } catch {
                        throw ServerError(.environment, error.message)
                    }
                    do throws(StoreError) {
                        writer = try CommandWriter(
                            store: store, configuration: settings.domain, clock: clock,
                            cacheCapacity: settings.cacheCapacity, cacheBytes: settings.cacheBytes, sealer: sealer)
                    } catch {
                        throw ServerError(.environment, "cannot read the event store: \(error.message)")
                    }
                    let signer = signingKey.map { key in
                        CheckpointSigner(
                            store: store, key: key, interval: settings.checkpointInterval, clock: clock,
                            logger: control.logger, signedPosition: checkpoint?.position ?? 0)
                    }
                    thread = WriterThread(
                        writer: writer, head: head, queue: queue, publications: publications, signer: signer,
                        batchLimit: settings.batchLimit, idleInterval: settings.heartbeatInterval,
                        logger: control.logger)
                } catch {
                    // The publisher ends once told the writer is finished.
                    publications.put(.finished(head: head))
                    return ready.report(.failure(error))
                }
                ready.report(.success("writer"))  // no endpoint of its own
                thread.run()
                historyRunning.wait()
                // After history's reader of the key store, as for events.db: the file whole.
                subjectKeys.close()
            })

        let historyGate = FollowingGate(liveKeys, scope: .history, maximumBodyBytes: settings.maximumBodyBytes)
        historyRunning.enter()
        let history = try started(
            control.spawn("strata-history", priority: .yielding) { ready in
                defer { historyRunning.leave() }
                // In a scope of its own, so that its store is closed before the writer may go on.
                do {
                    let responder: HistoryResponder
                    do throws(ZMQError) {
                        responder = try HistoryResponder(
                            endpoint: settings.historyEndpoint, store: readerStore.take()!, gate: historyGate,
                            control: control, clock: clock,
                            opener: PersonalDataOpener(keyStorePath: settings.subjectKeysPath, cacheCapacity: 0),
                            metrics: settings.metrics)
                    } catch {
                        return ready.report(.failure(bindFailure("history", settings.historyEndpoint, error)))
                    }
                    ready.report(.success(responder.endpoint))
                    run("history", control) { () throws(ZMQError) in try responder.run() }
                }
            })

        return CommandServer(
            endpoints: Endpoints(commands: commands, events: events, history: history), startingHead: head,
            startingCheckpoint: checkpoint, control: control)
    }

    /// Asks the service to stop gracefully. Safe from any thread, more than once.
    public func stop() {
        control.requestStop()
    }

    /// Blocks until every thread has ended; returns the fatal error that ended the
    /// service, if one did (nil after a graceful stop).
    @discardableResult
    public func wait() -> String? {
        control.waitForThreads()
        return control.firstFailure
    }

    /// Each key's permitted actor roles (absent: any role). A role the domain does not
    /// know is a broken key file, refused at start rather than at the first command.
    static func roles(of keys: KeyFile) throws(ServerError) -> [String: Set<Role>] {
        var result: [String: Set<Role>] = [:]
        for key in keys.keys {
            guard let names = key.roles else { continue }
            var roles: Set<Role> = []
            for name in names {
                guard let role = Role(rawValue: name) else {
                    throw ServerError(
                        .environment,
                        "key \(key.id) names an unknown role \(name) (known: \(Role.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                roles.insert(role)
            }
            result[key.id] = roles
        }
        return result
    }

    /// The service's CURVE pair, nil when the key file asks for no CURVE. A file with the
    /// server's public key but not its secret is a client's copy: refused.
    public static func curveServerPair(_ keys: KeyFile) throws(ServerError) -> CurveKeyPair? {
        guard keys.curveServerPublic != nil else { return nil }
        guard let pair = keys.curveServerPair else {
            throw ServerError(
                .environment,
                "the key file holds the CURVE server's public key without its secret (a client's copy); "
                    + "the service needs its own copy, with \"curveServer\".\"secret\"")
        }
        return pair
    }

    /// The client public keys the ZAP handler admits, each with its key's id: of every key, or
    /// of the keys with `scope`.
    static func curveAllowList(_ keys: KeyFile, scope: KeyFile.Scope? = nil) -> [CurveKey: String] {
        var allowList: [CurveKey: String] = [:]
        for key in keys.keys where scope.map(key.scopes.contains) ?? true {
            if let curvePublic = key.curvePublic { allowList[curvePublic] = key.id }
        }
        return allowList
    }

    private static func logStructureCheck(_ store: SQLiteEventStore, logger: Logger) {
        guard let check = store.structureCheck else { return }
        let megabytes = Double(check.bytes) / 1_000_000
        if check.checked {
            logger.info(
                "PRAGMA quick_check found \(store.path) sound: \(String(format: "%.1f", megabytes)) MB in "
                    + "\(String(format: "%.2f", check.seconds)) s")
        } else {
            logger.warning(
                "\(store.path) is \(String(format: "%.0f", megabytes)) MB, over the "
                    + "\(SQLiteEventStore.structureCheckLimit >> 30) GiB checked at start: its structure was not "
                    + "checked (run PRAGMA quick_check on a copy)")
        }
    }

    private static func bindFailure(_ name: String, _ endpoint: String, _ error: ZMQError) -> ServerError {
        ServerError(.environment, "cannot bind the \(name) endpoint \(endpoint): \(error)")
    }

    /// Runs a thread's loop; an error other than the context's shutdown stops everything.
    private static func run(_ name: String, _ control: ServerControl, _ body: () throws(ZMQError) -> Void) {
        do {
            try body()
        } catch where error.isTerminated {
            // The context was shut down because something failed; that was logged there.
        } catch {
            control.fail("\(name) thread: \(error)")
        }
    }
}
