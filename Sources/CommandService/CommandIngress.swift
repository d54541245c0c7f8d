import Bus
import Dispatch
import Domain
import Events
import StrataCore
import SubjectKeys

/// The commands endpoint's thread: it owns the ROUTER socket. It reads requests, runs the
/// gate (framing, size, header, body, signature, freshness, scope), queues what passed, in
/// arrival order, for the writer, and sends the replies back out.
///
/// The replies come from the publisher's thread, which answers each batch the writer
/// committed, over an inproc PULL socket this thread also owns, so one `zmq_poll` wakes it
/// for either. The publisher's end marker comes after every reply, once the writer is done.
final class CommandIngress {
    /// Requests read from the socket per wake-up before replies get a turn.
    static let readBurst = 1024
    /// The largest frame libzmq accepts at all: bodies up to 1 MiB are answered TOO_LARGE,
    /// larger ones are dropped with their connection.
    static let maximumFrameBytes: Int64 = 1024 * 1024 + 4096
    /// Requests libzmq reads ahead from one connection: as many as `strata send` keeps in flight.
    /// It was 10,000, and 16 connections that sent without end held 190 MiB here.
    static let receiveHighWaterMark: Int32 = 1000

    private let router: ZMQSocket
    private let replies: ZMQSocket
    /// Its keys look at the key file between requests, and it follows them.
    private var gate: FollowingGate
    private let configuration: DomainConfiguration
    /// What the journal keeps of each body (`BodyDigest`).
    private let bodyDigest: BodyDigest
    private let queue: ArrivalQueue
    private let control: ServerControl
    private let clock: any WallClock
    private let metrics: ServiceMetrics?
    /// Refusals counted since the last hand-over to `metrics` (one per burst), and those of them
    /// not answered (`CommandReplyHold`).
    private var refusals: [StrataError.Code: Int] = [:]
    private var unanswered = 0
    /// The replies libzmq holds, and what follows when clients leave too many unread.
    private var hold = CommandReplyHold()
    private var reportedHeld = 0
    let endpoint: String

    init(
        endpoint: String, repliesEndpoint: String, gate: FollowingGate, configuration: DomainConfiguration,
        bodyDigest: BodyDigest, queue: ArrivalQueue, control: ServerControl, clock: any WallClock,
        metrics: ServiceMetrics?
    ) throws(ZMQError) {
        // Linger so the last replies still leave when the socket closes at shutdown.
        router = try control.clientFacingSocket(.router, lingerMilliseconds: 2000)
        try router.setMaximumMessageSize(Self.maximumFrameBytes)
        // Room for a pipelined client's whole burst of replies: a ROUTER drops, rather
        // than blocks, what is over a peer's high-water mark. What libzmq has read from a
        // connection and this thread has not (while the writer is behind) waits in memory, about
        // a kilobyte a request: past `receiveHighWaterMark` it stops reading the connection, and
        // the rest waits in the client's queue and TCP's, where it costs this process nothing.
        try router.setHighWaterMarks(send: 100_000, receive: Self.receiveHighWaterMark)
        try router.bind(endpoint)
        self.endpoint = try router.lastEndpoint()
        replies = try ZMQSocket(control.context, .pull)
        try replies.setHighWaterMarks(send: 0, receive: 0)
        try replies.bind(repliesEndpoint)
        self.gate = gate
        self.configuration = configuration
        self.bodyDigest = bodyDigest
        self.queue = queue
        self.control = control
        self.clock = clock
        self.metrics = metrics
    }

    /// Runs until the writer says it is done (after a stop), then answers everything still
    /// waiting UNAVAILABLE and closes the socket.
    func run() throws(ZMQError) {
        // However this thread ends (a fatal error, the context shut down by another thread's),
        // the writer must learn that nothing more will come, or it waits for commands forever
        // and the process never exits.
        defer { queue.close() }
        var queueClosed = false
        var writerDone = false
        while !writerDone {
            if control.isStopping && !queueClosed {
                queue.close()
                queueClosed = true
            }
            // While the writer is behind, leave requests in libzmq's queues (and TCP's). Once
            // stopping, leave them there until the writer has answered all it took, so that
            // an UNAVAILABLE never overtakes an earlier command's reply.
            gate.keys.follow()
            gate.refresh()
            watchHold()
            let readRequests = !queueClosed && queue.hasRoom
            let ready = try zmqPollReadable(readRequests ? [replies, router] : [replies], timeoutMilliseconds: 50)
            if ready.contains(0) { writerDone = try forwardReplies() }
            if readRequests && ready.contains(1) { try admitWaiting() }
        }
        try refuseWaiting()
        router.close()
        replies.close()
    }

