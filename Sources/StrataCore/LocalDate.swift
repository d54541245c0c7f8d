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
        return LocalDate.pad(y, 4) + "-" + LocalDate.pad(m, 2) + "-" + LocalDate.pad(d, 2)
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

/// A date is a leaf written on every schedule entry: its digits go straight to the output.
extension LocalDate: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        let (year, month, day) = components
        func digits(_ value: Int, from divisor: Int) {
            var divisor = divisor
            while divisor > 0 {
                out.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value / divisor % 10))
                divisor /= 10
            }
        }
        out.append(UInt8(ascii: "\""))
        digits(year, from: 1000)
        out.append(UInt8(ascii: "-"))
        digits(month, from: 10)
        out.append(UInt8(ascii: "-"))
        digits(day, from: 10)
        out.append(UInt8(ascii: "\""))
    }
}
