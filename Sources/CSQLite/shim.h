#pragma once
// sqlite3.h includes only <stdarg.h>, so it cannot capture Glibc declarations.
#include <sqlite3.h>

/// `sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0)` (variadic, so not callable from Swift): no
/// global memory statistics, so no global mutex taken on every allocation. Process-wide; call
/// before the first connection is opened.
static inline int photo_sqlite_disable_memstatus(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }
