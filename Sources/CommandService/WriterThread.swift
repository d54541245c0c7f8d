import Dispatch
import EventStore
import Foundation
import StrataCore

/// The writer's thread: the only one that touches the event store for writing.
///
/// Each turn takes every arrival waiting (up to `batchLimit`), decides the commands and
/// commits them in one transaction (`CommandWriter`), and hands the turn to the publisher's
/// thread (`PublisherThread`), which replies and publishes while this one goes on to the
/// next. Between turns it signs the head when a checkpoint is due, and once more when it
/// stops gracefully, and finishes erasures whose key the key store failed to destroy.
final class WriterThread {
    private let writer: CommandWriter
    private let queue: ArrivalQueue
    private let publications: PublicationQueue
    private let signer: CheckpointSigner?
    private let batchLimit: Int
    /// How long it waits for arrivals before looking whether a checkpoint is due.
    private let idleInterval: TimeInterval
    private let logger: Logger
    private var head: Int64
    /// Batches the store refused in a row: the first is logged, and the recovery, not each one.
    private var failedBatches = 0
    /// Whether the clock is behind the recorded instants, said when that starts and ends.
    private var clockHold = ClockHold()
    /// When to try again to finish erasures whose key the key store kept: at most once a
    /// second, since each try may wait out the key store's busy timeout.
    private var nextErasureAttempt = ContinuousClock.now

    init(
        writer: CommandWriter, head: Int64, queue: ArrivalQueue, publications: PublicationQueue,
        signer: CheckpointSigner?, batchLimit: Int, idleInterval: TimeInterval, logger: Logger
    ) {
        self.writer = writer
        self.head = head
        self.queue = queue
        self.publications = publications
        self.signer = signer
        self.batchLimit = batchLimit
        self.idleInterval = idleInterval
        self.logger = logger
    }

    /// Runs until the queue is closed and drained, then tells the publisher it is finished.
    func run() {
        while true {
            let (arrivals, finished) = queue.take(limit: batchLimit, waitingUntil: .now() + idleInterval)
            if writer.owesErasures, ContinuousClock.now >= nextErasureAttempt {
                nextErasureAttempt = .now + .seconds(1)
                for subject in writer.finishErasures() {
                    logger.info("the key of \(subject) is destroyed now: its erasure is complete")
                }
            }
            if arrivals.isEmpty { writer.keepWriterLock() } else { handle(arrivals) }
            signer?.tick(head: head)
            if finished { break }
        }
        signer?.finish(head: head)
        publications.put(.finished(head: head))
    }

    private func handle(_ arrivals: [Arrival]) {
        var batch: [CommandWriter.Pending] = []
        batch.reserveCapacity(arrivals.count)
        for case .command(let pending) in arrivals { batch.append(pending) }
        guard !batch.isEmpty else {
            publications.put(.turn(.init(arrivals: arrivals, committed: nil, batchDuration: .zero, logFailures: false)))
            return
        }
        let started = ContinuousClock.now
        let committed = writer.process(batch)
        let batchDuration = started.duration(to: .now)
        noteOutcome(committed.failure, commands: batch.count)
        if let note = clockHold.note(behind: writer.clockBehindMilliseconds, instant: writer.lastInstant) {
            if note.warning { logger.warning(note.line) } else { logger.info(note.line) }
        }
        if let erasureFailure = committed.erasureFailure { logger.error(erasureFailure) }
        if let last = committed.events.last { head = last.position }
        publications.put(
            .turn(
                .init(
                    arrivals: arrivals, committed: committed, batchDuration: batchDuration,
                    logFailures: failedBatches <= 1)))
    }

    /// A full disk refuses every batch until space returns: one line when it starts, one when
    /// it ends, rather than one a batch.
    private func noteOutcome(_ failure: StoreError?, commands: Int) {
        if let failure {
            if failedBatches == 0 {
                logger.error(
                    "the store refused a batch of \(commands) commands (answered INTERNAL, nothing recorded): "
                        + "\(failure); further refusals are logged when a batch commits again")
            }
            failedBatches += 1
        } else if failedBatches > 0 {
            logger.info("the store records commands again after \(failedBatches) refused batches")
            failedBatches = 0
        }
    }
}
