/*
 * test_codec_more.c -- the topk and int8 codecs (sim/base/codec.h): k and
 * the wire bytes by hand, round trips of small vectors by hand (the bytes
 * too), ties, zeros and non-finite input, determinism, a random property
 * test of topk against a plain sort, and the codecs in whole runs: the
 * engine's bytes of a 2-worker, 1-layer world equal the wire bytes times
 * the syncs, and a coupled training run with each codec has finite losses
 * and equals its lockstep reference.
 */
#include "sim/base/codec.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/adapter/coupled.h"
#include "sim/engine/run.h"
#include "train_run.h"

/* ---- helpers ------------------------------------------------------------- */

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static codec_spec topk(double kf) {
    return (codec_spec){.kind = CODEC_TOPK, .k_fraction = kf};
}

static const codec_spec int8 = {.kind = CODEC_INT8};

/* Encodes (checking the size and that a second encoding gives the same
 * bytes), decodes into y; returns the buffer (caller frees). */
static uint8_t *trip(codec_spec c, const float *x, uint64_t n, uint64_t row,
                     float *y) {
    uint64_t w = codec_wire_bytes(c, n, row);
    uint8_t *a = malloc(w + 1), *b = malloc(w + 1);
    ck_assert(a && b);
    ck_assert_uint_eq(codec_encode(c, x, n, row, a), w);
    ck_assert_uint_eq(codec_encode(c, x, n, row, b), w);
    ck_assert_int_eq(memcmp(a, b, w), 0);
    free(b);
    codec_decode(c, a, n, row, y);
    return a;
}

/* A small deterministic generator (xorshift64*), uniform in [0, 1). */
static double uni(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53;
}

/* ---- k and wire bytes ---------------------------------------------------- */

START_TEST(test_topk_count) {
    ck_assert_uint_eq(codec_topk_count(topk(0.01), 0), 0);
    ck_assert_uint_eq(codec_topk_count(topk(0.01), 1), 1);
    ck_assert_uint_eq(codec_topk_count(topk(0.01), 100), 1);
    ck_assert_uint_eq(codec_topk_count(topk(0.01), 101), 2);   /* 1.01 */
    ck_assert_uint_eq(codec_topk_count(topk(0.01), 1000), 10); /* whole */
    ck_assert_uint_eq(codec_topk_count(topk(0.1), 30), 3); /* 3.0000000004 */
    ck_assert_uint_eq(codec_topk_count(topk(0.1), 31), 4); /* 3.1 */
    ck_assert_uint_eq(codec_topk_count(topk(0.5), 3), 2);  /* 1.5 */
    ck_assert_uint_eq(codec_topk_count(topk(1), 7), 7);
    ck_assert_uint_eq(codec_topk_count(topk(2), 7), 7);   /* capped at 1 */
    ck_assert_uint_eq(codec_topk_count(topk(0), 500), 5); /* the default */
    ck_assert_uint_eq(codec_topk_count(topk(0.01), 1ull << 40),
                      10995116278ull); /* ceil(2^40 / 100) */
}
END_TEST

START_TEST(test_wire_bytes_by_hand) {
    /* topk: 4 bytes of count, then 4 + 4 bytes a kept value */
    ck_assert_uint_eq(codec_wire_bytes(topk(0.01), 0, 0), 0);
    ck_assert_uint_eq(codec_wire_bytes(topk(0.01), 1, 0), 4 + 8);
    ck_assert_uint_eq(codec_wire_bytes(topk(0.01), 1000, 0), 4 + 8 * 10);
    ck_assert_uint_eq(codec_wire_bytes(topk(0.1), 30, 7), 4 + 8 * 3);
    ck_assert_uint_eq(codec_wire_bytes(topk(0.25), 8, 0), 4 + 8 * 2);
    /* int8: a scale a row, a byte a value; rows of row_len (0: one) */
    ck_assert_uint_eq(codec_wire_bytes(int8, 0, 4), 0);
    ck_assert_uint_eq(codec_wire_bytes(int8, 10, 4), 3 * 4 + 10);
    ck_assert_uint_eq(codec_wire_bytes(int8, 8, 4), 2 * 4 + 8);
    ck_assert_uint_eq(codec_wire_bytes(int8, 5, 0), 4 + 5);
    ck_assert_uint_eq(codec_wire_bytes(int8, 5, 10), 4 + 5);
    ck_assert_uint_eq(codec_wire_bytes(int8, 1000, 10), 100 * 4 + 1000);
    /* the block is not topk's nor int8's */
    codec_spec b = int8;
    b.block = 3;
    ck_assert_uint_eq(codec_wire_bytes(b, 10, 4), 3 * 4 + 10);
}
END_TEST

