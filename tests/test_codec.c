/*
 * test_codec.c -- wire formats: sizes, byte layout, rounding and error
 * bounds of every codec (see sim/base/codec.h for the definitions tested).
 */
#include "sim/base/codec.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

/* ---- helpers ------------------------------------------------------------- */

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static codec_spec spec(codec_kind k, uint64_t block) {
    codec_spec c = {.kind = k, .block = block};
    return c;
}

/* A small deterministic generator (xorshift64*), uniform in [0, 1). */
static double uni(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53;
}

/* Random values with magnitudes log-uniform over 2^-lo_exp .. 2^hi_exp
 * and random signs. */
static void fill_logu(float *x, uint64_t n, int lo_exp, int hi_exp,
                      uint64_t seed) {
    uint64_t s = seed | 1;
    for (uint64_t i = 0; i < n; i++) {
        double m = exp2(lo_exp + (hi_exp - lo_exp) * uni(&s));
        x[i] = (float)(uni(&s) < 0.5 ? -m : m);
    }
}

/* Encodes into a fresh buffer, checks the size, decodes.  Returns the
 * encoded buffer (caller frees). */
static uint8_t *round_trip(codec_spec c, const float *x, uint64_t n,
                           uint64_t row_len, float *y) {
    uint64_t w = codec_wire_bytes(c, n, row_len);
    uint8_t *buf = malloc(w + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(codec_encode(c, x, n, row_len, buf), w);
    codec_decode(c, buf, n, row_len, y);
    return buf;
}

static uint16_t bf16_of(float x) {
    uint8_t b[2];
    codec_encode(spec(CODEC_BF16, 0), &x, 1, 0, b);
    return (uint16_t)(b[0] | b[1] << 8);
}

static uint16_t fp16_of(float x) {
    uint8_t b[2];
    codec_encode(spec(CODEC_FP16, 0), &x, 1, 0, b);
    return (uint16_t)(b[0] | b[1] << 8);
}

static float fp16_val(uint16_t h) {
    uint8_t b[2] = {(uint8_t)h, (uint8_t)(h >> 8)};
    float y;
    codec_decode(spec(CODEC_FP16, 0), b, 1, 0, &y);
    return y;
}

/* The 4-bit code of value i in an e3m0/e2m1 buffer with g scales. */
static unsigned nibble(const uint8_t *buf, uint64_t g, uint64_t i) {
    uint8_t b = buf[4 * g + i / 2];
    return (i & 1) ? b >> 4 : b & 15u;
}

/* ---- sizes and layout ---------------------------------------------------- */

static const uint64_t sizes[] = {0, 1, 2, 3, 17, 1000};
static const uint64_t blocks[] = {0, 1, 2, 3, 7, 16, 64, 999, 1000, 5000};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };
enum { NBLOCKS = sizeof blocks / sizeof blocks[0] };

/* Every byte of the wire size is written (two fills give the same bytes),
 * no byte beyond it is touched, and decode writes exactly n values. */
START_TEST(test_wire_bytes_written) {
    float x[1001], y[1001];
    fill_logu(x, 1000, -20, 4, 7);
    x[5] = 0.0f;
    x[6] = -0.0f;
    uint8_t *a = malloc(10000), *b = malloc(10000);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    for (int k = 0; k < CODEC_COUNT; k++) {
        if (k == CODEC_POWERSGD) continue; /* stateful: test_codec_lowrank */
        for (int si = 0; si < NSIZES; si++) {
            for (int bi = 0; bi < NBLOCKS; bi++) {
                uint64_t n = sizes[si], blk = blocks[bi];
                codec_spec c = spec((codec_kind)k, blk);
                uint64_t w = codec_wire_bytes(c, n, blk);
                ck_assert_uint_lt(w, 10000);
                memset(a, 0xa5, w + 1);
                memset(b, 0x00, w + 1);
                ck_assert_uint_eq(codec_encode(c, x, n, blk, a), w);
                ck_assert_uint_eq(codec_encode(c, x, n, blk, b), w);
                ck_assert_uint_eq(a[w], 0xa5);
                ck_assert_uint_eq(b[w], 0x00);
                ck_assert_int_eq(memcmp(a, b, w), 0);
                y[n] = 12345.0f;
                codec_decode(c, a, n, blk, y);
                ck_assert_float_eq(y[n], 12345.0f);
            }
        }
    }
    free(a);
    free(b);
}
END_TEST

START_TEST(test_wire_sizes) {
    ck_assert_uint_eq(codec_wire_bytes(spec(CODEC_FP32, 0), 10, 0), 40);
    ck_assert_uint_eq(codec_wire_bytes(spec(CODEC_BF16, 0), 10, 0), 20);
    ck_assert_uint_eq(codec_wire_bytes(spec(CODEC_FP8_E4M3, 0), 10, 4), 22);
    ck_assert_uint_eq(codec_wire_bytes(spec(CODEC_E3M0, 0), 7, 0), 8);
    ck_assert_uint_eq(codec_wire_bytes(spec(CODEC_E3M0, 3), 7, 0), 16);
    ck_assert_uint_eq(codec_wire_bytes(spec(CODEC_E2M1, 32), 64, 0), 40);
    ck_assert_uint_eq(codec_wire_bytes(spec(CODEC_UINT8, 4), 10, 0), 34);
    for (int k = 0; k < CODEC_COUNT; k++)
        ck_assert_uint_eq(codec_wire_bytes(spec((codec_kind)k, 0), 0, 0), 0);
}
END_TEST

/* "400x fewer bytes than DP": bf16 every step versus e3m0 every H = 100. */
START_TEST(test_400x) {
    uint64_t n = 1000000;
    double bf16 = (double)codec_wire_bytes(spec(CODEC_BF16, 0), n, 0) / n;
    double e3m0 = (double)codec_wire_bytes(spec(CODEC_E3M0, 0), n, 0) / n;
    double ratio = bf16 * 100.0 / e3m0;
    ck_assert_double_eq_tol(ratio, 400.0, 400.0 * 1e-4);
}
END_TEST

START_TEST(test_names) {
    codec_kind k;
    for (int i = 0; i < CODEC_COUNT; i++) {
        ck_assert_int_eq(codec_parse(codec_name((codec_kind)i), &k), 0);
        ck_assert_int_eq(k, i);
    }
    ck_assert_int_eq(codec_parse("fp4", &k), -1);
    ck_assert_str_eq(codec_name(CODEC_COUNT), "?");
}
END_TEST

