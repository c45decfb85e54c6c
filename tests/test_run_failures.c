/*
 * test_run_failures.c -- runs with failures under every overlap mode.
 *
 * Two cases worked out by hand (a repaired worker under outer and eager
 * overlap), then a sweep of random small worlds with failures (DiLoCo and
 * Streaming DiLoCo, inner, outer and eager overlap, wait and continue,
 * timeouts, member completion) drawn from a fixed seed, each held to what
 * every run must satisfy:
 *   - it returns and finishes (the sweep's failures are rare enough);
 *   - the wall covers the steps: wall >= T x step time (speed 1, no
 *     stragglers: some worker computed every step);
 *   - utilization and goodput, per worker and overall, are in [0, 1];
 *   - the observer's protocol: each worker computes its steps in order;
 *     a repaired worker rejoins at most at the step after the newest step
 *     any worker has finished (never ahead of the group); the members of
 *     a sync contributed to it since their last failure (what a coupled
 *     trainer needs: a replica reduces only a payload it encoded).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "run_protocol.h"
#include "sim/engine/run.h"
#include "sim/base/msg.h"

#define NS(s) ((int64_t)llround((s)*1e9))
#define SWEEP_MAX_EVENTS 2000000 /* far above what a sweep world needs */

/* The observer: tests/run_protocol.h, with a bound on the events. */
typedef struct {
    run_protocol p;
    int64_t events;
} protocol;

static int observe(void *ctx, const run_event *e, char *err, size_t errlen) {
    protocol *q = ctx;
    if (++q->events > SWEEP_MAX_EVENTS)
        return msg_set(err, errlen, MSG_EFAIL, "more than %d events",
                       SWEEP_MAX_EVENTS);
    return run_protocol_observe(&q->p, e, err, errlen);
}

/* Runs cfg with the protocol observer; returns "" when every invariant
 * holds, else what broke (in a static buffer). */
static const char *violation(const scn_config *cfg, run_result *r) {
    static char why[300];
    static protocol p;
    run_protocol_init(&p.p, cfg);
    p.events = 0;
    run_hooks h = {.observe = observe, .observe_ctx = &p};
    char err[256];
    if (run_simulate(cfg, &h, r, err, sizeof err)) {
        snprintf(why, sizeof why, "run: %s", err);
        return why;
    }
    double eps = 1e-12;
    why[0] = 0;
    if (p.p.bad[0]) snprintf(why, sizeof why, "%s", p.p.bad);
    else if (!r->finished)
        snprintf(why, sizeof why, "unfinished: %s", r->stop_reason);
    else if (r->wall_ns < r->steps * r->step_ns)
        snprintf(why, sizeof why, "wall %.9f s < %lld steps of %.9f s",
                 r->wall_time_s, (long long)r->steps, r->step_time_s);
    else if (!(r->compute_utilization >= 0 &&
               r->compute_utilization <= 1 + eps) ||
             !(r->goodput >= 0 && r->goodput <= 1 + eps))
        snprintf(why, sizeof why, "utilization %.17g, goodput %.17g",
                 r->compute_utilization, r->goodput);
    for (int i = 0; !why[0] && i < r->workers; i++) {
        const run_worker *q = &r->per_worker[i];
        if (!(q->utilization >= 0 && q->utilization <= 1 + eps) ||
            !(q->goodput >= 0 && q->goodput <= 1 + eps))
            snprintf(why, sizeof why,
                     "worker %d: utilization %.17g, "
                     "goodput %.17g",
                     i, q->utilization, q->goodput);
    }
    return why;
}

static scn_config load(const char *json, const char *const *sets, int n) {
    scn_config cfg;
    char err[512];
    int rc = scn_load_string(json, "case.json", sets, n, &cfg, err, sizeof err);
    ck_assert_msg(rc == 0, "load: %s", err);
    return cfg;
}

/* A trace file for one test, named in a --set override. */
typedef struct {
    char path[64];
    char set[96];
} trace_tmp;

