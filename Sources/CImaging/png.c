#include "CImaging.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libpng reports errors by longjmp to the setjmp of the calling function. Every function
   here that calls into libpng's reading code sets it first; buffers live in the handle so
   that an error path frees them in photo_png_close. */
struct photo_png {
    png_structp png;
    png_infop info;
    const uint8_t *data;
    size_t size, pos;
    char message[200];
    uint8_t *row;   /* one row (non-interlaced) */
    uint8_t *image; /* the whole image (interlaced) */
    photo_png_info out;
};

static void on_error(png_structp png, png_const_charp message) {
    struct photo_png *p = png_get_error_ptr(png);
    if (p) snprintf(p->message, sizeof p->message, "%s", message ? message : "libpng error");
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp message) {
    (void)png; (void)message; /* ancillary problems: the image is still decoded */
}

static void on_read(png_structp png, png_bytep out, size_t count) {
    struct photo_png *p = png_get_io_ptr(png);
    if (count > p->size - p->pos) png_error(png, "the file is truncated");
    memcpy(out, p->data + p->pos, count);
    p->pos += count;
}

static uint32_t be32(const uint8_t *b) {
    return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}

/* The bytes of all IDAT chunks (bounded walk; stops at IEND or a chunk running past the end). */
static uint64_t idat_bytes(const uint8_t *data, size_t size) {
    uint64_t total = 0;
    size_t pos = 8;
    for (int i = 0; i < 1000000 && pos + 8 <= size; i++) {
        uint32_t length = be32(data + pos);
        const uint8_t *type = data + pos + 4;
        if (length > 0x7FFFFFFFu) break;
        uint64_t available = size - pos - 8;
        uint64_t take = length < available ? length : available;
        if (memcmp(type, "IDAT", 4) == 0) total += take;
        if (memcmp(type, "IEND", 4) == 0) break;
        if ((uint64_t)length + 12 > size - pos) break;
        pos += (size_t)length + 12;
    }
    return total;
}

static void fail(char *error, size_t error_size, const char *message) {
    if (error && error_size) snprintf(error, error_size, "%s", message);
}

photo_png *photo_png_open(const uint8_t *data, size_t size, photo_png_info *info, char *error, size_t error_size) {
    if (size < 8 || png_sig_cmp(data, 0, 8) != 0) { fail(error, error_size, "not a PNG signature"); return NULL; }
    photo_png *p = calloc(1, sizeof *p);
    if (!p) { fail(error, error_size, "out of memory"); return NULL; }
    p->data = data; p->size = size; p->pos = 0;
    p->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, p, on_error, on_warning);
    if (!p->png) { fail(error, error_size, "out of memory"); free(p); return NULL; }
    p->info = png_create_info_struct(p->png);
    if (!p->info) { fail(error, error_size, "out of memory"); photo_png_close(p); return NULL; }
    if (setjmp(png_jmpbuf(p->png))) {
        fail(error, error_size, p->message);
        photo_png_close(p);
        return NULL;
    }
    png_set_read_fn(p->png, p, on_read);
    /* Bounds for untrusted files: dimensions (the caller applies its own pixel limit too)
       and the memory one ancillary chunk (iCCP, zTXt...) may take once inflated. */
    png_set_user_limits(p->png, 1u << 20, 1u << 20);
    png_set_chunk_malloc_max(p->png, 16u << 20);
    png_set_chunk_cache_max(p->png, 1000);
    /* The ancillary chunks the renderer has no use for (text, EXIF, ICC, gamma...: it applies no
       colour management) are skipped unread. Besides saving the work, this bounds memory:
       libpng reads such a chunk whole into a buffer of its claimed length, and the libpng we
       build against (1.6.39) does not hold text chunks to png_set_chunk_malloc_max, so a
       header claiming a 1 GB iTXt chunk made it allocate 1 GB before finding the file
       truncated. Skipped chunks are read in small pieces. tRNS is kept (transparency). */
    static const png_byte unused_chunks[] =
        "bKGD\0cHRM\0eXIf\0gAMA\0hIST\0iCCP\0iTXt\0oFFs\0pCAL\0pHYs\0sBIT\0sCAL\0sPLT\0sRGB\0sTER\0tEXt\0tIME\0zTXt";
    png_set_keep_unknown_chunks(p->png, PNG_HANDLE_CHUNK_NEVER, unused_chunks, (int)(sizeof unused_chunks / 5));
    png_read_info(p->png, p->info);

    png_uint_32 width = 0, height = 0;
    int depth = 0, color = 0, interlace = 0;
    png_get_IHDR(p->png, p->info, &width, &height, &depth, &color, &interlace, NULL, NULL);
    /* Deflate expands at most 1032:1: image data shorter than the filtered rows / 1032 cannot
       hold the claimed size, and decoding it would only allocate for a size the file claims. */
    uint64_t raw_row = 1 + ((uint64_t)width * (uint64_t)png_get_channels(p->png, p->info) * (uint64_t)depth + 7) / 8;
    uint64_t raw = raw_row * height;
    uint64_t idat = idat_bytes(data, size);
    if (raw / 1032 > idat + 64) {
        snprintf(p->message, sizeof p->message, "the image data (%llu bytes) cannot hold the claimed %ux%u pixels",
                 (unsigned long long)idat, (unsigned)width, (unsigned)height);
        fail(error, error_size, p->message);
        photo_png_close(p);
        return NULL;
    }

    png_set_expand(p->png);
    if (depth == 16) png_set_scale_16(p->png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(p->png);
    int passes = 1;
    if (interlace != PNG_INTERLACE_NONE) passes = png_set_interlace_handling(p->png);
    png_read_update_info(p->png, p->info);
    uint32_t channels = png_get_channels(p->png, p->info);
    if (channels != 3 && channels != 4) {
        fail(error, error_size, "unexpected channel count after expansion");
        photo_png_close(p);
        return NULL;
    }
    p->out.width = width;
    p->out.height = height;
    p->out.channels = channels;
    p->out.interlaced = passes > 1;
    *info = p->out;
    return p;
}

