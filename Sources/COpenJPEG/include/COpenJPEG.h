#pragma once
// OpenJPEG (libopenjp2-7-dev) for photod's JPEG 2000 renderer: a JP2 file or a raw J2K
// codestream in memory, decoded at the smallest resolution level that still covers the request.
// This public header includes only <stdint.h> and <stddef.h>; openjpeg.h is included by
// openjpeg.c alone.
#include <stdint.h>
#include <stddef.h>

/// Results of the photo_jp2 calls.
enum {
    PHOTO_JP2_OK = 0,
    /// A damaged file: OpenJPEG's first error says why.
    PHOTO_JP2_CORRUPT = 1,
    /// A valid file this reader does not turn into RGB (an unknown colour space, a component
    /// layout it lacks).
    PHOTO_JP2_UNDECODABLE = 2,
    /// The CPU deadline passed while the codestream was read.
    PHOTO_JP2_TIMEOUT = 3,
};

typedef struct {
    /// The full-resolution size (the reference grid's image area).
    uint32_t width, height;
} photo_jp2_info;

typedef struct photo_jp2 photo_jp2;

/// Reads the headers of the JP2 or J2K in data[0..size) (valid until photo_jp2_close).
/// `cpu_deadline_ns`: the CLOCK_THREAD_CPUTIME_ID time past which reading stops.
int photo_jp2_open(const uint8_t *data, size_t size, int64_t cpu_deadline_ns, photo_jp2 **out, photo_jp2_info *info,
                   char *error, size_t error_size);

/// Decodes at the smallest resolution level of at least need_width x need_height (each level
/// halves the size) into 8-bit RGB or RGBA (*channels 3 or 4) owned by the photo_jp2.
int photo_jp2_decode(photo_jp2 *j, uint32_t need_width, uint32_t need_height, const uint8_t **pixels, uint32_t *width,
                     uint32_t *height, uint32_t *channels, char *error, size_t error_size);

/// Frees the decoder and its pixels.
void photo_jp2_close(photo_jp2 *j);
