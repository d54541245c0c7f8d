import EventStore
import Foundation
import ProjectorRuntime
import StrataCore

/// `strata status`: the store's head and where each projection stands.
enum StatusCommand {
    static let spec = CommandSpec(
        ["status"], summary: "Show the store's head and each projection's checkpoint and errors.",
        options: Configuration.options + [OptionSpec("format", value: "text|json", help: "Output format (default text).")],
        discussion: """
            Reads events.db, readmodels.db and audit.db read-only, so it runs beside the live system.
            JSON: {"head":N,"projections":{"readmodels":P,"audit":Q},"errors":{…}}: a projection whose
            file does not exist yet is left out; one stopped at an event has its error under "errors".

            Exit codes: 0 no projection is stopped, 1 one is (its error is shown) or events.db is damaged,
            2 no event store.
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let format = arguments.value("format") ?? "text"
        guard format == "text" || format == "json" else { throw UsageError("--format must be text or json") }
        let store = try VerifyCommand.openReadOnly(configuration.eventStorePath)
        let head: Int64
        do throws(StoreError) {
            head = try store.head()
        } catch {
            throw VerifyCommand.readFailure(configuration.eventStorePath, error)
        }
        var positions: [(String, Int64)] = []
        var errors: [(String, String)] = []
        for name in ProjectionTarget.names {
            guard let target = ProjectionTarget(name: name, configuration: configuration) else { continue }
            do throws(ProjectorError) {
                guard let snapshot = try ProjectionSnapshot(path: target.path) else { continue }
                positions.append((name, snapshot.checkpoint))
                if let stop = snapshot.stop { errors.append((name, stop.description)) }
            } catch {
                errors.append((name, error.message))
            }
        }
        if format == "json" {
            let json: JSONValue = [
                "head": .integer(head),
                "projections": .object(Dictionary(uniqueKeysWithValues: positions.map { ($0.0, .integer($0.1)) })),
                "errors": .object(Dictionary(uniqueKeysWithValues: errors.map { ($0.0, .string($0.1)) })),
            ]
            printLine(CanonicalJSON.string(json))
        } else {
            printLine("head \(head)  (\(configuration.eventStorePath))")
            for name in ProjectionTarget.names {
                let position = positions.first { $0.0 == name }?.1
                let error = errors.first { $0.0 == name }?.1
                let state =
                    error.map { "STOPPED: \($0)" }
                    ?? position.map { $0 == head ? "up to date" : "\(head - $0) behind" } ?? "no file yet"
                let at = position.map { "at \($0)" } ?? ""
                printLine("\(name.padding(toLength: 11, withPad: " ", startingAt: 0)) \(at.padding(toLength: 14, withPad: " ", startingAt: 0)) \(state)")
            }
        }
        return errors.isEmpty ? 0 : 1
    }
}
