import Foundation
import StrataSQLite

/// What the writer's open found of the file's structure.
public struct StructureCheck: Sendable, Equatable {
    /// The size of the file and its WAL when the writer opened them.
    public let bytes: Int64
    /// False when the file was over `SQLiteEventStore.structureCheckLimit` and not checked.
    public let checked: Bool
    /// How long `PRAGMA quick_check` took.
    public let seconds: Double
}

extension SQLiteEventStore {
    /// The largest store (file and WAL) whose structure the writer checks when it opens it.
    /// `PRAGMA quick_check` reads every page: on a million events (1 GB) it took 0.9 to 1.6 s
    /// with the file in the page cache and 8 to 13 s reading it from a virtual machine's disk,
    /// while the rest of a start takes well under a second. Up to 2 GiB a start after a crash
    /// (the file still cached) stays within a few seconds; past it the check is skipped (and
    /// logged), and left to an offline `PRAGMA quick_check`.
    public static let structureCheckLimit: Int64 = 2 << 30

    /// `PRAGMA quick_check` (b-tree pages, cell order and bounds, free list, record formats,
    /// NOT NULL; not the index contents `integrity_check` also compares): a page overwritten or
    /// cut off anywhere in the file is found here, before the writer appends to it, rather than
    /// when a reader or a later write happens to touch it.
    ///
    /// A finding names `reportedAs` (default `path`): a copy's damage is its original's.
    static func checkStructure(
        _ c: SQLiteConnection, path: String, reportedAs name: String? = nil, limit: Int64 = structureCheckLimit
    ) throws(StoreError) -> StructureCheck {
        let name = name ?? path
        let bytes = fileSize(path) + fileSize(path + "-wal")
        guard bytes <= limit else { return StructureCheck(bytes: bytes, checked: false, seconds: 0) }
        let started = ContinuousClock.now
        var findings: [String] = []
        do throws(SQLiteError) {
            let s = try c.statement("PRAGMA quick_check(3)")
            defer { s.reset() }
            while try s.step() { findings.append(s.text(0)) }
        } catch  where error.isCorrupt {
            throw StoreError.damaged(name, "PRAGMA quick_check: \(error.message) (SQLite \(error.code))")
        } catch {
            throw StoreError(error, while: "checking the structure of \(name)")
        }
        guard findings == ["ok"] else {
            let finding = findings.joined(separator: "; ").split(whereSeparator: \.isNewline).joined(separator: " ")
            throw StoreError.damaged(name, "PRAGMA quick_check: \(finding)")
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return StructureCheck(bytes: bytes, checked: true, seconds: seconds)
    }

    /// Caps the file at `bytes`, rounded down to whole pages (`PRAGMA max_page_count`, which
    /// never goes below the pages already used). The pragma takes no bound parameter; the
    /// value is a number, never text from outside.
    static func limitSize(_ c: SQLiteConnection, to bytes: Int64, path: String) throws(StoreError) {
        do throws(SQLiteError) {
            let pageSize = try c.scalarInteger("PRAGMA page_size") ?? 4096
            _ = try c.scalarInteger("PRAGMA max_page_count=\(max(1, bytes / pageSize))")
        } catch {
            throw StoreError(error, while: "limiting the size of \(path)")
        }
    }

    private static func fileSize(_ path: String) -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }
}
