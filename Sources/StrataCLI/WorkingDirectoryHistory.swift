import EventStore
import Foundation

/// A history a config file's relative data directory named before such paths were taken from the
/// config file's own directory.
///
/// Versions before that read `{"data": "data"}` in `/etc/strata/strata.json` from the working
/// directory. After an upgrade the same file names `/etc/strata/data`, where there is no store:
/// `serve` would make one there and begin a new history at position 1, running without a word
/// beside the one it had recorded, and a client's retry of a journaled command would be decided
/// again in it. `serve` and `admin bootstrap` refuse that (exit 2), naming both directories.
enum WorkingDirectoryHistory {
    /// Refuses (exit 2) when the data directory came from a relative path in the config file,
    /// holds no event there, and the same path read from the working directory holds a store
    /// with events. Called before the data directory is made, so a refusal leaves nothing behind.
    static func requireNone(_ configuration: Configuration) throws {
        guard let written = configuration.dataDirectoryAsWritten, let file = configuration.configFile,
            !Configuration.sameDirectory(written, configuration.dataDirectory),
            EarlierHistory.emptiness(of: configuration.eventStorePath) != nil,
            let head = head(of: written + "/events.db"), head > 0
        else { return }
        throw CommandFailure.environment(
            "refused: config file \(file) sets data to '\(written)', which is \(configuration.dataDirectory) (a "
                + "relative path in a config file is taken from the file's own directory), where no event is "
                + "recorded; but '\(written)' from the working directory, where versions before this one took it, "
                + "holds a store with events up to position \(head). Write the data directory you mean in \(file) "
                + "as an absolute path (or give --data), so that no new history begins beside that one")
    }

    /// The head of the store at `path`, nil when there is none or it cannot be read.
    private static func head(of path: String) -> Int64? {
        guard FileManager.default.fileExists(atPath: path),
            let store = try? SQLiteEventStore(readingAt: path)
        else { return nil }
        return try? store.head()
    }
}
