import Bus
import EventStore
import StrataCore

/// The history endpoint's thread: it owns the ROUTER socket and a read-only connection to
/// the store, so catch-up reads never wait on the writer nor slow it down.
///
/// Requests are signed like commands and need the `history` scope. The reply is
/// `{"events":[…],"head":N,"ok":true}`, each event exactly as stored and published.
final class HistoryResponder {
    static let readBurst = 64

    private let router: ZMQSocket
    private let store: any EventStore
    private let gate: RequestGate
    private let control: ServerControl
    private let clock: any WallClock
    let endpoint: String

    init(endpoint: String, store: any EventStore, gate: RequestGate, control: ServerControl, clock: any WallClock)
        throws(ZMQError)
    {
        router = try control.clientFacingSocket(.router, lingerMilliseconds: 1000)
        try router.setMaximumMessageSize(CommandIngress.maximumFrameBytes)
        try router.bind(endpoint)
        self.endpoint = try router.lastEndpoint()
        self.store = store
        self.gate = gate
        self.control = control
        self.clock = clock
    }

    func run() throws(ZMQError) {
        while !control.isStopping {
            guard try !zmqPollReadable([router], timeoutMilliseconds: 50).isEmpty else { continue }
            for _ in 0..<Self.readBurst {
                guard let frames = try router.receive(wait: false) else { break }
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
        return (admitted.routingId, page(for: admitted.body))
    }

    private func page(for request: HistoryRequest) -> [UInt8] {
        if let problem = request.problem { return Self.refusal(problem) }
        do throws(StoreError) {
            let events = try store.events(after: request.after, limit: Int(request.limit), filter: request.filter)
            // Read after the page, so the head is never behind the events it comes with.
            let head = try store.head()
            return Self.page(events, head: head)
        } catch {
            control.logger.error("history: cannot read the store: \(error)")
            return Self.refusal(StrataError(.internal, reason: "STORE_FAILURE", "history could not be read: \(error)"))
        }
    }

    /// `{"events":[…],"head":N,"ok":true}`, splicing each event's stored canonical bytes.
    static func page(_ events: [RecordedEvent], head: Int64) -> [UInt8] {
        var out: [UInt8] = Array(#"{"events":["#.utf8)
        for (index, event) in events.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: event.json)
        }
        out.append(contentsOf: Array(#"],"head":\#(head),"ok":true}"#.utf8))
        return out
    }

    /// A history refusal has the commands' shape; history requests have no id.
    static func refusal(_ error: StrataError) -> [UInt8] {
        CommandReply.refused(id: nil, duplicate: false, error: error).json
    }
}
