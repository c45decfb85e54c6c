/*
 * test_train.c -- DP, DiLoCo and Streaming DiLoCo on M replicas.
 *
 *   - the six (tau, alpha) golden cases of Streaming DiLoCo's public
 *     regression fixtures, exactly, through the same code path (a toy
 *     model of constant gradient 2, one parameter per unit);
 *   - identities on a tiny transformer: streaming with P 1, tau 0 is
 *     DiLoCo bit for bit; DiLoCo with inner SGD, H 1 and outer SGD lr 1
 *     is DP-SGD to 1e-6; one replica with outer SGD lr 1 is plain
 *     training bit for bit; alpha 1 is independent training; thread
 *     counts give identical bits;
 *   - bytes reported equal the codec's wire sizes of what was sent;
 *   - E3M0 streaming lowers the loss; FedPart trains one fragment at a
 *     time; partial participation; unit mappings; evaluation; errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "models/train.h"

/* ---- golden vectors ------------------------------------------------------ */

/* From /work/shared/reference/streaming-golden-vectors.json (torchft
 * diloco_regression_test): 2 replicas, 2 fragments of one parameter,
 * initial value 1, H 6, inner p -= 1 * 2 per step, outer plain SGD lr 2;
 * value after k = 0..15 inner steps, the sync at step k applied. */
static const struct {
    int tau;
    double alpha;
    float f0[16], f1[16];
} golden[6] = {
    {0,
     0.0,
     {1, -1, -3, -11, -13, -15, -17, -19, -21, -35, -37, -39, -41, -43, -45,
      -59},
     {1, -1, -3, -5, -7, -9, -23, -25, -27, -29, -31, -33, -47, -49, -51, -53}},
    {0,
     0.5,
     {1, -1, -3, -8, -10, -12, -14, -16, -18, -24.5, -26.5, -28.5, -30.5, -32.5,
      -34.5, -40.25},
     {1, -1, -3, -5, -7, -9, -17, -19, -21, -23, -25, -27, -32, -34, -36, -38}},
    {0,
     1.0,
     {1, -1, -3, -5, -7, -9, -11, -13, -15, -17, -19, -21, -23, -25, -27, -29},
     {1, -1, -3, -5, -7, -9, -11, -13, -15, -17, -19, -21, -23, -25, -27, -29}},
    {1,
     0.0,
     {1, -1, -3, -7, -9, -11, -13, -15, -17, -27, -29, -31, -33, -35, -37, -47},
     {1, -1, -3, -5, -7, -9, -19, -21, -23, -25, -27, -29, -39, -41, -43, -45}},
    {1,
     0.5,
     {1, -1, -3, -6, -8, -10, -12, -14, -16, -21.5, -23.5, -25.5, -27.5, -29.5,
      -31.5, -35.75},
     {1, -1, -3, -5, -7, -9, -15, -17, -19, -21, -23, -25, -29, -31, -33, -35}},
    {1,
     1.0,
     {1, -1, -3, -5, -7, -9, -11, -13, -15, -17, -19, -21, -23, -25, -27, -29},
     {1, -1, -3, -5, -7, -9, -11, -13, -15, -17, -19, -21, -23, -25, -27, -29}},
};

/* ---- helpers ------------------------------------------------------------- */

static train *make(const train_config *c) {
    train *tr;
    char err[256];
    int rc = train_new(c, &tr, err, sizeof err);
    ck_assert_msg(rc == MSG_OK, "train_new: %s", err);
    return tr;
}

static void steps(train *tr, int n) {
    for (int i = 0; i < n; i++)
        ck_assert_msg(train_step(tr) == MSG_OK, "%s", train_error(tr));
}

static sched_spec spec(sched_method m, int H, int P, int tau, double alpha) {
    sched_spec s = {m,
                    0,
                    H,
                    P,
                    tau,
                    alpha,
                    SCHED_STRIDED,
                    SCHED_ASCENDING,
                    SCHED_INNER,
                    SCHED_RULE_PAPER,
                    SCHED_SUBSET_DEFAULT};
    return s;
}

/* The golden toy: SGD lr 1 inside, plain SGD lr 2 outside, fp32. */
static train_config toy_cfg(int tau, double alpha) {
    train_config c;
    train_config_default(&c);
    c.replicas = 2;
    c.steps = 16;
    c.model = TRAIN_MODEL_TOY;
    c.toy.units = 2;
    c.toy.grad = 2;
    c.toy.init = 1;
    c.data.kind = DATA_NONE;
    c.sched = spec(SCHED_STREAMING, 6, 2, tau, alpha);
    c.sched.layout = SCHED_SEQUENTIAL;
    c.map = TRAIN_MAP_OWN; /* fragment f = unit f */
    c.codec.kind = CODEC_FP32;
    c.inner.kind = OPTIM_SGD;
    c.inner.lr = 1;
    c.inner.cosine = 0;
    c.inner.clip = 0;
    c.outer_lr = 2;
    c.outer_momentum = 0;
    return c;
}

/* A tiny transformer on a 16-token Markov chain. */
static train_config nn_cfg(void) {
    train_config c;
    train_config_default(&c);
    c.replicas = 2;
    c.threads = 2;
    c.steps = 24;
    c.batch = 4;
    c.seq = 8;
    nn_config nn = {NN_TRANSFORMER, 16, 16, 2, 4, 8, 2};
    c.nn = nn;
    c.data.vocab = 16;
    c.data.successors = 3;
    c.data.seed = 3;
    c.sched = spec(SCHED_STREAMING, 6, 2, 1, 0.5);
    c.inner.lr = 3e-3;
    c.inner.warmup = 2;
    c.eval_interval = 6;
    c.eval_batches = 2;
    return c;
}

