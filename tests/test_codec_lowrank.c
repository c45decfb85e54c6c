/*
 * test_codec_lowrank.c -- the powersgd and demo codecs (sim/base/codec.h)
 * and their trainer state (models/compress.h): the wire bytes by hand for
 * several shapes (1-D, tiny, padded rows, short last chunks, uint16
 * indices), the DCT by hand and its round trip, demo's kept coefficients
 * and bytes by hand, its residual identity; PowerSGD's recovery of a
 * rank-1 matrix, its average over two replicas computed by hand with the
 * same roundings, its error feedback; the engine's bytes; and coupled
 * training runs with each codec (DiLoCo and DP): the trainer's bytes equal
 * the closed form, the loss is finite and falls, coupled equals lockstep
 * and one thread equals two.
 */
#include "sim/base/codec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "models/compress.h"
#include "sim/adapter/coupled.h"
#include "sim/engine/run.h"
#include "train_run.h"

static const double PI = 3.14159265358979323846;

static codec_spec psgd(uint64_t r) {
    return (codec_spec){.kind = CODEC_POWERSGD, .rank = r};
}

static codec_spec demo(uint64_t chunk, uint64_t topk) {
    return (codec_spec){.kind = CODEC_DEMO,
                        .demo_chunk = chunk,
                        .demo_topk = topk,
                        .demo_beta = 1};
}

