import Foundation

/// A failure a command reports to its user: a message on stderr and an exit code
/// (1: the operation found a problem; 2: usage or environment).
public struct CommandFailure: Error, Sendable, CustomStringConvertible {
    public let exitCode: Int32
    public let message: String

    public static func problem(_ message: String) -> CommandFailure { CommandFailure(exitCode: 1, message: message) }
    public static func environment(_ message: String) -> CommandFailure { CommandFailure(exitCode: 2, message: message) }

    public var description: String { message }
}

/// One subcommand: its spec (for parsing and help) and what it does.
struct Subcommand: Sendable {
    let spec: CommandSpec
    /// It stops gracefully on SIGINT, SIGTERM and SIGHUP (`ShutdownSignals`), which are then
    /// blocked before anything else runs.
    var stopsOnSignals = false
    let run: @Sendable (ParsedArguments, [String: String]) throws -> Int32
}

/// The `strata` command line.
public enum StrataCommandLine {
    static let subcommands: [Subcommand] = [
        UpCommand.subcommand,
        ServeCommand.subcommand,
        ProjectCommand.subcommand,
        DemoCommand.subcommand,
        SendCommand.subcommand,
        ForgetCommand.subcommand,
        StatusCommand.subcommand,
        QueryCommand.subcommand,
        RebuildCommand.subcommand,
        ReportCommand.subcommand,
        ReplayCommand.subcommand,
        VerifyCommand.subcommand,
        BackupCommand.subcommand,
        RestoreCommand.subcommand,
        KeysCommand.subcommand,
        KeysRevokeCommand.subcommand,
        KeysCheckpointCommand.subcommand,
        AdminBootstrapCommand.subcommand,
        BenchCommand.subcommand,
    ]

    /// Runs `strata` with `arguments` (without the program name); returns the exit code. A
    /// command whose output could not be written ends with exit 2 (when it had found nothing
    /// else to report), naming the failure on stderr.
    public static func main(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment)
        -> Int32
    {
        StandardStreams.prepare()
        let code = run(arguments, environment: environment)
        guard let failure = StandardStreams.takeFailure() else { return code }
        write("\(command(named: arguments)?.spec.name ?? "strata"): \(failure)\n", to: .standardError)
        return code == 0 ? 2 : code
    }

    /// The subcommand the longest run of leading words names.
    private static func command(named arguments: [String]) -> Subcommand? {
        subcommands.filter { arguments.starts(with: $0.spec.words) }.max { $0.spec.words.count < $1.spec.words.count }
    }

    private static func run(_ arguments: [String], environment: [String: String]) -> Int32 {
        if arguments.isEmpty || arguments == ["--help"] || arguments == ["-h"] || arguments == ["help"] {
            write(overview, to: arguments.isEmpty ? .standardError : .standardOutput)
            return arguments.isEmpty ? 2 : 0
        }
        guard let command = command(named: arguments) else {
            let group = subcommands.filter { $0.spec.words.first == arguments[0] }
            if !group.isEmpty {
                write(
                    "strata \(arguments[0]): say which: "
                        + group.map { $0.spec.words.joined(separator: " ") }.joined(separator: ", ") + "\n",
                    to: .standardError)
            } else {
                write("strata: unknown command '\(arguments[0])'\n\n" + overview, to: .standardError)
            }
            return 2
        }
        if command.stopsOnSignals {
            ShutdownSignals.blockAtStart()
            SupervisedChild.followParent(environment)
        }
        do {
            switch try ArgumentParser.parse(Array(arguments.dropFirst(command.spec.words.count)), spec: command.spec) {
            case .help:
                write(ArgumentParser.help(for: command.spec), to: .standardOutput)
                return 0
            case .parsed(let parsed):
                return try command.run(parsed, environment)
            }
        } catch let error as UsageError {
            write("\(command.spec.name): \(error.message)\n", to: .standardError)
            return 2
        } catch let failure as CommandFailure {
            write("\(command.spec.name): \(failure.message)\n", to: .standardError)
            return failure.exitCode
        } catch {
            write("\(command.spec.name): \(error)\n", to: .standardError)
            return 1
        }
    }

    static var overview: String {
        let width = subcommands.map { $0.spec.words.joined(separator: " ").count }.max() ?? 0
        let lines = subcommands.map { command in
            let words = command.spec.words.joined(separator: " ")
            return "  " + words + String(repeating: " ", count: width - words.count + 2) + command.spec.summary
        }
        return """
            strata: an event-sourced system of record for lending, invoicing and payments.

            Usage: strata COMMAND [options]     (strata COMMAND --help for each)

            Commands:
            \(lines.joined(separator: "\n"))

            Exit codes: 0 ok, 1 the operation found a problem, 2 usage or environment error.

            """
    }
}