    /// Sends every reply waiting; true once the end marker came (the writer is done and
    /// everything it took is answered).
    private func forwardReplies() throws(ZMQError) -> Bool {
        while let message = try replies.receive(wait: false) {
            if message.count == 1 { return true }
            // A peer over its high-water mark, or gone, loses its reply, as a ROUTER does.
            _ = try router.route(message[0], body: message[2], counting: hold.held)
        }
        return false
    }

    /// The held replies' gauge, the memory handed back once they are let go, and the log line
    /// about refusals left unanswered meanwhile.
    private func watchHold() {
        if let line = hold.turn(at: .now) { control.logger.warning(line) }
        let heldNow = hold.held.bytes
        if heldNow != reportedHeld {
            metrics?.heldCommandReplies(heldNow)
            reportedHeld = heldNow
        }
    }

    private func admitWaiting() throws(ZMQError) {
        var arrivals: [Arrival] = []
        for _ in 0..<Self.readBurst {
            guard let frames = try router.receive(wait: false, copying: RequestGate.frameCount) else { break }
            if let arrival = admit(frames) { arrivals.append(arrival) }
        }
        // The queue closes only on this thread, so the offer cannot be refused here.
        _ = queue.offer(arrivals)
        countRefusals()
    }

    private func countRefusals() {
        guard !refusals.isEmpty else { return }
        metrics?.refusedAtGate(refusals, unanswered: unanswered)
        refusals.removeAll()
        unanswered = 0
    }

    /// After the writer is done: every request still waiting gets its gate refusal or
    /// UNAVAILABLE, until the socket is empty (or a second has passed, against a client
    /// that never stops sending).
    private func refuseWaiting() throws(ZMQError) {
        let deadline = DispatchTime.now() + .seconds(1)
        while DispatchTime.now() < deadline, let frames = try router.receive(wait: false, copying: RequestGate.frameCount) {
            guard let arrival = admit(frames) else { continue }
            if case .command = arrival { refusals[.unavailable, default: 0] += 1 }
            let reply = Self.unavailable(arrival)
            _ = try router.route(reply[0], body: reply[2], counting: hold.held)
        }
        countRefusals()
    }

    /// One request through the gate: a command for the writer or a refusal already written.
    private func admit(_ frames: [[UInt8]]) -> Arrival? {
        let arrivedAt = clock.now()
        switch gate.gate.admit(frames, now: arrivedAt.secondsSinceEpoch, readBody: CommandBody.parse) {
        case nil:
            return nil
        case .failure(let refused)?:
            refusals[refused.error.code, default: 0] += 1
            if hold.leavesRefusalUnanswered() {
                unanswered += 1
                return nil
            }
            if control.logger.isEnabled(.debug) {
                let error = refused.error
                control.logger.debug(
                    "refused at the gate command=\(refused.id.map(Logger.field) ?? "-") code=\(error.code.rawValue) "
                        + "reason=\(Logger.field(error.reason ?? "-")) message=\(Logger.field(error.message))")
            }
            return .refused(
                routingId: refused.routingId,
                reply: CommandReply.refused(id: refused.id, duplicate: false, error: refused.error).json)
        case .success(let request)?:
            return .command(
                CommandWriter.Pending(
                    routingId: request.routingId, keyId: request.key.id, keyRoles: gate.roles[request.key.id],
                    body: request.body, bodyBytes: request.bodyBytes, digest: bodyDigest, arrivedAt: arrivedAt,
                    configuration: configuration))
        }
    }

    /// The answer to an arrival once the writer takes no more: its gate refusal if it had
    /// one, else UNAVAILABLE (not journaled, so a retry later is decided afresh).
    private static func unavailable(_ arrival: Arrival) -> [[UInt8]] {
        switch arrival {
        case .refused(let routingId, let reply):
            return [routingId, [], reply]
        case .command(let pending):
            let error = StrataError(.unavailable, reason: "SHUTTING_DOWN", "the service is stopping; send it again later")
            return [pending.routingId, [], CommandReply.refused(id: pending.body.id, duplicate: false, error: error).json]
        }
    }
}
