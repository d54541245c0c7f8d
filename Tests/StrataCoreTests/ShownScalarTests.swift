import StrataCore
import Testing

/// `isEscapedWhenShown` decides printable ASCII by its value alone, without the scalar's Unicode
/// properties; every scalar must still be judged as the rule says.
@Suite("Scalars escaped when shown")
struct ShownScalarTests {
    @Test func everyScalarIsJudgedByTheRule() {
        var escaped: [UInt32] = []
        var disagreements: [UInt32] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let rule =
                value < 0x20 || (0x7F...0x9F).contains(value) || scalar.properties.isBidiControl
                || value == 0x2028 || value == 0x2029
            if scalar.isEscapedWhenShown != rule { disagreements.append(value) }
            if rule && value > 0x9F { escaped.append(value) }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
        // Beyond the C0 and C1 controls: ALM, LRM, RLM, the embeddings and isolates, and the separators.
        #expect(escaped == [0x61C, 0x200E, 0x200F, 0x2028, 0x2029] + Array(0x202A...0x202E) + Array(0x2066...0x2069))
    }
}
