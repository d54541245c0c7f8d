#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An instant, to the millisecond, written as RFC 3339 UTC with milliseconds:
/// `2026-11-20T10:00:00.123Z`.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let millisecondsSinceEpoch: Int64

    public init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    public init(secondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = secondsSinceEpoch * 1000
    }

    /// Midnight UTC at the start of a date.
    public init(_ date: LocalDate) {
        self.millisecondsSinceEpoch = Int64(date.daysSinceEpoch) * 86_400_000
    }

    /// Parses RFC 3339 in UTC: `YYYY-MM-DDTHH:MM:SS[.fff]Z` (fraction of 0–3 digits
    /// here; more digits are truncated to milliseconds). Offsets other than `Z` are refused.
    public init?(_ text: String) {
        let b = Array(text.utf8)
        guard b.count >= 20, b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
            b.last == UInt8(ascii: "Z") || b.last == UInt8(ascii: "z"),
            let date = LocalDate(String(decoding: b[0..<10], as: UTF8.self)),
            let hh = LocalDate.digits(b[11..<13]), let mm = LocalDate.digits(b[14..<16]),
            let ss = LocalDate.digits(b[17..<19]), hh < 24, mm < 60, ss < 60
        else { return nil }
        var millis = 0
        if b.count > 20 {
            guard b[19] == UInt8(ascii: "."), b.count > 21 else { return nil }
            let fraction = b[20..<(b.count - 1)]
            // Check the digits without accumulating them: a long fraction would overflow.
            guard fraction.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
            let firstThree = Array(fraction.prefix(3)) + Array(repeating: UInt8(ascii: "0"), count: max(0, 3 - fraction.count))
            millis = LocalDate.digits(firstThree[0..<3])!
        } else if b.count != 20 {
            return nil
        }
        let seconds = Int64(date.daysSinceEpoch) * 86_400 + Int64(hh * 3600 + mm * 60 + ss)
        self.millisecondsSinceEpoch = seconds * 1000 + Int64(millis)
    }

    /// The wall clock, now.
    public static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(millisecondsSinceEpoch: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }

    public var secondsSinceEpoch: Int64 {
        millisecondsSinceEpoch >= 0 ? millisecondsSinceEpoch / 1000 : -((-millisecondsSinceEpoch + 999) / 1000)
    }

    public var date: LocalDate { LocalDate(self) }

    public var description: String {
        let day = date
        let msOfDay = millisecondsSinceEpoch - Int64(day.daysSinceEpoch) * 86_400_000
        let seconds = Int(msOfDay / 1000)
        let millis = Int(msOfDay % 1000)
        let (y, m, d) = day.components
        if (0...9999).contains(y) {
            return String(unsafeUninitializedCapacity: 24) { out in
                LocalDate.write(y, m, d, into: out)
                out[10] = UInt8(ascii: "T")
                LocalDate.writeDigits(seconds / 3600, width: 2, into: out, at: 11)
                out[13] = UInt8(ascii: ":")
                LocalDate.writeDigits(seconds / 60 % 60, width: 2, into: out, at: 14)
                out[16] = UInt8(ascii: ":")
                LocalDate.writeDigits(seconds % 60, width: 2, into: out, at: 17)
                out[19] = UInt8(ascii: ".")
                LocalDate.writeDigits(millis, width: 3, into: out, at: 20)
                out[23] = UInt8(ascii: "Z")
                return 24
            }
        }
        return day.description + "T" + LocalDate.pad(seconds / 3600, 2) + ":" + LocalDate.pad(seconds / 60 % 60, 2) + ":"
            + LocalDate.pad(seconds % 60, 2) + "." + LocalDate.pad(millis, 3) + "Z"
    }

    public func adding(milliseconds: Int64) -> Timestamp {
        Timestamp(millisecondsSinceEpoch: millisecondsSinceEpoch + milliseconds)
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.millisecondsSinceEpoch < b.millisecondsSinceEpoch }
}

extension Timestamp: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = Timestamp(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 UTC timestamp: \(text)")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Where "now" comes from. Deciders never read it; the services pass it in.
public protocol WallClock: Sendable {
    func now() -> Timestamp
}

/// The system's real-time clock.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Timestamp { Timestamp.now() }
}
