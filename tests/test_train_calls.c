/*
 * test_train_calls.c -- the calls of a coupled run (models/train.h):
 * replicas driven one by one, at different steps.
 *
 *   - train_inner_step / train_contribute / train_reduce with replica 0
 *     up to tau steps ahead give train_step's bits, for DP, DiLoCo and
 *     Streaming DiLoCo (tau 0..2, alpha 0 and 0.5, model averaging), on
 *     2 and 3 replicas;
 *   - TRAIN_LATE_WAIT refuses the orders that would need a late result,
 *     and a refused call changes nothing;
 *   - TRAIN_LATE_CONTINUE: late merges, by hand on the constant-gradient
 *     toy, one pending merge per fragment, landing before a contribute;
 *   - rejoin heals from the outer parameters with a copy of a live
 *     replica's optimizer, and the payloads it sent before stay in their
 *     syncs; checkpoint / restore replays bit for bit;
 *   - a batch is the calls one by one; a copy op is the replica as its
 *     next step starts; the evaluations of copies equal the live ones;
 *   - optim_copy and data_stream_copy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "models/train.h"

/* ---- helpers ------------------------------------------------------------- */

static train *new_trainer(const train_config *c) {
    char err[256] = "";
    train *tr = NULL;
    ck_assert_msg(train_new(c, &tr, err, sizeof err) == MSG_OK, "train_new: %s",
                  err);
    return tr;
}

static void ok(train *tr, int rc) {
    ck_assert_msg(rc == MSG_OK, "rc %d: %s", rc, train_error(tr));
}

static uint64_t all_of(const train *tr) {
    return (1ull << train_replicas(tr)) - 1;
}