/* ---- fp32 ---------------------------------------------------------------- */

START_TEST(test_fp32_exact) {
    float x[8] = {1.0f,      -0.0f,    FLT_MAX,          -FLT_MIN,
                  0x1p-149f, INFINITY, u2f(0x7fc12345u), 3.14159f};
    float y[8];
    uint8_t *buf = round_trip(spec(CODEC_FP32, 0), x, 8, 0, y);
    for (int i = 0; i < 8; i++) ck_assert_uint_eq(f2u(y[i]), f2u(x[i]));
    /* little-endian bytes of 1.0f */
    ck_assert_uint_eq(buf[0], 0x00);
    ck_assert_uint_eq(buf[1], 0x00);
    ck_assert_uint_eq(buf[2], 0x80);
    ck_assert_uint_eq(buf[3], 0x3f);
    free(buf);
}
END_TEST

/* ---- bf16 ---------------------------------------------------------------- */

START_TEST(test_bf16_patterns) {
    ck_assert_uint_eq(bf16_of(1.0f), 0x3f80);
    ck_assert_uint_eq(bf16_of(-2.0f), 0xc000);
    ck_assert_uint_eq(bf16_of(u2f(0x40490fdbu)), 0x4049); /* pi */
    ck_assert_uint_eq(bf16_of(u2f(0x3f808000u)), 0x3f80); /* tie, even down */
    ck_assert_uint_eq(bf16_of(u2f(0x3f818000u)), 0x3f82); /* tie, odd up */
    ck_assert_uint_eq(bf16_of(u2f(0x3f808001u)), 0x3f81); /* above tie */
    ck_assert_uint_eq(bf16_of(u2f(0x3f807fffu)), 0x3f80); /* below tie */
    ck_assert_uint_eq(bf16_of(u2f(0x3fffc000u)), 0x4000); /* carry */
    ck_assert_uint_eq(bf16_of(u2f(0x00008000u)), 0x0000); /* subnormal tie */
    ck_assert_uint_eq(bf16_of(u2f(0x00018000u)), 0x0002);
    ck_assert_uint_eq(bf16_of(-0.0f), 0x8000);
    ck_assert_uint_eq(bf16_of(FLT_MAX), 0x7f7f); /* saturates */
    ck_assert_uint_eq(bf16_of(-FLT_MAX), 0xff7f);
    ck_assert_uint_eq(bf16_of(u2f(0x7f7f7fffu)), 0x7f7f);
    ck_assert_uint_eq(bf16_of(INFINITY), 0x7f80);
    ck_assert_uint_eq(bf16_of(-INFINITY), 0xff80);
    uint16_t nan = bf16_of(NAN);
    ck_assert((nan & 0x7f80) == 0x7f80 && (nan & 0x7f) != 0);
}
END_TEST

/* Every finite bf16 value survives encode(decode(code)) bit-exactly. */
START_TEST(test_bf16_exhaustive) {
    uint8_t in[2], out[2];
    float y;
    for (uint32_t h = 0; h < 65536; h++) {
        if ((h & 0x7f80) == 0x7f80) continue; /* inf, NaN */
        in[0] = (uint8_t)h;
        in[1] = (uint8_t)(h >> 8);
        codec_decode(spec(CODEC_BF16, 0), in, 1, 0, &y);
        ck_assert_uint_eq(f2u(y), h << 16);
        codec_encode(spec(CODEC_BF16, 0), &y, 1, 0, out);
        ck_assert_int_eq(memcmp(in, out, 2), 0);
    }
}
END_TEST

/* ---- fp16 ---------------------------------------------------------------- */

