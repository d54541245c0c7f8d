import Bus
import StrataCore

/// The history replies the service could not route, gathered for the log: a client that
/// pipelines requests and stops reading has every further reply dropped, one per request,
/// and a line for each would flood the log. The first drop is logged at once; those that
/// follow within `interval` are counted and logged together once it has passed, so the log
/// gains at most one line a minute for any number of peers.
struct DroppedReplies {
    /// How often the log hears of drops at most.
    static let interval: Duration = .seconds(60)

    /// Replies dropped since the last line: to peers over the high-water mark, to peers gone.
    private var full = 0
    private var gone = 0
    /// The keys whose requests were dropped since the last line; a key file's keys, so few.
    /// A refusal to a request the gate did not admit has no key worth naming.
    private var keys: Set<String> = []
    private var unauthenticated = false
    private var lastLine: ContinuousClock.Instant?

    /// Notes one dropped reply; returns the line to log now, if one is due.
    mutating func dropped(
        _ routed: ZMQSocket.Routed, keyId: String?, at now: ContinuousClock.Instant
    ) -> (level: Logger.Level, text: String)? {
        switch routed {
        case .sent: return nil
        case .peerFull: full += 1
        case .peerGone: gone += 1
        }
        if let keyId { keys.insert(keyId) } else { unauthenticated = true }
        return due(at: now)
    }

    /// The line gathered since the last one, once `interval` has passed since it; nil while
    /// nothing was dropped or the interval runs.
    mutating func due(at now: ContinuousClock.Instant) -> (level: Logger.Level, text: String)? {
        guard full + gone > 0 else { return nil }
        if let lastLine, now - lastLine < Self.interval { return nil }
        var parts: [String] = []
        if full > 0 { parts.append("\(full) to clients not reading theirs") }
        if gone > 0 { parts.append("\(gone) to clients gone before their reply") }
        var whose = keys.sorted().map { "key \($0)" }
        if unauthenticated { whose.append("requests refused at the gate") }
        let text = "history: dropped replies: \(parts.joined(separator: ", ")); for \(whose.joined(separator: ", "))"
        let level: Logger.Level = full > 0 ? .warning : .info
        full = 0
        gone = 0
        keys.removeAll()
        unauthenticated = false
        lastLine = now
        return (level, text)
    }
}
