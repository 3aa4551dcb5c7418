#pragma once
// sqlite3.h includes only <stdarg.h>, so it cannot capture Glibc declarations.
#include <sqlite3.h>
