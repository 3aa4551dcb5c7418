#include "csearch.h"

#include <string.h>

typedef struct {
    unsigned char *bytes;
    sqlite3_int64 size;
} Weights;

/* Keeps the larger of pk's code and `code` in `w`, growing it as needed; pks and codes out of
   range are skipped. 0 on success, 1 when out of memory. */
static int weights_put(Weights *w, sqlite3_int64 pk, sqlite3_int64 code) {
    if (pk < 0 || pk > ((sqlite3_int64)1 << 32) || code < 1 || code > 255) return 0;
    if (pk >= w->size) {
        sqlite3_int64 n = w->size > 0 ? w->size : 4096;
        while (n <= pk) n *= 2;
        unsigned char *grown = sqlite3_realloc64(w->bytes, (sqlite3_uint64)n);
        if (grown == NULL) return 1;
        memset(grown + w->size, 0, (size_t)(n - w->size));
        w->bytes = grown;
        w->size = n;
    }
    if (w->bytes[pk] < code) w->bytes[pk] = (unsigned char)code;
    return 0;
}

static void weights_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    Weights *w = sqlite3_aggregate_context(ctx, sizeof(Weights));
    if (w == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) return;
    if (weights_put(w, sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[1]))) sqlite3_result_error_nomem(ctx);
}

static void weights_final(sqlite3_context *ctx) {
    Weights *w = sqlite3_aggregate_context(ctx, 0);
    if (w == NULL || w->bytes == NULL) {
        sqlite3_result_zeroblob(ctx, 0);
        return;
    }
    sqlite3_result_blob64(ctx, w->bytes, (sqlite3_uint64)w->size, sqlite3_free);
    w->bytes = NULL;
    w->size = 0;
}

/* Raises *best to the largest code (argv[column]) among the columns of the current row that
   phrase `phrase` is in (not every instance: xInst builds an array of them all). */
static int phrase_best(const Fts5ExtensionApi *api, Fts5Context *fts, int phrase, int argc, sqlite3_value **argv,
                       int *best) {
    Fts5PhraseIter iter;
    int column = -1;
    int rc = api->xPhraseFirstColumn(fts, phrase, &iter, &column);
    if (rc != SQLITE_OK) return rc;
    for (; column >= 0; api->xPhraseNextColumn(fts, &iter, &column)) {
        if (column < argc) {
            int code = sqlite3_value_int(argv[column]);
            if (code > *best) *best = code;
        }
    }
    return SQLITE_OK;
}

static void column_weight(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int argc,
                          sqlite3_value **argv) {
    int best = 0;
    int phrases = api->xPhraseCount(fts);
    for (int p = 0; p < phrases; p++) {
        int rc = phrase_best(api, fts, p, argc, argv, &best);
        if (rc != SQLITE_OK) {
            sqlite3_result_error_code(ctx, rc);
            return;
        }
    }
    sqlite3_result_int(ctx, best);
}

typedef struct {
    Weights weights;
    int argc;
    sqlite3_value **argv;
} PhraseWeights;

/* One row of the phrase's matches: its best column's code into the blob. */
static int phrase_row(const Fts5ExtensionApi *api, Fts5Context *fts, void *user) {
    PhraseWeights *p = user;
    int best = 0;
    int rc = phrase_best(api, fts, 0, p->argc, p->argv, &best);
    if (rc != SQLITE_OK) return rc;
    return weights_put(&p->weights, api->xRowid(fts), best) ? SQLITE_NOMEM : SQLITE_OK;
}

static void phrase_weights(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int argc,
                           sqlite3_value **argv) {
    if (api->xPhraseCount(fts) != 1) {
        sqlite3_result_error(ctx, "photod_phrase_weights: a query of one phrase only", -1);
        return;
    }
    PhraseWeights p = {{NULL, 0}, argc, argv};
    int rc = api->xQueryPhrase(fts, 0, &p, phrase_row);
    if (rc != SQLITE_OK) {
        sqlite3_free(p.weights.bytes);
        sqlite3_result_error_code(ctx, rc);
        return;
    }
    if (p.weights.bytes == NULL) {
        sqlite3_result_zeroblob(ctx, 0);
        return;
    }
    sqlite3_result_blob64(ctx, p.weights.bytes, (sqlite3_uint64)p.weights.size, sqlite3_free);
}

static void member(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    const unsigned char *bytes = sqlite3_value_blob(argv[0]);
    sqlite3_int64 size = sqlite3_value_bytes(argv[0]);
    sqlite3_int64 pk = sqlite3_value_int64(argv[1]);
    sqlite3_result_int(ctx, bytes != NULL && pk >= 0 && pk < size && bytes[pk] != 0);
}

static void byte_at(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    const unsigned char *bytes = sqlite3_value_blob(argv[0]);
    sqlite3_int64 size = sqlite3_value_bytes(argv[0]);
    sqlite3_int64 pk = sqlite3_value_int64(argv[1]);
    sqlite3_result_int(ctx, bytes != NULL && pk >= 0 && pk < size ? bytes[pk] : 0);
}

int photod_search_register(sqlite3 *db) {
    int rc = sqlite3_create_function_v2(db, "photod_weights", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, NULL,
                                        weights_step, weights_final, NULL);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_create_function_v2(db, "photod_member", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, member, NULL,
                                    NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_create_function_v2(db, "photod_byte", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, byte_at, NULL,
                                    NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    fts5_api *api = NULL;
    sqlite3_stmt *s = NULL;
    rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &s, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_pointer(s, 1, (void *)&api, "fts5_api_ptr", NULL);
    sqlite3_step(s);
    rc = sqlite3_finalize(s);
    if (rc != SQLITE_OK) return rc;
    if (api == NULL || api->iVersion < 2) return SQLITE_ERROR;
    rc = api->xCreateFunction(api, "photod_column_weight", NULL, column_weight, NULL);
    if (rc != SQLITE_OK) return rc;
    return api->xCreateFunction(api, "photod_phrase_weights", NULL, phrase_weights, NULL);
}