static void trace_write(trace_tmp *t, const char *text) {
    snprintf(t->path, sizeof t->path, "/tmp/dilosim-failures-XXXXXX");
    int fd = mkstemp(t->path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    snprintf(t->set, sizeof t->set, "faults.trace=\"%s\"", t->path);
}

/* ---- by hand ------------------------------------------------------------- */

/* Streaming, P 1, H 5, outer overlap: the sync taken after step 5 is
 * applied after step 10, so after a 10-step run it is the only one (the
 * one after step 10 would apply after 15).  4 layers of 0.025 s, 1e6
 * parameters: a recovery download of 4e6 bytes at 10 Gbit/s, 3.2 ms.
 *   worker 0 fails at 0.18 s (step 2), is repaired at 0.49 s and has the
 *   parameters at 0.4932 s; the group (worker 1) has finished step 4.
 *   Worker 1 ends step 5 at 0.5 s; the sync taken after it (alone: a
 *   ring of one) completes then, applied after step 10: worker 0 waits to
 *   rejoin at step 11, once the group has finished step 10.
 *   Worker 1 fails at 0.82 s in step 9: nobody is left in the group, and
 *   worker 0 rejoins at once at the step after the last one finished, 9:
 *   steps 9 and 10 in [0.82, 1.02].
 * wall 1.02 s; compute 0.18 + 0.2 = 0.38 s and 0.82 s; worker 1 loses
 * what it computed since its contribution after step 5 ended at 0.5 s
 * (fragment taken by its layer 0): 0.32 s; worker 0 loses 0.18 s.
 * The engine once rejoined worker 0 at step 11 at 0.5 s (past the last
 * step, done at once) and ended the run there: wall 0.5 s for 1 s of
 * steps, worker 1's utilization 1.64. */
static const char *outer2 =
    "{\"model\": {\"params\": 1e6, \"layers\": 4, \"step_time_s\": 0.1},"
    " \"workers\": {\"count\": 2},"
    " \"network\": {\"bandwidth_gbps\": 10},"
    " \"method\": {\"name\": \"streaming\", \"H\": 5, \"fragments\": 1,"
    "  \"overlap\": \"outer\"},"
    " \"steps\": 10, \"seed\": 1}";

START_TEST(outer_overlap_rejoin_by_hand) {
    trace_tmp t;
    trace_write(&t, "0.18 0 down\n0.49 0 up\n0.82 1 down\n1.2 1 up\n");
    const char *sets[] = {t.set};
    scn_config cfg = load(outer2, sets, 1);
    run_result r;
    const char *why = violation(&cfg, &r);
    unlink(t.path);
    ck_assert_msg(!why[0], "%s", why);
    ck_assert_int_eq(r.wall_ns, NS(1.02));
    ck_assert_int_eq(r.per_worker[0].compute_ns, NS(0.38));
    ck_assert_int_eq(r.per_worker[1].compute_ns, NS(0.82));
    ck_assert_int_eq(r.per_worker[0].lost_ns, NS(0.18));
    ck_assert_int_eq(r.per_worker[1].lost_ns, NS(0.32));
    ck_assert_int_eq(r.syncs, 1);
    ck_assert_int_eq(r.failures, 2);
}
END_TEST

/* Eager overlap, random failures every 1.08 s on average, repairs in
 * 0.36 s: the engine once never returned.  A worker failed in step 20
 * after contributing the top layer of the sync taken after step 20, the
 * only one in the group: that sync's other layers were never opened and
 * it stayed in flight for good; the repaired worker rejoined at step 21
 * (the sync taken after 15, applied after 20), past the take, and its
 * arrival for the take after step 25 waited for the stale sync forever
 * (every failure then sent it back to step 21).  Now it rejoins at the
 * step after the group's last finished step, 20, and completes it. */
START_TEST(eager_overlap_random_failures_end) {
    const char *sets[] = {"method.overlap=\"eager\"",
                          "faults.mtbf_hours=0.0003",
                          "faults.mttr_hours=0.0001", "steps=30", "seed=5"};
    scn_config cfg = load(outer2, sets, 5);
    run_result r;
    const char *why = violation(&cfg, &r);
    ck_assert_msg(!why[0], "%s", why);
    ck_assert_int_gt(r.failures, 5);
}
END_TEST

/* Streaming DiLoCo with failures (scenarios/train/coupled.json: H 48, 4
 * fragments, tau 1, late: continue, 400 steps of 0.5 s), worker 0 down
 * from 30.2 s to 40.2 s and worker 1 from 80.3 s to 90.3 s: the run needs
 * the 200 s of its steps.  A repaired worker once rejoined as soon as a
 * sync completed, at the step after its apply step, up to tau steps ahead
 * of the live worker (worker 0 began step 97 at 47.458 s, worker 1 step
 * 96 at 47.5 s), and the run ended at 199.458 s.  Now it rejoins when
 * the live worker begins that step: worker 0 at 48.0 s, worker 1 at 96.0 s,
 * and both end at 200 s. */
START_TEST(streaming_rejoin_covers_the_steps) {
    trace_tmp t;
    trace_write(&t, "30.2 0 down\n40.2 0 up\n80.3 1 down\n90.3 1 up\n");
    const char *sets[] = {t.set};
    scn_config cfg;
    char err[512];
    int rc = scn_load_variant("scenarios/train/coupled.json", "streaming", sets,
                              1, &cfg, err, sizeof err);
    ck_assert_msg(rc == 0, "load: %s", err);
    run_result r;
    const char *why = violation(&cfg, &r);
    unlink(t.path);
    ck_assert_msg(!why[0], "%s", why);
    ck_assert_int_eq(r.failures, 2);
    ck_assert_int_eq(r.wall_ns, NS(200));
}
END_TEST

/* ---- the sweep ----------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int pick(uint64_t *s, int lo, int hi) { /* in [lo, hi] */
    return lo + (int)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

static double uniform(uint64_t *s, double lo, double hi) {
    return lo + (hi - lo) * (double)(rng_next(s) >> 11) * 0x1p-53;
}

/* A random small world with failures under overlap `ov` (NULL: drawn):
 * 2 to 4 workers, 1 to 6 layers, H 2 to 8, 2H + 1 to 60 steps of 0.1 s, a
 * failure every 5 to 40 steps on average, repairs in 0.5 to 10 steps,
 * written as a scenario into buf.  (The draws are made one by one, in a
 * fixed order: the sweep is the same wherever it is built.) */
static void random_world(uint64_t *s, const char *ov, char *buf, size_t n) {
    static const char *const overlaps[] = {"inner", "outer", "eager"};
    int streaming = pick(s, 0, 1), L = pick(s, 1, 6), H = pick(s, 2, 8);
    int P = streaming ? pick(s, 1, L < H ? L : H) : 1;
    if (!ov) ov = overlaps[pick(s, 0, 2)];
    int tau = strcmp(ov, "inner") ? 0 : pick(s, 0, H - 1);
    int wait = pick(s, 0, 1), member = wait && pick(s, 0, 3) == 0;
    /* at least 2H + 1 steps: every fragment can sync under any overlap
     * (without a sync a repaired worker never rejoins a live group, and
     * failures this frequent then stop the run, rightly) */
    int strided = pick(s, 0, 1), M = pick(s, 2, 4), T = pick(s, 2 * H + 1, 60);
    int weibull = pick(s, 0, 1), seed = pick(s, 1, 1 << 20);
    /* a recovery download (4 bytes a parameter) of at most 2 steps: a
     * recovery slower than the failures would not finish, rightly */
    double step = 0.1, gbps = uniform(s, 0.5, 100);
    double params = uniform(s, 1e5, gbps * 1e9 / 8 * 2 * step / 4);
    double lat_ms = uniform(s, 0, 20);
    double mtbf = uniform(s, 5, 40) * step, mttr = uniform(s, 0.5, 10) * step;
    char timeout[64] = "";
    if (pick(s, 0, 3) == 0)
        snprintf(timeout, sizeof timeout, ", \"sync_timeout_s\": %.3f",
                 uniform(s, 0.01, 0.3));
    snprintf(buf, n,
             "{\"model\": {\"params\": %.0f, \"layers\": %d,"
             " \"step_time_s\": %g},"
             " \"workers\": {\"count\": %d},"
             " \"network\": {\"bandwidth_gbps\": %.2f, \"latency_ms\": %.1f,"
             "  \"completion\": \"%s\"},"
             " \"method\": {\"name\": \"%s\", \"H\": %d, \"fragments\": %d,"
             "  \"tau\": %d, \"overlap\": \"%s\", \"layout\": \"%s\","
             "  \"late\": \"%s\"%s},"
             " \"faults\": {\"mtbf_hours\": %.9f, \"mttr_hours\": %.9f,"
             "  \"distribution\": \"%s\"},"
             " \"steps\": %d, \"seed\": %d}",
             params, L, step, M, gbps, lat_ms, member ? "member" : "group",
             streaming ? "streaming" : "diloco", H, P, tau, ov,
             strided ? "strided" : "sequential", wait ? "wait" : "continue",
             timeout, mtbf / 3600, mttr / 3600,
             weibull ? "weibull" : "exponential", T, seed);
}

/* Runs n random worlds (overlap ov, NULL: any) from seed; returns how many
 * broke an invariant, printing the first few. */
static int sweep(uint64_t seed, int n, const char *ov) {
    int wrong = 0;
    char json[2048];
    for (int k = 0; k < n; k++) {
        random_world(&seed, ov, json, sizeof json);
        scn_config cfg = load(json, NULL, 0);
        run_result r;
        const char *why = violation(&cfg, &r);
        if (why[0] && ++wrong <= 3)
            fprintf(stderr, "sweep %d: %s\n  %s\n", k, why, json);
    }
    return wrong;
}

#define SWEEP_N 2000

START_TEST(sweep_outer_with_failures) {
    ck_assert_int_eq(sweep(1, SWEEP_N, "outer"), 0);
}
END_TEST

START_TEST(sweep_eager_with_failures) {
    ck_assert_int_eq(sweep(2, SWEEP_N, "eager"), 0);
}
END_TEST

START_TEST(sweep_any_overlap_with_failures) {
    ck_assert_int_eq(sweep(3, SWEEP_N, NULL), 0);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("run_failures");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, outer_overlap_rejoin_by_hand);
    tcase_add_test(tc, eager_overlap_random_failures_end);
    tcase_add_test(tc, streaming_rejoin_covers_the_steps);
    tcase_add_test(tc, sweep_outer_with_failures);
    tcase_add_test(tc, sweep_eager_with_failures);
    tcase_add_test(tc, sweep_any_overlap_with_failures);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
