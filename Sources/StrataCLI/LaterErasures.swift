import EventStore
import Events
import Foundation
import StrataCore
import SubjectKeys

/// The erasures a restore must not undo: those the store being replaced holds, made after the
/// backup was taken, of subjects the backup holds. Put in place as it is, the backup would bring
/// each such key back, and with it the personal data the erasure destroyed, while the service,
/// finding no `PersonalDataErased`, would take the subject's personal data again, and a
/// projection kept through the restore would keep what it holds of the subject in clear.
/// `strata restore` appends each erasure to the restored store again, as an operator act, and
/// destroys the key in the restored key store (when it has one), before anything is moved into
/// place.
struct LaterErasures {
    struct Erasure {
        /// As the replaced store recorded it: its stream, and the command that decided it.
        let recorded: RecordedEvent
        let event: PersonalDataErased
        var subject: DataSubject { DataSubject(event.kind, event.subjectId) }
    }

    /// In the order the replaced store recorded them.
    var erasures: [Erasure] = []
    /// Why the replaced store's erasures could not all be read (a store damaged enough to be
    /// restored may be), or were not taken (another history): the operator is told to erase
    /// again every subject erased after the backup.
    var warning: String?

    /// The erasures of the store at `replacedPath` (none when there is no such file) after the
    /// backup's head, `backup` (its position and hash), whose subject the backup holds: its key
    /// in `restoredKeys`, the restored key store (none when there is none), or its personal data
    /// in an event at or before the backup's head (the store being replaced continues the backup,
    /// so its events up to there are the backup's). Only a store that continues the backup
    /// has later erasures: one with another event at the backup's head is another history,
    /// whose subjects are other people however their ids coincide, and is only warned about.
    /// So is a store no longer than the backup whose last event is not the backup's there (an
    /// older backup restored by mistake and written to, then this one restored over it): its
    /// erasures are in no backup, and went unsaid. `backupPath` is the backup's copy, read for
    /// its hash at that position (and closed again before this returns).
    static func find(
        replacing replacedPath: String, after backup: (position: Int64, hash: String), backupPath: String,
        restoredKeys: SubjectKeyStore?
    ) -> LaterErasures {
        var result = LaterErasures()
        guard let restoredKeys, FileManager.default.fileExists(atPath: replacedPath) else { return result }
        do {
            let replaced = try SQLiteEventStore(readingAt: replacedPath)
            let replacedHead = try replaced.head()
            if backup.position > 0, replacedHead > 0 {
                // Where the two must agree for the replaced store to be the backup's history.
                let position = min(replacedHead, backup.position)
                let backupHash =
                    position == backup.position
                    ? backup.hash : try SQLiteEventStore(readingAt: backupPath).hash(at: position)
                guard try replaced.hash(at: position) == backupHash else {
                    result.warning =
                        "the store it replaces has another event at position \(position) than the backup: "
                        + (replacedHead > backup.position
                            ? "it is not a continuation of the backup" : "it is not part of the backup's history")
                        + ", and its erasures are not recorded again"
                    return result
                }
            }
            let later = try replaced.erasures().filter { $0.recorded.position > backup.position }
                .map { Erasure(recorded: $0.recorded, event: $0.event) }
            // A subject the backup holds has its key there, unless the erasure committed while
            // the backup ran, between its copy of the store and its copy of the keys: its events
            // are in the backup then, and so is the personal data a projection kept of them.
            var keyless: Set<DataSubject> = []
            for erasure in later where try restoredKeys.key(of: erasure.subject) == nil {
                keyless.insert(erasure.subject)
            }
            let held = try replaced.subjects(among: keyless, upTo: backup.position)
            result.erasures = later.filter { !keyless.contains($0.subject) || held.contains($0.subject) }
        } catch {
            result.warning = "the erasures of the store it replaces could not all be read (\(error))"
        }
        return result
    }

    /// Appends every erasure to the store at `storePath` in one transaction, each an operator
    /// act (command `operator-restore-erasure-KIND-ID`, actor `operator`, with the correlation id
    /// of the erasure it repeats, else that erasure's command id), then destroys each subject's key in `keys`: in the order
    /// the service keeps, so that a key is never gone while its erasure is not recorded.
    /// Returns the positions appended.
    func reapply(to storePath: String, keys: SubjectKeyStore) throws -> [Int64] {
        guard !erasures.isEmpty else { return [] }
        let store = try SQLiteEventStore(path: storePath)
        var writes: [CommandWrite] = []
        for erasure in erasures {
            guard let stream = StreamName(erasure.recorded.stream) else {
                throw StoreError(.corrupt, "event \(erasure.recorded.position) has no valid stream name")
            }
            // A restore of a restore carries the first erasure's correlation on.
            let metadata = try erasure.recorded.decodedMetadata()
            let original = metadata.correlationId ?? metadata.commandId
            let body = CanonicalJSON.bytes([
                "kind": .string(erasure.event.kind.rawValue), "reapplies": .string(original),
                "subjectId": .string(erasure.event.subjectId),
            ])
            writes.append(
                try CommandWrite(
                    commandId: "operator-restore-erasure-\(erasure.event.kind.rawValue.lowercased())-"
                        + erasure.event.subjectId,
                    bodyDigest: HashChain.sha256(body), actor: "operator", commandType: "ReapplyErasure",
                    correlationId: original,
                    decision: .append([try NewEvent(stream: stream, event: erasure.event)], expectations: [:])))
        }
        var positions: [Int64] = []
        for (write, result) in zip(writes, try store.append(writes)) {
            guard case .accepted(let events) = result.outcome else {
                throw StoreError(.invalidArgument, "\(write.commandId) was not appended: \(result.outcome)")
            }
            positions += events.map(\.position)
        }
        for erasure in erasures { _ = try keys.destroyKey(of: erasure.subject) }
        return positions
    }
}
