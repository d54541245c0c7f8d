import EventStore
import StrataCore
import StrataTesting
import Testing

/// `ChainFollower` reuses its buffers and the last hash it computed from one event to the
/// next; its answer must still be exactly the single check's for every event, linked or not.
@Suite struct ChainFollowerTests {
    /// `follower.links(event, after:)`, outside `#expect`, which cannot call a mutating method.
    static func link(_ follower: inout ChainFollower, _ event: RecordedEvent, after previous: String) -> Bool {
        follower.links(event, after: previous)
    }

    /// Events of several commands, with text that needs escaping, multi-byte text and a long value.
    static func stored() throws -> [RecordedEvent] {
        let store = InMemoryEventStore(clock: FixedClock())
        for (i, text) in ["plain", "é \"quoted\" \\ \u{2028} ✓", String(repeating: "x", count: 5000), ""].enumerated() {
            _ = try store.append(
                command(
                    "c\(i)",
                    [
                        try event("loan-L\(i)", "LoanRequested", ["text": .string(text), "n": .integer(Int64(i))]),
                        try event("agent-A\(i)", "CommissionEarned", ["nested": ["z": 1, "a": ["b": "c"]]]),
                    ]))
        }
        return try store.events(after: 0, limit: 100)
    }

    /// A copy of `event` with some of its stored columns replaced.
    static func altered(
        _ event: RecordedEvent, data: [UInt8]? = nil, prevHash: String? = nil, hash: String? = nil
    ) -> RecordedEvent {
        RecordedEvent(
            position: event.position, stream: event.stream, version: event.version, type: event.type,
            schemaVersion: event.schemaVersion, recordedAt: event.recordedAt, data: data ?? event.data,
            metadata: event.metadata, prevHash: prevHash ?? event.prevHash, hash: hash ?? event.hash)
    }

    @Test func followsAStoredChainAsTheSingleCheckDoes() throws {
        let events = try Self.stored()
        #expect(events.count == 8)
        var follower = ChainFollower()
        var previous = HashChain.genesisHex
        for event in events {
            #expect(Self.link(&follower, event, after: previous), "position \(event.position)")
            #expect(event.continuesChain(from: previous))
            previous = event.hash
        }
        // Joining the chain anywhere: the previous hash is then decoded from its hex.
        var late = ChainFollower()
        #expect(Self.link(&late, events[5], after: events[4].hash))
        #expect(Self.link(&late, events[6], after: events[5].hash))
        // Passing over an event (as a skipped one is) and going on after its stored hash.
        var skipping = ChainFollower()
        #expect(Self.link(&skipping, events[0], after: HashChain.genesisHex))
        #expect(Self.link(&skipping, events[2], after: events[1].hash))
    }

    @Test func refusesEveryBreakAndGoesOnAfterIt() throws {
        let events = try Self.stored()
        let (first, second, third) = (events[0], events[1], events[2])
        var changedData = second.data
        changedData[changedData.count / 2] ^= 0x01
        let otherHash = String(repeating: "ab", count: 32)
        let broken: [(String, RecordedEvent, String)] = [
            ("another previous hash", second, otherHash),
            ("a prevHash that is not the previous hash", Self.altered(second, prevHash: otherHash), first.hash),
            ("its data changed", Self.altered(second, data: changedData), first.hash),
            ("its hash in capitals", Self.altered(second, hash: second.hash.uppercased()), first.hash),
            ("its hash cut short", Self.altered(second, hash: String(second.hash.dropLast(2))), first.hash),
            ("another hash", Self.altered(second, hash: otherHash), first.hash),
            ("a previous hash that is not hex", Self.altered(second, prevHash: "zz"), "zz"),
        ]
        for (why, event, previous) in broken {
            var follower = ChainFollower()
            #expect(Self.link(&follower, first, after: HashChain.genesisHex))
            #expect(!Self.link(&follower, event, after: previous), "\(why)")
            #expect(!event.continuesChain(from: previous), "\(why)")
            // A refusal leaves nothing behind: the true events link on from where they were.
            #expect(Self.link(&follower, second, after: first.hash), "\(why)")
            #expect(Self.link(&follower, third, after: second.hash), "\(why)")
        }
    }
}
