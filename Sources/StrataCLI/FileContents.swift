import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small file read whole, or why it cannot be. FileManager's `contents(atPath:)` answers nil
/// for every failure alike, so a message built on it cannot say whether the file is missing, a
/// directory or forbidden, which is what the user needs to fix it.
enum FileContents {
    /// The bytes of the file at `path`, or the system's reason it cannot be read
    /// ("No such file or directory", "Is a directory", "Permission denied").
    static func read(_ path: String) -> Result<[UInt8], FileReadError> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(FileReadError(errno)) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes += chunk[..<count]
            } else if count == 0 {
                return .success(bytes)
            } else if errno != EINTR {
                return .failure(FileReadError(errno))
            }
        }
    }

    /// Whether anything is at `path`, a symbolic link that leads nowhere included: such a link
    /// named as a file to read is a mistake to report, not a file to pass over.
    static func isPresent(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 || (errno != ENOENT && errno != ENOTDIR)
    }
}

/// Why a file could not be read: the errno, described as the system describes it.
struct FileReadError: Error, CustomStringConvertible {
    let code: Int32

    init(_ code: Int32) { self.code = code }

    var description: String { String(cString: strerror(code)) }
}
