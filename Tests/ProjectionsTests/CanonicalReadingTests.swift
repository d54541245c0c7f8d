import EventStore
import Events
import Projections
@testable import ProjectorRuntime
import StrataCore
import StrataTesting
import Testing

/// The projector reads events off the bus, pages of history and metadata in one pass when
/// they are canonical, as a Strata service sends them. These tests hold that shortcut to
/// the general readers: same events for what the service sends, same answer (event or
/// refusal) for anything mangled.
@Suite struct CanonicalReadingTests {
    private typealias F = LendingFixtures

    /// A lending story as the store records it, with text that needs escaping in one event.
    private func recordedStory() throws -> [RecordedEvent] {
        let h = try ProjectionHarness(ReadModels.all, name: "readmodels")
        let story: [(StrataEvent, String, String)] = [
            (F.agentRegistered("agent-1", username: "ravi"), "user-agent-1", "agent-1"),
            (F.agentApproved("agent-1"), "user-agent-1", "admin-1"),
            (F.accountOpened("A1", name: "Asha \"Akka\" Rao\nबेंगलूरु"), "account-A1", "agent-1"),
            (F.loanRequested("L1"), "loan-L1", "agent-1"),
            (F.loanApproved("L1"), "loan-L1", "admin-1"),
            (F.partialPayment(), "loan-L1", "agent-1"),
            (F.commission("P1", interestCents: 120_000, commissionCents: 12_000), "agent-agent-1", "agent-1"),
        ]
        return try story.map { event, stream, actor in try h.record(event, stream: stream, actor: actor) }
    }

    /// Bytes with a few random edits: bytes replaced, inserted or dropped.
    private func mangle(_ bytes: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        let interesting = Array(#"{}[]:,"\-0 9.enul"#.utf8) + [0x80, 0xC3, 0xFF]
        var out = bytes
        for _ in 0...Int.random(in: 0..<2, using: &random) {
            let at = Int.random(in: 0..<out.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: out[at] = interesting.randomElement(using: &random)!
            case 1: out.insert(interesting.randomElement(using: &random)!, at: at)
            default: out.remove(at: at)
            }
        }
        return out
    }

    @Test func busMessagesReadAsTheGeneralReaderReadsThem() throws {
        let seed: UInt64 = 0xB05
        var random = SplitMix64(seed: seed)
        for event in try recordedStory() {
            #expect(try RecordedEvent.fromBus(event.json) == event)
            for _ in 0..<300 {
                let bytes = mangle(event.json, &random)
                #expect(
                    (try? RecordedEvent.fromBus(bytes)) == (try? RecordedEvent(jsonBytes: bytes)),
                    "seed \(seed): \(String(decoding: bytes, as: UTF8.self))")
            }
        }
    }

    /// A page's events and head, or the refusal, to compare two readings.
    private struct Reading: Equatable {
        var events: [RecordedEvent] = []
        var head: Int64 = 0
        var error: HistoryError?

        init(_ read: () throws(HistoryError) -> HistoryPage) {
            do throws(HistoryError) {
                let page = try read()
                (events, head) = (page.events, page.head)
            } catch {
                self.error = error
            }
        }
    }

    @Test func historyPagesReadAsTheGeneralReaderReadsThem() throws {
        let events = try recordedStory()
        var page = Array(#"{"events":["#.utf8)
        for (index, event) in events.enumerated() {
            if index > 0 { page.append(UInt8(ascii: ",")) }
            page += event.json
        }
        page += Array(#"],"head":9,"ok":true}"#.utf8)
        #expect(Reading { () throws(HistoryError) in try BusHistory.parse(page) } == Reading {
            HistoryPage(events: events, head: 9)
        })
        let refusal = Array(#"{"error":{"code":"FORBIDDEN","message":"no","reason":"SCOPE"},"ok":false}"#.utf8)
        let seed: UInt64 = 0x415
        var random = SplitMix64(seed: seed)
        for bytes in [refusal] + (0..<1500).map({ _ in mangle(page, &random) }) {
            #expect(
                Reading { () throws(HistoryError) in try BusHistory.parse(bytes) }
                    == Reading { () throws(HistoryError) in try BusHistory.parseGenerally(bytes) },
                "seed \(seed): \(String(decoding: bytes, as: UTF8.self))")
        }
    }

    @Test func metadataReadsAsTheGeneralReaderReadsIt() throws {
        let stored = EventMetadata(commandId: "cmd-7", actor: "agent-1", correlationId: "c-1", causationId: "cmd-6")
        let seed: UInt64 = 0x3E7A
        var random = SplitMix64(seed: seed)
        for metadata in [stored, EventMetadata(commandId: "operator-bootstrap-1", actor: "operator")] {
            #expect(ProjectedEvent.canonicalMetadata(metadata.canonicalBytes) == metadata)
            for _ in 0..<500 {
                let bytes = mangle(metadata.canonicalBytes, &random)
                let event = RecordedEvent(
                    position: 1, stream: "user-u1", version: 1, type: "UserRegistered", schemaVersion: 1,
                    recordedAt: "2026-11-02T09:00:00.000Z", data: [], metadata: bytes, prevHash: "", hash: "")
                if let fast = ProjectedEvent.canonicalMetadata(bytes) {
                    let text = String(decoding: bytes, as: UTF8.self)
                    #expect(fast == (try? event.decodedMetadata()), "seed \(seed): \(text)")
                }
            }
        }
    }
}
