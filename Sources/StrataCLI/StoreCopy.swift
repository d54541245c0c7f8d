import CommandService
import EventStore
import Events
import Foundation
import StrataCore
import SubjectKeys

/// A store and its key store copied into a directory and checked: what `strata backup` writes
/// and what `strata restore` puts back, one way for both.
///
/// The event store is copied first (SQLite's online backup, one read transaction: the store as
/// one commit left it), its structure checked whole and its chain verified; then the key store,
/// without the keys of subjects the copied store has erased.
struct StoreCopy {
    var report: ChainReport
    /// The files written, by name, in the order written.
    var files: [String]
    /// How many keys the copied key store holds, and how many it left out; nil without one.
    var keys: (kept: Int, leftOut: Int)?

    /// Copies `storePath`, and `keysPath` when it exists, into `directory`, showing progress as
    /// `label` on a terminal. Failures say
    /// `refusal` first ("no backup written"): exit 1 for a damaged store or key store, 2 for a
    /// file that cannot be read or written. A broken chain is not a failure here: see `report`.
    static func make(
        store storePath: String, keys keysPath: String, into directory: String, trustedKeys: TrustedCheckpointKeys?,
        progress label: String, refusal: String
    ) throws -> StoreCopy {
        let copyPath = directory + "/events.db"
        let copy: SQLiteEventStore
        let report: ChainReport
        let erased: [DataSubject]
        let hasKeyStore = FileManager.default.fileExists(atPath: keysPath)
        var firstSealed: Int64?
        do throws(StoreError) {
            copy = try SQLiteEventStore.copy(from: storePath, into: copyPath)
            let progress = TerminalProgress.forStandardError(label, total: try? copy.head())
            defer { progress?.finish() }
            report = try copy.verify(
                trustedKeys: trustedKeys, expected: nil, progress: progress.map { progress in { progress.update($0) } })
            erased = try copy.erasures().map { DataSubject($0.event.kind, $0.event.subjectId) }
            if !hasKeyStore { firstSealed = try SealedHistory.firstSealedEvent(in: copy) }
        } catch where error.kind == .corrupt {
            throw CommandFailure.problem("\(refusal): \(error.message)")
        } catch {
            throw CommandFailure.environment("\(refusal): \(error.message)")
        }
        var result = StoreCopy(report: report, files: ["events.db"])
        // Without its key store, a store of sealed personal data is one `serve` refuses to start
        // on: a backup of it, or a restore that put it in place, said all was well until then.
        if let firstSealed {
            throw CommandFailure.environment(
                "\(refusal): \(keysPath) is missing, but \(storePath) holds personal data sealed under its keys "
                    + "(the first at position \(firstSealed)): `strata serve` would refuse the copy without them")
        }
        guard hasKeyStore else { return result }
        do throws(SubjectKeyStoreError) {
            result.keys = try SubjectKeyStore.copy(
                from: keysPath, into: directory + "/" + SubjectKeyStore.fileName, without: erased)
            result.files.append(SubjectKeyStore.fileName)
        } catch where error.isDamage {
            throw CommandFailure.problem("\(refusal): \(error)")
        } catch {
            throw CommandFailure.environment("\(refusal): \(error)")
        }
        return result
    }

    /// The broken chain as a refusal, saying `refusal` first.
    func brokenChain(of storePath: String, refusal: String) -> CommandFailure {
        let problem = report.problem.map { "position \($0.position): \($0.kind.rawValue): \($0.message)" }
        return CommandFailure.problem(
            "\(refusal): the chain of \(storePath) is broken at \(problem ?? "?"); `strata verify` says more")
    }

    /// Syncs each file written, then `directory`.
    func synchronize(in directory: String, refusal: String) throws {
        for file in files {
            let failure = AtomicFile.sync(directory + "/" + file)
            guard failure == 0 else {
                throw CommandFailure.environment(
                    "\(refusal): cannot sync \(directory)/\(file): \(String(cString: strerror(failure)))")
            }
        }
        try AtomicFile.synchronize(directory: directory, holding: directory)
    }

    /// The head, the hash and the counts, as `backup` and `restore` print them.
    var summary: [String: JSONValue] {
        var result: [String: JSONValue] = [
            "head": .integer(report.lastGoodPosition), "hash": .string(report.lastGoodHash),
            "eventsVerified": .integer(report.eventsChecked),
            "checkpointsVerified": .integer(report.checkpointsChecked),
            "files": .array(files.map { .string($0) }),
        ]
        result["subjectKeys"] = keys.map { .integer(Int64($0.kept)) } ?? .null
        result["erasedKeysLeftOut"] = keys.map { .integer(Int64($0.leftOut)) } ?? .null
        return result
    }

    /// The first line both print.
    var intactLine: String {
        "intact: \(report.eventsChecked) events verified; head \(report.lastGoodPosition), hash \(report.lastGoodHash)"
    }
}
