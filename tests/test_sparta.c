/*
 * test_sparta.c -- method sparta (random-subset parameter averaging), by
 * hand:
 *
 *   - the schedule: tau + 1 strided slots, one sync taken and one applied
 *     after every step; the subset's size k = max(1, ceil(p * n)) and its
 *     draw (distinct, increasing, a pure function of seed, step and part,
 *     uniform over many draws);
 *   - the trainer on a toy of 8 values with constant gradients per
 *     replica (two tensors of 4), p 0.5: after one step the subset holds
 *     the replicas' mean
 *     and the other values are untouched; alpha 0.5 halves the way;
 *     tau 1 merges the subset of step 1 after step 2; the bytes are the
 *     codec's of k values;
 *   - the timing's bytes per step: every slot carries the whole model's
 *     subset (two runs by hand, to the nanosecond: tests/test_run_cases.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "models/train.h"
#include "sim/base/codec.h"
#include "sim/base/schedule.h"
#include "sim/engine/payload.h"

/* ---- the schedule ------------------------------------------------------- */

START_TEST(test_slots) {
    sched_spec s = {.method = SCHED_SPARTA,
                    .layers = 4,
                    .H = 99,
                    .P = 7,
                    .tau = 2,
                    .alpha = 0,
                    .subset = 0.5};
    char err[128];
    ck_assert_msg(sched_normalize(&s, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.H, 3);
    ck_assert_int_eq(s.P, 3);
    ck_assert_int_eq(sched_delay(&s), 2);
    /* applied after t: slot (t - 1) mod 3; taken after t: the slot
     * applied after t + 2, (t + 1) mod 3; none taken past T - tau */
    for (int64_t t = 1; t <= 10; t++) {
        int f[3];
        ck_assert_int_eq(sched_applied_after(&s, t, f), 1);
        ck_assert_int_eq(f[0], (int)((t - 1) % 3));
        ck_assert_int_eq(sched_taken_after(&s, t, 10, f), t <= 8);
        if (t <= 8) ck_assert_int_eq(f[0], (int)((t + 1) % 3));
    }
    ck_assert(!sched_has_outer(&s));
    s = (sched_spec){.method = SCHED_SPARTA,
                     .layers = 4,
                     .tau = 4,
                     .subset = 0.5};
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), -1);
    ck_assert_str_eq(err, "tau must be in 0..layers-1 = 3 with method sparta "
                          "(got 4)");
    s = (sched_spec){.method = SCHED_SPARTA, .layers = 4, .subset = 0};
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), -1);
    ck_assert_str_eq(err, "subset_fraction must be in (0, 1] (got 0)");
    s = (sched_spec){.method = SCHED_SPARTA,
                     .layers = 4,
                     .subset = 0.1,
                     .overlap = SCHED_EAGER};
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), -1);
    ck_assert_str_eq(err, "sparta overlaps by tau steps (expected overlap "
                          "inner, got eager)");
}
END_TEST

START_TEST(test_subset_count_and_draw) {
    ck_assert_uint_eq(sched_subset_count(0.005, 1000000), 5000);
    ck_assert_uint_eq(sched_subset_count(0.005, 1001), 6); /* 5.005 up */
    ck_assert_uint_eq(sched_subset_count(0.1, 30), 3);     /* not 4 */
    ck_assert_uint_eq(sched_subset_count(0.001, 10), 1);   /* at least 1 */
    ck_assert_uint_eq(sched_subset_count(1, 10), 10);
    ck_assert_uint_eq(sched_subset_count(0.5, 0), 0);
    uint32_t perm[100], a[50], b[50], c[50];
    ck_assert_int_eq(sched_subset(7, 3, 1, 100, 0.5, perm, a), 50);
    ck_assert_int_eq(sched_subset(7, 3, 1, 100, 0.5, perm, b), 50);
    ck_assert(memcmp(a, b, sizeof a) == 0); /* pure */
    for (int i = 1; i < 50; i++) ck_assert_uint_lt(a[i - 1], a[i]);
    ck_assert_uint_lt(a[49], 100);
    sched_subset(7, 4, 1, 100, 0.5, perm, b); /* another step */
    sched_subset(7, 3, 2, 100, 0.5, perm, c); /* another part */
    ck_assert(memcmp(a, b, sizeof a) != 0 && memcmp(a, c, sizeof a) != 0);
    /* uniform: over 4000 draws of 2 of 8 every index comes 1000 times in
     * expectation (sd about 27); each within 5.5 sd */
    int hits[8] = {0};
    uint32_t p8[8], two[2];
    for (int64_t t = 1; t <= 4000; t++) {
        ck_assert_int_eq(sched_subset(1, t, 0, 8, 0.25, p8, two), 2);
        ck_assert_uint_ne(two[0], two[1]);
        hits[two[0]]++, hits[two[1]]++;
    }
    for (int i = 0; i < 8; i++) ck_assert_int_lt(abs(hits[i] - 1000), 150);
}
END_TEST