/// Writes text to stdout or stderr unbuffered (`StandardStreams`: never a trap).
func write(_ text: String, to handle: FileHandle) {
    StandardStreams.write(Array(text.utf8), to: handle.fileDescriptor)
}

/// Writes one line to standard output.
func printLine(_ text: String) {
    write(text + "\n", to: .standardOutput)
}

/// Prints rows as columns two spaces apart, each as wide as its widest cell; the columns
/// in `rightAligned` (numbers) are padded on the left.
func printAligned(_ rows: [[String]], rightAligned: Set<Int> = [], indent: String = "") {
    write(aligned(rows, rightAligned: rightAligned, indent: indent), to: .standardOutput)
}

/// Rows as lines of columns two spaces apart, each column as wide as its widest cell on a
/// terminal (`terminalWidth`: a CJK name takes two columns a character). Cells are shown
/// `visible`: text from the history (a reason, a name) can hold a line break.
func aligned(_ rows: [[String]], rightAligned: Set<Int> = [], indent: String = "") -> String {
    let rows = rows.map { $0.map(visible) }
    let widths = rows.reduce(into: [Int]()) { widths, row in
        for (index, cell) in row.enumerated() {
            if index >= widths.count { widths.append(0) }
            widths[index] = max(widths[index], cell.terminalWidth)
        }
    }
    var out = ""
    for row in rows { out += alignedLine(row, widths: widths, rightAligned: rightAligned, indent: indent, shown: true) }
    return out
}

/// One line of `aligned`'s table, for a table written a line at a time (`strata query`), whose
/// `widths` were measured on the cells as `visible` shows them. `shown`: the cells are so already.
func alignedLine(
    _ row: [String], widths: [Int], rightAligned: Set<Int>, indent: String = "", shown: Bool = false
) -> String {
    // Written as bytes, not by joining padded strings: that was a third of `strata query --format
    // table`'s time on a large answer once measuring the cells no longer took most of it.
    var line: [UInt8] = []
    line.reserveCapacity(indent.utf8.count + widths.reduce(2 * widths.count, +) + 1)
    line.append(contentsOf: indent.utf8)
    for (index, cell) in row.enumerated() {
        if index > 0 { line.append(contentsOf: "  ".utf8) }
        let cell = shown ? cell : visible(cell)
        let pad = repeatElement(UInt8(ascii: " "), count: max(0, widths[index] - cell.terminalWidth))
        let leading = rightAligned.contains(index)
        if leading { line.append(contentsOf: pad) }
        line.append(contentsOf: cell.utf8)
        if !leading { line.append(contentsOf: pad) }
    }
    // Trailing spaces go as whole `Character`s, as `while line.last == " "` drops them. A space
    // after a prepended mark (U+0600 ARABIC NUMBER SIGN…) is part of that mark's `Character`,
    // which is no space; no ASCII scalar prepends, so after an ASCII byte the bytes decide alone.
    var end = line.count
    while end > 0, line[end - 1] == UInt8(ascii: " ") { end -= 1 }
    if end > 0, end < line.count, line[end - 1] >= 0x80 {
        var text = String(decoding: line, as: UTF8.self)
        while text.last == " " { text.removeLast() }
        return text + "\n"
    }
    line.removeSubrange(end...)
    line.append(UInt8(ascii: "\n"))
    return String(decoding: line, as: UTF8.self)
}

/// `text` with its control characters written as escapes (`\n`, `\r`, `\t`, `\u{1b}`), so a
/// cell of a table stays on its line: a line break in a stored reason would otherwise print
/// what reads as a row of its own, and an escape sequence would steer the terminal. The
/// bidirectional controls (a right-to-left override, an isolate, a mark) and the line and
/// paragraph separators are escaped too: printed, an override in a name turns the rest of its
/// row around where the text is shown right to left (a terminal or a pager that does, an editor
/// the table is pasted into), and a separator breaks the line there, so either can make one
/// row read as another.
///
/// Printable ASCII is returned without looking at its scalars' properties: it holds none to escape.
func visible(_ text: String) -> String {
    text.isPrintableASCII ? text : escapingEachScalar(text)
}

/// `visible` a scalar at a time, whatever the text holds.
func escapingEachScalar(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: \.isEscapedWhenShown) else { return text }
    var shown = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\n": shown += "\\n"
        case "\r": shown += "\\r"
        case "\t": shown += "\\t"
        case _ where scalar.isEscapedWhenShown: shown += "\\u{" + String(scalar.value, radix: 16) + "}"
        default: shown.unicodeScalars.append(scalar)
        }
    }
    return shown
}
