import Events
import StrataSQLite

extension SubjectKeyStore {
    /// Copies the key store at `path` into a new file at `copyPath` (mode 0600), while the
    /// service may go on writing it, leaving out the keys of `erased`: the subjects whose
    /// `PersonalDataErased` the copied event store holds, whose keys the service may not have
    /// destroyed yet (it does so just after the erasure commits). The copy is one
    /// self-contained file (rollback journal), which a writer opening it turns back to WAL.
    /// Returns how many keys the copy holds, and how many of `erased` it left out.
    ///
    /// The copy's structure is checked whole (`PRAGMA quick_check`), as the event store's is:
    /// a damaged page is copied as it is, and one of an index no statement here reads would
    /// otherwise go into a backup, and through a restore into the data directory, unnoticed.
    /// A finding names `path`, with `isDamage` set.
    ///
    /// The keys are deleted with no journal at all: a journal would hold a copy of each deleted
    /// key, and a copy cut short is thrown away whole anyway.
    public static func copy(
        from path: String, into copyPath: String, without erased: [DataSubject]
    ) throws(SubjectKeyStoreError) -> (kept: Int, leftOut: Int) {
        do {
            let source = try SQLiteConnection(path: path, mode: .readOnly)
            defer { source.close() }
            try checkIdentity(source, path: path, allowEmpty: false)
            let copy = try source.copy(toNewFile: copyPath)
            defer { copy.close() }
            try checkStructure(of: copy, reportedAs: path)
            _ = try copy.scalarText("PRAGMA journal_mode=OFF")
            try copy.execute("PRAGMA secure_delete=ON")
            let delete = try copy.statement("DELETE FROM subject_keys WHERE subject = ?")
            var leftOut = 0
            for subject in erased {
                try delete.run([.text(subject.description)])
                leftOut += copy.changes
            }
            return (Int(try copy.scalarInteger("SELECT count(*) FROM subject_keys") ?? 0), leftOut)
        } catch let error as SubjectKeyStoreError {
            throw error
        } catch let error as SQLiteError where error.isCorrupt {
            throw damaged(path, "\(error.message) (SQLite \(error.code))")
        } catch {
            throw SubjectKeyStoreError("cannot copy the key store \(path): \(error)")
        }
    }

    /// `PRAGMA quick_check` over `copy`: every b-tree page, the free list, record formats.
    private static func checkStructure(of copy: SQLiteConnection, reportedAs path: String) throws {
        var findings: [String] = []
        let check = try copy.statement("PRAGMA quick_check(3)")
        defer { check.reset() }
        while try check.step() { findings.append(check.text(0)) }
        guard findings == ["ok"] else {
            let finding = findings.joined(separator: "; ").split(whereSeparator: \.isNewline).joined(separator: " ")
            throw damaged(path, "PRAGMA quick_check: \(finding)")
        }
    }

    private static func damaged(_ path: String, _ finding: String) -> SubjectKeyStoreError {
        SubjectKeyStoreError("\(path) is damaged: \(finding); restore it from a backup", isDamage: true)
    }
}
