import EventStore
import Foundation
import ProjectorRuntime

/// Why a projection file is not a view of the store beside it, which no projector can mend and
/// a rebuild must: it is ahead of the store's head (`events.db` restored from an older backup),
/// or its event at the checkpoint is not the store's (a file of another data directory, or a
/// store restored from another system). `strata status` reports it; `strata query` warns.
enum StoreMismatch: Equatable {
    case ahead(String)
    case otherStore(String)

    var message: String {
        switch self {
        case .ahead(let message), .otherStore(let message): message
        }
    }

    /// The message with the file named, for a warning: `readmodels is ahead of the store: …`
    /// (the other store's message names it already).
    func warning(_ name: String) -> String {
        switch self {
        case .ahead(let message): "\(name) is ahead of the store: \(message)"
        case .otherStore(let message): message
        }
    }

    /// How a live file that a command answers from, whatever it is (`query`, `report`), differs
    /// from the store at `storePath`. Nothing is said when there is no store to compare with (the
    /// read models on another host) or it cannot be read: `status` and `verify` are the place for that.
    static func beside(
        _ name: String, checkpoint: Int64, appliedHash: String, storePath: String
    ) -> StoreMismatch? {
        guard FileManager.default.fileExists(atPath: storePath),
            let store = try? SQLiteEventStore(readingAt: storePath), let head = try? store.head()
        else { return nil }
        return try? of(name, checkpoint: checkpoint, appliedHash: appliedHash, store: store, head: head)
    }

    /// The mismatch of projection `name`, at `checkpoint` with `appliedHash`, against `store`
    /// whose head is `head` (read after the checkpoint: a projector applies only what the store
    /// has, so a checkpoint beyond it means the store lost events the file holds); nil when the
    /// file is the store's.
    static func of(
        _ name: String, checkpoint: Int64, appliedHash: String, store: SQLiteEventStore, head: Int64
    ) throws(StoreError) -> StoreMismatch? {
        if checkpoint > head { return .ahead(ProjectorError.beyondHead(checkpoint: checkpoint, head: head)) }
        guard checkpoint > 0, let storeHash = try store.hash(at: checkpoint), storeHash != appliedHash else {
            return nil
        }
        return .otherStore(
            ProjectorError.otherStore(name: name, checkpoint: checkpoint, storeHash: storeHash, fileHash: appliedHash))
    }
}
