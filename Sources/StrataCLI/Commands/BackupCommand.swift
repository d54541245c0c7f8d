import EventStore
import Foundation
import StrataCore

#if canImport(Glibc)
    import Glibc
#endif

/// `strata backup --output DIR`: a consistent copy of the event store and its key store,
/// taken beside the running system, verified before it is put in place.
enum BackupCommand {
    static let spec = CommandSpec(
        ["backup"], summary: "Copy the event store and the key store into a new directory, verified.",
        options: Configuration.options + [
            OptionSpec("output", value: "DIR", help: "The directory to make (it must not exist)."),
            OptionSpec("format", value: "text|json", help: "Output format (default text)."),
        ],
        discussion: """
            Copies events.db as one commit left it (SQLite's online backup: the service goes on
            appending meanwhile), then subject-keys.db, without the keys of subjects whose erasure the
            copied store holds. The event store is copied first: every event in the copy is sealed
            under a key stored before it, so the key store copied after it holds them all.

            Before the directory is put in place, the copy's structure is checked (PRAGMA quick_check)
            and its chain verified as `strata verify` does (with DATA/checkpoint.pub when present);
            the key store's copy has its structure checked too.
            The files are built in a hidden directory beside DIR, synced, and renamed to DIR whole: DIR
            is complete or absent, never partial (SIGINT, SIGTERM or SIGHUP remove the hidden
            directory; one a killed backup left is removed by the next backup to DIR). Both files are
            self-contained (no -wal), mode 0600, in a directory of mode 0700: the key store opens every
            personal field.

            Not copied: the read models (a projector rebuilds them from the store), and the secrets the
            operator keeps apart (the key file, the checkpoint key). To restore: strata restore --from DIR.

            Exit codes: 0 written; 1 the store's chain is broken or a file is damaged (nothing is
            written); 2 usage or environment: no store, DIR exists or is a name the system gives one of
            its files, no key store beside a store of sealed personal data, a file that cannot be read
            or written.
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        // The copy is built in a scratch directory that a signal must not leave behind (it
        // holds the keys): the signals are blocked now, before any thread exists.
        ShutdownSignals.blockAtStart()
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let format = try arguments.textOrJSON()
        guard let given = arguments.value("output"), !given.isEmpty else {
            throw UsageError("say where to write the backup: --output DIR (a directory that does not exist)")
        }
        let output = PathName.withoutTrailingSlashes(given)
        var status = stat()
        if lstat(output, &status) == 0 {
            throw CommandFailure.environment("\(output) exists; a backup goes into a new directory")
        }
        // A name the system gives a file it has not made yet (DATA/events.db-wal while the service
        // is stopped): the backup's directory there stopped every command from opening the store.
        try SystemFiles.requireApart(output, writing: [output], by: "a backup", configuration, arguments, environment)
        guard FileManager.default.fileExists(atPath: configuration.eventStorePath) else {
            throw CommandFailure.environment(
                "no event store at \(configuration.eventStorePath) (set --data or STRATA_DATA)")
        }
        let (trustedKeys, _) = try VerifyCommand.trustedKeys(nil, configuration)

        // Beside DIR, so that renaming it there is one step of one file system; it also removes
        // what a backup to the same DIR that was killed left.
        let scratch = try ScratchDirectory(
            ".\(output.split(separator: "/").last ?? "").partial", in: parentDirectory(of: output))
        defer { scratch.remove() }
        let partial = scratch.path
        let refusal = "no backup written"
        let backup = try StoreCopy.make(
            store: configuration.eventStorePath, keys: configuration.subjectKeysPath, into: partial,
            trustedKeys: trustedKeys, progress: "backup", refusal: refusal)
        guard backup.report.isIntact else {
            throw backup.brokenChain(of: configuration.eventStorePath, refusal: refusal)
        }
        try backup.synchronize(in: partial, refusal: refusal)
        try scratch.keep(as: output)
        try AtomicFile.synchronize(directory: parentDirectory(of: output), holding: output)
        print(backup, to: output, format: format)
        return 0
    }

    private static func parentDirectory(of path: String) -> String {
        let parent = PathName.directory(of: path)
        return parent.isEmpty ? "." : parent
    }

    private static func print(_ backup: StoreCopy, to output: String, format: String) {
        if format == "json" {
            var result = backup.summary
            result["output"] = .string(output)
            printLine(CanonicalJSON.string(.object(result)))
            return
        }
        printLine(backup.intactLine)
        if let keys = backup.keys {
            printLine("keys: \(keys.kept) subject keys copied; \(keys.leftOut) of erased subjects left out")
        } else {
            printLine("keys: no key store beside the store; none copied")
        }
        printLine("backup written to \(output): \(backup.files.joined(separator: ", "))")
    }
}