static float le_f32(const uint8_t *p) {
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                 (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- bytes by hand ------------------------------------------------------- */

START_TEST(test_powersgd_bytes) {
    uint64_t rows, cols;
    /* 1-D (one row): FP32 */
    ck_assert_uint_eq(codec_wire_bytes(psgd(4), 100, 0), 400);
    ck_assert_uint_eq(codec_wire_bytes(psgd(4), 100, 100), 400);
    ck_assert_int_eq(codec_lowrank_shape(psgd(4), 100, 0, &rows, &cols), 0);
    ck_assert_uint_eq(rows, 1);
    ck_assert_uint_eq(cols, 100);
    /* 64 x 256 at rank 4: 4 * 4 * (64 + 256) */
    ck_assert_uint_eq(codec_wire_bytes(psgd(4), 64 * 256, 256), 5120);
    /* the default rank is 4 */
    ck_assert_uint_eq(codec_wire_bytes(psgd(0), 64 * 256, 256), 5120);
    /* 3 x 2: rank 1 sends 5 < 6 values, rank 2 would send 10 */
    ck_assert_uint_eq(codec_wire_bytes(psgd(1), 6, 2), 4 * 5);
    ck_assert_uint_eq(codec_wire_bytes(psgd(2), 6, 2), 4 * 6);
    /* 4 x 4: rank 2 sends 16, not < 16: FP32; rank 1 sends 8 */
    ck_assert_uint_eq(codec_wire_bytes(psgd(2), 16, 4), 64);
    ck_assert_uint_eq(codec_wire_bytes(psgd(1), 16, 4), 32);
    /* 10 values in rows of 4: 3 rows (the last padded), rank 1: 3 + 4 */
    ck_assert_int_eq(codec_lowrank_shape(psgd(1), 10, 4, &rows, &cols), 1);
    ck_assert_uint_eq(rows, 3);
    ck_assert_uint_eq(cols, 4);
    ck_assert_uint_eq(codec_wire_bytes(psgd(1), 10, 4), 28);
    ck_assert_uint_eq(codec_wire_bytes(psgd(4), 0, 4), 0);
    /* a timing layer: 12 h^2 values in rows of h = 1024, rank 4 */
    uint64_t h = 1024;
    ck_assert_uint_eq(codec_wire_bytes(psgd(4), 12 * h * h, h),
                      4 * 4 * (12 * h + h));
}
END_TEST

START_TEST(test_demo_bytes) {
    /* chunk 64, 8 kept, uint8 indices: 5 bytes a coefficient */
    ck_assert_uint_eq(codec_wire_bytes(demo(64, 8), 100, 0), (8 + 8) * 5);
    ck_assert_uint_eq(codec_wire_bytes(demo(64, 8), 67, 0), (8 + 3) * 5);
    ck_assert_uint_eq(codec_wire_bytes(demo(64, 8), 5, 0), 5 * 5);
    ck_assert_uint_eq(codec_wire_bytes(demo(64, 8), 128, 0), 16 * 5);
    ck_assert_uint_eq(codec_wire_bytes(demo(64, 8), 0, 0), 0);
    /* the defaults: chunk 64, 8 kept */
    codec_spec d = {.kind = CODEC_DEMO};
    ck_assert_uint_eq(codec_wire_bytes(d, 1024, 32), 16 * 8 * 5);
    /* chunk 256 still has uint8 indices, 257 uint16 */
    ck_assert_uint_eq(codec_wire_bytes(demo(256, 3), 512, 0), 6 * 5);
    ck_assert_uint_eq(codec_wire_bytes(demo(257, 3), 514, 0), 6 * 6);
    /* chunk 300, 10 kept, 700 values: 2 chunks and a tail of 100 */
    ck_assert_uint_eq(codec_wire_bytes(demo(300, 10), 700, 0), 30 * 6);
    /* a chunk of 1 keeps its one value */
    ck_assert_uint_eq(codec_wire_bytes(demo(1, 1), 7, 0), 7 * 5);
}
END_TEST

START_TEST(test_names) {
    codec_kind k = CODEC_COUNT;
    ck_assert_int_eq(codec_parse("powersgd", &k), 0);
    ck_assert_int_eq(k, CODEC_POWERSGD);
    ck_assert_int_eq(codec_parse("demo", &k), 0);
    ck_assert_int_eq(k, CODEC_DEMO);
    ck_assert_str_eq(codec_name(CODEC_POWERSGD), "powersgd");
    ck_assert_str_eq(codec_name(CODEC_DEMO), "demo");
    ck_assert_ptr_nonnull(strstr(codec_names(), "int8, powersgd, demo"));
    /* powersgd's factors are the trainer's: codec_encode writes nothing */
    float x[6] = {1, 2, 3, 4, 5, 6};
    uint8_t buf[32] = {0};
    ck_assert_uint_eq(codec_encode(psgd(1), x, 6, 2, buf), 0);
}
END_TEST

/* ---- the DCT ------------------------------------------------------------- */

/* DCT-II of (1, 2, 3, 4), orthonormal, by hand:
 *   X0 = 10 / 2 = 5
 *   X1 = sqrt(1/2) (cos(pi/8) (1 - 4) + cos(3pi/8) (2 - 3))
 *   X2 = sqrt(1/2) cos(pi/4) (1 - 2 - 3 + 4) = 0
 *   X3 = sqrt(1/2) (cos(3pi/8) (1 - 4) + cos(pi/8) (3 - 2)) */
START_TEST(test_dct_by_hand) {
    const float x[4] = {1, 2, 3, 4};
    double cs[16];
    float X[4], y[4];
    codec_dct_table(4, cs);
    codec_dct(x, 4, cs, X);
    double c1 = cos(PI / 8), c3 = cos(3 * PI / 8), h = sqrt(0.5);
    const double want[4] = {5, h * (-3 * c1 - c3), 0, h * (-3 * c3 + c1)};
    for (int k = 0; k < 4; k++) ck_assert_double_eq_tol(X[k], want[k], 1e-6);
    ck_assert_double_eq_tol(X[1], -2.2304425, 1e-6);
    ck_assert_double_eq_tol(X[3], -0.1585127, 1e-6);
    codec_idct(X, 4, cs, y);
    for (int j = 0; j < 4; j++) ck_assert_double_eq_tol(y[j], x[j], 1e-6);
    /* length 1 is the identity; length 2 is (a + b, a - b) / sqrt 2 */
    float one = 3.5f, o;
    codec_dct_table(1, cs);
    codec_dct(&one, 1, cs, &o);
    ck_assert(o == 3.5f);
    const float ab[2] = {3, 1};
    codec_dct_table(2, cs);
    codec_dct(ab, 2, cs, X);
    ck_assert_double_eq_tol(X[0], 4 / sqrt(2), 1e-6);
    ck_assert_double_eq_tol(X[1], 2 / sqrt(2), 1e-6);
}
END_TEST

/* IDCT(DCT(x)) = x within FP32 rounding, and the DCT equals the direct
 * formula with libm's cosines of the unreduced angles. */
START_TEST(test_dct_round_trip) {
    static const uint64_t lens[] = {64, 37, 256, 5};
    uint64_t s = 12345;
    for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
        uint64_t L = lens[t];
        float *x = malloc(L * sizeof *x), *X = malloc(L * sizeof *X);
        float *y = malloc(L * sizeof *y);
        double *cs = malloc(4 * L * sizeof *cs);
        ck_assert(x && X && y && cs);
        for (uint64_t j = 0; j < L; j++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            x[j] = (float)((double)(s >> 11) / 9007199254740992.0 - 0.5);
        }
        codec_dct_table(L, cs);
        codec_dct(x, L, cs, X);
        for (uint64_t k = 0; k < L; k++) {
            double d = 0;
            for (uint64_t j = 0; j < L; j++)
                d += x[j] * cos(PI * (double)((2 * j + 1) * k) / (2.0 * L));
            d *= sqrt((k ? 2.0 : 1.0) / (double)L);
            ck_assert_double_eq_tol(X[k], d, 1e-5);
        }
        codec_idct(X, L, cs, y);
        for (uint64_t j = 0; j < L; j++)
            ck_assert_double_eq_tol(y[j], x[j], 4e-7);
        free(x), free(X), free(y), free(cs);
    }
}
END_TEST

/* ---- demo by hand -------------------------------------------------------- */

/* (1, 2, 3, 4, 3, 1) in chunks of 4, 2 kept: chunk 0's coefficients are
 * (5, -2.23, 0, -0.16): indices 0 and 1; chunk 1 (3, 1) of length 2 has
 * (4, 2) / sqrt 2: both kept.  Bytes: 4 indices, then 4 FP32. */
START_TEST(test_demo_by_hand) {
    const float x[6] = {1, 2, 3, 4, 3, 1};
    codec_spec c = demo(4, 2);
    uint64_t w = codec_wire_bytes(c, 6, 0);
    ck_assert_uint_eq(w, 4 * 5);
    uint8_t buf[20];
    ck_assert_uint_eq(codec_encode(c, x, 6, 0, buf), 20);
    ck_assert_uint_eq(buf[0], 0);
    ck_assert_uint_eq(buf[1], 1);
    ck_assert_uint_eq(buf[2], 0);
    ck_assert_uint_eq(buf[3], 1);
    double cs[16];
    float X[4], y[6], keep[4] = {0};
    codec_dct_table(4, cs);
    codec_dct(x, 4, cs, X);
    ck_assert(le_f32(buf + 4) == X[0]);
    ck_assert(le_f32(buf + 8) == X[1]);
    ck_assert_double_eq_tol(le_f32(buf + 12), 4 / sqrt(2), 1e-6);
    ck_assert_double_eq_tol(le_f32(buf + 16), 2 / sqrt(2), 1e-6);
    codec_decode(c, buf, 6, 0, y);
    keep[0] = X[0], keep[1] = X[1];
    float z[4];
    codec_idct(keep, 4, cs, z);
    for (int j = 0; j < 4; j++) ck_assert(y[j] == z[j]);
    ck_assert_double_eq_tol(y[4], 3, 1e-6);
    ck_assert_double_eq_tol(y[5], 1, 1e-6);
    /* ties go to the lower index: (0, 0) keeps index 0 of two zeros */
    const float zz[2] = {0, 0};
    codec_spec one = demo(2, 1);
    ck_assert_uint_eq(codec_encode(one, zz, 2, 0, buf), 5);
    ck_assert_uint_eq(buf[0], 0);
    /* an index beyond its chunk is skipped */
    buf[0] = 7;
    codec_decode(one, buf, 2, 0, y);
    ck_assert(y[0] == 0 && y[1] == 0);
}
END_TEST

/* uint16 indices, little-endian: a chunk of 300 with every coefficient
 * kept writes the indices 0..299 in order and decodes to its input. */
START_TEST(test_demo_wide_index) {
    enum { L = 300 };
    float x[L] = {0}, y[L];
    x[7] = 1; /* its DCT: every coefficient sqrt(2/L) cos(...) */
    codec_spec c = demo(L, L);
    uint8_t *buf = malloc(codec_wire_bytes(c, L, 0));
    ck_assert(buf);
    ck_assert_uint_eq(codec_encode(c, x, L, 0, buf), L * 6);
    for (int k = 0; k < L; k++) {
        ck_assert_uint_eq(buf[2 * k] | buf[2 * k + 1] << 8, k);
    }
    codec_decode(c, buf, L, 0, y);
    for (int j = 0; j < L; j++) ck_assert_double_eq_tol(y[j], x[j], 1e-6);
    free(buf);
}
END_TEST

/* The residual: u before = u after + IDCT(kept) within rounding; then
 * u = beta u + x for the next payload. */
START_TEST(test_demo_residual) {
    enum { N = 70 };
    float x[N], x2[N], dec[N], before[N];
    for (int k = 0; k < N; k++) {
        x[k] = sinf(0.3f * (float)k) + 0.01f * (float)k;
        x2[k] = cosf(0.2f * (float)k);
    }
    codec_spec c = demo(32, 3);
    c.demo_beta = 0.5;
    cmp_tensor t = {0, N, 10};
    cmp_state *s;
    ck_assert_int_eq(cmp_new(c, 2, &t, 1, N, 1, &s), 0);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(cmp_reduces(s), 0);
    uint64_t w = codec_wire_bytes(c, N, 10);
    ck_assert_uint_eq(w, (3 + 3 + 3) * 5);
    uint8_t *buf = malloc(w);
    ck_assert(buf);
    ck_assert_uint_eq(cmp_encode(s, 1, 0, x, buf), w);
    codec_decode(c, buf, N, 10, dec);
    const float *u = cmp_residual(s, 1, 0);
    for (int k = 0; k < N; k++) {
        ck_assert(u[k] == x[k] - dec[k]);
        ck_assert_double_eq_tol(u[k] + dec[k], x[k], 1e-6);
        before[k] = 0.5f * u[k] + x2[k];
        ck_assert(cmp_residual(s, 0, 0)[k] == 0); /* replica 0 untouched */
    }
    ck_assert_uint_eq(cmp_encode(s, 1, 0, x2, buf), w);
    codec_decode(c, buf, N, 10, dec);
    for (int k = 0; k < N; k++) ck_assert(u[k] == before[k] - dec[k]);
    free(buf);
    cmp_free(s);
}
END_TEST

/* ---- PowerSGD ------------------------------------------------------------ */

/* A rank-1 4 x 5 matrix at rank 1, one replica: after one sync P Q^T is
 * the matrix within FP32 rounding, e = M - P Q^T exactly. */
START_TEST(test_powersgd_rank1) {
    enum { R = 4, C = 5, N = R * C };
    const float u[R] = {1, -2, 0.5f, 3}, v[C] = {2, 1, -1, 0.25f, 4};
    float x[N], out[N];
    for (int a = 0; a < R; a++)
        for (int b = 0; b < C; b++) x[a * C + b] = u[a] * v[b];
    cmp_tensor t = {0, N, C};
    cmp_state *s;
    ck_assert_int_eq(cmp_new(psgd(1), 1, &t, 1, N, 7, &s), 0);
    ck_assert_int_eq(cmp_reduces(s), 1);
    uint8_t buf[4 * (R + C)];
    ck_assert_uint_eq(cmp_encode(s, 0, 0, x, buf), sizeof buf);
    uint8_t *in[1] = {buf};
    cmp_reduce(s, 0, in, 1, out);
    const float *e = cmp_residual(s, 0, 0);
    for (int k = 0; k < N; k++) {
        ck_assert_double_eq_tol(out[k], x[k], 2e-6 * 12);
        ck_assert(e[k] == x[k] - out[k]);
    }
    cmp_free(s);
}
END_TEST

/* The average over two replicas of a 3 x 2 matrix at rank 1, by hand with
 * the module's roundings: P_m = M_m q (double, to FP32), P = FP32 mean,
 * normalised in double; Q_m = M_m^T P; Q = FP32 mean; decoded = P Q^T;
 * e_m = M_m - decoded.  A second sync adds e to the payload (error
 * feedback) and starts from the kept Q (warm start). */
static void psgd_by_hand(const float m[2][6], const float q[2], float dec[6],
                         float qn[2]) {
    float pm[2][3], p[3], qm[2][2];
    for (int r = 0; r < 2; r++)
        for (int a = 0; a < 3; a++)
            pm[r][a] = (float)((double)m[r][2 * a] * q[0] +
                               (double)m[r][2 * a + 1] * q[1]);
    for (int a = 0; a < 3; a++) p[a] = (pm[0][a] + pm[1][a]) / 2.0f;
    double norm =
        sqrt((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]);
    for (int a = 0; a < 3; a++) p[a] = (float)(p[a] / norm);
    for (int r = 0; r < 2; r++)
        for (int b = 0; b < 2; b++)
            qm[r][b] =
                (float)((double)m[r][b] * p[0] + (double)m[r][2 + b] * p[1] +
                        (double)m[r][4 + b] * p[2]);
    for (int b = 0; b < 2; b++) qn[b] = (qm[0][b] + qm[1][b]) / 2.0f;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 2; b++)
            dec[2 * a + b] = (float)((double)p[a] * qn[b]);
}

