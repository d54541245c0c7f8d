import Bus
import Foundation
import StrataTesting
import Testing

@testable import CommandService

/// The replies a ROUTER keeps back for a connection over its high-water mark, on real sockets
/// over loopback: kept in order up to the connection's budget and sent once it reads, dropped
/// beyond the budget, and dropped when it has gone.
@Suite struct ReplyBacklogTests {
    @Test func repliesKeptBackReachAClientThatReadsInOrderAndThoseOverTheBudgetAreDropped() throws {
        let context = try ZMQContext()
        let (router, dealer, peer) = try RouterAndDealer(context, routerSendHighWaterMark: 1).sockets
        var backlog = ReplyBacklog(held: HeldBytes())
        var drops: [ZMQSocket.Routed] = []
        // Replies of 64 KiB the client does not read fill the socket buffers and libzmq's queue,
        // then the backlog's 1 MiB for the connection, and the next is dropped.
        let reply = 64 * 1024
        var sent = 0
        while drops.isEmpty && sent < 10_000 {
            let body = Array("\(sent) ".utf8) + [UInt8](repeating: 0x20, count: reply)
            try backlog.send(body, keyId: "k", to: peer, on: router) { routed, _ in drops.append(routed) }
            if drops.isEmpty { sent += 1 }
        }
        #expect(drops == [.peerFull], "dropped after \(sent) replies")
        #expect(!backlog.isEmpty)

        // The client reads: everything sent or kept reaches it, in order.
        var received = 0
        let deadline = Date().addingTimeInterval(30)
        while received < sent && Date() < deadline {
            try backlog.flush(on: router) { routed, _ in drops.append(routed) }
            guard try !zmqPollReadable([dealer], timeoutMilliseconds: 10).isEmpty,
                let frames = try dealer.receive(wait: false)
            else { continue }
            #expect(frames.last?.starts(with: Array("\(received) ".utf8)) == true, "reply \(received) in order")
            received += 1
        }
        #expect(received == sent)
        #expect(backlog.isEmpty)
        #expect(drops == [.peerFull])
    }

    @Test func repliesKeptForAClientThatHasGoneAreDropped() throws {
        let context = try ZMQContext()
        let (router, dealer, peer) = try RouterAndDealer(context, routerSendHighWaterMark: 1).sockets
        var backlog = ReplyBacklog(held: HeldBytes())
        var drops: [ZMQSocket.Routed] = []
        let reply = [UInt8](repeating: 0x20, count: 64 * 1024)
        // Until a few are kept back.
        var kept = 0
        while kept < 3 {
            try backlog.send(reply, keyId: nil, to: peer, on: router) { routed, _ in drops.append(routed) }
            if !backlog.isEmpty { kept += 1 }
        }
        #expect(drops.isEmpty)
        dealer.close()
        let deadline = Date().addingTimeInterval(10)
        while !backlog.isEmpty && Date() < deadline {
            _ = try zmqPollReadable([router], timeoutMilliseconds: 10)
            try backlog.flush(on: router) { routed, _ in drops.append(routed) }
        }
        #expect(backlog.isEmpty)
        #expect(drops.count == 3 && drops.allSatisfy { $0 == .peerGone }, "\(drops)")
        // And a reply to it now is dropped at once.
        try backlog.send(reply, keyId: nil, to: peer, on: router) { routed, _ in drops.append(routed) }
        #expect(drops.count == 4 && drops.last == .peerGone)
    }
}
