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
/// or a quiet bus sends it back to history. Its one thread owns both sockets and the
/// SQLite file; nothing here touches Swift's cooperative pool.
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

        public init(name: String, databasePath: String, eventsEndpoint: String, historyEndpoint: String, key: KeyFile.Key) {
            self.name = name
            self.databasePath = databasePath
            self.eventsEndpoint = eventsEndpoint
            self.historyEndpoint = historyEndpoint
            self.key = key
        }
    }

    /// How a projector ended.
    public enum Exit: Sendable, Equatable {
        /// Asked to stop; everything it took is committed.
        case stopped
        /// It reached an event it cannot apply (recorded in the file; see `strata status`).
        case poisoned(ProjectionStop)
        /// It could not go on: the file, the key, a socket.
        case failed(String)
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

    /// Opens the projection file (taking its lock) and starts the projector's thread.
    /// Throws when the file cannot be opened, is locked by another projector, or is stopped.
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
        let database: ProjectionDatabase
        let historyOpened = settings.openThroughHistory ? HistoryOpenedValues() : nil
        do {
            database = try ProjectionDatabase(
                path: settings.databasePath, name: settings.name, projections: projections,
                opener: historyOpened ?? settings.opener)
        } catch {
            startFailure.withLock { $0 = error }
            started.signal()
            return
        }
        if database.wasReset {
            logger.warning("\(settings.databasePath) was made from another schema: rebuilding \(settings.name) from position 0")
        }
        if let stop = database.stop {
            startFailure.withLock {
                $0 = ProjectorError(
                    .stopped,
                    "\(settings.name) \(stop); fix the projection and run `strata project \(settings.name) --resume`, "
                        + "or pass over the event with `--skip \(stop.position) --reason TEXT`")
            }
            started.signal()
            return
        }
        checkpointAtStart.store(database.checkpoint, ordering: .releasing)
        settings.metrics?.started(checkpoint: database.checkpoint)
        started.signal()
        let exit = follow(database, historyOpened: historyOpened, onCommit: onCommit)
        checkpointAtEnd.store(database.checkpoint, ordering: .releasing)
        outcome.withLock { $0 = exit }
    }

    private func follow(
        _ database: ProjectionDatabase, historyOpened: HistoryOpenedValues?, onCommit: (@Sendable (Commit) -> Void)?
    ) -> Exit {
        let context: ZMQContext
        let subscriber: ZMQSocket
        do {
            context = try ZMQContext()
            // Subscribe before reading the checkpoint: whatever is published from now on
            // waits in the socket while history fills the gap behind it.
            subscriber = try ZMQSocket(context, .subscriber)
            try subscriber.setHighWaterMarks(send: 0, receive: settings.receiveHighWaterMark)
            if let bytes = settings.receiveBufferBytes { try subscriber.setOption(ZMQ_RCVBUF, bytes) }
            if let curve = settings.curve { try subscriber.makeCurveClient(curve) }
            try subscriber.subscribe("")
            try subscriber.connect(settings.eventsEndpoint)
        } catch {
            return .failed("cannot subscribe to \(settings.eventsEndpoint): \(error)")
        }
        defer { subscriber.close() }
        let history = BusHistory(
            context: context, endpoint: settings.historyEndpoint, key: settings.key, curve: settings.curve,
            open: historyOpened != nil, timeoutMilliseconds: settings.historyTimeoutMilliseconds,
            shouldGiveUp: { [self] in isStopping })
        var follower = Follower(
            database: database, history: history, historyOpened: historyOpened, settings: settings, logger: logger,
            onCommit: onCommit)
        return follower.run(subscriber: subscriber, isStopping: { [self] in isStopping })
    }
}

/// The projector's loop, on its own thread.
private struct Follower {
    static let pollMilliseconds = 250

    let database: ProjectionDatabase
    let history: any HistorySource
    /// Set away from the service: personal data comes opened from history only.
    let historyOpened: HistoryOpenedValues?
    let settings: Projector.Settings
    let logger: Logger
    let onCommit: (@Sendable (Projector.Commit) -> Void)?

    private enum CatchUp {
        case done
        case retryLater(String)
        case failed(String)
    }

