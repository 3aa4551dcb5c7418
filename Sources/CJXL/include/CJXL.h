#pragma once
// libjxl (libjxl-dev) for photod's JPEG XL renderer: the first frame of a codestream or
// container in memory, 8-bit RGB or RGBA, turned by the codestream's own orientation (as
// libheif turns a HEIF). This public header includes only <stdint.h> and <stddef.h>; jxl/decode.h
// is included by jxl.c alone.
#include <stdint.h>
#include <stddef.h>

/// Results of the photo_jxl calls.
enum {
    PHOTO_JXL_OK = 0,
    /// A damaged or truncated file.
    PHOTO_JXL_CORRUPT = 1,
    /// The CPU deadline passed (asked between pieces of input).
    PHOTO_JXL_TIMEOUT = 2,
};

typedef struct {
    /// The image as displayed (after its orientation).
    uint32_t width, height;
    /// 4 when it has alpha, else 3.
    uint32_t channels;
} photo_jxl_info;

typedef struct photo_jxl photo_jxl;

/// Reads the JPEG XL in data[0..size) (valid until photo_jxl_close) up to its basic info.
int photo_jxl_open(const uint8_t *data, size_t size, int64_t cpu_deadline_ns, photo_jxl **out, photo_jxl_info *info,
                   char *error, size_t error_size);

/// Decodes the first frame into width * height * channels bytes owned by the photo_jxl.
int photo_jxl_decode(photo_jxl *x, const uint8_t **pixels, char *error, size_t error_size);

/// Frees the decoder and its pixels.
void photo_jxl_close(photo_jxl *x);