static sched_spec sched_of(sched_method m, int H, int P, int tau,
                           double alpha) {
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

/* A two-block transformer, d 16, on a 16-token chain; 24 steps. */
static train_config tiny_cfg(sched_spec s, int M) {
    train_config c;
    train_config_default(&c); /* 2 threads */
    c.replicas = M, c.steps = 24, c.batch = 2, c.seq = 8;
    c.nn = (nn_config){NN_TRANSFORMER, 16, 16, 2, 2, 8, 2};
    c.data.vocab = 16, c.data.successors = 3, c.data.seed = 5;
    c.data.skew = 0.3;
    c.sched = s;
    c.inner.lr = 3e-3, c.inner.warmup = 2;
    c.eval_batches = 1;
    return c;
}

/* The constant-gradient toy: 2 units of one parameter starting at 1,
 * gradient 2, inner SGD lr 1, outer SGD lr 2, streaming H 6, P 2, tau 1,
 * alpha 0.5, fragment f = unit f (fragment 0 is taken after step 2). */
static train_config toy_calls_cfg(train_late late) {
    train_config c;
    train_config_default(&c); /* toy: units 2, grad 2, init 1 */
    c.replicas = 2, c.threads = 1, c.steps = 24;
    c.model = TRAIN_MODEL_TOY;
    c.data.kind = DATA_NONE;
    c.sched = sched_of(SCHED_STREAMING, 6, 2, 1, 0.5);
    c.sched.layout = SCHED_SEQUENTIAL;
    c.map = TRAIN_MAP_OWN;
    c.inner.kind = OPTIM_SGD;
    c.inner.lr = 1, c.inner.cosine = 0, c.inner.clip = 0;
    c.outer_lr = 2, c.outer_momentum = 0;
    c.late = late;
    return c;
}

static void step_n(train *tr, int r, int n) {
    for (int i = 0; i < n; i++) ok(tr, train_inner_step(tr, r));
}

static int same_floats(const float *a, const float *b, size_t n) {
    return !memcmp(a, b, n * sizeof *a);
}

/* Everything the refused calls must leave alone. */
typedef struct {
    float *p; /* M + 1 vectors: the replicas', then the outer */
    int64_t steps[TRAIN_MAX_REPLICAS], take[4];
    uint64_t contrib[4], bytes;
} saved_state;

static saved_state save_state(const train *tr) {
    size_t N = train_num_params(tr);
    int M = train_replicas(tr);
    saved_state s = {malloc((size_t)(M + 1) * N * sizeof(float)),
                     {0},
                     {0},
                     {0},
                     train_bytes(tr)};
    ck_assert_ptr_nonnull(s.p);
    for (int r = 0; r <= M; r++) {
        const float *src = r < M ? train_params(tr, r) : train_outer(tr);
        memcpy(s.p + (size_t)r * N, src, N * sizeof(float));
        if (r < M) s.steps[r] = train_replica_steps(tr, r);
    }
    for (int f = 0; f < 4; f++) {
        s.take[f] = train_sync_take(tr, f);
        s.contrib[f] = train_sync_contributors(tr, f);
    }
    return s;
}

/* Asserts tr is as saved, then frees the copy. */
static void still_saved(const train *tr, saved_state *s) {
    size_t N = train_num_params(tr);
    int M = train_replicas(tr);
    for (int r = 0; r <= M; r++) {
        const float *now = r < M ? train_params(tr, r) : train_outer(tr);
        ck_assert_msg(same_floats(now, s->p + (size_t)r * N, N),
                      "vector %d changed", r);
        if (r < M) ck_assert_int_eq(train_replica_steps(tr, r), s->steps[r]);
    }
    for (int f = 0; f < 4; f++) {
        ck_assert_int_eq(train_sync_take(tr, f), s->take[f]);
        ck_assert_uint_eq(train_sync_contributors(tr, f), s->contrib[f]);
    }
    ck_assert_uint_eq(train_bytes(tr), s->bytes);
    free(s->p);
}

/* Asserts that the call's code is rc, its message holds `needle` and the
 * trainer is as saved. */
#define REFUSED(tr, call, rc, needle)                                          \
    do {                                                                       \
        saved_state s_ = save_state(tr);                                       \
        ck_assert_int_eq((call), (rc));                                        \
        ck_assert_msg(strstr(train_error(tr), (needle)), "'%s' lacks '%s'",    \
                      train_error(tr), (needle));                              \
        still_saved((tr), &s_);                                                \
    } while (0)

/* ---- replica by replica = lockstep --------------------------------------- */

typedef struct {
    sched_method m;
    int P, tau;
    double alpha;
    int averaging;
} variant;

static const variant variants[] = {
    {SCHED_DP, 1, 0, 0, 0},          {SCHED_DILOCO, 1, 0, 0, 0},
    {SCHED_STREAMING, 2, 0, 0, 0},   {SCHED_STREAMING, 2, 0, 0.5, 0},
    {SCHED_STREAMING, 2, 1, 0, 0},   {SCHED_STREAMING, 2, 1, 0.5, 0},
    {SCHED_STREAMING, 2, 2, 0, 0},   {SCHED_STREAMING, 2, 2, 0.5, 0},
    {SCHED_STREAMING, 2, 1, 0.5, 1},
};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

/* Lockstep history: every replica's and the outer parameters after each
 * step 0..T. */
typedef struct {
    size_t N;
    int M;
    float *rep, *outer;
} history;

static history lockstep_history(const train_config *c) {
    train *tr = new_trainer(c);
    history h = {train_num_params(tr), c->replicas, NULL, NULL};
    size_t T = (size_t)c->steps;
    h.rep = malloc((T + 1) * (size_t)h.M * h.N * sizeof(float));
    h.outer = malloc((T + 1) * h.N * sizeof(float));
    ck_assert(h.rep && h.outer);
    for (size_t t = 0; t <= T; t++) {
        if (t) ok(tr, train_step(tr));
        for (int r = 0; r < h.M; r++)
            memcpy(h.rep + (t * (size_t)h.M + (size_t)r) * h.N,
                   train_params(tr, r), h.N * sizeof(float));
        memcpy(h.outer + t * h.N, train_outer(tr), h.N * sizeof(float));
    }
    train_free(tr);
    return h;
}

/* Replica r's next step, then its contribution when the schedule takes a
 * sync after it, then the reduce once every replica has contributed. */
static void advance(train *tr, int r, int64_t T) {
    ok(tr, train_inner_step(tr, r));
    const sched_spec *sp = train_schedule(tr);
    int64_t s = train_replica_steps(tr, r);
    int f = 0;
    if (sp->method != SCHED_DP && sched_taken_after(sp, s, T, &f) == 0) return;
    int64_t take = sp->method == SCHED_DP ? s + 1 : s;
    uint64_t bytes = 0;
    ok(tr, train_contribute(tr, r, f, take, &bytes));
    ck_assert_uint_eq(bytes, train_fragment_wire_bytes(tr, f));
    ck_assert_int_eq(train_sync_take(tr, f), take);
    if (train_sync_contributors(tr, f) == all_of(tr))
        ok(tr, train_reduce(tr, f, all_of(tr), NULL));
}

START_TEST(coupled_equals_lockstep) {
    const variant *v = &variants[_i % NVARIANTS];
    const int M = 2 + _i / NVARIANTS;
    train_config c = tiny_cfg(sched_of(v->m, 6, v->P, v->tau, v->alpha), M);
    if (v->averaging) {
        c.outer_lr = 1;
        c.outer_momentum = 0;
    }
    const int64_t T = c.steps, lead = v->tau;
    history h = lockstep_history(&c);
    train *tr = new_trainer(&c);
    for (int64_t t = 1; t <= T; t++) {
        int64_t ahead = t + lead < T ? t + lead : T;
        for (int64_t n = ahead - train_replica_steps(tr, 0); n > 0; n--)
            advance(tr, 0, T); /* DP: the step counts at the reduce */
        for (int r = 1; r < M; r++) advance(tr, r, T);
        for (int r = 0; r < M; r++) {
            ok(tr, train_land(tr, r));
            size_t s = (size_t)train_replica_steps(tr, r);
            ck_assert_msg(same_floats(train_params(tr, r),
                                      h.rep + (s * (size_t)M + (size_t)r) * h.N,
                                      h.N),
                          "variant %d M %d: replica %d differs at step %zu",
                          _i % NVARIANTS, M, r, s);
        }
        ck_assert_msg(same_floats(train_outer(tr),
                                  h.outer + (size_t)ahead * h.N, h.N),
                      "variant %d M %d: outer differs after round %lld",
                      _i % NVARIANTS, M, (long long)t);
    }
    for (int f = 0; f < v->P; f++) ck_assert_int_eq(train_sync_take(tr, f), -1);
    free(h.rep);
    free(h.outer);
    train_free(tr);
}
END_TEST

/* ---- WAIT ---------------------------------------------------------------- */

START_TEST(wait_refuses_late_orders) {
    train_config c = tiny_cfg(sched_of(SCHED_STREAMING, 6, 2, 1, 0.5), 2);
    train *tr = new_trainer(&c);
    /* fragment 0 is taken after step 2 and merges before step 4 */
    step_n(tr, 0, 2);
    step_n(tr, 1, 2);
    REFUSED(tr, train_reduce(tr, 0, 1, NULL), MSG_ESTATE, "no sync in flight");
    ok(tr, train_contribute(tr, 0, 0, 2, NULL));
    REFUSED(tr, train_contribute(tr, 0, 0, 2, NULL), MSG_ESTATE,
            "already contributed");
    REFUSED(tr, train_contribute(tr, 1, 0, 3, NULL), MSG_ESTATE,
            "has done 2 steps, not the 3");
    REFUSED(tr, train_contribute(tr, 2, 0, 2, NULL), MSG_EINVAL, "replica 2");
    REFUSED(tr, train_contribute(tr, 1, 2, 2, NULL), MSG_EINVAL, "fragment 2");
    step_n(tr, 1, 1); /* step 3 < 2 + tau + 1: allowed */
    REFUSED(tr, train_contribute(tr, 1, 0, 3, NULL), MSG_ESTATE,
            "taken after step 2, not 3");
    REFUSED(tr, train_contribute(tr, 1, 0, 2, NULL), MSG_ESTATE,
            "has done 3 steps, not the 2");
    REFUSED(tr, train_inner_step(tr, 1), MSG_ESTATE,
            "replica 1 would compute step 4 before fragment 0's sync taken "
            "after step 2 is reduced");
    REFUSED(tr, train_reduce(tr, 0, 3, NULL), MSG_EINVAL, "not all");
    REFUSED(tr, train_reduce(tr, 0, 4, NULL), MSG_EINVAL, "not all");
    REFUSED(tr, train_reduce(tr, 1, 1, NULL), MSG_ESTATE, "no sync in flight");
    REFUSED(tr, train_reduce(tr, 0, 1, (const int64_t[]){4, 3}), MSG_ESTATE,
            "replica 1 has computed step 3");
    ok(tr, train_reduce(tr, 0, 1, (const int64_t[]){4, 4}));
    ck_assert_int_eq(train_sync_take(tr, 0), -1);
    ok(tr, train_inner_step(tr, 1)); /* step 4 with the merge landed */
    train_free(tr);

    c.late = 2;
    train *bad = (train *)1;
    char err[256];
    ck_assert_int_eq(train_new(&c, &bad, err, sizeof err), MSG_EINPUT);
    ck_assert_ptr_null(bad);
    ck_assert_ptr_nonnull(strstr(err, "late"));
}
END_TEST

START_TEST(dp_refuses_out_of_order) {
    train_config c = tiny_cfg(sched_of(SCHED_DP, 1, 1, 0, 0), 2);
    train *tr = new_trainer(&c);
    REFUSED(tr, train_contribute(tr, 0, 0, 1, NULL), MSG_ESTATE, "no gradient");
    step_n(tr, 0, 1);
    REFUSED(tr, train_contribute(tr, 0, 0, 2, NULL), MSG_ESTATE,
            "has done 0 steps, not the 1");
    ok(tr, train_contribute(tr, 0, 0, 1, NULL));
    /* replica 0's gradient is in flight; replica 1 may still compute its
     * own for the same step and join */
    REFUSED(tr, train_inner_step(tr, 0), MSG_ESTATE,
            "replica 0 would compute a gradient");
    step_n(tr, 1, 1);
    ok(tr, train_contribute(tr, 1, 0, 1, NULL));
    REFUSED(tr, train_rejoin(tr, 0, 1, 1), MSG_EINVAL, "dp");
    ok(tr, train_reduce(tr, 0, 3, NULL));
    ck_assert_int_eq(train_replica_steps(tr, 0), 1);
    ck_assert_int_eq(train_replica_steps(tr, 1), 1);
    ck_assert(same_floats(train_params(tr, 0), train_params(tr, 1),
                          train_num_params(tr)));
    /* members 0 abandons: nobody steps */
    step_n(tr, 0, 1);
    ok(tr, train_contribute(tr, 0, 0, 2, NULL));
    ok(tr, train_reduce(tr, 0, 0, NULL));
    ck_assert_int_eq(train_sync_take(tr, 0), -1);
    ck_assert_int_eq(train_replica_steps(tr, 0), 1);
    train_free(tr);
}
END_TEST

/* ---- CONTINUE ------------------------------------------------------------ */

/* The CONTINUE toy after 2 steps of both replicas, (-3, -3) everywhere,
 * and both contributions to fragment 0's sync: delta 1 - -3 = 4. */
static train *toy_first_take(void) {
    train_config c = toy_calls_cfg(TRAIN_LATE_CONTINUE);
    train *tr = new_trainer(&c);
    for (int r = 0; r < 2; r++) {
        step_n(tr, r, 2);
        ok(tr, train_contribute(tr, r, 0, 2, NULL));
    }
    return tr;
}

START_TEST(continue_merges_late) {
    train *tr = toy_first_take();
    step_n(tr, 0, 2);
    step_n(tr, 1, 2); /* step 4 = take + tau + 1 before the reduce */
    REFUSED(tr, train_reduce(tr, 0, 3, (const int64_t[]){6, 4}), MSG_ESTATE,
            "replica 1 has computed step 4");
    /* the merge lands 2 steps late for replica 0, never for replica 1 */
    ok(tr, train_reduce(tr, 0, 3, (const int64_t[]){6, -1}));
    ck_assert(train_outer(tr)[0] == -7.0f && train_outer(tr)[1] == 1.0f);
    step_n(tr, 0, 1);
    ck_assert(train_params(tr, 0)[0] == -9.0f); /* due 6: not yet */
    ok(tr, train_land(tr, 0));
    ck_assert(train_params(tr, 0)[0] == -8.0f); /* (-9 + -7) / 2 */
    step_n(tr, 0, 1);
    step_n(tr, 1, 2);
    const float *p0 = train_params(tr, 0), *p1 = train_params(tr, 1);
    ck_assert_msg(p0[0] == -10.0f && p0[1] == -11.0f, "(%g, %g)", p0[0], p0[1]);
    ck_assert_msg(p1[0] == -11.0f && p1[1] == -11.0f, "(%g, %g)", p1[0], p1[1]);
    train_free(tr);
}
END_TEST

START_TEST(contribute_lands_pending_merge) {
    train *tr = toy_first_take();
    ok(tr, train_reduce(tr, 0, 3, (const int64_t[]){20, 20}));
    step_n(tr, 0, 6);
    step_n(tr, 1, 6); /* unit 0 at 1 - 16 = -15, outer -7 */
    ck_assert(train_params(tr, 0)[0] == -15.0f);
    uint64_t bytes = 0, before = train_bytes(tr);
    /* the next take of fragment 0 merges first: (-15 + -7) / 2 = -11,
     * then sends -7 - -11 = 4 */
    ok(tr, train_contribute(tr, 0, 0, 8, &bytes));
    ck_assert_uint_eq(bytes, 4);
    ck_assert_uint_eq(train_bytes(tr), before + 4);
    ck_assert(train_params(tr, 0)[0] == -11.0f);
    ck_assert(train_params(tr, 1)[0] == -15.0f);
    /* replica 1 keeps its merge due at 20; the newer reduce asks 30: one
     * merge, due at 20, of the newest outer values */
    ok(tr, train_reduce(tr, 0, 1, (const int64_t[]){10, 30}));
    ck_assert(train_outer(tr)[0] == -15.0f); /* -7 - 2 * 4 */
    step_n(tr, 0, 1);
    ck_assert(train_params(tr, 0)[0] == -13.0f);
    step_n(tr, 0, 1);
    ck_assert(train_params(tr, 0)[0] == -16.0f); /* (-13 + -15) / 2 - 2 */
    step_n(tr, 1, 11);
    ck_assert(train_params(tr, 1)[0] == -37.0f);
    step_n(tr, 1, 1);
    ck_assert_msg(train_params(tr, 1)[0] == -28.0f, "%g",
                  train_params(tr, 1)[0]); /* (-37 + -15) / 2 - 2 */
    train_free(tr);
}
END_TEST

/* ---- rejoin -------------------------------------------------------------- */

START_TEST(rejoin_heals_from_outer) {
    /* inner SGD with momentum, so the optimizer state shows in a step */
    train_config c = toy_calls_cfg(TRAIN_LATE_WAIT);
    c.replicas = 3;
    c.sched = sched_of(SCHED_STREAMING, 100, 1, 0, 0.5);
    c.inner.lr = 0.1;
    c.inner.momentum = 0.5;
    c.outer_lr = 0.7;
    c.outer_momentum = 0.9;
    train *tr = new_trainer(&c);
    const size_t N = train_num_params(tr);
    for (int r = 0; r < 3; r++) {
        step_n(tr, r, 2);
        ok(tr, train_contribute(tr, r, 0, 2, NULL));
    }
    ok(tr, train_reduce(tr, 0, 7, NULL)); /* merges before step 3 */
    step_n(tr, 0, 3);
    step_n(tr, 2, 2);
    ok(tr, train_contribute(tr, 2, 0, 4, NULL));
    /* replica 1 (2 steps, its merge pending) rejoins from replica 0 */
    REFUSED(tr, train_rejoin(tr, 1, 3, 5), MSG_EINVAL, "source 3");
    REFUSED(tr, train_rejoin(tr, 1, 0, -1), MSG_EINVAL, "steps -1");
    REFUSED(tr, train_rejoin(tr, 3, 0, 5), MSG_EINVAL, "replica 3");
    ok(tr, train_rejoin(tr, 1, 0, 5));
    ck_assert(same_floats(train_params(tr, 1), train_outer(tr), N));
    ck_assert_int_eq(train_replica_steps(tr, 1), 5);
    /* replica 2 keeps its optimizer; the payload it sent stays */
    uint64_t bytes = train_bytes(tr);
    ok(tr, train_rejoin(tr, 2, -1, 5));
    ck_assert_uint_eq(train_sync_contributors(tr, 0), 4);
    ck_assert_int_eq(train_sync_take(tr, 0), 4);
    ck_assert_uint_eq(train_bytes(tr), bytes);
    ck_assert(same_floats(train_params(tr, 2), train_outer(tr), N));
    ok(tr, train_rejoin(tr, 0, 0, 5));
    REFUSED(tr, train_reduce(tr, 0, 6, NULL), MSG_EINVAL, "not all");
    ok(tr, train_reduce(tr, 0, 0, NULL));
    ck_assert_int_eq(train_sync_take(tr, 0), -1);
    /* replica 0 alone syncs again before the others step: replica 1's
     * old merge (due 3) is gone, so the new one waits for its step 8 */
    step_n(tr, 0, 1);
    ok(tr, train_contribute(tr, 0, 0, 6, NULL));
    ok(tr, train_reduce(tr, 0, 1, (const int64_t[]){7, 8, 7}));
    step_n(tr, 1, 1);
    step_n(tr, 2, 1);
    /* replica 1 took replica 0's step from the same state; replica 2 had
     * its own optimizer */
    ck_assert(same_floats(train_params(tr, 0), train_params(tr, 1), N));
    ck_assert(!same_floats(train_params(tr, 0), train_params(tr, 2), N));
    for (int r = 0; r < 2; r++) step_n(tr, r, 1); /* only 0 merged */
    ck_assert(!same_floats(train_params(tr, 0), train_params(tr, 1), N));
    train_free(tr);
}
END_TEST

/* ---- checkpoint / restore ------------------------------------------------ */

static void same_trainers(const train *a, const train *b) {
    size_t N = train_num_params(a);
    for (int r = 0; r < train_replicas(a); r++) {
        ck_assert_msg(same_floats(train_params(a, r), train_params(b, r), N),
                      "replica %d differs", r);
        ck_assert(train_last_loss(a, r) == train_last_loss(b, r));
        ck_assert_int_eq(train_replica_steps(a, r), train_replica_steps(b, r));
    }
    ck_assert(same_floats(train_outer(a), train_outer(b), N));
}

static void lockstep(train *tr, int n) {
    for (int i = 0; i < n; i++) ok(tr, train_step(tr));
}

/* A replica that sent its payload, lost its state and rejoined before
 * the sync completed: its payload counts as if it had not failed. */
START_TEST(rejoin_keeps_sent_payloads) {
    train_config c = tiny_cfg(sched_of(SCHED_DILOCO, 2, 1, 0, 0.5), 2);
    train *a = new_trainer(&c), *b = new_trainer(&c);
    for (int k = 0; k < 2; k++) {
        train *tr = k ? b : a;
        for (int r = 0; r < 2; r++) {
            step_n(tr, r, 2);
            ok(tr, train_contribute(tr, r, 0, 2, NULL));
        }
    }
    ok(b, train_rejoin(b, 1, 0, 0));
    ck_assert_uint_eq(train_sync_contributors(b, 0), 3);
    ok(a, train_reduce(a, 0, 3, (const int64_t[]){3, 3}));
    ok(b, train_reduce(b, 0, 3, (const int64_t[]){3, 1}));
    ck_assert(same_floats(train_outer(a), train_outer(b), train_num_params(a)));
    train_free(a);
    train_free(b);
}
END_TEST

/* A batch is the same calls one by one (replicas in parallel: the same
 * bits), and stops at a refused op with the ops before it done. */
START_TEST(batch_is_the_calls) {
    train_config c = tiny_cfg(sched_of(SCHED_STREAMING, 6, 2, 1, 0.5), 3);
    train *a = new_trainer(&c), *b = new_trainer(&c);
    train_op ops[] = {{0, -1, 0, 0, NULL}, {2, -1, 0, 0, NULL},
                      {0, -1, 0, 0, NULL}, {1, -1, 0, 0, NULL},
                      {0, -1, 0, 0, NULL}, {2, -1, 0, 0, NULL},
                      {1, 0, 1, 0, NULL}};
    ok(a, train_batch(a, ops, 7));
    ck_assert_int_eq(ops[4].take, 3); /* replica 0's third step */
    ck_assert(ops[4].loss == train_last_loss(a, 0));
    ck_assert(ops[0].loss != ops[4].loss);
    step_n(b, 2, 2);
    step_n(b, 0, 3);
    step_n(b, 1, 1);
    ok(b, train_contribute(b, 1, 0, 1, NULL));
    same_trainers(a, b);
    ck_assert_uint_eq(train_bytes(a), train_bytes(b));
    ck_assert_uint_eq(train_sync_contributors(a, 0), 2);
    /* with tau 1 nobody may compute step 3 before that sync is reduced:
     * replica 1's step 2 is done, its step 3 refused */
    train_op more[] = {{1, -1, 0, 0, NULL},
                       {1, -1, 0, 0, NULL},
                       {2, -1, 0, 0, NULL}};
    ck_assert_int_eq(train_batch(a, more, 3), MSG_ESTATE);
    ck_assert_ptr_nonnull(strstr(train_error(a), "step 3 before"));
    ck_assert_int_eq(train_replica_steps(a, 1), 2);
    ck_assert_int_eq(train_replica_steps(a, 2), 2);
    ck_assert_int_eq(train_batch(a, more, -1), MSG_EINVAL);
    ck_assert_int_eq(train_batch(a, more, 0), MSG_OK);
    train_free(a);
    train_free(b);
}
END_TEST

/* A copy op is the replica as its next step starts (its due merges
 * landed), whatever ran after it in the batch; evaluating copies gives
 * the live evaluations' bits.  A copy to nowhere is refused. */
START_TEST(batch_copy_is_the_next_steps_start) {
    train_config c = tiny_cfg(sched_of(SCHED_STREAMING, 6, 2, 0, 0.5), 2);
    train *a = new_trainer(&c), *b = new_trainer(&c);
    const size_t N = train_num_params(a);
    float *copy[2] = {malloc(N * sizeof(float)), malloc(N * sizeof(float))};
    ck_assert(copy[0] && copy[1]);
    /* b: replica 0 syncs fragment 0 alone after step 2 (its merge due at
     * step 3), then is copied before step 3 and steps on */
    for (int k = 0; k < 2; k++) {
        train *tr = k ? b : a;
        step_n(tr, 0, 2);
        step_n(tr, 1, 2);
        ok(tr, train_contribute(tr, 0, 0, 2, NULL));
        ok(tr, train_reduce(tr, 0, 1, NULL));
    }
    train_op ops[] = {{0, TRAIN_OP_COPY, 0, 0, copy[0]},
                      {0, -1, 0, 0, NULL},
                      {1, TRAIN_OP_COPY, 0, 0, copy[1]},
                      {1, -1, 0, 0, NULL}};
    ok(b, train_batch(b, ops, 4));
    ck_assert_int_eq(ops[0].take, 3);
    for (int r = 0; r < 2; r++) ok(a, train_land(a, r));
    ck_assert(same_floats(copy[0], train_params(a, 0), N));
    ck_assert(same_floats(copy[1], train_params(a, 1), N));
    ck_assert(!same_floats(copy[0], train_params(b, 0), N));
    double x, y;
    ok(a, train_eval_replica(a, 0, &x));
    ok(b, train_eval_params(b, copy[0], &y));
    ck_assert(x == y);
    ok(a, train_eval_average(a, &x));
    ok(b, train_eval_mean(b, (const float *const *)copy, &y));
    ck_assert(x == y);
    /* a NULL entry is the live replica */
    const float *mixed[2] = {copy[0], NULL};
    ok(a, train_eval_mean(a, mixed, &y));
    ck_assert(x == y);
    train_op nowhere = {0, TRAIN_OP_COPY, 0, 0, NULL};
    REFUSED(b, train_batch(b, &nowhere, 1), MSG_EINVAL, "nowhere");
    free(copy[0]);
    free(copy[1]);
    train_free(a);
    train_free(b);
}
END_TEST

START_TEST(checkpoint_restore_replays) {
    const sched_spec s[3] = {sched_of(SCHED_DP, 1, 1, 0, 0),
                             sched_of(SCHED_DILOCO, 4, 1, 0, 0),
                             sched_of(SCHED_STREAMING, 6, 2, 1, 0.5)};
    train_config c = tiny_cfg(s[_i], 2);
    train *a = new_trainer(&c), *b = new_trainer(&c);
    train_snapshot *snap = train_snapshot_new(a),
                   *other = train_snapshot_new(b);
    ck_assert_ptr_nonnull(snap);
    ck_assert_ptr_nonnull(other);
    REFUSED(a, train_snapshot_restore(a, snap), MSG_ESTATE, "never taken");
    REFUSED(a, train_snapshot_take(a, other), MSG_EINVAL, "another trainer");
    lockstep(a, 4);
    ok(a, train_snapshot_take(a, snap));
    lockstep(a, 2);
    ok(a, train_snapshot_take(a, snap)); /* replaces the one of step 4 */
    uint64_t b6 = train_bytes(a);
    lockstep(a, 5);
    uint64_t b11 = train_bytes(a);
    if (_i == 2) ck_assert_int_eq(train_sync_take(a, 1), 11);
    ok(a, train_snapshot_restore(a, snap));
    ck_assert_int_eq(train_steps_done(a), 6);
    for (int f = 0; f < 2; f++) ck_assert_int_eq(train_sync_take(a, f), -1);
    lockstep(a, 6);
    lockstep(b, 12);
    same_trainers(a, b); /* the same batches came after the restore */
    ck_assert_uint_eq(train_bytes(a), train_bytes(b) + (b11 - b6));
    lockstep(a, 1);
    lockstep(b, 1);
    same_trainers(a, b);
    train_snapshot_free(snap);
    train_snapshot_free(other);
    train_free(a);
    train_free(b);
}
END_TEST

/* DP rolls back to a checkpoint taken with the gradients computed but
 * not yet reduced. */
START_TEST(checkpoint_mid_dp_step) {
    train_config c = tiny_cfg(sched_of(SCHED_DP, 1, 1, 0, 0), 2);
    train *a = new_trainer(&c), *b = new_trainer(&c);
    lockstep(a, 3);
    step_n(a, 0, 1);
    step_n(a, 1, 1);
    train_snapshot *snap = train_snapshot_new(a);
    ck_assert_ptr_nonnull(snap);
    ok(a, train_snapshot_take(a, snap));
    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r < 2; r++) ok(a, train_contribute(a, r, 0, 4, NULL));
        ok(a, train_reduce(a, 0, 3, NULL));
        lockstep(a, 2);
        if (pass == 0) ok(a, train_snapshot_restore(a, snap));
    }
    lockstep(b, 6);
    same_trainers(a, b);
    train_snapshot_free(snap);
    train_free(a);
    train_free(b);
}
END_TEST

