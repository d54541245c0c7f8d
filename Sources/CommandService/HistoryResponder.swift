import Bus
import EventStore
import Events
import StrataCore

/// The history endpoint's thread: it owns the ROUTER socket and a read-only connection to
/// the store, so catch-up reads never wait on the writer nor slow it down.
///
/// Requests are signed like commands and need the `history` scope. The reply is
/// `{"events":[…],"head":N,"ok":true}`, each event exactly as stored and published. A request
/// with `"open":true` from a key with the `personal-data` scope also gets
/// `"opened":{"<position>":{"<JSON pointer>":"<clear text or [erased]>",…},…}` for the events
/// that carry sealed personal data, opened through the key store (`OpenedFields`).
///
/// What a client that stops reading can make it hold is bounded: a page stops once its events
/// pass `pageBytes`, at most `sendHighWaterMark` replies wait in libzmq for one connection, and
/// a little more in `ReplyBacklog` (small replies to a client that pipelines). A reply beyond
/// them is dropped (the socket reports it rather than blocking this thread on one slow client),
/// counted in `strata_history_replies_dropped_total` and logged, gathered, by `DroppedReplies`.
/// What many such clients make it hold together is bounded too: replies waiting in libzmq are
/// counted (`HeldBytes`), and once they pass `heldBudget` pages shrink to `smallPageBytes`.
final class HistoryResponder {
    static let readBurst = 64
    /// Replies that may wait, per connection, for a client to read them. A client that reads
    /// its replies (Strata's projectors and the documented client keep one request in flight)
    /// never has more than one waiting; a few more leave room for a client that pipelines
    /// some. libzmq's default, 1,000, let a client that pipelined and stopped reading make the
    /// service hold 1,000 pages for it, gigabytes; 4 pages of at most `pageBytes` are about
    /// 16 MiB, and libzmq holds one more while it writes it to the connection. The mark counts
    /// replies, not bytes: small ones that reach it wait in `ReplyBacklog` instead.
    static let sendHighWaterMark: Int32 = 4
    /// A page stops adding events once they hold this many bytes, with always at least one
    /// event, so that it moves a reader on: 10,000 events of a large type (an invoice with
    /// many lines) would be hundreds of MiB. Fewer events than asked for is a normal answer,
    /// and readers page until they reach `head` (protocol.md).
    static let pageBytes = 4 * 1024 * 1024
    /// Bytes of replies that may wait in libzmq, for all connections together, before pages
    /// shrink. A connection holds up to 5 replies (`sendHighWaterMark` and the one being
    /// written), 20 MiB of long pages: thirty clients that stopped reading made the service hold
    /// 460 MiB. Readers that read take their pages out of the count as fast as they come.
    static let heldBudget = 64 * 1024 * 1024
    /// What a page may hold, at least, while replies past `heldBudget` wait: a reader still
    /// moves on (about 160 events of a usual size a page), and a connection that stopped reading
    /// holds 5 × 64 KiB more.
    static let smallPageBytes = 64 * 1024
    /// Events read from the store at a time while a page is filled: a page that stops at
    /// `pageBytes` reads not much more than it sends.
    static let readSlice = 500

    private let router: ZMQSocket
    private let store: any EventStore
    private var gate: FollowingGate
    private let control: ServerControl
    private let clock: any WallClock
    private let opener: (any PersonalDataOpening)?
    private let metrics: ServiceMetrics?
    private var dropped = DroppedReplies()
    /// Requests refused for a store or a key store that cannot be read, by what could not be:
    /// a client that asks again while it lasts (a projector asks every second) had a line logged
    /// for each request. The last error of each kind is told.
    private var failures = RepeatedLines(empty: "")
    private let held = HeldBytes()
    let endpoint: String

    init(
        endpoint: String, store: any EventStore, gate: FollowingGate, control: ServerControl, clock: any WallClock,
        opener: (any PersonalDataOpening)? = nil, metrics: ServiceMetrics? = nil
    ) throws(ZMQError) {
        router = try control.clientFacingSocket(.router, lingerMilliseconds: 1000)
        try router.setMaximumMessageSize(CommandIngress.maximumFrameBytes)
        // Requests as libzmq's default has them; replies few (above).
        try router.setHighWaterMarks(send: Self.sendHighWaterMark, receive: 1000)
        try router.reportUnroutable()
        try router.bind(endpoint)
        self.endpoint = try router.lastEndpoint()
        self.store = store
        self.gate = gate
        self.control = control
        self.clock = clock
        self.opener = opener
        self.metrics = metrics
    }

