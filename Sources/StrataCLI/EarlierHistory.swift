import EventStore
import Foundation
import ProjectorRuntime

/// What a data directory says of a history its event store no longer holds: a projection that
/// applied events the store does not have.
///
/// An `events.db` emptied (`: > events.db`) or removed reads as a new store, and `serve` or
/// `admin bootstrap` would begin a new chain in it at position 1 beside read models and an
/// audit log of the old one: commands accepted into a history that contradicts every file
/// built from the one before (the projectors then stop, AHEAD of the store). Both refuse to
/// begin a history while a projection in the data directory has applied events.
enum EarlierHistory {
    /// Refuses (exit 1) when the store holds no event and a projection in the configured
    /// places has applied some. A store that cannot be read is left to the caller's own open,
    /// which says what is wrong with it.
    static func requireNone(_ configuration: Configuration) throws {
        guard storeIsEmpty(configuration.eventStorePath) else { return }
        for (name, path) in [("readmodels", configuration.readModelsPath), ("audit", configuration.auditPath)] {
            guard let snapshot = try? ProjectionSnapshot(path: path), snapshot.checkpoint > 0 else { continue }
            let store = FileManager.default.fileExists(atPath: configuration.eventStorePath) ? "holds no event" : "is missing"
            throw CommandFailure.problem(
                "refused: \(configuration.eventStorePath) \(store), but \(path) (\(name)) has applied events up to "
                    + "position \(snapshot.checkpoint): the store was emptied, removed or replaced. Restore it from a "
                    + "backup (strata restore), or, to begin a new history on purpose, move the projection files away first")
        }
    }

    /// Whether the store at `path` holds no event: missing, empty, or opened with its head at 0.
    private static func storeIsEmpty(_ path: String) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
            return !FileManager.default.fileExists(atPath: path)
        }
        if (attributes[.size] as? NSNumber)?.intValue == 0 { return true }
        guard let store = try? SQLiteEventStore(readingAt: path), let head = try? store.head() else { return false }
        return head == 0
    }
}
