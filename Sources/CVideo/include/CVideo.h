#pragma once
// FFmpeg's libraries (libavformat, libavcodec, libavutil from Debian) behind a small C API:
// what Swift reads of a video without touching FFmpeg's structs and macros. This public
// header includes only <stdint.h> and <stddef.h> (../shared/SWIFT-LINUX.md, pitfall 1); the
// FFmpeg headers are included by video.c alone.
#include <stdint.h>
#include <stddef.h>

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
    /// Nominal frames per second (the stream's average, else its base rate); 0 when unknown.
    double frame_rate;
    /// Seconds; 0 when unknown.
    double duration;
    /// Bits per second (the container's, else the video stream's); 0 when unknown.
    int64_t bit_rate;
    /// Android's `com.android.capture.fps` (the rate a slow-motion or time-lapse clip was
    /// recorded at); 0 when absent.
    double capture_fps;
    /// The video's transfer characteristic (ITU-T H.273: 16 = PQ, 18 = HLG), and its bit depth.
    int32_t color_transfer;
    int32_t bits_per_sample;
    /// Whether the file carries an attached picture (MP4 `covr`, a Matroska cover attachment).
    int32_t has_cover_art;
} photo_video_info;

/// Reads `path`'s container and streams (no frame is decoded), giving up after `timeout_ms`
/// of wall time (a file on a stalled disk, a crafted container that loops). 0 on success;
/// otherwise a negative FFmpeg error and a message in `error` (NUL-terminated, at most
/// `error_len` bytes).
int photo_video_probe(const char *path, int64_t timeout_ms, photo_video_info *out, char *error, size_t error_len);