START_TEST(test_powersgd_two_replicas) {
    const float x[2][6] = {{1, 2, 3, 4, 5, 7}, {-1, 0.5f, 2, 2, 0, 1}};
    cmp_tensor t = {0, 6, 2};
    cmp_state *s;
    ck_assert_int_eq(cmp_new(psgd(1), 2, &t, 1, 6, 3, &s), 0);
    float q[2], qn[2], dec[6], out[6], m[2][6];
    memcpy(q, cmp_warm_q(s, 0), sizeof q);
    ck_assert(q[0] != 0 || q[1] != 0);
    uint8_t b0[20], b1[20], *in[2] = {b0, b1};
    for (int sync = 0; sync < 2; sync++) {
        for (int r = 0; r < 2; r++)
            for (int k = 0; k < 6; k++)
                m[r][k] = x[r][k] + cmp_residual(s, r, 0)[k];
        ck_assert_uint_eq(cmp_encode(s, 0, 0, x[0], b0), 20);
        ck_assert_uint_eq(cmp_encode(s, 1, 0, x[1], b1), 20);
        cmp_reduce(s, 0, in, 3, out);
        psgd_by_hand(m, q, dec, qn);
        for (int k = 0; k < 6; k++) ck_assert(out[k] == dec[k]);
        for (int b = 0; b < 2; b++) ck_assert(cmp_warm_q(s, 0)[b] == qn[b]);
        for (int r = 0; r < 2; r++)
            for (int k = 0; k < 6; k++)
                ck_assert(cmp_residual(s, r, 0)[k] == m[r][k] - dec[k]);
        /* the wire holds P_1 then Q_1: P_1 = M_1 q as FP32 */
        ck_assert(le_f32(b1) ==
                  (float)((double)m[1][0] * q[0] + (double)m[1][1] * q[1]));
        memcpy(q, qn, sizeof q);
    }
    /* a reduce over replica 0 alone leaves replica 1's e as it was */
    float e1[6];
    memcpy(e1, cmp_residual(s, 1, 0), sizeof e1);
    ck_assert_uint_eq(cmp_encode(s, 0, 0, x[0], b0), 20);
    ck_assert_uint_eq(cmp_encode(s, 1, 0, x[1], b1), 20);
    cmp_reduce(s, 0, in, 1, out);
    ck_assert_int_eq(memcmp(e1, cmp_residual(s, 1, 0), sizeof e1), 0);
    cmp_free(s);
}
END_TEST

