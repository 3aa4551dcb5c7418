#include "CVideo.h"

#include <dlfcn.h>
#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

// MARK: FFmpeg, loaded at the first video

/// FFmpeg's libraries are opened when the first video is read, not when photod starts: a
/// library of photos never maps them (nor the hundred libraries their codecs pull in: libssh,
/// gnutls, libgcrypt, x265...). The functions this file calls, by library.
#define FFMPEG_FUNCTIONS(X) \
    X(avutil, av_dict_get) \
    X(avutil, av_display_rotation_get) \
    X(avutil, av_frame_alloc) \
    X(avutil, av_frame_free) \
    X(avutil, av_frame_move_ref) \
    X(avutil, av_frame_unref) \
    X(avutil, av_free) \
    X(avutil, av_freep) \
    X(avutil, av_get_pix_fmt_name) \
    X(avutil, av_log_set_level) \
    X(avutil, av_malloc) \
    X(avutil, av_max_alloc) \
    X(avutil, av_pix_fmt_desc_get) \
    X(avutil, av_strerror) \
    X(avcodec, av_packet_alloc) \
    X(avcodec, av_packet_free) \
    X(avcodec, av_packet_unref) \
    X(avcodec, avcodec_alloc_context3) \
    X(avcodec, avcodec_find_decoder) \
    X(avcodec, avcodec_flush_buffers) \
    X(avcodec, avcodec_free_context) \
    X(avcodec, avcodec_get_name) \
    X(avcodec, avcodec_open2) \
    X(avcodec, avcodec_parameters_to_context) \
    X(avcodec, avcodec_receive_frame) \
    X(avcodec, avcodec_send_packet) \
    X(avformat, av_read_frame) \
    X(avformat, av_seek_frame) \
    X(avformat, av_stream_get_side_data) \
    X(avformat, avformat_alloc_context) \
    X(avformat, avformat_close_input) \
    X(avformat, avformat_find_stream_info) \
    X(avformat, avformat_open_input) \
    X(avformat, avformat_seek_file) \
    X(avformat, avio_alloc_context) \
    X(avformat, avio_context_free) \
    X(swscale, sws_freeContext) \
    X(swscale, sws_getCoefficients) \
    X(swscale, sws_getColorspaceDetails) \
    X(swscale, sws_getContext) \
    X(swscale, sws_isSupportedInput) \
    X(swscale, sws_scale) \
    X(swscale, sws_setColorspaceDetails)

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

static struct {
#define FIELD(lib, name) __typeof__(name) *name;
    FFMPEG_FUNCTIONS(FIELD)
#undef FIELD
} ff;

/// Whether they are loaded; if not, why.
static int ff_ok;
static char ff_failure[512];