    func run() throws(ZMQError) {
        var backlog = ReplyBacklog(held: held)
        // How long to wait before trying the kept replies again: short while they move, doubled
        // up to the idle poll's 50 ms while none does, so a client that stopped reading with
        // replies kept for it does not wake this thread every 2 ms for as long as it stays.
        var retry = 2
        var reportedHeld = 0
        while !control.isStopping {
            if let line = dropped.due(at: .now) { control.logger.log(line.level, line.text) }
            for failure in failures.due(at: .now) { control.logger.error(Self.line(failure)) }
            let heldNow = held.bytes
            if heldNow != reportedHeld {
                metrics?.heldHistoryReplies(heldNow)
                reportedHeld = heldNow
            }
            // Replies kept back go out as libzmq makes room, which only trying tells this thread.
            let timeout = backlog.isEmpty ? 50 : retry
            let readable = try !zmqPollReadable([router], timeoutMilliseconds: timeout).isEmpty
            retry = try backlog.flush(on: router, dropped: drop) ? 2 : min(retry * 2, 50)
            guard readable else { continue }
            gate.refresh()
            let wasEmpty = backlog.isEmpty
            var answered: [HistoryOutcome: Int] = [:]
            for _ in 0..<Self.readBurst {
                guard let frames = try router.receive(wait: false, copying: RequestGate.frameCount) else { break }
                guard let answer = answer(frames) else { continue }
                answered[answer.outcome, default: 0] += 1
                try backlog.send(answer.reply, keyId: answer.keyId, to: answer.routingId, on: router, dropped: drop)
            }
            metrics?.answeredHistory(answered)
            if wasEmpty && !backlog.isEmpty { retry = 2 }
        }
        for failure in failures.remaining(at: .now) { control.logger.error(Self.line(failure)) }
        router.close()
    }

    /// A reply that could not be sent: counted, and logged now and then.
    private func drop(_ routed: ZMQSocket.Routed, keyId: String?) {
        metrics?.droppedHistoryReply(routed)
        if let line = dropped.dropped(routed, keyId: keyId, at: .now) { control.logger.log(line.level, line.text) }
    }

    /// Whom to answer and what: a page of history or a refusal, how it came out (for the
    /// metrics), and the key of a request the gate admitted; nil for a message without a
    /// routing id, which cannot be answered.
    func answer(
        _ frames: [[UInt8]]
    ) -> (routingId: [UInt8], keyId: String?, reply: [UInt8], outcome: HistoryOutcome)? {
        let admitted: RequestGate.Admitted<HistoryRequest>
        switch gate.gate.admit(frames, now: clock.now().secondsSinceEpoch, readBody: HistoryRequest.parse) {
        case nil: return nil
        case .failure(let refused)?:
            return (refused.routingId, nil, Self.refusal(refused.error), .refused(refused.error.code))
        case .success(let request)?: admitted = request
        }
        let page: Result<[UInt8], StrataError>
        // A key without the scope is refused before the values are judged (CONTRACT.md's order).
        if admitted.body.open && !admitted.key.scopes.contains(.personalData) {
            page = .failure(
                StrataError(
                    .forbidden, reason: "KEY_SCOPE",
                    "key \(admitted.key.id) lacks the personal-data scope that open needs"))
        } else {
            page = self.page(for: admitted.body)
        }
        switch page {
        case .success(let reply): return (admitted.routingId, admitted.key.id, reply, .page)
        case .failure(let error):
            return (admitted.routingId, admitted.key.id, Self.refusal(error), .refused(error.code))
        }
    }

    private func page(for request: HistoryRequest) -> Result<[UInt8], StrataError> {
        if let problem = request.problem { return .failure(problem) }
        let events: [RecordedEvent]
        let spliced: [UInt8]
        let head: Int64
        do throws(StoreError) {
            (events, spliced) = try Self.events(
                after: request.after, limit: Int(request.limit), filter: request.filter, from: store,
                pageBytes: Self.pageBytes(held: held.bytes))
            // Read after the page, so the head is never behind the events it comes with.
            head = try store.head()
        } catch {
            failed("cannot read the store", "\(error)")
            return .failure(StrataError(.internal, reason: "STORE_FAILURE", "history could not be read: \(error)"))
        }
        guard request.open else { return .success(Self.page(spliced: spliced, head: head)) }
        guard let opener else {
            return .failure(StrataError(.internal, reason: "NO_KEY_STORE", "this service cannot open personal data"))
        }
        switch Self.opened(events, with: opener) {
        case .success(let opened):
            return .success(Self.page(spliced: spliced, head: head, opened: opened))
        case .failure(let error):
            failed("cannot open personal data", error.message)
            return .failure(error)
        }
    }

