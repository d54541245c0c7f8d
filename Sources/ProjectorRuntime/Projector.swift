import Bus
import CZeroMQ
import Dispatch
import EventStore
import Foundation
import Events
import Projections
import StrataCore
import Synchronization

/// A projector process's engine: keeps one projection file equal to the events, whatever
/// the bus drops (the Clone pattern).
///
/// It subscribes first, then reads the checkpoint and catches up through history to the
/// head, then applies live events, dropping those at or below the checkpoint. A gap (a
/// position other than checkpoint + 1), a heartbeat whose head is beyond the checkpoint,
/// or a quiet bus sends it back to history. Dropping an event as applied already holds only
/// while the store is the one the file was made from: history is asked for the event at the
/// checkpoint when it starts, and whenever the bus hints otherwise (a heartbeat behind the
/// checkpoint, an event that does not follow the file's chain), and a store behind the file or
/// another store ends it. Its one thread owns both sockets and the SQLite file; nothing here
/// touches Swift's cooperative pool.
public final class Projector: Sendable {
    public struct Settings: Sendable {
        public var name: String
        public var databasePath: String
        public var eventsEndpoint: String
        public var historyEndpoint: String
        /// A key with the `history` scope.
        public var key: KeyFile.Key
        /// The CURVE keys both sockets use, when the service runs CURVE (`KeyFile.curveClientKeys`).
        public var curve: CurveClientKeys?
        /// Most events applied in one transaction.
        public var batchLimit = 2000
        /// Events asked of history per request (the endpoint allows up to 10,000).
        public var historyPageSize = 2000
        public var historyTimeoutMilliseconds = 5000
        /// With no message at all for this long while running (heartbeats come every
        /// second), ask history.
        public var quietMilliseconds = 3000
        /// How many live messages may wait in the subscriber before the bus drops them.
        public var receiveHighWaterMark: Int32 = 100_000
        /// The subscriber's kernel receive buffer in bytes; nil leaves it to the system
        /// (which grows it as needed). Small values make the bus drop sooner.
        public var receiveBufferBytes: Int32?
        /// Where the projector reports its position, the head and the lag; nil reports nothing.
        public var metrics: ProjectorMetrics?
        /// Opens sealed personal data for the projections (the key store beside the
        /// service); nil leaves it sealed, unless `openThroughHistory`.
        public var opener: (any PersonalDataOpening)?
        /// Away from the service (no key store): every event that carries personal data is
        /// read from history, which opens it (`"open":true`); the key needs the
        /// `personal-data` scope.
        public var openThroughHistory = false
        /// What an operator asked of the file, done once it is open and both endpoints are
        /// connected (so that nothing else can still refuse the start once the file changed).
        public var operatorAct: OperatorAct?

        public init(name: String, databasePath: String, eventsEndpoint: String, historyEndpoint: String, key: KeyFile.Key) {
            self.name = name
            self.databasePath = databasePath
            self.eventsEndpoint = eventsEndpoint
            self.historyEndpoint = historyEndpoint
            self.key = key
        }
    }

    /// What an operator asks of a stopped projection (`strata project NAME --resume`,
    /// `--skip POSITION --reason TEXT`).
    public enum OperatorAct: Sendable, Equatable {
        /// Clear the stop and try its event again.
        case resume
        /// Pass over the event the projection stopped at, recording why.
        case skip(position: Int64, reason: String)
    }

    /// How a projector ended.
    public enum Exit: Sendable, Equatable {
        /// Asked to stop; everything it took is committed.
        case stopped
        /// It reached an event it cannot apply (recorded in the file; see `strata status`).
        case poisoned(ProjectionStop)
        /// It could not go on: the file, the key store, history, the bus, or a store that is not
        /// the file's (nothing is recorded in the file).
        case failed(ProjectorError)
    }

    /// A committed batch, for measurements: the events and when their commit returned.
    public struct Commit: Sendable {
        public let events: [RecordedEvent]
        public let committedAt: Timestamp
    }

    private let settings: Settings
    private let logger: Logger
    private let stopRequested = Atomic<Bool>(false)
    private let outcome = Mutex<Exit?>(nil)
    private let started = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    private let startFailure = Mutex<ProjectorError?>(nil)
    private let checkpointAtStart = Atomic<Int64>(0)
    private let checkpointAtEnd = Atomic<Int64>(0)

