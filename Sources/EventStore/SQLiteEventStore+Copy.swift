import StrataSQLite

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
        let copy: SQLiteConnection
        do throws(SQLiteError) {
            copy = try source.copy(toNewFile: copyPath)
        } catch where error.isCorrupt {
            throw StoreError.damaged(path, "\(error.message) (SQLite \(error.code))")
        } catch {
            throw StoreError(error, while: "copying \(path) into \(copyPath)")
        }
        defer { copy.close() }
        _ = try checkStructure(copy, path: copyPath, reportedAs: path, limit: .max)
        copy.close()
        return try SQLiteEventStore(readingAt: copyPath)
    }
}