static void same_bits(const train *a, const train *b) {
    size_t N = train_num_params(a);
    ck_assert_uint_eq(N, train_num_params(b));
    ck_assert_int_eq(train_replicas(a), train_replicas(b));
    for (int r = 0; r < train_replicas(a); r++)
        ck_assert_msg(!memcmp(train_params(a, r), train_params(b, r),
                              N * sizeof(float)),
                      "replica %d differs", r);
    ck_assert_msg(!memcmp(train_outer(a), train_outer(b), N * sizeof(float)),
                  "outer parameters differ");
}

static double max_abs_diff(const float *a, const float *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d > m) m = d;
    }
    return m;
}

typedef struct {
    int n;
    train_report r[64];
} reports;

static int collect(const train_report *r, void *ctx) {
    reports *rs = ctx;
    if (rs->n < 64) rs->r[rs->n++] = *r;
    return 0;
}

static reports run(train *tr) {
    reports rs = {0};
    ck_assert_msg(train_run(tr, collect, &rs) == MSG_OK, "%s", train_error(tr));
    return rs;
}

/* ---- golden vectors ------------------------------------------------------ */

START_TEST(golden_vectors) {
    const int i = _i;
    train_config c = toy_cfg(golden[i].tau, golden[i].alpha);
    c.threads = 1 + i % 2;
    train *tr = make(&c);
    for (int k = 0; k < 16; k++) {
        if (k) steps(tr, 1);
        for (int r = 0; r < 2; r++) {
            const float *p = train_params(tr, r);
            ck_assert_msg(p[0] == golden[i].f0[k] && p[1] == golden[i].f1[k],
                          "tau %d alpha %g step %d replica %d: (%g, %g), "
                          "expected (%g, %g)",
                          golden[i].tau, golden[i].alpha, k, r, p[0], p[1],
                          golden[i].f0[k], golden[i].f1[k]);
        }
    }
    train_free(tr);
}
END_TEST

/* ---- identities ---------------------------------------------------------- */

START_TEST(streaming_p1_tau0_is_diloco) {
    train_config a = nn_cfg(), b = nn_cfg();
    a.sched = spec(SCHED_STREAMING, 6, 1, 0, 0);
    b.sched = spec(SCHED_DILOCO, 6, 4, 3, 0.5); /* P, tau, alpha normalised
                                                   to 1, 0, 0 */
    train *ta = make(&a), *tb = make(&b);
    reports ra = run(ta), rb = run(tb);
    same_bits(ta, tb);
    ck_assert_int_eq(ra.n, 4);
    ck_assert_int_eq(ra.n, rb.n);
    for (int k = 0; k < ra.n; k++) {
        ck_assert(ra.r[k].eval_loss == rb.r[k].eval_loss);
        ck_assert(ra.r[k].train_loss == rb.r[k].train_loss);
        ck_assert_uint_eq(ra.r[k].bytes, rb.r[k].bytes);
    }
    train_free(ta);
    train_free(tb);
}
END_TEST

START_TEST(diloco_h1_sgd_is_dp_sgd) {
    train_config a = nn_cfg(), b;
    a.steps = 12;
    a.inner.kind = OPTIM_SGD;
    a.inner.lr = 0.05;
    a.inner.cosine = 0;
    a.inner.warmup = 0;
    a.inner.clip = 0;
    a.outer_lr = 1;
    a.outer_momentum = 0;
    b = a;
    a.sched = spec(SCHED_DILOCO, 1, 1, 0, 0);
    b.sched = spec(SCHED_DP, 1, 1, 0, 0);
    train *ta = make(&a), *tb = make(&b);
    size_t N = train_num_params(ta);
    for (int t = 0; t < 12; t++) {
        steps(ta, 1);
        steps(tb, 1);
        for (int r = 0; r < 2; r++) {
            double d =
                max_abs_diff(train_params(ta, r), train_params(tb, r), N);
            ck_assert_msg(d <= 1e-6, "step %d replica %d: %g", t + 1, r, d);
        }
        ck_assert(!memcmp(train_params(tb, 0), train_params(tb, 1),
                          N * sizeof(float)));
    }
    double la, lb;
    train_eval_outer(ta, &la);
    train_eval_outer(tb, &lb);
    ck_assert_double_eq_tol(la, lb, 1e-5);
    train_free(ta);
    train_free(tb);
}
END_TEST

/* Plain training of one model with the trainer's optimizer and data. */
static void plain_training(const train_config *c, int n, float *out) {
    nn_model *m = nn_new(&c->nn, c->batch, c->seq);
    ck_assert_ptr_nonnull(m);
    nn_init(m, c->seed);
    optim_range rg[64];
    int nr = 0;
    for (int u = 0; u < nn_num_units(m); u++) {
        const nn_tensor *t;
        int k = nn_unit_tensors(m, u, &t);
        for (int i = 0; i < k; i++, nr++) {
            rg[nr].offset = nn_unit_offset(m, u) + t[i].offset;
            rg[nr].len = (size_t)t[i].rows * t[i].cols;
            rg[nr].decay = t[i].decay;
        }
    }
    optim_config oc = c->inner;
    oc.total = c->steps;
    optim_state *o = optim_new(&oc, rg, nr, NULL, 0);
    data_source *src;
    ck_assert_int_eq(data_source_new(&c->data, 1, &src, NULL, 0), 0);
    data_stream *st = data_stream_new(src, 0);
    int32_t x[64], y[64];
    for (int t = 1; t <= n; t++) {
        ck_assert_int_eq(data_next_batch(st, c->batch, c->seq, x, y), 0);
        nn_forward(m, x, y);
        ck_assert_int_eq(nn_backward(m), MSG_OK);
        optim_step(o, nn_params(m), nn_grads(m), NULL, 0, t);
    }
    memcpy(out, nn_params(m), nn_num_params(m) * sizeof(float));
    data_stream_free(st);
    data_source_free(src);
    optim_free(o);
    nn_free(m);
}

