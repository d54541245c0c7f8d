import EventStore
import Events
import Foundation
@testable import ProjectorRuntime
import Projections
import StrataCore
import StrataTesting
import Testing

/// A rebuild checks half of a page's chain on another thread when preparing is its slower
/// side. Whatever is wrong and wherever it falls (either half, the seam between them, an
/// event an operator skipped), the prepared page must be the one a single pass makes.
@Suite struct EventPreparerTests {
    /// Each prepared event as position and work, the poison's reason included.
    static func outline(_ prepared: [PreparedEvent]) -> [String] {
        prepared.map { event in
            switch event.work {
            case .pass: "\(event.event.position) pass"
            case .apply(_, let projections): "\(event.event.position) apply \(projections.count)"
            case .poison(let reason): "\(event.event.position) poison \(reason)"
            case .brokenChain(let reason): "\(event.event.position) broken chain \(reason)"
            case .keyStoreUnreadable(let reason): "\(event.event.position) key store \(reason)"
            }
        }
    }

    static func tamperedData(_ e: RecordedEvent) -> RecordedEvent {
        RecordedEvent(
            position: e.position, stream: e.stream, version: e.version, type: e.type, schemaVersion: e.schemaVersion,
            recordedAt: e.recordedAt, data: Array(String(decoding: e.data, as: UTF8.self).replacingOccurrences(
                of: "@example", with: "@elsewhere").utf8),
            metadata: e.metadata, prevHash: e.prevHash, hash: e.hash)
    }

    static func relinked(_ e: RecordedEvent) -> RecordedEvent {
        RecordedEvent(
            position: e.position, stream: e.stream, version: e.version, type: e.type, schemaVersion: e.schemaVersion,
            recordedAt: e.recordedAt, data: e.data, metadata: e.metadata, prevHash: String(repeating: "ab", count: 32),
            hash: e.hash)
    }

    @Test func checkingInHalvesPreparesWhatOnePassPrepares() throws {
        let h = try ProjectionHarness(ReadModels.all)
        let events = try (1...300).map { n in
            try h.record(
                .userRegistered(
                    UserRegistered(
                        userId: "u\(n)", username: "user\(n)", email: PersonalData("u\(n)@example.com"), role: .agent,
                        status: .pending)),
                stream: "user-u\(n)")
        }
        var pages: [(String, [RecordedEvent])] = [("clean", events)]
        for index in [0, 10, 148, 149, 150, 151, 299] {
            var tampered = events
            tampered[index] = Self.tamperedData(events[index])
            pages.append(("data changed at \(index)", tampered))
            var relinked = events
            relinked[index] = Self.relinked(events[index])
            pages.append(("link broken at \(index)", relinked))
        }
        var both = events
        both[40] = Self.tamperedData(events[40])
        both[200] = Self.relinked(events[200])
        pages.append(("both halves broken", both))

        let routes = ReadModels.all.map { EventPreparer.Route(projection: $0, categories: nil) }
        for skipped in [[], [150, 151], [20]] as [Set<Int64>] {
            let preparer = EventPreparer(routes: routes, skipped: skipped, opener: nil)
            for (name, page) in pages {
                let onePass = Self.outline(preparer.prepare(page, after: HashChain.genesisHex))
                let inHalves = Self.outline(preparer.prepare(page, after: HashChain.genesisHex, checkingInHalves: true))
                #expect(inHalves == onePass, "\(name), skipping \(skipped.sorted())")
                if name == "clean" { #expect(onePass.count == 300) }
            }
        }
        // A skipped position passes whatever it holds, and the chain goes on from its stored hash.
        var skippedTampered = events
        skippedTampered[150] = Self.tamperedData(events[150])
        let preparer = EventPreparer(routes: routes, skipped: [151], opener: nil)
        let prepared = Self.outline(preparer.prepare(skippedTampered, after: HashChain.genesisHex, checkingInHalves: true))
        #expect(prepared.count == 300)
        #expect(prepared[150] == "151 pass")
    }
}
