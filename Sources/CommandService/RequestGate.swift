import Bus
import StrataCore

/// The checks every request on a signed endpoint (commands, history) passes before
/// anything is decided, in CONTRACT.md's order: MALFORMED and TOO_LARGE (the frames, the
/// header, the body's own fields), UNAUTHENTICATED (unknown key, wrong signature, `ts`
/// more than 300 s from now), FORBIDDEN (a key without the endpoint's scope).
///
/// Pure: frames and the server's clock in, an admitted request or a refusal out. The
/// socket thread runs it, so the writer never spends time on requests it will refuse.
public struct RequestGate: Sendable {
    /// A body a gate can read: it names the request in refusals when it has an id.
    public protocol Body: Sendable {
        var requestId: String? { get }
    }

    /// A request that passed the gate.
    public struct Admitted<Request: Body>: Sendable {
        public let routingId: [UInt8]
        public let key: KeyFile.Key
        public let body: Request
        /// The body exactly as sent (what was signed, and what the journal's digest covers).
        public let bodyBytes: [UInt8]
    }

    /// A request refused at the gate; answered on `routingId`, naming `id` when known.
    public struct Refused: Error, Sendable, Equatable {
        public let routingId: [UInt8]
        public let id: String?
        public let error: StrataError
    }

    /// A body that could not be read: the refusal, and the request's id when one was read.
    public struct BodyProblem: Error, Sendable, Equatable {
        public let id: String?
        public let error: StrataError

        public init(id: String?, error: StrataError) {
            self.id = id
            self.error = error
        }
    }

    public static let defaultMaximumBodyBytes = 64 * 1024

    /// Each key with its secret made ready to check signatures.
    private let keys: [String: (key: KeyFile.Key, signing: RequestSigningKey)]
    private let scope: KeyFile.Scope
    private let maximumBodyBytes: Int

    public init(keys: KeyFile, scope: KeyFile.Scope, maximumBodyBytes: Int = RequestGate.defaultMaximumBodyBytes) {
        self.keys = Dictionary(
            keys.keys.map { ($0.id, ($0, RequestSigningKey(secret: $0.secret))) }, uniquingKeysWith: { first, _ in first })
        self.scope = scope
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// The frames of a request as a ROUTER receives it; the sockets copy no more than these.
    public static let frameCount = 4

    /// Judges one request as a ROUTER received it: `[routing id, "", header, body]` (a REQ
    /// client's delimiter is added by libzmq, a DEALER client sends it). `now` is the
    /// server's clock in unix seconds. Returns nil only for a message without even a
    /// routing id, which cannot be answered.
    public func admit<Request: Body>(
        _ frames: [[UInt8]], now: Int64, readBody: ([UInt8]) -> Result<Request, BodyProblem>
    ) -> Result<Admitted<Request>, Refused>? {
        guard let routingId = frames.first, !routingId.isEmpty else { return nil }
        func refuse(_ id: String?, _ code: StrataError.Code, _ reason: String, _ message: String) -> Refused {
            Refused(routingId: routingId, id: id, error: StrataError(code, reason: reason, message))
        }
        guard frames.count == Self.frameCount, frames[1].isEmpty else {
            return .failure(refuse(nil, .malformed, "BAD_FRAMES", Self.badFrames(frames)))
        }
        let headerBytes = frames[2]
        let bodyBytes = frames[3]
        if bodyBytes.count > maximumBodyBytes {
            return .failure(
                refuse(nil, .tooLarge, "BODY_TOO_LARGE", "the body has \(bodyBytes.count) bytes; the limit is \(maximumBodyBytes)"))
        }
        guard let header = RequestHeader(json: headerBytes) else {
            return .failure(refuse(nil, .malformed, "BAD_HEADER", RequestHeader.problem(json: headerBytes)))
        }
        let body: Request
        switch readBody(bodyBytes) {
        case .failure(let problem): return .failure(Refused(routingId: routingId, id: problem.id, error: problem.error))
        case .success(let read): body = read
        }
        let id = body.requestId
        guard let (key, signing) = keys[header.keyId], signing.isValid(header, body: bodyBytes) else {
            return .failure(refuse(id, .unauthenticated, "BAD_SIGNATURE", "unknown key or wrong signature"))
        }
        guard RequestSignature.isFresh(header.timestamp, now: now) else {
            return .failure(
                refuse(
                    id, .unauthenticated, "STALE_TIMESTAMP",
                    "ts \(header.timestamp) is more than \(RequestSignature.window) s from the server's clock (\(now))"))
        }
        guard key.scopes.contains(scope) else {
            return .failure(
                refuse(id, .forbidden, "KEY_SCOPE", "key \(key.id) lacks the \(scope.rawValue) scope"))
        }
        return .success(Admitted(routingId: routingId, key: key, body: body, bodyBytes: bodyBytes))
    }

    /// What a message of the wrong shape is told, counted as its client sent it. The ROUTER
    /// cannot tell a REQ client, whose delimiter libzmq adds, from a DEALER that sent one:
    /// after a delimiter, only the frames that follow it count.
    private static func badFrames(_ frames: [[UInt8]]) -> String {
        let expected = "expected [header][body] from REQ or [\"\"][header][body] from DEALER"
        func count(_ n: Int) -> String { n == 1 ? "1 frame" : "\(n) frames" }
        guard frames.count > 1, frames[1].isEmpty else {
            return "\(expected); got \(count(frames.count - 1)) and no empty delimiter first"
        }
        return "\(expected); got \(count(frames.count - 2)) after the empty delimiter"
    }
}