START_TEST(one_replica_outer_lr1_is_plain_training) {
    train_config c = nn_cfg();
    c.replicas = 1;
    c.outer_lr = 1;
    c.outer_momentum = 0;
    size_t N = nn_config_num_params(&c.nn);
    float *want = malloc(N * sizeof *want);
    plain_training(&c, 24, want);
    const sched_spec variants[2] = {spec(SCHED_DILOCO, 4, 1, 0, 0),
                                    spec(SCHED_STREAMING, 6, 2, 0, 0)};
    for (int v = 0; v < 2; v++) {
        c.sched = variants[v];
        train *tr = make(&c);
        steps(tr, 24);
        ck_assert_uint_gt(train_bytes(tr), 0); /* it did sync */
        ck_assert_msg(!memcmp(train_params(tr, 0), want, N * sizeof(float)),
                      "variant %d: max diff %g", v,
                      max_abs_diff(train_params(tr, 0), want, N));
        if (v == 0) /* DiLoCo synced the whole model after step 24 */
            ck_assert(!memcmp(train_outer(tr), want, N * sizeof(float)));
        train_free(tr);
    }
    free(want);
}
END_TEST

/* ---- 1-outer-step overlap, and P > H --------------------------------------
 * A one-parameter model whose replica r (in creation order) has the
 * constant gradient ptoy_grads[r]: with inner SGD lr 1 every inner step
 * moves replica r by -ptoy_grads[r].  Two replicas, streaming with P 1,
 * H 2, alpha 0.5, outer SGD lr 1, fp32, 8 steps, starting at 0: syncs
 * taken after steps 2, 4 and 6, each applied H steps later. */

typedef struct {
    float p, g, grad;
} ptoy;

static const float ptoy_grads[2] = {1, 3};
static int ptoy_made;
static const nn_tensor ptoy_tensor = {"p", 0, 1, 1, 0};

static void *ptoy_create(const void *cfg, int batch, int seq, uint64_t seed,
                         char *err, size_t errlen) {
    (void)cfg, (void)batch, (void)seq, (void)seed, (void)err, (void)errlen;
    ptoy *t = calloc(1, sizeof *t);
    if (t) t->grad = ptoy_grads[ptoy_made++ % 2];
    return t;
}
static void ptoy_destroy(void *m) {
    free(m);
}
static float *ptoy_params(void *m) {
    return &((ptoy *)m)->p;
}
static float *ptoy_grads_of(void *m) {
    return &((ptoy *)m)->g;
}
static size_t ptoy_n(const void *m) {
    (void)m;
    return 1;
}
static int ptoy_units(const void *m) {
    (void)m;
    return 1;
}
static size_t ptoy_off(const void *m, int u) {
    (void)m, (void)u;
    return 0;
}
static int ptoy_tensors(const void *m, int u, const nn_tensor **t) {
    (void)m, (void)u;
    *t = &ptoy_tensor;
    return 1;
}
static int ptoy_vocab(const void *m) {
    (void)m;
    return 0;
}
static float ptoy_eval(void *m, const float *params, const int32_t *x,
                       const int32_t *y) {
    (void)x, (void)y;
    return ((ptoy *)m)->grad * params[0];
}
static float ptoy_grad(void *m, const int32_t *x, const int32_t *y) {
    ptoy *t = m;
    t->g = t->grad;
    return ptoy_eval(m, &t->p, x, y);
}
static const train_model_ops ptoy_ops = {
    "ptoy",    ptoy_create, ptoy_destroy, ptoy_params,  ptoy_grads_of,
    ptoy_n,    ptoy_units,  ptoy_off,     ptoy_tensors, ptoy_vocab,
    ptoy_grad, ptoy_eval,   NULL};

/* Replica 1 takes tau + extra1. */
static train *ptoy_train(sched_overlap overlap, int H, int tau, int extra1) {
    train_config c;
    train_config_default(&c);
    c.replicas = 2;
    c.threads = 1;
    c.steps = 8;
    c.model = TRAIN_MODEL_CUSTOM;
    c.custom_ops = &ptoy_ops;
    c.data.kind = DATA_NONE;
    c.sched = spec(SCHED_STREAMING, H, 1, tau, 0.5);
    c.sched.overlap = overlap;
    c.tau_extra[1] = extra1;
    c.map = TRAIN_MAP_OWN;
    c.codec.kind = CODEC_FP32;
    c.inner.kind = OPTIM_SGD;
    c.inner.lr = 1;
    c.inner.cosine = 0;
    c.inner.clip = 0;
    c.outer_lr = 1;
    c.outer_momentum = 0;
    ptoy_made = 0;
    return make(&c);
}

/* Replica r's parameter after each of the 8 steps (a merge lands just
 * before the step after its sync, so the values after a sync step are
 * the unmerged ones), and the outer value
 * train_outer reports at the end (eager: replica 0's copy). */
