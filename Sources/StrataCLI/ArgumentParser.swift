/// A command's shape: its words, positional arguments and options. Help text is
/// generated from it, so what `--help` says is what the parser accepts.
public struct CommandSpec: Sendable {
    /// The words after `strata`: `["keys", "new"]`.
    public let words: [String]
    public let summary: String
    public let arguments: [ArgumentSpec]
    public let options: [OptionSpec]
    /// Extra paragraphs for `--help`: exit codes, examples.
    public let discussion: String?

    public init(
        _ words: [String], summary: String, arguments: [ArgumentSpec] = [], options: [OptionSpec] = [],
        discussion: String? = nil
    ) {
        self.words = words
        self.summary = summary
        self.arguments = arguments
        self.options = options
        self.discussion = discussion
    }

    public var name: String { (["strata"] + words).joined(separator: " ") }
}

/// A positional argument.
public struct ArgumentSpec: Sendable {
    public let name: String
    public let help: String
    public let isOptional: Bool

    public init(_ name: String, help: String, optional: Bool = false) {
        self.name = name
        self.help = help
        self.isOptional = optional
    }
}

/// A `--long` option: with a value (`--data DIR`, `--data=DIR`) or a flag (`--json`).
public struct OptionSpec: Sendable {
    public let name: String
    /// The placeholder shown in help; nil for a flag that takes no value.
    public let valueName: String?
    public let help: String

    public init(_ name: String, value valueName: String? = nil, help: String) {
        self.name = name
        self.valueName = valueName
        self.help = help
    }

    public var isFlag: Bool { valueName == nil }
}

/// A command line that does not fit its spec. Exit code 2.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// What the parser found.
public struct ParsedArguments: Sendable, Equatable {
    public var values: [String: String] = [:]
    public var flags: Set<String> = []
    public var positionals: [String] = []

    public init() {}

    public func value(_ name: String) -> String? { values[name] }
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// `--format text|json`: `"text"` when absent.
    public func textOrJSON() throws(UsageError) -> String {
        let format = values["format"] ?? "text"
        guard format == "text" || format == "json" else { throw UsageError("--format must be text or json") }
        return format
    }

    /// An option's value as an integer within `range`, or nil when the option is absent.
    public func integer(_ name: String, in range: ClosedRange<Int64> = Int64.min...Int64.max) throws(UsageError) -> Int64? {
        guard let text = values[name] else { return nil }
        guard let number = Int64(text), range.contains(number) else {
            throw UsageError("--\(name) must be an integer in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return number
    }

    /// The values of options a command cannot do without, in the order named, or a usage error
    /// that says which are missing: `missing --reason (--subject, --reason and --actor are all
    /// required)`.
    public func required(_ names: String...) throws(UsageError) -> [String] {
        let missing = names.filter { values[$0] == nil }
        guard missing.isEmpty else {
            let options = names.map { "--\($0)" }
            let all = options.dropLast().joined(separator: ", ") + " and " + options[options.count - 1]
            throw UsageError(
                "missing \(missing.map { "--\($0)" }.joined(separator: ", ")) (\(all) are all required)")
        }
        return names.compactMap { values[$0] }
    }

    /// A comma-separated option as a list, empty items dropped.
    public func list(_ name: String) -> [String]? {
        values[name].map { $0.split(separator: ",").map { String($0).trimmingSpaces() }.filter { !$0.isEmpty } }
    }
}

public enum ParseResult: Sendable, Equatable {
    case parsed(ParsedArguments)
    /// `--help` or `-h` was given: print the help and exit 0.
    case help
}

public enum ArgumentParser {
    /// Parses what follows the command's words.
    public static func parse(_ arguments: [String], spec: CommandSpec) throws(UsageError) -> ParseResult {
        var parsed = ParsedArguments()
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if argument == "--help" || argument == "-h" { return .help }
            guard argument.hasPrefix("--") else {
                throw UsageError("unknown option '\(argument)' for \(spec.name) (options are --long; see --help)")
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = spec.options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '--\(name)' for \(spec.name); see '\(spec.name) --help'")
            }
            guard !parsed.flags.contains(name), parsed.values[name] == nil else {
                throw UsageError("--\(name) is given more than once")
            }
            if option.isFlag {
                guard inlineValue == nil else { throw UsageError("--\(name) takes no value") }
                parsed.flags.insert(name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                    throw UsageError("--\(name) needs a value (\(option.valueName!))")
                }
                value = arguments[index]
                index += 1
            }
            // An empty path or id is never meant: `--data ""` would put files at the root.
            guard !value.isEmpty else { throw UsageError("--\(name) needs a non-empty value (\(option.valueName!))") }
            parsed.values[name] = value
        }
        let required = spec.arguments.filter { !$0.isOptional }.count
        if parsed.positionals.count < required {
            let missing = spec.arguments[parsed.positionals.count]
            throw UsageError("\(spec.name) needs \(missing.name) (\(missing.help))")
        }
        if parsed.positionals.count > spec.arguments.count {
            throw UsageError("unexpected argument '\(parsed.positionals[spec.arguments.count])' for \(spec.name)")
        }
        return .parsed(parsed)
    }

    /// The `--help` text of a command.
    public static func help(for spec: CommandSpec) -> String {
        var usage = spec.name
        for argument in spec.arguments { usage += argument.isOptional ? " [\(argument.name)]" : " \(argument.name)" }
        if !spec.options.isEmpty { usage += " [options]" }
        var lines = [spec.summary, "", "Usage: \(usage)"]
        if !spec.arguments.isEmpty {
            lines += ["", "Arguments:"]
            lines += table(spec.arguments.map { ($0.name, $0.help) })
        }
        let options = spec.options + [OptionSpec("help", help: "Show this help.")]
        lines += ["", "Options:"]
        lines += table(options.map { ("--" + $0.name + ($0.valueName.map { " " + $0 } ?? ""), $0.help) })
        if let discussion = spec.discussion { lines += ["", discussion] }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func table(_ rows: [(String, String)]) -> [String] {
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count + 2) + $0.1 }
    }
}

extension String {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
