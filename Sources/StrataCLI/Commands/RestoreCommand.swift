import EventStore
import Foundation
import ProjectorRuntime
import StrataCore
import SubjectKeys

#if canImport(Glibc)
    import Glibc
#endif

/// `strata restore --from DIR`: a backup put in place of the data directory's store and key
/// store, checked first, with what it replaces moved aside rather than deleted.
enum RestoreCommand {
    static let spec = CommandSpec(
        ["restore"], summary: "Put a backup in place of the event store and the key store, verified.",
        options: Configuration.options + [
            OptionSpec("from", value: "DIR", help: "The backup: a directory `strata backup` wrote."),
            OptionSpec("format", value: "text|json", help: "Output format (default text)."),
        ],
        discussion: """
            With every process of the data directory stopped (it refuses while `serve`, `up` or a
            projector holds one of its files, and keeps them from starting until it is done), it
            copies the backup's events.db and subject-keys.db into the data directory, checked as
            `strata backup` checks them: the structure of both whole, the chain verified (with
            DATA/checkpoint.pub when present), no key of a subject the copied store has erased.

            An erasure the replaced store holds, of a subject whose key the backup still has (made
            after the backup was taken), is recorded again in the restored store, as an operator act,
            and the key destroyed in the restored key store: a restore never brings an erased
            subject's personal data back.

            Only then does it move aside what they replace, into DATA/replaced-TIME (mode 0700):
            events.db and subject-keys.db, each with its -wal and -shm. readmodels.db and audit.db
            stay where they are a view of the restored store (their checkpoint at or before its
            head, on its chain: a projector resumes them, or --resume after a stop); those ahead of
            it, of another store, or unreadable are moved aside too, and rebuilt by their projector.
            Nothing is deleted. The copies are renamed into place, and a signal that comes meanwhile
            waits for the renames. The key file and the checkpoint key stay as they are.

            Exit codes: 0 restored; 1 the backup's chain is broken or a file is damaged (nothing is
            changed); 2 usage or environment: no backup at DIR (or one of sealed personal data without
            its key store), a process holds the data directory, a file that cannot be read, written or
            moved.
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        // The copy is built in a scratch directory that a signal must not leave behind (it
        // holds the keys): the signals are blocked now, before any thread exists.
        ShutdownSignals.blockAtStart()
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let format = try arguments.textOrJSON()
        guard let given = arguments.value("from"), !given.isEmpty else {
            throw UsageError("say which backup to restore: --from DIR (a directory `strata backup` wrote)")
        }
        let from = PathName.withoutTrailingSlashes(given)
        let backupStore = from + "/events.db"
        guard FileManager.default.fileExists(atPath: backupStore) else {
            throw CommandFailure.environment("no backup at \(from): it holds no events.db")
        }
        let data = configuration.dataDirectory
        // Made as serve makes it: it is to hold the key store and, once they run, the read models.
        try Directories.create(data, "the data directory", mode: 0o700)
        let locks = try lock(configuration)
        defer { for lock in locks { lock.release() } }
        let (trustedKeys, _) = try VerifyCommand.trustedKeys(nil, configuration)

        let refusal = "nothing restored"
        let scratch = try ScratchDirectory(".restore.partial", in: data)
        defer { scratch.remove() }
        let restored = try StoreCopy.make(
            store: backupStore, keys: from + "/" + SubjectKeyStore.fileName, into: scratch.path,
            trustedKeys: trustedKeys, progress: "restore", refusal: refusal)
        guard restored.report.isIntact else { throw restored.brokenChain(of: backupStore, refusal: refusal) }
        let later = try reapplyLaterErasures(
            replacing: configuration.eventStorePath, restored: restored, in: scratch.path, refusal: refusal)
        try restored.synchronize(in: scratch.path, refusal: refusal)
        let projections = try projections(configuration, against: scratch.path + "/events.db", refusal: refusal)
        let replaced = present(["events.db", SubjectKeyStore.fileName] + projections.misfits.map(\.file), in: data)
        let aside = try scratch.whole { (partial) throws(CommandFailure) -> String? in
            try putInPlace(restored.files, from: partial, into: data, replacing: replaced)
        }
        print(
            restored, from: from, into: data, aside: (aside, replaced), projections: projections, later: later,
            format: format)
        return 0
    }

    /// The erasures made after the backup (`LaterErasures`), appended to the restored copy in
    /// `scratch` with their keys destroyed there. Both files are closed, their logs checkpointed
    /// into them, before they are synced and moved: only the files themselves are moved.
    private static func reapplyLaterErasures(
        replacing replacedPath: String, restored: StoreCopy, in scratch: String, refusal: String
    ) throws(CommandFailure) -> (erasures: LaterErasures, positions: [Int64]) {
        guard restored.keys != nil else { return (LaterErasures(), []) }
        let result: (erasures: LaterErasures, positions: [Int64])
        do {
            let keys = try SubjectKeyStore(writingAt: scratch + "/" + SubjectKeyStore.fileName)
            let backup = (restored.report.lastGoodPosition, restored.report.lastGoodHash)
            let later = LaterErasures.find(
                replacing: replacedPath, after: backup, backupPath: scratch + "/events.db", restoredKeys: keys)
            result = (later, try later.reapply(to: scratch + "/events.db", keys: keys))
        } catch {
            throw CommandFailure.environment("\(refusal): recording again the erasures made after the backup: \(error)")
        }
        for log in ["events.db-wal", SubjectKeyStore.fileName + "-wal"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: scratch + "/" + log)[.size] as? Int) ?? 0
            guard size == 0 else {
                throw CommandFailure.environment("\(refusal): \(log) was left with \(size) bytes after closing")
            }
        }
        return result
    }

    /// The writer locks of the store and both projection files: refused while a process holds
    /// one, and held until the restore is done, so that none starts on a half-restored directory.
    private static func lock(_ configuration: Configuration) throws(CommandFailure) -> [WriterLock] {
        var locks: [WriterLock] = []
        let files = [
            (configuration.eventStorePath, "strata serve or strata up?"),
            (configuration.readModelsPath, "strata project readmodels?"),
            (configuration.auditPath, "strata project audit?"),
        ]
        for (path, holder) in files {
            do throws(StoreError) {
                locks.append(try WriterLock.acquire(for: path, holder: holder))
            } catch {
                for lock in locks { lock.release() }
                throw CommandFailure.environment("nothing restored: \(error.message)")
            }
        }
        return locks
    }

    /// The projection files, each a view of the restored store or not (with why not).
    private struct Projections {
        var kept: [(file: String, checkpoint: Int64)] = []
        var misfits: [(file: String, reason: String)] = []
    }

    /// Which projection files are a view of the restored store at `storePath`: at or before its
    /// head, with its hash at their checkpoint, as `strata status` judges them.
    private static func projections(
        _ configuration: Configuration, against storePath: String, refusal: String
    ) throws(CommandFailure) -> Projections {
        let store: SQLiteEventStore
        let head: Int64
        do throws(StoreError) {
            store = try SQLiteEventStore(readingAt: storePath)
            head = try store.head()
        } catch {
            throw CommandFailure.environment("\(refusal): \(error.message)")
        }
        var result = Projections()
        for name in ProjectionTarget.names {
            guard let target = ProjectionTarget(name: name, configuration: configuration) else { continue }
            let file = String(target.path.split(separator: "/").last ?? "")
            let opened: ProjectionSnapshot?
            do throws(ProjectorError) {
                opened = try ProjectionSnapshot(path: target.path)
            } catch {
                result.misfits.append((file, error.message))
                continue
            }
            guard let snapshot = opened else { continue }
            guard snapshot.name == name else {
                result.misfits.append((file, "it holds the \(snapshot.name) projection"))
                continue
            }
            let mismatch: StoreMismatch?
            do throws(StoreError) {
                mismatch = try StoreMismatch.of(
                    name, checkpoint: snapshot.checkpoint, appliedHash: snapshot.chainHash, store: store, head: head)
            } catch {
                throw CommandFailure.environment("\(refusal): \(error.message)")
            }
            if let mismatch {
                result.misfits.append((file, mismatch.message))
            } else {
                result.kept.append((file, snapshot.checkpoint))
            }
        }
        return result
    }

    /// Of the databases `names`, the files in `data` (each with its `-wal` and `-shm`).
    private static func present(_ names: [String], in data: String) -> [String] {
        names.flatMap { name in ["", "-wal", "-shm"].map { name + $0 } }.filter { name in
            var status = stat()
            return lstat(data + "/" + name, &status) == 0
        }
    }

    /// Moves `replaced` into a new `replaced-TIME` directory (returned; nil when there is none),
    /// then the restored files from `partial` into `data`. All of it is renames within `data`:
    /// if one fails, those done are undone, so the data directory is as it was.
    private static func putInPlace(
        _ restoredFiles: [String], from partial: String, into data: String, replacing replaced: [String]
    ) throws(CommandFailure) -> String? {
        var renames: [(from: String, to: String)] = []
        func undo() -> [String] {
            var left: [String] = []
            for rename in renames.reversed() where Glibc.rename(rename.to, rename.from) != 0 {
                left.append("\(rename.to) (was \(rename.from))")
            }
            return left
        }
        func move(_ source: String, _ destination: String) throws(CommandFailure) {
            guard Glibc.rename(source, destination) == 0 else {
                let reason = String(cString: strerror(errno))
                let left = undo()
                throw CommandFailure.environment(
                    "nothing restored: cannot move \(source) to \(destination): \(reason)"
                        + (left.isEmpty ? "" : "; and could not move back: \(left.joined(separator: ", "))"))
            }
            renames.append((source, destination))
        }
        var directory: String?
        if !replaced.isEmpty {
            let made = try makeReplacedDirectory(in: data)
            directory = made
            for name in replaced { try move(data + "/" + name, made + "/" + name) }
        }
        for name in restoredFiles { try move(partial + "/" + name, data + "/" + name) }
        // The renames made durable, the new directory's entries first.
        for path in [directory, data].compactMap({ $0 }) {
            let failure = AtomicFile.sync(path, directory: true)
            guard failure == 0 else {
                throw CommandFailure.environment(
                    "restored, but cannot sync the directory \(path): \(String(cString: strerror(failure)))")
            }
        }
        return directory
    }

    /// `DATA/replaced-YYYYMMDDTHHMMSSZ` (with `-2`, `-3` … when taken), mode 0700: it holds a
    /// key store.
    private static func makeReplacedDirectory(in data: String) throws(CommandFailure) -> String {
        let stamp = Timestamp.now().description.filter { $0 != "-" && $0 != ":" }.prefix(15) + "Z"
        let base = data + "/replaced-" + stamp
        for attempt in 1...100 {
            let path = attempt == 1 ? base : base + "-\(attempt)"
            if mkdir(path, 0o700) == 0 { return path }
            guard errno == EEXIST else {
                throw CommandFailure.environment(
                    "nothing restored: cannot create \(path): \(String(cString: strerror(errno)))")
            }
        }
        throw CommandFailure.environment("nothing restored: \(base) and 99 more like it exist")
    }

    private static func print(
        _ restored: StoreCopy, from: String, into data: String, aside: (directory: String?, files: [String]),
        projections: Projections, later: (erasures: LaterErasures, positions: [Int64]), format: String
    ) {
        let head = later.positions.last ?? restored.report.lastGoodPosition
        if format == "json" {
            var result = restored.summary
            result["erasuresRecordedAgain"] = .array(
                zip(later.erasures.erasures, later.positions).map { erasure, position in
                    .object(["position": .integer(position), "subject": .string(erasure.subject.description)])
                })
            result["erasuresWarning"] = later.erasures.warning.map { .string($0) } ?? .null
            result["restoredHead"] = .integer(head)
            result["from"] = .string(from)
            result["data"] = .string(data)
            result["movedAside"] = aside.directory.map { .string($0) } ?? .null
            result["replaced"] = .array(aside.files.map { .string($0) })
            result["projectionsKept"] = .object(
                Dictionary(uniqueKeysWithValues: projections.kept.map { ($0.file, .integer($0.checkpoint)) }))
            printLine(CanonicalJSON.string(.object(result)))
            return
        }
        printLine(restored.intactLine)
        if let keys = restored.keys {
            printLine("keys: \(keys.kept) subject keys restored; \(keys.leftOut) of erased subjects left out")
        } else {
            printLine("keys: the backup has no key store; none restored")
        }
        printLine("restored from \(from) into \(data): \(restored.files.joined(separator: ", "))")
        if let first = later.positions.first, let last = later.positions.last {
            let subjects = later.erasures.erasures.map(\.subject.description).joined(separator: ", ")
            printLine(
                "erasures made after the backup, recorded again at positions \(first)–\(last), "
                    + "their keys destroyed: \(subjects)")
        }
        if let warning = later.erasures.warning {
            printLine("warning: \(warning); erase again (strata forget) every subject erased after the backup")
        }
        if let directory = aside.directory {
            printLine("moved aside to \(directory): \(aside.files.joined(separator: ", "))")
        }
        for (file, checkpoint) in projections.kept {
            printLine("kept \(file): at position \(checkpoint), a view of the restored store")
        }
        for (file, reason) in projections.misfits {
            printLine("moved aside \(file), which its projector rebuilds: \(reason)")
        }
        printLine("start the system: serve continues after position \(head)")
    }
}
