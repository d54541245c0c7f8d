import EventStore
import Foundation
import ProjectorRuntime
import StrataCore

/// `strata status`: the store's head and where each projection stands.
enum StatusCommand {
    static let spec = CommandSpec(
        ["status"], summary: "Show the store's head and each projection's checkpoint and errors.",
        options: Configuration.options + [
            OptionSpec("format", value: "text|json", help: "Output format (default text)."),
            OptionSpec(
                "only", value: "events|readmodels|audit",
                help: "Show and judge one file: the event store alone, or it and one projection."),
        ],
        discussion: """
            Reads events.db, readmodels.db and audit.db read-only, so it runs beside the live system.
            JSON: {"head":N,"projections":{"readmodels":P,"audit":Q},"errors":{…}}: a projection whose
            file does not exist yet is left out; one stopped at an event has its error under "errors",
            and so does one whose checkpoint is beyond the head (events.db older than its file).

            --only makes it the health check of one process: `--only events` reads the event store
            alone (a stopped projection is not the command service's problem), `--only readmodels`
            or `--only audit` the store and that one projection, whose missing file then counts as a
            problem ("no file yet").

            A projection's file that cannot be read, or holds another projection (audit.db copied over
            readmodels.db), is shown UNREADABLE with the reason; one built from another store (its event
            at the checkpoint is not the store's) is shown OTHER STORE.

            Exit codes: 0 no projection shown is stopped, 1 one is (its error is shown), is beyond the
            head, is from another store or is unreadable, events.db is damaged or, with --only, the
            projection has no file yet, 2 no event store.
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let format = try arguments.textOrJSON()
        let only = arguments.value("only")
        if let only, only != "events", !ProjectionTarget.names.contains(only) {
            throw UsageError("--only must be events, readmodels or audit")
        }
        // The projections shown and judged: all of them, none (`--only events`), or the one named.
        let names = only.map { name in ProjectionTarget.names.filter { $0 == name } } ?? ProjectionTarget.names
        let store = try VerifyCommand.openReadOnly(configuration.eventStorePath)
        // Each file's checkpoint, and the hash it applied there, to compare with the store's.
        var positions: [(name: String, checkpoint: Int64, hash: String)] = []
        var errors: [(String, String)] = []
        // Files that cannot be read as that projection at all: not stopped, but not there either.
        var unreadable: Set<String> = []
        // With --only NAME, a projection whose projector should have made its file by now.
        var missing: [(String, String)] = []
        for name in names {
            guard let target = ProjectionTarget(name: name, configuration: configuration) else { continue }
            do throws(ProjectorError) {
                guard let snapshot = try ProjectionSnapshot(path: target.path) else {
                    if only == name { missing.append((name, "no file yet (\(target.path))")) }
                    continue
                }
                guard snapshot.name == name else {
                    unreadable.insert(name)
                    errors.append((name, "\(target.path) holds the \(snapshot.name) projection, not \(name)"))
                    continue
                }
                positions.append((name, snapshot.checkpoint, snapshot.chainHash))
                if let stop = snapshot.stop { errors.append((name, stop.description)) }
            } catch {
                unreadable.insert(name)
                errors.append((name, error.message))
            }
        }
        // Read after the checkpoints: a projector applies only what the store has, so a checkpoint
        // beyond this head means the store lost events the file holds, not that it just grew.
        let head: Int64
        do throws(StoreError) {
            head = try store.head()
        } catch {
            throw VerifyCommand.readFailure(configuration.eventStorePath, error)
        }
        // Such a file must be rebuilt, whether or not it is also stopped.
        var mismatches: [String: StoreMismatch] = [:]
        for (name, checkpoint, hash) in positions {
            let mismatch: StoreMismatch?
            do throws(StoreError) {
                mismatch = try StoreMismatch.of(
                    name, checkpoint: checkpoint, appliedHash: hash, store: store, head: head)
            } catch {
                throw VerifyCommand.readFailure(configuration.eventStorePath, error)
            }
            guard let mismatch else { continue }
            mismatches[name] = mismatch
            errors.removeAll { $0.0 == name }
            errors.append((name, mismatch.message))
        }
        // Who holds the writer locks on this machine: a projector that stopped for good shows
        // here, where its file alone would only fall behind.
        var running: [(String, Int32?)] = [("serve", LockHolder.pid(ofLock: configuration.eventStorePath + "-lock"))]
        for name in names {
            guard let target = ProjectionTarget(name: name, configuration: configuration) else { continue }
            running.append((name, LockHolder.pid(ofLock: target.path + "-lock")))
        }
        func process(_ name: String) -> String {
            let pid = running.first { $0.0 == name }?.1
            let program = name == "serve" ? "serve" : "projector"
            return pid.map { "\(program) pid \($0)" } ?? "no \(program) running here"
        }
        if format == "json" {
            let json: JSONValue = [
                "head": .integer(head),
                "running": .object(
                    Dictionary(
                        uniqueKeysWithValues: running.map { ($0.0, $0.1.map { .integer(Int64($0)) } ?? .null) })),
                "projections": .object(
                    Dictionary(uniqueKeysWithValues: positions.map { ($0.name, .integer($0.checkpoint)) })),
                "errors": .object(Dictionary(uniqueKeysWithValues: (errors + missing).map { ($0.0, .string($0.1)) })),
            ]
            printLine(CanonicalJSON.string(json))
        } else {
            printLine("head \(head)  (\(configuration.eventStorePath); \(process("serve")))")
            for name in names {
                let position = positions.first { $0.name == name }?.checkpoint
                let error = errors.first { $0.0 == name }?.1
                let label =
                    switch mismatches[name] {
                    case .ahead?: "AHEAD"
                    case .otherStore?: "OTHER STORE"
                    case nil: unreadable.contains(name) ? "UNREADABLE" : "STOPPED"
                    }
                let state =
                    error.map { "\(label): \($0)" }
                    ?? position.map { $0 == head ? "up to date" : "\(head - $0) behind" } ?? "no file yet"
                let at = position.map { "at \($0)" } ?? ""
                printLine(
                    "\(name.padding(toLength: 11, withPad: " ", startingAt: 0)) "
                        + "\(at.padding(toLength: 14, withPad: " ", startingAt: 0)) \(state) (\(process(name)))")
            }
        }
        return errors.isEmpty && missing.isEmpty ? 0 : 1
    }
}
