import StrataCore

/// The messages on the events endpoint that are neither an event nor a heartbeat, gathered for
/// the log (`RepeatedLines`): anyone who can publish there (a foreign publisher on the endpoint,
/// a damaged stream) could otherwise add a line per message, and their topic, shown as it came,
/// could break a line or forge one. The first is logged at once, those within the next minute
/// are counted into one line, and the topic is a `Logger.field`, cut to `shownTopicBytes`.
struct UnreadableMessages {
    /// As much of a topic as a line shows: enough for `<category>.<Type>`, not a megabyte.
    static let shownTopicBytes = 64

    /// The last topic counted since the last line.
    private var lines = RepeatedLines(empty: "")

    /// Notes a message dropped as unreadable; returns the line to log now, if one is due.
    mutating func dropped(topic: [UInt8], at now: ContinuousClock.Instant) -> String? {
        let shown = Self.shown(topic)
        switch lines.note(Self.kind, at: now, adding: { $0 = shown }) {
        case .first: return "\(Self.kind) topic=\(shown)"
        case .counted: return nil
        case .gathered(let gathered): return Self.line(gathered)
        }
    }

    /// The line of the messages counted, once a minute has passed since the last.
    mutating func due(at now: ContinuousClock.Instant) -> [String] {
        lines.due(at: now).map(Self.line)
    }

    /// The line of the messages counted, due or not: the projector is stopping.
    mutating func remaining(at now: ContinuousClock.Instant) -> [String] {
        lines.remaining(at: now).map(Self.line)
    }

    private static let kind = "dropped an unreadable message on the events endpoint"

    /// `dropped an unreadable message on the events endpoint 41 more times in 60 s, the last topic=…`.
    private static func line(_ gathered: RepeatedLines<String>.Gathered) -> String {
        "\(gathered.kind) \(gathered.moreTimes) in \(gathered.seconds) s, the last topic=\(gathered.tally)"
    }

    /// The topic as a field, its bytes past `shownTopicBytes` left out (`…` says so).
    static func shown(_ topic: [UInt8]) -> String {
        let cut = topic.count > shownTopicBytes
        return Logger.field(String(decoding: topic.prefix(shownTopicBytes), as: UTF8.self) + (cut ? "…" : ""))
    }
}
