#include "CImaging.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct photo_resampler {
    uint32_t sw, sh, ch, ow, oh;
    uint8_t *out;
    /* Horizontal taps: output x covers source pixels start[x] ..< start[x] + count[x], the
       first weighted first[x], the last last[x], the others 1; norm[x] = 1 / sum of weights. */
    int32_t *start, *count;
    float *first, *last, *norm;
    /* Vertical: output row j covers [y0 + j * vspan, y0 + (j + 1) * vspan), the last one
       ending at y_end exactly. */
    double y0, vspan, y_end;
    uint32_t next_src, next_out;
    double weight; /* accumulated vertical weight of the current output row */
    float *hrow, *acc;
};

static inline uint8_t clamp_u8(float v) {
    if (!(v > 0.0f)) return 0; /* also NaN */
    if (v >= 255.0f) return 255;
    return (uint8_t)(v + 0.5f);
}

photo_resampler *photo_resampler_create(uint32_t sw, uint32_t sh, uint32_t ch,
                                        double cx, double cy, double cw, double chh,
                                        uint32_t ow, uint32_t oh, uint8_t *out) {
    if (sw == 0 || sh == 0 || ow == 0 || oh == 0 || (ch != 3 && ch != 4) || out == NULL) return NULL;
    if (!(cw > 0) || !(chh > 0) || !(cx >= 0) || !(cy >= 0)) return NULL;
    if (cx + cw > (double)sw + 1e-6 || cy + chh > (double)sh + 1e-6) return NULL;
    if (ow > (1u << 24) || oh > (1u << 24)) return NULL;
    photo_resampler *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->sw = sw; r->sh = sh; r->ch = ch; r->ow = ow; r->oh = oh; r->out = out;
    size_t n = ow;
    r->start = malloc(n * sizeof(int32_t));
    r->count = malloc(n * sizeof(int32_t));
    r->first = malloc(n * sizeof(float));
    r->last = malloc(n * sizeof(float));
    r->norm = malloc(n * sizeof(float));
    r->hrow = malloc(n * ch * sizeof(float));
    r->acc = calloc(n * ch, sizeof(float));
    if (!r->start || !r->count || !r->first || !r->last || !r->norm || !r->hrow || !r->acc) {
        photo_resampler_destroy(r);
        return NULL;
    }
    double span = cw / ow;
    double x_end = fmin(cx + cw, (double)sw);
    for (uint32_t x = 0; x < ow; x++) {
        double a = cx + x * span;
        double b = (x + 1 == ow) ? x_end : fmin(cx + (x + 1) * span, x_end);
        if (a < 0) a = 0;
        int32_t s = (int32_t)floor(a);
        int32_t e = (int32_t)ceil(b);
        if (s > (int32_t)sw - 1) s = (int32_t)sw - 1;
        if (e > (int32_t)sw) e = (int32_t)sw;
        if (e <= s) e = s + 1;
        if (b <= a) b = a + 1e-9; /* a degenerate span still samples one pixel */
        double f, l;
        if (e - s == 1) {
            f = b - a; l = 0;
        } else {
            f = (s + 1) - a; l = b - (e - 1);
        }
        if (f <= 0) f = 1e-9;
        double total = f + l + (e - s > 2 ? (double)(e - s - 2) : 0.0);
        r->start[x] = s;
        r->count[x] = e - s;
        r->first[x] = (float)f;
        r->last[x] = (float)l;
        r->norm[x] = (float)(1.0 / total);
    }
    r->y0 = cy;
    r->vspan = chh / oh;
    r->y_end = fmin(cy + chh, (double)sh);
    return r;
}

