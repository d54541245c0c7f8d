import StrataCore

/// The `caught up through history` lines, gathered by kind (`RepeatedLines`). A projector with
/// `--open-through-history` catches up once for each event on the bus that carries personal
/// data, since history opens it, and a line for each grew the log with the traffic: nearly
/// every line of a projector's log was one. Of each kind, the first catch-up is logged at once;
/// those that follow within a minute of its line are counted and logged together once it has
/// passed, or when the projector stops.
struct CatchUpLines {
    /// What the catch-ups counted since a kind's last line applied, and the position the last reached.
    private struct Applied {
        var events: Int64 = 0
        var position: Int64 = 0
    }

    private var lines = RepeatedLines(empty: Applied())

    /// Notes a catch-up that applied `events`, up to `position`; returns the line to log now,
    /// if one is due.
    mutating func caughtUp(
        _ reason: CatchUpReason, events: Int64, position: Int64, at now: ContinuousClock.Instant
    ) -> String? {
        let noted = lines.note(reason.kind, at: now) { applied in
            applied.events += events
            applied.position = position
        }
        switch noted {
        case .first: return "caught up through history \(reason.text): events=\(events) position=\(position)"
        case .counted: return nil
        case .gathered(let gathered): return Self.line(gathered)
        }
    }

    /// The lines of the kinds whose catch-ups were counted and whose interval has passed.
    mutating func due(at now: ContinuousClock.Instant) -> [String] {
        lines.due(at: now).map(Self.line)
    }

    /// The lines of every kind with catch-ups counted, due or not: the projector is stopping.
    mutating func remaining(at now: ContinuousClock.Instant) -> [String] {
        lines.remaining(at: now).map(Self.line)
    }

    /// `caught up through history to open personal data 53 more times in 60 s: events=E position=P`.
    private static func line(_ gathered: RepeatedLines<Applied>.Gathered) -> String {
        "caught up through history \(gathered.kind) \(gathered.moreTimes) in \(gathered.seconds) s: "
            + "events=\(gathered.tally.events) position=\(gathered.tally.position)"
    }
}
