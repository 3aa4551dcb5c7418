#pragma once
// LibRaw (libraw-dev, its reentrant libraw_r) for photod's RAW renderer: the embedded preview
// a camera wrote, or the sensor data developed. This public header includes only <stdint.h>
// and <stddef.h>; libraw.h is included by raw.c alone.
#include <stdint.h>
#include <stddef.h>

/// Results of the photo_raw calls.
enum {
    PHOTO_RAW_OK = 0,
    /// A damaged file: LibRaw's data or I/O error, a truncated file.
    PHOTO_RAW_CORRUPT = 1,
    /// A file LibRaw does not know (a camera or a variant it lacks).
    PHOTO_RAW_UNSUPPORTED = 2,
    /// No embedded preview (photo_raw_preview): develop instead.
    PHOTO_RAW_NO_PREVIEW = 3,
    /// The CPU deadline passed (checked at LibRaw's progress stages).
    PHOTO_RAW_TIMEOUT = 4,
    /// The image or a buffer LibRaw wants is over its limits.
    PHOTO_RAW_TOO_LARGE = 5,
};

/// What the file's headers say.
typedef struct {
    /// The developed image's size (LibRaw's `sizes.width`/`height`: the visible sensor area,
    /// not turned), and the sensor's (`raw_width`/`raw_height`, which unpacking allocates for).
    uint32_t width, height, raw_width, raw_height;
    /// The orientation as EXIF numbers it (1, 3, 6, 8), from LibRaw's `flip`.
    int32_t orientation;
} photo_raw_info;

/// An embedded preview: a JPEG's bytes, or 8-bit RGB pixels, owned by the photo_raw.
typedef struct {
    /// 1: JPEG (`data` holds `size` bytes of it); 2: RGB (`width` * `height` * 3 bytes).
    int32_t format;
    uint32_t width, height;
    const uint8_t *data;
    size_t size;
} photo_raw_preview_image;

typedef struct photo_raw photo_raw;

/// Opens the RAW in data[0..size) (which must stay valid until photo_raw_close).
/// `cpu_deadline_ns`: the CLOCK_THREAD_CPUTIME_ID time past which LibRaw is stopped.
int photo_raw_open(const uint8_t *data, size_t size, int64_t cpu_deadline_ns, photo_raw **out, photo_raw_info *info,
                   char *error, size_t error_size);

/// The embedded preview LibRaw picks (the largest it finds, in 0.20), or PHOTO_RAW_NO_PREVIEW.
int photo_raw_preview(photo_raw *r, photo_raw_preview_image *preview, char *error, size_t error_size);

/// Develops the sensor data (camera white balance, sRGB, 8 bits, not turned); `half`: at half
/// size (each 2x2 block one pixel, no demosaicing). *pixels is 8-bit RGB, *width x *height,
/// owned by the photo_raw. Once per photo_raw.
int photo_raw_develop(photo_raw *r, int half, const uint8_t **pixels, uint32_t *width, uint32_t *height, char *error,
                      size_t error_size);

/// Frees the decoder.
void photo_raw_close(photo_raw *r);