/* ---- the trainer -------------------------------------------------------- */

/* A toy of two units of N/2 values (one tensor each), loss = sum(g .* p):
 * replica r's gradient at value i is (r + 1) * (i + 1), constant;
 * parameters start at 0. */
#define N 8
typedef struct {
    float p[N], g[N], grad[N];
} vtoy;
static int vtoy_made;
static const nn_tensor vtoy_tensor = {"p", 0, 1, N / 2, 0};

static void *vtoy_create(const void *cfg, int batch, int seq, uint64_t seed,
                         char *err, size_t errlen) {
    (void)cfg, (void)batch, (void)seq, (void)seed, (void)err, (void)errlen;
    vtoy *t = calloc(1, sizeof *t);
    int r = vtoy_made++;
    for (int i = 0; t && i < N; i++) t->grad[i] = (float)((r + 1) * (i + 1));
    return t;
}
static void vtoy_destroy(void *m) {
    free(m);
}
static float *vtoy_params(void *m) {
    return ((vtoy *)m)->p;
}
static float *vtoy_grads(void *m) {
    return ((vtoy *)m)->g;
}
static size_t vtoy_n(const void *m) {
    (void)m;
    return N;
}
static int vtoy_units(const void *m) {
    (void)m;
    return 2;
}
static size_t vtoy_off(const void *m, int u) {
    (void)m;
    return (size_t)u * N / 2;
}
static int vtoy_tensors(const void *m, int u, const nn_tensor **t) {
    (void)m, (void)u;
    *t = &vtoy_tensor;
    return 1;
}
static int vtoy_vocab(const void *m) {
    (void)m;
    return 0;
}
static float vtoy_eval(void *m, const float *params, const int32_t *x,
                       const int32_t *y) {
    (void)x, (void)y;
    float s = 0;
    for (int i = 0; i < N; i++) s += ((vtoy *)m)->grad[i] * params[i];
    return s;
}
static float vtoy_grad(void *m, const int32_t *x, const int32_t *y) {
    vtoy *t = m;
    memcpy(t->g, t->grad, sizeof t->g);
    return vtoy_eval(m, t->p, x, y);
}
static const train_model_ops vtoy_ops = {"vtoy",      vtoy_create, vtoy_destroy,
                                         vtoy_params, vtoy_grads,  vtoy_n,
                                         vtoy_units,  vtoy_off,    vtoy_tensors,
                                         vtoy_vocab,  vtoy_grad,   vtoy_eval,
                                         NULL};

/* Two replicas, inner SGD lr 1 (a step subtracts the gradient), p 0.5
 * (k = 2 of each tensor's 4), seed 5. */
static train *vtoy_train(int tau, double alpha, codec_kind codec) {
    train_config c;
    train_config_default(&c);
    c.replicas = 2;
    c.threads = 1;
    c.steps = 6;
    c.seed = 5;
    c.model = TRAIN_MODEL_CUSTOM;
    c.custom_ops = &vtoy_ops;
    c.data.kind = DATA_NONE;
    c.sched = (sched_spec){.method = SCHED_SPARTA,
                           .tau = tau,
                           .alpha = alpha,
                           .subset = 0.5};
    c.map = TRAIN_MAP_OWN;
    c.codec.kind = codec;
    c.inner.kind = OPTIM_SGD;
    c.inner.lr = 1;
    c.inner.cosine = 0;
    c.inner.clip = 0;
    vtoy_made = 0;
    train *tr;
    char err[256];
    ck_assert_msg(train_new(&c, &tr, err, sizeof err) == 0, "%s", err);
    return tr;
}

static int in_subset(const uint32_t *s, int k, int i) {
    for (int m = 0; m < k; m++)
        if ((int)s[m] == i) return 1;
    return 0;
}

/* The subset of the sync taken after step t, as indices of the model:
 * tensor u (part u) starts at value 4u. */
static void subset_of(int64_t t, uint32_t *out) {
    uint32_t perm[N / 2];
    for (uint32_t u = 0; u < 2; u++) {
        ck_assert_int_eq(sched_subset(5, t, u, N / 2, 0.5, perm, out + 2 * u),
                         2);
        out[2 * u] += 4 * u, out[2 * u + 1] += 4 * u;
    }
}

/* tau 0, alpha 0 and 0.5: after step 1 replica r holds -(r+1)(i+1); the
 * subset's values become the mean -1.5(i+1) (alpha 0.5: halfway there,
 * -(r+1)(i+1)/2 - 0.75(i+1)); the others stay. */
