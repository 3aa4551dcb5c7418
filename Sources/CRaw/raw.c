#include "CRaw.h"

#include <libraw/libraw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct photo_raw {
    libraw_data_t *lr;
    int64_t cpu_deadline_ns;
    int timed_out;
    char message[160]; /* LibRaw's data or memory complaint, if any */
    libraw_processed_image_t *developed;
    photo_raw_info info;
};

/* Debian builds LibRaw with OpenMP, and developing runs parallel regions: they are held to
   one thread, the caller's, so that the daemon's image workers are the parallelism and the
   caller's CPU clock measures the whole decode. omp_set_num_threads sets the calling thread's
   own setting only. libgomp comes with libraw_r; weak, so that a LibRaw without OpenMP links too. */
extern void omp_set_num_threads(int) __attribute__((weak));

static int64_t cpu_now(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* LibRaw asks at every stage of opening, unpacking and developing: nonzero cancels. */
static int on_progress(void *data, enum LibRaw_progress stage, int iteration, int expected) {
    (void)stage; (void)iteration; (void)expected;
    struct photo_raw *r = data;
    if (cpu_now() > r->cpu_deadline_ns) { r->timed_out = 1; return 1; }
    return 0;
}

/* The default handlers print to stderr; photod reports the failure instead. */
static void on_data_error(void *data, const char *file, const int offset) {
    (void)file;
    struct photo_raw *r = data;
    if (r && !r->message[0]) snprintf(r->message, sizeof r->message, "the data ends early or is damaged (offset %d)", offset);
}

static void on_memory_error(void *data, const char *file, const char *where) {
    (void)file;
    struct photo_raw *r = data;
    if (r && !r->message[0]) snprintf(r->message, sizeof r->message, "out of memory in %s", where ? where : "LibRaw");
}

static int fail(struct photo_raw *r, int rc, const char *what, char *error, size_t error_size) {
    if (r && r->timed_out) {
        if (error && error_size) snprintf(error, error_size, "%s: stopped at the CPU limit", what);
        return PHOTO_RAW_TIMEOUT;
    }
    const char *detail = r && r->message[0] ? r->message : libraw_strerror(rc);
    if (error && error_size) snprintf(error, error_size, "%s: %s", what, detail ? detail : "LibRaw error");
    switch (rc) {
    case LIBRAW_FILE_UNSUPPORTED:
    case LIBRAW_NOT_IMPLEMENTED:
    case LIBRAW_UNSUPPORTED_THUMBNAIL: return PHOTO_RAW_UNSUPPORTED;
    case LIBRAW_NO_THUMBNAIL:
    case LIBRAW_REQUEST_FOR_NONEXISTENT_IMAGE: return PHOTO_RAW_NO_PREVIEW;
    case LIBRAW_CANCELLED_BY_CALLBACK: return PHOTO_RAW_TIMEOUT;
    case LIBRAW_UNSUFFICIENT_MEMORY:
    case LIBRAW_TOO_BIG:
    case LIBRAW_MEMPOOL_OVERFLOW: return PHOTO_RAW_TOO_LARGE;
    default: return PHOTO_RAW_CORRUPT;
    }
}

int photo_raw_open(const uint8_t *data, size_t size, int64_t cpu_deadline_ns, photo_raw **out, photo_raw_info *info,
                   char *error, size_t error_size) {
    *out = NULL;
    struct photo_raw *r = calloc(1, sizeof *r);
    if (!r) { snprintf(error, error_size, "out of memory"); return PHOTO_RAW_TOO_LARGE; }
    r->cpu_deadline_ns = cpu_deadline_ns;
    /* LIBRAW_OPTIONS_NO_DATAERR_CALLBACK is not set: our handler records the complaint. */
    r->lr = libraw_init(0);
    if (!r->lr) { free(r); snprintf(error, error_size, "cannot initialise LibRaw"); return PHOTO_RAW_TOO_LARGE; }
    libraw_set_progress_handler(r->lr, on_progress, r);
    libraw_set_dataerror_handler(r->lr, on_data_error, r);
    libraw_set_memerror_handler(r->lr, on_memory_error, r);
    /* LibRaw reads the buffer; it never writes to it. */
    int rc = libraw_open_buffer(r->lr, (void *)data, size);
    if (rc != LIBRAW_SUCCESS) {
        int status = fail(r, rc, "LibRaw cannot open the file", error, error_size);
        photo_raw_close(r);
        return status;
    }
    libraw_data_t *lr = r->lr;
    r->info.width = lr->sizes.width;
    r->info.height = lr->sizes.height;
    r->info.raw_width = lr->sizes.raw_width;
    r->info.raw_height = lr->sizes.raw_height;
    switch (lr->sizes.flip) {
    case 3: r->info.orientation = 3; break;
    case 5: r->info.orientation = 8; break; /* 90° counter-clockwise */
    case 6: r->info.orientation = 6; break; /* 90° clockwise */
    default: r->info.orientation = 1; break;
    }
    *info = r->info;
    *out = r;
    return PHOTO_RAW_OK;
}

int photo_raw_preview(photo_raw *r, photo_raw_preview_image *preview, char *error, size_t error_size) {
    memset(preview, 0, sizeof *preview);
    r->message[0] = 0;
    int rc = libraw_unpack_thumb(r->lr);
    if (rc != LIBRAW_SUCCESS) return fail(r, rc, "the embedded preview", error, error_size);
    libraw_thumbnail_t *t = &r->lr->thumbnail;
    if (!t->thumb || t->tlength == 0) return fail(r, LIBRAW_NO_THUMBNAIL, "the embedded preview", error, error_size);
    if (t->tformat == LIBRAW_THUMBNAIL_JPEG) {
        preview->format = 1;
    } else if (t->tformat == LIBRAW_THUMBNAIL_BITMAP && t->tcolors == 3 &&
               (size_t)t->twidth * t->theight * 3 <= t->tlength) {
        preview->format = 2;
    } else {
        return fail(r, LIBRAW_NO_THUMBNAIL, "the embedded preview", error, error_size);
    }
    preview->width = t->twidth;
    preview->height = t->theight;
    preview->data = (const uint8_t *)t->thumb;
    preview->size = t->tlength;
    return PHOTO_RAW_OK;
}

int photo_raw_develop(photo_raw *r, int half, const uint8_t **pixels, uint32_t *width, uint32_t *height, char *error,
                      size_t error_size) {
    *pixels = NULL;
    if (r->developed) { snprintf(error, error_size, "developed twice"); return PHOTO_RAW_CORRUPT; }
    r->message[0] = 0;
    libraw_data_t *lr = r->lr;
    lr->params.half_size = half ? 1 : 0;
    lr->params.use_camera_wb = 1;
    lr->params.output_bps = 8;
    lr->params.output_color = 1; /* sRGB */
    lr->params.user_flip = 0;    /* as stored: the renderer turns it */
    if (omp_set_num_threads) omp_set_num_threads(1);
    int rc = libraw_unpack(lr);
    if (rc != LIBRAW_SUCCESS) return fail(r, rc, "LibRaw cannot unpack the sensor data", error, error_size);
    rc = libraw_dcraw_process(lr);
    if (rc != LIBRAW_SUCCESS) return fail(r, rc, "LibRaw cannot develop the sensor data", error, error_size);
    int errc = 0;
    libraw_processed_image_t *img = libraw_dcraw_make_mem_image(lr, &errc);
    if (!img) return fail(r, errc ? errc : LIBRAW_UNSPECIFIED_ERROR, "LibRaw cannot deliver the image", error, error_size);
    if (img->type != LIBRAW_IMAGE_BITMAP || img->colors != 3 || img->bits != 8 || img->width == 0 || img->height == 0 ||
        (size_t)img->width * img->height * 3 > img->data_size) {
        libraw_dcraw_clear_mem(img);
        snprintf(error, error_size, "LibRaw delivered an image of an unexpected kind");
        return PHOTO_RAW_CORRUPT;
    }
    r->developed = img;
    *width = img->width;
    *height = img->height;
    *pixels = img->data;
    return PHOTO_RAW_OK;
}

void photo_raw_close(photo_raw *r) {
    if (!r) return;
    if (r->developed) libraw_dcraw_clear_mem(r->developed);
    if (r->lr) libraw_close(r->lr);
    free(r);
}
