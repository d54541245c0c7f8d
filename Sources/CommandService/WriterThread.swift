import Bus
import EventStore
import Dispatch
import Domain
import Foundation
import StrataCore

/// The writer's thread: the only one that touches the event store for writing. It owns
/// the PUB socket and the inproc PUSH socket that carries replies to the commands thread.
///
/// Each turn takes every arrival waiting (up to `batchLimit`), decides the commands and
/// commits them in one transaction (`CommandWriter`), and only then replies to every
/// arrival in order and publishes the new events in position order. About once a second
/// it publishes a heartbeat with the head. Between turns it signs the head when a
/// checkpoint is due, and once more when it stops gracefully.
///
/// As it replies it accounts for each command (an error line for one answered INTERNAL, at
/// debug level a line for every one, a count when metrics are on), and hands the batch's
/// counts to the metrics once, after publishing.
final class WriterThread {
    private let writer: CommandWriter
    private let publisher: ZMQSocket
    private let replies: ZMQSocket
    private let queue: ArrivalQueue
    private let signer: CheckpointSigner?
    private let batchLimit: Int
    private let heartbeatInterval: TimeInterval
    private let logger: Logger
    private var head: Int64
    /// Batches the store refused in a row: the first is logged, and the recovery, not each one.
    private var failedBatches = 0
    private let metrics: ServiceMetrics?
    private var tally = BatchTally()
    let endpoint: String

    init(
        writer: CommandWriter, head: Int64, eventsEndpoint: String, repliesEndpoint: String, queue: ArrivalQueue,
        signer: CheckpointSigner?, batchLimit: Int, heartbeatInterval: TimeInterval, publisherHighWaterMark: Int32,
        control: ServerControl, metrics: ServiceMetrics?
    ) throws(ZMQError) {
        publisher = try control.clientFacingSocket(.publisher, lingerMilliseconds: 2000)
        // A subscriber that falls this far behind loses messages (PUB drops at the mark)
        // and catches up through history.
        try publisher.setHighWaterMarks(send: publisherHighWaterMark, receive: 1000)
        try publisher.bind(eventsEndpoint)
        endpoint = try publisher.lastEndpoint()
        replies = try ZMQSocket(control.context, .push, lingerMilliseconds: 2000)
        try replies.setHighWaterMarks(send: 0, receive: 0)
        try replies.connect(repliesEndpoint)
        self.writer = writer
        self.head = head
        self.queue = queue
        self.signer = signer
        self.batchLimit = batchLimit
        self.heartbeatInterval = heartbeatInterval
        logger = control.logger
        self.metrics = metrics
    }

    /// Runs until the queue is closed and drained, then tells the commands thread it is done.
    func run() throws(ZMQError) {
        var nextHeartbeat = DispatchTime.now()
        while true {
            let (arrivals, finished) = queue.take(limit: batchLimit, waitingUntil: nextHeartbeat)
            if !arrivals.isEmpty { try handle(arrivals) }
            signer?.tick(head: head)
            if DispatchTime.now() >= nextHeartbeat {
                try publisher.send(Heartbeat(head: head).frames)
                nextHeartbeat = DispatchTime.now() + heartbeatInterval
            }
            if finished { break }
        }
        signer?.finish(head: head)
        try publisher.send(Heartbeat(head: head).frames)
        try replies.send([Array("done".utf8)])
        publisher.close()
        replies.close()
    }

    private func handle(_ arrivals: [Arrival]) throws(ZMQError) {
        var batch: [CommandWriter.Pending] = []
        batch.reserveCapacity(arrivals.count)
        for case .command(let pending) in arrivals { batch.append(pending) }
        guard !batch.isEmpty else {
            for case .refused(let routingId, let reply) in arrivals { try replies.send([routingId, [], reply]) }
            return
        }
        let started = ContinuousClock.now
        let committed = writer.process(batch)
        let batchDuration = started.duration(to: .now)
        noteOutcome(committed.failure, commands: batch.count)
        if let erasureFailure = committed.erasureFailure { logger.error(erasureFailure) }
        let debug = logger.isEnabled(.debug)
        var next = 0
        for arrival in arrivals {
            switch arrival {
            case .refused(let routingId, let reply):
                try replies.send([routingId, [], reply])
            case .command:
                let (routingId, reply) = committed.replies[next]
                try replies.send([routingId, [], reply.json])
                account(reply, of: batch, at: next, debug: debug)
                next += 1
            }
        }
        for event in committed.events {
            try publisher.send([eventTopic(category: event.category, type: event.type), event.json])
        }
        if let last = committed.events.last { head = last.position }
        if let metrics {
            tally.commandCount = batch.count
            tally.events = committed.events.count
            tally.head = head
            tally.commitDuration = committed.commitDuration
            tally.batchDuration = batchDuration
            metrics.record(tally)
            tally.reset()
        }
    }

    /// One answered command, for the metrics and the log: counted into the batch's tally when
    /// metrics are on, logged as an error when it was answered INTERNAL (in the first refused
    /// batch of a run of them), and at debug level
    /// logged whatever it was. It works on the reply already in hand for sending and reads the
    /// command in place, so with metrics and debug off it costs a comparison or two.
    private func account(_ reply: CommandReply, of batch: [CommandWriter.Pending], at index: Int, debug: Bool) {
        let outcome: CommandOutcomeLabel
        var failed = false
        switch reply {
        case .accepted(_, let duplicate, _):
            outcome = duplicate ? .duplicate : .accepted
        case .refused(_, let duplicate, let error):
            outcome = duplicate ? .duplicate : .refused(error.code)
            failed = error.code == .internal && !duplicate
        }
        // The commands of the first batch the store refuses are errors with their ids; while
        // the store keeps refusing (a full disk), the rest are logged at debug level only.
        if failed && failedBatches <= 1 {
            logger.error(Self.line(batch[index].body, outcome, reply))
        } else if debug {
            logger.debug(Self.line(batch[index].body, outcome, reply))
        }
        if metrics != nil {
            tally.commands[BatchTally.Key(type: batch[index].body.type, outcome: outcome), default: 0] += 1
        }
    }

    /// `command=ID type=T outcome=accepted position=FIRST-LAST`, or for a refusal
    /// `command=ID type=T outcome=refused code=C reason=R message="…"`; a duplicate says
    /// `outcome=duplicate` and what the journal holds.
    static func line(_ body: CommandBody, _ outcome: CommandOutcomeLabel, _ reply: CommandReply) -> String {
        var events: [AppendedEvent] = []
        var error: StrataError?
        switch reply {
        case .accepted(_, _, let appended): events = appended
        case .refused(_, _, let refusal): error = refusal
        }
        let type = Command.isKnownType(body.type) ? body.type : "UnknownCommand"
        var text = "command=\(Logger.field(body.id)) type=\(type) outcome="
        switch outcome {
        case .accepted: text += "accepted"
        case .duplicate: text += "duplicate"
        case .refused: text += "refused"
        }
        if let first = events.first, let last = events.last {
            text += " position=\(first.position)-\(last.position)"
        }
        if let error {
            text += " code=\(error.code.rawValue)"
            if let reason = error.reason { text += " reason=\(Logger.field(reason))" }
            text += " message=\(Logger.field(error.message))"
        }
        return text
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