/* A 1-D tensor goes as FP32, averaged as FP32, with no error feedback. */
START_TEST(test_powersgd_vector) {
    const float x0[5] = {1, 2, 3, 4, 5}, x1[5] = {0.5f, 0, -3, 1, 2};
    cmp_tensor t = {0, 5, 5};
    cmp_state *s;
    ck_assert_int_eq(cmp_new(psgd(4), 2, &t, 1, 5, 1, &s), 0);
    ck_assert_ptr_null(cmp_warm_q(s, 0));
    uint8_t b0[20], b1[20], *in[2] = {b0, b1};
    float out[5];
    ck_assert_uint_eq(cmp_encode(s, 0, 0, x0, b0), 20);
    ck_assert_uint_eq(cmp_encode(s, 1, 0, x1, b1), 20);
    cmp_reduce(s, 0, in, 3, out);
    for (int k = 0; k < 5; k++) {
        ck_assert(out[k] == (x0[k] + x1[k]) / 2.0f);
        ck_assert(cmp_residual(s, 0, 0)[k] == 0);
    }
    cmp_free(s);
}
END_TEST

/* ---- in runs ------------------------------------------------------------- */

/* A 2-worker, 1-layer world of 1000 parameters in rows of 10, DiLoCo H 5
 * over 10 steps: two syncs of one payload each. */