START_TEST(test_names) {
    static const struct {
        const char *name;
        codec_kind kind;
    } by_name[] = {{"topk", CODEC_TOPK}, {"int8", CODEC_INT8}};
    for (int i = 0; i < 2; i++) {
        codec_kind k = CODEC_COUNT;
        ck_assert_int_eq(codec_parse(by_name[i].name, &k), 0);
        ck_assert_int_eq(k, by_name[i].kind);
        ck_assert_str_eq(codec_name(k), by_name[i].name);
    }
    ck_assert_str_eq(codec_names(),
                     "fp32, bf16, fp16, fp8_e4m3, e3m0, e2m1, uint8, topk, "
                     "int8, powersgd, demo");
}
END_TEST

/* ---- topk by hand -------------------------------------------------------- */

/* |x| = 3 at indices 1, 3 and 6; then 2 at 2.  k 2 keeps 1 and 3 (the tie
 * goes to the lower indices), k 4 keeps 1, 2, 3, 6. */
START_TEST(test_topk_by_hand) {
    const float x[8] = {0.5f, -3.0f, 2.0f, -3.0f, 0.0f, 1e-3f, 3.0f, -0.25f};
    float y[8];
    uint8_t *b = trip(topk(0.25), x, 8, 0, y);
    /* count 2, indices 1 and 3, the values -3 (0xc0400000) twice, every
     * field little-endian */
    static const uint8_t want[20] = {2, 0, 0, 0, 1,    0,    0, 0, 3,    0,
                                     0, 0, 0, 0, 0x40, 0xc0, 0, 0, 0x40, 0xc0};
    ck_assert_int_eq(memcmp(b, want, sizeof want), 0);
    const float y2[8] = {0, -3.0f, 0, -3.0f, 0, 0, 0, 0};
    for (int i = 0; i < 8; i++) ck_assert_uint_eq(f2u(y[i]), f2u(y2[i]));
    free(b);

    b = trip(topk(0.5), x, 8, 0, y);
    ck_assert_uint_eq(le32(b), 4);
    static const uint32_t idx[4] = {1, 2, 3, 6};
    for (int j = 0; j < 4; j++) {
        ck_assert_uint_eq(le32(b + 4 + 4 * j), idx[j]);
        ck_assert_uint_eq(le32(b + 20 + 4 * j), f2u(x[idx[j]]));
    }
    const float y4[8] = {0, -3.0f, 2.0f, -3.0f, 0, 0, 3.0f, 0};
    for (int i = 0; i < 8; i++) ck_assert_uint_eq(f2u(y[i]), f2u(y4[i]));
    free(b);

    /* k = n: every value, bits unchanged */
    b = trip(topk(1), x, 8, 0, y);
    for (int i = 0; i < 8; i++) ck_assert_uint_eq(f2u(y[i]), f2u(x[i]));
    free(b);
}
END_TEST

/* Zeros: -0 and +0 tie, so the lowest index is kept, sign and all; the
 * others decode to +0. */
START_TEST(test_topk_zeros) {
    const float x[3] = {-0.0f, 0.0f, -0.0f};
    float y[3];
    uint8_t *b = trip(topk(0.01), x, 3, 0, y);
    ck_assert_uint_eq(le32(b), 1);
    ck_assert_uint_eq(le32(b + 4), 0);
    ck_assert_uint_eq(le32(b + 8), 0x80000000u);
    ck_assert_uint_eq(f2u(y[0]), 0x80000000u);
    ck_assert_uint_eq(f2u(y[1]), 0);
    ck_assert_uint_eq(f2u(y[2]), 0);
    free(b);
}
END_TEST

/* Non-finite values rank above every finite one (NaN above inf) and are
 * sent as they are. */
START_TEST(test_topk_nonfinite) {
    const float x[6] = {1.0f, INFINITY, -0.5f, NAN, -INFINITY, 0.25f};
    float y[6];
    uint8_t *b = trip(topk(0.01), x, 6, 0, y); /* k 1: the NaN */
    ck_assert_uint_eq(le32(b + 4), 3);
    ck_assert(isnan(y[3]));
    for (int i = 0; i < 6; i++)
        if (i != 3) ck_assert_uint_eq(f2u(y[i]), 0);
    free(b);
    b = trip(topk(0.5), x, 6, 0, y); /* k 3: NaN, then inf and -inf */
    ck_assert_uint_eq(le32(b + 4), 1);
    ck_assert_uint_eq(le32(b + 8), 3);
    ck_assert_uint_eq(le32(b + 12), 4);
    ck_assert(isinf(y[1]) && y[1] > 0 && isnan(y[3]));
    ck_assert(isinf(y[4]) && y[4] < 0);
    ck_assert(y[0] == 0 && y[2] == 0 && y[5] == 0);
    free(b);
    b = trip(topk(4.0 / 6), x, 6, 0, y); /* k 4: and 1.0 */
    ck_assert_float_eq(y[0], 1.0f);
    ck_assert(y[2] == 0 && y[5] == 0);
    free(b);
}
END_TEST

