import EventStore
import Foundation
import Projections
import ProjectorRuntime
import StrataCore

/// `strata query NAME`: the named read-model queries, with filters, three formats,
/// read-your-writes (`--min-position`) and time travel (`--as-of`).
enum QueryCommand {
    static let spec = CommandSpec(
        ["query"], summary: "Ask the read models a named question (accounts, portfolio, overdue, …).",
        arguments: [ArgumentSpec("NAME", help: NamedQuery.all.map(\.name).joined(separator: ", "))],
        options: Configuration.options + [
            OptionSpec("format", value: "table|json|csv", help: "Output format (default table)."),
            OptionSpec("min-position", value: "P", help: "Wait until the projection has applied position P."),
            OptionSpec("wait", value: "SECONDS", help: "How long --min-position waits (default 10)."),
            OptionSpec("as-of", value: "POSITION|TIME", help: "The read model as it stood then, built from the store."),
            OptionSpec("date", value: "YYYY-MM-DD", help: "The day aging is counted on (portfolio, overdue, receivables)."),
        ] + NamedQuery.filterOptions.map { OptionSpec($0, value: "VALUE", help: filterHelp[$0] ?? "") },
        discussion: """
            The queries and the filters each takes:
            \(NamedQuery.all.map { query in
                "  \(query.name): \(query.summary)"
                    + (query.filters.isEmpty ? "" : " [" + query.filters.map { "--\($0.option)" }.joined(separator: " ") + "]")
            }.joined(separator: "\n"))

            Every answer states the position of the history it reflects: JSON prints
            {"position":P,"rows":[…]}; the table ends with it; CSV (RFC 4180, pure on stdout) states
            it on stderr. JSON and CSV give money in integer cents under the column's name; the table
            shows it as money under the name without "_cents".

            --min-position P waits (up to --wait seconds) until the projection has applied P, the
            position a command's reply named: read your own writes. --as-of POSITION|TIME builds the
            projection from events.db up to that position (or the last event recorded at or before
            TIME: 2026-11-20T10:00:00Z, or a date for the end of that day) in a scratch file, queries
            it, and removes it, also when SIGINT, SIGTERM or SIGHUP ends it (exit 128 + the signal);
            the live files are never touched. Aging (portfolio, overdue, receivables) is counted on
            --date, else the as-of day, else today (UTC). refusals reads the command journal in
            events.db, which is always current: --as-of and --min-position do not apply to it.

            A stopped projection, or a live file ahead of events.db or made from another store,
            still answers, with a warning on stderr.

            Exit codes: 0 answered (also with no rows), 1 --min-position not reached in time (or
            the projection stopped short of it), --as-of beyond the store's head or a history up to it
            that cannot be applied, for refusals an events.db that is not an event store, 2 usage or
            environment (no such file, bad filter; for --as-of, a key store that cannot be read or no
            room in TMPDIR).
            """)

    static let filterHelp: [String: String] = [
        "search": "Text in an account's id, name, phone or email.",
        "agent": "An agent's user id.",
        "status": "A status (ACTIVE, PENDING_APPROVAL, PAID, …).",
        "account": "An account id.",
        "loan": "A loan id.",
        "customer": "A customer's party id.",
        "since": "From this day or time (inclusive).",
        "until": "Up to this day or time (inclusive).",
        "bucket": "An aging bucket: 1-30, 31-60, 61-90 or 90+.",
        "kind": "AGENT, LOAN or CASHOUT.",
        "role": "ADMIN or AGENT.",
        "user": "A user id.",
        "actor": "Who acted (a user id, or operator).",
        "entity": "A stream, such as loan-L1.",
        "type": "An event type (audit: PaymentReceived) or a command type (refusals: ApproveLoan).",
        "action": "An audit action, such as APPROVE_LOAN.",
        "code": "A refusal's error code: INVALID, FORBIDDEN, NOT_FOUND, CONFLICT or REJECTED.",
        "reason": "A refusal's reason, such as LOAN_NOT_PENDING.",
        "key": "The id of the key that signed the command.",
    ]

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        // Time travel builds a scratch copy that a signal must not leave behind
        // (`ScratchDirectory`): the signals are blocked now, before any thread exists.
        if arguments.value("as-of") != nil { ShutdownSignals.blockAtStart() }
        let configuration = try Configuration.resolve(arguments, environment: environment)
        guard let name = arguments.positionals.first else {
            throw UsageError("say which query: " + NamedQuery.all.map(\.name).joined(separator: ", "))
        }
        guard let query = NamedQuery.named(name) else {
            throw UsageError(
                "no query named '\(name)'; the queries are " + NamedQuery.all.map(\.name).joined(separator: ", "))
        }
        guard arguments.positionals.count == 1 else { throw UsageError("one query at a time") }
        let formatText = arguments.value("format") ?? "table"
        guard let format = QueryOutput.Format(rawValue: formatText) else {
            throw UsageError("--format must be table, json or csv")
        }

