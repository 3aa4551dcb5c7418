#pragma once
// zlib (zlib1g-dev) for photod's metadata reader: a zlib stream inflated into a bounded buffer
// (PNG's zTXt and compressed iTXt chunks, where ImageMagick keeps EXIF, XMP and IPTC). This
// public header includes only <stdint.h> and <stddef.h>, so that no glibc declaration is
// captured by this module (zlib.h pulls in <sys/types.h> and <unistd.h>); zlib.c includes it.
#include <stdint.h>
#include <stddef.h>

/// photo_inflate's results.
enum {
    PHOTO_INFLATE_OK = 0,
    /// The stream is damaged or cut short.
    PHOTO_INFLATE_CORRUPT = 1,
    /// It inflates to more than the buffer holds: what fitted is in it.
    PHOTO_INFLATE_TOO_LARGE = 2,
};

/// Inflates the zlib stream (RFC 1950) in src[0..src_size) into dst[0..dst_capacity), setting
/// *out_size to the bytes written. Never writes past dst_capacity; allocates only zlib's state.
int photo_inflate(const uint8_t *src, size_t src_size, uint8_t *dst, size_t dst_capacity, size_t *out_size);
