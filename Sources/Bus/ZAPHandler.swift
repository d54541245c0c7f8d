import Dispatch
import StrataCore

/// The ZAP handler (ZeroMQ RFC 27) of a CURVE service: libzmq asks it about every new
/// connection to a CURVE server socket of the same context, and it admits only client
/// public keys on its allow-list.
///
/// libzmq admits every client when no handler is bound, so the handler starts before the
/// server sockets bind and ends after they close (and `makeCurveServer` makes them refuse
/// everyone without a handler, where libzmq offers that). Its REP socket stays on the
/// thread that made it, like every socket.
public final class ZAPHandler {
    /// Where libzmq looks for the handler, in the server sockets' own context.
    public static let endpoint = "inproc://zeromq.zap.01"
    /// The ZAP domains the service's server sockets name, each admitting its own keys.
    public enum Domain: String, Sendable, CaseIterable {
        /// The commands and history endpoints: every key in the key file. Each request is then
        /// checked against its signing key's scopes, so a connection may carry any key's requests.
        case requests = "strata"
        /// The events endpoint: only keys with the `history` scope. A subscription carries no
        /// request to check, so the handshake is the only gate: the bus is the history, live.
        case events = "strata-events"
    }
    /// Refusals of one client key (or, without a key, of one address and mechanism) are
    /// logged at most once per interval: a refused client reconnects over and over.
    public static let logInterval: DispatchTimeInterval = .seconds(10)

    /// A connection the handler refused.
    public struct Refusal: Sendable, Equatable {
        /// The client's IP address, as libzmq gives it.
        public let address: String
        public let mechanism: String
        /// The client's CURVE public key, when it presented a readable one.
        public let clientKey: CurveKey?
        public let reason: String

        public init(address: String, mechanism: String, clientKey: CurveKey?, reason: String) {
            self.address = address
            self.mechanism = mechanism
            self.clientKey = clientKey
            self.reason = reason
        }
    }

    private let socket: ZMQSocket
    private let allowList: @Sendable (Domain) -> [CurveKey: String]
    private let logger: Logger
    private var lastLogged: [String: (at: DispatchTime, suppressed: Int)] = [:]

    /// Binds the handler in `context`. `allowList` maps each public key a domain admits to the
    /// id of its key in the key file, which becomes the connection's ZAP user id; it is asked at
    /// each handshake, so that it follows the key file.
    public init(
        _ context: ZMQContext, allowList: @escaping @Sendable (Domain) -> [CurveKey: String], logger: Logger
    ) throws(ZMQError) {
        socket = try ZMQSocket(context, .reply)
        try socket.bind(Self.endpoint)
        self.allowList = allowList
        self.logger = logger
    }

    /// Answers requests until `shouldStop` (checked at least every 100 ms) says so, then
    /// closes the socket. Throws ETERM when the context is shut down.
    public func run(until shouldStop: () -> Bool) throws(ZMQError) {
        defer { socket.close() }
        while !shouldStop() {
            guard try !zmqPollReadable([socket], timeoutMilliseconds: 100).isEmpty,
                let request = try socket.receive(wait: false)
            else { continue }
            let (reply, refusal) = Self.answer(request, allowList: allowList)
            if let refusal { log(refusal) }
            try socket.send(reply)
        }
    }

    /// The reply to one ZAP request: `[version, request id, domain, address, identity,
    /// mechanism, credentials…]` in, `[version, request id, status, text, user id, metadata]`
    /// out; 200 only for CURVE with a 32-byte client key the request's domain admits, and the
    /// refusal if it is not 200.
    public static func answer(
        _ request: [[UInt8]], allowList: (Domain) -> [CurveKey: String]
    ) -> (reply: [[UInt8]], refusal: Refusal?) {
        let requestId = request.count > 1 ? request[1] : []
        func reply(_ status: String, _ text: String, userId: String = "") -> [[UInt8]] {
            [Array("1.0".utf8), requestId, Array(status.utf8), Array(text.utf8), Array(userId.utf8), []]
        }
        func text(_ index: Int) -> String {
            index < request.count ? String(decoding: request[index], as: UTF8.self) : ""
        }
        let address = text(3)
        let mechanism = text(5)
        func refuse(_ status: String, _ reason: String, _ clientKey: CurveKey? = nil) -> ([[UInt8]], Refusal?) {
            let refusal = Refusal(address: address, mechanism: mechanism, clientKey: clientKey, reason: reason)
            return (reply(status, reason), refusal)
        }
        guard request.count >= 6, text(0) == "1.0" else { return refuse("500", "a malformed ZAP request") }
        guard let domain = Domain(rawValue: text(2)), mechanism == "CURVE", request.count == 7,
            let clientKey = CurveKey(bytes: request[6])
        else { return refuse("400", "not a CURVE client of a domain of the service") }
        if let keyId = allowList(domain)[clientKey] { return (reply("200", "OK", userId: keyId), nil) }
        if domain == .events, let keyId = allowList(.requests)[clientKey] {
            return refuse("400", "key \(keyId) has no history scope, which the events endpoint needs", clientKey)
        }
        return refuse("400", "the client key is not in the key file", clientKey)
    }

    /// Logs a refusal at warning level, rate-limited per client key.
    private func log(_ refusal: Refusal) {
        let now = DispatchTime.now()
        let subject = refusal.clientKey?.z85 ?? "\(refusal.address) \(refusal.mechanism)"
        if var last = lastLogged[subject], now < last.at + Self.logInterval {
            last.suppressed += 1
            lastLogged[subject] = last
            return
        }
        let suppressed = lastLogged[subject]?.suppressed ?? 0
        // Bounded against a flood of fresh keys: forgetting only means logging again.
        if lastLogged.count >= 1024 { lastLogged.removeAll() }
        lastLogged[subject] = (now, 0)
        let key = refusal.clientKey.map { " key=\($0.z85)" } ?? ""
        let earlier = suppressed > 0 ? " (and \(suppressed) more not logged since the last line)" : ""
        logger.warning(
            "refused a connection address=\(refusal.address) mechanism=\(refusal.mechanism)\(key): "
                + "\(refusal.reason)\(earlier)")
    }
}