    private init(settings: Settings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    /// Opens the projection file (taking its lock), connects to both endpoints, does the
    /// operator's act, and starts following the events on the projector's thread. Throws when
    /// the file cannot be opened, is locked by another projector, or is stopped, when an
    /// endpoint cannot be connected to, or when the act does not apply.
    public static func start(
        _ settings: Settings, projections: [any Projection], logger: Logger,
        onCommit: (@Sendable (Commit) -> Void)? = nil
    ) throws(ProjectorError) -> Projector {
        let projector = Projector(settings: settings, logger: logger)
        startThread(named: "projector-\(settings.name)") {
            projector.run(projections: projections, onCommit: onCommit)
            projector.ended.signal()
        }
        projector.started.wait()
        if let failure = projector.startFailure.withLock({ $0 }) {
            projector.ended.wait()
            throw failure
        }
        return projector
    }

    /// The checkpoint the file had when the projector started.
    public var startingCheckpoint: Int64 { checkpointAtStart.load(ordering: .acquiring) }

    /// The checkpoint the file had when the projector ended (valid once `wait()` returned).
    public var finalCheckpoint: Int64 { checkpointAtEnd.load(ordering: .acquiring) }

    /// Asks the projector to stop after the batch in hand.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
    }

    /// Blocks until the projector's thread has ended and its file is closed.
    public func wait() -> Exit {
        ended.wait()
        ended.signal()  // later calls return at once
        return outcome.withLock { $0 ?? .stopped }
    }

    private var isStopping: Bool { stopRequested.load(ordering: .acquiring) }

    // MARK: - The thread

    private func run(projections: [any Projection], onCommit: (@Sendable (Commit) -> Void)?) {
        let historyOpened = settings.openThroughHistory ? HistoryOpenedValues() : nil
        let database: ProjectionDatabase
        let connections: Connections
        do throws(ProjectorError) {
            database = try ProjectionDatabase(
                path: settings.databasePath, name: settings.name, projections: projections,
                opener: historyOpened ?? settings.opener, logger: logger)
            if database.wasReset {
                logger.warning(
                    "\(settings.databasePath) was made from another schema: rebuilding \(settings.name) from "
                        + "position 0")
            }
            connections = try connect(opening: historyOpened != nil)
            if let act = settings.operatorAct { try perform(act, on: database) }
            if let stop = database.stop {
                throw ProjectorError(.stopped, "\(settings.name) \(stop); \(stop.wayOut(settings.name))")
            }
        } catch {
            startFailure.withLock { $0 = error }
            started.signal()
            return
        }
        var subscriber = connections.subscriber
        defer { subscriber.close() }
        checkpointAtStart.store(database.checkpoint, ordering: .releasing)
        settings.metrics?.started(checkpoint: database.checkpoint)
        started.signal()
        var follower = Follower(
            database: database, projections: projections, history: connections.history,
            historyOpened: historyOpened, settings: settings, logger: logger, onCommit: onCommit)
        let exit = follower.run(
            subscriber: &subscriber, resubscribe: { [self] () throws(ProjectorError) in
                try makeSubscriber(connections.context)
            }, isStopping: { [self] in isStopping })
        follower.logCountedLines()
        checkpointAtEnd.store(follower.database.checkpoint, ordering: .releasing)
        outcome.withLock { $0 = exit }
    }

    /// The subscriber and history, each connected to its endpoint on the projector's thread.
    private struct Connections {
        let context: ZMQContext
        let subscriber: ZMQSocket
        let history: BusHistory
    }

    /// Connects both sockets before the projector counts as started: an endpoint libzmq cannot
    /// use at all (a typo, an unknown transport) is refused now, where later it would pass for
    /// a service that does not answer and be retried for ever.
    private func connect(opening: Bool) throws(ProjectorError) -> Connections {
        let context: ZMQContext
        do {
            context = try ZMQContext()
        } catch {
            throw ProjectorError(.io, "cannot make the subscriber: \(error)")
        }
        // Subscribed before the checkpoint is first read for history: whatever is published
        // from now on waits in the socket while history fills the gap behind it.
        let subscriber = try makeSubscriber(context)
        do {
            let history = try BusHistory(
                context: context, endpoint: settings.historyEndpoint, key: settings.key, curve: settings.curve,
                open: opening, timeoutMilliseconds: settings.historyTimeoutMilliseconds,
                shouldGiveUp: { [self] in isStopping })
            return Connections(context: context, subscriber: subscriber, history: history)
        } catch {
            throw ProjectorError(
                .endpoint, "cannot connect to the history endpoint \(settings.historyEndpoint): \(error)")
        }
    }