static run_result run_with(const char *a, const char *b, const char *c) {
    const char *doc =
        "{\"model\": {\"params\": 1000, \"layers\": 1, \"hidden\": 10,"
        " \"step_time_s\": 1},"
        " \"workers\": {\"count\": 2}, \"network\": {\"bandwidth_gbps\": 1},"
        " \"method\": {\"name\": \"diloco\", \"H\": 5, \"dp_bucket_mb\": 0,"
        "  \"bucket_mb\": 0}, \"steps\": 10}";
    const char *sets[3] = {a, b, c};
    int n = c ? 3 : b ? 2 : a ? 1 : 0;
    scn_config cfg;
    char err[512];
    int rc = scn_load_string(doc, "s.json", sets, n, &cfg, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    run_result r;
    rc = run_simulate(&cfg, NULL, &r, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    return r;
}

START_TEST(test_engine_bytes) {
    /* 100 x 10 at rank 4: 4 * 4 * 110 = 1760 bytes a sync */
    run_result r = run_with("method.codec=powersgd", NULL, NULL);
    ck_assert_int_eq(r.syncs, 2);
    ck_assert_uint_eq(r.per_worker[0].bytes_sent, 2 * 1760);
    r = run_with("method.codec=powersgd", "method.rank=2", NULL);
    ck_assert_uint_eq(r.per_worker[1].bytes_sent, 2 * 4 * 2 * 110);
    /* demo, chunk 64 and 8 kept: 15 chunks of 64 and one of 40: 16 * 8 * 5 */
    r = run_with("method.codec=demo", NULL, NULL);
    ck_assert_uint_eq(r.per_worker[0].bytes_sent, 2 * 640);
    r = run_with("method.codec=demo", "method.demo_chunk=300",
                 "method.demo_topk=2");
    ck_assert_uint_eq(r.per_worker[0].bytes_sent, 2 * (3 * 2 + 2) * 6);
    /* as dp_codec, every step */
    r = run_with("method.name=dp", "method.dp_codec=powersgd", "method.rank=1");
    ck_assert_int_eq(r.syncs, 10);
    ck_assert_uint_eq(r.per_worker[0].bytes_sent, 10 * 4 * 110);
}
END_TEST

/* train_run.h's smoke run as DiLoCo: two replicas of an MLP (vocab 32,
 * d 32, 2 blocks, hidden 128), H 10, 30 steps. */
static const char *smoke = TRAIN_RUN_SMOKE;

typedef struct {
    double first; /* the first row's eval loss */
} first_row;

static int on_row(const cpl_row *r, void *ctx) {
    first_row *f = ctx;
    if (isnan(f->first)) f->first = r->eval_loss;
    return 0;
}

/* A coupled (or lockstep) run of smoke with the overrides sets (up to
 * 3, NULL-ended), on two threads when `two`; *first gets the first row's
 * eval loss. */
static cpl_summary train_with(int lockstep, const char *const *sets, int two,
                              double *first) {
    const char *all[5] = {"method.name=diloco"};
    int n = 1;
    while (n < 4 && sets[n - 1]) all[n] = sets[n - 1], n++;
    if (two) all[n++] = "train.threads=2";
    first_row f = {NAN};
    cpl_summary s = train_run(smoke, all, n, lockstep, on_row, &f);
    if (first) *first = f.first;
    return s;
}

/* The MLP's tensors per replica: wte 32 x 32; per block ln.w, ln.b (32),
 * fc.w 128 x 32, fc.b (128), proj.w 32 x 128, proj.b (32); lnf.w, lnf.b
 * (32), head.w 32 x 32.
 *   powersgd rank 4: the matrices 4 r (rows + cols): 32 x 32 -> 1024,
 *     128 x 32 -> 2560; the vectors 4n: 128 (32), 512 (128).  Block:
 *     128 + 128 + 2560 + 512 + 2560 + 128 = 6016; the whole:
 *     1024 + 2 * 6016 + 128 + 128 + 1024 = 14336.
 *   demo chunk 64, 8 kept, 5 bytes each: 1024 values -> 16 chunks -> 640;
 *     32 -> 8 kept -> 40; 4096 -> 2560; 128 -> 80.  Block: 40 + 40 +
 *     2560 + 80 + 2560 + 40 = 5320; the whole 640 + 2 * 5320 + 40 + 40 +
 *     640 = 12000. */
START_TEST(test_coupled_train) {
    static const struct {
        const char *sets[3];
        uint64_t bytes; /* of the run: syncs x 2 replicas x payload */
    } runs[] = {
        {{"method.codec=powersgd", NULL, NULL}, 3 * 2 * 14336},
        {{"method.codec=demo", NULL, NULL}, 3 * 2 * 12000},
        {{"method.codec=demo", "method.demo_beta=0.9", NULL}, 3 * 2 * 12000},
        {{"method.name=dp", "method.dp_codec=powersgd", NULL}, 30 * 2 * 14336},
        {{"method.name=dp", "method.dp_codec=demo", NULL}, 30 * 2 * 12000},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        double first;
        cpl_summary c = train_with(0, runs[i].sets, 0, &first);
        cpl_summary l = train_with(1, runs[i].sets, 0, NULL);
        cpl_summary t = train_with(0, runs[i].sets, 1, NULL);
        ck_assert_int_eq(c.last.step, 30);
        /* below the first row's and a uniform guess's (ln 32) */
        ck_assert_msg(isfinite(c.last.eval_loss) && c.last.eval_loss < first &&
                          c.last.eval_loss < log(32),
                      "run %zu: eval loss %g, first %g", i, c.last.eval_loss,
                      first);
        ck_assert(isfinite(c.last.train_loss));
        ck_assert_uint_eq(c.last.bytes_sent, runs[i].bytes);
        ck_assert(c.last.eval_loss == l.last.eval_loss);
        ck_assert(c.last.train_loss == l.last.train_loss);
        ck_assert_uint_eq(c.last.bytes_sent, l.last.bytes_sent);
        ck_assert(c.last.eval_loss == t.last.eval_loss);
        ck_assert(c.last.train_loss == t.last.train_loss);
    }
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("codec_lowrank");
    TCase *t = tcase_create("core");
    tcase_add_test(t, test_powersgd_bytes);
    tcase_add_test(t, test_demo_bytes);
    tcase_add_test(t, test_names);
    tcase_add_test(t, test_dct_by_hand);
    tcase_add_test(t, test_dct_round_trip);
    tcase_add_test(t, test_demo_by_hand);
    tcase_add_test(t, test_demo_wide_index);
    tcase_add_test(t, test_demo_residual);
    tcase_add_test(t, test_powersgd_rank1);
    tcase_add_test(t, test_powersgd_two_replicas);
    tcase_add_test(t, test_powersgd_vector);
    tcase_add_test(t, test_engine_bytes);
    tcase_add_test(t, test_coupled_train);
    suite_add_tcase(s, t);
    return s;
}

CHECK_MAIN(make_suite)