START_TEST(test_fp16_patterns) {
    ck_assert_uint_eq(fp16_of(1.0f), 0x3c00);
    ck_assert_uint_eq(fp16_of(-2.0f), 0xc000);
    ck_assert_uint_eq(fp16_of(0.1f), 0x2e66);
    ck_assert_uint_eq(fp16_of(1.0f + 0x1p-11f), 0x3c00); /* tie, even */
    ck_assert_uint_eq(fp16_of(1.0f + 0x3p-11f), 0x3c02); /* tie, odd up */
    ck_assert_uint_eq(fp16_of(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
    ck_assert_uint_eq(fp16_of(65504.0f), 0x7bff);
    ck_assert_uint_eq(fp16_of(65519.0f), 0x7bff);
    ck_assert_uint_eq(fp16_of(65520.0f), 0x7bff); /* would be inf: saturate */
    ck_assert_uint_eq(fp16_of(1e6f), 0x7bff);
    ck_assert_uint_eq(fp16_of(-FLT_MAX), 0xfbff);
    ck_assert_uint_eq(fp16_of(INFINITY), 0x7c00);
    ck_assert_uint_eq(fp16_of(-INFINITY), 0xfc00);
    ck_assert_uint_eq(fp16_of(NAN) & 0x7e00, 0x7e00);
    ck_assert_uint_eq(fp16_of(0x1p-14f), 0x0400); /* smallest normal */
    ck_assert_uint_eq(fp16_of(0x1p-24f), 0x0001); /* smallest subnormal */
    ck_assert_uint_eq(fp16_of(0x1p-25f), 0x0000); /* tie to even: zero */
    ck_assert_uint_eq(fp16_of(0x1.8p-25f), 0x0001);
    ck_assert_uint_eq(fp16_of(0x1.000002p-25f), 0x0001);
    ck_assert_uint_eq(fp16_of(0x3p-25f), 0x0002); /* tie 1|2: even 2 */
    ck_assert_uint_eq(fp16_of(0x5p-25f), 0x0002); /* tie 2|3: even 2 */
    ck_assert_uint_eq(fp16_of(1023.5f * 0x1p-24f), 0x0400); /* carry */
    ck_assert_uint_eq(fp16_of(1e-10f), 0x0000);
    ck_assert_uint_eq(fp16_of(-1e-10f), 0x8000);
    ck_assert_uint_eq(fp16_of(-0.0f), 0x8000);
    ck_assert_float_eq(fp16_val(0x0001), 0x1p-24f);
    ck_assert_float_eq(fp16_val(0x03ff), 1023.0f * 0x1p-24f);
    ck_assert_float_eq(fp16_val(0x7bff), 65504.0f);
    ck_assert_float_eq(fp16_val(0xc000), -2.0f);
    ck_assert(isinf(fp16_val(0xfc00)) && fp16_val(0xfc00) < 0);
    ck_assert(isnan(fp16_val(0x7e00)));
    ck_assert(signbit(fp16_val(0x8000)) && fp16_val(0x8000) == 0.0f);
}
END_TEST

/* Every finite fp16 code decodes to its IEEE value (computed here with
 * ldexp) and survives encode(decode(code)) bit-exactly. */
START_TEST(test_fp16_exhaustive) {
    uint8_t in[2], out[2];
    float y;
    for (uint32_t h = 0; h < 65536; h++) {
        if ((h & 0x7c00) == 0x7c00) continue;
        in[0] = (uint8_t)h;
        in[1] = (uint8_t)(h >> 8);
        codec_decode(spec(CODEC_FP16, 0), in, 1, 0, &y);
        codec_encode(spec(CODEC_FP16, 0), &y, 1, 0, out);
        ck_assert_int_eq(memcmp(in, out, 2), 0);
        unsigned e = h >> 10 & 31, m = h & 0x3ff;
        double ref = e ? ldexp(1024 + m, (int)e - 25) : ldexp(m, -24);
        ck_assert_double_eq((double)y, (h & 0x8000) ? -ref : ref);
        ck_assert(!!signbit(y) == !!(h & 0x8000));
    }
}
END_TEST

/* ---- fp8 e4m3 ------------------------------------------------------------ */

/* The value of an E4M3FN code, computed independently with ldexp. */
static double e4m3_ref(unsigned c) {
    unsigned e = c >> 3 & 15, m = c & 7;
    double v = e ? ldexp(1.0 + m / 8.0, (int)e - 7) : ldexp(m, -9);
    return (c & 0x80) ? -v : v;
}

/* With scale 1 (row max 448), every non-NaN code's value round-trips to
 * the same code and decodes exactly. */
START_TEST(test_fp8_all_codes) {
    float x[254], y[254];
    int n = 0;
    for (unsigned c = 0; c < 256; c++)
        if ((c & 0x7f) != 0x7f) x[n++] = (float)e4m3_ref(c);
    ck_assert_int_eq(n, 254);
    uint8_t *buf = round_trip(spec(CODEC_FP8_E4M3, 0), x, 254, 0, y);
    ck_assert_float_eq(u2f((uint32_t)buf[0] | (uint32_t)buf[1] << 8 |
                           (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 24),
                       1.0f);
    n = 0;
    for (unsigned c = 0; c < 256; c++) {
        if ((c & 0x7f) == 0x7f) continue;
        ck_assert_uint_eq(buf[4 + n], c);
        ck_assert_uint_eq(f2u(y[n]), f2u(x[n]));
        n++;
    }
    free(buf);
}
END_TEST

START_TEST(test_fp8_rounding_and_rows) {
    /* row 0: scale 1; ties to even at 1.0625 (between 1 and 1.125: 1),
     * 1.1875 (1.125|1.25: 1.25), subnormal tie 2^-10 (0|2^-9: 0). */
    float x[8] = {448.0f, 1.0625f, 1.1875f, 0x1p-10f,
                  /* row 1: all zeros, one negative zero */
                  0.0f, -0.0f, 0.0f, 0.0f};
    float y[8];
    uint8_t *buf = round_trip(spec(CODEC_FP8_E4M3, 0), x, 8, 4, y);
    ck_assert_uint_eq(buf[8 + 0], 0x7e);
    ck_assert_uint_eq(buf[8 + 1], 0x38);
    ck_assert_uint_eq(buf[8 + 2], 0x3a);
    ck_assert_uint_eq(buf[8 + 3], 0x00);
    ck_assert_float_eq(y[1], 1.0f);
    ck_assert_float_eq(y[2], 1.25f);
    /* the zero row: scale 0, codes +-0 */
    ck_assert_uint_eq(buf[4] | buf[5] | buf[6] | buf[7], 0);
    ck_assert_uint_eq(buf[8 + 5], 0x80);
    ck_assert(y[5] == 0.0f && signbit(y[5]) && !signbit(y[4]));
    free(buf);
}
END_TEST

/* Worst case: |d - x| <= half an E4M3 gap at |x|/scale, times the scale:
 * 2^-4 * |x| in the normal range, scale * 2^-10 among subnormals; the row
 * maximum maps to code 448. */
START_TEST(test_fp8_error_bound) {
    enum { N = 100000, ROW = 1000 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    ck_assert(x && y);
    fill_logu(x, N, -30, 10, 11);
    uint8_t *buf = round_trip(spec(CODEC_FP8_E4M3, 0), x, N, ROW, y);
    double worst = 0.0;
    for (int r = 0; r < N / ROW; r++) {
        double amax = 0.0;
        for (int i = r * ROW; i < (r + 1) * ROW; i++)
            amax = fmax(amax, fabs(x[i]));
        float scale = (float)amax / 448.0f;
        for (int i = r * ROW; i < (r + 1) * ROW; i++) {
            double bound = fmax(fabs(x[i]) / 16.0, scale * 0x1p-10);
            double err = fabs((double)y[i] - x[i]);
            ck_assert_msg(err <= bound * (1 + 1e-6), "i %d x %g y %g", i, x[i],
                          y[i]);
            worst = fmax(worst, err / bound);
            if (fabs(x[i]) == amax) /* the row maximum maps to 448 */
                ck_assert_uint_eq(buf[4 * (N / ROW) + i] & 0x7f, 0x7e);
        }
    }
    ck_assert_double_gt(worst, 0.95); /* the bound is tight */
    free(buf);
    free(x);
    free(y);
}
END_TEST

/* ---- e3m0 ---------------------------------------------------------------- */

/* Hand-computed: scale 1 (max 1); 1 -> e7; -0.5 -> sign|e6; 0.3 in
 * [0.1875, 0.375) -> e5 (0.25); 0.01 in [2^-7, 1.5*2^-6) -> e1 (1/64);
 * 0 -> 0. */
START_TEST(test_e3m0_hand) {
    float x[5] = {1.0f, -0.5f, 0.3f, 0.01f, 0.0f}, y[5];
    uint8_t *buf = round_trip(spec(CODEC_E3M0, 0), x, 5, 0, y);
    static const uint8_t want[7] = {0x00, 0x00, 0x80, 0x3f, 0xe7, 0x15, 0x00};
    ck_assert_int_eq(memcmp(buf, want, 7), 0);
    ck_assert_float_eq(y[0], 1.0f);
    ck_assert_float_eq(y[1], -0.5f);
    ck_assert_float_eq(y[2], 0.25f);
    ck_assert_float_eq(y[3], 0.015625f);
    ck_assert_float_eq(y[4], 0.0f);
    free(buf);
}
END_TEST

/* The thresholds: arithmetic midpoints 0.75 * 2^k, ties away from zero,
 * zero below half the smallest magnitude (2^-7 with scale 1). */
START_TEST(test_e3m0_thresholds) {
    float x[] = {1.0f,           0.75f,     0x1.7ffffep-1f, 0.375f,
                 0.374f,         0x1.8p-6f, 0x1.7ffffep-6f, 0x1p-7f,
                 0x1.fffffep-8f, -0x1p-7f,  -0x1p-9f,       -0.75f,
                 0.9f,           0x1p-6f};
    unsigned want[] = {7, 7, 6, 6, 5, 2, 1, 1, 0, 9, 8, 15, 7, 1};
    enum { N = sizeof x / sizeof x[0] };
    float y[N];
    uint8_t *buf = round_trip(spec(CODEC_E3M0, 0), x, N, 0, y);
    for (int i = 0; i < N; i++)
        ck_assert_msg(nibble(buf, 1, (uint64_t)i) == want[i],
                      "x %a: code %u, want %u", (double)x[i],
                      nibble(buf, 1, (uint64_t)i), want[i]);
    ck_assert(y[10] == 0.0f && signbit(y[10]));
    free(buf);
}
END_TEST

START_TEST(test_e3m0_zero_code) {
    float x[4] = {0.0f, -0.0f, 0.0f, 0.0f}, y[4];
    uint8_t *buf = round_trip(spec(CODEC_E3M0, 0), x, 4, 0, y);
    static const uint8_t want[6] = {0, 0, 0, 0, 0x80, 0x00};
    ck_assert_int_eq(memcmp(buf, want, 6), 0);
    for (int i = 0; i < 4; i++) ck_assert(y[i] == 0.0f);
    ck_assert(signbit(y[1]) && !signbit(y[0]));
    free(buf);
}
END_TEST

/* Block scales keep small blocks alive where one tensor scale zeroes
 * them; an odd block length straddles code bytes. */
START_TEST(test_e3m0_block_vs_tensor) {
    float x[5] = {8.0f, 1.0f, 0.01f, 0.02f, -3.0f}, y[5];
    uint8_t *buf = round_trip(spec(CODEC_E3M0, 0), x, 5, 0, y);
    ck_assert_float_eq(y[0], 8.0f);
    ck_assert_float_eq(y[1], 1.0f);
    ck_assert_float_eq(y[2], 0.0f); /* 0.01/8 < 2^-7 */
    ck_assert_float_eq(y[3], 0.0f);
    ck_assert_float_eq(y[4], -4.0f); /* 3/8 = 0.375 -> 0.5 */
    free(buf);
    buf = round_trip(spec(CODEC_E3M0, 2), x, 5, 0, y);
    /* scales 8, 2^-5 (max 0.02), 4 (max 3) */
    static const uint8_t scales[12] = {0, 0,    0, 0x41, 0,    0,
                                       0, 0x3d, 0, 0,    0x80, 0x40};
    ck_assert_int_eq(memcmp(buf, scales, 12), 0);
    ck_assert_float_eq(y[2], 0x1p-7f); /* 0.32 * s -> s/4 */
    ck_assert_float_eq(y[3], 0x1p-6f); /* 0.64 * s -> s/2 */
    ck_assert_float_eq(y[4], -4.0f);   /* 0.75 * s -> s (tie up) */
    /* codes: 8/8 -> e7, 1/8 -> e4 | 0.32 -> e5, 0.64 -> e6 | -0.75 -> 0xf */
    ck_assert_uint_eq(buf[12], 0x47);
    ck_assert_uint_eq(buf[13], 0x65);
    ck_assert_uint_eq(buf[14], 0x0f);
    free(buf);
}
END_TEST

/* Representable values of every scale survive exactly, for many blocks. */
START_TEST(test_e3m0_representable) {
    float x[45], y[45];
    for (int bi = 0; bi < NBLOCKS; bi++) {
        for (int E = -140; E <= 127; E += 31) {
            int n = 0;
            for (int rep = 0; rep < 3; rep++)
                for (int e = 0; e < 15; e++)
                    x[n++] = e == 0   ? 0.0f
                             : e <= 7 ? ldexpf(1.0f, E + e - 7)
                                      : -ldexpf(1.0f, E + e - 14);
            codec_spec c = spec(CODEC_E3M0, blocks[bi]);
            uint8_t *buf = round_trip(c, x, 45, 0, y);
            if (blocks[bi] == 0)
                ck_assert_float_eq(u2f((uint32_t)buf[0] |
                                       (uint32_t)buf[1] << 8 |
                                       (uint32_t)buf[2] << 16 |
                                       (uint32_t)buf[3] << 24),
                                   ldexpf(1.0f, E));
            for (int i = 0; i < 45; i++)
                ck_assert_msg(f2u(y[i]) == f2u(x[i]), "E %d block %d i %d", E,
                              (int)blocks[bi], i);
            free(buf);
        }
    }
}
END_TEST

/* The derived bound: |d - x| <= |x|/3 for s/64 <= |x| <= s, and
 * <= s/128 below; both attained (up to sampling). */
START_TEST(test_e3m0_error_bound) {
    enum { N = 200000, BLOCK = 256 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    ck_assert(x && y);
    fill_logu(x, N, -12, 3, 99);
    uint8_t *buf = round_trip(spec(CODEC_E3M0, BLOCK), x, N, 0, y);
    double worst_rel = 0.0, worst_abs = 0.0;
    for (int b = 0; b < N / BLOCK; b++) {
        double amax = 0.0;
        for (int i = b * BLOCK; i < (b + 1) * BLOCK; i++)
            amax = fmax(amax, fabs(x[i]));
        double s = exp2(ceil(log2(amax)));
        for (int i = b * BLOCK; i < (b + 1) * BLOCK; i++) {
            double ax = fabs(x[i]), err = fabs((double)y[i] - x[i]);
            ck_assert(!!signbit(y[i]) == !!signbit(x[i]));
            if (ax >= s / 64) {
                ck_assert_msg(err <= ax / 3 * (1 + 1e-7), "x %g y %g s %g",
                              x[i], y[i], s);
                ck_assert(fabs(y[i]) >= ax * (2.0 / 3) * (1 - 1e-7) &&
                          fabs(y[i]) <= ax * (4.0 / 3) * (1 + 1e-7));
                worst_rel = fmax(worst_rel, err / ax);
            } else {
                ck_assert_msg(err <= s / 128, "x %g y %g s %g", x[i], y[i], s);
                worst_abs = fmax(worst_abs, err / (s / 128));
            }
        }
    }
    ck_assert_double_gt(worst_rel, 0.333);
    ck_assert_double_gt(worst_abs, 0.99);
    free(buf);
    free(x);
    free(y);
}
END_TEST

/* ---- e2m1 ---------------------------------------------------------------- */

START_TEST(test_e2m1_representable) {
    static const float mag[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    float x[16], y[16];
    for (int c = 0; c < 16; c++) x[c] = (c & 8) ? -mag[c & 7] : mag[c & 7];
    float scales[3] = {1.0f, 0.75f, 0x1p-20f};
    for (int k = 0; k < 3; k++) {
        float xs[16];
        for (int i = 0; i < 16; i++) xs[i] = x[i] * scales[k];
        uint8_t *buf = round_trip(spec(CODEC_E2M1, 0), xs, 16, 0, y);
        for (int i = 0; i < 16; i++) {
            ck_assert_uint_eq(nibble(buf, 1, (uint64_t)i), (unsigned)i);
            ck_assert_uint_eq(f2u(y[i]), f2u(xs[i]));
        }
        free(buf);
    }
}
END_TEST

/* Ties go to the even code. */
START_TEST(test_e2m1_ties) {
    float x[] = {6.0f, 0.25f, 0.75f,  1.25f, 1.75f, 2.5f,
                 3.5f, 5.0f,  -0.25f, 0.2f,  0.3f,  5.9f};
    unsigned want[] = {7, 0, 2, 2, 4, 4, 6, 6, 8, 0, 1, 7};
    enum { N = sizeof x / sizeof x[0] };
    float y[N];
    uint8_t *buf = round_trip(spec(CODEC_E2M1, 0), x, N, 0, y);
    for (int i = 0; i < N; i++)
        ck_assert_msg(nibble(buf, 1, (uint64_t)i) == want[i], "x %g", x[i]);
    free(buf);
}
END_TEST

/* |d - x| <= half the gap around |x|/scale, times the scale: 0.25 below 2,
 * 0.5 in [2, 4], 1 in [4, 6]. */
START_TEST(test_e2m1_error_bound) {
    enum { N = 100000, BLOCK = 32 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    ck_assert(x && y);
    fill_logu(x, N, -8, 2, 5);
    uint8_t *buf = round_trip(spec(CODEC_E2M1, BLOCK), x, N, 0, y);
    double worst = 0.0;
    for (int b = 0; b < N / BLOCK; b++) {
        double amax = 0.0;
        for (int i = b * BLOCK; i < (b + 1) * BLOCK; i++)
            amax = fmax(amax, fabs(x[i]));
        double scale = (float)amax / 6.0f;
        for (int i = b * BLOCK; i < (b + 1) * BLOCK; i++) {
            double q = fabs(x[i]) / scale;
            double half = q < 2 ? 0.25 : q < 4 ? 0.5 : 1.0;
            double err = fabs((double)y[i] - x[i]);
            ck_assert_msg(err <= half * scale * (1 + 1e-6), "x %g y %g", x[i],
                          y[i]);
            worst = fmax(worst, err / (half * scale));
        }
    }
    ck_assert_double_gt(worst, 0.95);
    free(buf);
    free(x);
    free(y);
}
END_TEST

/* ---- uint8 --------------------------------------------------------------- */

START_TEST(test_uint8_exact_and_layout) {
    float x[256], y[256];
    for (int i = 0; i < 256; i++) x[i] = (float)(255 - i);
    uint8_t *buf = round_trip(spec(CODEC_UINT8, 0), x, 256, 0, y);
    for (int i = 0; i < 256; i++) {
        ck_assert_float_eq(y[i], x[i]);
        ck_assert_uint_eq(buf[8 + i], 255 - i);
    }
    /* min 0 then max 255 */
    static const uint8_t mm[8] = {0, 0, 0, 0, 0, 0, 0x7f, 0x43};
    ck_assert_int_eq(memcmp(buf, mm, 8), 0);
    free(buf);
    /* constant block: codes 0, decodes to the constant */
    float c[3] = {-2.5f, -2.5f, -2.5f};
    buf = round_trip(spec(CODEC_UINT8, 0), c, 3, 0, y);
    for (int i = 0; i < 3; i++) ck_assert_float_eq(y[i], -2.5f);
    free(buf);
}
END_TEST

/* |d - x| <= (max - min)/510 plus FP32 rounding of the decoded value;
 * each block's min and max decode exactly. */
START_TEST(test_uint8_error_bound) {
    enum { N = 100000, BLOCK = 1000 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    ck_assert(x && y);
    uint64_t s = 3;
    for (int i = 0; i < N; i++) x[i] = (float)(uni(&s) * 7.0 - 2.0);
    uint8_t *buf = round_trip(spec(CODEC_UINT8, BLOCK), x, N, 0, y);
    double worst = 0.0;
    for (int b = 0; b < N / BLOCK; b++) {
        float mn = x[b * BLOCK], mx = mn;
        for (int i = b * BLOCK; i < (b + 1) * BLOCK; i++) {
            mn = fminf(mn, x[i]);
            mx = fmaxf(mx, x[i]);
        }
        double bound = ((double)mx - mn) / 510.0;
        for (int i = b * BLOCK; i < (b + 1) * BLOCK; i++) {
            double err = fabs((double)y[i] - x[i]);
            ck_assert(err <= bound + FLT_EPSILON * fabs(x[i]));
            worst = fmax(worst, err / bound);
            if (x[i] == mn || x[i] == mx) ck_assert_float_eq(y[i], x[i]);
        }
    }
    ck_assert_double_gt(worst, 0.95);
    free(buf);
    free(x);
    free(y);
}
END_TEST

/* ---- edge cases ---------------------------------------------------------- */

/* All-zero tensors decode to zeros; negative zero keeps its sign where the
 * format has one. */
START_TEST(test_zeros) {
    float x[9] = {0, -0.0f, 0, 0, 0, 0, 0, 0, -0.0f}, y[9];
    for (int k = 0; k < CODEC_COUNT; k++) {
        if (k == CODEC_POWERSGD) continue; /* stateful: test_codec_lowrank */
        for (int bi = 0; bi < 4; bi++) {
            codec_spec c = spec((codec_kind)k, blocks[bi]);
            uint8_t *buf = round_trip(c, x, 9, blocks[bi], y);
            for (int i = 0; i < 9; i++) {
                ck_assert(y[i] == 0.0f);
                if (k != CODEC_UINT8 && k != CODEC_INT8 && k != CODEC_TOPK &&
                    k != CODEC_DEMO)
                    ck_assert(!!signbit(y[i]) == !!signbit(x[i]));
            }
            free(buf);
        }
    }
}
END_TEST

/* Non-finite input: no crash (run under ASan), finite values keep the
 * scale of the finite ones, inf saturates to the group's extreme. */
START_TEST(test_nonfinite) {
    float x[6] = {1.0f, INFINITY, -0.5f, NAN, -INFINITY, 0.25f}, y[6];
    for (int k = 0; k < CODEC_COUNT; k++) {
        if (k == CODEC_POWERSGD) continue; /* stateful: test_codec_lowrank */
        for (int bi = 0; bi < 5; bi++) {
            codec_spec c = spec((codec_kind)k, blocks[bi]);
            free(round_trip(c, x, 6, blocks[bi], y));
        }
        codec_spec c = spec((codec_kind)k, 0);
        free(round_trip(c, x, 6, 0, y));
        /* test_codec_more; demo's DCT spreads a non-finite value over its
         * chunk */
        if (k == CODEC_TOPK || k == CODEC_INT8 || k == CODEC_DEMO) continue;
        if (k == CODEC_FP32 || k == CODEC_BF16 || k == CODEC_FP16) {
            ck_assert(isinf(y[1]) && y[1] > 0 && isinf(y[4]) && y[4] < 0);
            ck_assert(isnan(y[3]));
        } else if (k == CODEC_UINT8) {
            ck_assert_float_eq(y[1], 1.0f);
            ck_assert_float_eq(y[4], -0.5f);
        } else {
            ck_assert_float_eq_tol(y[1], 1.0f, 1e-6f);
            ck_assert_float_eq_tol(y[4], -1.0f, 1e-6f);
        }
        ck_assert_float_eq_tol(y[0], 1.0f, 1e-6f);
        ck_assert_float_eq_tol(y[2], -0.5f, 1e-6f);
        ck_assert(!isnan(y[3]) || k <= CODEC_FP16);
    }
    /* a group of nothing but non-finite values */
    float z[3] = {INFINITY, NAN, -INFINITY};
    for (int k = 0; k < CODEC_COUNT; k++)
        if (k != CODEC_POWERSGD)
            free(round_trip(spec((codec_kind)k, 0), z, 3, 0, y));
}
END_TEST

/* Extremes of the FP32 range: scales stay finite. */
START_TEST(test_extremes) {
    float x[4] = {FLT_MAX, -FLT_MAX, 1e30f, 0x1p-149f}, y[4];
    float t[3] = {0x1p-149f, -0x1p-136f, 0x1p-130f};
    /* the scaled and plain formats; powersgd and demo sum products, which
     * leave the FP32 range there (test_codec_lowrank) */
    for (int k = 0; k < CODEC_POWERSGD; k++) {
        free(round_trip(spec((codec_kind)k, 0), x, 4, 0, y));
        for (int i = 0; i < 2; i++) ck_assert(isfinite(y[i]));
        if (k != CODEC_FP16) ck_assert(fabsf(y[0]) >= 0x1p127f);
        else ck_assert_float_eq(y[0], 65504.0f);
        free(round_trip(spec((codec_kind)k, 0), t, 3, 0, y));
        for (int i = 0; i < 3; i++) ck_assert(isfinite(y[i]));
    }
    /* e3m0 with a subnormal block: exact powers of two */
    free(round_trip(spec(CODEC_E3M0, 0), t, 3, 0, y));
    ck_assert_float_eq(y[0], 0.0f);
    ck_assert_float_eq(y[1], -0x1p-136f);
    ck_assert_float_eq(y[2], 0x1p-130f);
}
END_TEST

/* ---- bit-exactness against a reference ---------------------------------- */

/* REFERENCE: the e3m0 and e2m1 encoders and the 4-bit decoder as first
 * written (a max-abs pass, then one code at a time), kept small and plain
 * here so that a faster codec.c is held to the same bytes and floats. */
static float ref_amax(const float *x, uint64_t m) {
    uint32_t best = 0;
    for (uint64_t i = 0; i < m; i++) {
        uint32_t a = f2u(x[i]) & 0x7fffffffu;
        best = (a < 0x7f800000u && a > best) ? a : best;
    }
    return u2f(best);
}

static uint8_t ref_e3m0_code(float x, float amax) {
    int32_t base = 256;
    float pre = 1.0f;
    if (amax != 0.0f) {
        int ex;
        float f = frexpf(amax, &ex);
        int E = f == 0.5f ? ex - 1 : ex;
        E = E > 127 ? 127 : E;
        base = 120 + E;
        if (E < -119) pre = 0x1p64f, base += 64;
    }
    uint32_t b = f2u(x * pre), a = b & 0x7fffffffu;
    int32_t er = (int32_t)(a >> 23) - base;
    int32_t e = (int32_t)((a + 0x400000u) >> 23) - base;
    e = e < 1 ? 1 : e > 7 ? 7 : e;
    e = er < 0 ? 0 : e;
    return (uint8_t)((b >> 28 & 8u) | (uint32_t)e);
}

static float ref_e3m0_scale(float amax) {
    if (amax == 0.0f) return 0.0f;
    int ex;
    float f = frexpf(amax, &ex);
    int E = f == 0.5f ? ex - 1 : ex;
    return ldexpf(1.0f, E > 127 ? 127 : E);
}

static uint8_t ref_e2m1_code(float x, double inv) {
    uint32_t b = f2u(x);
    float q = (float)((double)u2f(b & 0x7fffffffu) * inv);
    uint32_t m = (uint32_t)(q > 0.25f) + (uint32_t)(q >= 0.75f) +
                 (uint32_t)(q > 1.25f) + (uint32_t)(q >= 1.75f) +
                 (uint32_t)(q > 2.5f) + (uint32_t)(q >= 3.5f) +
                 (uint32_t)(q > 5.0f);
    return (uint8_t)((b >> 28 & 8u) | m);
}

/* Encodes x[0..n) in e3m0 or e2m1 into out (wire layout of codec.h) and
 * decodes it into y, the reference way. */
static void ref_nibble_codec(codec_kind k, const float *x, uint64_t n,
                             uint64_t block, uint8_t *out, float *y) {
    static const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f,
                                 2.0f, 3.0f, 4.0f, 6.0f};
    uint64_t len = (block == 0 || block >= n) ? n : block;
    uint64_t g = n == 0 ? 0 : (n + len - 1) / len;
    uint8_t *data = out + 4 * g;
    memset(data, 0, (n + 1) / 2);
    for (uint64_t j = 0, lo = 0; j < g; j++, lo += len) {
        uint64_t hi = n - lo < len ? n : lo + len;
        float amax = ref_amax(x + lo, hi - lo);
        float s = k == CODEC_E3M0 ? ref_e3m0_scale(amax) : amax / 6.0f;
        double inv = s > 0.0f ? 1.0 / (double)s : 0.0;
        uint32_t sb = f2u(s);
        for (int q = 0; q < 4; q++)
            out[4 * j + (uint64_t)q] = (uint8_t)(sb >> (8 * q));
        for (uint64_t i = lo; i < hi; i++) {
            unsigned c = k == CODEC_E3M0 ? ref_e3m0_code(x[i], amax)
                                         : ref_e2m1_code(x[i], inv);
            data[i / 2] |= (uint8_t)((i & 1) ? c << 4 : c);
            float v = k == CODEC_E3M0
                          ? ((c & 7) ? u2f((120 + (c & 7)) << 23) : 0.0f)
                          : mag[c & 7];
            y[i] = ((c & 8) ? -v : v) * s;
        }
    }
}

/* codec.c against the reference on x[0..n): the same bytes, the same
 * float bits.  Returns 0, or 1 after printing the first difference. */
static int vs_ref(codec_kind k, const float *x, uint64_t n, uint64_t block) {
    codec_spec c = spec(k, block);
    uint64_t w = codec_wire_bytes(c, n, 0);
    uint8_t *a = malloc(w + 1), *b = malloc(w + 1);
    float *ya = malloc((n + 1) * sizeof *ya),
          *yb = malloc((n + 1) * sizeof *yb);
    ck_assert(a && b && ya && yb);
    memset(a, 0xa5, w + 1); /* the encoder must write every byte */
    codec_encode(c, x, n, 0, a);
    codec_decode(c, a, n, 0, ya);
    ref_nibble_codec(k, x, n, block, b, yb);
    int bad = 0;
    for (uint64_t i = 0; i < w && !bad; i++)
        if (a[i] != b[i]) {
            printf("%s n %llu block %llu: byte %llu is %#x, reference %#x\n",
                   codec_name(k), (unsigned long long)n,
                   (unsigned long long)block, (unsigned long long)i, a[i],
                   b[i]);
            bad = 1;
        }
    for (uint64_t i = 0; i < n && !bad; i++)
        if (f2u(ya[i]) != f2u(yb[i])) {
            printf("%s n %llu block %llu: value %llu decodes to %a, reference "
                   "%a\n",
                   codec_name(k), (unsigned long long)n,
                   (unsigned long long)block, (unsigned long long)i,
                   (double)ya[i], (double)yb[i]);
            bad = 1;
        }
    free(a);
    free(b);
    free(ya);
    free(yb);
    return bad;
}

/* Specials and values near every e3m0 threshold of a few scales. */
static uint64_t fill_specials(float *x) {
    static const float sp[] = {0.0f,      -0.0f,       INFINITY,  -INFINITY,
                               NAN,       -NAN,        FLT_MAX,   -FLT_MAX,
                               FLT_MIN,   -FLT_MIN,    0x1p-149f, -0x1p-149f,
                               0x1p-127f, 0x1.8p-140f, 1.0f,      -1.0f,
                               0x1p127f,  3e38f};
    uint64_t n = 0;
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) x[n++] = sp[i];
    x[n++] = u2f(0x7f800001u); /* a signalling NaN */
    x[n++] = u2f(0xffc00001u);
    for (int E = -150; E <= 128; E += 7)
        for (int e = 0; e <= 9; e++) {
            float t = ldexpf(1.5f, E + e - 8), p = ldexpf(1.0f, E + e - 7);
            x[n++] = t;
            x[n++] = -nextafterf(t, 0.0f);
            x[n++] = nextafterf(p, 0.0f);
            x[n++] = -p;
        }
    return n;
}

START_TEST(test_nibble_codecs_specials_vs_reference) {
    float x[2000];
    uint64_t n = fill_specials(x);
    for (int kk = 0; kk < 2; kk++) {
        codec_kind k = kk ? CODEC_E2M1 : CODEC_E3M0;
        for (uint64_t blk = 0; blk <= 70; blk++)
            ck_assert(!vs_ref(k, x, n, blk));
        /* the specials alone and each threshold run of one scale */
        for (uint64_t i = 0; i + 40 <= n; i += 40)
            ck_assert(!vs_ref(k, x + i, 40, 0));
    }
}
END_TEST

/* Random values whose magnitudes change by up to 1e+-30 between runs of
 * random length, with zeros, subnormals and non-finite values sprinkled. */
static void fill_wild(float *x, uint64_t n, uint64_t seed) {
    uint64_t s = seed | 1;
    double scale = 1.0;
    for (uint64_t i = 0; i < n; i++) {
        if (uni(&s) < 0.002) scale = pow(10.0, -30.0 + 60.0 * uni(&s));
        double u = uni(&s) + uni(&s) + uni(&s) - 1.5, r = uni(&s);
        x[i] = (float)(u * scale);
        if (r < 0.002) x[i] = r < 0.001 ? 0.0f : -0.0f;
        else if (r < 0.003) x[i] = (float)(u * 1e-40);
        else if (r < 0.0031) x[i] = r < 0.00305 ? INFINITY : NAN;
    }
}

START_TEST(test_nibble_codecs_random_vs_reference) {
    enum { N = 1000000 };
    float *x = malloc(N * sizeof *x);
    ck_assert_ptr_nonnull(x);
    fill_wild(x, N, 12345);
    static const uint64_t big[] = {0,    127,  128,  1000,  4095,
                                   4096, 4097, 5001, 65536, N};
    for (int kk = 0; kk < 2; kk++) {
        codec_kind k = kk ? CODEC_E2M1 : CODEC_E3M0;
        for (size_t b = 0; b < sizeof big / sizeof big[0]; b++)
            ck_assert(!vs_ref(k, x, N, big[b]));
        for (uint64_t n = 0; n <= 200; n++)
            for (uint64_t blk = 0; blk <= 70; blk += n % 7 + 1)
                ck_assert(!vs_ref(k, x + 3 * n, n, blk));
        for (uint64_t n = 201; n < 20000; n = n * 3 + 1)
            for (uint64_t blk = 1; blk <= 70; blk++)
                ck_assert(!vs_ref(k, x + n, n, blk));
    }
    free(x);
}
END_TEST

/* Magnitudes that keep growing (the running block max changes scale late
 * and often), an outlier at every position class, odd starts, long blocks
 * spanning many L1 spans of the encoder. */
START_TEST(test_e3m0_growing_vs_reference) {
    enum { N = 3 * 4096 + 77 };
    float *x = malloc(N * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (uint64_t i = 0; i < N; i++)
        x[i] = ((i & 1) ? -1.0f : 1.0f) *
               ldexpf(1.0f + (float)(i % 5) / 8, (int)(i / 97) - 60);
    static const uint64_t blk[] = {0, 1, 3, 4095, 4096, 4097, 5001, 8191, 9000};
    for (size_t b = 0; b < sizeof blk / sizeof blk[0]; b++) {
        ck_assert(!vs_ref(CODEC_E3M0, x, N, blk[b]));
        ck_assert(!vs_ref(CODEC_E3M0, x + 1, N - 1, blk[b]));
    }
    fill_wild(x, N, 777);
    for (uint64_t at = 0; at < N; at += 1531) {
        float keep = x[at];
        x[at] = 1e35f;
        for (size_t b = 0; b < sizeof blk / sizeof blk[0]; b++) {
            ck_assert(!vs_ref(CODEC_E3M0, x, N, blk[b]));
            ck_assert(!vs_ref(CODEC_E3M0, x + 1, N - 2, blk[b]));
        }
        x[at] = keep;
    }
    free(x);
}
END_TEST

/* Spans of 4096 values (the encoder's) whose scale moves by -3..+9
 * exponents from one to the next, through the range pre-multiplied by 2^64;
 * maxima at exactly a power of two or half of one; inf and NaN in a few
 * spans; even and odd starts: every way the encoder keeps, masks to signs
 * or codes again what it coded in an older scale, and a block's scale
 * guessed from the previous block too high, too low or at the boundary. */
START_TEST(test_e3m0_scale_segments_vs_reference) {
    enum { SP = 4096, N = 40 * SP + 5 };
    float *x = malloc(N * sizeof *x);
    ck_assert_ptr_nonnull(x);
    uint64_t s = 4242;
    int E = -140;
    for (uint64_t i = 0; i < N; i++) {
        if (i % SP == 0) {
            E += (int)(uni(&s) * 13) - 3;
            E = E > 120 ? 120 : E;
        }
        x[i] = ldexpf((float)(uni(&s) - 0.5), E);
        if (i % SP == 77 && (i / SP) % 3 == 0)
            x[i] = ldexpf(1.0f, E - (int)(i / SP) % 2);
    }
    x[5 * SP + 17] = NAN;
    x[11 * SP + 3] = -INFINITY;
    x[26 * SP + 1] = NAN;
    static const uint64_t blk[] = {0,    4095,         4096,  4097,
                                   8192, 3 * 4096 + 1, 100000};
    for (size_t b = 0; b < sizeof blk / sizeof blk[0]; b++) {
        ck_assert(!vs_ref(CODEC_E3M0, x, N, blk[b]));
        ck_assert(!vs_ref(CODEC_E3M0, x + 1, N - 1, blk[b]));
    }
    free(x);
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("codec");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_wire_bytes_written);
    tcase_add_test(t, test_wire_sizes);
    tcase_add_test(t, test_400x);
    tcase_add_test(t, test_names);
    tcase_add_test(t, test_fp32_exact);
    tcase_add_test(t, test_bf16_patterns);
    tcase_add_test(t, test_bf16_exhaustive);
    tcase_add_test(t, test_fp16_patterns);
    tcase_add_test(t, test_fp16_exhaustive);
    tcase_add_test(t, test_fp8_all_codes);
    tcase_add_test(t, test_fp8_rounding_and_rows);
    tcase_add_test(t, test_fp8_error_bound);
    tcase_add_test(t, test_e3m0_hand);
    tcase_add_test(t, test_e3m0_thresholds);
    tcase_add_test(t, test_e3m0_zero_code);
    tcase_add_test(t, test_e3m0_block_vs_tensor);
    tcase_add_test(t, test_e3m0_representable);
    tcase_add_test(t, test_e3m0_error_bound);
    tcase_add_test(t, test_e2m1_representable);
    tcase_add_test(t, test_e2m1_ties);
    tcase_add_test(t, test_e2m1_error_bound);
    tcase_add_test(t, test_uint8_exact_and_layout);
    tcase_add_test(t, test_uint8_error_bound);
    tcase_add_test(t, test_zeros);
    tcase_add_test(t, test_nonfinite);
    tcase_add_test(t, test_extremes);
    tcase_add_test(t, test_nibble_codecs_specials_vs_reference);
    tcase_add_test(t, test_nibble_codecs_random_vs_reference);
    tcase_add_test(t, test_e3m0_growing_vs_reference);
    tcase_add_test(t, test_e3m0_scale_segments_vs_reference);
    suite_add_tcase(s, t);
    return s;
}

CHECK_MAIN(make_suite)
