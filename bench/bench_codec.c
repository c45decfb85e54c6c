/*
 * bench_codec.c -- speed of the codecs' encode + decode against memcpy of
 * the same FP32 input, measured in the same process on one thread.
 *
 * Input: n = 4M normal-ish values (sum of four uniforms, centred, from a
 * fixed xorshift seed) times 1e-3, with a few special values (zeros, -0,
 * a subnormal, a large value).  Each figure is the best of REPS runs after
 * a warm-up one (so every buffer is faulted in).  The ratio is memcpy time
 * / (encode + decode time): the codec's bandwidth over the 4-byte input
 * values as a fraction of memcpy's.  Goal: e3m0 at >= 50% of memcpy.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/base/codec.h"

enum { N = 4 << 20, REPS = 7 };

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Uniform in [0, 1) from a xorshift64 state. */
static double uni(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return (double)(*s >> 11) * 0x1p-53;
}

static void fill(float *x, size_t n) {
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        double u = uni(&s) + uni(&s) + uni(&s) + uni(&s) - 2.0;
        x[i] = (float)(u * 1.7e-3);
    }
    x[0] = 0.0f;
    x[1] = -0.0f;
    x[2] = 1e-40f;
    x[3] = -1e-40f;
    x[n / 2] = 3.0f;
}

/* Best-of-REPS seconds of memcpy of n floats. */
static double time_memcpy(float *dst, const float *src, size_t n) {
    double best = 1e30;
    for (int r = 0; r <= REPS; r++) { /* r == 0 warms up */
        double t0 = now_s();
        memcpy(dst, src, n * sizeof *src);
        double dt = now_s() - t0;
        if (r > 0 && dt < best) best = dt;
    }
    return best;
}

/* Best-of-REPS seconds of encode + decode of n floats; *enc_s and *dec_s
 * get the two halves of that best run. */
static double time_codec(codec_spec c, const float *x, size_t n, uint8_t *buf,
                         float *y, double *enc_s, double *dec_s) {
    double best = 1e30;
    for (int r = 0; r <= REPS; r++) {
        double t0 = now_s();
        codec_encode(c, x, n, 0, buf);
        double t1 = now_s();
        codec_decode(c, buf, n, 0, y);
        double t2 = now_s();
        if (r > 0 && t2 - t0 < best) {
            best = t2 - t0;
            *enc_s = t1 - t0;
            *dec_s = t2 - t1;
        }
    }
    return best;
}

int main(void) {
    float *x = malloc((size_t)N * sizeof *x),
          *y = malloc((size_t)N * sizeof *y);
    uint8_t *buf = malloc((size_t)N * 4 + 64);
    if (!x || !y || !buf) {
        fprintf(stderr, "bench_codec: out of memory\n");
        return 1;
    }
    fill(x, N);
    double copy = time_memcpy(y, x, N);
    static const struct {
        codec_kind kind;
        uint64_t block;
        const char *goal;
    } runs[] = {
        {CODEC_E3M0, 0, " (goal >= 50%)"},
        {CODEC_E3M0, 4096, " (goal >= 50%)"},
        {CODEC_E2M1, 0, ""},
        {CODEC_E2M1, 4096, ""},
        {CODEC_BF16, 0, ""},
    };
    volatile float sink = 0.0f;
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        codec_spec c = {.kind = runs[k].kind, .block = runs[k].block};
        double enc, dec, t = time_codec(c, x, N, buf, y, &enc, &dec);
        sink += y[N / 3];
        printf(
            "bench_codec: %s block %llu: encode+decode %.1f ms (%.1f + %.1f), "
            "memcpy %.1f ms: %.0f%% of memcpy%s\n",
            codec_name(c.kind), (unsigned long long)c.block, t * 1e3, enc * 1e3,
            dec * 1e3, copy * 1e3, 100.0 * copy / t, runs[k].goal);
    }
    free(x);
    free(y);
    free(buf);
    return 0;
}