static void ptoy_check(train *tr, const float want[2][8], float outer) {
    sched_overlap overlap = train_schedule(tr)->overlap;
    for (int t = 0; t < 8; t++) {
        steps(tr, 1);
        for (int r = 0; r < 2; r++)
            ck_assert_msg(train_params(tr, r)[0] == want[r][t],
                          "%s: step "
                          "%d replica %d: %g, expected %g",
                          sched_overlap_name(overlap), t + 1, r,
                          train_params(tr, r)[0], want[r][t]);
    }
    ck_assert_msg(train_outer(tr)[0] == outer, "outer %g, expected %g",
                  train_outer(tr)[0], outer);
    train_free(tr);
}

/* Eager, by hand (o_r: replica r's outer copy, D_r: its decoded term).
 * Sync after 2: p = -2, -6; delta = 2, 6; the first is local: o = -2, -6,
 * merged p = -2, -6 (merges land before the next step).  After 4: p = -4,
 * -12; delta = 2, 6; proxies (2 + 6) / 2 = 4 for both: o = -6, -10;
 * p = 0.5 p + 0.5 o = -5, -11.  After 6: p = -7, -17; delta = 1, 7;
 * proxies (1 + 6) / 2 = 3.5 and (7 + 2) / 2 = 4.5: o = -9.5, -14.5;
 * p = -8.25, -15.75.  Steps 7 and 8 go on locally (the sync taken after 8
 * would apply after 10). */
START_TEST(eager_proxy_by_hand) {
    const float want[2][8] = {{-1, -2, -3, -4, -6, -7, -9.25f, -10.25f},
                              {-3, -6, -9, -12, -14, -17, -18.75f, -21.75f}};
    ptoy_check(ptoy_train(SCHED_EAGER, 2, 0, 0), want, -9.5f);
}
END_TEST

/* Delayed ("outer"), by hand (O: outer, R: the values pseudo-gradients
 * are measured against).  After 2: p = -2, -6; delta = R - p = 2, 6; no
 * average has arrived: merge the outer 0, p = -1, -3.  After 4: the
 * average 4 of step 2 is applied first (R = 0, O = -4); delta = 3, 9;
 * p = 0.5 p + 0.5 O = -3.5, -6.5.  After 6: the average 6 (R = -4,
 * O = -10); p = -5.5, -12.5, delta = 1.5, 8.5; p = -7.75, -11.25.  After
 * 8: the average 5 of step 6, O = -15, and no new sync. */
START_TEST(delayed_by_hand) {
    const float want[2][8] = {{-1, -2, -2, -3, -4.5f, -5.5f, -8.75f, -9.75f},
                              {-3, -6, -6, -9, -9.5f, -12.5f, -14.25f,
                               -17.25f}};
    ptoy_check(ptoy_train(SCHED_OUTER, 2, 0, 0), want, -15);
}
END_TEST

/* Per-worker taus (1, 3), inner overlap, H 4: taken after 3 and 7 by both
 * replicas, reduced after 4 and 8; replica 0 merges at once, replica 1
 * before step take + 3 + 1.  After 3: p = -3, -9, delta = 3, 9; after 4
 * the average 6: O = -6, replica 0 merges 0.5 (-4) + 0.5 (-6) = -5;
 * replica 1 (at -18 after step 6) merges before step 7: -12, then -15.
 * After 7: p = -8, -15, delta = 2, 9; after 8 the average 5.5: O = -11.5,
 * replica 0 merges 0.5 (-9) + 0.5 (-11.5) = -10.25; replica 1's merge of
 * it would come before step 11. */
START_TEST(per_worker_tau_by_hand) {
    const float want[2][8] = {{-1, -2, -3, -5, -6, -7, -8, -10.25f},
                              {-3, -6, -9, -12, -15, -18, -15, -18}};
    ptoy_check(ptoy_train(SCHED_INNER, 4, 1, 2), want, -11.5f);
}
END_TEST

/* Eager with one replica is plain DiLoCo: the proxy of a lone replica is
 * its own fresh pseudo-gradient (fp32: the same bits). */
START_TEST(eager_one_replica_is_diloco) {
    train_config a = nn_cfg(), b = nn_cfg();
    a.replicas = b.replicas = 1;
    a.codec.kind = b.codec.kind = CODEC_FP32;
    a.sched = b.sched = spec(SCHED_DILOCO, 4, 1, 0, 0);
    b.sched.overlap = SCHED_EAGER;
    train *ta = make(&a), *tb = make(&b);
    steps(ta, 24);
    steps(tb, 24); /* the sync of step 24 is not taken: it would apply
                      after 28 */
    size_t N = train_num_params(ta);
    float *want = malloc(N * sizeof *want);
    train *tc = make(&a); /* DiLoCo stopped before that last sync */
    steps(tc, 23);
    memcpy(want, train_outer(tc), N * sizeof *want);
    ck_assert(!memcmp(train_outer(tb), want, N * sizeof *want));
    ck_assert(memcmp(train_outer(ta), want, N * sizeof *want)); /* it moved */
    free(want);
    train_free(ta);
    train_free(tb);
    train_free(tc);
}
END_TEST

/* P > H: two fragments after every step (H 1) give the bits of one
 * fragment holding both units. */
START_TEST(more_fragments_than_steps_numerics) {
    train_config a = nn_cfg(), b = nn_cfg();
    a.sched = spec(SCHED_STREAMING, 1, 2, 0, 0.5); /* 2 blocks, P 2 > H */
    b.sched = spec(SCHED_STREAMING, 1, 1, 0, 0.5);
    train *ta = make(&a), *tb = make(&b);
    reports ra = run(ta), rb = run(tb);
    same_bits(ta, tb);
    ck_assert_uint_eq(ra.r[ra.n - 1].bytes, rb.r[rb.n - 1].bytes);
    train_free(ta);
    train_free(tb);
}
END_TEST

