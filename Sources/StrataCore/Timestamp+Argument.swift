
/// Times as the command line takes them (`--since`, `--until`, `--as-of`).
extension Timestamp {
    /// A time as the command line takes it, in UTC: RFC 3339 with `Z` or an offset
    /// (`2026-11-20T10:00:00Z`, `2026-11-20T15:30:00.250+05:30`; fractions beyond
    /// milliseconds are truncated), or a date `YYYY-MM-DD`, meaning its first millisecond,
    /// or with `endOfDay` its last (so `--until 2026-11-20` takes the whole day).
    /// nil for anything else, and for instants outside the years 0001–9999.
    public init?(argument text: String, endOfDay: Bool = false) {
        let parsed: Timestamp?
        if let date = LocalDate(text) {
            parsed = Timestamp(date).adding(milliseconds: endOfDay ? 86_399_999 : 0)
        } else if text.hasSuffix("Z") || text.hasSuffix("z") {
            parsed = Timestamp(text)
        } else {
            parsed = Timestamp.offsetTime(Array(text.utf8))
        }
        guard let parsed, Timestamp.isStorable(parsed) else { return nil }
        self = parsed
    }

    /// `…±HH:MM`: the local time made UTC.
    private static func offsetTime(_ b: [UInt8]) -> Timestamp? {
        func twoDigits(_ at: Int) -> Int64? {
            let zero = UInt8(ascii: "0")
            guard (zero...zero + 9).contains(b[at]), (zero...zero + 9).contains(b[at + 1]) else { return nil }
            return Int64(b[at] - zero) * 10 + Int64(b[at + 1] - zero)
        }
        let n = b.count
        guard n >= 25, b[n - 6] == UInt8(ascii: "+") || b[n - 6] == UInt8(ascii: "-"), b[n - 3] == UInt8(ascii: ":"),
            let hours = twoDigits(n - 5), let minutes = twoDigits(n - 2), hours < 24, minutes < 60,
            let local = Timestamp(String(decoding: b[..<(n - 6)], as: UTF8.self) + "Z")
        else { return nil }
        let offset = (hours * 60 + minutes) * 60_000
        return local.adding(milliseconds: b[n - 6] == UInt8(ascii: "+") ? -offset : offset)
    }

    /// Within the years 0001–9999, whose text has the stored width, so text order is time order.
    public static func isStorable(_ time: Timestamp) -> Bool {
        let earliest = Timestamp(LocalDate(year: 1, month: 1, day: 1)!)
        let latest = Timestamp(LocalDate(year: 9999, month: 12, day: 31)!).adding(milliseconds: 86_399_999)
        return earliest <= time && time <= latest
    }
}