/* Bad bytes decode without reading or writing out of bounds: a count above
 * k is capped, an index at or beyond n skipped. */
START_TEST(test_topk_bad_bytes) {
    uint8_t b[4 + 8 * 2];
    memset(b, 0xff, sizeof b);
    b[4] = 1; /* index 1, the other 0xffffffff */
    b[5] = b[6] = b[7] = 0;
    float y[4] = {9, 9, 9, 9};
    codec_decode(topk(0.5), b, 4, 0, y);
    ck_assert(y[0] == 0 && y[2] == 0 && y[3] == 0 && isnan(y[1]));
}
END_TEST

/* Random vectors, many ties (values from a small set, both zeros, random
 * signs): decode(encode(x)) keeps exactly the k first of a plain sort by
 * (|x| bits descending, index ascending), with their bits, indices in
 * increasing order, and +0 elsewhere. */
typedef struct {
    uint32_t mag, idx;
} ranked;

static int by_rank(const void *a, const void *b) {
    const ranked *p = a, *q = b;
    if (p->mag != q->mag) return p->mag < q->mag ? 1 : -1;
    return (p->idx > q->idx) - (p->idx < q->idx);
}

START_TEST(test_topk_random_vs_sort) {
    enum { NMAX = 3000 };
    float *x = malloc(NMAX * sizeof *x), *y = malloc(NMAX * sizeof *y);
    ranked *r = malloc(NMAX * sizeof *r);
    char *kept = malloc(NMAX);
    ck_assert(x && y && r && kept);
    uint64_t s = 99;
    for (int trial = 0; trial < 300; trial++) {
        uint64_t n = 1 + (uint64_t)(uni(&s) * NMAX);
        int levels = 1 + (int)(uni(&s) * 40); /* few: ties */
        for (uint64_t i = 0; i < n; i++) {
            double v = (trial % 3 == 0)
                           ? ldexp(uni(&s), (int)(uni(&s) * 80) - 40)
                           : (int)(uni(&s) * levels) * 0.125;
            x[i] = (float)(uni(&s) < 0.5 ? -v : v);
        }
        double kf = trial % 7 == 0 ? 1.0 : uni(&s) * 0.3 + 1e-4;
        codec_spec c = topk(kf);
        uint64_t k = codec_topk_count(c, n);
        ck_assert(k >= 1 && k <= n && k >= ceil(kf * n) - 1);
        uint8_t *b = trip(c, x, n, 0, y);
        for (uint64_t i = 0; i < n; i++)
            r[i] = (ranked){f2u(x[i]) & 0x7fffffffu, (uint32_t)i};
        qsort(r, n, sizeof *r, by_rank);
        memset(kept, 0, n);
        for (uint64_t j = 0; j < k; j++) kept[r[j].idx] = 1;
        ck_assert_uint_eq(le32(b), k);
        for (uint64_t j = 0, i = 0; i < n; i++) {
            if (!kept[i]) {
                ck_assert_uint_eq(f2u(y[i]), 0);
                continue;
            }
            ck_assert_uint_eq(f2u(y[i]), f2u(x[i]));
            ck_assert_uint_eq(le32(b + 4 + 4 * j), i);
            j++;
        }
        free(b);
    }
    free(x);
    free(y);
    free(r);
    free(kept);
}
END_TEST

/* ---- int8 by hand -------------------------------------------------------- */

/* Rows of 4.  Row 0: max 127, scale 1 exactly: 2.5 -> 2 and -3.5 -> -4
 * (ties to even), 0.5 -> 0.  Row 1: zeros, scale 0, codes 0, +0 out.  Row
 * 2: max 254, scale 2: 5/2 = 2.5 -> 2, -1/2 -> 0, 3/2 = 1.5 -> 2. */
