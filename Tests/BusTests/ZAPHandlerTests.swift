import Bus
import Foundation
import StrataCore
import Synchronization
import Testing

/// The ZAP handler: its answers to RFC 27 requests, and CURVE sockets on loopback TCP
/// admitting only allow-listed client keys.
@Suite("ZAP handler and CURVE sockets")
struct ZAPHandlerTests {
    static let allowed = CurveKeyPair.generate()!
    static let reader = CurveKeyPair.generate()!

    /// `svc` may connect to the request endpoints only; `reader` to the events endpoint too.
    static func allowList(_ domain: ZAPHandler.Domain) -> [CurveKey: String] {
        domain == .events ? [reader.publicKey: "reader"] : [allowed.publicKey: "svc", reader.publicKey: "reader"]
    }

    private func request(
        version: String = "1.0", domain: String = ZAPHandler.Domain.requests.rawValue, mechanism: String = "CURVE",
        credentials: [[UInt8]] = [allowed.publicKey.bytes]
    ) -> [[UInt8]] {
        [Array(version.utf8), Array("req-7".utf8), Array(domain.utf8), Array("10.0.0.9".utf8), Array("peer".utf8),
            Array(mechanism.utf8)] + credentials
    }

    private func strings(_ frames: [[UInt8]]) -> [String] { frames.map { String(decoding: $0, as: UTF8.self) } }

    @Test func admitsAnAllowListedCurveKeyNamingItsKeyId() {
        let (reply, refusal) = ZAPHandler.answer(request(), allowList: Self.allowList)
        #expect(strings(reply) == ["1.0", "req-7", "200", "OK", "svc", ""])
        #expect(refusal == nil)
    }

