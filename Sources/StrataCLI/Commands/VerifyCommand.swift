import EventStore
import Foundation
import StrataCore

/// `strata verify`: recompute the hash chain over the store and name the first bad position.
enum VerifyCommand {
    static let spec = CommandSpec(
        ["verify"], summary: "Check the event store's hash chain; name the first broken position.",
        options: Configuration.options + [
            OptionSpec("format", value: "text|json", help: "Output format (default text)."),
        ],
        discussion: """
            Reads the store read-only, so it runs beside a live `strata serve`. For every event in
            position order it checks that positions have no gaps, that prev_hash is the previous
            event's hash, and that hash is SHA-256(prev_hash ‖ canonical event) over the stored columns.

            Exit codes: 0 the chain is intact, 1 it is broken (the position is named), 2 usage or
            environment (no store, unreadable file).
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let format = arguments.value("format") ?? "text"
        guard format == "text" || format == "json" else { throw UsageError("--format must be text or json") }
        let store = try openReadOnly(configuration.eventStorePath)
        let report: ChainReport
        do {
            report = try store.verify()
        } catch {
            throw CommandFailure.environment("cannot read \(configuration.eventStorePath): \(error)")
        }
        if format == "json" {
            var result: [String: JSONValue] = [
                "intact": .bool(report.isIntact), "eventsVerified": .integer(report.eventsChecked),
                "lastGoodPosition": .integer(report.lastGoodPosition), "lastGoodHash": .string(report.lastGoodHash),
            ]
            if let problem = report.problem {
                result["problem"] = [
                    "position": .integer(problem.position), "kind": .string(problem.kind.rawValue),
                    "message": .string(problem.message),
                ]
            }
            printLine(CanonicalJSON.string(.object(result)))
        } else if let problem = report.problem {
            printLine("BROKEN at position \(problem.position): \(problem.kind.rawValue): \(problem.message)")
            printLine("\(report.eventsChecked) events verified before it (last good position \(report.lastGoodPosition)).")
        } else {
            printLine("intact: \(report.eventsChecked) events verified; head \(report.lastGoodPosition), hash \(report.lastGoodHash)")
        }
        return report.isIntact ? 0 : 1
    }

    /// Opens the store read-only, turning "no such store" into an environment error.
    static func openReadOnly(_ path: String) throws -> SQLiteEventStore {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure.environment("no event store at \(path) (set --data or STRATA_DATA)")
        }
        do {
            return try SQLiteEventStore(readingAt: path)
        } catch {
            throw CommandFailure.environment("cannot open \(path): \(error.message)")
        }
    }
}
