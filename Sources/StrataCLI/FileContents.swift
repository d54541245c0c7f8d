import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small file read whole, or why it cannot be. FileManager's `contents(atPath:)` answers nil
/// for every failure alike, so a message built on it cannot say whether the file is missing, a
/// directory or forbidden, which is what the user needs to fix it.
enum FileContents {
    /// What a file read whole may hold: far more than any config or key file, and a bound on
    /// what a path named by mistake costs (`--config /dev/zero` read until memory ran out).
    static let maximumBytes = 16 << 20

    /// The bytes of the file at `path`, or the system's reason it cannot be read
    /// ("No such file or directory", "Is a directory", "Permission denied"), or that it holds
    /// more than `limit` bytes.
    static func read(_ path: String, limit: Int = maximumBytes) -> Result<[UInt8], FileReadError> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(FileReadError(errno)) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes += chunk[..<count]
                if bytes.count > limit { return .failure(.tooLarge(limit)) }
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
    /// Said instead of the system's description.
    private let detail: String?

    init(_ code: Int32) {
        self.code = code
        detail = nil
    }

    private init(_ code: Int32, detail: String) {
        self.code = code
        self.detail = detail
    }

    /// A file longer than `limit` bytes: EFBIG, said with the limit.
    static func tooLarge(_ limit: Int) -> FileReadError {
        FileReadError(EFBIG, detail: "it holds more than \(limit >> 20) MiB, more than such a file ever does")
    }

    var description: String { detail ?? String(cString: strerror(code)) }
}
