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
final class HistoryResponder {
    static let readBurst = 64

    private let router: ZMQSocket
    private let store: any EventStore
    private let gate: RequestGate
    private let control: ServerControl
    private let clock: any WallClock
    private let opener: (any PersonalDataOpening)?
    let endpoint: String

    init(
        endpoint: String, store: any EventStore, gate: RequestGate, control: ServerControl, clock: any WallClock,
        opener: (any PersonalDataOpening)? = nil
    ) throws(ZMQError) {
        router = try control.clientFacingSocket(.router, lingerMilliseconds: 1000)
        try router.setMaximumMessageSize(CommandIngress.maximumFrameBytes)
        try router.bind(endpoint)
        self.endpoint = try router.lastEndpoint()
        self.store = store
        self.gate = gate
        self.control = control
        self.clock = clock
        self.opener = opener
    }

    func run() throws(ZMQError) {
        while !control.isStopping {
            guard try !zmqPollReadable([router], timeoutMilliseconds: 50).isEmpty else { continue }
            for _ in 0..<Self.readBurst {
                guard let frames = try router.receive(wait: false, copying: RequestGate.frameCount) else { break }
                if let (routingId, reply) = answer(frames) { try router.send([routingId, [], reply]) }
            }
        }
        router.close()
    }

    /// Whom to answer and what: a page of history or a refusal; nil for a message without
    /// a routing id, which cannot be answered.
    func answer(_ frames: [[UInt8]]) -> (routingId: [UInt8], reply: [UInt8])? {
        let admitted: RequestGate.Admitted<HistoryRequest>
        switch gate.admit(frames, now: clock.now().secondsSinceEpoch, readBody: HistoryRequest.parse) {
        case nil: return nil
        case .failure(let refused)?: return (refused.routingId, Self.refusal(refused.error))
        case .success(let request)?: admitted = request
        }
        // A key without the scope is refused before the values are judged (CONTRACT.md's order).
        if admitted.body.open && !admitted.key.scopes.contains(.personalData) {
            let error = StrataError(
                .forbidden, reason: "KEY_SCOPE", "key \(admitted.key.id) lacks the personal-data scope that open needs")
            return (admitted.routingId, Self.refusal(error))
        }
        return (admitted.routingId, page(for: admitted.body))
    }

    private func page(for request: HistoryRequest) -> [UInt8] {
        if let problem = request.problem { return Self.refusal(problem) }
        let events: [RecordedEvent]
        let head: Int64
        do throws(StoreError) {
            events = try store.events(after: request.after, limit: Int(request.limit), filter: request.filter)
            // Read after the page, so the head is never behind the events it comes with.
            head = try store.head()
        } catch {
            control.logger.error("history: cannot read the store: \(error)")
            return Self.refusal(StrataError(.internal, reason: "STORE_FAILURE", "history could not be read: \(error)"))
        }
        guard request.open else { return Self.page(events, head: head) }
        guard let opener else {
            return Self.refusal(
                StrataError(.internal, reason: "NO_KEY_STORE", "this service cannot open personal data"))
        }
        switch Self.opened(events, with: opener) {
        case .success(let opened):
            return Self.page(events, head: head, opened: opened)
        case .failure(let error):
            control.logger.error("history: \(error.message)")
            return Self.refusal(error)
        }
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

    /// `{"events":[…],"head":N,"ok":true}`, splicing each event's stored canonical bytes, with
    /// `"opened":{…}` last when personal data was asked for.
    static func page(_ events: [RecordedEvent], head: Int64, opened: [String: JSONValue]? = nil) -> [UInt8] {
        var out: [UInt8] = Array(#"{"events":["#.utf8)
        for (index, event) in events.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: event.json)
        }
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
