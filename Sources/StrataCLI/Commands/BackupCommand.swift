import EventStore
import Events
import Foundation
import StrataCore
import SubjectKeys

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
            and its chain verified as `strata verify` does (with DATA/checkpoint.pub when present).
            The files are built in a hidden directory beside DIR, synced, and renamed to DIR whole: DIR
            is complete or absent, never partial (SIGINT, SIGTERM or SIGHUP remove the hidden
            directory; one a killed backup left is removed by the next backup to DIR). Both files are
            self-contained (no -wal), mode 0600, in a directory of mode 0700: the key store opens every
            personal field.

            Not copied: the read models (a projector rebuilds them from the store), and the secrets the
            operator keeps apart (the key file, the checkpoint key). To restore, see docs/cli.md.

            Exit codes: 0 written; 1 the store's chain is broken or a file is damaged (nothing is
            written); 2 usage or environment: no store, DIR exists, a file that cannot be read or
            written.
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        // The copy is built in a scratch directory that a signal must not leave behind (it
        // holds the keys): the signals are blocked now, before any thread exists.
        ShutdownSignals.blockAtStart()
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let format = arguments.value("format") ?? "text"
        guard format == "text" || format == "json" else { throw UsageError("--format must be text or json") }
        guard var output = arguments.value("output"), !output.isEmpty else {
            throw UsageError("say where to write the backup: --output DIR (a directory that does not exist)")
        }
        while output.count > 1, output.hasSuffix("/") { output.removeLast() }
        var status = stat()
        if lstat(output, &status) == 0 {
            throw CommandFailure.environment("\(output) exists; a backup goes into a new directory")
        }
        guard FileManager.default.fileExists(atPath: configuration.eventStorePath) else {
            throw CommandFailure.environment(
                "no event store at \(configuration.eventStorePath) (set --data or STRATA_DATA)")
        }
        let (trustedKey, _) = try VerifyCommand.trustedKey(nil, configuration)

        // Beside DIR, so that renaming it there is one step of one file system; it also removes
        // what a backup to the same DIR that was killed left.
        let scratch = try ScratchDirectory(
            ".\(output.split(separator: "/").last ?? "").partial", in: parentDirectory(of: output))
        defer { scratch.remove() }
        let partial = scratch.path
        let backup = try copyAndVerify(configuration, into: partial, trustedKey: trustedKey)
        guard backup.report.isIntact else {
            let problem = backup.report.problem.map { "position \($0.position): \($0.kind.rawValue): \($0.message)" }
            throw CommandFailure.problem(
                "no backup written: the chain of \(configuration.eventStorePath) is broken at \(problem ?? "?"); "
                    + "`strata verify` says more")
        }
        for file in backup.files { try synchronize(file: partial + "/" + file) }
        try AtomicFile.synchronize(directory: partial, holding: partial)
        try scratch.keep(as: output)
        try AtomicFile.synchronize(directory: parentDirectory(of: output), holding: output)
        print(backup, to: output, format: format)
        return 0
    }

    private struct Backup {
        var report: ChainReport
        /// The files written, by name, in the order written.
        var files: [String]
        /// How many keys the copied key store holds, and how many it left out; nil without one.
        var keys: (kept: Int, leftOut: Int)?
    }

    private static func copyAndVerify(
        _ configuration: Configuration, into directory: String, trustedKey: [UInt8]?
    ) throws -> Backup {
        let storePath = configuration.eventStorePath
        let copyPath = directory + "/events.db"
        let copy: SQLiteEventStore
        let report: ChainReport
        let erased: [DataSubject]
        do throws(StoreError) {
            copy = try SQLiteEventStore.copy(from: storePath, into: copyPath)
            let progress = TerminalProgress.forStandardError("backup", total: try? copy.head())
            defer { progress?.finish() }
            report = try copy.verify(
                trustedKey: trustedKey, expected: nil, progress: progress.map { progress in { progress.update($0) } })
            erased = try erasedSubjects(in: copy)
        } catch where error.kind == .corrupt {
            throw CommandFailure.problem("no backup written: \(error.message)")
        } catch {
            throw CommandFailure.environment("no backup written: \(error.message)")
        }
        var backup = Backup(report: report, files: ["events.db"])
        let keysPath = configuration.subjectKeysPath
        guard FileManager.default.fileExists(atPath: keysPath) else { return backup }
        do throws(SubjectKeyStoreError) {
            backup.keys = try SubjectKeyStore.copy(
                from: keysPath, into: directory + "/" + SubjectKeyStore.fileName, without: erased)
            backup.files.append(SubjectKeyStore.fileName)
        } catch {
            throw CommandFailure.environment("no backup written: \(error)")
        }
        return backup
    }

    /// Every subject the store holds a `PersonalDataErased` of.
    private static func erasedSubjects(in store: SQLiteEventStore) throws(StoreError) -> [DataSubject] {
        var subjects: [DataSubject] = []
        var after: Int64 = 0
        while true {
            let page = try store.events(after: after, limit: 10_000, filter: .types([PersonalDataErased.eventType]))
            for recorded in page {
                guard case .personalDataErased(let erased)? = try? recorded.decoded() else {
                    throw StoreError(.corrupt, "event \(recorded.position) (PersonalDataErased) cannot be read")
                }
                subjects.append(DataSubject(erased.kind, erased.subjectId))
            }
            guard let last = page.last else { return subjects }
            after = last.position
        }
    }

    private static func parentDirectory(of path: String) -> String {
        let parent = PathName.directory(of: path)
        return parent.isEmpty ? "." : parent
    }

    private static func synchronize(file path: String) throws {
        let failure = AtomicFile.sync(path)
        guard failure == 0 else {
            throw CommandFailure.environment(
                "no backup written: cannot sync \(path): \(String(cString: strerror(failure)))")
        }
    }

    private static func print(_ backup: Backup, to output: String, format: String) {
        let report = backup.report
        if format == "json" {
            var result: [String: JSONValue] = [
                "output": .string(output), "head": .integer(report.lastGoodPosition),
                "hash": .string(report.lastGoodHash), "eventsVerified": .integer(report.eventsChecked),
                "checkpointsVerified": .integer(report.checkpointsChecked),
                "files": .array(backup.files.map { .string($0) }),
            ]
            result["subjectKeys"] = backup.keys.map { .integer(Int64($0.kept)) } ?? .null
            result["erasedKeysLeftOut"] = backup.keys.map { .integer(Int64($0.leftOut)) } ?? .null
            printLine(CanonicalJSON.string(.object(result)))
            return
        }
        printLine(
            "intact: \(report.eventsChecked) events verified; head \(report.lastGoodPosition), "
                + "hash \(report.lastGoodHash)")
        if let keys = backup.keys {
            printLine("keys: \(keys.kept) subject keys copied; \(keys.leftOut) of erased subjects left out")
        } else {
            printLine("keys: no key store beside the store; none copied")
        }
        printLine("backup written to \(output): \(backup.files.joined(separator: ", "))")
    }
}
