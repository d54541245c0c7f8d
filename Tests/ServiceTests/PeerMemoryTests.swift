import Bus
import Foundation
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