START_TEST(alpha1_is_independent_training) {
    train_config a = nn_cfg(), b = nn_cfg();
    a.sched = spec(SCHED_STREAMING, 6, 2, 1, 1.0);
    b.sched = spec(SCHED_DILOCO, 100, 1, 0, 0); /* never syncs in 24 */
    train *ta = make(&a), *tb = make(&b);
    size_t N = train_num_params(ta);
    float *init = malloc(N * sizeof *init);
    memcpy(init, train_outer(ta), N * sizeof *init);
    steps(ta, 24);
    steps(tb, 24);
    ck_assert_uint_eq(train_bytes(tb), 0);
    for (int r = 0; r < 2; r++)
        ck_assert(!memcmp(train_params(ta, r), train_params(tb, r),
                          N * sizeof(float)));
    /* the replicas diverged, and the outer parameters moved */
    ck_assert(memcmp(train_params(ta, 0), train_params(ta, 1),
                     N * sizeof(float)) != 0);
    ck_assert(memcmp(train_outer(ta), init, N * sizeof(float)) != 0);
    free(init);
    train_free(ta);
    train_free(tb);
}
END_TEST

START_TEST(threads_bit_identical) {
    const sched_spec variants[3] = {spec(SCHED_STREAMING, 6, 2, 1, 0.5),
                                    spec(SCHED_DP, 1, 1, 0, 0),
                                    spec(SCHED_DILOCO, 4, 1, 0, 0)};
    for (int v = 0; v < 3; v++) {
        train *tr[3];
        reports rs[3];
        for (int th = 1; th <= 3; th++) {
            train_config c = nn_cfg();
            c.replicas = 3;
            c.threads = th;
            c.steps = 18;
            c.codec.kind = CODEC_E3M0;
            c.data.skew = 0.5;
            c.sched = variants[v];
            tr[th - 1] = make(&c);
            rs[th - 1] = run(tr[th - 1]);
        }
        for (int k = 1; k < 3; k++) {
            same_bits(tr[0], tr[k]);
            ck_assert_int_eq(rs[0].n, rs[k].n);
            for (int i = 0; i < rs[0].n; i++) {
                ck_assert(rs[0].r[i].eval_loss == rs[k].r[i].eval_loss);
                ck_assert(rs[0].r[i].train_loss == rs[k].r[i].train_loss);
            }
        }
        for (int k = 0; k < 3; k++) train_free(tr[k]);
    }
}
END_TEST

/* ---- bytes --------------------------------------------------------------- */

/* Sum of codec_wire_bytes over the tensors of the units of fragment f. */
static uint64_t wire_of(const train *tr, const train_config *c, int f,
                        codec_spec codec) {
    nn_model *m = nn_new(&c->nn, c->batch, c->seq);
    int units[64];
    int n = train_fragment_units(tr, f, units);
    uint64_t w = 0;
    for (int i = 0; i < n; i++) {
        const nn_tensor *t;
        int k = nn_unit_tensors(m, units[i], &t);
        for (int j = 0; j < k; j++)
            w += codec_wire_bytes(codec, (uint64_t)t[j].rows * t[j].cols,
                                  (uint64_t)t[j].cols);
    }
    nn_free(m);
    return w;
}

START_TEST(bytes_are_codec_wire_bytes) {
    /* streaming, e3m0 with blocks of 32: every sync sends each replica's
     * encoded fragment */
    train_config c = nn_cfg();
    c.codec.kind = CODEC_E3M0;
    c.codec.block = 32;
    train *tr = make(&c);
    uint64_t want = 0, w[2];
    for (int f = 0; f < 2; f++) {
        w[f] = wire_of(tr, &c, f, c.codec);
        ck_assert_uint_eq(w[f], train_fragment_wire_bytes(tr, f));
    }
    for (int64_t t = 1; t <= c.steps; t++) {
        int f[2], n = sched_taken_after(train_schedule(tr), t, c.steps, f);
        for (int i = 0; i < n; i++) want += 2 * w[f[i]];
    }
    reports rs = run(tr);
    ck_assert_uint_eq(train_bytes(tr), want);
    ck_assert_uint_eq(rs.r[rs.n - 1].bytes, want);
    ck_assert_uint_eq(rs.r[rs.n - 1].tokens, 24u * 2 * 4 * 8);
    train_free(tr);

    /* DP with bf16 gradients: 2 bytes a value, every step */
    c = nn_cfg();
    c.sched = spec(SCHED_DP, 1, 1, 0, 0);
    c.dp_codec.kind = CODEC_BF16;
    tr = make(&c);
    uint64_t bytes[2];
    for (int r = 0; r < 2; r++) train_inner_step(tr, r);
    ck_assert_int_eq(train_prepare(tr, 0, 3, bytes), MSG_OK);
    ck_assert_uint_eq(bytes[0], 2 * train_num_params(tr));
    ck_assert_uint_eq(bytes[1], wire_of(tr, &c, 0, c.dp_codec));
    ck_assert_int_eq(train_apply(tr, 0, 3), MSG_OK);
    steps(tr, 9);
    ck_assert_uint_eq(train_bytes(tr), 10 * 2 * 2 * train_num_params(tr));
    train_free(tr);
}
END_TEST

/* ---- training works ------------------------------------------------------ */

