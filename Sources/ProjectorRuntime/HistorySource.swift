import Bus
import EventStore
import StrataCore

/// Where a projector reads the events it missed: the history endpoint over the bus, or
/// the store file itself when co-located (rebuilds).
public protocol HistorySource {
    /// Events after `position`, in order, at most `limit`, and the head when they were read.
    func page(after position: Int64, limit: Int) throws(HistoryError) -> HistoryPage
}

public struct HistoryPage: Sendable {
    public let events: [RecordedEvent]
    /// The last committed position, read after the events: never behind them.
    public let head: Int64
    /// The personal data history opened beside the events, when asked to: position → JSON
    /// pointer into the event's `data` → clear text or `[erased]`.
    public let opened: [Int64: [String: String]]

    public init(events: [RecordedEvent], head: Int64, opened: [Int64: [String: String]] = [:]) {
        self.events = events
        self.head = head
        self.opened = opened
    }
}

/// Why history could not be read.
public struct HistoryError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable {
        /// No answer in time, the service is stopping, or its store could not be read: try again
        /// later.
        case unavailable
        /// The service refused the request, or failed in a way it would fail again (the key,
        /// its scope, personal data it cannot open): retrying will not help.
        case refused
        /// The answer or the store could not be read.
        case unreadable
        /// The service refused the key: unknown, a wrong signature or time, or a scope it lacks.
        /// It follows its key file, rereading it once a second, so a key added or widened a moment
        /// ago is refused until it has: `BusHistory` asks again for `keyGrace` before it gives up.
        case keyRefused
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// History read straight from the store file: what `rebuild` uses, and a projector
/// co-located with the store could.
public struct StoreHistory: HistorySource, Sendable {
    let store: any EventStore

    public init(store: any EventStore) {
        self.store = store
    }

    public func page(after position: Int64, limit: Int) throws(HistoryError) -> HistoryPage {
        do {
            let events = try store.events(after: position, limit: limit)
            return HistoryPage(events: events, head: try store.head())
        } catch {
            throw HistoryError(.unreadable, "cannot read the event store: \(error)")
        }
    }
}

/// History from the command service's history endpoint: signed requests on a DEALER,
/// CURVE-encrypted when `curve` is given.
///
/// It connects when made, so that an endpoint libzmq cannot use (a typo, an unknown transport)
/// is refused at once rather than taken, request after request, for a service that does not
/// answer. A request that gets no answer in time has its socket closed and made anew, so a
/// late reply to it can never be mistaken for the answer to the next request.
public final class BusHistory: HistorySource {
    private let context: ZMQContext
    private let endpoint: String
    private let key: KeyFile.Key
    private let curve: CurveClientKeys?
    /// Ask history to open the pages' personal data (`"open":true`; a `personal-data` key).
    private let open: Bool
    private let timeoutMilliseconds: Int
    private let shouldGiveUp: @Sendable () -> Bool
    private var client: SignedClient?
    /// When the key was first refused, of the refusals since the last answer that was not one.
    private var keyRefusedSince: ContinuousClock.Instant?
    /// The most events asked for while pages go unanswered: halved after each request that got
    /// no answer in time, doubled after each answer. On a link too slow or lossy to carry a full
    /// page (2,000 events, a few MB) within the timeout, over a connection made anew for each
    /// try, every try went unanswered and the projector never moved, however long the link
    /// stayed up; a short page is no sign of the end, so the catch-up simply asks again.
    private var pageCeiling: Int?

    /// How long a refused key is asked again (a second after each try) before the refusal counts:
    /// `strata keys new ID` and a projector started at once with `--key ID` ended with exit 1, the
    /// service not having read its key file yet.
    static let keyGrace: Duration = .seconds(5)

    /// - Parameter shouldGiveUp: checked while waiting, so a stopping projector does not
    ///   wait out the whole timeout.
    /// - Throws: when the socket cannot be made or connected to `endpoint`.
    public init(
        context: ZMQContext, endpoint: String, key: KeyFile.Key, curve: CurveClientKeys? = nil, open: Bool = false,
        timeoutMilliseconds: Int = 5000, shouldGiveUp: @escaping @Sendable () -> Bool = { false }
    ) throws(ZMQError) {
        self.context = context
        self.endpoint = endpoint
        self.key = key
        self.curve = curve
        self.open = open
        self.timeoutMilliseconds = timeoutMilliseconds
        self.shouldGiveUp = shouldGiveUp
        client = try makeClient()
    }

    private func makeClient() throws(ZMQError) -> SignedClient {
        try SignedClient(context, endpoint: endpoint, keyId: key.id, secret: key.secret, curve: curve)
    }

    deinit {
        client?.close()
    }

