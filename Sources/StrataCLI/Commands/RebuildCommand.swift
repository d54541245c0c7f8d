import EventStore
import Foundation
import ProjectorRuntime
import StrataCore

/// `strata rebuild NAME [--compare] [--output FILE]`: a projection rebuilt from position 0
/// into a fresh file, straight from the store file, and proved equal to the live one.
enum RebuildCommand {
    static let spec = CommandSpec(
        ["rebuild"], summary: "Rebuild a projection from position 0; with --compare, prove it equals the live one.",
        arguments: [ArgumentSpec("NAME", help: "readmodels or audit")],
        options: Configuration.options + [
            OptionSpec("compare", help: "Compare the rebuilt file with the live one, row for row."),
            OptionSpec("output", value: "FILE", help: "Where to build (default DATA/NAME.rebuilt.db)."),
        ],
        discussion: """
            Reads events.db directly (read-only, beside the running system) and applies every event from
            position 0 into a fresh file, honouring the skips recorded in the live file. The live files
            are never written.

            The output is made with mode 0600: it holds personal data in clear, and a later erasure
            (strata forget) does not reach it, so delete a kept rebuild after an erasure. An existing
            output is replaced only when it is an earlier rebuild of the same projection (or empty),
            after its writer lock is taken; an output that is one of the system's files (events.db,
            readmodels.db, audit.db, subject-keys.db, their -wal, -shm and -lock, the key file, the
            config file, the checkpoint key) or the data directory, by whatever name or link, a
            directory or anything else is refused and left as it is.

            With --compare it first takes a read snapshot of the live file, rebuilds up to that
            snapshot's checkpoint, then compares every table row for row (and every schema object,
            text byte for byte): exit 0 when equal (the rebuilt file is then removed), exit 1 naming
            the first difference (the rebuilt file is kept for inspection). A live file stopped at an
            event is compared up to its checkpoint without the stop it records, which is printed
            instead. Without --compare it rebuilds up to the head and keeps the file: to put it in
            place, stop the projector and move it over the live file (or simply delete the live file:
            the projector rebuilds it through history when it starts).

            A live file that is no view of the store (AHEAD of its head, or from ANOTHER STORE, as
            `strata status` shows them) has nothing to compare with: --compare says so, builds nothing,
            and exits 1; a rebuild without --compare makes the file from this store.

            Exit codes: 0 rebuilt (and equal); 1 the rebuild found a problem: an event it cannot apply
            (STOPPED), a difference from the live file (DIFFERENT), a live file not of this store
            (AHEAD, OTHER STORE); 2 usage or environment: no
            store, no live file to compare with, an output refused or that cannot be written, a lock
            another process holds, a file that cannot be read.
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        guard let name = arguments.positionals.first, let target = ProjectionTarget(name: name, configuration: configuration)
        else {
            throw UsageError("say which projection: readmodels or audit")
        }
        let output = arguments.value("output") ?? configuration.dataDirectory + "/\(name).rebuilt.db"
        // Refused before anything is opened. The rebuild checks its output again under the output's
        // lock, but only that it is an earlier rebuild of NAME, and so is the live file.
        try SystemFiles.requireApart(
            output, writing: RebuildOutput.companions(of: output), by: "a rebuild", configuration, arguments,
            environment)
        let store = try VerifyCommand.openReadOnly(configuration.eventStorePath)

        let (snapshot, skips) = try live(target, compare: arguments.flag("compare"))
        // A live file that is no view of this store has nothing a rebuild of the store could
        // match: said in the words `strata status` uses, before anything is built.
        if let snapshot, let mismatch = try mismatch(snapshot, store: store, path: configuration.eventStorePath) {
            switch mismatch {
            case .ahead(let message): printLine("AHEAD: \(name) is ahead of the store: \(message)")
            case .otherStore(let message): printLine("OTHER STORE: \(message)")
            }
            return 1
        }
        let progress = TerminalProgress.forStandardError("rebuild \(name)")
        defer { progress?.finish() }
        do throws(ProjectorError) {
            let result = try Rebuild.run(
                name: target.name, projections: target.projections, from: StoreHistory(store: store), into: output,
                upTo: snapshot?.checkpoint, skips: skips, opener: target.opener,
                progress: progress.map { progress in
                    { position, head in
                        progress.total = head
                        progress.update(position)
                    }
                })
            progress?.finish()
            let rate = Int(result.eventsPerSecond.rounded())
            printLine(
                "rebuilt \(name): \(result.events) events in \(String(format: "%.2f", result.seconds)) s "
                    + "(\(rate) events/s) into \(output)")
            if let stop = result.stop {
                printLine("STOPPED: \(stop)")
                return 1
            }
            guard let snapshot else { return 0 }
            // The comparison leaves the stop out: the rebuild ends before the event it names.
            if let stop = snapshot.stop { printLine("the live \(name) is \(stop)") }
            let comparison = try snapshot.compare(with: output)
            if let difference = comparison.difference {
                printLine("DIFFERENT from the live \(name) at position \(snapshot.checkpoint): \(difference)")
                printLine("the rebuilt file is kept: \(output)")
                return 1
            }
            printLine(
                "equal: the live \(name) at position \(snapshot.checkpoint) matches the rebuild "
                    + "(\(comparison.tables) tables, \(comparison.rows) rows)")
            RebuildOutput.remove(output)
            return 0
        } catch {
            throw failure(error)
        }
    }

    /// The skips recorded in the live file, which a rebuild honours whether or not it compares,
    /// and with `compare` the file's snapshot, whose read transaction stays open until the
    /// comparison is done. Without it nothing stays open: a long read would hold back the
    /// projector's WAL.
    private static func live(
        _ target: ProjectionTarget, compare: Bool
    ) throws(CommandFailure) -> (snapshot: ProjectionSnapshot?, skips: [SkippedEvent]) {
        let live: ProjectionSnapshot?
        let skips: [SkippedEvent]
        do throws(ProjectorError) {
            live = try ProjectionSnapshot(path: target.path)
            skips = try live?.skips() ?? []
        } catch {
            throw failure(error)
        }
        if let live, live.name != target.name {
            throw CommandFailure.environment("\(target.path) holds the projection \(live.name), not \(target.name)")
        }
        guard compare else { return (nil, skips) }
        guard let live else {
            throw CommandFailure.environment("no live \(target.name) at \(target.path) to compare with")
        }
        return (live, skips)
    }

    /// How the live file differs from the store, read after its snapshot: a projector applies only
    /// what the store has, so a checkpoint beyond this head means the store lost events the file holds.
    private static func mismatch(
        _ snapshot: ProjectionSnapshot, store: SQLiteEventStore, path: String
    ) throws(CommandFailure) -> StoreMismatch? {
        do throws(StoreError) {
            return try StoreMismatch.of(
                snapshot.name, checkpoint: snapshot.checkpoint, appliedHash: snapshot.chainHash, store: store,
                head: try store.head())
        } catch {
            throw VerifyCommand.readFailure(path, error)
        }
    }

    /// What the rebuild found in the history (an event stopped it) is exit 1; a file, a lock, a
    /// path or a comparison that could not be made is exit 2. Differences are not errors: the
    /// command reports them itself.
    static func failure(_ error: ProjectorError) -> CommandFailure {
        switch error.kind {
        // A store behind the file, another store's file, history's refusal and the bus are a
        // projector's alone; they are placed as the projector places them.
        case .stopped, .outOfOrder, .ahead, .otherStore, .history, .bus: CommandFailure.problem(error.message)
        // A key store that cannot be read is the machine's setup, not a problem in the events.
        case .locked, .foreign, .io, .full, .invalidRequest, .keyStore, .endpoint:
            CommandFailure.environment(error.message)
        }
    }
}
