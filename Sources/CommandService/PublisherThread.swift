import Bus
import Domain
import Dispatch
import EventStore
import Foundation
import StrataCore

/// The publisher's thread: it owns the PUB socket and the inproc PUSH socket that carries
/// replies to the commands thread, and does everything that follows a commit, so that the
/// writer's thread goes on to its next batch meanwhile.
///
/// For each turn of the writer (`PublicationQueue`) it replies to every arrival in order and
/// then publishes the new events in position order; only then does its head move. About once
/// a second it publishes a heartbeat with that head, so a heartbeat never names an event not
/// yet published. When the writer is finished it publishes a last heartbeat and then tells
/// the commands thread it is done: every reply goes out before that.
///
/// As it replies it accounts for each command (an error line for one answered INTERNAL, at
/// debug level a line for every one, a count when metrics are on), and hands the turn's
/// counts to the metrics once, after publishing.
///
/// Over CURVE it also keeps revoked keys off the live bus (`followKeys`).
final class PublisherThread {
    private let publisher: ZMQSocket
    private let replies: ZMQSocket
    private let publications: PublicationQueue
    private let heartbeatInterval: TimeInterval
    private let logger: Logger
    private let metrics: ServiceMetrics?
    private var tally = BatchTally()
    private var head: Int64
    let endpoint: String
    /// The keys in force, over CURVE; nil without it.
    private let keys: LiveKeys?
    private var keysGeneration: Int
    /// The client keys the events endpoint admitted at the last look.
    private var subscribable: Set<CurveKey>
    /// Since the endpoint was unbound to drop its subscribers, until it is bound again.
    private var unboundSince: ContinuousClock.Instant?

    /// The largest message a subscriber may send, a larger one disconnecting it. libzmq holds
    /// every message to it, the handshake's commands included: CURVE's INITIATE carries a few
    /// hundred bytes (with 256, CURVE subscribers could not connect). A subscription is a flag
    /// byte and a topic prefix, and topics (`invoiceseries.InvoiceSeriesNumberAllocated`) are
    /// far shorter.
    static let maximumSubscriptionBytes: Int64 = 1024

    /// Made on the thread that runs it: its sockets stay there.
    init(
        head: Int64, eventsEndpoint: String, repliesEndpoint: String, publications: PublicationQueue,
        heartbeatInterval: TimeInterval, publisherHighWaterMark: Int32, keys: LiveKeys?, control: ServerControl,
        metrics: ServiceMetrics?
    ) throws(ZMQError) {
        publisher = try control.clientFacingSocket(.publisher, lingerMilliseconds: 2000, domain: .events)
        // A subscriber that falls this far behind loses messages (PUB drops at the mark)
        // and catches up through history.
        try publisher.setHighWaterMarks(send: publisherHighWaterMark, receive: 1000)
        // What a PUB receives are subscriptions, and libzmq keeps each in a tree of about 32
        // bytes a byte, walked on this thread: one 1 MiB prefix cost 32 MiB and stalled every
        // reply while a subscriber's hundred of them were taken apart. A topic is far shorter.
        try publisher.setMaximumMessageSize(Self.maximumSubscriptionBytes)
        try publisher.bind(eventsEndpoint)
        endpoint = try publisher.lastEndpoint()
        replies = try ZMQSocket(control.context, .push, lingerMilliseconds: 2000)
        try replies.setHighWaterMarks(send: 0, receive: 0)
        try replies.connect(repliesEndpoint)
        self.head = head
        self.publications = publications
        self.heartbeatInterval = heartbeatInterval
        logger = control.logger
        self.metrics = metrics
        self.keys = keys
        keysGeneration = keys?.generation ?? 0
        subscribable = Set(keys?.current.eventsAllowList.keys ?? [:].keys)
    }

    /// Runs until the writer is finished, then tells the commands thread it is done. It
    /// closes the queue however it ends, so the writer never waits for it once it is gone.
    func run() throws(ZMQError) {
        defer { publications.close() }
        var nextHeartbeat = DispatchTime.now()
        while true {
            switch publications.take(waitingUntil: nextHeartbeat) {
            case .turn(let turn)?:
                try publish(turn)
            case .finished(let finalHead)?:
                head = finalHead
                try publisher.send(Heartbeat(head: head).frames)
                try replies.send([Array("done".utf8)])
                publisher.close()
                replies.close()
                return
            case nil:
                break
            }
            if DispatchTime.now() >= nextHeartbeat {
                try publisher.send(Heartbeat(head: head).frames)
                nextHeartbeat = DispatchTime.now() + heartbeatInterval
            }
            try followKeys()
        }
    }

