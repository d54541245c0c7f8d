#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One line on standard error that rewrites itself (`\r`) while long work runs: how much is
/// done, how fast, and when the total is known the percentage and time left. It exists only
/// when standard error is a terminal (`forStandardError` is nil otherwise), so logs and pipes
/// never see it, and it redraws at most five times a second, so calling `update` often is cheap.
final class TerminalProgress {
    private let label: String
    /// How many there are in all, when known; it may change as the work learns more.
    var total: Int64?
    private let descriptor: Int32
    private let now: () -> Double
    private let started: Double
    private var lastDrawn: Double
    private var drawn = false

    /// Seconds between redraws.
    static let interval = 0.2

    /// nil unless standard error is a terminal.
    static func forStandardError(_ label: String, total: Int64? = nil) -> TerminalProgress? {
        isatty(STDERR_FILENO) == 1 ? TerminalProgress(label, total: total) : nil
    }

    init(
        _ label: String, total: Int64?, descriptor: Int32 = STDERR_FILENO,
        now: @escaping () -> Double = monotonicSeconds
    ) {
        self.label = label
        self.total = total
        self.descriptor = descriptor
        self.now = now
        self.started = now()
        self.lastDrawn = started
    }

    /// Redraws the line if the last draw is at least `interval` old.
    func update(_ done: Int64) {
        let time = now()
        guard time - lastDrawn >= TerminalProgress.interval else { return }
        lastDrawn = time
        drawn = true
        emit("\r\u{1B}[K" + TerminalProgress.line(label, done: done, total: total, seconds: time - started))
    }

    /// Clears the line, so what is printed next starts on a clean one.
    func finish() {
        if drawn { emit("\r\u{1B}[K") }
        drawn = false
    }

    private func emit(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// The line's text: `replay: 250000/1000000 events (25%), 500000 events/s, ETA 2s`,
    /// or without a total `replay: 250000 events, 500000 events/s`.
    static func line(_ label: String, done: Int64, total: Int64?, seconds: Double) -> String {
        let rate = seconds > 0 ? Double(done) / seconds : 0
        let rateText = "\(Int64(rate.rounded())) events/s"
        guard let total, total > 0 else { return "\(label): \(done) events, \(rateText)" }
        let percent = min(100, done * 100 / total)
        let left = rate > 0 ? duration(Double(max(0, total - done)) / rate) : "?"
        return "\(label): \(done)/\(total) events (\(percent)%), \(rateText), ETA \(left)"
    }

    /// `42s`, `3m07s`, `2h05m`, rounded up to the second.
    static func duration(_ seconds: Double) -> String {
        let whole = Int64(seconds.rounded(.up))
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return "\(whole / 60)m" + pad(whole % 60) + "s" }
        return "\(whole / 3600)h" + pad(whole / 60 % 60) + "m"
    }

    private static func pad(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
