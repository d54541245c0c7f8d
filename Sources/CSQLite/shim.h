// Binds sqlite3.h (Debian: libsqlite3-dev) for Swift.
#include <sqlite3.h>

// sqlite3_config is variadic, which Swift cannot call: one wrapper per setting Strata makes.
// Memory statistics are off: kept on, every allocation SQLite makes takes a global mutex
// to count it, a few percent of a projector's work, and nothing here reads them.
static inline int strata_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