    /// A subscriber to every event, connected to the events endpoint.
    private func makeSubscriber(_ context: ZMQContext) throws(ProjectorError) -> ZMQSocket {
        let subscriber: ZMQSocket
        do {
            subscriber = try ZMQSocket(context, .subscriber)
            try subscriber.setHighWaterMarks(send: 0, receive: settings.receiveHighWaterMark)
            if let bytes = settings.receiveBufferBytes { try subscriber.setOption(ZMQ_RCVBUF, bytes) }
            if let curve = settings.curve { try subscriber.makeCurveClient(curve) }
            try subscriber.subscribe("")
        } catch {
            throw ProjectorError(.io, "cannot make the subscriber: \(error)")
        }
        do {
            try subscriber.connect(settings.eventsEndpoint)
        } catch {
            subscriber.close()
            throw ProjectorError(
                .endpoint, "cannot connect to the events endpoint \(settings.eventsEndpoint): \(error)")
        }
        return subscriber
    }

    private func perform(_ act: OperatorAct, on database: ProjectionDatabase) throws(ProjectorError) {
        switch act {
        case .resume:
            try database.resume()
            logger.info("resuming at position \(database.checkpoint + 1)")
        case .skip(let position, let reason):
            let stop = database.stop ?? database.stopBeforeReset
            try database.skip(position: position, reason: reason)
            logger.warning(
                "skipped position \(position) (\(stop?.type ?? "?") on \(stop?.stream ?? "?")) by operator: \(reason)")
        }
    }
}

/// The projector's loop, on its own thread.
private struct Follower {
    static let pollMilliseconds = 250

    /// The projection file; opened again when its path no longer names it (`reopenIfDisplaced`).
    private(set) var database: ProjectionDatabase
    let projections: [any Projection]
    let history: any HistorySource
    /// Set away from the service: personal data comes opened from history only.
    let historyOpened: HistoryOpenedValues?
    let settings: Projector.Settings
    let logger: Logger
    let onCommit: (@Sendable (Projector.Commit) -> Void)?
    /// History showed that the store holds, at the checkpoint, the event the file applied there.
    /// Asked when the projector starts, and again whenever an event does not follow the file's
    /// chain: a file of another store is then named as such, not taken for a broken chain.
    private var storeConfirmed = false
    /// When to look next whether the path still names the open file.
    private var nextFileCheck = ContinuousClock.now + .seconds(1)
    /// The file's disk was full at the last commit: said once, and once more when writing works again.
    private var diskFull = false
    /// The catch-ups logged, and those counted for a line to come.
    private var catchUpLines = CatchUpLines()
    /// The unreadable messages logged, and those counted for a line to come.
    private var unreadable = UnreadableMessages()

    init(
        database: ProjectionDatabase, projections: [any Projection], history: any HistorySource,
        historyOpened: HistoryOpenedValues?, settings: Projector.Settings, logger: Logger,
        onCommit: (@Sendable (Projector.Commit) -> Void)?
    ) {
        self.database = database
        self.projections = projections
        self.history = history
        self.historyOpened = historyOpened
        self.settings = settings
        self.logger = logger
        self.onCommit = onCommit
    }

    /// Why catching up through history could not go on.
    private enum Interruption: Error {
        /// No answer, or one that says to ask again later.
        case unavailable(String)
        /// Going on would not help; the projector ends.
        case failed(ProjectorError)
        /// The file's disk is full: the page is tried again once there may be room.
        case full(ProjectorError)
    }

    /// Quiet-bus catch-ups in a row, history answering each, after which the subscriber is made
    /// and connected again: about 10 s without a heartbeat.
    static let resubscribeAfter = 3

