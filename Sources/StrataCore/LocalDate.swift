/// A business date, `YYYY-MM-DD`, in the proleptic Gregorian calendar (UTC).
///
/// Stored as days since 1970-01-01, so date arithmetic (due dates, days late) is
/// exact integer arithmetic with no time zones involved.
public struct LocalDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Days since 1970-01-01 (negative before it).
    public let daysSinceEpoch: Int

    public init(daysSinceEpoch: Int) {
        self.daysSinceEpoch = daysSinceEpoch
    }

    /// A valid calendar date between years 1 and 9999, else nil.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...LocalDate.daysInMonth(year: year, month: month)).contains(day)
        else { return nil }
        self.daysSinceEpoch = LocalDate.daysFromCivil(year: year, month: month, day: day)
    }

    /// Parses exactly `YYYY-MM-DD`; anything else (other lengths, a time, 2026-02-30) is nil.
    public init?(_ text: String) {
        let b = Array(text.utf8)
        guard b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            let y = LocalDate.digits(b[0..<4]), let m = LocalDate.digits(b[5..<7]), let d = LocalDate.digits(b[8..<10])
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The UTC calendar date of an instant.
    public init(_ timestamp: Timestamp) {
        let ms = timestamp.millisecondsSinceEpoch
        let days = ms >= 0 ? ms / 86_400_000 : -((-ms + 86_399_999) / 86_400_000)
        self.daysSinceEpoch = Int(days)
    }

    public var components: (year: Int, month: Int, day: Int) {
        LocalDate.civilFromDays(daysSinceEpoch)
    }

    public func adding(days: Int) -> LocalDate {
        LocalDate(daysSinceEpoch: daysSinceEpoch + days)
    }

    /// Whole days from `self` to `other` (positive when `other` is later).
    public func days(until other: LocalDate) -> Int {
        other.daysSinceEpoch - daysSinceEpoch
    }

    public var description: String {
        let (y, m, d) = components
        // Years 0–9999 (every date text parses to) are written straight into the string:
        // read models write dates for every event.
        guard (0...9999).contains(y) else {
            return LocalDate.pad(y, 4) + "-" + LocalDate.pad(m, 2) + "-" + LocalDate.pad(d, 2)
        }
        return String(unsafeUninitializedCapacity: 10) { out in
            LocalDate.write(y, m, d, into: out)
            return 10
        }
    }

    /// Writes `YYYY-MM-DD` (a year of 0–9999) into the first 10 bytes of `out`.
    static func write(_ y: Int, _ m: Int, _ d: Int, into out: UnsafeMutableBufferPointer<UInt8>) {
        writeDigits(y, width: 4, into: out, at: 0)
        out[4] = UInt8(ascii: "-")
        writeDigits(m, width: 2, into: out, at: 5)
        out[7] = UInt8(ascii: "-")
        writeDigits(d, width: 2, into: out, at: 8)
    }

    /// Writes `value` (0 ≤ value < 10^width) as `width` decimal digits, zero-padded.
    static func writeDigits(_ value: Int, width: Int, into out: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        var rest = value
        for index in stride(from: offset + width - 1, through: offset, by: -1) {
            out[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
    }

    public static func < (a: LocalDate, b: LocalDate) -> Bool { a.daysSinceEpoch < b.daysSinceEpoch }

    // MARK: - Calendar arithmetic (Howard Hinnant's civil-days algorithms)

    static func isLeap(_ y: Int) -> Bool { y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func digits(_ bytes: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for b in bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) else { return nil }
            value = value * 10 + Int(b - UInt8(ascii: "0"))
        }
        return value
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}

extension LocalDate: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = LocalDate(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a YYYY-MM-DD date: \(text)")
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A date is a leaf written on every schedule entry: its digits go straight to the output,
/// by the same writer as `description`.
extension LocalDate: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: LocalDate.quotedLength) { buffer in
            guard let written = writeQuoted(to: buffer.baseAddress!) else {
                return CanonicalJSON.appendString(description, to: &out)
            }
            out.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress!, count: written))
        }
    }

    /// The most `writeQuoted` writes: `"YYYY-MM-DD"`.
    static let quotedLength = 12

    /// Writes the date as a JSON string, `"YYYY-MM-DD"`, at `start` (room for `quotedLength`
    /// bytes) and returns how many bytes it wrote; nil, writing nothing, for a year beyond
    /// four digits, which `description` spells.
    func writeQuoted(to start: UnsafeMutablePointer<UInt8>) -> Int? {
        let (y, m, d) = components
        guard (0...9999).contains(y) else { return nil }
        start[0] = UInt8(ascii: "\"")
        LocalDate.write(y, m, d, into: UnsafeMutableBufferPointer(start: start + 1, count: 10))
        start[11] = UInt8(ascii: "\"")
        return LocalDate.quotedLength
    }
}
