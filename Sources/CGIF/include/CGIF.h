#pragma once
// giflib (libgif-dev) for photod's GIF renderer: the first frame of a file in memory, drawn on
// its logical screen. This public header includes only <stdint.h> and <stddef.h>; gif_lib.h is
// included by gif.c alone.
#include <stdint.h>
#include <stddef.h>

/// photo_gif_open's and photo_gif_decode's results.
enum {
    PHOTO_GIF_OK = 0,
    /// A damaged file: no GIF header, a bad descriptor, no image, LZW data that ends early.
    PHOTO_GIF_CORRUPT = 1,
    /// The decode passed its CPU deadline.
    PHOTO_GIF_TIMEOUT = 2,
};

/// The canvas the first frame is drawn on.
typedef struct {
    /// The logical screen, grown to hold the first frame when the frame reaches past it.
    uint32_t width;
    uint32_t height;
    /// 4 (RGBA) when some of the canvas may be transparent (a transparent colour, or a frame
    /// smaller than the screen), else 3.
    uint32_t channels;
    /// The first frame's place on the canvas.
    uint32_t frame_left, frame_top, frame_width, frame_height;
} photo_gif_info;

typedef struct photo_gif photo_gif;

/// Opens the GIF in data[0..size) (which must stay valid until photo_gif_close) and reads up to
/// its first frame's descriptor. PHOTO_GIF_OK with *out set, or an error with a message.
/// `cpu_deadline_ns`: the CLOCK_THREAD_CPUTIME_ID time past which it gives up (the extension
/// blocks before the frame are read here).
int photo_gif_open(const uint8_t *data, size_t size, int64_t cpu_deadline_ns, photo_gif **out, photo_gif_info *info,
                   char *error, size_t error_size);

/// Draws the first frame on `out` (width * height * channels bytes, packed rows): the frame's
/// pixels through its colour table, everything else transparent black (3 channels: black).
int photo_gif_decode(photo_gif *g, uint8_t *out, int64_t cpu_deadline_ns, char *error, size_t error_size);

/// Frees the decoder.
void photo_gif_close(photo_gif *g);
