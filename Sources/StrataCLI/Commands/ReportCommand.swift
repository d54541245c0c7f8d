import Foundation
import ProjectorRuntime
import StrataCore

/// `strata report --html FILE`: one self-contained HTML page of the read models for an
/// analyst, from one snapshot of readmodels.db.
enum ReportCommand {
    static let spec = CommandSpec(
        ["report"], summary: "Write a self-contained HTML report with charts, from readmodels.db.",
        options: Configuration.options + [
            OptionSpec("html", value: "FILE", help: "Where to write the report (- for standard output)."),
            OptionSpec(
                "date", value: "YYYY-MM-DD", help: "The day aging and collections are as of (default today, UTC)."),
        ],
        discussion: """
            Reads DATA/readmodels.db read-only, in one read transaction, so it runs beside the live
            projector and every figure is of the same position. The page shows the headline figures,
            the portfolio by loan status, collections per day over the 60 days to the date, overdue
            loans by aging bucket, agent performance and receivables by customer, each chart with its
            numbers in a table. It has its CSS and SVG inline, no script and no external resource, so
            it opens offline. The file is written whole (a temporary file, then a rename), with mode 0600:
            it holds personal data in clear (invoice customers' names), which no later erasure reaches. A
            FILE that is one of the system's files (events.db, readmodels.db, audit.db, subject-keys.db,
            their -wal, -shm and -lock, the key file, the config file, the checkpoint key) or the data
            directory, by whatever name or link, is refused, as `strata rebuild --output` refuses it.

            Exit codes: 0 written, 2 usage, or readmodels.db missing or unreadable, or FILE refused or not
            writable.
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        guard let output = arguments.value("html"), !output.isEmpty else {
            throw UsageError("say where to write the report: --html FILE (- for standard output)")
        }
        let asOf: LocalDate
        if let text = arguments.value("date") {
            guard let date = LocalDate(text) else { throw UsageError("--date must be a date YYYY-MM-DD") }
            asOf = date
        } else {
            asOf = Timestamp.now().date
        }
        // Refused before anything is read: the report must not land on the store, a projection or a key.
        if output != "-" {
            try SystemFiles.requireApart(
                output, writing: [output], by: "a report", configuration, arguments, environment)
        }
        guard let target = ProjectionTarget(name: "readmodels", configuration: configuration) else {
            throw CommandFailure.environment("no readmodels projection is configured")
        }
        var figures: ReportFigures
        do {
            guard let snapshot = try ProjectionSnapshot(path: target.path) else {
                throw CommandFailure.environment(
                    "no read models at \(target.path): run `strata project readmodels` (or `strata up`) first")
            }
            guard snapshot.name == target.name else {
                throw CommandFailure.environment("\(target.path) holds the \(snapshot.name) projection, not readmodels")
            }
            figures = try ReportFigures.read(snapshot, asOf: asOf)
            // Read models that are no view of the store beside them still make a page, as a stopped
            // projector's do, but flagged, on the page and where a person or a log sees it.
            if let mismatch = StoreMismatch.beside(
                target.name, checkpoint: snapshot.checkpoint, appliedHash: snapshot.chainHash,
                storePath: configuration.eventStorePath)
            {
                figures.notTheStores = mismatch.warning(target.name)
                write(
                    "strata report: warning: \(mismatch.warning(target.name)); the report is not this store's "
                        + "history\n", to: .standardError)
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch let error as ProjectorError {
            throw CommandFailure.environment(error.message)
        } catch {
            throw CommandFailure.environment("cannot read \(target.path): \(error)")
        }
        let html = Array(HTMLReport.render(figures, generatedAt: Timestamp.now()).utf8)
        if output == "-" {
            StandardStreams.write(html, to: STDOUT_FILENO)
        } else {
            // Owner only, whatever the umask: it names invoice customers, personal data in clear.
            try AtomicFile.write(output, contents: html, mode: 0o600)
            printLine("wrote \(output): readmodels at position \(figures.position), as of \(asOf)")
        }
        return 0
    }
}