START_TEST(test_one_step_mean) {
    uint32_t s[4];
    subset_of(1, s);
    for (int a = 0; a < 2; a++) {
        double alpha = a ? 0.5 : 0;
        train *tr = vtoy_train(0, alpha, CODEC_FP32);
        ck_assert_int_eq(train_step(tr), 0);
        for (int r = 0; r < 2; r++)
            for (int i = 0; i < N; i++) {
                float local = -(float)((r + 1) * (i + 1));
                float mean = -1.5f * (float)(i + 1);
                float want = !in_subset(s, 4, i) ? local
                             : a                 ? 0.5f * local + 0.5f * mean
                                                 : mean;
                ck_assert_msg(train_params(tr, r)[i] == want,
                              "alpha %g replica %d value %d: %g, want %g",
                              alpha, r, i, train_params(tr, r)[i], want);
            }
        /* 2 replicas x 4 FP32 values */
        ck_assert_uint_eq(train_bytes(tr), 2 * 16);
        ck_assert(train_outer(tr) == NULL);
        train_free(tr);
    }
}
END_TEST

/* tau 1: after step 1 nothing is merged; after step 2 the subset of step
 * 1 holds step 1's mean (alpha 0: the local step 2 there is replaced),
 * the rest is -2(r+1)(i+1); after step 3 the subset of step 2 holds step
 * 2's mean -3(i+1), taken before that merge. */
START_TEST(test_tau_delays_the_merge) {
    uint32_t s1[4], s2[4];
    subset_of(1, s1);
    subset_of(2, s2);
    train *tr = vtoy_train(1, 0, CODEC_FP32);
    float want[2][N];
    ck_assert_int_eq(train_step(tr), 0);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < N; i++)
            ck_assert(train_params(tr, r)[i] == -(float)((r + 1) * (i + 1)));
    ck_assert_int_eq(train_step(tr), 0);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < N; i++) {
            float g = (float)((r + 1) * (i + 1));
            want[r][i] = in_subset(s1, 4, i) ? -1.5f * (float)(i + 1) : -2 * g;
            ck_assert(train_params(tr, r)[i] == want[r][i]);
        }
    ck_assert_int_eq(train_step(tr), 0);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < N; i++) {
            float g = (float)((r + 1) * (i + 1));
            float w =
                in_subset(s2, 4, i) ? -3.0f * (float)(i + 1) : want[r][i] - g;
            ck_assert_msg(train_params(tr, r)[i] == w,
                          "replica %d value %d: %g, want %g", r, i,
                          train_params(tr, r)[i], w);
        }
    train_free(tr);
}
END_TEST

/* The payload is the codec's of k values as one row: E3M0, 2 values of
 * each of 2 tensors: per tensor one FP32 scale and 1 byte of codes, per
 * replica and sync; 6 steps, tau 1: 5 syncs. */
START_TEST(test_bytes_are_the_codecs) {
    train *tr = vtoy_train(1, 0, CODEC_E3M0);
    codec_spec e3m0 = CODEC_SPEC(CODEC_E3M0, 0);
    ck_assert_uint_eq(codec_wire_bytes(e3m0, 2, 0), 5);
    ck_assert_int_eq(train_run(tr, NULL, NULL), 0);
    ck_assert_uint_eq(train_bytes(tr), 5 * 2 * 2 * 5);
    train_free(tr);
}
END_TEST

/* ---- the timing --------------------------------------------------------- */

/* 1e6 parameters, p 0.01, FP32: a layer of n holds k = ceil(0.01 n)
 * values, 4k bytes, and every slot carries the whole model's subset. */
START_TEST(test_bytes_per_step) {
    static const char *const json =
        "{\"model\": {\"params\": 1e6, \"layers\": 3, \"step_time_s\": 1},"
        " \"method\": {\"name\": \"sparta\", \"tau\": 1, \"codec\": \"fp32\","
        "  \"subset_fraction\": 0.01}}";
    scn_config cfg;
    char err[256];
    ck_assert_int_eq(scn_load_string(json, "c.json", NULL, 0, &cfg, err,
                                     sizeof err),
                     0);
    codec_spec fp32 = CODEC_SPEC(CODEC_FP32, 0);
    /* layers of 333333, 333333, 333334 values: k 3334, 3334, 3334 */
    for (int l = 0; l < 3; l++)
        ck_assert_uint_eq(payload_subset_bytes(&cfg, fp32, l), 4 * 3334);
    /* slots: 0 = layers 0, 2; 1 = layer 1.  Layer 0 carries layers 0, 1,
     * layer 2 carries layer 2; layer 1 carries all three */
    ck_assert_uint_eq(payload_sparta_bytes(&cfg, fp32, 0, 2), 8 * 3334);
    ck_assert_uint_eq(payload_sparta_bytes(&cfg, fp32, 2, 2), 4 * 3334);
    ck_assert_uint_eq(payload_sparta_bytes(&cfg, fp32, 1, 2), 12 * 3334);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("sparta");
    TCase *tc = tcase_create("sparta");
    tcase_add_test(tc, test_slots);
    tcase_add_test(tc, test_subset_count_and_draw);
    tcase_add_test(tc, test_one_step_mean);
    tcase_add_test(tc, test_tau_delays_the_merge);
    tcase_add_test(tc, test_bytes_are_the_codecs);
    tcase_add_test(tc, test_bytes_per_step);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