        var values: [String: ProjectionValue] = [:]
        var used: Set<String> = []
        for option in NamedQuery.filterOptions {
            guard let text = arguments.value(option) else { continue }
            guard let filter = query.filter(option) else {
                throw UsageError(
                    "query \(name) has no --\(option) filter; it takes "
                        + (query.filters.isEmpty
                            ? "none" : query.filters.map { "--\($0.option)" }.joined(separator: ", ")))
            }
            values[filter.parameter] = try filter.value(text)
            used.insert(option)
        }
        // A range that ends before it begins holds nothing: said, as replay says it, not answered
        // with no rows. Both ends are written alike (a day, or a time to the millisecond), so
        // their text sorts as they do.
        if case .text(let since)? = values["since"], case .text(let until)? = values["until"], since > until {
            throw UsageError("--since \(since) is after --until \(until)")
        }
        var day: LocalDate?
        if let text = arguments.value("date") {
            guard query.agesOnADay else {
                let aging = NamedQuery.all.filter(\.agesOnADay).map(\.name).joined(separator: ", ")
                throw UsageError("--date is for the aging queries: \(aging)")
            }
            guard let parsed = LocalDate(text) else { throw UsageError("--date must be YYYY-MM-DD, got '\(text)'") }
            day = parsed
        }
        let minimum = try arguments.integer("min-position", in: 0...Int64.max)
        let wait = try arguments.integer("wait", in: 0...86_400)
        if wait != nil, minimum == nil { throw UsageError("--wait goes with --min-position") }
        let asOf = try arguments.value("as-of").map { text throws(UsageError) in try AsOf(text) }
        if asOf != nil, minimum != nil {
            throw UsageError("--as-of reads the store itself: --min-position does not apply")
        }
        if query.readsTheJournal, asOf != nil || minimum != nil {
            throw UsageError(
                "query \(name) reads the store's journal, which is always current: --as-of and --min-position do "
                    + "not apply (--until bounds it in time)")
        }
        let livePath = query.file == "audit" ? configuration.auditPath : configuration.readModelsPath

        let view: QueryView
        if query.readsTheJournal {
            view = try QueryView.journal(path: configuration.eventStorePath)
        } else if let asOf {
            view = try QueryView.asOf(
                asOf, query: query, livePath: livePath, storePath: configuration.eventStorePath,
                opener: configuration.personalDataOpener)
        } else if let minimum {
            view = try QueryView.live(
                query: query, path: livePath, minimumPosition: minimum, waitSeconds: Int(wait ?? 10))
        } else {
            view = try QueryView.live(query: query, path: livePath, minimumPosition: nil, waitSeconds: 0)
        }
        defer { view.close() }
        if query.agesOnADay { values["as_of"] = .text((day ?? view.day ?? Self.today()).description) }

        let sql = query.sql(filtering: used)
        let output = QueryOutput(position: view.position, source: view.source) { columns, row in
            try view.forEachRow(sql, named: values, columns: columns, row: row)
        }
        let out = BufferedOutput()
        do {
            try output.write(format) { piece in
                var piece = piece
                piece.withUTF8 { out.append($0) }
                try out.drainIfFull()
                return !out.isClosed
            }
            try out.drain()
        } catch let error as ProjectorError {
            throw CommandFailure.environment(error.message)
        }
        if format == .csv { write("\(view.source)\n", to: .standardError) }
        // The answer is right as of its position, but that position will not move: say so
        // where a person or a log sees it, leaving the answer itself as it is.
        if asOf == nil, let stop = view.stop {
            let acts = stop.kind == .poison ? "--resume or --skip" : "--resume, once the store is put right"
            write(
                "strata query: warning: \(query.file) is \(stop); the answer reflects position "
                    + "\(view.position) and will not move until an operator acts "
                    + "(strata project \(query.file) \(acts))\n", to: .standardError)
        }
        if asOf == nil, let applied = view.appliedHash,
            let mismatch = StoreMismatch.beside(
                query.file, checkpoint: view.position, appliedHash: applied, storePath: configuration.eventStorePath)
        {
            write(
                "strata query: warning: \(mismatch.warning(query.file)); the answer is not this store's history\n",
                to: .standardError)
        }
        return 0
    }

    static func today() -> LocalDate { LocalDate(Timestamp.now()) }
}

/// What `--as-of` names: a position, or an instant (the last position recorded by then).
enum AsOf: Equatable {
    case position(Int64)
    case time(Timestamp)

    init(_ text: String) throws(UsageError) {
        if let position = Int64(text) {
            guard position >= 0 else { throw UsageError("--as-of position must be ≥ 0, got \(text)") }
            self = .position(position)
        } else if let instant = Timestamp(argument: text, endOfDay: true) {
            self = .time(instant)
        } else {
            throw UsageError(
                "--as-of must be a position (1204) or a time (2026-11-20T10:00:00Z, 2026-11-20), got '\(text)'")
        }
    }
}
