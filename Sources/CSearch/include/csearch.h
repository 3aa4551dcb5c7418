#pragma once
#include <sqlite3.h>

/// Registers on `db` what photod's text search computes inside SQLite (`SearchSources`), so
/// that a word's matches are never stepped through one by one from Swift:
///
/// - `photod_weights(pk, code)`, an aggregate: a blob with a byte per pk (index = pk, 0 where
///   none), the largest code (1...255) seen for it. Rows with a NULL or negative pk, a pk above
///   2^32 or a code outside 1...255 are passed over.
/// - `photod_member(bytes, pk)`: 1 when the blob's byte at index pk is not 0, else 0.
/// - `photod_byte(bytes, pk)`: the blob's byte at index pk (0 past its end).
/// - `photod_column_weight(fts, code0, code1, ...)`, an FTS5 auxiliary function: the largest
///   code among the columns the current row's match is in (`codeN` for column N; 0 when none).
/// - `photod_phrase_weights(fts, code0, code1, ...)`, an FTS5 auxiliary function for a query of
///   one phrase, called on one row (`LIMIT 1`): every row the phrase matches, gone through inside
///   FTS5 (`xQueryPhrase`), as `photod_weights` makes them with `photod_column_weight`'s codes —
///   without a statement's step, a function call and an aggregate step for each row.
///
/// Returns SQLITE_OK or the error of the step that failed.
int photod_search_register(sqlite3 *db);