START_TEST(e3m0_streaming_lowers_loss) {
    train_config c = nn_cfg();
    c.steps = 150;
    c.batch = 8;
    c.data.successors = 2;
    c.inner.lr = 1e-2;
    c.inner.warmup = 10;
    c.codec.kind = CODEC_E3M0;
    c.sched = spec(SCHED_STREAMING, 10, 2, 1, 0.5);
    c.eval_interval = 50;
    c.eval_batches = 4;
    train *tr = make(&c);
    double before, after;
    train_eval_outer(tr, &before);
    reports rs = run(tr);
    after = rs.r[rs.n - 1].eval_loss;
    double floor = train_entropy_floor(tr);
    ck_assert(floor > 0 && floor < log(2.0) + 1e-9);
    ck_assert_msg(after < before - 1.0, "eval loss %g -> %g (floor %g)", before,
                  after, floor);
    ck_assert(after > floor - 0.1);
    train_free(tr);
}
END_TEST

START_TEST(fedpart_trains_one_fragment) {
    train_config c = nn_cfg();
    c.fedpart = 1;
    c.sched = spec(SCHED_STREAMING, 6, 2, 1, 0);
    train *tr = make(&c);
    size_t N = train_num_params(tr);
    float *init = malloc(N * sizeof *init);
    memcpy(init, train_params(tr, 0), N * sizeof *init);
    /* fragment 0 is taken after step 2, fragment 1 after step 5 */
    const int want[7] = {0, 0, 1, 1, 1, 0, 0};
    for (int t = 1; t <= 7; t++) {
        ck_assert_int_eq(train_fedpart_fragment(tr, 0), want[t - 1]);
        steps(tr, 1);
    }
    train_free(tr);
    /* after one step only the units of fragment 0 moved */
    tr = make(&c);
    steps(tr, 1);
    int units[8], n = train_fragment_units(tr, 0, units), in0[8] = {0};
    for (int i = 0; i < n; i++) in0[units[i]] = 1;
    nn_model *m = nn_new(&c.nn, c.batch, c.seq);
    for (int u = 0; u < nn_num_units(m); u++) {
        size_t off = nn_unit_offset(m, u), len = nn_unit_size(m, u);
        int same =
            !memcmp(train_params(tr, 0) + off, init + off, len * sizeof(float));
        ck_assert_msg(same != in0[u], "unit %d", u);
    }
    nn_free(m);
    double loss0, loss1;
    train_eval_outer(tr, &loss0);
    steps(tr, 23);
    train_eval_outer(tr, &loss1);
    ck_assert(loss1 < loss0);
    free(init);
    train_free(tr);
}
END_TEST

/* ---- the event-loop calls ------------------------------------------------ */

START_TEST(partial_participation) {
    for (int avg = 0; avg < 2; avg++) {
        train_config c = nn_cfg();
        c.sched = spec(SCHED_DILOCO, 4, 1, 0, 0);
        c.outer_lr = avg ? 1.0 : 0.5;
        c.outer_momentum = 0;
        train *tr = make(&c);
        size_t N = train_num_params(tr);
        float *o = malloc(N * sizeof *o);
        memcpy(o, train_outer(tr), N * sizeof *o);
        for (int t = 0; t < 3; t++) {
            ck_assert_int_eq(train_inner_step(tr, 0), MSG_OK);
            ck_assert_int_eq(train_inner_step(tr, 1), MSG_OK);
        }
        ck_assert_int_eq(train_prepare(tr, 0, 3, NULL), MSG_OK);
        /* only replica 0's payload arrives */
        float *l0 = malloc(N * sizeof *l0);
        memcpy(l0, train_params(tr, 0), N * sizeof *l0);
        ck_assert_int_eq(train_apply(tr, 0, 1), MSG_OK);
        for (size_t i = 0; i < N; i++) {
            float d = o[i] - l0[i];
            float want = avg ? l0[i] : o[i] - 0.5f * d;
            ck_assert(train_outer(tr)[i] == want);
        }
        for (int r = 0; r < 2; r++) /* alpha 0: everyone takes the outer */
            ck_assert(!memcmp(train_params(tr, r), train_outer(tr),
                              N * sizeof(float)));
        free(o);
        free(l0);
        train_free(tr);
    }
}
END_TEST

START_TEST(call_order_errors) {
    train_config c = nn_cfg();
    train *tr = make(&c);
    ck_assert_int_eq(train_apply(tr, 0, 3), MSG_ESTATE);
    ck_assert_ptr_nonnull(strstr(train_error(tr), "no sync in flight"));
    ck_assert_int_eq(train_prepare(tr, 2, 3, NULL), MSG_EINVAL);
    ck_assert_int_eq(train_prepare(tr, 0, 4, NULL), MSG_EINVAL);
    ck_assert_int_eq(train_prepare(tr, 0, 0, NULL), MSG_EINVAL);
    ck_assert_int_eq(train_prepare(tr, 0, 1, NULL), MSG_OK);
    ck_assert_int_eq(train_prepare(tr, 0, 3, NULL), MSG_ESTATE);
    ck_assert_int_eq(train_apply(tr, 0, 2), MSG_EINVAL); /* not prepared */
    ck_assert_int_eq(train_apply(tr, 0, 1), MSG_OK);
    ck_assert_int_eq(train_inner_step(tr, 2), MSG_EINVAL);
    ck_assert_int_eq(train_inner_step(tr, 0), MSG_OK);
    ck_assert_int_eq(train_run(tr, NULL, NULL), MSG_ESTATE);
    train_free(tr);

    c.sched = spec(SCHED_DP, 1, 1, 0, 0);
    tr = make(&c);
    ck_assert_int_eq(train_inner_step(tr, 0), MSG_OK);
    ck_assert_int_eq(train_prepare(tr, 0, 3, NULL), MSG_ESTATE);
    ck_assert_int_eq(train_prepare(tr, 0, 1, NULL), MSG_OK);
    ck_assert_int_eq(train_apply(tr, 0, 1), MSG_OK);
    ck_assert_int_eq(train_replica_steps(tr, 1), 1); /* everyone stepped */
    ck_assert(!memcmp(train_params(tr, 0), train_params(tr, 1),
                      train_num_params(tr) * sizeof(float)));
    train_free(tr);
}
END_TEST

