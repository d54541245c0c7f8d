import Bus
import CZeroMQ
import CommandService
import Foundation
import StrataCore
import StrataTesting
import Testing

/// What a peer that owes no key can make the service hold in memory.
@Suite struct PeerMemoryTests {
    /// A message of many large frames: libzmq bounds each frame (`ZMQ_MAXMSGSIZE`), not their
    /// number, and holds the message whole before the service sees it. The service refuses it
    /// as BAD_FRAMES without making a second copy.
    @Test func aMessageOfManyLargeFramesIsRefusedWithoutASecondCopy() throws {
        let rig = try ServiceRig(name: "strata-frames")
        defer { rig.close() }
        try rig.expectStillServing()
        let before = try #require(rig.service.peakResidentKiB)
        let frameCount = 256
        let frames = [[]] + Array(repeating: [UInt8](repeating: 0x41, count: 1 << 20), count: frameCount)
        let reply = try rig.exchange(frames)
        expectRefusal(reply, "MALFORMED", "BAD_FRAMES", id: nil)
        let message = reply["error"]?["message"]?.stringValue ?? ""
        #expect(message.hasSuffix("got \(frameCount) frames after the empty delimiter"), "\(reply)")
        // 256 MiB arrived: libzmq's copy of them alone; a second copy would double it.
        let grownKiB = try #require(rig.service.peakResidentKiB) - before
        #expect(grownKiB < (frameCount + frameCount / 2) * 1024, "the service's peak grew by \(grownKiB) KiB")
        try rig.expectStillServing()
    }

    /// Peers that send requests without a key the service knows and read none of the refusals:
    /// libzmq kept up to 100,000 replies for each connection, about 600 bytes of memory each,
    /// so 16 of them grew the service by well over 100 MiB, which it kept after they left. Now
    /// every reply is counted while libzmq holds it, and once 16 MiB are held, refusals at the
    /// gate go unanswered (counted); a signed client is answered all the while, and the memory
    /// is handed back once the peers go.
    @Test func peersThatReadNoRefusalsAreHeldToOneBudgetAndTheMemoryIsGivenBack() throws {
        let data = try ChildProcess.temporaryDirectory("strata-unread-refusals")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let file = data.appendingPathComponent("serve.prom").path
        let service = try ServiceProcess(
            dataDirectory: data, arguments: ["--metrics-file", file, "--metrics-interval", "0.1"])
        defer { service.stop() }
        let context = try ZMQContext()
        let resident = try #require(service.residentKiB)
        let peak = try #require(service.peakResidentKiB)

        let peers = 8
        let requests = 45_000
        // Signed with a secret, but under a key id the service does not know: UNAUTHENTICATED.
        let body = Array(#"{"id":"c-1","type":"ApproveAgent","actor":"a","payload":{"agentId":"b"}}"#.utf8)
        let unknown = try service.signedFrames(body, key: "nobody", secretOf: ServiceProcess.Keys.service)
        var stalled: [ZMQSocket] = []
        defer { for peer in stalled { peer.close() } }
        for _ in 0..<peers {
            let peer = try ZMQSocket(context, .dealer)
            stalled.append(peer)
            try peer.setHighWaterMarks(send: 0, receive: 1)
            // Room for a few replies in the kernel, so that the rest wait in the service.
            try peer.setOption(ZMQ_RCVBUF, Int32(4096))
            try peer.connect(service.commands)
            for _ in 0..<requests { try peer.send(unknown) }
        }
        func refused() throws -> Double {
            try readExposition(file).value("strata_requests_refused_total", ["code": "unauthenticated"]) ?? 0
        }
        let deadline = ContinuousClock.now + .seconds(240)
        while try refused() < Double(peers * requests), ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.2)
        }
        try #require(try refused() == Double(peers * requests), "every request refused: \(service.log)")
        let metrics = try readExposition(file)
        let unanswered = metrics.value("strata_requests_unanswered_total") ?? 0
        let held = metrics.value("strata_command_replies_held_bytes") ?? 0
        let grownKiB = try #require(service.peakResidentKiB) - peak
        print(
            "unread refusals: \(peers) peers, peak grew by \(grownKiB) KiB, \(Int(held)) bytes held, "
                + "\(Int(unanswered)) of \(peers * requests) refusals unanswered")
        #expect(unanswered > 0, "refusals past the budget go unanswered")
        #expect(held >= 16 * 1024 * 1024 && held < 20 * 1024 * 1024, "\(held) bytes held, as metered")
        #expect(grownKiB < 80 * 1024, "the service's peak grew by \(grownKiB) KiB for peers that read nothing")
        #expect(service.log.contains("requests refused at the gate were not answered"), "\(service.log)")

