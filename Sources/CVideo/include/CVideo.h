#pragma once
// FFmpeg's libraries (libavformat, libavcodec, libswscale, libavutil from Debian) behind a
// small C API: what Swift reads of a video, and a poster frame of it, without touching FFmpeg's
// structs and macros. This public header includes only <stdint.h> and <stddef.h>
// (../shared/SWIFT-LINUX.md, pitfall 1); the FFmpeg headers are included by video.c alone.
#include <stdint.h>
#include <stddef.h>

/// Where a video's bytes are: an open descriptor read with pread (`fd` ≥ 0; the descriptor's
/// offset is never moved, so one descriptor can serve several readers), else `data`. `size`
/// bytes in both cases (a file cut short since it was measured reads short: its end).
typedef struct {
    int fd;
    const uint8_t *data;
    int64_t size;
} photo_video_input;

/// What a video file says about itself (its best video stream, and its best audio stream).
typedef struct {
    /// FFmpeg's codec name of the video stream (`h264`, `hevc`, `vp9`, `av1`, `mpeg4`, `mjpeg`…).
    char video_codec[32];
    /// The audio stream's codec name (`aac`, `opus`…), or "" when there is none.
    char audio_codec[32];
    /// The container's name as FFmpeg knows it (`mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`, `avi`).
    char container[64];
    /// Coded size of the video stream, before the display matrix.
    int32_t width, height;
    /// The display matrix's rotation, clockwise degrees as shown: 0, 90, 180 or 270 (others
    /// rounded to the nearest quarter turn).
    int32_t rotation;
    /// The display matrix as an EXIF orientation 1–8 (rotation and mirroring, turned as
    /// FFmpeg's own `ffmpeg` autorotates); 1 without one.
    int32_t orientation;
    /// Nominal frames per second (the stream's average, else its base rate); 0 when unknown.
    double frame_rate;
    /// Seconds; 0 when unknown.
    double duration;
    /// Bits per second: the container's, else size × 8 / duration (libavformat's own estimate),
    /// else the video stream's; 0 when unknown.
    int64_t bit_rate;
    /// Android's `com.android.capture.fps` (the rate a slow-motion or time-lapse clip was
    /// recorded at); 0 when absent.
    double capture_fps;
    /// The video's transfer characteristic (ITU-T H.273: 16 = PQ, 18 = HLG), and its bit depth
    /// (0 when the headers do not say).
    int32_t color_transfer;
    int32_t bits_per_sample;
    /// Whether the file carries an attached picture (MP4 `covr`, a Matroska cover attachment).
    int32_t has_cover_art;
    /// The pixels' aspect ratio (width over height of one pixel: 32/27 for 16:9 DV); 1/1 when
    /// the stream says none (or something out of 1/8…8).
    int32_t sar_num, sar_den;
} photo_video_info;

/// Errors of photod's own (FFmpeg's are other negative numbers).
enum {
    /// The frame is larger than the pixel limit.
    PHOTO_VIDEO_TOO_LARGE = -0x50480001,
    /// The CPU or wall-time limit ran out.
    PHOTO_VIDEO_TIMEOUT = -0x50480002,
    /// FFmpeg here has no decoder for the stream's codec.
    PHOTO_VIDEO_NO_DECODER = -0x50480003,
    /// The stream ended before a frame could be decoded.
    PHOTO_VIDEO_NO_FRAME = -0x50480004,
    /// The file has no video stream (or no attached picture, for `photo_video_cover`).
    PHOTO_VIDEO_NO_STREAM = -0x50480005,
    /// FFmpeg's libraries could not be loaded (they are opened at the first video).
    PHOTO_VIDEO_UNAVAILABLE = -0x50480006,
};

/// Reads the container and streams (no frame is decoded unless the headers leave the codec or
/// size unknown), giving up after `timeout_ms` of wall time (a file on a stalled disk, a
/// crafted container that loops). 0 on success; otherwise a negative code and a message in
/// `error` (NUL-terminated, at most `error_len` bytes).
int photo_video_probe(const photo_video_input *in, int64_t timeout_ms, photo_video_info *out, char *error, size_t error_len);

/// How a poster is made.
typedef struct {
    /// The size the frame will be shown at, at most (in stored orientation; 0 for full size):
    /// a codec that can decode at a fraction of its size (`lowres`: MJPEG) decodes at the
    /// smallest fraction still at least this large.
    int32_t need_width, need_height;
    /// Frames of more pixels are refused before they are decoded.
    int64_t pixel_limit;
    /// Thread CPU time and wall time the whole decode may take.
    int64_t cpu_ms, wall_ms;
} photo_poster_options;

/// A decoded frame, RGB, 3 bytes a pixel, rows `width * 3` bytes apart.
typedef struct {
    uint8_t *pixels;
    int32_t width, height;
    /// The size the frame stands for in square pixels: the stream's coded size (the frame's
    /// before a reduced-size decode), its width times the pixel aspect ratio.
    int32_t coded_width, coded_height;
    /// How it is turned to be shown (EXIF 1–8, from the display matrix).
    int32_t orientation;
    /// The frame's time, seconds from the start; and the poster time it was chosen for.
    double time, target;
    /// Whether it is a keyframe.
    int32_t keyframe;
} photo_video_frame;

/// The poster frame: the first keyframe at or after the poster time (1 s; 10 % of the duration
/// for clips under 10 s; 0 for clips under 1 s), else (no keyframe after it) the frame at that
/// time decoded from the keyframe before it. One decoder thread. 0 on success (free
/// `out->pixels` with `photo_video_free`); a negative code and a message otherwise
/// (PHOTO_VIDEO_TOO_LARGE with the refused size in `out->width` and `out->height`).
int photo_video_poster(const photo_video_input *in, const photo_poster_options *options, photo_video_frame *out,
                       char *error, size_t error_len);

/// The file's cover picture (MP4 `covr`, a Matroska image attachment): its encoded bytes
/// (JPEG, PNG…) in `*data` (free with `photo_video_free`), at most `max_bytes`. 0 on success,
/// PHOTO_VIDEO_NO_STREAM when there is none.
int photo_video_cover(const photo_video_input *in, int64_t timeout_ms, int64_t max_bytes, uint8_t **data, size_t *size,
                      char *error, size_t error_len);

void photo_video_free(void *p);