/* One source row -> hrow (ow pixels, normalised; RGB premultiplied by alpha for 4 channels). */
static void horizontal(photo_resampler *r, const uint8_t *row) {
    const uint32_t ow = r->ow;
    float *h = r->hrow;
    if (r->ch == 3) {
        for (uint32_t x = 0; x < ow; x++) {
            const uint8_t *p = row + (size_t)r->start[x] * 3;
            int32_t n = r->count[x];
            float w = r->first[x];
            float s0 = p[0] * w, s1 = p[1] * w, s2 = p[2] * w;
            if (n > 1) {
                uint64_t i0 = 0, i1 = 0, i2 = 0; /* integer sums of the interior: exact and fast */
                const uint8_t *q = p + 3;
                for (int32_t i = 1; i < n - 1; i++, q += 3) { i0 += q[0]; i1 += q[1]; i2 += q[2]; }
                float wl = r->last[x];
                s0 += (float)i0 + q[0] * wl;
                s1 += (float)i1 + q[1] * wl;
                s2 += (float)i2 + q[2] * wl;
            }
            float k = r->norm[x];
            h[0] = s0 * k; h[1] = s1 * k; h[2] = s2 * k;
            h += 3;
        }
    } else {
        for (uint32_t x = 0; x < ow; x++) {
            const uint8_t *p = row + (size_t)r->start[x] * 4;
            int32_t n = r->count[x];
            float w = r->first[x];
            float aw = p[3] * w;
            float s0 = p[0] * aw, s1 = p[1] * aw, s2 = p[2] * aw, s3 = aw;
            if (n > 1) {
                uint64_t i0 = 0, i1 = 0, i2 = 0;
                uint64_t i3 = 0;
                const uint8_t *q = p + 4;
                for (int32_t i = 1; i < n - 1; i++, q += 4) {
                    uint32_t a = q[3];
                    i0 += q[0] * a; i1 += q[1] * a; i2 += q[2] * a; i3 += a;
                }
                float al = q[3] * r->last[x];
                s0 += (float)i0 + q[0] * al;
                s1 += (float)i1 + q[1] * al;
                s2 += (float)i2 + q[2] * al;
                s3 += (float)i3 + al;
            }
            float k = r->norm[x];
            h[0] = s0 * k; h[1] = s1 * k; h[2] = s2 * k; h[3] = s3 * k;
            h += 4;
        }
    }
}

static void emit(photo_resampler *r) {
    uint8_t *o = r->out + (size_t)r->next_out * r->ow * r->ch;
    float k = r->weight > 0 ? (float)(1.0 / r->weight) : 0.0f;
    size_t n = (size_t)r->ow * r->ch;
    float *a = r->acc;
    if (r->ch == 3) {
        for (size_t i = 0; i < n; i++) o[i] = clamp_u8(a[i] * k);
    } else {
        for (size_t i = 0; i < n; i += 4) {
            float alpha = a[i + 3];
            if (alpha > 1e-6f) {
                float inv = 1.0f / alpha;
                o[i] = clamp_u8(a[i] * inv);
                o[i + 1] = clamp_u8(a[i + 1] * inv);
                o[i + 2] = clamp_u8(a[i + 2] * inv);
            } else {
                o[i] = o[i + 1] = o[i + 2] = 0;
            }
            o[i + 3] = clamp_u8(alpha * k);
        }
    }
    memset(r->acc, 0, n * sizeof(float));
    r->weight = 0;
    r->next_out++;
}

void photo_resampler_push_row(photo_resampler *r, const uint8_t *row) {
    if (r->next_src >= r->sh) return;
    double top = r->next_src, bottom = top + 1.0;
    r->next_src++;
    int computed = 0;
    const size_t n = (size_t)r->ow * r->ch;
    while (r->next_out < r->oh) {
        double j0 = r->y0 + r->next_out * r->vspan;
        double j1 = (r->next_out + 1 == r->oh) ? r->y_end : fmin(r->y0 + (r->next_out + 1) * r->vspan, r->y_end);
        if (bottom <= j0) return; /* above this output row */
        double w = fmin(bottom, j1) - fmax(top, j0);
        if (w > 0) {
            if (!computed) { horizontal(r, row); computed = 1; }
            float fw = (float)w;
            float *a = r->acc;
            const float *h = r->hrow;
            for (size_t i = 0; i < n; i++) a[i] += h[i] * fw;
            r->weight += w;
        }
        if (j1 <= bottom) { emit(r); continue; }
        return;
    }
}

void photo_resampler_push_rows(photo_resampler *r, const uint8_t *pixels, size_t stride, uint32_t rows) {
    for (uint32_t y = 0; y < rows && r->next_out < r->oh; y++) photo_resampler_push_row(r, pixels + (size_t)y * stride);
}

uint32_t photo_resampler_finish(photo_resampler *r) {
    if (r->next_out + 1 == r->oh && r->weight > 0) emit(r);
    return r->next_out;
}

void photo_resampler_destroy(photo_resampler *r) {
    if (!r) return;
    free(r->start); free(r->count); free(r->first); free(r->last); free(r->norm);
    free(r->hrow); free(r->acc);
    free(r);
}
