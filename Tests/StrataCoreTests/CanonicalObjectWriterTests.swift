import StrataCore
import Testing

/// `CanonicalObjectWriter` lays members out in a stack buffer and appends it to the output
/// when it fills or when something is written to the output directly (a nested value, an
/// escaped or long string). Whatever falls where, the bytes must be the general encoder's.
@Suite struct CanonicalObjectWriterTests {
    /// One member of each kind, written by the writer and also as the equivalent JSON value.
    private struct Sample: CanonicalJSONWritable {
        var text: String
        var flag: Bool
        var number: Int64
        var date: LocalDate
        var nested: [Sample]

        func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
            try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
                try o.date("date", date)
                o.bool("flag", flag)
                try o.objects("nested", nested)
                o.integer("number", number)
                o.string("text", text)
            }
        }

        var json: JSONValue {
            [
                "date": .string(date.description), "flag": .bool(flag), "nested": .array(nested.map(\.json)),
                "number": .integer(number), "text": .string(text),
            ]
        }
    }

    private func written(_ value: some CanonicalJSONWritable) throws -> String {
        var out: [UInt8] = Array("prefix:".utf8)
        try value.writeCanonicalJSON(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Strings of every length around the buffer's size, plain, escaped and multi-byte, in
    /// objects nested so that the buffer is flushed before, inside and after each of them.
    @Test(arguments: [0, 1, 200, 229, 230, 231, 240, 250, 251, 252, 253, 254, 255, 256, 257, 1000])
    func stringsOfEveryLengthAroundTheBuffer(_ length: Int) throws {
        let texts = [
            String(repeating: "a", count: length), String(repeating: "é", count: length / 2),
            String(repeating: "x", count: max(0, length - 1)) + "\"",
            "\u{01}" + String(repeating: "b", count: length), String(repeating: "\\", count: length % 7),
        ]
        for text in texts {
            let inner = Sample(
                text: text, flag: false, number: Int64.min, date: LocalDate(year: 2026, month: 2, day: 28)!, nested: [])
            let sample = Sample(
                text: text, flag: true, number: Int64(length) - 500, date: LocalDate(year: 1, month: 1, day: 1)!,
                nested: [inner, inner])
            #expect(try written(sample) == "prefix:" + CanonicalJSON.string(sample.json))
        }
    }

    /// Years beyond four digits go through the date's own general path.
    @Test func datesOutsideFourDigitYears() throws {
        for days in [-800_000, -719_528, -719_162, 0, 2_932_896, 2_932_897, 5_000_000] {
            let sample = Sample(
                text: "t", flag: false, number: Int64.max, date: LocalDate(daysSinceEpoch: days), nested: [])
            #expect(try written(sample) == "prefix:" + CanonicalJSON.string(sample.json), "\(days)")
        }
    }
}
