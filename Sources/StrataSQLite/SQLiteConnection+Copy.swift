import CSQLite

#if canImport(Glibc)
    import Glibc
#endif

extension SQLiteConnection {
    /// Copies this connection's database into a new file at `copyPath`, made with mode 0600
    /// (SQLite would give it the umask's, and it holds what the database holds), and returns
    /// the copy's connection. The copy is one self-contained file: in rollback-journal mode,
    /// with no `-wal` beside it; a writer that wants WAL turns it back.
    public func copy(toNewFile copyPath: String) throws(SQLiteError) -> SQLiteConnection {
        let fd = Glibc.open(copyPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw SQLiteError(code: SQLITE_CANTOPEN, message: "cannot create \(copyPath): \(reason)")
        }
        Glibc.close(fd)
        let copy = try SQLiteConnection(path: copyPath, mode: .readWrite)
        try self.copy(into: copy)
        guard try copy.scalarText("PRAGMA journal_mode=DELETE")?.lowercased() == "delete" else {
            throw SQLiteError(code: SQLITE_ERROR, message: "cannot take \(copyPath) out of WAL mode")
        }
        return copy
    }

    /// Copies this connection's database, page for page, into `destination`'s (SQLite's online
    /// backup), replacing what it held. The pages are read in one read transaction: the copy
    /// is the database as one commit left it, while other connections go on writing (in WAL
    /// mode a reader holds no writer back).
    ///
    /// All pages go in one step. Copied a few at a time, a commit by another connection in
    /// between makes SQLite start over, and a store that is written all the time would never
    /// be copied.
    public func copy(into destination: SQLiteConnection) throws(SQLiteError) {
        guard let backup = sqlite3_backup_init(destination.rawHandle, "main", rawHandle, "main") else {
            throw destination.error(sqlite3_errcode(destination.rawHandle))
        }
        var rc = sqlite3_backup_step(backup, -1)
        // BUSY or LOCKED: a lock held for a moment (the source's WAL index being rebuilt);
        // as long as a statement's busy timeout, then the failure it is.
        var waited: Int32 = 0
        while rc == SQLITE_BUSY || rc == SQLITE_LOCKED, waited < 5000 {
            usleep(10_000)
            waited += 10
            rc = sqlite3_backup_step(backup, -1)
        }
        // finish reports the step's failure on the destination too; the step's own code is the
        // more telling one (a damaged source page is SQLITE_CORRUPT here).
        let finished = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE else {
            throw SQLiteError(code: rc, message: String(cString: sqlite3_errstr(rc)) + " (copying \(path))")
        }
        guard finished == SQLITE_OK else { throw destination.error(finished) }
    }
}