    public func page(after position: Int64, limit: Int) throws(HistoryError) -> HistoryPage {
        let asked = min(limit, pageCeiling ?? limit)
        var request: [String: JSONValue] = ["after": .integer(position), "limit": .integer(Int64(asked))]
        if open { request["open"] = .bool(true) }
        let body = CanonicalJSON.bytes(.object(request))
        var reply: [UInt8]?
        var waited = 0
        var sent = false
        do {
            // Made anew after a request went unanswered; the endpoint connected once already, so a
            // failure here (out of descriptors, say) may pass like the silence before it.
            let client = try self.client ?? makeClient()
            self.client = client
            // Never a send that waits: once the service refused this key at the handshake (or, with
            // libzmq 4.3.4, met a key file without CURVE), libzmq drops the connection and never
            // makes it again, and a DEALER without one blocks in zmq_send for ever, deaf to the
            // time-out and to a stop. A request it cannot take is awaited like an unanswered one.
            sent = try client.send(body, wait: false)
            while reply == nil, waited < timeoutMilliseconds, !shouldGiveUp() {
                if sent {
                    reply = try client.receive(timeoutMilliseconds: 100)
                } else {
                    _ = try zmqPollReadable([], orWritable: client.socket, timeoutMilliseconds: 100)
                    sent = try client.send(body, wait: false)
                }
                waited += 100
            }
        } catch {
            dropClient()
            throw HistoryError(.unavailable, "history request failed: \(error)")
        }
        guard let reply else {
            dropClient()
            // Given up for a stop that came meanwhile, not because the service kept silent.
            if waited < timeoutMilliseconds {
                throw HistoryError(.unavailable, "stopped while waiting \(waited) ms for an answer from \(endpoint)")
            }
            pageCeiling = max(1, asked / 2)
            throw HistoryError(.unavailable, "no answer from \(endpoint) within \(timeoutMilliseconds) ms")
        }
        if let ceiling = pageCeiling, asked == ceiling { pageCeiling = ceiling * 2 < limit ? ceiling * 2 : nil }
        do throws(HistoryError) {
            let page = try Self.parse(reply)
            keyRefusedSince = nil
            return page
        } catch {
            guard error.kind == .keyRefused else {
                keyRefusedSince = nil
                throw error
            }
            let since = keyRefusedSince ?? .now
            keyRefusedSince = since
            guard ContinuousClock.now - since < Self.keyGrace else { throw HistoryError(.refused, error.message) }
            throw HistoryError(
                .unavailable, error.message + " (the service rereads its key file once a second: a key added a moment "
                    + "ago is refused until then)")
        }
    }

    private func dropClient() {
        client?.close()
        client = nil
    }

    /// Reads `{"events":[…],"head":N,"ok":true}`, or the refusal in its place.
    static func parse(_ reply: [UInt8]) throws(HistoryError) -> HistoryPage {
        // The service splices stored canonical events into a canonical page: read it in one pass.
        let canonical = CanonicalJSONReader.read(reply) { r throws(CanonicalJSONReader.GiveUp) in
            try r.object { r throws(CanonicalJSONReader.GiveUp) -> HistoryPage in
                guard r.member("events") else { throw CanonicalJSONReader.GiveUp() }
                let events = try r.array { r throws(CanonicalJSONReader.GiveUp) in
                    try RecordedEvent(canonical: &r, depth: 3)
                }
                let head = try r.integer("head")
                guard r.member("ok"), try r.bool() else { throw CanonicalJSONReader.GiveUp() }
                return HistoryPage(events: events, head: head)
            }
        }
        if let canonical { return canonical }
        return try parseGenerally(reply)
    }

    /// Whether a refusal may not come again: the service was stopping, or its store or its key
    /// store could not be read (a full disk, an I/O error). Any other answer a retry would get
    /// again, such as a sealed value that does not open with its key (`PERSONAL_DATA_UNREADABLE`)
    /// or a service without a key store (`NO_KEY_STORE`).
    static func isTransient(code: String, reason: String) -> Bool {
        code == "UNAVAILABLE" || (code == "INTERNAL" && (reason == "STORE_FAILURE" || reason == "KEY_STORE_FAILURE"))
    }

    /// Whether a refusal is of the key itself, which the service's key file may settle within a
    /// second (`HistoryError.Kind.keyRefused`): unknown or mis-signed, or without the scope.
    static func isAboutTheKey(code: String, reason: String) -> Bool {
        code == "UNAUTHENTICATED" || (code == "FORBIDDEN" && reason == "KEY_SCOPE")
    }

    /// Reads a page of any layout, or the refusal in its place.
    static func parseGenerally(_ reply: [UInt8]) throws(HistoryError) -> HistoryPage {
        guard let json = try? JSONParser.parse(reply), case .object(let members) = json else {
            throw HistoryError(.unreadable, "history answered with something that is not a JSON object")
        }
        guard members["ok"]?.boolValue == true else {
            let code = json["error"]?["code"]?.stringValue ?? "?"
            let reason = json["error"]?["reason"]?.stringValue ?? "?"
            let message = json["error"]?["message"]?.stringValue ?? ""
            let kind: HistoryError.Kind =
                isTransient(code: code, reason: reason)
                ? .unavailable : isAboutTheKey(code: code, reason: reason) ? .keyRefused : .refused
            throw HistoryError(kind, "history refused the request: \(code) \(reason) \(message)")
        }
        guard let head = members["head"]?.integerValue, let items = members["events"]?.arrayValue else {
            throw HistoryError(.unreadable, "history's answer lacks events or head")
        }
        var events: [RecordedEvent] = []
        events.reserveCapacity(items.count)
        for item in items {
            do {
                events.append(try RecordedEvent(json: item))
            } catch {
                throw HistoryError(.unreadable, "history sent an unreadable event: \(error)")
            }
        }
        var opened: [Int64: [String: String]] = [:]
        for (position, fields) in members["opened"]?.objectValue ?? [:] {
            guard let position = Int64(position), let fields = fields.objectValue,
                case let values = fields.compactMapValues(\.stringValue), values.count == fields.count
            else {
                throw HistoryError(.unreadable, "history's opened personal data is not {position: {pointer: text}}")
            }
            opened[position] = values
        }
        return HistoryPage(events: events, head: head, opened: opened)
    }
}