    mutating func run(subscriber: ZMQSocket, isStopping: () -> Bool) -> Projector.Exit {
        var needsHistory: String? = "on start"
        var unavailableSince: ContinuousClock.Instant?
        // Counted in empty polls rather than wall time, so that time the process did not
        // run (SIGSTOP, a suspended machine) is not taken for silence on the bus.
        var emptyPolls = 0
        let quietPolls = max(1, settings.quietMilliseconds / Self.pollMilliseconds)

        while !isStopping() {
            if let stop = database.stop { return .poisoned(stop) }
            if let reason = needsHistory {
                switch catchUp(reason, isStopping: isStopping) {
                case .done:
                    needsHistory = nil
                    if unavailableSince != nil { logger.info("history is answering again") }
                    unavailableSince = nil
                case .retryLater(let why):
                    if unavailableSince == nil {
                        logger.warning("\(why); retrying every second")
                        unavailableSince = .now
                    }
                    Self.pause(milliseconds: 1000, isStopping: isStopping)
                    continue
                case .failed(let why):
                    return .failed(why)
                }
                if let stop = database.stop { return .poisoned(stop) }
            }

            let readable: Bool
            do {
                readable = try !zmqPollReadable([subscriber], timeoutMilliseconds: Self.pollMilliseconds).isEmpty
            } catch {
                return .failed("the subscriber failed: \(error)")
            }
            guard readable else {
                emptyPolls += 1
                if emptyPolls >= quietPolls {
                    // No heartbeat either: the publisher may be gone; history says for sure.
                    needsHistory = "after a quiet bus"
                    emptyPolls = 0
                }
                continue
            }
            emptyPolls = 0
            var batch: [RecordedEvent] = []
            var expected = database.checkpoint + 1
            var announcedHead: Int64 = 0
            do {
                while batch.count < settings.batchLimit, let frames = try subscriber.receive(wait: false) {
                    guard frames.count == 2 else { continue }
                    if frames[0] == Heartbeat.topic {
                        if let heartbeat = Heartbeat(json: frames[1]) { announcedHead = max(announcedHead, heartbeat.head) }
                        continue
                    }
                    guard let event = try? RecordedEvent.fromBus(frames[1]) else {
                        logger.warning("dropped an unreadable message on topic \(String(decoding: frames[0], as: UTF8.self))")
                        continue
                    }
                    if event.position < expected { continue }  // already applied, through history
                    if event.position > expected {
                        needsHistory = "after a gap at position \(expected) (the bus dropped events)"
                        break
                    }
                    if historyOpened != nil, HistoryOpenedValues.needsHistory(event) {
                        needsHistory = "to open the personal data of position \(event.position)"
                        break
                    }
                    batch.append(event)
                    expected += 1
                }
            } catch {
                return .failed("the subscriber failed: \(error)")
            }
            if let failure = commit(batch) { return failure }
            if announcedHead > 0 { settings.metrics?.learnt(head: announcedHead) }
            if announcedHead > database.checkpoint, needsHistory == nil {
                needsHistory = "as the heartbeat's head \(announcedHead) is ahead"
            }
        }
        // Asked to stop while the batch in hand held a poison event: the loop ends before the
        // check at its top, but the stop is recorded and is what ended the projector.
        if let stop = database.stop { return .poisoned(stop) }
        return .stopped
    }

    /// Reads history from the checkpoint until it reaches the head.
    private mutating func catchUp(_ reason: String, isStopping: () -> Bool) -> CatchUp {
        let from = database.checkpoint
        while !isStopping() {
            let page: HistoryPage
            do {
                page = try history.page(after: database.checkpoint, limit: settings.historyPageSize)
            } catch {
                switch error.kind {
                case .unavailable: return .retryLater(error.message)
                // No stop is recorded: the answer names no event (and a refused page would be
                // refused again after one was skipped).
                case .refused, .unreadable:
                    return .failed("reading history after position \(database.checkpoint): \(error.message)")
                }
            }
            do throws(HistoryError) {
                try historyOpened?.learn(page)
            } catch {
                return .failed(error.message)
            }
            if let failure = commit(page.events) {
                if case .failed(let why) = failure { return .failed(why) }
                return .done  // poisoned: the caller sees database.stop
            }
            settings.metrics?.learnt(head: page.head)
            if database.stop != nil || page.events.isEmpty || database.checkpoint >= page.head { break }
        }
        settings.metrics?.caughtUp()
        if database.checkpoint > from {
            let position = database.checkpoint
            logger.info("caught up through history \(reason): events=\(position - from) position=\(position)")
        }
        return .done
    }

    /// Applies a batch in one transaction; a failure of the file ends the projector.
    private func commit(_ events: [RecordedEvent]) -> Projector.Exit? {
        guard !events.isEmpty else { return nil }
        let before = database.checkpoint
        do {
            try database.apply(events)
        } catch {
            return .failed("\(error)")
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
        return nil
    }

    private static func pause(milliseconds: Int, isStopping: () -> Bool) {
        var waited = 0
        while waited < milliseconds, !isStopping() {
            usleep(100_000)
            waited += 100
        }
    }
}
