import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Directories a command makes for its files. Foundation's error for a path that runs through a
/// regular file reads "NSCocoaErrorDomain error 512", which names neither the path nor the cause.
enum Directories {
    /// Makes `path` and each directory above it that is missing, with `mode` (less the umask),
    /// and returns those it made, outermost first (exit 2 when it cannot, naming `what`, the path
    /// and the part that stands in the way).
    @discardableResult
    static func create(_ path: String, _ what: String, mode: mode_t = 0o777) throws(CommandFailure) -> [String] {
        func failure(_ cause: String) -> CommandFailure {
            CommandFailure.environment("cannot create \(what) \(path): \(cause)")
        }
        var made: [String] = []
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            var info = stat()
            if stat(prefix, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    let kind = info.st_mode & S_IFMT == S_IFREG ? "a file, not a directory" : "not a directory"
                    throw failure("\(prefix) is \(kind)")
                }
                continue
            }
            guard errno == ENOENT else { throw failure("\(prefix): \(String(cString: strerror(errno)))") }
            if mkdir(prefix, mode) == 0 {
                made.append(prefix)
            } else if errno != EEXIST {
                throw failure("cannot make \(prefix): \(String(cString: strerror(errno)))")
            }
        }
        return made
    }
}