START_TEST(test_int8_by_hand) {
    const float x[12] = {127.0f, 2.5f, -3.5f,  0.5f, 0,     -0.0f,
                         0,      0,    254.0f, 5.0f, -1.0f, 3.0f};
    float y[12];
    uint8_t *b = trip(int8, x, 12, 4, y);
    ck_assert_uint_eq(codec_wire_bytes(int8, 12, 4), 3 * 4 + 12);
    ck_assert_uint_eq(le32(b), 0x3f800000u);     /* 1.0f */
    ck_assert_uint_eq(le32(b + 4), 0);           /* 0.0f */
    ck_assert_uint_eq(le32(b + 8), 0x40000000u); /* 2.0f */
    static const uint8_t codes[12] = {0x7f, 2, 0xfc, 0, 0, 0,
                                      0,    0, 0x7f, 2, 0, 2};
    ck_assert_int_eq(memcmp(b + 12, codes, 12), 0);
    static const float want[12] = {127, 2, -4, 0, 0, 0, 0, 0, 254, 4, 0, 4};
    for (int i = 0; i < 12; i++) ck_assert_uint_eq(f2u(y[i]), f2u(want[i]));
    free(b);
    /* a negative maximum maps to -127; one row when row_len is 0 */
    const float z[3] = {-12.7f, 1.0f, 0.05f};
    b = trip(int8, z, 3, 0, y);
    float sc = 12.7f / 127.0f;
    ck_assert_uint_eq(le32(b), f2u(sc));
    ck_assert_uint_eq(b[4], 0x81); /* -127 */
    ck_assert_uint_eq(b[5], (uint8_t)(int)nearbyint(1.0 / (double)sc));
    ck_assert_uint_eq(b[6], 0); /* 0.05 / 0.1 = 0.5 (about): 0 */
    ck_assert_float_eq(y[0], -127.0f * sc);
    free(b);
}
END_TEST

/* inf saturates to +-127 in the finite values' scale, NaN is code 0; a
 * row of nothing finite has scale 0 and decodes to zeros. */
START_TEST(test_int8_nonfinite) {
    const float x[6] = {1.0f, INFINITY, -0.5f, NAN, -INFINITY, 0.25f};
    float y[6];
    uint8_t *b = trip(int8, x, 6, 0, y);
    float sc = 1.0f / 127.0f;
    ck_assert_uint_eq(le32(b), f2u(sc));
    ck_assert_uint_eq(b[4 + 0], 127);
    ck_assert_uint_eq(b[4 + 1], 127);
    ck_assert_uint_eq(b[4 + 3], 0);
    ck_assert_uint_eq(b[4 + 4], 0x81);
    ck_assert_float_eq(y[1], 127.0f * sc);
    ck_assert_float_eq(y[4], -127.0f * sc);
    ck_assert_float_eq(y[3], 0.0f);
    free(b);
    const float z[3] = {INFINITY, NAN, -INFINITY};
    b = trip(int8, z, 3, 0, y);
    ck_assert_uint_eq(le32(b), 0);
    for (int i = 0; i < 3; i++) ck_assert(y[i] == 0.0f);
    free(b);
    /* the FP32 extremes stay finite */
    const float e[2] = {FLT_MAX, -FLT_MAX};
    free(trip(int8, e, 2, 0, y));
    ck_assert(isfinite(y[0]) && isfinite(y[1]) && y[0] >= 0x1p127f);
}
END_TEST

/* |decoded - x| <= scale / 2 for finite x (the rounding of x / scale, plus
 * the FP32 rounding of the product and of the scale); the bound is
 * reached. */
