#include "CGIF.h"

#include <gif_lib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct photo_gif {
    GifFileType *gif;
    const uint8_t *data;
    size_t size, pos;
    int transparent; /* the first frame's transparent index, or NO_TRANSPARENT_COLOR */
    photo_gif_info info;
};

static int on_read(GifFileType *gif, GifByteType *buf, int n) {
    struct photo_gif *g = gif->UserData;
    if (n <= 0 || g->pos >= g->size) return 0;
    size_t take = (size_t)n < g->size - g->pos ? (size_t)n : g->size - g->pos;
    memcpy(buf, g->data + g->pos, take);
    g->pos += take;
    return (int)take;
}

static int64_t cpu_now(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void fail(char *error, size_t error_size, const char *what, int code) {
    const char *detail = code ? GifErrorString(code) : NULL;
    if (error && error_size) snprintf(error, error_size, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
}

int photo_gif_open(const uint8_t *data, size_t size, int64_t cpu_deadline_ns, photo_gif **out, photo_gif_info *info,
                   char *error, size_t error_size) {
    *out = NULL;
    struct photo_gif *g = calloc(1, sizeof *g);
    if (!g) { fail(error, error_size, "out of memory", 0); return PHOTO_GIF_CORRUPT; }
    g->data = data;
    g->size = size;
    g->transparent = NO_TRANSPARENT_COLOR;
    int code = 0;
    g->gif = DGifOpen(g, on_read, &code);
    if (!g->gif) { fail(error, error_size, "cannot read the GIF header", code); free(g); return PHOTO_GIF_CORRUPT; }
    /* Records up to the first image: graphic control extensions say its transparent colour;
       the others (comments, application blocks, plain text) are skipped. */
    for (unsigned records = 0;; records++) {
        if ((records & 1023) == 1023 && cpu_now() > cpu_deadline_ns) {
            fail(error, error_size, "the blocks before the first frame took too long", 0);
            photo_gif_close(g);
            return PHOTO_GIF_TIMEOUT;
        }
        GifRecordType type;
        if (DGifGetRecordType(g->gif, &type) != GIF_OK) {
            fail(error, error_size, "the GIF ends before its first frame", g->gif->Error);
            photo_gif_close(g);
            return PHOTO_GIF_CORRUPT;
        }
        if (type == TERMINATE_RECORD_TYPE) {
            fail(error, error_size, "the GIF holds no frame", 0);
            photo_gif_close(g);
            return PHOTO_GIF_CORRUPT;
        }
        if (type == IMAGE_DESC_RECORD_TYPE) break;
        if (type != EXTENSION_RECORD_TYPE) {
            fail(error, error_size, "unknown GIF record", 0);
            photo_gif_close(g);
            return PHOTO_GIF_CORRUPT;
        }
        int function = 0;
        GifByteType *block = NULL;
        if (DGifGetExtension(g->gif, &function, &block) != GIF_OK) {
            fail(error, error_size, "a GIF extension block is damaged", g->gif->Error);
            photo_gif_close(g);
            return PHOTO_GIF_CORRUPT;
        }
        if (function == GRAPHICS_EXT_FUNC_CODE && block && block[0] >= 4) {
            GraphicsControlBlock gcb;
            if (DGifExtensionToGCB(block[0], block + 1, &gcb) == GIF_OK) g->transparent = gcb.TransparentColor;
        }
        while (block) {
            if (DGifGetExtensionNext(g->gif, &block) != GIF_OK) {
                fail(error, error_size, "a GIF extension block is damaged", g->gif->Error);
                photo_gif_close(g);
                return PHOTO_GIF_CORRUPT;
            }
        }
    }
    if (DGifGetImageDesc(g->gif) != GIF_OK) {
        fail(error, error_size, "the first frame's descriptor is damaged", g->gif->Error);
        photo_gif_close(g);
        return PHOTO_GIF_CORRUPT;
    }
    GifImageDesc *d = &g->gif->Image;
    if (d->Width <= 0 || d->Height <= 0 || d->Left < 0 || d->Top < 0) {
        fail(error, error_size, "the first frame is empty", 0);
        photo_gif_close(g);
        return PHOTO_GIF_CORRUPT;
    }
    if (!d->ColorMap && !g->gif->SColorMap) {
        fail(error, error_size, "the first frame has no colour table", 0);
        photo_gif_close(g);
        return PHOTO_GIF_CORRUPT;
    }
    /* GIF sizes are 16-bit: these sums cannot overflow. */
    uint32_t right = (uint32_t)d->Left + (uint32_t)d->Width, bottom = (uint32_t)d->Top + (uint32_t)d->Height;
    g->info.width = (uint32_t)g->gif->SWidth > right ? (uint32_t)g->gif->SWidth : right;
    g->info.height = (uint32_t)g->gif->SHeight > bottom ? (uint32_t)g->gif->SHeight : bottom;
    g->info.frame_left = (uint32_t)d->Left;
    g->info.frame_top = (uint32_t)d->Top;
    g->info.frame_width = (uint32_t)d->Width;
    g->info.frame_height = (uint32_t)d->Height;
    int covers = d->Left == 0 && d->Top == 0 && right == g->info.width && bottom == g->info.height;
    g->info.channels = g->transparent != NO_TRANSPARENT_COLOR || !covers ? 4 : 3;
    *info = g->info;
    *out = g;
    return PHOTO_GIF_OK;
}

int photo_gif_decode(photo_gif *g, uint8_t *out, int64_t cpu_deadline_ns, char *error, size_t error_size) {
    const photo_gif_info *in = &g->info;
    const uint32_t channels = in->channels;
    const ColorMapObject *map = g->gif->Image.ColorMap ? g->gif->Image.ColorMap : g->gif->SColorMap;
    memset(out, 0, (size_t)in->width * in->height * channels);
    GifPixelType *line = malloc(in->frame_width);
    if (!line) { fail(error, error_size, "out of memory", 0); return PHOTO_GIF_CORRUPT; }
    /* Interlaced frames come in four passes of rows. */
    static const uint32_t start[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
    int passes = g->gif->Image.Interlace ? 4 : 1;
    uint32_t done = 0;
    for (int pass = 0; pass < passes; pass++) {
        uint32_t first = passes == 1 ? 0 : start[pass], by = passes == 1 ? 1 : step[pass];
        for (uint32_t y = first; y < in->frame_height; y += by) {
            if ((done & 63) == 63 && cpu_now() > cpu_deadline_ns) {
                free(line);
                fail(error, error_size, "the frame took too long", 0);
                return PHOTO_GIF_TIMEOUT;
            }
            if (DGifGetLine(g->gif, line, (int)in->frame_width) != GIF_OK) {
                int code = g->gif->Error;
                free(line);
                /* Rows already drawn stay (viewers show a cut-off GIF's top); none at all is no image. */
                if (done > 0 && (code == D_GIF_ERR_READ_FAILED || code == D_GIF_ERR_EOF_TOO_SOON)) return PHOTO_GIF_OK;
                fail(error, error_size, "the frame's data is damaged", code);
                return PHOTO_GIF_CORRUPT;
            }
            uint8_t *row = out + ((size_t)(in->frame_top + y) * in->width + in->frame_left) * channels;
            for (uint32_t x = 0; x < in->frame_width; x++) {
                int index = line[x];
                uint8_t *p = row + (size_t)x * channels;
                if (index == g->transparent) continue; /* stays transparent black */
                if (index < map->ColorCount) {
                    p[0] = map->Colors[index].Red;
                    p[1] = map->Colors[index].Green;
                    p[2] = map->Colors[index].Blue;
                } /* an index past the table: black */
                if (channels == 4) p[3] = 255;
            }
            done++;
        }
    }
    free(line);
    return PHOTO_GIF_OK;
}

void photo_gif_close(photo_gif *g) {
    if (!g) return;
    int code = 0;
    if (g->gif) DGifCloseFile(g->gif, &code);
    free(g);
}
