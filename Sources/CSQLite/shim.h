// Binds sqlite3.h (Debian: libsqlite3-dev) for Swift.
#include <sqlite3.h>