static void bad_config(const train_config *c, const char *needle) {
    train *tr = (train *)1;
    char err[256];
    ck_assert_int_eq(train_new(c, &tr, err, sizeof err), MSG_EINPUT);
    ck_assert_ptr_null(tr);
    ck_assert_msg(strstr(err, needle), "'%s' lacks '%s'", err, needle);
}

START_TEST(config_errors) {
    train_config c = nn_cfg();
    c.sched.tau = 6; /* H 6 */
    bad_config(&c, "tau");
    c = nn_cfg();
    c.replicas = 65;
    bad_config(&c, "replicas");
    c = nn_cfg();
    c.data.vocab = 32; /* more tokens than the model's vocab */
    bad_config(&c, "vocab");
    c = nn_cfg();
    c.data.kind = DATA_NONE;
    bad_config(&c, "tokens");
    c = nn_cfg();
    c.nn.heads = 3;
    bad_config(&c, "heads");
    c = nn_cfg();
    c.outer_momentum = 1;
    bad_config(&c, "outer_momentum");
    c = nn_cfg();
    c.inner.beta1 = -1;
    bad_config(&c, "betas");
    c = nn_cfg();
    c.fedpart = 1;
    c.sched = spec(SCHED_DP, 1, 1, 0, 0);
    bad_config(&c, "fedpart");
    c = toy_cfg(0, 0);
    c.map = TRAIN_MAP_JOIN;
    bad_config(&c, "join");
    c = nn_cfg();
    c.sched.P = 5; /* join: 4 blocks */
    bad_config(&c, "fragments");
}
END_TEST

/* A model that cannot be created after its check accepted the
 * configuration is out of memory, not a bad configuration (the command
 * line's exit 1, not 2); without a check it counts as a bad one. */
static void *nomem_create(const void *cfg, int batch, int seq, uint64_t seed,
                          char *err, size_t errlen) {
    (void)cfg, (void)batch, (void)seq, (void)seed;
    snprintf(err, errlen, "nomem: out of memory");
    return NULL;
}
static int nomem_check(const void *cfg, int batch, int seq, char *err,
                       size_t errlen) {
    (void)cfg, (void)batch, (void)seq, (void)err, (void)errlen;
    return 0;
}

START_TEST(out_of_memory_is_not_a_bad_config) {
    train_model_ops ops = ptoy_ops;
    ops.create = nomem_create;
    train_config c = nn_cfg();
    c.model = TRAIN_MODEL_CUSTOM;
    c.custom_ops = &ops;
    c.data.kind = DATA_NONE;
    char err[256];
    train *tr;
    ck_assert_int_eq(train_new(&c, &tr, err, sizeof err), MSG_EINPUT);
    ops.check = nomem_check;
    ck_assert_int_eq(train_new(&c, &tr, err, sizeof err), MSG_ENOMEM);
    ck_assert_str_eq(err, "train: nomem: out of memory");
    ck_assert_ptr_null(tr);
    /* the nn model's check: its layer range */
    c = nn_cfg();
    c.nn.layers = NN_MAX_LAYERS + 1;
    bad_config(&c, "layers");
    ck_assert_int_eq(nn_check(&(nn_config){NN_MLP, 2, 1, 1, NN_MAX_LAYERS, 0,
                                           1},
                              1, 1, NULL, 0),
                     MSG_OK);
}
END_TEST

/* ---- mappings and evaluation --------------------------------------------- */

static void units_are(const train *tr, int f, const int *want, int n) {
    int got[16];
    ck_assert_int_eq(train_fragment_units(tr, f, got), n);
    for (int i = 0; i < n; i++) ck_assert_int_eq(got[i], want[i]);
}

START_TEST(unit_mappings) {
    train_config c = nn_cfg(); /* 4 blocks: units 0..5 */
    c.sched = spec(SCHED_STREAMING, 6, 2, 0, 0.5);
    train *tr = make(&c); /* join, strided: blocks {0, 2} and {1, 3} */
    units_are(tr, 0, (const int[]){0, 1, 3}, 3);
    units_are(tr, 1, (const int[]){2, 4, 5}, 3);
    train_free(tr);
    c.map = TRAIN_MAP_OWN;
    tr = make(&c);
    units_are(tr, 0, (const int[]){0, 2, 4}, 3);
    units_are(tr, 1, (const int[]){1, 3, 5}, 3);
    ck_assert_int_eq(train_schedule(tr)->layers, 6);
    train_free(tr);
    c.sched = spec(SCHED_STREAMING, 6, 3, 0, 0.5);
    c.sched.layout = SCHED_SEQUENTIAL;
    tr = make(&c);
    units_are(tr, 0, (const int[]){0, 1}, 2);
    units_are(tr, 1, (const int[]){2, 3}, 2);
    units_are(tr, 2, (const int[]){4, 5}, 2);
    train_free(tr);
    c.map = TRAIN_MAP_JOIN;
    tr = make(&c); /* blocks [floor(4j/3), floor(4(j+1)/3)): {0} {1} {2 3} */
    units_are(tr, 0, (const int[]){0, 1}, 2);
    units_are(tr, 1, (const int[]){2}, 1);
    units_are(tr, 2, (const int[]){3, 4, 5}, 3);
    train_free(tr);
}
END_TEST

