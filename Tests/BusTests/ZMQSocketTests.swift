import Bus
import CZeroMQ
import Foundation
import StrataTesting
import Testing

/// Real libzmq sockets over loopback TCP on ports the OS picks.
@Suite("ZeroMQ sockets")
struct ZMQSocketTests {
    /// Receives with a deadline, so a broken test fails instead of hanging.
    private func receive(_ socket: ZMQSocket, within milliseconds: Int = 5_000) throws -> [[UInt8]]? {
        guard try !zmqPollReadable([socket], timeoutMilliseconds: milliseconds).isEmpty else { return nil }
        return try socket.receive(wait: false)
    }

    private func frames(_ texts: String...) -> [[UInt8]] { texts.map { Array($0.utf8) } }

    @Test func routerAndDealerExchangeMultipartMessages() throws {
        let context = try ZMQContext()
        let router = try ZMQSocket(context, .router)
        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint()
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        let dealer = try ZMQSocket(context, .dealer)
        try dealer.connect(endpoint)

        try dealer.send(frames("", "header", "body"))
        let request = try #require(try receive(router))
        #expect(request.count == 4)  // routing id, delimiter, header, body
        #expect(Array(request.dropFirst()) == frames("", "header", "body"))

        try router.send([request[0]] + frames("", "reply"))
        #expect(try receive(dealer) == frames("", "reply"))
    }

    /// A client's watch tells of a connection that was made and ended, which libzmq would
    /// otherwise make again in silence; clients watched one after another in one context each
    /// get a monitor endpoint of their own.
    @Test func aConnectionWatchTellsOfAMadeConnectionThatEnded() throws {
        let context = try ZMQContext()
        let secret = [UInt8](repeating: 1, count: 32)
        // 200: the old naming by address failed within them (5 runs of 5); three sockets each stay
        // under a context's 1,023 (libzmq frees closed ones on its own thread, and 500 reached it).
        for _ in 0..<200 {
            let client = try SignedClient(
                context, endpoint: "tcp://127.0.0.1:1", keyId: "k", secret: secret, watchingConnections: true)
            client.close()
        }
        let router = try ZMQSocket(context, .router)
        try router.bind("tcp://127.0.0.1:*")
        let client = try SignedClient(
            context, endpoint: try router.lastEndpoint(), keyId: "k", secret: secret, watchingConnections: true)
        defer { client.close() }
        let watch = try #require(client.connections)
        try client.send(Array("{}".utf8))
        #expect(try receive(router) != nil)
        #expect(try !watch.connectionEnded())

        router.close()
        var ended = false
        let deadline = Date(timeIntervalSinceNow: 5)
        while !ended && Date() < deadline {
            _ = try zmqPollReadable([watch.socket], timeoutMilliseconds: 100)
            ended = try watch.connectionEnded()
        }
        #expect(ended, "the end of the connection was told")
    }

    @Test func requestSocketsAddTheDelimiterThemselves() throws {
        let context = try ZMQContext()
        let router = try ZMQSocket(context, .router)
        try router.bind("tcp://127.0.0.1:*")
        let client = try ZMQSocket(context, .request)
        try client.connect(try router.lastEndpoint())
        try client.send(frames("header", "body"))
        let request = try #require(try receive(router))
        #expect(Array(request.dropFirst()) == frames("", "header", "body"))
        try router.send([request[0], []] + frames("reply"))
        #expect(try receive(client) == frames("reply"))
    }

    @Test func largeMessagesArriveWhole() throws {
        let context = try ZMQContext()
        let router = try ZMQSocket(context, .router)
        try router.bind("tcp://127.0.0.1:*")
        let dealer = try ZMQSocket(context, .dealer)
        try dealer.connect(try router.lastEndpoint())
        let big = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try dealer.send([[], big])
        let request = try #require(try receive(router))
        #expect(request.last == big)
    }

