import Foundation

/// A file as the kernel knows it, its device and inode: what tells whether a path still names
/// the file a process opened. SQLite writes on into the file it has open, whatever its path
/// names now, so a writer whose file was removed or replaced must find out from the path.
public struct FileIdentity: Sendable, Equatable {
    private let device: UInt64
    private let inode: UInt64

    /// The file at `path`; nil when there is none (or it cannot be looked at).
    public init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    /// The file `descriptor` is open on; nil when it cannot be looked at.
    public init?(descriptor: Int32) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    /// What became of this file at `path`.
    public enum Change: Sendable, Equatable {
        /// No file at the path (removed, or moved away).
        case removed
        /// Another file at the path.
        case replaced
    }

    /// What became of this file at `path`; nil while the path names it, or when that cannot be
    /// told (a failure other than the file or a directory above it missing).
    public func change(at path: String) -> Change? {
        guard let now = FileIdentity(path: path) else {
            return errno == ENOENT || errno == ENOTDIR ? .removed : nil
        }
        return now == self ? nil : .replaced
    }
}
