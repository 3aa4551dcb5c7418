#include "CVideo.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/// libavformat's interrupt callback: nonzero once the deadline has passed.
static int past_deadline(void *opaque) {
    return now_ms() > *(const int64_t *)opaque;
}

static void set_error(char *error, size_t len, const char *what, int code) {
    if (!error || len == 0) return;
    char reason[AV_ERROR_MAX_STRING_SIZE] = {0};
    av_strerror(code, reason, sizeof reason);
    snprintf(error, len, "%s: %s", what, reason);
}

static void quiet_once(void) {
    static int done = 0;
    if (!done) {
        // photod reports failures itself; FFmpeg's own lines would go to stderr, the journal.
        av_log_set_level(AV_LOG_QUIET);
        done = 1;
    }
}

static void copy_name(char *dst, size_t len, const char *src) {
    if (!src) src = "";
    snprintf(dst, len, "%s", src);
}

int photo_video_probe(const char *path, int64_t timeout_ms, photo_video_info *out, char *error, size_t error_len) {
    quiet_once();
    memset(out, 0, sizeof *out);
    if (error && error_len) error[0] = 0;
    int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 5000);
    AVFormatContext *fmt = avformat_alloc_context();
    if (!fmt) {
        set_error(error, error_len, "out of memory", AVERROR(ENOMEM));
        return AVERROR(ENOMEM);
    }
    fmt->interrupt_callback.callback = past_deadline;
    fmt->interrupt_callback.opaque = &deadline;
    int rc = avformat_open_input(&fmt, path, NULL, NULL);
    if (rc < 0) {
        set_error(error, error_len, "cannot open the container", rc);
        return rc;  // avformat_open_input frees the context on failure
    }
    // Enough to know the streams' codecs and rates; not the whole file.
    fmt->probesize = 5 * 1024 * 1024;
    fmt->max_analyze_duration = 5 * AV_TIME_BASE;
    rc = avformat_find_stream_info(fmt, NULL);
    if (rc < 0) {
        set_error(error, error_len, "cannot read the streams", rc);
        avformat_close_input(&fmt);
        return rc;
    }
    int v = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (v < 0) {
        set_error(error, error_len, "no video stream", v);
        avformat_close_input(&fmt);
        return v;
    }
    AVStream *vs = fmt->streams[v];
    AVCodecParameters *par = vs->codecpar;
    copy_name(out->video_codec, sizeof out->video_codec, avcodec_get_name(par->codec_id));
    copy_name(out->container, sizeof out->container, fmt->iformat ? fmt->iformat->name : "");
    out->width = par->width;
    out->height = par->height;
    AVRational r = vs->avg_frame_rate.num > 0 && vs->avg_frame_rate.den > 0 ? vs->avg_frame_rate : vs->r_frame_rate;
    out->frame_rate = (r.num > 0 && r.den > 0) ? av_q2d(r) : 0;
    if (fmt->duration > 0) {
        out->duration = (double)fmt->duration / AV_TIME_BASE;
    } else if (vs->duration > 0) {
        out->duration = vs->duration * av_q2d(vs->time_base);
    }
    out->bit_rate = fmt->bit_rate > 0 ? fmt->bit_rate : (par->bit_rate > 0 ? par->bit_rate : 0);
    const uint8_t *matrix = av_stream_get_side_data(vs, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    if (matrix) {
        // av_display_rotation_get: counterclockwise degrees the frame must be turned; shown
        // clockwise as a phone's "rotate" tag says it.
        double ccw = av_display_rotation_get((const int32_t *)matrix);
        if (!isnan(ccw)) {
            long quarter = lround(-ccw / 90.0);
            out->rotation = (int32_t)(((quarter % 4) + 4) % 4) * 90;
        }
    }
    AVDictionaryEntry *fps = av_dict_get(fmt->metadata, "com.android.capture.fps", NULL, 0);
    if (!fps) fps = av_dict_get(vs->metadata, "com.android.capture.fps", NULL, 0);
    if (fps && fps->value) out->capture_fps = strtod(fps->value, NULL);
    out->color_transfer = par->color_trc;
    out->bits_per_sample = par->bits_per_raw_sample;
    if (out->bits_per_sample <= 0) {
        const AVPixFmtDescriptor *d = av_pix_fmt_desc_get((enum AVPixelFormat)par->format);
        if (d) out->bits_per_sample = d->comp[0].depth;
    }
    int a = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, -1, NULL, 0);
    if (a >= 0) copy_name(out->audio_codec, sizeof out->audio_codec, avcodec_get_name(fmt->streams[a]->codecpar->codec_id));
    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        if (fmt->streams[i]->disposition & AV_DISPOSITION_ATTACHED_PIC) out->has_cover_art = 1;
        if (fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_ATTACHMENT) {
            AVDictionaryEntry *mime = av_dict_get(fmt->streams[i]->metadata, "mimetype", NULL, 0);
            if (mime && mime->value && strncmp(mime->value, "image/", 6) == 0) out->has_cover_art = 1;
        }
    }
    avformat_close_input(&fmt);
    return 0;
}
