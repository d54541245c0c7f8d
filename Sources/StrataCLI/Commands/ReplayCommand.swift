#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import EventStore
import StrataCore

/// `strata replay`: the event history, filtered, streamed out of the store file in position
/// order, in constant memory whatever its size.
enum ReplayCommand {
    static let spec = CommandSpec(
        ["replay"], summary: "Print the event history, filtered: JSON lines (the bus format) or a table.",
        options: Configuration.options + [
            OptionSpec("from", value: "P", help: "First position (inclusive)."),
            OptionSpec("to", value: "P", help: "Last position (inclusive; default the head)."),
            OptionSpec("stream", value: "S", help: "One stream (loan-L1)."),
            OptionSpec("category", value: "C,…", help: "Stream categories (loan,invoice)."),
            OptionSpec("type", value: "T,…", help: "Event types (LoanApproved,PaymentReceived)."),
            OptionSpec("actor", value: "A", help: "Events of commands by this actor (metadata.actor)."),
            OptionSpec("since", value: "TIME", help: "Recorded at or after TIME (RFC 3339, or a date: its start)."),
            OptionSpec("until", value: "TIME", help: "Recorded at or before TIME (RFC 3339, or a date: its end)."),
            OptionSpec("format", value: "jsonl|table", help: "Output format (default jsonl)."),
        ],
        discussion: """
            Reads the store read-only, so it runs beside a live `strata serve`, and reads one snapshot:
            events appended meanwhile are not included. Filters combine (all must hold). TIME is
            RFC 3339 with Z or an offset (2026-11-20T10:00:00Z, 2026-11-20T15:30:00+05:30) or a
            date (2026-11-20: from its first millisecond for --since, through its last for --until).

            jsonl prints each event exactly as the bus and history carry it, one a line, so the hash
            chain can be recomputed from the output. table prints position, recorded_at, stream,
            version, type and actor. In table format, or when standard error is a terminal, a summary
            line goes to standard error.

            Exit codes: 0 (also when nothing matches, or the reader stops early: `| head`), 1 the store
            is damaged where replay reads it (the events before are printed), 2 usage or environment
            (a bad option, no store, output that cannot be written).
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let filter = try filter(arguments)
        let format = arguments.value("format") ?? "jsonl"
        guard format == "jsonl" || format == "table" else {
            throw UsageError("--format must be jsonl or table, got '\(format)'")
        }
        let store = try VerifyCommand.openReadOnly(configuration.eventStorePath)
        let summary = try replay(store, filter: filter, table: format == "table")
        // A reader that went away has what it wanted; the count would not be what it got.
        if !summary.readerLeft, format == "table" || isatty(STDERR_FILENO) == 1 {
            var text = summary.description + "\n"
            _ = text.withUTF8 { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        }
        return 0
    }

    /// What was printed: how many events, from which position to which.
    struct Summary: Equatable, CustomStringConvertible {
        var events: Int64 = 0
        var first: Int64 = 0
        var last: Int64 = 0
        /// The output was closed before the end (`| head`).
        var readerLeft = false

        var description: String {
            switch events {
            case 0: return "0 events"
            case 1: return "1 event, position \(first)"
            default: return "\(events) events, positions \(first)–\(last)"
            }
        }
    }

    /// Streams the matches to standard output through one large buffer.
    static func replay(_ store: SQLiteEventStore, filter: ReplayFilter, table: Bool) throws -> Summary {
        let output = BufferedOutput()
        func emit(_ line: String) {
            output.append(line.utf8)
            output.append(UInt8(ascii: "\n"))
        }
        var tableWriter = table ? ReplayTable() : nil
        var summary = Summary()
        var failure: CommandFailure?
        // The line would mix with the output when both go to the same terminal.
        let progress = isatty(STDOUT_FILENO) == 1 ? nil : TerminalProgress.forStandardError("replay")
        do throws(StoreError) {
            try store.forEachEvent(
                matching: filter,
                began: { head in
                    guard filter.boundsPositionsOnly else { return }
                    progress?.total = max(0, min(filter.to ?? head, head) - max(filter.from, 1) + 1)
                }
            ) { row in
                let position = row.position
                if summary.events == 0 { summary.first = position }
                summary.last = position
                summary.events += 1
                if tableWriter != nil {
                    tableWriter!.add(row, emit: emit)
                } else {
                    output.commit(row.writeJSON(output.space))
                    output.append(UInt8(ascii: "\n"))
                }
                if summary.events & 0x3FF == 0 { progress?.update(summary.events) }
                do throws(CommandFailure) {
                    try output.drainIfFull()
                } catch {
                    failure = error
                    return false
                }
                return !output.isClosed
            }
        } catch {
            progress?.finish()
            // The events before the damage are the store's: out they go, and the damage is the
            // error to report (a failure to write them too would only hide it).
            try? output.drain()
            throw VerifyCommand.readFailure(store.path, error)
        }
        progress?.finish()
        if let failure { throw failure }
        tableWriter?.flush(emit: emit)
        try output.drain()
        summary.readerLeft = output.isClosed
        return summary
    }

    /// The filter the options describe; malformed values are usage errors naming the option.
    static func filter(_ arguments: ParsedArguments) throws(UsageError) -> ReplayFilter {
        var filter = ReplayFilter()
        func position(_ name: String) throws(UsageError) -> Int64? {
            guard let text = arguments.value(name) else { return nil }
            guard let value = Int64(text), value >= 0 else {
                throw UsageError("--\(name) must be a position (an integer ≥ 0), got '\(text)'")
            }
            return value
        }
        func time(_ name: String, endOfDay: Bool) throws(UsageError) -> Timestamp? {
            guard let text = arguments.value(name) else { return nil }
            guard let time = Timestamp(argument: text, endOfDay: endOfDay) else {
                throw UsageError(
                    "--\(name) '\(text)' is not a time: give RFC 3339 with Z or an offset "
                        + "(2026-11-20T10:00:00Z, 2026-11-20T15:30:00+05:30) or a date (2026-11-20)")
            }
            return time
        }
        func list(
            _ name: String, _ noun: String, _ rule: String, isValid: (String) -> Bool
        ) throws(UsageError) -> [String] {
            guard let items = arguments.list(name) else { return [] }
            guard !items.isEmpty else { throw UsageError("--\(name) needs at least one \(noun)") }
            for item in items where !isValid(item) {
                throw UsageError("--\(name): '\(item)' is not \(noun.first == "e" ? "an" : "a") \(noun) (\(rule))")
            }
            return items
        }

        filter.from = try position("from") ?? 0
        filter.to = try position("to")
        if let to = filter.to, filter.from > to {
            throw UsageError("--from \(filter.from) is after --to \(to)")
        }
        if let text = arguments.value("stream") {
            guard let stream = StreamName(text) else {
                throw UsageError("--stream '\(text)' is not a stream name (<category>-<id>, such as loan-L1)")
            }
            filter.stream = stream
        }
        filter.categories = try list(
            "category", "category", "1–32 lowercase letters", isValid: StreamName.isValidCategory)
        filter.types = try list(
            "type", "event type", "ASCII letters and digits, from a capital", isValid: NewEvent.isValidType)
        if let actor = arguments.value("actor") {
            guard actor.utf8.count <= 128 else { throw UsageError("--actor is at most 128 bytes") }
            filter.actor = actor
        }
        filter.since = try time("since", endOfDay: false)
        filter.until = try time("until", endOfDay: true)
        if let since = filter.since, let until = filter.until, since > until {
            throw UsageError("--since \(since) is after --until \(until)")
        }
        do {
            try filter.validate()
        } catch {
            throw UsageError(error.message)
        }
        return filter
    }
}
