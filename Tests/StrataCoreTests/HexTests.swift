import Testing

import StrataCore

@Suite("Hex")
struct HexTests {
    /// Every byte value, against the standard library's own radix formatting.
    @Test func everyByteIsTwoLowercaseDigits() {
        let all = (0...255).map { UInt8($0) }
        let expected = all.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(Hex.encode(all) == expected)
        var into = [UInt8](repeating: 0, count: all.count * 2)
        Hex.encode(all, into: &into)
        #expect(into == Array(expected.utf8))
    }

    @Test func emptyAndRoundTrip() {
        #expect(Hex.encode([]) == "")
        var none: [UInt8] = []
        Hex.encode([], into: &none)
        #expect(none.isEmpty)
        let digest: [UInt8] = [0x00, 0x0f, 0xa5, 0xff, 0x10, 0x9e]
        #expect(Hex.encode(digest) == "000fa5ff109e")
        #expect(Hex.decode(Hex.encode(digest)) == digest)
        #expect(Hex.decode("000FA5FF109E") == digest)
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
    }
}