/// Once per process, on whichever thread gets here first: opens the libraries of the major
/// versions this file was built against (their sonames), finds every function, then quiets
/// FFmpeg and caps its allocations.
static void load(void) {
    static const char *const sonames[] = {
        "libavutil.so." STRINGIFY(LIBAVUTIL_VERSION_MAJOR), "libavcodec.so." STRINGIFY(LIBAVCODEC_VERSION_MAJOR),
        "libavformat.so." STRINGIFY(LIBAVFORMAT_VERSION_MAJOR), "libswscale.so." STRINGIFY(LIBSWSCALE_VERSION_MAJOR),
    };
    void *handles[4];
    for (int i = 0; i < 4; i++) {
        handles[i] = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
        if (!handles[i]) {
            snprintf(ff_failure, sizeof ff_failure, "FFmpeg's %s cannot be loaded: %s", sonames[i], dlerror());
            return;
        }
    }
    void *avutil = handles[0], *avcodec = handles[1], *avformat = handles[2], *swscale = handles[3];
#define FIND(lib, name) \
    if (!(ff.name = (__typeof__(name) *)dlsym(lib, #name))) { \
        snprintf(ff_failure, sizeof ff_failure, "FFmpeg's %s has no %s", #lib, #name); \
        return; \
    }
    FFMPEG_FUNCTIONS(FIND)
#undef FIND
    // photod reports failures itself; FFmpeg's own lines would go to stderr, the journal.
    ff.av_log_set_level(AV_LOG_QUIET);
    // No single allocation of FFmpeg's over 128 MiB: a crafted header's entry count (a 3 KB
    // MP4 asked for 256 MiB of sample table) fails instead. A frame plane of 8K video is
    // 33 MiB; the largest real sample tables, tens of MiB.
    ff.av_max_alloc(128 << 20);
    ff_ok = 1;
}

/// Whether FFmpeg is loaded (loading it the first time); if not, `ff_failure` says why.
static int ffmpeg_loaded(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load);
    return ff_ok;
}

// MARK: Limits

/// The deadlines of one call: wall time, and CPU time of the calling thread (every decode runs
/// on it: one decoder thread).
typedef struct {
    int64_t wall_ns, cpu_ns;
    int expired;
} limits;

static int64_t clock_ns(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static limits make_limits(int64_t wall_ms, int64_t cpu_ms) {
    limits l;
    l.wall_ns = clock_ns(CLOCK_MONOTONIC) + (wall_ms > 0 ? wall_ms : 5000) * 1000000;
    l.cpu_ns = cpu_ms > 0 ? clock_ns(CLOCK_THREAD_CPUTIME_ID) + cpu_ms * 1000000 : INT64_MAX;
    l.expired = 0;
    return l;
}

static int past(limits *l) {
    if (!l->expired && (clock_ns(CLOCK_MONOTONIC) > l->wall_ns || clock_ns(CLOCK_THREAD_CPUTIME_ID) > l->cpu_ns)) l->expired = 1;
    return l->expired;
}

/// libavformat's interrupt callback: nonzero once a deadline has passed.
static int interrupted(void *opaque) { return past((limits *)opaque); }

// MARK: Errors

static void set_error(char *error, size_t len, const char *what, int code) {
    if (!error || len == 0) return;
    char reason[AV_ERROR_MAX_STRING_SIZE] = {0};
    ff.av_strerror(code, reason, sizeof reason);
    snprintf(error, len, "%s: %s", what, reason);
}

static int fail(char *error, size_t len, int code, const char *message) {
    if (error && len) snprintf(error, len, "%s", message);
    return code;
}

// MARK: Input

/// A read position over a photo_video_input.
typedef struct {
    photo_video_input in;
    int64_t pos;
} source;

static int read_source(void *opaque, uint8_t *buf, int size) {
    source *s = opaque;
    if (s->pos >= s->in.size) return AVERROR_EOF;
    int64_t want = s->in.size - s->pos < size ? s->in.size - s->pos : size;
    if (s->in.fd >= 0) {
        ssize_t n;
        do { n = pread(s->in.fd, buf, (size_t)want, (off_t)s->pos); } while (n < 0 && errno == EINTR);
        if (n < 0) return AVERROR(errno);
        if (n == 0) return AVERROR_EOF;  // cut short since it was measured
        s->pos += n;
        return (int)n;
    }
    memcpy(buf, s->in.data + s->pos, (size_t)want);
    s->pos += want;
    return (int)want;
}

static int64_t seek_source(void *opaque, int64_t offset, int whence) {
    source *s = opaque;
    whence &= ~AVSEEK_FORCE;
    if (whence == AVSEEK_SIZE) return s->in.size;
    int64_t to = whence == SEEK_SET ? offset : whence == SEEK_CUR ? s->pos + offset : whence == SEEK_END ? s->in.size + offset : -1;
    if (to < 0) return AVERROR(EINVAL);
    s->pos = to;
    return to;
}

/// An open container and what it reads through.
typedef struct {
    AVFormatContext *fmt;
    AVIOContext *io;
    source src;
    limits lim;
} container;

static void close_container(container *c) {
    if (c->fmt) ff.avformat_close_input(&c->fmt);
    if (c->io) {
        ff.av_freep(&c->io->buffer);
        ff.avio_context_free(&c->io);
    }
}

/// Opens `in` into `c` (zeroed first); on failure everything is freed.
static int open_container(container *c, const photo_video_input *in, int64_t wall_ms, int64_t cpu_ms, char *error, size_t len) {
    memset(c, 0, sizeof *c);
    if (!ffmpeg_loaded()) return fail(error, len, PHOTO_VIDEO_UNAVAILABLE, ff_failure);
    c->src.in = *in;
    c->lim = make_limits(wall_ms, cpu_ms);
    if (in->size <= 0) return fail(error, len, AVERROR_INVALIDDATA, "the file is empty");
    if (in->fd < 0 && !in->data) return fail(error, len, AVERROR(EINVAL), "no input");
    const int buffer_size = 64 * 1024;
    uint8_t *buffer = ff.av_malloc(buffer_size);
    if (!buffer) return fail(error, len, AVERROR(ENOMEM), "out of memory");
    c->io = ff.avio_alloc_context(buffer, buffer_size, 0, &c->src, read_source, NULL, seek_source);
    if (!c->io) {
        ff.av_free(buffer);
        return fail(error, len, AVERROR(ENOMEM), "out of memory");
    }
    c->fmt = ff.avformat_alloc_context();
    if (!c->fmt) {
        close_container(c);
        return fail(error, len, AVERROR(ENOMEM), "out of memory");
    }
    c->fmt->pb = c->io;
    c->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    c->fmt->interrupt_callback.callback = interrupted;
    c->fmt->interrupt_callback.opaque = &c->lim;
    // Enough to know the streams' codecs and rates; not the whole file.
    c->fmt->probesize = 5 * 1024 * 1024;
    c->fmt->max_analyze_duration = 5 * AV_TIME_BASE;
    int rc = ff.avformat_open_input(&c->fmt, NULL, NULL, NULL);
    if (rc < 0) {
        // avformat_open_input frees the context on failure, not the custom I/O.
        c->fmt = NULL;
        close_container(c);
        if (c->lim.expired) return fail(error, len, PHOTO_VIDEO_TIMEOUT, "reading the container took too long");
        set_error(error, len, "cannot open the container", rc);
        return rc;
    }
    return 0;
}

/// The stream a viewer plays: not a cover picture; the default one first, then the largest.
static int best_video_stream(AVFormatContext *fmt) {
    int best = -1;
    int64_t best_score = -1;
    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        AVStream *st = fmt->streams[i];
        if (st->codecpar->codec_type != AVMEDIA_TYPE_VIDEO || (st->disposition & AV_DISPOSITION_ATTACHED_PIC)) continue;
        int64_t score = (int64_t)st->codecpar->width * st->codecpar->height + 1;
        if (st->disposition & AV_DISPOSITION_DEFAULT) score += (int64_t)1 << 40;
        if (score > best_score) {
            best_score = score;
            best = (int)i;
        }
    }
    return best;
}

/// Whether the headers leave out what the caller needs of stream `v`.
static int incomplete(AVStream *st) {
    AVCodecParameters *par = st->codecpar;
    return par->codec_id == AV_CODEC_ID_NONE || par->width <= 0 || par->height <= 0;
}

/// The display matrix of `st` as an EXIF orientation, turned as `ffmpeg` autorotates
/// (fftools' transpose/hflip/vflip choices), and its clockwise rotation in degrees.
static int32_t orientation_of(AVStream *st, int32_t *rotation) {
    *rotation = 0;
    const int32_t *m = (const int32_t *)ff.av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    if (!m) return 1;
    double ccw = ff.av_display_rotation_get(m);
    if (isnan(ccw)) return 1;
    double cw = -ccw;
    cw = fmod(cw, 360);
    if (cw < 0) cw += 360;
    long quarter = lround(cw / 90.0) % 4;
    *rotation = (int32_t)quarter * 90;
    switch (quarter) {
    case 1: return m[3] > 0 ? 5 : 6;   // transpose=cclock_flip, else clock
    case 2: return m[0] < 0 && m[4] < 0 ? 3 : m[0] < 0 ? 2 : m[4] < 0 ? 4 : 1;
    case 3: return m[3] < 0 ? 7 : 8;   // transpose=clock_flip, else cclock
    default: return m[4] < 0 ? 4 : 1;  // vflip
    }
}

/// A usable pixel aspect ratio, or 0/0.
static AVRational usable(AVRational r) {
    if (r.num > 0 && r.den > 0 && (int64_t)r.num <= 8 * (int64_t)r.den && 8 * (int64_t)r.num >= r.den) return r;
    return (AVRational){0, 0};
}

/// The pixel aspect ratio of a stream (and a decoded frame of it, when given): the frame's,
/// the container's, the codec's; 1/1 when none says (anamorphic DV and DVD video say 8/9, 32/27…).
static AVRational aspect_of(AVStream *st, const AVFrame *f) {
    AVRational r = f ? usable(f->sample_aspect_ratio) : (AVRational){0, 0};
    if (!r.num) r = usable(st->sample_aspect_ratio);
    if (!r.num) r = usable(st->codecpar->sample_aspect_ratio);
    return r.num ? r : (AVRational){1, 1};
}

/// A width in square pixels.
static int32_t widen(int32_t w, AVRational r) {
    if (r.num == r.den) return w;
    int64_t v = llround((double)w * r.num / r.den);
    return (int32_t)(v < 1 ? 1 : v > INT32_MAX / 2 ? INT32_MAX / 2 : v);
}

static double duration_of(AVFormatContext *fmt, AVStream *st) {
    if (fmt->duration > 0 && fmt->duration != AV_NOPTS_VALUE) return (double)fmt->duration / AV_TIME_BASE;
    if (st && st->duration > 0 && st->duration != AV_NOPTS_VALUE) return st->duration * av_q2d(st->time_base);
    return 0;
}

static void copy_name(char *dst, size_t len, const char *src) { snprintf(dst, len, "%s", src ? src : ""); }

// MARK: Probe

int photo_video_probe(const photo_video_input *in, int64_t timeout_ms, photo_video_info *out, char *error, size_t error_len) {
    memset(out, 0, sizeof *out);
    if (error && error_len) error[0] = 0;
    container c;
    int rc = open_container(&c, in, timeout_ms, 0, error, error_len);
    if (rc < 0) return rc;
    AVFormatContext *fmt = c.fmt;
    int v = best_video_stream(fmt);
    // Most containers name the codec and size in their headers (MP4's `stsd`, Matroska's
    // tracks): reading packets to find them is 10-50 times slower than the whole probe.
    if (v < 0 || incomplete(fmt->streams[v])) {
        rc = ff.avformat_find_stream_info(fmt, NULL);
        if (rc < 0) {
            close_container(&c);
            if (c.lim.expired) return fail(error, error_len, PHOTO_VIDEO_TIMEOUT, "reading the streams took too long");
            set_error(error, error_len, "cannot read the streams", rc);
            return rc;
        }
        v = best_video_stream(fmt);
    }
    if (v < 0) {
        close_container(&c);
        return fail(error, error_len, PHOTO_VIDEO_NO_STREAM, "no video stream");
    }
    AVStream *vs = fmt->streams[v];
    AVCodecParameters *par = vs->codecpar;
    // 10-bit HDR is told by its transfer and depth; the depth of HEVC and AV1 is in their
    // bitstream, which only the stream analysis reads (a few HDR clips, not every video).
    int hdr_transfer = par->color_trc == AVCOL_TRC_SMPTE2084 || par->color_trc == AVCOL_TRC_ARIB_STD_B67;
    // (The analysis only appends streams: `v` stays the same stream.)
    if (hdr_transfer && par->bits_per_raw_sample <= 0 && par->format < 0) ff.avformat_find_stream_info(fmt, NULL);
    copy_name(out->video_codec, sizeof out->video_codec, ff.avcodec_get_name(par->codec_id));
    copy_name(out->container, sizeof out->container, fmt->iformat ? fmt->iformat->name : "");
    out->width = par->width;
    out->height = par->height;
    AVRational r = vs->avg_frame_rate.num > 0 && vs->avg_frame_rate.den > 0 ? vs->avg_frame_rate : vs->r_frame_rate;
    out->frame_rate = (r.num > 0 && r.den > 0) ? av_q2d(r) : 0;
    out->duration = duration_of(fmt, vs);
    if (fmt->bit_rate > 0) {
        out->bit_rate = fmt->bit_rate;
    } else if (out->duration > 0) {
        // What libavformat's own estimate is when the container does not say: the file's
        // bits over its duration.
        out->bit_rate = (int64_t)((double)in->size * 8 / out->duration);
    } else if (par->bit_rate > 0) {
        out->bit_rate = par->bit_rate;
    }
    out->orientation = orientation_of(vs, &out->rotation);
    AVDictionaryEntry *fps = ff.av_dict_get(fmt->metadata, "com.android.capture.fps", NULL, 0);
    if (!fps) fps = ff.av_dict_get(vs->metadata, "com.android.capture.fps", NULL, 0);
    if (fps && fps->value) {
        double f = strtod(fps->value, NULL);
        out->capture_fps = isfinite(f) && f > 0 && f < 100000 ? f : 0;
    }
    out->color_transfer = par->color_trc;
    out->bits_per_sample = par->bits_per_raw_sample;
    if (out->bits_per_sample <= 0) {
        const AVPixFmtDescriptor *d = par->format >= 0 ? ff.av_pix_fmt_desc_get((enum AVPixelFormat)par->format) : NULL;
        out->bits_per_sample = d ? d->comp[0].depth : 0;
    }
    int best_audio = -1;
    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        AVStream *st = fmt->streams[i];
        if (st->codecpar->codec_type == AVMEDIA_TYPE_AUDIO && st->codecpar->codec_id != AV_CODEC_ID_NONE &&
            (best_audio < 0 || (st->disposition & AV_DISPOSITION_DEFAULT && !(fmt->streams[best_audio]->disposition & AV_DISPOSITION_DEFAULT))))
            best_audio = (int)i;
        if (st->disposition & AV_DISPOSITION_ATTACHED_PIC) out->has_cover_art = 1;
        if (st->codecpar->codec_type == AVMEDIA_TYPE_ATTACHMENT) {
            AVDictionaryEntry *mime = ff.av_dict_get(st->metadata, "mimetype", NULL, 0);
            if (mime && mime->value && strncmp(mime->value, "image/", 6) == 0) out->has_cover_art = 1;
        }
    }
    if (best_audio >= 0) copy_name(out->audio_codec, sizeof out->audio_codec, ff.avcodec_get_name(fmt->streams[best_audio]->codecpar->codec_id));
    AVRational sar = aspect_of(vs, NULL);
    out->sar_num = sar.num;
    out->sar_den = sar.den;
    close_container(&c);
    return 0;
}

// MARK: Poster

/// The poster time for a clip of `duration` seconds (0: unknown).
static double poster_time(double duration) {
    if (duration <= 0) return 1.0;
    if (duration < 1) return 0;
    if (duration < 10) return duration * 0.1;
    return 1.0;
}

/// `frame` as RGB at `w`×`h` into a new buffer.
static int to_rgb(AVFrame *frame, int w, int h, uint8_t **pixels, char *error, size_t len) {
    enum AVPixelFormat format = (enum AVPixelFormat)frame->format;
    if (!ff.sws_isSupportedInput(format)) {
        const char *name = ff.av_get_pix_fmt_name(format);
        if (error && len) snprintf(error, len, "the frame's pixel format %s cannot be converted", name ? name : "?");
        return AVERROR_PATCHWELCOME;
    }
    // Shrinking by a large factor: area averaging here, the exact size in photod's resampler.
    int flags = (w < frame->width || h < frame->height) ? SWS_AREA : SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT;
    struct SwsContext *sws = ff.sws_getContext(frame->width, frame->height, format, w, h, AV_PIX_FMT_RGB24, flags, NULL, NULL, NULL);
    if (!sws) return fail(error, len, AVERROR(ENOMEM), "cannot convert the frame to RGB");
    // As `ffmpeg` converts: the frame's own matrix, BT.601 when it names none; its range.
    int space = frame->colorspace == AVCOL_SPC_UNSPECIFIED || frame->colorspace == AVCOL_SPC_RGB ? SWS_CS_DEFAULT : frame->colorspace;
    int full = frame->color_range == AVCOL_RANGE_JPEG || format == AV_PIX_FMT_YUVJ420P || format == AV_PIX_FMT_YUVJ422P ||
               format == AV_PIX_FMT_YUVJ444P || format == AV_PIX_FMT_YUVJ440P || format == AV_PIX_FMT_YUVJ411P;
    int *inv = NULL, *table = NULL, src_range = 0, dst_range = 0, brightness = 0, contrast = 0, saturation = 0;
    if (ff.sws_getColorspaceDetails(sws, &inv, &src_range, &table, &dst_range, &brightness, &contrast, &saturation) >= 0) {
        ff.sws_setColorspaceDetails(sws, ff.sws_getCoefficients(space), full, table, 1, brightness, contrast, saturation);
    }
    size_t bytes = (size_t)w * (size_t)h * 3;
    uint8_t *out = malloc(bytes + 64);  // swscale may write a few bytes past a row's end
    if (!out) {
        ff.sws_freeContext(sws);
        return fail(error, len, AVERROR(ENOMEM), "out of memory");
    }
    uint8_t *dst[4] = {out, NULL, NULL, NULL};
    int stride[4] = {w * 3, 0, 0, 0};
    int rows = ff.sws_scale(sws, (const uint8_t *const *)frame->data, frame->linesize, 0, frame->height, dst, stride);
    ff.sws_freeContext(sws);
    if (rows != h) {
        free(out);
        return fail(error, len, AVERROR_INVALIDDATA, "cannot convert the frame to RGB");
    }
    *pixels = out;
    return 0;
}

/// The decoded frame's time in seconds (nan when it has none).
static double frame_seconds(AVFrame *f, AVStream *st) {
    int64_t t = f->best_effort_timestamp != AV_NOPTS_VALUE ? f->best_effort_timestamp : f->pts;
    if (t == AV_NOPTS_VALUE) return NAN;
    int64_t start = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
    return (t - start) * av_q2d(st->time_base);
}

int photo_video_poster(const photo_video_input *in, const photo_poster_options *o, photo_video_frame *out, char *error,
                       size_t error_len) {
    memset(out, 0, sizeof *out);
    if (error && error_len) error[0] = 0;
    container c;
    int rc = open_container(&c, in, o->wall_ms, o->cpu_ms, error, error_len);
    if (rc < 0) return rc;
    AVFormatContext *fmt = c.fmt;
    AVCodecContext *dec = NULL;
    AVPacket *pkt = NULL;
    AVFrame *frame = NULL, *kept = NULL;
    int v = best_video_stream(fmt);
    if (v < 0 || incomplete(fmt->streams[v])) {
        rc = ff.avformat_find_stream_info(fmt, NULL);
        if (rc < 0) {
            if (c.lim.expired) rc = fail(error, error_len, PHOTO_VIDEO_TIMEOUT, "reading the streams took too long");
            else set_error(error, error_len, "cannot read the streams", rc);
            goto done;
        }
        v = best_video_stream(fmt);
    }
    if (v < 0) {
        rc = fail(error, error_len, PHOTO_VIDEO_NO_STREAM, "the file has no video stream");
        goto done;
    }
    AVStream *st = fmt->streams[v];
    AVCodecParameters *par = st->codecpar;
    out->coded_width = par->width;
    out->coded_height = par->height;
    int32_t rotation;
    out->orientation = orientation_of(st, &rotation);
    if (par->width > 0 && par->height > 0 && (int64_t)par->width * par->height > o->pixel_limit) {
        rc = PHOTO_VIDEO_TOO_LARGE;
        out->width = par->width;
        out->height = par->height;
        if (error && error_len) snprintf(error, error_len, "the video is %dx%d", par->width, par->height);
        goto done;
    }
    const AVCodec *codec = ff.avcodec_find_decoder(par->codec_id);
    if (!codec) {
        rc = PHOTO_VIDEO_NO_DECODER;
        if (error && error_len) snprintf(error, error_len, "FFmpeg here has no %s decoder", ff.avcodec_get_name(par->codec_id));
        goto done;
    }
    dec = ff.avcodec_alloc_context3(codec);
    if (!dec || ff.avcodec_parameters_to_context(dec, par) < 0) {
        rc = fail(error, error_len, AVERROR(ENOMEM), "cannot set up the decoder");
        goto done;
    }
    dec->thread_count = 1;
    dec->thread_type = 0;
    dec->max_pixels = o->pixel_limit > 0 && o->pixel_limit < INT64_MAX ? o->pixel_limit : 0;
    dec->pkt_timebase = st->time_base;
    int lowres = 0;
    if (codec->max_lowres > 0 && o->need_width > 0 && o->need_height > 0 && par->width > 0 && par->height > 0) {
        while (lowres < codec->max_lowres && (par->width >> (lowres + 1)) >= o->need_width &&
               (par->height >> (lowres + 1)) >= o->need_height)
            lowres++;
    }
    dec->lowres = lowres;
    rc = ff.avcodec_open2(dec, codec, NULL);
    if (rc < 0) {
        set_error(error, error_len, "cannot open the decoder", rc);
        goto done;
    }
    for (unsigned i = 0; i < fmt->nb_streams; i++)
        if ((int)i != v) fmt->streams[i]->discard = AVDISCARD_ALL;

    double target = poster_time(duration_of(fmt, st));
    out->target = target;
    // The first keyframe at or after the poster time; when there is none after it, the frame
    // at that time, decoded from the keyframe before it (non-reference frames skipped on the
    // way); when the container cannot seek, from where it is.
    int64_t start = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
    if (target > 0) {
        int64_t ts = start + (int64_t)llround(target / av_q2d(st->time_base));
        if (ff.av_seek_frame(fmt, v, ts, 0) < 0) {
            if (ff.av_seek_frame(fmt, v, ts, AVSEEK_FLAG_BACKWARD) >= 0) {
                dec->skip_frame = AVDISCARD_NONREF;
            } else {
                // Neither seek worked: from the start (a failed seek may have left the reader
                // anywhere), decoding up to the poster time.
                ff.avformat_seek_file(fmt, v, INT64_MIN, start, start, 0);
                dec->skip_frame = AVDISCARD_NONREF;
            }
        }
    }
    pkt = ff.av_packet_alloc();
    frame = ff.av_frame_alloc();
    kept = ff.av_frame_alloc();
    if (!pkt || !frame || !kept) {
        rc = fail(error, error_len, AVERROR(ENOMEM), "out of memory");
        goto done;
    }
    int have_kept = 0, found = 0, draining = 0, bad = 0, restarted = 0;
    rc = 0;
    while (!found) {
        if (past(&c.lim)) {
            rc = fail(error, error_len, PHOTO_VIDEO_TIMEOUT, "the decode ran past its time limit");
            goto done;
        }
        if (!draining) {
            int r = ff.av_read_frame(fmt, pkt);
            if (r < 0) {
                if (c.lim.expired) {
                    rc = fail(error, error_len, PHOTO_VIDEO_TIMEOUT, "reading the video took too long");
                    goto done;
                }
                draining = 1;  // the end (or an unreadable rest): what the decoder holds
                ff.avcodec_send_packet(dec, NULL);
            } else {
                if (pkt->stream_index == v) {
                    int s = ff.avcodec_send_packet(dec, pkt);
                    if (s < 0 && s != AVERROR(EAGAIN) && ++bad > 64) {
                        ff.av_packet_unref(pkt);
                        set_error(error, error_len, "the video data is damaged", s);
                        rc = s;
                        goto done;
                    }
                }
                ff.av_packet_unref(pkt);
            }
        }
        while (1) {
            int r = ff.avcodec_receive_frame(dec, frame);
            if (r == AVERROR(EAGAIN)) break;
            if (r == AVERROR_EOF) goto drained;
            if (r < 0) {
                if (++bad > 64) {
                    set_error(error, error_len, "the video data is damaged", r);
                    rc = r;
                    goto done;
                }
                if (draining) goto drained;
                break;
            }
            if (frame->width <= 0 || frame->height <= 0) {
                ff.av_frame_unref(frame);
                continue;
            }
            if ((int64_t)frame->width * frame->height > o->pixel_limit) {
                rc = PHOTO_VIDEO_TOO_LARGE;
                out->width = frame->width;
                out->height = frame->height;
                if (error && error_len) snprintf(error, error_len, "the video's frame is %dx%d", frame->width, frame->height);
                goto done;
            }
            double t = frame_seconds(frame, st);
            ff.av_frame_unref(kept);
            ff.av_frame_move_ref(kept, frame);
            have_kept = 1;
            if (isnan(t) || t >= target - 1e-6) {
                found = 1;
                break;
            }
        }
        continue;
    drained:
        if (!have_kept && target > 0 && !restarted) {
            // A seek that left no keyframe before the end (a transport stream seeks by time
            // stamps, not to keyframes, and an H.264 clip may have one IDR frame): from the first
            // byte again where the container can (its first time stamp may follow the IDR's
            // packet), else from its start, decoding up to the poster time.
            restarted = 1;
            ff.avcodec_flush_buffers(dec);
            if (ff.av_seek_frame(fmt, v, 0, AVSEEK_FLAG_BYTE) < 0) ff.avformat_seek_file(fmt, v, INT64_MIN, start, start, 0);
            dec->skip_frame = AVDISCARD_NONREF;
            draining = 0;
            bad = 0;
            continue;
        }
        break;
    }
    if (!have_kept) {
        rc = fail(error, error_len, PHOTO_VIDEO_NO_FRAME, bad ? "no frame of the video could be decoded (damaged data)"
                                                               : "the video has no frame to decode");
        goto done;
    }
    // Past the end of a clip whose poster time is after its last frame: its last frame.
    out->time = frame_seconds(kept, st);
    if (isnan(out->time)) out->time = 0;
    out->keyframe = kept->key_frame ? 1 : 0;
    // Anamorphic pixels made square: the frame widened (or narrowed) to its display aspect.
    AVRational sar = aspect_of(st, kept);
    int w = widen(kept->width, sar), h = kept->height;
    if ((int64_t)w * h > o->pixel_limit) {
        rc = PHOTO_VIDEO_TOO_LARGE;
        out->width = w;
        out->height = h;
        if (error && error_len) snprintf(error, error_len, "the video's frame is %dx%d as shown", w, h);
        goto done;
    }
    if (o->need_width > 0 && o->need_height > 0) {
        int64_t kw = w / (2 * (int64_t)o->need_width), kh = h / (2 * (int64_t)o->need_height);
        int k = (int)(kw < kh ? kw : kh);
        if (k >= 2) {
            w = (w + k - 1) / k;
            h = (h + k - 1) / k;
        }
    }
    rc = to_rgb(kept, w, h, &out->pixels, error, error_len);
    if (rc == 0) {
        out->width = w;
        out->height = h;
        // A reduced-size decode: the coded size the frame stands for, in square pixels.
        if (out->coded_width <= 0 || out->coded_height <= 0) {
            out->coded_width = kept->width << lowres;
            out->coded_height = kept->height << lowres;
        }
        out->coded_width = widen(out->coded_width, sar);
    }
done:
    ff.av_frame_free(&frame);
    ff.av_frame_free(&kept);
    ff.av_packet_free(&pkt);
    ff.avcodec_free_context(&dec);
    close_container(&c);
    return rc;
}

// MARK: Cover

int photo_video_cover(const photo_video_input *in, int64_t timeout_ms, int64_t max_bytes, uint8_t **data, size_t *size,
                      char *error, size_t error_len) {
    *data = NULL;
    *size = 0;
    if (error && error_len) error[0] = 0;
    container c;
    int rc = open_container(&c, in, timeout_ms, 0, error, error_len);
    if (rc < 0) return rc;
    const uint8_t *bytes = NULL;
    int64_t count = 0;
    int named_cover = 0;
    for (unsigned i = 0; i < c.fmt->nb_streams; i++) {
        AVStream *st = c.fmt->streams[i];
        if ((st->disposition & AV_DISPOSITION_ATTACHED_PIC) && st->attached_pic.size > 0 && !bytes) {
            bytes = st->attached_pic.data;
            count = st->attached_pic.size;
        } else if (st->codecpar->codec_type == AVMEDIA_TYPE_ATTACHMENT && st->codecpar->extradata_size > 0) {
            AVDictionaryEntry *mime = ff.av_dict_get(st->metadata, "mimetype", NULL, 0);
            if (!mime || !mime->value || strncmp(mime->value, "image/", 6) != 0) continue;
            AVDictionaryEntry *name = ff.av_dict_get(st->metadata, "filename", NULL, 0);
            // Matroska's convention: the cover is the attachment named cover.*.
            int is_cover = name && name->value && strncasecmp(name->value, "cover", 5) == 0;
            if (!bytes || (is_cover && !named_cover)) {
                bytes = st->codecpar->extradata;
                count = st->codecpar->extradata_size;
                named_cover = is_cover;
            }
        }
    }
    if (!bytes) {
        rc = fail(error, error_len, PHOTO_VIDEO_NO_STREAM, "the file carries no cover picture");
    } else if (count > max_bytes) {
        rc = fail(error, error_len, PHOTO_VIDEO_TOO_LARGE, "the cover picture is too large");
    } else if (!(*data = malloc((size_t)count))) {
        rc = fail(error, error_len, AVERROR(ENOMEM), "out of memory");
    } else {
        memcpy(*data, bytes, (size_t)count);
        *size = (size_t)count;
    }
    close_container(&c);
    return rc;
}

void photo_video_free(void *p) { free(p); }