    /// ZMQ_MAXMSGSIZE drops an oversized message before the application sees it, and the
    /// socket keeps serving others.
    @Test func oversizedMessagesNeverReachTheApplication() throws {
        let context = try ZMQContext()
        let router = try ZMQSocket(context, .router)
        try router.setMaximumMessageSize(1_024)
        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint()
        let greedy = try ZMQSocket(context, .dealer)
        try greedy.connect(endpoint)
        try greedy.send([[], [UInt8](repeating: 1, count: 4_096)])
        #expect(try receive(router, within: 300) == nil)
        let polite = try ZMQSocket(context, .dealer)
        try polite.connect(endpoint)
        try polite.send(frames("", "small"))
        #expect(try receive(router)?.last == Array("small".utf8))
    }

    @Test func subscribersFilterByTopicPrefix() throws {
        let context = try ZMQContext()
        let publisher = try ZMQSocket(context, .publisher)
        try publisher.bind("tcp://127.0.0.1:*")
        let subscriber = try ZMQSocket(context, .subscriber)
        try subscriber.subscribe("loan.")
        try subscriber.connect(try publisher.lastEndpoint())
        // PUB drops messages until the subscription has arrived: publish until one lands.
        var first: [[UInt8]]?
        for _ in 0..<100 where first == nil {
            try publisher.send(frames("account.AccountOpened", "{}"))
            try publisher.send(frames("loan.LoanApproved", "{\"position\":1}"))
            first = try receive(subscriber, within: 50)
        }
        #expect(first == frames("loan.LoanApproved", "{\"position\":1}"))
        while let next = try receive(subscriber, within: 50) {
            #expect(next.first == Array("loan.LoanApproved".utf8))
        }
    }

    @Test func nonBlockingCallsReportWouldBlock() throws {
        let context = try ZMQContext()
        let dealer = try ZMQSocket(context, .dealer)
        try dealer.bind("tcp://127.0.0.1:*")
        #expect(try dealer.receive(wait: false) == nil)
        #expect(try zmqPollReadable([dealer], timeoutMilliseconds: 10).isEmpty)
        // A DEALER with no peer cannot queue a message.
        #expect(try dealer.send(frames("x"), wait: false) == false)
    }

    /// A ROUTER made to report unroutable replies says which it could not send, at once: to
    /// a peer over its high-water mark (it does not read) and to one that is gone.
    @Test func aRouterReportsRepliesItCannotRoute() throws {
        let context = try ZMQContext()
        let (router, dealer, peer) = try RouterAndDealer(context, routerSendHighWaterMark: 2).sockets

        // 1 MiB replies the dealer never reads: the router's queue and the buffers between
        // them fill within a few dozen, and the next is refused rather than waited for.
        let reply = [UInt8](repeating: 7, count: 1 << 20)
        var outcomes: [ZMQSocket.Routed] = []
        while outcomes.last != .peerFull && outcomes.count < 1_000 {
            outcomes.append(try router.route([peer, [], reply]))
        }
        #expect(outcomes.last == .peerFull, "\(outcomes.count) sends")
        #expect(outcomes.dropLast().allSatisfy { $0 == .sent })
        #expect(try router.route([Array("nobody".utf8), [], reply]) == .peerGone)

        dealer.close()
        var afterClose = ZMQSocket.Routed.sent
        for _ in 0..<100 where afterClose != .peerGone {
            Thread.sleep(forTimeInterval: 0.05)
            afterClose = try router.route([peer, [], reply])
        }
        #expect(afterClose == .peerGone)
    }

