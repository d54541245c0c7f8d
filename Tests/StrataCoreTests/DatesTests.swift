import Foundation
import StrataCore
import Testing

/// A date the test knows to be valid.
func date(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> LocalDate {
    try #require(LocalDate(text), "\(text) should be a valid date", sourceLocation: sourceLocation)
}

/// An instant the test knows to be valid.
func instant(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Timestamp {
    try #require(Timestamp(text), "\(text) should be a valid timestamp", sourceLocation: sourceLocation)
}

@Suite("LocalDate")
struct LocalDateTests {
    /// Days since 1970-01-01, computed independently with Python's `datetime.date`.
    @Test(arguments: [
        ("1970-01-01", 0), ("1969-12-31", -1), ("1970-01-02", 1), ("2000-02-29", 11016), ("2000-03-01", 11017),
        ("2024-02-29", 19782), ("2026-11-20", 20777), ("1900-03-01", -25508), ("0001-01-01", -719_162),
        ("9999-12-31", 2_932_896),
    ])
    func daysSinceEpoch(_ text: String, _ days: Int) throws {
        let parsed = try date(text)
        #expect(parsed.daysSinceEpoch == days)
        #expect(LocalDate(daysSinceEpoch: days).description == text)
    }

    @Test(arguments: ["2024-02-29", "2000-02-29", "1600-02-29", "2400-02-29", "1996-02-29", "0004-02-29"])
    func leapDaysAreValid(_ text: String) throws {
        let parsed = try date(text)
        #expect(parsed.description == text)
        #expect(parsed.components.month == 2 && parsed.components.day == 29)
    }

    @Test(arguments: ["2023-02-29", "1900-02-29", "2100-02-29", "2026-02-29", "1800-02-29", "2024-02-30"])
    func nonLeapDaysAreInvalid(_ text: String) {
        #expect(LocalDate(text) == nil)
    }

    @Test(arguments: [
        "2026-1-01", "2026-13-01", "2026-11-31", "20261101", " 2026-11-01", "2026-11-01 ", "2026-00-10", "2026-01-00",
        "2026-01-32", "2026-04-31", "0000-01-01", "2026/11/01", "2026-11-01T00:00:00Z", "", "abcd-ef-gh", "+026-11-01",
        "2026-11-1a", "-026-11-01", "2026--1-01", "\u{FF12}026-11-01",
    ])
    func invalidStrings(_ text: String) {
        #expect(LocalDate(text) == nil)
    }

    @Test func componentInitialiser() {
        #expect(LocalDate(year: 2026, month: 11, day: 20)?.description == "2026-11-20")
        #expect(LocalDate(year: 2026, month: 2, day: 29) == nil)
        #expect(LocalDate(year: 0, month: 1, day: 1) == nil)
        #expect(LocalDate(year: 10_000, month: 1, day: 1) == nil)
        #expect(LocalDate(year: 2026, month: 6, day: 31) == nil)
    }

    /// Every day of a few leap/non-leap stretches round-trips through text, and consecutive
    /// days step their components correctly (day + 1, or the 1st of the next month/year).
    @Test(arguments: [("1899-12-01", "1901-03-31"), ("1999-12-01", "2001-03-31"), ("2023-11-01", "2025-03-31"), ("1969-11-01", "1970-02-28")])
    func everyDayRoundTrips(_ from: String, _ to: String) throws {
        let first = try date(from)
        let last = try date(to)
        var previous = first.components
        for days in (first.daysSinceEpoch + 1)...last.daysSinceEpoch {
            let day = LocalDate(daysSinceEpoch: days)
            #expect(LocalDate(day.description) == day)
            let c = day.components
            let next =
                (c.year == previous.year && c.month == previous.month && c.day == previous.day + 1)
                || (c.year == previous.year && c.month == previous.month + 1 && c.day == 1)
                || (c.year == previous.year + 1 && c.month == 1 && c.day == 1 && previous.month == 12 && previous.day == 31)
            #expect(next, "\(day) does not follow \(previous)")
            if c.month != previous.month {
                // The previous day was the last of its month.
                #expect(LocalDate(year: previous.year, month: previous.month, day: previous.day + 1) == nil)
            }
            previous = c
        }
    }

    /// Cross-check with Foundation's Gregorian calendar (after 1583, where it no longer
    /// switches to the Julian calendar).
    @Test func agreesWithFoundationCalendar() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        for year in stride(from: 1600, through: 2400, by: 7) {
            for (month, day) in [(1, 1), (2, 28), (3, 1), (12, 31), (7, 15)] {
                let components = DateComponents(year: year, month: month, day: day)
                let foundation = try #require(calendar.date(from: components))
                let days = Int((foundation.timeIntervalSince1970 / 86_400).rounded(.down))
                #expect(LocalDate(year: year, month: month, day: day)?.daysSinceEpoch == days, "\(year)-\(month)-\(day)")
            }
        }
    }

    /// Expected dates checked with Python's `date + timedelta(days=n)`; 2100 is not a leap year.
    @Test(arguments: [
        ("2026-01-31", 1, "2026-02-01"), ("2024-02-28", 1, "2024-02-29"), ("2023-02-28", 1, "2023-03-01"),
        ("2024-02-29", 1, "2024-03-01"), ("2026-12-31", 1, "2027-01-01"), ("2027-01-01", -1, "2026-12-31"),
        ("2026-11-20", 30, "2026-12-20"), ("2026-11-20", 365, "2027-11-20"), ("2024-03-01", -366, "2023-03-01"),
        ("2000-03-01", -1, "2000-02-29"), ("1900-03-01", -1, "1900-02-28"), ("1970-01-01", -1, "1969-12-31"),
        ("2026-11-20", 0, "2026-11-20"), ("2026-01-01", 36_524, "2126-01-01"), ("2096-02-28", 1_462, "2100-03-01"),
    ])
    func addingDays(_ start: String, _ days: Int, _ end: String) throws {
        let from = try date(start)
        let to = try date(end)
        #expect(from.adding(days: days) == to)
        #expect(from.days(until: to) == days)
        #expect(to.days(until: from) == -days)
    }

    @Test func daysUntil() throws {
        #expect(try date("2023-01-01").days(until: date("2024-01-01")) == 365)
        #expect(try date("2024-01-01").days(until: date("2025-01-01")) == 366)
        #expect(try date("1970-01-01").days(until: date("2000-03-01")) == 11017)
        #expect(try date("2026-11-20").days(until: date("2026-11-20")) == 0)
    }

    @Test func ordering() throws {
        #expect(try date("2026-01-01") < date("2026-01-02"))
        #expect(try date("1969-12-31") < date("1970-01-01"))
        #expect(try !(date("2026-01-02") < date("2026-01-01")))
        #expect(try [date("2027-01-01"), date("2026-12-31"), date("2026-02-01")].sorted().map(\.description)
            == ["2026-02-01", "2026-12-31", "2027-01-01"])
    }
}

