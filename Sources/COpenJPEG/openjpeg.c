#define _GNU_SOURCE
#include "COpenJPEG.h"

#include <openjpeg-2.5/openjpeg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct photo_jp2 {
    const uint8_t *data;
    size_t size, pos;
    int64_t cpu_deadline_ns;
    int timed_out;
    opj_codec_t *codec;
    opj_stream_t *stream;
    opj_image_t *image;
    uint8_t *pixels;
    char message[200];
};

static int64_t cpu_now(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static OPJ_SIZE_T on_read(void *buffer, OPJ_SIZE_T n, void *user) {
    struct photo_jp2 *j = user;
    /* The codestream is read piece by piece as tiles are decoded: the deadline is asked here. */
    if (cpu_now() > j->cpu_deadline_ns) { j->timed_out = 1; return (OPJ_SIZE_T)-1; }
    if (j->pos >= j->size) return (OPJ_SIZE_T)-1;
    size_t take = n < j->size - j->pos ? n : j->size - j->pos;
    memcpy(buffer, j->data + j->pos, take);
    j->pos += take;
    return take;
}

static OPJ_OFF_T on_skip(OPJ_OFF_T n, void *user) {
    struct photo_jp2 *j = user;
    if (n < 0) {
        if ((uint64_t)-n > j->pos) return -1;
        j->pos -= (size_t)-n;
        return n;
    }
    if ((uint64_t)n > j->size - j->pos) { j->pos = j->size; return -1; }
    j->pos += (size_t)n;
    return n;
}

static OPJ_BOOL on_seek(OPJ_OFF_T to, void *user) {
    struct photo_jp2 *j = user;
    if (to < 0 || (uint64_t)to > j->size) return OPJ_FALSE;
    j->pos = (size_t)to;
    return OPJ_TRUE;
}

static void on_error(const char *msg, void *user) {
    struct photo_jp2 *j = user;
    if (j && !j->message[0] && msg) {
        snprintf(j->message, sizeof j->message, "%s", msg);
        size_t n = strlen(j->message);
        if (n && j->message[n - 1] == '\n') j->message[n - 1] = 0;
    }
}

static void on_quiet(const char *msg, void *user) { (void)msg; (void)user; }

static int fail(struct photo_jp2 *j, int status, const char *what, char *error, size_t error_size) {
    if (j->timed_out) {
        snprintf(error, error_size, "%s: stopped at the CPU limit", what);
        return PHOTO_JP2_TIMEOUT;
    }
    snprintf(error, error_size, "%s%s%s", what, j->message[0] ? ": " : "", j->message);
    return status;
}

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* OpenJPEG allocates its per-tile state for every tile the SIZ marker names while it reads the
   header (~5.7 KB a tile, and a component's state per tile): a header of a few bytes can ask for
   hundreds of MB. The codestream's SIZ (after SOC, at the start of a J2K file or of a JP2's
   codestream box) is read first, and more tiles than any photo needs are refused. */
static int too_many_tiles(const uint8_t *data, size_t size, char *error, size_t error_size) {
    static const uint8_t soc_siz[4] = {0xFF, 0x4F, 0xFF, 0x51};
    const uint8_t *p = memmem(data, size, soc_siz, 4);
    if (!p || (size_t)(data + size - p) < 4 + 2 + 2 + 32 + 2) return 0;
    const uint8_t *siz = p + 4 + 2 + 2; /* past SOC, SIZ, Lsiz and Rsiz */
    uint32_t xsiz = be32(siz), ysiz = be32(siz + 4), xtsiz = be32(siz + 16), ytsiz = be32(siz + 20);
    uint32_t xtosiz = be32(siz + 24), ytosiz = be32(siz + 28);
    uint32_t csiz = (uint32_t)siz[32] << 8 | siz[33];
    if (xtsiz == 0 || ytsiz == 0 || xtosiz >= xsiz || ytosiz >= ysiz) return 0; /* OpenJPEG refuses these itself */
    uint64_t tiles = (uint64_t)((xsiz - xtosiz + (uint64_t)xtsiz - 1) / xtsiz) * ((ysiz - ytosiz + (uint64_t)ytsiz - 1) / ytsiz);
    if (tiles > 16384 || tiles * (csiz ? csiz : 1) > 65536) {
        snprintf(error, error_size, "cannot read the JPEG 2000 header: %llu tiles of %u components, more than photod reads",
                 (unsigned long long)tiles, csiz);
        return 1;
    }
    return 0;
}

int photo_jp2_open(const uint8_t *data, size_t size, int64_t cpu_deadline_ns, photo_jp2 **out, photo_jp2_info *info,
                   char *error, size_t error_size) {
    *out = NULL;
    static const uint8_t jp2_magic[12] = {0, 0, 0, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A};
    OPJ_CODEC_FORMAT format;
    if (size >= 12 && memcmp(data, jp2_magic, 12) == 0) format = OPJ_CODEC_JP2;
    else if (size >= 4 && data[0] == 0xFF && data[1] == 0x4F && data[2] == 0xFF && data[3] == 0x51) format = OPJ_CODEC_J2K;
    else { snprintf(error, error_size, "not a JP2 file or J2K codestream"); return PHOTO_JP2_CORRUPT; }
    if (too_many_tiles(data, size, error, error_size)) return PHOTO_JP2_CORRUPT;
    struct photo_jp2 *j = calloc(1, sizeof *j);
    if (!j) { snprintf(error, error_size, "out of memory"); return PHOTO_JP2_CORRUPT; }
    j->data = data;
    j->size = size;
    j->cpu_deadline_ns = cpu_deadline_ns;
    j->codec = opj_create_decompress(format);
    j->stream = opj_stream_create(64 << 10, OPJ_TRUE);
    if (!j->codec || !j->stream) { snprintf(error, error_size, "out of memory"); photo_jp2_close(j); return PHOTO_JP2_CORRUPT; }
    opj_set_error_handler(j->codec, on_error, j);
    opj_set_warning_handler(j->codec, on_quiet, j);
    opj_set_info_handler(j->codec, on_quiet, j);
    opj_stream_set_read_function(j->stream, on_read);
    opj_stream_set_skip_function(j->stream, on_skip);
    opj_stream_set_seek_function(j->stream, on_seek);
    opj_stream_set_user_data(j->stream, j, NULL);
    opj_stream_set_user_data_length(j->stream, size);
    opj_dparameters_t params;
    opj_set_default_decoder_parameters(&params);
    if (!opj_setup_decoder(j->codec, &params)) {
        int status = fail(j, PHOTO_JP2_CORRUPT, "cannot set up OpenJPEG", error, error_size);
        photo_jp2_close(j);
        return status;
    }
    /* One thread: the daemon's workers are the parallelism. */
    opj_codec_set_threads(j->codec, 1);
    if (!opj_read_header(j->stream, j->codec, &j->image) || !j->image || j->image->x1 <= j->image->x0 ||
        j->image->y1 <= j->image->y0 || j->image->numcomps == 0) {
        int status = fail(j, PHOTO_JP2_CORRUPT, "cannot read the JPEG 2000 header", error, error_size);
        photo_jp2_close(j);
        return status;
    }
    info->width = j->image->x1 - j->image->x0;
    info->height = j->image->y1 - j->image->y0;
    *out = j;
    return PHOTO_JP2_OK;
}

/* A sample scaled to 8 bits (signed samples shifted to unsigned first). */
static inline int sample8(const opj_image_comp_t *c, uint32_t x, uint32_t y, uint32_t w, uint32_t h) {
    /* Components may be subsampled: the nearest sample of the component's own grid. */
    uint32_t cx = c->w == w ? x : (uint32_t)((uint64_t)x * c->w / w);
    uint32_t cy = c->h == h ? y : (uint32_t)((uint64_t)y * c->h / h);
    int v = c->data[(size_t)cy * c->w + cx];
    if (c->sgnd) v += 1 << (c->prec - 1);
    if (c->prec > 8) v >>= c->prec - 8;
    else if (c->prec < 8) v = (v * 255 + ((1 << c->prec) - 1) / 2) / ((1 << c->prec) - 1);
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

static inline uint8_t clamp8(double v) { return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)(v + 0.5); }

int photo_jp2_decode(photo_jp2 *j, uint32_t need_width, uint32_t need_height, const uint8_t **pixels, uint32_t *width,
                     uint32_t *height, uint32_t *channels, char *error, size_t error_size) {
    *pixels = NULL;
    opj_image_t *im = j->image;
    uint32_t full_w = im->x1 - im->x0, full_h = im->y1 - im->y0;
    /* The smallest resolution still covering the request; a level the codestream lacks is refused
       by OpenJPEG, so try the next larger. */
    unsigned reduce = 0;
    while (reduce < 31 && ((full_w + (1u << (reduce + 1)) - 1) >> (reduce + 1)) >= need_width &&
           ((full_h + (1u << (reduce + 1)) - 1) >> (reduce + 1)) >= need_height) reduce++;
    while (reduce > 0 && !opj_set_decoded_resolution_factor(j->codec, reduce)) reduce--;
    /* OpenJPEG 2.5.0 keeps a factor it refuses (it stores it before checking it against the
       components' resolutions): with every factor refused, the decoder would reduce by the last
       one while the components are not, and read out of bounds. The factor used is set again,
       0 included. */
    if (reduce == 0 && !opj_set_decoded_resolution_factor(j->codec, 0))
        return fail(j, PHOTO_JP2_CORRUPT, "the JPEG 2000 resolutions do not decode", error, error_size);
    j->message[0] = 0;
    if (!opj_decode(j->codec, j->stream, im) || !opj_end_decompress(j->codec, j->stream))
        return fail(j, PHOTO_JP2_CORRUPT, "the JPEG 2000 data does not decode", error, error_size);
    uint32_t n = im->numcomps;
    const opj_image_comp_t *c = im->comps;
    uint32_t w = c[0].w, h = c[0].h;
    if (w == 0 || h == 0) { snprintf(error, error_size, "the decoded image is empty"); return PHOTO_JP2_CORRUPT; }
    for (uint32_t i = 0; i < n; i++) {
        if (!c[i].data || c[i].w == 0 || c[i].h == 0 || c[i].prec == 0 || c[i].prec > 31) {
            snprintf(error, error_size, "component %u is empty or of %u bits", i, c[i].prec);
            return PHOTO_JP2_CORRUPT;
        }
    }
    OPJ_COLOR_SPACE space = im->color_space;
    int colour = n >= 3 && space != OPJ_CLRSPC_GRAY;
    if (space == OPJ_CLRSPC_EYCC || (space == OPJ_CLRSPC_CMYK && n < 4)) {
        snprintf(error, error_size, "JPEG 2000 colour space %d", (int)space);
        return PHOTO_JP2_UNDECODABLE;
    }
    int cmyk = space == OPJ_CLRSPC_CMYK;
    uint32_t alpha_comp = colour ? (cmyk ? 4 : 3) : 1;
    int alpha = n > alpha_comp && (c[alpha_comp].alpha || !cmyk);
    uint32_t out_channels = alpha ? 4 : 3;
    uint8_t *px = malloc((size_t)w * h * out_channels);
    if (!px) { snprintf(error, error_size, "out of memory"); return PHOTO_JP2_CORRUPT; }
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            uint8_t *p = px + ((size_t)y * w + x) * out_channels;
            if (!colour) {
                p[0] = p[1] = p[2] = (uint8_t)sample8(&c[0], x, y, w, h);
            } else if (space == OPJ_CLRSPC_SYCC) {
                double Y = sample8(&c[0], x, y, w, h), cb = sample8(&c[1], x, y, w, h) - 128.0, cr = sample8(&c[2], x, y, w, h) - 128.0;
                p[0] = clamp8(Y + 1.402 * cr);
                p[1] = clamp8(Y - 0.344136 * cb - 0.714136 * cr);
                p[2] = clamp8(Y + 1.772 * cb);
            } else if (cmyk) {
                int k = 255 - sample8(&c[3], x, y, w, h);
                for (int i = 0; i < 3; i++) p[i] = (uint8_t)((255 - sample8(&c[i], x, y, w, h)) * k / 255);
            } else {
                for (int i = 0; i < 3; i++) p[i] = (uint8_t)sample8(&c[i], x, y, w, h);
            }
            if (alpha) p[3] = (uint8_t)sample8(&c[alpha_comp], x, y, w, h);
        }
    }
    j->pixels = px;
    *pixels = px;
    *width = w;
    *height = h;
    *channels = out_channels;
    return PHOTO_JP2_OK;
}

void photo_jp2_close(photo_jp2 *j) {
    if (!j) return;
    if (j->image) opj_image_destroy(j->image);
    if (j->stream) opj_stream_destroy(j->stream);
    if (j->codec) opj_destroy_codec(j->codec);
    free(j->pixels);
    free(j);
}
