#include "CZlib.h"
#include <zlib.h>

int photo_inflate(const uint8_t *src, size_t src_size, uint8_t *dst, size_t dst_capacity, size_t *out_size) {
    *out_size = 0;
    z_stream z = {0};
    if (inflateInit(&z) != Z_OK) return PHOTO_INFLATE_CORRUPT;
    int result = PHOTO_INFLATE_CORRUPT;
    // zlib counts in uInt: feed and drain in pieces that fit one.
    size_t in_left = src_size, out_left = dst_capacity;
    z.next_in = (Bytef *)src;
    z.next_out = dst;
    for (;;) {
        uInt in_piece = in_left > 0x40000000u ? 0x40000000u : (uInt)in_left;
        uInt out_piece = out_left > 0x40000000u ? 0x40000000u : (uInt)out_left;
        z.avail_in = in_piece;
        z.avail_out = out_piece;
        int status = inflate(&z, Z_NO_FLUSH);
        in_left -= in_piece - z.avail_in;
        out_left -= out_piece - z.avail_out;
        if (status == Z_STREAM_END) { result = PHOTO_INFLATE_OK; break; }
        if (status != Z_OK && status != Z_BUF_ERROR) break;
        if (out_left == 0) { result = PHOTO_INFLATE_TOO_LARGE; break; }
        if (in_left == 0 || (status == Z_BUF_ERROR && z.avail_in == in_piece)) break;  // cut short
    }
    *out_size = dst_capacity - out_left;
    inflateEnd(&z);
    return result;
}
