import Bus
import Foundation
import StrataTesting
import Testing

/// Replies routed with their bytes counted, on real sockets over loopback: counted while libzmq
/// keeps them for a peer that does not read, and no longer once it has read them or has gone.
@Suite struct HeldBytesTests {
    /// Routes replies of `size` bytes, each starting with its number, until the peer has taken
    /// none for half a second: the buffers between them are full, and libzmq keeps the rest.
    private func fill(_ router: ZMQSocket, _ peer: [UInt8], size: Int, held: HeldBytes) throws -> Int {
        var sent = 0
        var refusedSince: Date?
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let body = Array("\(sent) ".utf8) + [UInt8](repeating: 0x20, count: size)
            if try router.route(peer, body: body, counting: held) == .sent {
                sent += 1
                refusedSince = nil
            } else if let since = refusedSince {
                if Date().timeIntervalSince(since) > 0.5 { break }
                Thread.sleep(forTimeInterval: 0.01)
            } else {
                refusedSince = Date()
            }
        }
        return sent
    }

    /// Waits up to 10 s for `held` to come to 0, polling `router` meanwhile: a ROUTER learns
    /// that a peer has gone, and lets go of what it kept for it, as it reads.
    private func drained(_ held: HeldBytes, _ router: ZMQSocket) throws -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while held.bytes != 0 && Date() < deadline { _ = try zmqPollReadable([router], timeoutMilliseconds: 10) }
        return held.bytes == 0
    }

    @Test(arguments: [64 * 1024, 1 << 20])
    func repliesAreCountedUntilThePeerReadsThemAndArriveWhole(size: Int) throws {
        let context = try ZMQContext()
        let (router, dealer, peer) = try RouterAndDealer(context, routerSendHighWaterMark: 2).sockets
        let held = HeldBytes()
        let sent = try fill(router, peer, size: size, held: held)
        #expect(sent >= 2, "\(sent) replies routed before the peer was full")
        // What the connection's buffers took is no longer libzmq's; what waits for them is.
        #expect(held.bytes >= size && held.bytes <= sent * (size + 16), "\(held.bytes) bytes held of \(sent) replies")

        var received = 0
        let deadline = Date().addingTimeInterval(30)
        while received < sent && Date() < deadline {
            guard try !zmqPollReadable([dealer], timeoutMilliseconds: 100).isEmpty,
                let frames = try dealer.receive(wait: false)
            else { continue }
            #expect(frames.count == 2 && frames[0].isEmpty, "a delimiter and the reply")
            let reply = try #require(frames.last)
            #expect(reply.starts(with: Array("\(received) ".utf8)) && reply.count >= size, "reply \(received) whole")
            received += 1
        }
        #expect(received == sent)
        #expect(try drained(held, router), "\(held.bytes) bytes still held once every reply was read")
    }

    @Test func repliesHeldForAPeerThatGoesAreNoLongerCounted() throws {
        let context = try ZMQContext()
        let (router, dealer, peer) = try RouterAndDealer(context, routerSendHighWaterMark: 2).sockets
        let held = HeldBytes()
        let sent = try fill(router, peer, size: 1 << 20, held: held)
        #expect(held.bytes >= 1 << 20, "\(held.bytes) bytes held of \(sent) replies")
        dealer.close()
        #expect(try drained(held, router), "\(held.bytes) bytes still held once the peer went")
        var routed = ZMQSocket.Routed.sent
        for _ in 0..<100 where routed != .peerGone {
            _ = try zmqPollReadable([router], timeoutMilliseconds: 50)
            routed = try router.route(peer, body: [UInt8](repeating: 1, count: 1 << 20), counting: held)
        }
        #expect(routed == .peerGone)
        #expect(held.bytes == 0, "a reply that could not be routed is not counted")
    }
}