    mutating func run(
        subscriber: inout ZMQSocket, resubscribe: () throws(ProjectorError) -> ZMQSocket, isStopping: () -> Bool
    ) -> Projector.Exit {
        var needsHistory: CatchUpReason? = .onStart
        var unavailableSince: ContinuousClock.Instant?
        // History answers while the bus says nothing, not even a heartbeat. libzmq gives up for
        // good on a CURVE handshake the service refused (a key it admitted only later, as it
        // rereads its key file), so the projector got every event by these catch-ups alone,
        // seconds late, until it was restarted; a subscriber made again connects.
        var quietCatchUps = 0
        var saidQuiet = false
        // Counted in empty polls rather than wall time, so that time the process did not
        // run (SIGSTOP, a suspended machine) is not taken for silence on the bus.
        var emptyPolls = 0
        let quietPolls = max(1, settings.quietMilliseconds / Self.pollMilliseconds)

        while !isStopping() {
            for line in catchUpLines.due(at: .now) { logger.info(line) }
            for line in unreadable.due(at: .now) { logger.warning(line) }
            do {
                if try reopenIfDisplaced() { needsHistory = .fileOpenedAgain }
            } catch {
                return .failed(error)
            }
            if let stop = database.stop { return .poisoned(stop) }
            // Batches apply erasures; one whose truncation readers held back is finished here
            // too, once they let go, however long the bus stays quiet.
            database.finishOwedTruncation()
            if let reason = needsHistory {
                do throws(Interruption) {
                    try catchUp(reason, isStopping: isStopping)
                    needsHistory = nil
                    if unavailableSince != nil { logger.info("history is answering again") }
                    unavailableSince = nil
                    quietCatchUps = reason == .quietBus ? quietCatchUps + 1 : 0
                    if quietCatchUps >= Self.resubscribeAfter {
                        quietCatchUps = 0
                        if !saidQuiet {
                            saidQuiet = true
                            logger.warning(
                                "nothing on the events endpoint \(settings.eventsEndpoint), not even a heartbeat, "
                                    + "while history answers: connecting to it again every \(Self.resubscribeAfter) "
                                    + "quiet catch-ups (a CURVE key the service admitted after this projector "
                                    + "connected; or not the service's events endpoint)")
                        }
                        subscriber.close()
                        do throws(ProjectorError) {
                            subscriber = try resubscribe()
                        } catch {
                            return .failed(error)
                        }
                    }
                } catch {
                    switch error {
                    case .full(let error):
                        noteFull(error)
                        do {
                            try pauseReadingHeartbeats(subscriber, isStopping: isStopping)
                        } catch {
                            return .failed(error)
                        }
                        continue
                    case .unavailable(let why):
                        // Given up for a stop: nothing is asked again, and the loop ends.
                        if isStopping() { continue }
                        if unavailableSince == nil {
                            logger.warning("\(why); asking again a second after each try")
                            unavailableSince = .now
                        }
                        do {
                            try pauseReadingHeartbeats(subscriber, isStopping: isStopping)
                        } catch {
                            return .failed(error)
                        }
                        continue
                    case .failed(let error):
                        return .failed(error)
                    }
                }
                if let stop = database.stop { return .poisoned(stop) }
            }

            let readable: Bool
            do {
                readable = try !zmqPollReadable([subscriber], timeoutMilliseconds: Self.pollMilliseconds).isEmpty
            } catch {
                return .failed(ProjectorError(.bus, "the subscriber failed: \(error)"))
            }
            guard readable else {
                emptyPolls += 1
                if emptyPolls >= quietPolls {
                    // No heartbeat either: the publisher may be gone; history says for sure.
                    needsHistory = .quietBus
                    emptyPolls = 0
                }
                continue
            }
            emptyPolls = 0
            quietCatchUps = 0
            if saidQuiet {
                saidQuiet = false
                logger.info("the events endpoint is sending again")
            }
            var batch: [RecordedEvent] = []
            var expected = database.checkpoint + 1
            var heartbeatHead: Int64?
            do {
                while batch.count < settings.batchLimit, let frames = try subscriber.receive(wait: false) {
                    guard frames.count == 2 else { continue }
                    if frames[0] == Heartbeat.topic {
                        if let heartbeat = Heartbeat(json: frames[1]) { heartbeatHead = heartbeat.head }
                        continue
                    }
                    guard let event = try? RecordedEvent.fromBus(frames[1]) else {
                        if let line = unreadable.dropped(topic: frames[0], at: .now) { logger.warning(line) }
                        continue
                    }
                    if event.position < expected {
                        // Applied already, through history. The one at the checkpoint must be the
                        // event the file applied there: another is a sign the store is not the file's.
                        if event.position == database.checkpoint, event.hash != database.chainHash {
                            storeConfirmed = false
                            needsHistory = .notTheApplied(event.position)
                            break
                        }
                        continue
                    }
                    if event.position > expected {
                        needsHistory = .gap(at: expected)
                        break
                    }
                    if event.prevHash != (batch.last?.hash ?? database.chainHash) {
                        // History says first whether the store is still the file's; if it is, the
                        // event is judged (and stops the projection) as it comes from there.
                        storeConfirmed = false
                        needsHistory = .offTheChain(event.position)
                        break
                    }
                    if historyOpened != nil, HistoryOpenedValues.needsHistory(event) {
                        needsHistory = .personalData(event.position)
                        break
                    }
                    batch.append(event)
                    expected += 1
                }
            } catch {
                return .failed(ProjectorError(.bus, "the subscriber failed: \(error)"))
            }
            do {
                try commit(batch)
            } catch where error.kind == .full {
                // Nothing of the batch was written: history has it, once there is room.
                noteFull(error)
                needsHistory = .diskWasFull
            } catch {
                return .failed(error)
            }
            if let head = heartbeatHead {
                learnt(heartbeat: head)
                // A head behind the checkpoint was sent before history's last answer, or the store
                // went back (restored from an older backup) and would otherwise pass unseen, its
                // new events dropped as applied already: history says which.
                if needsHistory == nil, head > database.checkpoint {
                    needsHistory = .heartbeatAhead(head)
                } else if needsHistory == nil, head < database.checkpoint {
                    needsHistory = .heartbeatBehind(head)
                }
            }
        }
        // Asked to stop while the batch in hand held a poison event: the loop ends before the
        // check at its top, but the stop is recorded and is what ended the projector.
        if let stop = database.stop { return .poisoned(stop) }
        return .stopped
    }

