#include "CJXL.h"

#include <jxl/decode.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The input is given to libjxl a piece at a time, so that the deadline is asked while it
   decodes (it decodes what it has before asking for more). */
enum { PIECE = 64 << 10 };

struct photo_jxl {
    JxlDecoder *dec;
    const uint8_t *data;
    size_t size;
    size_t given;    /* bytes passed to libjxl so far */
    size_t consumed; /* of those, bytes it has processed */
    int64_t cpu_deadline_ns;
    JxlPixelFormat format;
    photo_jxl_info info;
    uint8_t *pixels;
};

static int64_t cpu_now(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Runs the decoder until it reports `want` (or an error), feeding input as it asks. */
static int run(photo_jxl *x, JxlDecoderStatus want, const char *what, char *error, size_t error_size) {
    for (;;) {
        if (cpu_now() > x->cpu_deadline_ns) {
            snprintf(error, error_size, "%s: stopped at the CPU limit", what);
            return PHOTO_JXL_TIMEOUT;
        }
        JxlDecoderStatus s = JxlDecoderProcessInput(x->dec);
        if (s == want) return PHOTO_JXL_OK;
        switch (s) {
        case JXL_DEC_NEED_MORE_INPUT: {
            size_t left = JxlDecoderReleaseInput(x->dec);
            x->consumed = x->given - left;
            if (x->given >= x->size) {
                snprintf(error, error_size, "%s: the file is truncated", what);
                return PHOTO_JXL_CORRUPT;
            }
            x->given = x->size - x->given > PIECE ? x->given + PIECE : x->size;
            JxlDecoderSetInput(x->dec, x->data + x->consumed, x->given - x->consumed);
            if (x->given == x->size) JxlDecoderCloseInput(x->dec);
            break;
        }
        case JXL_DEC_NEED_IMAGE_OUT_BUFFER: {
            size_t need = 0;
            if (JxlDecoderImageOutBufferSize(x->dec, &x->format, &need) != JXL_DEC_SUCCESS ||
                need != (size_t)x->info.width * x->info.height * x->info.channels) {
                snprintf(error, error_size, "%s: unexpected image buffer size", what);
                return PHOTO_JXL_CORRUPT;
            }
            x->pixels = malloc(need);
            if (!x->pixels) { snprintf(error, error_size, "out of memory"); return PHOTO_JXL_CORRUPT; }
            if (JxlDecoderSetImageOutBuffer(x->dec, &x->format, x->pixels, need) != JXL_DEC_SUCCESS) {
                snprintf(error, error_size, "%s: libjxl refused the image buffer", what);
                return PHOTO_JXL_CORRUPT;
            }
            break;
        }
        case JXL_DEC_ERROR:
            snprintf(error, error_size, "%s: libjxl cannot decode the file", what);
            return PHOTO_JXL_CORRUPT;
        case JXL_DEC_SUCCESS:
            snprintf(error, error_size, "%s: the file ends without an image", what);
            return PHOTO_JXL_CORRUPT;
        default:
            break; /* events not subscribed to do not come; others are passed over */
        }
    }
}

int photo_jxl_open(const uint8_t *data, size_t size, int64_t cpu_deadline_ns, photo_jxl **out, photo_jxl_info *info,
                   char *error, size_t error_size) {
    *out = NULL;
    photo_jxl *x = calloc(1, sizeof *x);
    if (!x) { snprintf(error, error_size, "out of memory"); return PHOTO_JXL_CORRUPT; }
    x->data = data;
    x->size = size;
    x->cpu_deadline_ns = cpu_deadline_ns;
    /* No parallel runner: one thread, the daemon's worker's. */
    x->dec = JxlDecoderCreate(NULL);
    if (!x->dec || JxlDecoderSubscribeEvents(x->dec, JXL_DEC_BASIC_INFO | JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS) {
        snprintf(error, error_size, "cannot initialise libjxl");
        photo_jxl_close(x);
        return PHOTO_JXL_CORRUPT;
    }
    x->given = size > PIECE ? PIECE : size;
    JxlDecoderSetInput(x->dec, data, x->given);
    if (x->given == size) JxlDecoderCloseInput(x->dec);
    int rc = run(x, JXL_DEC_BASIC_INFO, "JPEG XL header", error, error_size);
    if (rc != PHOTO_JXL_OK) { photo_jxl_close(x); return rc; }
    JxlBasicInfo basic;
    if (JxlDecoderGetBasicInfo(x->dec, &basic) != JXL_DEC_SUCCESS || basic.xsize == 0 || basic.ysize == 0) {
        snprintf(error, error_size, "JPEG XL header: no image size");
        photo_jxl_close(x);
        return PHOTO_JXL_CORRUPT;
    }
    /* libjxl turns the image by the codestream's orientation: 5-8 exchange the sides. */
    int swap = basic.orientation >= JXL_ORIENT_TRANSPOSE;
    x->info.width = swap ? basic.ysize : basic.xsize;
    x->info.height = swap ? basic.xsize : basic.ysize;
    x->info.channels = basic.alpha_bits ? 4 : 3;
    x->format = (JxlPixelFormat){x->info.channels, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    *info = x->info;
    *out = x;
    return PHOTO_JXL_OK;
}

int photo_jxl_decode(photo_jxl *x, const uint8_t **pixels, char *error, size_t error_size) {
    *pixels = NULL;
    int rc = run(x, JXL_DEC_FULL_IMAGE, "JPEG XL image", error, error_size);
    if (rc != PHOTO_JXL_OK) return rc;
    if (!x->pixels) { snprintf(error, error_size, "JPEG XL image: no pixels"); return PHOTO_JXL_CORRUPT; }
    *pixels = x->pixels;
    return PHOTO_JXL_OK;
}

void photo_jxl_close(photo_jxl *x) {
    if (!x) return;
    if (x->dec) JxlDecoderDestroy(x->dec);
    free(x->pixels);
    free(x);
}
