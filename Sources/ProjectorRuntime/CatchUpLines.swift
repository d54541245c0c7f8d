/// The `caught up through history` lines, gathered by kind. A projector with
/// `--open-through-history` catches up once for each event on the bus that carries personal
/// data, since history opens it, and a line for each grew the log with the traffic: nearly
/// every line of a projector's log was one. Of each kind, the first catch-up is logged at once;
/// those that follow within `interval` of its line are counted and logged together once it has
/// passed, or when the projector stops, so a kind adds at most a line a minute.
struct CatchUpLines {
    /// How often the log hears of one kind of catch-up at most.
    static let interval: Duration = .seconds(60)

    private struct Gathered {
        /// When the kind's last line was logged.
        var lastLine: ContinuousClock.Instant
        /// Catch-ups since that line, what they applied, and the position the last one reached.
        var catchUps = 0
        var events: Int64 = 0
        var position: Int64 = 0
    }

    /// By the reason's kind, of which there are a handful.
    private var kinds: [String: Gathered] = [:]

    /// Notes a catch-up that applied `events`, up to `position`; returns the line to log now,
    /// if one is due.
    mutating func caughtUp(
        _ reason: CatchUpReason, events: Int64, position: Int64, at now: ContinuousClock.Instant
    ) -> String? {
        guard var gathered = kinds[reason.kind],
            gathered.catchUps > 0 || now - gathered.lastLine < Self.interval
        else {
            kinds[reason.kind] = Gathered(lastLine: now)
            return "caught up through history \(reason.text): events=\(events) position=\(position)"
        }
        gathered.catchUps += 1
        gathered.events += events
        gathered.position = position
        kinds[reason.kind] = gathered
        return now - gathered.lastLine < Self.interval ? nil : line(reason.kind, at: now)
    }

    /// The lines of the kinds whose catch-ups were counted and whose interval has passed.
    mutating func due(at now: ContinuousClock.Instant) -> [String] {
        kinds.keys.sorted().compactMap { kind in
            guard let gathered = kinds[kind], gathered.catchUps > 0, now - gathered.lastLine >= Self.interval else {
                return nil
            }
            return line(kind, at: now)
        }
    }

    /// The lines of every kind with catch-ups counted, due or not: the projector is stopping.
    mutating func remaining(at now: ContinuousClock.Instant) -> [String] {
        kinds.keys.sorted().compactMap { kind in kinds[kind]?.catchUps ?? 0 > 0 ? line(kind, at: now) : nil }
    }

    /// `caught up through history to open personal data 53 more times in 60 s: events=E position=P`,
    /// and the kind's count begins again.
    private mutating func line(_ kind: String, at now: ContinuousClock.Instant) -> String {
        guard let gathered = kinds[kind] else { return "" }
        kinds[kind] = Gathered(lastLine: now)
        let seconds = Int((now - gathered.lastLine).components.seconds)
        let times = gathered.catchUps == 1 ? "1 more time" : "\(gathered.catchUps) more times"
        return "caught up through history \(kind) \(times) in \(seconds) s: events=\(gathered.events) "
            + "position=\(gathered.position)"
    }
}