    /// Logs the catch-ups and unreadable messages counted and not yet logged: the loop has ended.
    mutating func logCountedLines() {
        for line in catchUpLines.remaining(at: .now) { logger.info(line) }
        for line in unreadable.remaining(at: .now) { logger.warning(line) }
    }

    /// Opens the file again when its path no longer names the one open (at most once a second):
    /// removed, as an operator clears a file to have it rebuilt, it is made again from position 0;
    /// replaced, the file now there is taken up and checked as at a start. Either way the projector
    /// had been applying events to a file no reader could reach. Returns whether it opened it again.
    private mutating func reopenIfDisplaced() throws(ProjectorError) -> Bool {
        guard ContinuousClock.now >= nextFileCheck else { return false }
        nextFileCheck = .now + .seconds(1)
        guard let what = database.displacement() else { return false }
        let path = settings.databasePath
        logger.warning(
            "\(path) \(what) while the projector ran: opening \(path) again"
                + (what == "was removed" ? ", to make it again from position 0 through history" : ""))
        // Closed first: the lock it holds would refuse the new file to this very process.
        database.closeDisplaced()
        database = try ProjectionDatabase(
            path: path, name: settings.name, projections: projections, opener: historyOpened ?? settings.opener,
            logger: logger)
        if database.wasReset {
            logger.warning("\(path) was made from another schema: rebuilding \(settings.name) from position 0")
        }
        storeConfirmed = false
        settings.metrics?.started(checkpoint: database.checkpoint)
        return true
    }

    /// A heartbeat's head, for the metrics. One below the checkpoint may have been sent before
    /// history's last answer, so it counts only as far as the checkpoint: history's own head
    /// is what shows a store gone back.
    private func learnt(heartbeat head: Int64) {
        settings.metrics?.learnt(head: max(head, database.checkpoint))
    }

    /// Reads history from the checkpoint until it reaches the head. Returns once it has, or the
    /// projection stopped at an event, or a stop was asked for.
    private mutating func catchUp(_ reason: CatchUpReason, isStopping: () -> Bool) throws(Interruption) {
        let from = database.checkpoint
        while !isStopping() {
            let confirmedNow = !storeConfirmed
            if !storeConfirmed {
                try confirmStore()
                storeConfirmed = true
            }
            let page = try read(after: database.checkpoint, limit: settings.historyPageSize)
            settings.metrics?.learnt(head: page.head)
            // A projector applies only what the store has: a head behind the checkpoint means the
            // store lost events the file holds.
            if page.head < database.checkpoint { throw .failed(ahead(of: page.head)) }
            if !confirmedNow, let first = page.events.first, first.prevHash != database.chainHash {
                storeConfirmed = false
                continue
            }
            do throws(HistoryError) {
                try historyOpened?.learn(page)
            } catch {
                throw .failed(ProjectorError(.history, error.message))
            }
            do {
                try commit(page.events)
            } catch {
                throw error.kind == .full ? .full(error) : .failed(error)
            }
            if database.stop != nil { return }  // the caller ends with the stop, which is logged
            if page.events.isEmpty || database.checkpoint >= page.head {
                settings.metrics?.caughtUp()
                if database.checkpoint > from {
                    let position = database.checkpoint
                    if let line = catchUpLines.caughtUp(reason, events: position - from, position: position, at: .now) {
                        logger.info(line)
                    }
                }
                return
            }
        }
    }