    @Test func bindingABadEndpointThrows() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(context, .router)
        #expect(throws: ZMQError.self) { try socket.bind("tcp://not-an-address:x") }
    }

    /// libzmq keeps the low 16 bits of a port: `:PORT+65536` bound PORT, and a connect to port 0
    /// waited for ever. Both are refused; `*` and 0 still let a bind (or a connect's source
    /// address) choose a port.
    @Test func aTCPPortThatIsNoneIsRefusedNotWrapped() throws {
        let context = try ZMQContext()
        let port = try freeLoopbackPort()
        let router = try ZMQSocket(context, .router)
        #expect(throws: ZMQError.self) { try router.bind("tcp://127.0.0.1:\(port + 65_536)") }
        #expect(throws: ZMQError.self) { try router.bind("tcp://127.0.0.1:\(port)x") }
        try router.bind("tcp://127.0.0.1:\(port)")
        let chosen = try ZMQSocket(context, .router)
        try chosen.bind("tcp://127.0.0.1:*")
        try chosen.bind("tcp://127.0.0.1:0")

        let dealer = try ZMQSocket(context, .dealer)
        for endpoint in ["tcp://127.0.0.1:\(port + 65_536)", "tcp://127.0.0.1:0", "tcp://127.0.0.1:*"] {
            let error = #expect(throws: ZMQError.self) { try dealer.connect(endpoint) }
            #expect(error?.code == EINVAL)
            #expect(error?.description.contains(endpoint) == true, "\(String(describing: error))")
        }
        try dealer.connect("tcp://127.0.0.1:0;127.0.0.1:\(port)")
        try dealer.send(frames("", "hello"))
        #expect(try receive(router)?.last == Array("hello".utf8))
    }

    /// Shutting the context down wakes a thread blocked in receive with ETERM.
    @Test func shutdownWakesABlockedOwnerThread() async throws {
        let context = try ZMQContext()
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let thread = Thread {
                do throws(ZMQError) {
                    let socket = try ZMQSocket(context, .router)
                    try socket.bind("tcp://127.0.0.1:*")
                    _ = try socket.receive()
                    continuation.resume(returning: false)
                } catch {
                    continuation.resume(returning: error.isTerminated)
                }
            }
            thread.start()
            Thread.sleep(forTimeInterval: 0.1)
            context.shutdown()
        }
        #expect(outcome)
    }

    /// libzmq's ipc bind deletes whatever is at the path first. A file, a link, a directory or a
    /// socket another process listens on is refused and left as it was; a socket file left behind
    /// by an earlier run is bound over, as before.
    @Test func anIPCBindDeletesNothingAndTakesNoListenerOver() throws {
        let directory = try ChildProcess.temporaryDirectory("strata-ipc")
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = try ZMQContext()
        let socket = try ZMQSocket(context, .router)
        func refusal(_ path: String) -> ZMQError? {
            #expect(throws: ZMQError.self) { try socket.bind("ipc://\(path)") }
        }

        let file = directory.appendingPathComponent("events.db").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("precious".utf8)))
        #expect(refusal(file)?.code == EEXIST)
        let link = directory.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
        #expect(refusal(link)?.code == EEXIST)
        #expect(refusal(directory.path)?.code == EISDIR)
        let long = directory.path + "/" + String(repeating: "x", count: 120)
        #expect(FileManager.default.createFile(atPath: long, contents: Data("precious".utf8)))
        #expect(refusal(long)?.code == ENAMETOOLONG)
        for path in [file, long] { #expect(FileManager.default.contents(atPath: path) == Data("precious".utf8)) }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == file)

        let listening = directory.appendingPathComponent("listening").path
        let listener = try ZMQSocket(context, .router)
        try listener.bind("ipc://\(listening)")
        let error = refusal(listening)
        #expect(error?.code == EADDRINUSE)
        #expect(error?.description.contains("another process is listening on \(listening)") == true)
        let dealer = try ZMQSocket(context, .dealer)
        try dealer.connect("ipc://\(listening)")
        try dealer.send(frames("", "still here"))
        #expect(try receive(listener)?.last == Array("still here".utf8))

        let stale = directory.appendingPathComponent("stale").path
        try leaveSocketFile(at: stale)
        try socket.bind("ipc://\(stale)")
        let client = try ZMQSocket(context, .dealer)
        try client.connect("ipc://\(stale)")
        try client.send(frames("", "hello"))
        #expect(try receive(socket)?.last == Array("hello".utf8))
    }

    /// A Unix socket file nobody listens on, as a process killed outright leaves behind.
    private func leaveSocketFile(at path: String) throws {
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0 && listen(descriptor, 1) == 0)
    }
}
