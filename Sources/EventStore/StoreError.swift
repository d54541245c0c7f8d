import StrataSQLite

/// Why the store could not do what was asked. Whenever it is thrown from `append`,
/// nothing of that call was written.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The caller passed something the store refuses (a bad id, type, digest …).
        case invalidArgument = "INVALID_ARGUMENT"
        /// Another process holds the store's writer lock.
        case locked = "LOCKED"
        /// The file is not a Strata event store, or is damaged.
        case corrupt = "CORRUPT"
        /// The file was written by a newer Strata.
        case unsupportedVersion = "UNSUPPORTED_VERSION"
        /// The disk is full; nothing was written.
        case full = "FULL"
        /// Any other I/O or SQLite failure.
        case io = "IO"
        /// The store was opened read-only and asked to write.
        case readOnly = "READ_ONLY"
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    init(_ error: SQLiteError, while doing: String) {
        let kind: Kind = error.isFull ? .full : error.isCorrupt ? .corrupt : .io
        self.init(kind, "\(doing): \(error.message) (SQLite \(error.code))")
    }

    /// A damaged file, named with what SQLite found and the way out.
    static func damaged(_ path: String, _ finding: String) -> StoreError {
        StoreError(.corrupt, "\(path) is damaged: \(finding); restore it from a backup")
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}
