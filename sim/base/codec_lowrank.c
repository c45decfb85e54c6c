/*
 * codec_lowrank.c -- the compressors whose payload is a transform of the
 * tensor (formats in codec.h): powersgd's shape rule, sizes and decoder
 * (its factors are computed by the trainer, models/compress.c, from every
 * replica's matrix), and demo's chunked DCT-II with the largest
 * coefficients of each chunk kept.
 *
 * The DCT is the O(len^2) sum per chunk over a table of the 4 len cosines
 * cos(pi i / (2 len)): the angle pi (2j + 1) k / (2 len) is reduced to
 * its index ((2j + 1) k) mod 4 len exactly, so every chunk of a length
 * reads the same doubles; sums run in index order in double.
 */
#include "sim/base/codec.h"
#include "sim/base/codec_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

uint64_t codec_rank(codec_spec c) {
    return c.rank ? c.rank : CODEC_RANK;
}

uint64_t codec_demo_chunk(codec_spec c) {
    return c.demo_chunk ? c.demo_chunk : CODEC_DEMO_CHUNK;
}

uint64_t codec_demo_topk(codec_spec c) {
    return c.demo_topk ? c.demo_topk : CODEC_DEMO_TOPK;
}

int codec_lowrank_shape(codec_spec c, uint64_t n, uint64_t row_len,
                        uint64_t *rows, uint64_t *cols) {
    uint64_t w = row_len == 0 || row_len >= n ? n : row_len;
    *cols = w;
    *rows = w ? (n + w - 1) / w : 0;
    uint64_t r = codec_rank(c);
    /* r (rows + cols) < n, that is r <= (n - 1) / (rows + cols), without
     * the product's overflow */
    return *rows > 1 && r <= (n - 1) / (*rows + w);
}

uint64_t codec__lowrank_bytes(codec_spec c, uint64_t n, uint64_t row_len) {
    uint64_t rows, cols;
    if (!codec_lowrank_shape(c, n, row_len, &rows, &cols)) return 4 * n;
    return 4 * codec_rank(c) * (rows + cols);
}

static inline float load_f32(const uint8_t *p) {
    uint32_t u = codec__load_u32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline void store_f32(uint8_t *p, float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    codec__store_u32(p, u);
}

void codec__lowrank_decode(codec_spec c, const uint8_t *in, uint64_t n,
                           uint64_t row_len, float *out) {
    uint64_t rows, cols, r = codec_rank(c);
    if (!codec_lowrank_shape(c, n, row_len, &rows, &cols)) {
        for (uint64_t i = 0; i < n; i++) out[i] = load_f32(in + 4 * i);
        return;
    }
    const uint8_t *q = in + 4 * r * rows;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t a = i / cols, b = i % cols;
        double s = 0;
        for (uint64_t k = 0; k < r; k++)
            s += (double)load_f32(in + 4 * (a * r + k)) *
                 (double)load_f32(q + 4 * (b * r + k));
        out[i] = (float)s;
    }
}

/* ---- the DCT ------------------------------------------------------------- */

void codec_dct_table(uint64_t len, double *cosines) {
    for (uint64_t i = 0; i < 4 * len; i++)
        cosines[i] = cos(PI * (double)i / (double)(2 * len));
}

static double dct_scale(uint64_t k, uint64_t len) {
    return sqrt((k == 0 ? 1.0 : 2.0) / (double)len);
}

void codec_dct(const float *x, uint64_t len, const double *cosines,
               float *out) {
    for (uint64_t k = 0; k < len; k++) {
        double s = 0;
        for (uint64_t j = 0; j < len; j++)
            s += (double)x[j] * cosines[(2 * j + 1) * k % (4 * len)];
        out[k] = (float)(dct_scale(k, len) * s);
    }
}

void codec_idct(const float *x, uint64_t len, const double *cosines,
                float *out) {
    for (uint64_t j = 0; j < len; j++) {
        double s = 0;
        for (uint64_t k = 0; k < len; k++)
            s += dct_scale(k, len) * (double)x[k] *
                 cosines[(2 * j + 1) * k % (4 * len)];
        out[j] = (float)s;
    }
}

/* ---- demo ---------------------------------------------------------------- */

static uint64_t min_u64(uint64_t a, uint64_t b) {
    return a < b ? a : b;
}

/* Bytes of one index: uint8 for chunks of up to 256 values, else uint16. */
static uint64_t index_bytes(codec_spec c) {
    return codec_demo_chunk(c) <= 256 ? 1 : 2;
}