START_TEST(evaluation) {
    train_config c = nn_cfg();
    c.sched = spec(SCHED_DILOCO, 4, 1, 0, 0);
    train *tr = make(&c);
    double lo, lr0, lr1, la;
    steps(tr, 3); /* replicas differ, outer still the initial values */
    train_eval_outer(tr, &lo);
    train_eval_replica(tr, 0, &lr0);
    train_eval_replica(tr, 1, &lr1);
    train_eval_average(tr, &la);
    ck_assert(lr0 != lr1 && lr0 < lo && lr1 < lo);
    ck_assert(la < lo);
    steps(tr, 1); /* sync with alpha 0: all equal */
    train_eval_outer(tr, &lo);
    train_eval_replica(tr, 0, &lr0);
    train_eval_replica(tr, 1, &lr1);
    train_eval_average(tr, &la);
    ck_assert(lo == lr0 && lo == lr1 && lo == la);
    ck_assert_int_eq(train_eval_replica(tr, 5, &la), MSG_EINVAL);
    ck_assert(isfinite(train_last_loss(tr, 0)));
    train_free(tr);
}
END_TEST

/* Byte-level text through the trainer: an MLP on the fixture's shards. */
START_TEST(text_shards_train) {
    train_config c = nn_cfg();
    nn_config mlp = {NN_MLP, 256, 32, 0, 2, 0, 2};
    c.nn = mlp;
    c.data.kind = DATA_TEXT;
    c.data.vocab = 0;
    c.data.path = "tests/data/train/text.txt";
    c.data.eval_fraction = 0.2;
    c.seq = 16;
    c.steps = 40;
    c.inner.lr = 1e-2;
    c.sched = spec(SCHED_DILOCO, 5, 1, 0, 0);
    train *tr = make(&c);
    ck_assert(isnan(train_entropy_floor(tr)));
    double before;
    train_eval_outer(tr, &before);
    reports rs = run(tr);
    ck_assert_msg(rs.r[rs.n - 1].eval_loss < before - 1.0, "%g -> %g", before,
                  rs.r[rs.n - 1].eval_loss);
    train_free(tr);
    c.seq = 1200; /* longer than a replica's half of the training bytes */
    bad_config(&c, "cannot fill");
}
END_TEST

static int stop_at_second(const train_report *r, void *ctx) {
    int *n = ctx;
    (*n)++;
    return r->step >= 12;
}

START_TEST(reports_and_stop) {
    train_config c = nn_cfg();
    c.steps = 20;
    train *tr = make(&c);
    reports rs = run(tr);
    ck_assert_int_eq(rs.n, 4); /* 6, 12, 18 and the last, 20 */
    const int64_t want[4] = {6, 12, 18, 20};
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(rs.r[k].step, want[k]);
        ck_assert_uint_eq(rs.r[k].tokens, (uint64_t)want[k] * 2 * 4 * 8);
        ck_assert(isfinite(rs.r[k].train_loss) && isfinite(rs.r[k].eval_loss));
    }
    train_free(tr);
    tr = make(&c);
    int n = 0;
    ck_assert_int_eq(train_run(tr, stop_at_second, &n), TRAIN_STOPPED);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(train_steps_done(tr), 12);
    train_free(tr);
}
END_TEST

/* The trainer's codes are msg.h's: named, described, and only a bad
 * configuration is the user's input (exit 2). */
START_TEST(codes_are_the_error_space) {
    static const struct {
        int rc;
        const char *name, *text;
        int exit;
    } want[] = {{MSG_EINPUT, "EINPUT", "bad input", 2},
                {MSG_EINVAL, "EINVAL", "invalid argument", 1},
                {MSG_ESTATE, "ESTATE", "call out of order", 1},
                {MSG_ENUM, "ENUM", "numerical failure", 1},
                {MSG_ENOMEM, "ENOMEM", "out of memory", 1}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        ck_assert_str_eq(msg_errname(want[i].rc), want[i].name);
        ck_assert_str_eq(msg_strerror(want[i].rc), want[i].text);
        ck_assert_int_eq(msg_exit_status(want[i].rc), want[i].exit);
    }
    ck_assert_int_gt(TRAIN_STOPPED, 0); /* a status, no error */
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("train");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, golden_vectors, 0, 6);
    tcase_add_test(tc, streaming_p1_tau0_is_diloco);
    tcase_add_test(tc, diloco_h1_sgd_is_dp_sgd);
    tcase_add_test(tc, one_replica_outer_lr1_is_plain_training);
    tcase_add_test(tc, alpha1_is_independent_training);
    tcase_add_test(tc, threads_bit_identical);
    tcase_add_test(tc, bytes_are_codec_wire_bytes);
    tcase_add_test(tc, e3m0_streaming_lowers_loss);
    tcase_add_test(tc, fedpart_trains_one_fragment);
    tcase_add_test(tc, partial_participation);
    tcase_add_test(tc, call_order_errors);
    tcase_add_test(tc, config_errors);
    tcase_add_test(tc, out_of_memory_is_not_a_bad_config);
    tcase_add_test(tc, unit_mappings);
    tcase_add_test(tc, evaluation);
    tcase_add_test(tc, reports_and_stop);
    tcase_add_test(tc, text_shards_train);
    tcase_add_test(tc, eager_proxy_by_hand);
    tcase_add_test(tc, delayed_by_hand);
    tcase_add_test(tc, per_worker_tau_by_hand);
    tcase_add_test(tc, eager_one_replica_is_diloco);
    tcase_add_test(tc, more_fragments_than_steps_numerics);
    tcase_add_test(tc, codes_are_the_error_space);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
