import Foundation
import StrataCore

#if canImport(Glibc)
    import Glibc
#endif

/// The system's own files, which a command that writes a file on its own account (`rebuild
/// --output`, `report --html`) must never write over: a mistyped path costs a refusal, never
/// the store, a projection or a key.
enum SystemFiles {
    /// The files the system keeps (`Configuration.systemFiles`), the checkpoint key and its public
    /// key, and last the data directory that holds them.
    static func of(
        _ configuration: Configuration, _ arguments: ParsedArguments, _ environment: [String: String]
    ) -> [String] {
        configuration.systemFiles + [
            CheckpointKeyFile.keyPath(arguments, environment, configuration),
            CheckpointKeyFile.publicKeyPath(configuration), configuration.dataDirectory,
        ]
    }

    /// Refuses (exit 2) `output` when it, or one of the `files` written beside it, is one of the
    /// system's files or the data directory by any name: the same file through `.`, `..` or a
    /// symbolic link in its directory, a symbolic link to it (also one to a file not made yet), or
    /// a hard link. `writer` names what writes it in the message ("a rebuild"). It only looks, so
    /// a caller may ask before it opens anything.
    static func requireApart(
        _ output: String, writing files: [String], by writer: String, _ configuration: Configuration,
        _ arguments: ParsedArguments, _ environment: [String: String]
    ) throws(CommandFailure) {
        try requireApart(
            output, writing: files, by: writer, from: of(configuration, arguments, environment),
            dataDirectory: configuration.dataDirectory)
    }

    /// The same check against the files `kept` (`dataDirectory` among them, named as such): for a
    /// writer that is itself one of the system's files, the checkpoint key, kept from the others.
    static func requireApart(
        _ output: String, writing files: [String], by writer: String, from kept: [String], dataDirectory: String
    ) throws(CommandFailure) {
        let kept = kept.map { (path: $0, resolved: resolved($0), lexical: lexical($0), identity: FileIdentity($0)) }
        for file in files {
            let resolved = resolved(file)
            let lexical = lexical(file)
            let identity = FileIdentity(file)
            guard
                let match = kept.first(where: { kept in
                    if let resolved, let other = kept.resolved {
                        if other == resolved { return true }
                    } else if kept.lexical == lexical {
                        // A directory on the way is not made yet (a new data directory): its
                        // files cannot be resolved, but one spelling of them is still the same.
                        return true
                    }
                    return identity != nil && kept.identity == identity
                })
            else { continue }
            let which = file == output ? output : "\(file) (beside \(output))"
            let kind = match.path == dataDirectory ? "the data directory" : "one of the system's files"
            let what = match.path == file ? kind : "\(match.path), \(kind)"
            throw CommandFailure.environment("\(which) is \(what), which \(writer) must not replace")
        }
    }

    /// Where a write to `path` lands: its symbolic links followed (the last component's too, to a
    /// file not made yet), and the `.`, `..` and links of each directory resolved, so that two
    /// spellings of one file compare equal whether or not it exists; nil when a directory on
    /// the way does not exist.
    private static func resolved(_ path: String) -> String? {
        var current = path
        // As many links as the kernel follows in one path (SYMLOOP_MAX on Linux).
        for _ in 0..<40 {
            let name = current.split(separator: "/").last.map(String.init) ?? "/"
            let directory = PathName.directory(of: current)
            guard let parent = canonical(directory.isEmpty ? "." : directory) else { return nil }
            let here = (parent == "/" ? "" : parent) + "/" + name
            if name == "." || name == ".." || name == "/" { return canonical(here) }
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: here) else { return here }
            current = target.hasPrefix("/") ? target : parent + "/" + target
        }
        return nil
    }

    /// `path` made absolute, its `.` and `..` taken away by their names alone.
    private static func lexical(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// `realpath(3)`: nil when the path does not lead anywhere.
    private static func canonical(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// The device and inode of the file a path leads to, links followed.
    private struct FileIdentity: Equatable {
        let device: UInt64
        let inode: UInt64

        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }
}
