import StrataSQLite

#if canImport(Glibc)
    import Glibc
#endif

extension SQLiteEventStore {
    /// Copies the store at `path` into a new file at `copyPath` (mode 0600), while a writer
    /// may go on appending: the copy holds the store as one commit left it, with every
    /// event, the command journal and the signed checkpoints. Its pages are SQLite's own,
    /// unchanged but for the journal mode: the copy is one self-contained file (rollback
    /// journal), which a writer opening it turns back to WAL.
    ///
    /// The copy's structure is checked whole (`PRAGMA quick_check`, whatever its size): a
    /// damaged page is copied as it is, and a finding names `path`. Returns the copy, opened
    /// read-only, for the chain to be verified.
    public static func copy(from path: String, into copyPath: String) throws(StoreError) -> SQLiteEventStore {
        let source = try open(path, mode: .readOnly)
        defer { source.close() }
        try checkIdentity(source, path: path, allowEmpty: false)
        // Made here with its mode: SQLite gives a new file the umask's, and the copy holds
        // what the store holds.
        let fd = Glibc.open(copyPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError(.io, "cannot create \(copyPath): \(String(cString: strerror(errno)))")
        }
        close(fd)
        let copy = try open(copyPath, mode: .readWrite)
        defer { copy.close() }
        do throws(SQLiteError) {
            try source.copy(into: copy)
        } catch where error.isCorrupt {
            throw StoreError.damaged(path, "\(error.message) (SQLite \(error.code))")
        } catch {
            throw StoreError(error, while: "copying \(path) into \(copyPath)")
        }
        let mode: String?
        do throws(SQLiteError) {
            mode = try copy.scalarText("PRAGMA journal_mode=DELETE")
        } catch {
            throw StoreError(error, while: "taking \(copyPath) out of WAL mode")
        }
        guard mode?.lowercased() == "delete" else { throw StoreError(.io, "cannot take \(copyPath) out of WAL mode") }
        _ = try checkStructure(copy, path: copyPath, reportedAs: path, limit: .max)
        copy.close()
        return try SQLiteEventStore(readingAt: copyPath)
    }
}