    @Test func refusesAnUnknownKey() throws {
        let stranger = try #require(CurveKeyPair.generate())
        let (reply, refusal) = ZAPHandler.answer(
            request(credentials: [stranger.publicKey.bytes]), allowList: Self.allowList)
        #expect(strings(reply) == ["1.0", "req-7", "400", "the client key is not in the key file", "", ""])
        #expect(
            refusal
                == ZAPHandler.Refusal(
                    address: "10.0.0.9", mechanism: "CURVE", clientKey: stranger.publicKey,
                    reason: "the client key is not in the key file"))
    }

    @Test(arguments: [
        ("NULL", [[UInt8]]()), ("PLAIN", [Array("user".utf8), Array("password".utf8)]),
        ("CURVE", [Array(allowed.publicKey.bytes.dropLast())]), ("CURVE", [allowed.publicKey.bytes, []]),
        ("CURVE", [[UInt8]]()),
    ])
    func refusesOtherMechanismsAndBadCredentials(_ mechanism: String, _ credentials: [[UInt8]]) {
        let (reply, refusal) = ZAPHandler.answer(
            request(mechanism: mechanism, credentials: credentials), allowList: Self.allowList)
        #expect(strings(reply) == ["1.0", "req-7", "400", "not a CURVE client of a domain of the service", "", ""])
        #expect(refusal?.mechanism == mechanism)
        #expect(refusal?.clientKey == nil)
    }

    /// The events endpoint admits only keys with the history scope: a subscription carries no
    /// request whose key's scope could be checked later.
    @Test func theEventsDomainAdmitsOnlyItsOwnKeys() {
        let events = ZAPHandler.Domain.events.rawValue
        let (admitted, _) = ZAPHandler.answer(
            request(domain: events, credentials: [Self.reader.publicKey.bytes]), allowList: Self.allowList)
        #expect(strings(admitted) == ["1.0", "req-7", "200", "OK", "reader", ""])
        let (reply, refusal) = ZAPHandler.answer(request(domain: events), allowList: Self.allowList)
        let reason = "key svc has no history scope, which the events endpoint needs"
        #expect(strings(reply) == ["1.0", "req-7", "400", reason, "", ""])
        #expect(refusal?.clientKey == Self.allowed.publicKey)
        #expect(refusal?.reason == reason)
    }

    @Test func refusesAnotherDomain() {
        let (reply, _) = ZAPHandler.answer(request(domain: "other"), allowList: Self.allowList)
        #expect(strings(reply)[2] == "400")
    }

    @Test func answersAMalformedRequestWith500() {
        #expect(
            strings(ZAPHandler.answer(request(version: "2.0"), allowList: Self.allowList).reply)
                == ["1.0", "req-7", "500", "a malformed ZAP request", "", ""])
        #expect(
            strings(ZAPHandler.answer([Array("1.0".utf8)], allowList: Self.allowList).reply)
                == ["1.0", "", "500", "a malformed ZAP request", "", ""])
        #expect(ZAPHandler.answer([], allowList: Self.allowList).refusal?.reason == "a malformed ZAP request")
    }

    // MARK: - Real sockets

    /// Every message the router receives within `milliseconds`, without its routing id.
    private func drain(_ router: ZMQSocket, for milliseconds: Int) throws -> [[String]] {
        var received: [[String]] = []
        let deadline = Date().addingTimeInterval(Double(milliseconds) / 1000)
        while Date() < deadline {
            guard try !zmqPollReadable([router], timeoutMilliseconds: 50).isEmpty else { continue }
            while let frames = try router.receive(wait: false) { received.append(strings(Array(frames.dropFirst()))) }
        }
        return received
    }

    /// A DEALER in `context` that says `greeting` as soon as it is connected.
    private func client(
        _ context: ZMQContext, _ endpoint: String, _ curve: CurveClientKeys?, greeting: String
    ) throws -> ZMQSocket {
        let dealer = try ZMQSocket(context, .dealer)
        if let curve { try dealer.makeCurveClient(curve) }
        try dealer.connect(endpoint)
        try dealer.send([[], Array(greeting.utf8)])
        return dealer
    }

    @Test func aCurveRouterAdmitsOnlyAllowListedClients() throws {
        let context = try ZMQContext()
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "zap") { line in lines.withLock { $0.append(line) } }
        let handler = try HandlerThread(context, logger: logger)
        defer { handler.stop() }
        let server = try #require(CurveKeyPair.generate())
        let router = try ZMQSocket(context, .router)
        defer { router.close() }
        try router.makeCurveServer(secretKey: server.secretKey)
        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint()

        // The clients in a context of their own, as on another host.
        let clients = try ZMQContext()
        let stranger = try #require(CurveKeyPair.generate())
        let otherServer = try #require(CurveKeyPair.generate())
        func keys(_ server: CurveKeyPair, _ client: CurveKeyPair) -> CurveClientKeys {
            CurveClientKeys(serverKey: server.publicKey, client: client)
        }
        let sockets = [
            try client(clients, endpoint, keys(server, Self.allowed), greeting: "allowed"),
            try client(clients, endpoint, keys(server, stranger), greeting: "stranger"),
            try client(clients, endpoint, nil, greeting: "plain"),
            // The right client key, but the wrong server's: the client refuses the server.
            try client(clients, endpoint, keys(otherServer, Self.allowed), greeting: "lost"),
        ]
        defer { sockets.forEach { $0.close() } }

        #expect(try drain(router, for: 1500) == [["", "allowed"]])
        let logged = lines.withLock { $0 }
        #expect(
            logged.contains {
                $0.contains(
                    "warning zap: refused a connection address=127.0.0.1 mechanism=CURVE "
                        + "key=\(stranger.publicKey.z85): "
                        + "the client key is not in the key file")
            }, "\(logged)")
        #expect(!logged.contains { $0.contains(Self.allowed.publicKey.z85) }, "\(logged)")
    }

    /// libzmq admits every CURVE client when no ZAP handler is bound, unless the socket
    /// enforces the domain, as `makeCurveServer` makes it do: then it admits no one.
    @Test func aCurveServerWithoutAHandlerAdmitsNoOne() throws {
        let context = try ZMQContext()
        let server = try #require(CurveKeyPair.generate())
        let router = try ZMQSocket(context, .router)
        defer { router.close() }
        try router.makeCurveServer(secretKey: server.secretKey)
        try router.bind("tcp://127.0.0.1:*")
        let clients = try ZMQContext()
        let dealer = try client(
            clients, try router.lastEndpoint(), CurveClientKeys(serverKey: server.publicKey, client: Self.allowed),
            greeting: "allowed")
        defer { dealer.close() }
        #expect(try drain(router, for: 1000).isEmpty)
    }
}

/// A ZAP handler on a thread of its own, as the service runs it; `stop` ends it.
private final class HandlerThread: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let ended = DispatchSemaphore(value: 0)

    init(_ context: ZMQContext, logger: Logger) throws {
        let bound = DispatchSemaphore(value: 0)
        let failure = Mutex<ZMQError?>(nil)
        let thread = Thread { [self] in
            defer { ended.signal() }
            let handler: ZAPHandler
            do throws(ZMQError) {
                handler = try ZAPHandler(context, allowList: { ZAPHandlerTests.allowList($0) }, logger: logger)
            } catch {
                failure.withLock { $0 = error }
                bound.signal()
                return
            }
            bound.signal()
            try? handler.run(until: { stopping.load(ordering: .acquiring) })
        }
        thread.start()
        bound.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        ended.wait()
    }
}
