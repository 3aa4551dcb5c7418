#pragma once
// libtiff (libtiff-dev) for photod's TIFF renderer: the first page of a file in memory, read
// through libtiff's RGBA interface (strips and tiles; 1-16-bit grey, palette, RGB, CMYK,
// YCbCr; every codec Debian's libtiff has: LZW, Deflate, JPEG, PackBits, ...; classic TIFF
// and BigTIFF) one band of rows at a time. This public header includes only <stdint.h> and
// <stddef.h>, so that no glibc declaration is captured by this module; tiffio.h is included by
// tiff.c alone.
#include <stdint.h>
#include <stddef.h>

/// photo_tiff_open's and photo_tiff_read_band's results.
enum {
    PHOTO_TIFF_OK = 0,
    /// A damaged file: a bad header or directory, data that does not decode.
    PHOTO_TIFF_CORRUPT = 1,
    /// A valid TIFF libtiff's RGBA interface cannot show (floating-point samples, a
    /// photometric interpretation or codec it lacks): the message says which.
    PHOTO_TIFF_UNDECODABLE = 2,
};

/// What the first page's header says.
typedef struct {
    uint32_t width;
    uint32_t height;
    /// 3 (RGB) or 4 (RGBA: the page has an alpha sample).
    uint32_t channels;
    /// The rows photo_tiff_read_band reads at a time (a strip's or a row of tiles' height,
    /// at most the image's): a band never splits a strip, so no strip is decoded twice.
    uint32_t band_rows;
} photo_tiff_info;

typedef struct photo_tiff photo_tiff;

/// Opens the TIFF in data[0..size) (which must stay valid until photo_tiff_close) at its first
/// page. `max_alloc` caps any one allocation libtiff makes (a strip a header only claims).
/// PHOTO_TIFF_OK with *out set, or an error with a message in `error` (*out NULL).
int photo_tiff_open(const uint8_t *data, size_t size, uint64_t max_alloc, photo_tiff **out, photo_tiff_info *info,
                    char *error, size_t error_size);

/// Decodes rows [row, row + rows) of the page as stored (the Orientation tag is not applied)
/// into `out`: `rows` rows of width * channels bytes, packed. rows <= info.band_rows, and
/// `row` a multiple of band_rows (bands are read top to bottom).
int photo_tiff_read_band(photo_tiff *t, uint32_t row, uint32_t rows, uint8_t *out, char *error, size_t error_size);

/// Frees the decoder.
void photo_tiff_close(photo_tiff *t);
