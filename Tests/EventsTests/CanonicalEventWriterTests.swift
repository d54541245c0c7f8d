import Events
import Foundation
import StrataCore
import StrataTesting
import Testing

/// Every event writes its own canonical data (`Events/Encoding`). These tests hold each
/// writer to Foundation's encoding of the same value, canonicalised: the bytes that are
/// stored and hashed must not depend on which path wrote them.
@Suite struct CanonicalEventWriterTests {
    private func viaFoundation(_ payload: any DomainEvent) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return CanonicalJSON.bytes(try JSONParser.parse(try encoder.encode(payload)))
    }

    /// Every type of the catalog, and the values nested in them, write themselves.
    @Test(arguments: samples)
    func everyEventTypeWritesItself(_ event: StrataEvent) {
        #expect(event.payload is any CanonicalJSONWritable, "\(event.eventType) goes through the generic encoder")
    }

    /// For values generated from every sample (leaves varied across their ranges: empty,
    /// multi-byte and escaped strings, integer extremes, dates of every width, optionals
    /// dropped), the hand-written bytes are Foundation's, canonicalised.
    @Test(arguments: samples + sparseSamples)
    func writesWhatFoundationWritesOnGeneratedValues(_ sample: StrataEvent) throws {
        let seed = UInt64(truncatingIfNeeded: sample.eventType.utf8.reduce(3) { $0 &* 37 &+ Int($1) })
        var random = SplitMix64(seed: seed)
        var written = 0
        for _ in 0..<400 {
            let bytes = CanonicalJSON.bytes(vary(try JSONParser.parse(try sample.canonicalData()), &random))
            guard let value = reference(like: sample, bytes) else { continue }
            // Compared as text, so that a failure reads as JSON.
            let direct = String(decoding: try value.canonicalData(), as: UTF8.self)
            let expected = String(decoding: try viaFoundation(value), as: UTF8.self)
            #expect(direct == expected, "seed \(seed)")
            written += 1
        }
        #expect(written > 80, "seed \(seed): only \(written) of 400 generated values decoded")
    }
}