    /// Logs a request refused as the store or the key store could not be read: the first of
    /// `kind` at once, the others gathered (`failures`).
    private func failed(_ kind: String, _ message: String) {
        switch failures.note(kind, at: .now, adding: { $0 = message }) {
        case .first: control.logger.error("history: \(kind): \(message)")
        case .counted: break
        case .gathered(let gathered): control.logger.error(Self.line(gathered))
        }
    }

    /// `history: cannot read the store 41 more times in 60 s, the last: …`.
    private static func line(_ gathered: RepeatedLines<String>.Gathered) -> String {
        "history: \(gathered.kind) \(gathered.moreTimes) in \(gathered.seconds) s, the last: \(gathered.tally)"
    }

    /// The `opened` member of a page: each event's sealed fields in clear, by position. A
    /// value that does not open is `PERSONAL_DATA_UNREADABLE`, which the same request gets
    /// again; a key store that cannot be read (a damaged page, an I/O error) is
    /// `KEY_STORE_FAILURE`, which says nothing of the values and may clear, so a projector
    /// asks again later rather than ending as if the page could never be opened.
    static func opened(
        _ events: [RecordedEvent], with opener: any PersonalDataOpening
    ) -> Result<[String: JSONValue], StrataError> {
        var opened: [String: JSONValue] = [:]
        do throws(PersonalDataError) {
            for event in events {
                let fields = try OpenedFields.of(event, with: opener)
                if !fields.isEmpty { opened[String(event.position)] = .object(fields.mapValues { .string($0) }) }
            }
        } catch {
            let reason = error.kind == .keyStore ? "KEY_STORE_FAILURE" : "PERSONAL_DATA_UNREADABLE"
            return .failure(StrataError(.internal, reason: reason, error.message))
        }
        return .success(opened)
    }

    /// What the next page may hold while `held` bytes of replies wait in libzmq: `pageBytes`,
    /// less as the count nears `heldBudget`, and never under `smallPageBytes`.
    static func pageBytes(held: Int) -> Int {
        max(smallPageBytes, min(pageBytes, heldBudget - held))
    }

    /// A page's events, at most `limit` after `position` that pass `filter`, read `readSlice`
    /// at a time, and stopped once they hold `pageBytes` (the event that passes it included, so
    /// never none while one follows); with them, their canonical bytes joined by commas, as the
    /// page carries them.
    static func events(
        after position: Int64, limit: Int, filter: EventFilter, from store: any EventStore, pageBytes: Int
    ) throws(StoreError) -> (events: [RecordedEvent], spliced: [UInt8]) {
        var events: [RecordedEvent] = []
        var spliced: [UInt8] = []
        var after = position
        while events.count < limit && spliced.count < pageBytes {
            let asked = min(readSlice, limit - events.count)
            let slice = try store.events(after: after, limit: asked, filter: filter)
            for event in slice {
                if !events.isEmpty { spliced.append(UInt8(ascii: ",")) }
                spliced.append(contentsOf: event.json)
                events.append(event)
                if spliced.count >= pageBytes { break }
            }
            // A short slice is the end of what passes the filter.
            guard slice.count == asked, let last = slice.last else { break }
            after = last.position
        }
        return (events, spliced)
    }

    /// `{"events":[…],"head":N,"ok":true}` around the events' canonical bytes, as
    /// `events(after:limit:filter:from:)` joins them, with
    /// `"opened":{…}` last when personal data was asked for.
    static func page(spliced: [UInt8], head: Int64, opened: [String: JSONValue]? = nil) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(spliced.count + 64)
        out.append(contentsOf: Array(#"{"events":["#.utf8))
        out.append(contentsOf: spliced)
        out.append(contentsOf: Array(#"],"head":\#(head),"ok":true"#.utf8))
        if let opened {
            out.append(contentsOf: Array(#","opened":"#.utf8))
            out.append(contentsOf: CanonicalJSON.bytes(.object(opened)))
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// A history refusal has the commands' shape; history requests have no id.
    static func refusal(_ error: StrataError) -> [UInt8] {
        CommandReply.refused(id: nil, duplicate: false, error: error).json
    }
}
