#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one logger: a line per event, `2026-11-21T10:00:00.000Z info serve: listening commands=…`.
///
/// Long-running processes log to standard error; tests pass a sink that collects lines.
/// Lines are written whole (one `write(2)` each), so threads never interleave within a line.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable, CustomStringConvertible {
        case debug, info, warning, error

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }

        public var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }

        /// A level by its name (`debug`, `info`, `warning`, `error`), as `--log-level` takes it.
        public init?(name: String) {
            switch name {
            case "debug": self = .debug
            case "info": self = .info
            case "warning": self = .warning
            case "error": self = .error
            default: return nil
            }
        }
    }

    public let label: String
    public let minimumLevel: Level
    private let clock: any WallClock
    private let sink: @Sendable (String) -> Void

    public init(
        label: String, minimumLevel: Level = .info, clock: any WallClock = SystemClock(),
        sink: @escaping @Sendable (String) -> Void = Logger.standardError
    ) {
        self.label = label
        self.minimumLevel = minimumLevel
        self.clock = clock
        self.sink = sink
    }

    public func log(_ level: Level, _ message: String) {
        guard level >= minimumLevel else { return }
        sink("\(clock.now()) \(level) \(label): \(message)\n")
    }

    /// Whether a message at `level` is written: a hot path asks once per batch, and builds
    /// no message at all when the answer is no.
    public func isEnabled(_ level: Level) -> Bool { level >= minimumLevel }

    public func debug(_ message: String) { log(.debug, message) }
    public func info(_ message: String) { log(.info, message) }
    public func warning(_ message: String) { log(.warning, message) }
    public func error(_ message: String) { log(.error, message) }

    /// A value for a `key=value` field, as is when it is a plain word, else in double quotes
    /// with backslash, quote and what `isEscapedWhenShown` names escaped, so that text from a
    /// client (a command type, an error message) can never break a line, forge a field, or
    /// turn the rest of a line around.
    public static func field(_ value: String) -> String {
        let plain = !value.isEmpty && value.unicodeScalars.allSatisfy { scalar in
            scalar != " " && !scalar.isEscapedWhenShown && scalar != "\"" && scalar != "=" && scalar != "\\"
        }
        if plain { return value }
        var quoted = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            default:
                if scalar.isEscapedWhenShown {
                    quoted += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    quoted.unicodeScalars.append(scalar)
                }
            }
        }
        return quoted + "\""
    }

    /// Writes a line to file descriptor 2 in one call.
    @Sendable public static func standardError(_ line: String) {
        let bytes = Array(line.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}