@Suite("Timestamp")
struct TimestampTests {
    /// 2026-11-20T10:00:00Z in milliseconds (Python: `datetime(2026,11,20,10,tzinfo=utc).timestamp()*1000`).
    static let tenOClock: Int64 = 1_795_168_800_000

    @Test(arguments: [
        ("2026-11-20T10:00:00Z", 0), ("2026-11-20T10:00:00.1Z", 100), ("2026-11-20T10:00:00.12Z", 120),
        ("2026-11-20T10:00:00.123Z", 123), ("2026-11-20T10:00:00.1239Z", 123), ("2026-11-20T10:00:00.999999Z", 999),
        ("2026-11-20T10:00:00.000000001Z", 0), ("2026-11-20T10:00:00.9999999999999999999999999Z", 999),
        ("2026-11-20t10:00:00.5z", 500),
    ] as [(String, Int64)])
    func fractionDigits(_ text: String, _ millis: Int64) throws {
        #expect(try instant(text).millisecondsSinceEpoch == Self.tenOClock + millis)
    }

    @Test(arguments: [
        "2026-11-20T10:00:00+00:00", "2026-11-20T10:00:00+01:00", "2026-11-20T10:00:00-05:00", "2026-11-20T10:00:00",
        "2026-11-20T10:00:00.123+00:00", "2026-11-20 10:00:00Z", "2026-11-20T24:00:00Z", "2026-11-20T10:60:00Z",
        "2026-11-20T10:00:60Z", "2026-11-20T10:00:00.Z", "2026-11-20T10:00:00,123Z", "2026-11-20T10:00:00.12aZ",
        "2026-11-20T10:00:00.-12Z", "2026-02-30T10:00:00Z", "2026-11-20T1:00:00Z", "2026-11-20T10:00Z", "",
        "2026-11-20T10-00-00Z", "2026-11-20T10:00:00ZZ", "2026-11-20", "2026-11-20T10:00:00.123", " 2026-11-20T10:00:00Z",
        "2026-11-20T10:00:00.12 Z",
    ])
    func refused(_ text: String) {
        #expect(Timestamp(text) == nil)
    }