/* ---- support code -------------------------------------------------------- */

START_TEST(optim_copy_copies_state) {
    for (int kind = 0; kind < 2; kind++) {
        optim_config oc;
        optim_config_default(&oc);
        oc.kind = kind ? OPTIM_SGD : OPTIM_ADAMW;
        oc.momentum = kind ? 0.5 : 0;
        oc.lr = 0.1;
        oc.cosine = 0; /* total 0: the cosine would be at lr_min 0 */
        oc.clip = 0;   /* else every gradient below has the same norm */
        optim_range rg[2] = {{0, 3, 1}, {3, 2, 0}};
        optim_state *src = optim_new(&oc, rg, 2, NULL, 0);
        optim_state *dst = optim_new(&oc, rg, 2, NULL, 0);
        optim_state *fresh = optim_new(&oc, rg, 2, NULL, 0);
        ck_assert(src && dst && fresh);
        float p[5] = {1, 2, 3, 4, 5}, g[5] = {0.5f, -1, 2, 0.25f, -3};
        for (int t = 1; t <= 3; t++) {
            float gt[5];
            for (int i = 0; i < 5; i++) gt[i] = g[i] * (float)t;
            optim_step(src, p, gt, (const int[]){t == 2}, 1, t);
        }
        /* another configuration or other ranges: refused, dst unchanged */
        optim_config other = oc;
        other.lr = 0.2;
        optim_state *o2 = optim_new(&other, rg, 2, NULL, 0);
        optim_range rg2[2] = {{0, 3, 1}, {3, 2, 1}};
        optim_state *o3 = optim_new(&oc, rg2, 2, NULL, 0);
        optim_state *o4 = optim_new(&oc, rg, 1, NULL, 0);
        ck_assert_int_eq(optim_copy(dst, o2), MSG_EINVAL);
        ck_assert_int_eq(optim_copy(dst, o3), MSG_EINVAL);
        ck_assert_int_eq(optim_copy(o4, src), MSG_EINVAL);
        float q[5], r5[5];
        memcpy(q, p, sizeof q);
        memcpy(r5, p, sizeof r5);
        optim_step(dst, q, g, NULL, 0, 4);
        optim_step(fresh, r5, g, NULL, 0, 4);
        ck_assert(same_floats(q, r5, 5));
        ck_assert_int_eq(optim_copy(dst, src), MSG_OK);
        ck_assert_int_eq(optim_range_steps(dst, 0), 2);
        ck_assert_int_eq(optim_range_steps(dst, 1), 1);
        memcpy(q, p, sizeof q);
        optim_step(src, p, g, NULL, 0, 4);
        optim_step(dst, q, g, NULL, 0, 4);
        ck_assert(same_floats(p, q, 5));
        ck_assert(!same_floats(p, r5, 5));
        optim_free(src);
        optim_free(dst);
        optim_free(fresh);
        optim_free(o2);
        optim_free(o3);
        optim_free(o4);
    }
}
END_TEST

