#include "CTIFF.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

/* Every libtiff error and warning of one file goes to that file's handle (libtiff 4.5's
   per-file handlers), never to stderr or to another thread's file. The first error is kept:
   later ones are usually its consequences. */
struct photo_tiff {
    TIFF *tif;
    const uint8_t *data;
    toff_t size, pos;
    TIFFRGBAImage img;
    int img_begun;
    uint32_t *raster; /* one band, width * band_rows ABGR words */
    photo_tiff_info info;
    char message[240];
};

static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif;
    struct photo_tiff *t = user;
    if (t && t->message[0] == 0) {
        char text[200];
        vsnprintf(text, sizeof text, fmt, ap);
        snprintf(t->message, sizeof t->message, "%s%s%s", module ? module : "", module ? ": " : "", text);
    }
    return 1; /* handled: nothing printed */
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif; (void)user; (void)module; (void)fmt; (void)ap;
    return 1; /* unknown tags and the like: the image is still decoded */
}

static tmsize_t on_read(thandle_t h, void *buf, tmsize_t n) {
    struct photo_tiff *t = h;
    if (n <= 0 || t->pos >= t->size) return 0;
    toff_t left = t->size - t->pos;
    size_t take = (uint64_t)n < left ? (size_t)n : (size_t)left;
    memcpy(buf, t->data + t->pos, take);
    t->pos += take;
    return (tmsize_t)take;
}

static tmsize_t on_write(thandle_t h, void *buf, tmsize_t n) { (void)h; (void)buf; (void)n; return -1; }

static toff_t on_seek(thandle_t h, toff_t off, int whence) {
    struct photo_tiff *t = h;
    toff_t base;
    switch (whence) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = t->pos; break;
    case SEEK_END: base = t->size; break;
    default: return (toff_t)-1;
    }
    /* toff_t is unsigned: a "negative" offset wraps; refuse anything past the end. */
    if (off > UINT64_MAX - base) return (toff_t)-1;
    toff_t to = base + off;
    if (to > t->size) return (toff_t)-1;
    t->pos = to;
    return to;
}

static int on_close(thandle_t h) { (void)h; return 0; }
static toff_t on_size(thandle_t h) { return ((struct photo_tiff *)h)->size; }

static void fail(char *error, size_t error_size, const char *what, const char *message) {
    if (error && error_size) snprintf(error, error_size, "%s%s%s", what, message && message[0] ? ": " : "", message ? message : "");
}

int photo_tiff_open(const uint8_t *data, size_t size, uint64_t max_alloc, photo_tiff **out, photo_tiff_info *info,
                    char *error, size_t error_size) {
    *out = NULL;
    struct photo_tiff *t = calloc(1, sizeof *t);
    if (!t) { fail(error, error_size, "out of memory", NULL); return PHOTO_TIFF_CORRUPT; }
    t->data = data;
    t->size = size;
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts) { free(t); fail(error, error_size, "out of memory", NULL); return PHOTO_TIFF_CORRUPT; }
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, t);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, t);
    TIFFOpenOptionsSetMaxSingleMemAlloc(opts, (tmsize_t)(max_alloc > (uint64_t)INT64_MAX ? INT64_MAX : max_alloc));
    /* "rm": read only, no memory mapping (the bytes are in memory already). */
    t->tif = TIFFClientOpenExt("photo", "rm", t, on_read, on_write, on_seek, on_close, on_size, NULL, NULL, opts);
    TIFFOpenOptionsFree(opts);
    if (!t->tif) {
        fail(error, error_size, "cannot read the TIFF header", t->message);
        free(t);
        return PHOTO_TIFF_CORRUPT;
    }
    uint32_t w = 0, h = 0;
    if (!TIFFGetField(t->tif, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(t->tif, TIFFTAG_IMAGELENGTH, &h) || w == 0 || h == 0) {
        fail(error, error_size, "the first page has no size", t->message);
        photo_tiff_close(t);
        return PHOTO_TIFF_CORRUPT;
    }
    char emsg[1024] = {0};
    if (!TIFFRGBAImageOK(t->tif, emsg)) {
        fail(error, error_size, "libtiff cannot show this page", emsg);
        photo_tiff_close(t);
        return PHOTO_TIFF_UNDECODABLE;
    }
    if (!TIFFRGBAImageBegin(&t->img, t->tif, 1, emsg)) {
        fail(error, error_size, "libtiff cannot show this page", emsg[0] ? emsg : t->message);
        photo_tiff_close(t);
        return PHOTO_TIFF_CORRUPT;
    }
    t->img_begun = 1;
    /* The rows as stored: the orientation is applied by the caller, as for every format. */
    t->img.req_orientation = t->img.orientation;
    uint32_t band = 0;
    if (TIFFIsTiled(t->tif)) {
        TIFFGetField(t->tif, TIFFTAG_TILELENGTH, &band);
    } else {
        TIFFGetFieldDefaulted(t->tif, TIFFTAG_ROWSPERSTRIP, &band);
    }
    if (band == 0 || band > h) band = h;
    t->info.width = w;
    t->info.height = h;
    t->info.channels = t->img.alpha ? 4 : 3;
    t->info.band_rows = band;
    *info = t->info;
    *out = t;
    return PHOTO_TIFF_OK;
}