    @Test(arguments: [
        (0, "1970-01-01T00:00:00.000Z"), (1, "1970-01-01T00:00:00.001Z"), (-1, "1969-12-31T23:59:59.999Z"),
        (-1000, "1969-12-31T23:59:59.000Z"), (-86_400_000, "1969-12-31T00:00:00.000Z"),
        (-86_400_001, "1969-12-30T23:59:59.999Z"), (86_399_999, "1970-01-01T23:59:59.999Z"),
        (TimestampTests.tenOClock + 123, "2026-11-20T10:00:00.123Z"), (951_782_400_000, "2000-02-29T00:00:00.000Z"),
        (-2_208_988_800_000, "1900-01-01T00:00:00.000Z"),
    ] as [(Int64, String)])
    func formatsWithExactlyThreeFractionDigits(_ millis: Int64, _ text: String) throws {
        let timestamp = Timestamp(millisecondsSinceEpoch: millis)
        #expect(timestamp.description == text)
        #expect(Timestamp(text) == timestamp)
    }

    /// The text is the fixed-width form, `%04d-%02d-%02dT%02d:%02d:%02d.%03dZ`, for every
    /// year a date can be written in; years outside 0–9999 keep their old form.
    @Test func descriptionIsTheFixedWidthForm() {
        for days in stride(from: -719_528, through: 2_932_896, by: 997) {
            let date = LocalDate(daysSinceEpoch: days)
            let (y, m, d) = date.components
            #expect(date.description == String(format: "%04ld-%02ld-%02ld", y, m, d))
            let offset = abs(days) * 7919 % 86_400_000
            let text = String(
                format: "%04ld-%02ld-%02ldT%02ld:%02ld:%02ld.%03ldZ", y, m, d, offset / 3_600_000, offset / 60_000 % 60,
                offset / 1000 % 60, offset % 1000)
            let millis = Int64(days) * 86_400_000 + Int64(offset)
            #expect(Timestamp(millisecondsSinceEpoch: millis).description == text, "\(days)")
        }
        #expect(LocalDate(daysSinceEpoch: -719_529).description == "00-1-12-31")
        #expect(LocalDate(daysSinceEpoch: 2_932_897).description == "10000-01-01")
    }

    @Test func descriptionRoundTripsAcrossTheEpoch() {
        for millis in stride(from: Int64(-200_000_000_000), through: 200_000_000_000, by: 987_654_321) {
            let timestamp = Timestamp(millisecondsSinceEpoch: millis)
            let text = timestamp.description
            #expect(text.utf8.count == 24 && text.hasSuffix("Z"), "\(text)")
            #expect(Timestamp(text) == timestamp, "\(text)")
        }
    }

    @Test(arguments: [
        (0, 0), (999, 0), (1000, 1), (1999, 1), (-1, -1), (-999, -1), (-1000, -1), (-1001, -2),
    ] as [(Int64, Int64)])
    func secondsRoundTowardsMinusInfinity(_ millis: Int64, _ seconds: Int64) {
        #expect(Timestamp(millisecondsSinceEpoch: millis).secondsSinceEpoch == seconds)
    }

