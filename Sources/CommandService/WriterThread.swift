import Bus
import EventStore
import Dispatch
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
    let endpoint: String

    init(
        writer: CommandWriter, head: Int64, eventsEndpoint: String, repliesEndpoint: String, queue: ArrivalQueue,
        signer: CheckpointSigner?, batchLimit: Int, heartbeatInterval: TimeInterval, publisherHighWaterMark: Int32,
        control: ServerControl
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
        let committed = batch.isEmpty ? CommandWriter.Committed(replies: [], events: []) : writer.process(batch)
        if !batch.isEmpty { noteOutcome(committed.failure, commands: batch.count) }
        var next = 0
        for arrival in arrivals {
            switch arrival {
            case .refused(let routingId, let reply):
                try replies.send([routingId, [], reply])
            case .command:
                let (routingId, reply) = committed.replies[next]
                next += 1
                try replies.send([routingId, [], reply.json])
            }
        }
        for event in committed.events {
            try publisher.send([eventTopic(category: event.category, type: event.type), event.json])
        }
        if let last = committed.events.last { head = last.position }
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
