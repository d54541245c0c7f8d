import Foundation

/// A key file a config file's relative `keys` named before such paths were taken from the
/// config file's own directory (`WorkingDirectoryHistory` is the same for the data directory).
///
/// Versions before that read `{"keys": "keys.json"}` in `/etc/strata/strata.json` from the
/// working directory. After an upgrade the same file names `/etc/strata/keys.json`, where there
/// is none: `serve` said `no key file at /etc/strata/keys.json; create a key with strata keys
/// new …`, and an operator who did so began a key file without any of the clients' keys, while
/// the one they use stayed where it was. The commands that read or make the key file refuse
/// that (exit 2), naming both.
enum WorkingDirectoryKeyFile {
    /// Refuses (exit 2) when the key file came from a relative path in the config file, nothing
    /// is there, and the same path read from the working directory is a file.
    static func requireNone(_ configuration: Configuration) throws {
        guard let written = configuration.keysFileAsWritten, let file = configuration.configFile,
            !FileManager.default.fileExists(atPath: configuration.keysFile),
            isFile(written), !Configuration.sameDirectory(written, configuration.keysFile)
        else { return }
        throw CommandFailure.environment(
            "refused: config file \(file) sets keys to '\(written)', which is \(configuration.keysFile) (a "
                + "relative path in a config file is taken from the file's own directory), where there is no key "
                + "file; but '\(written)' from the working directory, where versions before this one took it, is "
                + "one. Write the key file you mean in \(file) as an absolute path (or give --keys), rather than "
                + "begin another without the keys that one holds")
    }

    private static func isFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }
}
