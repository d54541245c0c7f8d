import CSQLite
import StrataSQLite
import Testing

/// Process-wide SQLite settings that `SQLiteConnection` makes before the first connection.
@Suite struct SQLiteSettingsTests {
    /// With memory statistics off, SQLite counts nothing (and takes no global mutex to count
    /// it) however much it allocates.
    @Test func memoryStatisticsAreOff() throws {
        let connection = try SQLiteConnection(path: ":memory:", mode: .readWrite)
        try connection.execute("CREATE TABLE t (x); INSERT INTO t VALUES (randomblob(1000000))")
        #expect(sqlite3_memory_used() == 0)
        #expect(sqlite3_memory_highwater(0) == 0)
    }
}
