#include "csearch.h"

#include <string.h>

typedef struct {
    unsigned char *bytes;
    sqlite3_int64 size;
} Weights;

static int weights_reserve(Weights *w, sqlite3_int64 pk);

static void weights_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    Weights *w = sqlite3_aggregate_context(ctx, sizeof(Weights));
    if (w == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) return;
    sqlite3_int64 pk = sqlite3_value_int64(argv[0]);
    sqlite3_int64 code = sqlite3_value_int64(argv[1]);
    if (pk < 0 || pk > ((sqlite3_int64)1 << 32) || code < 1 || code > 255) return;
    if (weights_reserve(w, pk)) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (w->bytes[pk] < code) w->bytes[pk] = (unsigned char)code;
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

static void column_weight(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int argc,
                          sqlite3_value **argv) {
    /* The columns each phrase is in (not every instance: xInst builds an array of them all). */
    int best = 0;
    int phrases = api->xPhraseCount(fts);
    for (int p = 0; p < phrases; p++) {
        Fts5PhraseIter iter;
        int column = -1;
        int rc = api->xPhraseFirstColumn(fts, p, &iter, &column);
        if (rc != SQLITE_OK) {
            sqlite3_result_error_code(ctx, rc);
            return;
        }
        for (; column >= 0; api->xPhraseNextColumn(fts, &iter, &column)) {
            if (column < argc) {
                int code = sqlite3_value_int(argv[column]);
                if (code > best) best = code;
            }
        }
    }
    sqlite3_result_int(ctx, best);
}

/* Grows `w` to hold index `pk`: 0 on success. */
static int weights_reserve(Weights *w, sqlite3_int64 pk) {
    if (pk < w->size) return 0;
    sqlite3_int64 n = w->size > 0 ? w->size : 4096;
    while (n <= pk) n *= 2;
    unsigned char *grown = sqlite3_realloc64(w->bytes, (sqlite3_uint64)n);
    if (grown == NULL) return 1;
    memset(grown + w->size, 0, (size_t)(n - w->size));
    w->bytes = grown;
    w->size = n;
    return 0;
}

typedef struct {
    Weights weights;
    int argc;
    sqlite3_value **argv;
} PhraseWeights;

/* One row of the phrase's matches: its best column's code into the blob. */
static int phrase_row(const Fts5ExtensionApi *api, Fts5Context *fts, void *user) {
    PhraseWeights *p = user;
    sqlite3_int64 pk = api->xRowid(fts);
    if (pk < 0 || pk > ((sqlite3_int64)1 << 32)) return SQLITE_OK;
    int best = 0;
    Fts5PhraseIter iter;
    int column = -1;
    int rc = api->xPhraseFirstColumn(fts, 0, &iter, &column);
    if (rc != SQLITE_OK) return rc;
    for (; column >= 0; api->xPhraseNextColumn(fts, &iter, &column)) {
        if (column < p->argc) {
            int code = sqlite3_value_int(p->argv[column]);
            if (code > best) best = code;
        }
    }
    if (best < 1 || best > 255) return SQLITE_OK;
    if (weights_reserve(&p->weights, pk)) return SQLITE_NOMEM;
    if (p->weights.bytes[pk] < best) p->weights.bytes[pk] = (unsigned char)best;
    return SQLITE_OK;
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