        // A signed client is answered meanwhile: replies the writer decides are always sent.
        let client = try service.commandClient(context)
        defer { client.socket.close() }
        let registration = CommandBody(
            id: "reg-1", type: "RegisterUser", actor: "agent-1",
            payload: [
                "userId": "agent-1", "username": "agent-one", "email": "agent-1@example.com", "role": "AGENT",
            ])
        let answer = try #require(
            try client.request(registration.json, timeoutMilliseconds: 30_000), "a signed client is answered")
        #expect(try JSONParser.parse(answer)["ok"] == .bool(true), "\(String(decoding: answer, as: UTF8.self))")

        for peer in stalled { peer.close() }
        stalled = []
        let keptKiB = try keptKiB(by: service, above: resident, waitingBelow: 32 * 1024)
        print("unread refusals: \(keptKiB) KiB kept once they went")
        #expect(keptKiB < 32 * 1024, "the service kept \(keptKiB) KiB more than before, once the peers went")
        #expect(try readExposition(file).value("strata_command_replies_held_bytes") == 0)
        // And a request refused at the gate is answered again.
        let peer = try ZMQSocket(context, .dealer)
        defer { peer.close() }
        try peer.connect(service.commands)
        try peer.send(unknown)
        let refusal = try JSONParser.parse(
            receiveReply(on: peer, from: service, timeoutMilliseconds: 15_000))
        #expect(refusal["error"]?["code"] == .string("UNAUTHENTICATED"), "\(refusal)")
        #expect(service.stop() == 0, "\(service.log)")
    }

    /// Subscriptions are what a PUB socket receives, and libzmq keeps every one, at about 32
    /// bytes a byte of prefix: a subscription longer than any topic disconnects its sender.
    @Test func aSubscriptionLongerThanAnyTopicIsRefused() throws {
        let rig = try ServiceRig(name: "strata-subscriptions")
        defer { rig.close() }
        let before = try #require(rig.service.peakResidentKiB)
        let subscriber = try ZMQSocket(rig.context, .subscriber)
        defer { subscriber.close() }
        try subscriber.setHighWaterMarks(send: 0, receive: 0)
        try subscriber.connect(rig.service.events)
        // 4 MiB in all, in prefixes of 4 KiB (libzmq's own subscriber walks a prefix
        // recursively, a frame a byte: a 1 MiB one overflows its stack).
        let count = 1024
        for index in 0..<count {
            try subscriber.subscribe("\(index)" + String(repeating: "a", count: 4096))
        }
        // The publisher takes subscriptions in as it sends: a heartbeat a second, a command's events.
        try rig.expectStillServing()
        Thread.sleep(forTimeInterval: 1.5)
        try rig.expectStillServing()
        let grownKiB = try #require(rig.service.peakResidentKiB) - before
        #expect(grownKiB < 32 * 1024, "the service's peak grew by \(grownKiB) KiB for 4 MiB of subscriptions")

        // A subscriber of ordinary prefixes is served as ever.
        let ordinary = try ZMQSocket(rig.context, .subscriber)
        defer { ordinary.close() }
        try ordinary.subscribe("heartbeat")
        try ordinary.connect(rig.service.events)
        try #require(try zmqPollReadable([ordinary], timeoutMilliseconds: 5000) == [0], "a heartbeat within 5 s")
        let heartbeat = try #require(try ordinary.receive(wait: false))
        #expect(heartbeat.first == Array("heartbeat".utf8))
    }
}
