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
        guard let store = emptiness(of: configuration.eventStorePath) else { return }
        for (name, path) in [("readmodels", configuration.readModelsPath), ("audit", configuration.auditPath)] {
            guard let snapshot = try? ProjectionSnapshot(path: path), snapshot.checkpoint > 0 else { continue }
            throw CommandFailure.problem(
                "refused: \(configuration.eventStorePath) \(store), but \(path) (\(name)) has applied events up to "
                    + "position \(snapshot.checkpoint): the store was emptied, removed or replaced. Restore it from a "
                    + "backup (strata restore), or, to begin a new history on purpose, move the projection files "
                    + "away first")
        }
    }

    /// How the store at `path` holds no event ("is missing", "holds no event": empty, or opened
    /// with its head at 0); nil when it holds some or cannot be told.
    static func emptiness(of path: String) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
            return FileManager.default.fileExists(atPath: path) ? nil : "is missing"
        }
        if (attributes[.size] as? NSNumber)?.intValue == 0 { return "holds no event" }
        guard let store = try? SQLiteEventStore(readingAt: path), let head = try? store.head() else { return nil }
        return head == 0 ? "holds no event" : nil
    }
}