    /// Asks history for the event at the checkpoint, which must be the one the file applied last
    /// (the same hash): otherwise the file was made from another store, and applying what
    /// follows would break its chain. A new file has nothing to compare.
    private func confirmStore() throws(Interruption) {
        let checkpoint = database.checkpoint
        guard checkpoint > 0 else { return }
        let page = try read(after: checkpoint - 1, limit: 1)
        settings.metrics?.learnt(head: page.head)
        if page.head < checkpoint { throw .failed(ahead(of: page.head)) }
        guard let event = page.events.first, event.position == checkpoint else {
            throw .failed(
                ProjectorError(
                    .history, "history sent no event at position \(checkpoint), though its head is \(page.head)"))
        }
        guard event.hash == database.chainHash else {
            throw .failed(
                ProjectorError(
                    .otherStore,
                    ProjectorError.otherStore(
                        name: settings.name, checkpoint: checkpoint, storeHash: event.hash,
                        fileHash: database.chainHash)))
        }
        settings.metrics?.lastApplied(recordedAt: event.recordedAt)
    }

    private func ahead(of head: Int64) -> ProjectorError {
        ProjectorError(
            .ahead, "\(settings.name) AHEAD: " + ProjectorError.beyondHead(checkpoint: database.checkpoint, head: head))
    }

    /// A page of history, or why there is none.
    private func read(after position: Int64, limit: Int) throws(Interruption) -> HistoryPage {
        do {
            return try history.page(after: position, limit: limit)
        } catch {
            switch error.kind {
            case .unavailable:
                throw .unavailable(error.message)
            // No stop is recorded: the answer names no event (and a refused page would be
            // refused again after one was skipped).
            case .refused, .unreadable, .keyRefused:
                throw .failed(ProjectorError(.history, "reading history after position \(position): \(error.message)"))
            }
        }
    }

    /// Waits a second before history is asked again, reading the subscriber meanwhile: the bus
    /// may work while history does not, and its heartbeats keep the head known. Its events are
    /// let go: the catch-up that follows reads them from history, from the checkpoint on.
    private func pauseReadingHeartbeats(_ subscriber: ZMQSocket, isStopping: () -> Bool) throws(ProjectorError) {
        let until = ContinuousClock.now + .seconds(1)
        var head: Int64?
        do {
            while ContinuousClock.now < until, !isStopping() {
                guard try !zmqPollReadable([subscriber], timeoutMilliseconds: 100).isEmpty else { continue }
                while let frames = try subscriber.receive(wait: false) {
                    if frames.count == 2, frames[0] == Heartbeat.topic, let heartbeat = Heartbeat(json: frames[1]) {
                        head = heartbeat.head
                    }
                }
            }
        } catch {
            throw ProjectorError(.bus, "the subscriber failed: \(error)")
        }
        if let head { learnt(heartbeat: head) }
    }

    /// A full disk, said once while it lasts: like the service, the projector waits for room
    /// rather than end (under `strata up` it stayed down for the rest of the run, the read models
    /// ever further behind once there was room again).
    private mutating func noteFull(_ error: ProjectorError) {
        guard !diskFull else { return }
        diskFull = true
        logger.error(
            "cannot write \(settings.databasePath): the disk is full, and nothing of the batch is recorded "
                + "(\(error.message)); trying again a second after each try")
    }

    /// Applies a batch in one transaction; a failure of the file ends the projector, but for a full
    /// disk (`ProjectorError.Kind.full`), which the caller waits out.
    private mutating func commit(_ events: [RecordedEvent]) throws(ProjectorError) {
        guard !events.isEmpty else { return }
        let before = database.checkpoint
        try database.apply(events)
        if diskFull {
            diskFull = false
            logger.info("\(settings.databasePath) can be written again")
        }
        if let metrics = settings.metrics, database.checkpoint > before {
            // A stop part-way applies only the events before it; the checkpoint says how many.
            let last = events.last { $0.position == database.checkpoint }
            let position = database.checkpoint
            metrics.applied(count: Int(position - before), checkpoint: position, lastRecordedAt: last?.recordedAt)
        }
        if let stop = database.stop {
            logger.error("\(settings.name) \(stop)")
        }
        onCommit?(Projector.Commit(events: events, committedAt: .now()))
    }
}