START_TEST(data_stream_copy_copies_position) {
    data_config dc;
    data_config_default(&dc);
    dc.skew = 0.5; /* the replicas' chains differ */
    data_source *s, *s2;
    ck_assert_int_eq(data_source_new(&dc, 2, &s, NULL, 0), MSG_OK);
    ck_assert_int_eq(data_source_new(&dc, 2, &s2, NULL, 0), MSG_OK);
    data_stream *st[4] = {data_stream_new(s, 0), data_stream_new(s, 1),
                          data_stream_new(s, 1), data_stream_new(s2, 0)};
    data_stream *a = st[0], *b = st[1], *b0 = st[2], *other = st[3];
    ck_assert(a && b && b0 && other);
    int32_t x[2][32], y[2][32];
    for (int i = 0; i < 3; i++) data_next_batch(a, 4, 8, x[0], y[0]);
    ck_assert_int_eq(data_stream_copy(b, other), MSG_EINVAL);
    data_next_batch(b, 4, 8, x[0], y[0]); /* b is still replica 1's own */
    data_next_batch(b0, 4, 8, x[1], y[1]);
    ck_assert(!memcmp(x[0], x[1], sizeof x[0]));
    ck_assert_int_eq(data_stream_copy(b, a), MSG_OK);
    for (int i = 0; i < 4; i++) {
        data_next_batch(a, 4, 8, x[0], y[0]);
        data_next_batch(b, 4, 8, x[1], y[1]);
        ck_assert(!memcmp(x[0], x[1], sizeof x[0]));
        ck_assert(!memcmp(y[0], y[1], sizeof y[0]));
    }
    data_next_batch(b0, 4, 8, x[1], y[1]);
    ck_assert(memcmp(x[0], x[1], sizeof x[0]) != 0);
    for (int i = 0; i < 4; i++) data_stream_free(st[i]);
    data_source_free(s);
    data_source_free(s2);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("train_calls");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, coupled_equals_lockstep, 0, 2 * NVARIANTS);
    tcase_add_test(tc, wait_refuses_late_orders);
    tcase_add_test(tc, dp_refuses_out_of_order);
    tcase_add_test(tc, continue_merges_late);
    tcase_add_test(tc, contribute_lands_pending_merge);
    tcase_add_test(tc, rejoin_heals_from_outer);
    tcase_add_test(tc, rejoin_keeps_sent_payloads);
    tcase_add_loop_test(tc, checkpoint_restore_replays, 0, 3);
    tcase_add_test(tc, checkpoint_mid_dp_step);
    tcase_add_test(tc, batch_is_the_calls);
    tcase_add_test(tc, batch_copy_is_the_next_steps_start);
    tcase_add_test(tc, optim_copy_copies_state);
    tcase_add_test(tc, data_stream_copy_copies_position);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