int photo_tiff_read_band(photo_tiff *t, uint32_t row, uint32_t rows, uint8_t *out, char *error, size_t error_size) {
    if (rows == 0 || rows > t->info.band_rows || row >= t->info.height || rows > t->info.height - row) {
        fail(error, error_size, "invalid band", NULL);
        return PHOTO_TIFF_CORRUPT;
    }
    size_t w = t->info.width;
    if (!t->raster) {
        /* width * band_rows <= width * height, which the caller checked against its pixel limit. */
        t->raster = malloc(w * t->info.band_rows * sizeof(uint32_t));
        if (!t->raster) { fail(error, error_size, "out of memory for a band of rows", NULL); return PHOTO_TIFF_CORRUPT; }
    }
    t->img.row_offset = (int)row;
    t->img.col_offset = 0;
    t->message[0] = 0;
    if (!TIFFRGBAImageGet(&t->img, t->raster, t->info.width, rows)) {
        fail(error, error_size, "the image data does not decode", t->message[0] ? t->message : "libtiff failed");
        return PHOTO_TIFF_CORRUPT;
    }
    /* ABGR words (TIFFGetR & co.) to packed RGB or RGBA bytes. */
    size_t n = w * rows;
    if (t->info.channels == 4) {
        for (size_t i = 0; i < n; i++) {
            uint32_t p = t->raster[i];
            out[4 * i] = (uint8_t)TIFFGetR(p);
            out[4 * i + 1] = (uint8_t)TIFFGetG(p);
            out[4 * i + 2] = (uint8_t)TIFFGetB(p);
            uint32_t a = TIFFGetA(p);
            out[4 * i + 3] = (uint8_t)a;
            /* The RGBA interface delivers associated (premultiplied) alpha, unassociated
               alpha included; photod's pixels are straight. */
            if (a != 0 && a != 255) {
                for (int k = 0; k < 3; k++) {
                    uint32_t c = (out[4 * i + k] * 255u + a / 2) / a;
                    out[4 * i + k] = (uint8_t)(c > 255 ? 255 : c);
                }
            }
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            uint32_t p = t->raster[i];
            out[3 * i] = (uint8_t)TIFFGetR(p);
            out[3 * i + 1] = (uint8_t)TIFFGetG(p);
            out[3 * i + 2] = (uint8_t)TIFFGetB(p);
        }
    }
    return PHOTO_TIFF_OK;
}

void photo_tiff_close(photo_tiff *t) {
    if (!t) return;
    if (t->img_begun) TIFFRGBAImageEnd(&t->img);
    if (t->tif) TIFFClose(t->tif);
    free(t->raster);
    free(t);
}
