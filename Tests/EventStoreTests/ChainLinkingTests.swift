@testable import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing

/// The chain hashed beside the writer must be the chain hashed inline: same links, in
/// the same order, however submitting and collecting interleave, and whatever an
/// abandoned append left behind.
@Suite("Chain linking")
struct ChainLinkingTests {
    /// Events of varied sizes (empty data, escapes, multi-byte text, 4 KB) so that bodies
    /// span from under one SHA-256 block to many.
    static func events(_ count: Int, from first: Int64 = 1) -> [NumberedEvent] {
        (0..<count).map { i in
            let text: String
            switch i % 4 {
            case 0: text = ""
            case 1: text = "é \"q\" \\ ✓ \(i)"
            case 2: text = String(repeating: "x", count: 4096)
            default: text = "n\(i)"
            }
            let data = Array("{\"t\":\(CanonicalJSON.string(.string(text)))}".utf8)
            return NumberedEvent(
                position: first + Int64(i), stream: "loan-L\(i % 7)", version: Int64(i / 7 + 1), type: "TestHappened",
                schemaVersion: 1 + i % 2, recordedAt: "2026-11-21T10:00:00.000Z", data: data,
                metadata: Array(#"{"actor":"a","commandId":"c\#(i)"}"#.utf8))
        }
    }

    static func inlineLinks(_ events: [NumberedEvent], after previous: [UInt8]) -> [ChainLink] {
        var chain = InlineChain(after: previous)
        for event in events { chain.submit(event) }
        return events.indices.map { chain.link($0) }
    }

    @Test func inlineLinksAreTheHashChain() {
        let events = Self.events(9)
        let links = Self.inlineLinks(events, after: HashChain.genesis)
        var previous = HashChain.genesis
        for (event, link) in zip(events, links) {
            let body = RecordedEvent.envelope(
                data: event.data, hash: nil, metadata: event.metadata, position: event.position, prevHash: nil,
                recordedAt: event.recordedAt, schemaVersion: event.schemaVersion, stream: event.stream,
                type: event.type, version: event.version)
            #expect(link.hash == HashChain.hash(previous: previous, canonicalEvent: body))
            #expect(link.hex == Hex.encode(link.hash))
            previous = link.hash
        }
    }

    /// Collected as fast as submitted, all submitted first, and in irregular turns: the
    /// writer may catch up with the thread at any point.
    @Test(arguments: [1, 7, 8, 9, 64, 301])
    func theThreadMakesTheInlineLinks(_ count: Int) {
        let events = Self.events(count)
        let start = HashChain.sha256(Array("before".utf8))
        let expected = Self.inlineLinks(events, after: start).map(\.hex)
        let thread = ChainHashingThread()
        defer { thread.close() }

        var lockstep = thread.chain(after: start)
        var got: [String] = []
        for (index, event) in events.enumerated() {
            lockstep.submit(event)
            got.append(lockstep.link(index).hex)
        }
        #expect(got == expected)

        var allFirst = thread.chain(after: start)
        for event in events { allFirst.submit(event) }
        #expect(events.indices.map { allFirst.link($0).hex } == expected)

        var irregular = thread.chain(after: start)
        var submitted = 0
        var collected: [String] = []
        var turn = 0
        while collected.count < count {
            turn += 1
            let more = min(count - submitted, turn % 5)
            for event in events[submitted..<(submitted + more)] { irregular.submit(event) }
            submitted += more
            let upTo = min(submitted, collected.count + turn % 3 + 1)
            while collected.count < upTo { collected.append(irregular.link(collected.count).hex) }
        }
        #expect(collected == expected)
    }

    /// A failed append leaves its job unread; the next append's chain starts afresh.
    @Test func anAbandonedJobDoesNotLeakIntoTheNext() {
        let thread = ChainHashingThread()
        defer { thread.close() }
        var abandoned = thread.chain(after: HashChain.genesis)
        for event in Self.events(200) { abandoned.submit(event) }
        _ = abandoned.link(0)

        let events = Self.events(40, from: 1)
        let start = HashChain.sha256(Array("tip".utf8))
        var next = thread.chain(after: start)
        for event in events { next.submit(event) }
        #expect(events.indices.map { next.link($0).hex } == Self.inlineLinks(events, after: start).map(\.hex))
    }
}
