#pragma once
// PhotoImaging's C layer: what Swift cannot do (libpng reports errors with setjmp/longjmp) or
// should not do in its inner loops (the resampler). This public header includes only
// <stdint.h> and <stddef.h>, so that no glibc declaration is captured by this module (see
// ../shared/SWIFT-LINUX.md, pitfall 1); png.h is included by the .c files alone.
#include <stdint.h>
#include <stddef.h>

// MARK: - Resampler

/// An area-averaging resampler (a box filter with exact fractional coverage): every output
/// pixel is the mean of the source area it covers, partial pixels weighted by their share.
/// Source rows are pushed one at a time, top to bottom, so a streaming decoder never holds
/// the whole source; memory is the output plus two rows of `out_width` floats and a table.
/// Alpha (4 channels) is averaged premultiplied, so transparent pixels do not darken edges.
typedef struct photo_resampler photo_resampler;

/// A resampler from the rectangle (crop_x, crop_y, crop_width, crop_height) of a
/// src_width x src_height image with `channels` (3 = RGB, 4 = RGBA) 8-bit samples to
/// out_width x out_height pixels written to `out` (out_width * out_height * channels bytes,
/// owned by the caller). NULL when an argument is out of range or memory is short.
photo_resampler *photo_resampler_create(uint32_t src_width, uint32_t src_height, uint32_t channels,
                                        double crop_x, double crop_y, double crop_width, double crop_height,
                                        uint32_t out_width, uint32_t out_height, uint8_t *out);

/// Feeds the next source row (src_width * channels bytes). Rows past the crop are ignored.
void photo_resampler_push_row(photo_resampler *r, const uint8_t *row);

/// Feeds `rows` rows of a buffer whose rows are `stride` bytes apart.
void photo_resampler_push_rows(photo_resampler *r, const uint8_t *pixels, size_t stride, uint32_t rows);

/// Emits a last output row that was only partly covered (float rounding at the bottom edge)
/// and returns the number of output rows written; the caller checks it equals out_height.
uint32_t photo_resampler_finish(photo_resampler *r);

/// Frees the resampler (not the output).
void photo_resampler_destroy(photo_resampler *r);

// MARK: - PNG decoding (libpng, streaming)

/// What the header of a PNG says, after the expansions photo_png applies (palette and
/// low bit depths to 8-bit RGB, tRNS to alpha, 16-bit scaled to 8, grey to RGB).
typedef struct {
    uint32_t width;
    uint32_t height;
    /// 3 (RGB) or 4 (RGBA).
    uint32_t channels;
    /// Adam7: decoded whole (width * height * channels bytes), not row by row.
    int32_t interlaced;
} photo_png_info;

typedef struct photo_png photo_png;

/// Reads the header of the PNG in data[0..size) (which must stay valid until
/// photo_png_close). NULL on failure with a message in `error`. Refuses a file whose image
/// data could not hold the claimed size even at deflate's best ratio (1032:1).
photo_png *photo_png_open(const uint8_t *data, size_t size, photo_png_info *info, char *error, size_t error_size);

/// Decodes the rows into the resampler. 0 on success; -1 with a message in `error`
/// (truncated data, bad CRC of a critical chunk, bad deflate stream...).
int photo_png_decode(photo_png *p, photo_resampler *r, char *error, size_t error_size);

/// Frees the decoder and its buffers.
void photo_png_close(photo_png *p);

// MARK: - PNG encoding

/// Encodes width x height pixels of `channels` (3 or 4) samples, rows packed, as a PNG with
/// libpng's simplified API. 0 on success with a malloc'ed buffer in *out (free it with
/// photo_free); -1 on failure.
int photo_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, uint32_t channels,
                     uint8_t **out, size_t *out_size);

/// free().
void photo_free(void *p);