START_TEST(test_int8_error_bound) {
    enum { N = 4096, ROW = 64 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    ck_assert(x && y);
    uint64_t s = 5;
    for (int i = 0; i < N; i++)
        x[i] = (float)ldexp(uni(&s) - 0.5, (int)(uni(&s) * 20) - 10);
    free(trip(int8, x, N, ROW, y));
    double worst = 0;
    for (int r = 0; r < N / ROW; r++) {
        float m = 0;
        for (int i = r * ROW; i < (r + 1) * ROW; i++)
            m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
        double half = m / 127.0 / 2;
        for (int i = r * ROW; i < (r + 1) * ROW; i++) {
            double err = fabs((double)y[i] - x[i]);
            ck_assert(err <= half * (1 + 1e-6) + FLT_EPSILON * fabs(x[i]));
            worst = fmax(worst, err / half);
        }
    }
    ck_assert_double_gt(worst, 0.95);
    free(x);
    free(y);
}
END_TEST

/* ---- in runs ------------------------------------------------------------- */

/* 2 workers, 1 layer of 1000 parameters as rows of 10, DiLoCo H 10, 20
 * steps: syncs after steps 10 and 20, each one ring of S bytes, of which
 * each of the 2 workers sends 2(M-1)/M S = S.  DP: one ring a step. */
static const char *world =
    "{\"model\": {\"params\": 1000, \"layers\": 1, \"hidden\": 10,"
    "  \"step_time_s\": 1},"
    " \"workers\": {\"count\": 2},"
    " \"network\": {\"bandwidth_gbps\": 1, \"latency_ms\": 1},"
    " \"method\": {\"name\": \"diloco\", \"H\": 10, \"bucket_mb\": 0,"
    "  \"dp_bucket_mb\": 0},"
    " \"steps\": 20}";

static run_result run_with(const char *a, const char *b, const char *c) {
    const char *sets[3] = {a, b, c};
    int n = c ? 3 : b ? 2 : 1;
    scn_config cfg;
    char err[512];
    int rc = scn_load_string(world, "w.json", sets, n, &cfg, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    run_result r;
    rc = run_simulate(&cfg, NULL, &r, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_int_eq(r.finished, 1);
    return r;
}

static void bytes_are(const run_result *r, int64_t syncs, uint64_t S) {
    ck_assert_int_eq(r->syncs, syncs);
    for (int w = 0; w < 2; w++)
        ck_assert_uint_eq(r->per_worker[w].bytes_sent, (uint64_t)syncs * S);
    ck_assert_uint_eq(r->bytes_sent_total, 2 * (uint64_t)syncs * S);
}

START_TEST(test_engine_bytes) {
    /* topk 0.1 of 1000: k 100, S = 4 + 8 * 100 = 804 */
    run_result r = run_with("method.codec=topk", "method.k_fraction=0.1", NULL);
    ck_assert_uint_eq(codec_wire_bytes(topk(0.1), 1000, 10), 804);
    bytes_are(&r, 2, 804);
    /* the default k_fraction 0.01: k 10, S = 84 */
    r = run_with("method.codec=topk", NULL, NULL);
    bytes_are(&r, 2, 84);
    /* int8, rows of 10: S = 100 * 4 + 1000 = 1400 */
    r = run_with("method.codec=int8", NULL, NULL);
    ck_assert_uint_eq(codec_wire_bytes(int8, 1000, 10), 1400);
    bytes_are(&r, 2, 1400);
    /* as dp_codec, every step; k_fraction is dp_codec's too */
    r = run_with("method.name=dp", "method.dp_codec=topk",
                 "method.k_fraction=0.5");
    bytes_are(&r, 20, 4 + 8 * 500);
    r = run_with("method.name=dp", "method.dp_codec=int8", NULL);
    bytes_are(&r, 20, 1400);
}
END_TEST

static const char *smoke = TRAIN_RUN_SMOKE;

static cpl_summary train_with(int lockstep, const char *a, const char *b) {
    const char *sets[2] = {a, b};
    return train_run(smoke, sets, b ? 2 : 1, lockstep, NULL, NULL);
}

START_TEST(test_coupled_train) {
    static const char *const sets[][2] = {
        {"method.codec=topk", "method.k_fraction=0.1"},
        {"method.codec=int8", NULL},
    };
    for (int i = 0; i < 2; i++) {
        cpl_summary c = train_with(0, sets[i][0], sets[i][1]);
        cpl_summary l = train_with(1, sets[i][0], sets[i][1]);
        ck_assert_int_eq(c.last.step, 30);
        ck_assert(isfinite(c.last.train_loss) && isfinite(c.last.eval_loss));
        ck_assert(c.last.eval_loss == l.last.eval_loss);
        ck_assert(c.last.train_loss == l.last.train_loss);
        ck_assert_uint_eq(c.last.bytes_sent, l.last.bytes_sent);
        ck_assert_uint_gt(c.last.bytes_sent, 0);
    }
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("codec_more");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_topk_count);
    tcase_add_test(t, test_wire_bytes_by_hand);
    tcase_add_test(t, test_names);
    tcase_add_test(t, test_topk_by_hand);
    tcase_add_test(t, test_topk_zeros);
    tcase_add_test(t, test_topk_nonfinite);
    tcase_add_test(t, test_topk_bad_bytes);
    tcase_add_test(t, test_topk_random_vs_sort);
    tcase_add_test(t, test_int8_by_hand);
    tcase_add_test(t, test_int8_nonfinite);
    tcase_add_test(t, test_int8_error_bound);
    tcase_add_test(t, test_engine_bytes);
    tcase_add_test(t, test_coupled_train);
    suite_add_tcase(s, t);
    return s;
}

CHECK_MAIN(make_suite)