    @Test func secondsInitialiser() {
        #expect(Timestamp(secondsSinceEpoch: -2).millisecondsSinceEpoch == -2000)
        #expect(Timestamp(secondsSinceEpoch: 1_795_168_800) == Timestamp(millisecondsSinceEpoch: Self.tenOClock))
    }

    /// The UTC calendar date of an instant, on both sides of midnight.
    @Test(arguments: [
        (0, "1970-01-01"), (-1, "1969-12-31"), (86_399_999, "1970-01-01"), (86_400_000, "1970-01-02"),
        (-86_400_000, "1969-12-31"), (-86_400_001, "1969-12-30"), (TimestampTests.tenOClock, "2026-11-20"),
    ] as [(Int64, String)])
    func calendarDateOfAnInstant(_ millis: Int64, _ text: String) throws {
        let timestamp = Timestamp(millisecondsSinceEpoch: millis)
        #expect(LocalDate(timestamp).description == text)
        #expect(timestamp.date.description == text)
    }

    @Test(arguments: ["2024-02-29", "2024-03-01", "1970-01-01", "1969-12-31", "1900-03-01", "2026-12-31"])
    func midnightOfADate(_ text: String) throws {
        let day = try date(text)
        let midnight = Timestamp(day)
        #expect(midnight.description == text + "T00:00:00.000Z")
        #expect(LocalDate(midnight) == day)
        #expect(LocalDate(midnight.adding(milliseconds: -1)) == day.adding(days: -1))
        #expect(LocalDate(midnight.adding(milliseconds: 86_399_999)) == day)
        #expect(LocalDate(midnight.adding(milliseconds: 86_400_000)) == day.adding(days: 1))
    }

    @Test func ordering() throws {
        #expect(try instant("2026-11-20T10:00:00.001Z") > instant("2026-11-20T10:00:00Z"))
        #expect(Timestamp(millisecondsSinceEpoch: -1) < Timestamp(millisecondsSinceEpoch: 0))
    }

    @Test func systemClockIsNearNow() {
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let now = SystemClock().now().millisecondsSinceEpoch
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(now >= before - 5 && now <= after + 5)
    }
}

@Suite("Date and time Codable")
struct DateCodableTests {
    struct Record: Codable, Equatable {
        var on: LocalDate
        var at: Timestamp
        var stream: StreamName
    }

    @Test func roundTripThroughJSON() throws {
        let record = Record(
            on: try date("2024-02-29"), at: try instant("1969-12-31T23:59:59.999Z"),
            stream: try #require(StreamName("loan-0a1b-2c")))
        let bytes = try CanonicalJSON.encode(record)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"at":"1969-12-31T23:59:59.999Z","on":"2024-02-29","stream":"loan-0a1b-2c"}"#)
        #expect(try CanonicalJSON.decode(Record.self, from: bytes) == record)
        #expect(try JSONDecoder().decode(Record.self, from: JSONEncoder().encode(record)) == record)
    }

    @Test(arguments: [
        #"{"at":"2026-11-20T10:00:00Z","on":"2026-02-29","stream":"loan-L1"}"#,
        #"{"at":"2026-11-20T10:00:00+01:00","on":"2026-02-28","stream":"loan-L1"}"#,
        #"{"at":"2026-11-20T10:00:00Z","on":"2026-02-28","stream":"Loan-L1"}"#,
        #"{"at":1795168800000,"on":"2026-02-28","stream":"loan-L1"}"#,
        #"{"at":"2026-11-20T10:00:00Z","on":20000,"stream":"loan-L1"}"#,
    ])
    func invalidValuesAreRefused(_ json: String) {
        #expect(throws: DecodingError.self) { try CanonicalJSON.decode(Record.self, from: Array(json.utf8)) }
    }

    @Test func shortFractionIsReadAndWrittenWithThree() throws {
        let record = try CanonicalJSON.decode(
            Record.self, from: Array(#"{"at":"2026-11-20T10:00:00.5Z","on":"2026-11-20","stream":"user-u1"}"#.utf8))
        #expect(record.at.description == "2026-11-20T10:00:00.500Z")
    }
}
