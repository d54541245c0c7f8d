/// Lines a process would otherwise log again and again, gathered by kind: a catch-up for each
/// event, a refusal for each request, a message for each one a foreign publisher sends. Of each
/// kind the first is logged at once; those that follow within `interval` of its line are
/// counted and logged together once it has passed, or when the process stops, so a kind adds at
/// most a line a minute however often it happens. `Tally` is what a gathered line tells of the
/// occurrences it stands for (a sum, the last one's value), made from `empty` by each note.
/// Kinds are a handful of fixed names, never text from a peer, so that they stay few.
public struct RepeatedLines<Tally> {
    /// How often the log hears of one kind at most.
    public static var interval: Duration { .seconds(60) }

    /// What a gathered line stands for: the occurrences of `kind` since its last line,
    /// `seconds` before.
    public struct Gathered {
        public let kind: String
        public let times: Int
        public let seconds: Int64
        public let tally: Tally

        /// `1 more time`, `53 more times`.
        public var moreTimes: String { times == 1 ? "1 more time" : "\(times) more times" }
    }

    /// What to log for an occurrence just noted.
    public enum Noted {
        /// The first of its kind for a while: its own line.
        case first
        /// Counted for a line to come: nothing now.
        case counted
        /// Counted, and the interval has passed: the gathered line.
        case gathered(Gathered)
    }

    fileprivate struct Kind {
        /// When the kind's last line was logged.
        var lastLine: ContinuousClock.Instant
        var times = 0
        var tally: Tally
    }

    private let empty: Tally
    private var kinds: [String: Kind] = [:]

    public init(empty: Tally) {
        self.empty = empty
    }

    /// Notes an occurrence of `kind`, adding it to the tally with `add`.
    public mutating func note(
        _ kind: String, at now: ContinuousClock.Instant, adding add: (inout Tally) -> Void
    ) -> Noted {
        guard var counted = kinds[kind], counted.times > 0 || now - counted.lastLine < Self.interval else {
            kinds[kind] = Kind(lastLine: now, tally: empty)
            return .first
        }
        counted.times += 1
        add(&counted.tally)
        kinds[kind] = counted
        return now - counted.lastLine < Self.interval ? .counted : .gathered(line(kind, at: now))
    }

    /// The lines of the kinds with occurrences counted whose interval has passed.
    public mutating func due(at now: ContinuousClock.Instant) -> [Gathered] {
        kinds.keys.sorted().compactMap { kind in
            guard let counted = kinds[kind], counted.times > 0, now - counted.lastLine >= Self.interval else {
                return nil
            }
            return line(kind, at: now)
        }
    }

    /// The lines of every kind with occurrences counted, due or not: the process is stopping.
    public mutating func remaining(at now: ContinuousClock.Instant) -> [Gathered] {
        kinds.keys.sorted().compactMap { kind in kinds[kind]?.times ?? 0 > 0 ? line(kind, at: now) : nil }
    }

    /// The kind's gathered line; its count begins again.
    private mutating func line(_ kind: String, at now: ContinuousClock.Instant) -> Gathered {
        let counted = kinds[kind] ?? Kind(lastLine: now, tally: empty)
        kinds[kind] = Kind(lastLine: now, tally: empty)
        return Gathered(
            kind: kind, times: counted.times, seconds: (now - counted.lastLine).components.seconds,
            tally: counted.tally)
    }
}

extension RepeatedLines: Sendable where Tally: Sendable {}
extension RepeatedLines.Kind: Sendable where Tally: Sendable {}
extension RepeatedLines.Gathered: Sendable where Tally: Sendable {}
extension RepeatedLines.Gathered: Equatable where Tally: Equatable {}