/* Coefficients kept of n values: kc per chunk, summed. */
static uint64_t demo_kept(codec_spec c, uint64_t n) {
    uint64_t L = codec_demo_chunk(c), k = codec_demo_topk(c);
    return n / L * min_u64(k, L) + min_u64(k, n % L);
}

uint64_t codec__demo_bytes(codec_spec c, uint64_t n) {
    return demo_kept(c, n) * (index_bytes(c) + 4);
}

/* The scratch of a demo encode or decode: the cosines of the full chunk
 * and of the shorter last one, a chunk of coefficients and of keys. */
typedef struct {
    uint64_t L, tail;
    double *cos_full, *cos_tail;
    float *coef;
    uint64_t *keys;
} demo_work;

static int demo_work_new(codec_spec c, uint64_t n, demo_work *w) {
    w->L = min_u64(codec_demo_chunk(c), n);
    w->tail = n % w->L;
    w->cos_full = malloc(4 * w->L * sizeof *w->cos_full);
    w->cos_tail = malloc((4 * w->tail + 1) * sizeof *w->cos_tail);
    w->coef = malloc(w->L * sizeof *w->coef);
    w->keys = malloc(w->L * sizeof *w->keys);
    if (!w->cos_full || !w->cos_tail || !w->coef || !w->keys) return -1;
    codec_dct_table(w->L, w->cos_full);
    if (w->tail) codec_dct_table(w->tail, w->cos_tail);
    return 0;
}

static void demo_work_free(demo_work *w) {
    free(w->cos_full);
    free(w->cos_tail);
    free(w->coef);
    free(w->keys);
}

static int key_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void store_index(uint8_t *p, uint64_t ib, uint64_t i) {
    p[0] = (uint8_t)i;
    if (ib == 2) p[1] = (uint8_t)(i >> 8);
}

/* The kc largest |coef[0..m)| (ties to the lower index) in increasing
 * index order: their indices at idx (ib bytes each), values at val. */
static void keep_chunk(demo_work *w, uint64_t m, uint64_t kc, uint64_t ib,
                       uint8_t *idx, uint8_t *val) {
    for (uint64_t i = 0; i < m; i++)
        w->keys[i] =
            (uint64_t)(0x7fffffffu - codec__magnitude(w->coef[i])) << 32 | i;
    qsort(w->keys, m, sizeof *w->keys, key_cmp);
    for (uint64_t j = 0; j < kc; j++) w->keys[j] &= 0xffffffffu;
    qsort(w->keys, kc, sizeof *w->keys, key_cmp);
    for (uint64_t j = 0; j < kc; j++) {
        store_index(idx + ib * j, ib, w->keys[j]);
        store_f32(val + 4 * j, w->coef[w->keys[j]]);
    }
}

uint64_t codec__demo_encode(codec_spec c, const float *x, uint64_t n,
                            uint8_t *out) {
    demo_work w;
    uint64_t k = codec_demo_topk(c), ib = index_bytes(c);
    uint64_t K = demo_kept(c, n), done = 0;
    int rc = demo_work_new(c, n, &w);
    for (uint64_t at = 0; rc == 0 && at < n; at += w.L) {
        uint64_t m = min_u64(w.L, n - at), kc = min_u64(k, m);
        codec_dct(x + at, m, m == w.L ? w.cos_full : w.cos_tail, w.coef);
        keep_chunk(&w, m, kc, ib, out + ib * done, out + ib * K + 4 * done);
        done += kc;
    }
    demo_work_free(&w);
    return rc ? 0 : K * (ib + 4);
}

void codec__demo_decode(codec_spec c, const uint8_t *in, uint64_t n,
                        float *out) {
    demo_work w;
    uint64_t k = codec_demo_topk(c), ib = index_bytes(c);
    uint64_t K = demo_kept(c, n), done = 0;
    if (demo_work_new(c, n, &w)) {
        memset(out, 0, n * sizeof *out);
        demo_work_free(&w);
        return;
    }
    for (uint64_t at = 0; at < n; at += w.L) {
        uint64_t m = min_u64(w.L, n - at), kc = min_u64(k, m);
        memset(w.coef, 0, m * sizeof *w.coef);
        for (uint64_t j = 0; j < kc; j++, done++) {
            const uint8_t *p = in + ib * done;
            uint64_t i = ib == 2 ? (uint64_t)p[0] | (uint64_t)p[1] << 8 : p[0];
            if (i < m) w.coef[i] = load_f32(in + ib * K + 4 * done);
        }
        codec_idct(w.coef, m, m == w.L ? w.cos_full : w.cos_tail, out + at);
    }
    demo_work_free(&w);
}