    /// libzmq checks a client key only at the handshake, and a PUB cannot drop one subscriber:
    /// a key revoked (or no longer given the history scope) would go on receiving every event
    /// on a subscription it already had. So when the events endpoint stops admitting a key, the
    /// endpoint is unbound, which closes every connection accepted through it, and bound again.
    /// Each subscriber's libzmq reconnects (within 100 ms by default) and shakes hands anew,
    /// which the revoked key fails; the others see a gap or a heartbeat ahead of them and catch
    /// up through history, as after any lost message. Revocations are rare; the reconnects cost
    /// the subscribers a catch-up each.
    private func followKeys() throws(ZMQError) {
        if unboundSince != nil { try bindAgain() }
        guard let keys else { return }
        let generation = keys.generation
        guard generation != keysGeneration else { return }
        // The count before the keys: keys put in force in between are looked at again next time.
        keysGeneration = generation
        let admitted = Set(keys.current.eventsAllowList.keys)
        let lost = subscribable.subtracting(admitted)
        subscribable = admitted
        guard !lost.isEmpty, unboundSince == nil else { return }
        logger.info(
            "the events endpoint no longer admits \(String.counted(lost.count, "client key")) "
                + "(\(lost.map(\.z85).sorted().joined(separator: ", "))): closing every subscriber's connection, "
                + "so that the others reconnect and catch up through history, and those keys are refused")
        try publisher.unbind(endpoint)
        unboundSince = .now
        try bindAgain()
    }

    /// Binds the events endpoint again after `followKeys` unbound it. libzmq closes the old
    /// listening socket on its I/O thread, so the address may be in use for a moment: it tries
    /// for up to 200 ms here, and then again at each turn of the loop.
    private func bindAgain() throws(ZMQError) {
        guard let since = unboundSince else { return }
        let deadline = ContinuousClock.now + .milliseconds(200)
        while true {
            do {
                try publisher.bind(endpoint)
                unboundSince = nil
                let milliseconds = Int(((ContinuousClock.now - since).seconds * 1000).rounded())
                logger.info("the events endpoint \(endpoint) is bound again after \(milliseconds) ms")
                return
            } catch where error.code == EADDRINUSE {
                guard ContinuousClock.now < deadline else { return }
                usleep(5_000)
            }
        }
    }

    private func publish(_ turn: Publication.Turn) throws(ZMQError) {
        guard let committed = turn.committed else {
            for case .refused(let routingId, let reply) in turn.arrivals { try replies.send([routingId, [], reply]) }
            return
        }
        let debug = logger.isEnabled(.debug)
        var next = 0
        for arrival in turn.arrivals {
            switch arrival {
            case .refused(let routingId, let reply):
                try replies.send([routingId, [], reply])
            case .command(let pending):
                let (routingId, reply) = committed.replies[next]
                try replies.send([routingId, [], reply.json])
                account(reply, of: pending.body, logFailure: turn.logFailures, debug: debug)
                next += 1
            }
        }
        for event in committed.events {
            try publisher.send([eventTopic(category: event.category, type: event.type), event.json])
        }
        if let last = committed.events.last { head = last.position }
        if let metrics {
            tally.commandCount = next
            tally.events = committed.events.count
            tally.head = head
            // A batch the store refused committed nothing: its zero is no commit's time.
            tally.commitDuration = committed.failure == nil ? committed.commitDuration : nil
            tally.batchDuration = turn.batchDuration
            tally.cache = committed.cache
            metrics.record(tally)
            tally.reportedFolds = committed.cache.folded
            tally.reset()
        }
    }

    /// One answered command, for the metrics and the log: counted into the turn's tally when
    /// metrics are on, logged as an error when it was answered INTERNAL (in the first refused
    /// batch of a run of them), and at debug level logged whatever it was. It works on the
    /// reply already in hand for sending and reads the command in place, so with metrics and
    /// debug off it costs a comparison or two.
    private func account(_ reply: CommandReply, of body: CommandBody, logFailure: Bool, debug: Bool) {
        let outcome: CommandOutcomeLabel
        var failed = false
        switch reply {
        case .accepted(_, let duplicate, _):
            outcome = duplicate ? .duplicate : .accepted
        case .refused(_, let duplicate, let error):
            outcome = duplicate ? .duplicate : .refused(error.code)
            failed = error.code == .internal && !duplicate
        }
        if failed && logFailure {
            logger.error(Self.line(body, outcome, reply))
        } else if debug {
            logger.debug(Self.line(body, outcome, reply))
        }
        if metrics != nil {
            tally.commands[BatchTally.Key(type: body.type, outcome: outcome), default: 0] += 1
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
}