int photo_png_decode(photo_png *p, photo_resampler *r, char *error, size_t error_size) {
    if (setjmp(png_jmpbuf(p->png))) {
        fail(error, error_size, p->message);
        return -1;
    }
    size_t rowbytes = png_get_rowbytes(p->png, p->info);
    if (rowbytes != (size_t)p->out.width * p->out.channels) png_error(p->png, "unexpected row size");
    if (!p->out.interlaced) {
        p->row = malloc(rowbytes);
        if (!p->row) png_error(p->png, "out of memory");
        for (uint32_t y = 0; y < p->out.height; y++) {
            png_read_row(p->png, p->row, NULL);
            photo_resampler_push_row(r, p->row);
        }
    } else {
        /* Adam7 rows are only complete after the last pass: the whole image is needed. The
           caller's pixel limit and the deflate bound in photo_png_open cap it. */
        if ((uint64_t)rowbytes * p->out.height > ((uint64_t)1 << 40)) png_error(p->png, "image too large");
        p->image = malloc(rowbytes * p->out.height);
        png_bytep *rows = malloc(sizeof(png_bytep) * p->out.height);
        if (!p->image || !rows) { free(rows); png_error(p->png, "out of memory"); }
        for (uint32_t y = 0; y < p->out.height; y++) rows[y] = p->image + (size_t)y * rowbytes;
        /* rows is freed below; a longjmp out of png_read_image would leak it, so hand it to
           the handle's row slot first. */
        p->row = (uint8_t *)rows;
        png_read_image(p->png, rows);
        photo_resampler_push_rows(r, p->image, rowbytes, p->out.height);
    }
    return 0;
}

void photo_png_close(photo_png *p) {
    if (!p) return;
    if (p->png) png_destroy_read_struct(&p->png, p->info ? &p->info : NULL, NULL);
    free(p->row);
    free(p->image);
    free(p);
}

int photo_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, uint32_t channels,
                     uint8_t **out, size_t *out_size) {
    if (!pixels || !out || !out_size || width == 0 || height == 0 || (channels != 3 && channels != 4)) return -1;
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = width;
    image.height = height;
    image.format = channels == 4 ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
    png_alloc_size_t size = 0;
    if (!png_image_write_to_memory(&image, NULL, &size, 0, pixels, 0, NULL) || size == 0) {
        png_image_free(&image);
        return -1;
    }
    uint8_t *buffer = malloc(size);
    if (!buffer) return -1;
    if (!png_image_write_to_memory(&image, buffer, &size, 0, pixels, 0, NULL)) {
        png_image_free(&image);
        free(buffer);
        return -1;
    }
    *out = buffer;
    *out_size = size;
    return 0;
}

void photo_free(void *p) { free(p); }
