/*
 * test_checkpoint.c -- the time checkpoints and restarts cost
 * (faults.checkpoint_every_steps, checkpoint_s, restart_s), by hand.
 *
 * Closed forms next to the simulated values: without failures, DiLoCo
 * (and streaming) on M workers over unbounded links, a checkpoint of c
 * after every N-th of S steps of t: wall = S t + floor(S/N) c, the
 * checkpoints' total M floor(S/N) c, the compute M S t, each checkpoint
 * where it should start, with and without the fast-forward (--full gives
 * the same result, long runs included); DP with checkpoints and one
 * traced failure: the redone work, the restart and the wall worked out
 * step by step; a restart of r adds exactly r to a repaired worker's
 * down-to-rejoin time.  Then the keys' errors with their exact messages,
 * and the run JSON's totals only with the keys set.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "sim/engine/run.h"
#include "sim/out/report.h"

#define SEC(s) ((int64_t)llround((s)*1e9)) /* s -> ns, exact here */

/* What the hooks saw: the instants of the spans of interest, per worker,
 * and the rejoins. */
#define MAX_SEEN 64
typedef struct {
    int n;
    struct {
        int worker;
        char name[16];
        int64_t start, end;
    } v[MAX_SEEN];
    int64_t rejoined[SCN_MAX_WORKERS]; /* the last RUN_EV_REJOINED, ns */
} seen;

static void on_span(void *ctx, const run_span *s) {
    seen *z = ctx;
    if (strcmp(s->name, "checkpoint") && strcmp(s->name, "restart") &&
        strcmp(s->name, "stalled"))
        return;
    ck_assert_int_lt(z->n, MAX_SEEN);
    z->v[z->n].worker = s->worker;
    snprintf(z->v[z->n].name, sizeof z->v[z->n].name, "%s", s->name);
    z->v[z->n].start = s->start_ns;
    z->v[z->n].end = s->end_ns;
    z->n++;
}

static int on_event(void *ctx, const run_event *e, char *err, size_t len) {
    (void)err, (void)len;
    seen *z = ctx;
    if (e->kind == RUN_EV_REJOINED) z->rejoined[e->worker] = e->now;
    return 0;
}

/* The k-th (0-based) span named `name` of worker w, or NULL. */
static const void *nth(const seen *z, int w, const char *name, int k,
                       int64_t *start, int64_t *end) {
    for (int i = 0; i < z->n; i++)
        if (z->v[i].worker == w && !strcmp(z->v[i].name, name) && !k--) {
            *start = z->v[i].start;
            *end = z->v[i].end;
            return &z->v[i];
        }
    return NULL;
}

static scn_config cfg;

/* Loads json with the overrides (NULL-terminated) into cfg. */
static void load(const char *json, const char *const *sets) {
    int n = 0;
    while (sets[n]) n++;
    char err[512];
    ck_assert_msg(scn_load_string(json, "ck.json", sets, n, &cfg, err,
                                  sizeof err) == 0,
                  "%s", err);
}

/* Runs cfg (with hooks into z when z is not NULL) and checks it finished. */
static run_result run(seen *z) {
    run_hooks h = {.span = on_span,
                   .span_ctx = z,
                   .observe = on_event,
                   .observe_ctx = z};
    run_result r;
    char err[512];
    if (z) memset(z, 0, sizeof *z);
    ck_assert_msg(run_simulate(&cfg, z ? &h : NULL, &r, err, sizeof err) == 0,
                  "%s", err);
    ck_assert_msg(r.finished, "%s", r.stop_reason);
    return r;
}

/* The same run with and without the fast-forward: the same bytes. */
static run_result run_both(void) {
    cfg.full = 1;
    run_result full = run(NULL);
    cfg.full = 0;
    run_result fast = run(NULL);
    ck_assert_msg(!memcmp(&full, &fast, sizeof full),
                  "--full differs: wall %lld vs %lld", (long long)full.wall_ns,
                  (long long)fast.wall_ns);
    return fast;
}

/* ---- no failures: wall = S t + floor(S/N) c ---------------------------- */

static const char *unbounded =
    "{\"model\": {\"params\": 1e6, \"layers\": 3, \"step_time_s\": 0.25},"
    " \"network\": {\"bandwidth_gbps\": \"inf\", \"latency_ms\": 0},"
    " \"method\": {\"name\": \"diloco\", \"H\": 4}}";

/* M workers, S steps, a checkpoint of c s after every N-th step (and the
 * method's sets): checks the closed forms and returns the result. */
static run_result by_hand(int M, int64_t S, int64_t N, double c,
                          const char *method) {
    char m[32], s[32], n[48], cs[48];
    snprintf(m, sizeof m, "workers.count=%d", M);
    snprintf(s, sizeof s, "steps=%lld", (long long)S);
    snprintf(n, sizeof n, "faults.checkpoint_every_steps=%lld", (long long)N);
    snprintf(cs, sizeof cs, "faults.checkpoint_s=%.17g", c);
    const char *sets[] = {m, s, n, cs, method, "method.fragments=1", NULL};
    if (strstr(method, "streaming")) sets[5] = "method.fragments=2";
    load(unbounded, sets);
    run_result r = run_both();
    int64_t t = SEC(0.25), k = S / N;
    ck_assert_int_eq(r.wall_ns, S * t + k * SEC(c));
    ck_assert_int_eq(r.checkpoint_ns, M * k * SEC(c));
    ck_assert_int_eq(r.compute_ns, M * S * t);
    ck_assert_int_eq(r.restart_ns, 0);
    for (int i = 0; i < M; i++)
        ck_assert_int_eq(r.per_worker[i].checkpoint_ns, k * SEC(c));
    return r;
}

START_TEST(diloco_wall_by_hand) {
    const char *diloco = "method.name=\"diloco\"";
    by_hand(3, 23, 5, 0.7, diloco); /* 4 checkpoints; none after the last */
    by_hand(3, 20, 5, 0.7, diloco); /* 4, the last after step 20 */
    by_hand(2, 9, 1, 0.125, diloco);
    by_hand(3, 7, 8, 0.7, diloco); /* N > S: none */
    by_hand(4, 30, 6, 1.5, "method.name=\"streaming\"");
    by_hand(2, 30, 4, 0.5, "method.name=\"dp\""); /* DP: every 4 steps */
    /* long runs: the fast-forward jumps over whole checkpoint intervals
     * (N 8 is 2 periods of H 4) and still gives the same bytes */
    by_hand(3, 2001, 8, 0.3, diloco);
    by_hand(2, 3000, 12, 2, "method.name=\"streaming\"");
    /* each checkpoint starts after step k N and the k - 1 before it */
    const char *sets[] = {"workers.count=2", "steps=23",
                          "faults.checkpoint_every_steps=5",
                          "faults.checkpoint_s=0.7", NULL};
    load(unbounded, sets);
    seen z;
    run(&z);
    for (int w = 0; w < 2; w++)
        for (int k = 1; k <= 4; k++) {
            int64_t a, b;
            ck_assert_ptr_nonnull(nth(&z, w, "checkpoint", k - 1, &a, &b));
            ck_assert_int_eq(a, k * 5 * SEC(0.25) + (k - 1) * SEC(0.7));
            ck_assert_int_eq(b - a, SEC(0.7));
        }
    int64_t a, b;
    ck_assert_ptr_null(nth(&z, 0, "checkpoint", 4, &a, &b));
}
END_TEST

/* The keys' defaults are 0.  DiLoCo without checkpoint_every_steps:
 * checkpoint_s costs nothing (no checkpoints); DP without it: one every
 * checkpoint_steps. */
START_TEST(interval_defaults) {
    const char *none[] = {NULL};
    load("{}", none); /* the defaults: no checkpoints, no restart time */
    ck_assert_int_eq(cfg.checkpoint_every_steps, 0);
    ck_assert(cfg.checkpoint_s == 0 && cfg.restart_s == 0);
    const char *diloco[] = {"workers.count=2", "steps=40",
                            "faults.checkpoint_s=3", NULL};
    load(unbounded, diloco);
    run_result r = run_both();
    ck_assert_int_eq(r.wall_ns, 40 * SEC(0.25));
    ck_assert_int_eq(r.checkpoint_ns, 0);
    const char *dp[] = {"workers.count=2",       "steps=40",
                        "method.name=\"dp\"",    "faults.checkpoint_steps=15",
                        "faults.checkpoint_s=3", NULL};
    load(unbounded, dp);
    r = run_both();
    ck_assert_int_eq(r.wall_ns, 40 * SEC(0.25) + 2 * SEC(3));
    ck_assert_int_eq(r.checkpoint_ns, 2 * 2 * SEC(3));
}
END_TEST

/* ---- failures --------------------------------------------------------- */

/* A failure trace of `text` at a fresh name; *set the override. */
static void trace_at(char *path, char *set, size_t n, const char *text) {
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    snprintf(set, n, "faults.trace=\"%s\"", path);
}

/* DP, 2 workers, 1 s steps, 10 steps, a checkpoint of 0.5 s after steps
 * 4 and 8 (checkpoint_every_steps 4, also the rollback's interval),
 * unbounded links (the download takes no time); worker 1 fails at 6.3 s
 * and is repaired at 8 s, then restarts for r = 1.5 s:
 *   steps 1-4 [0, 4], checkpoint [4, 4.5] (committed: step 4's update is
 *   in), steps 5, 6 from 4.5: the failure at 6.3 cuts step 6 and rolls
 *   both back to step 4: each redoes 6.3 - 4.5 = 1.8 s (lost; the
 *   checkpoint's write is not compute).  Worker 0 stalls [6.3, 9.5],
 *   worker 1 is down [6.3, 8], restarts [8, 9.5], downloads in 0 s.
 *   Steps 5-8 [9.5, 13.5] (checkpoint 4 is not written again), checkpoint
 *   [13.5, 14], steps 9-10 [14, 16]: wall 16 = repair + r + (10 - 4) t +
 *   c; each worker computed 10 + 1.8 s and wrote 2 checkpoints. */
static const char *dp_pair =
    "{\"model\": {\"params\": 1e6, \"layers\": 2, \"step_time_s\": 1},"
    " \"workers\": {\"count\": 2},"
    " \"network\": {\"bandwidth_gbps\": \"inf\", \"latency_ms\": 0},"
    " \"method\": {\"name\": \"dp\"}, \"steps\": 10}";

START_TEST(dp_failure_by_hand) {
    char path[] = "/tmp/dilosim-ckpt-XXXXXX", tr[128];
    trace_at(path, tr, sizeof tr, "6.3 1 down\n8 1 up\n");
    const char *sets[] = {tr, "faults.checkpoint_every_steps=4",
                          "faults.checkpoint_s=0.5", "faults.restart_s=1.5",
                          NULL};
    load(dp_pair, sets);
    seen z;
    run_result r = run(&z);
    ck_assert_int_eq(r.wall_ns, SEC(8 + 1.5 + 6 + 0.5));
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(r.per_worker[i].lost_ns, SEC(6.3 - 4.5));
        ck_assert_int_eq(r.per_worker[i].compute_ns, SEC(10 + 1.8));
        ck_assert_int_eq(r.per_worker[i].checkpoint_ns, 2 * SEC(0.5));
    }
    ck_assert_int_eq(r.restart_ns, SEC(1.5));
    ck_assert_int_eq(r.per_worker[1].restart_ns, SEC(1.5));
    int64_t a, b;
    ck_assert_ptr_nonnull(nth(&z, 1, "restart", 0, &a, &b));
    ck_assert_int_eq(a, SEC(8));
    ck_assert_int_eq(b, SEC(9.5));
    ck_assert_ptr_nonnull(nth(&z, 0, "stalled", 0, &a, &b));
    ck_assert_int_eq(a, SEC(6.3));
    ck_assert_int_eq(b, SEC(9.5));
    ck_assert_ptr_nonnull(nth(&z, 0, "checkpoint", 1, &a, &b));
    ck_assert_int_eq(a, SEC(13.5));
    ck_assert_ptr_null(nth(&z, 0, "checkpoint", 2, &a, &b));
    unlink(path);
}
END_TEST

/* A failure during a checkpoint cuts it short: its time until the
 * failure counts; DP rolls back to the checkpoint before. */
START_TEST(failure_cuts_checkpoint) {
    char path[] = "/tmp/dilosim-ckpt-XXXXXX", tr[128];
    trace_at(path, tr, sizeof tr, "4.25 0 down\n5 0 up\n");
    const char *sets[] = {tr, "faults.checkpoint_every_steps=4",
                          "faults.checkpoint_s=0.5", NULL};
    load(dp_pair, sets);
    run_result r = run(NULL);
    /* [4, 4.25] of the first checkpoint, then steps 5-8 from 5 (the
     * checkpoint of step 4 was committed: its update was in), the second
     * [9, 9.5], steps 9-10 [9.5, 11.5] */
    ck_assert_int_eq(r.wall_ns, SEC(11.5));
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(r.per_worker[i].checkpoint_ns, SEC(0.25 + 0.5));
    unlink(path);
}
END_TEST

/* The instant worker w rejoins after a failure of `trace`, with a restart
 * of r s. */
static int64_t rejoin_at(const char *json, const char *trace, int w, double r) {
    char path[] = "/tmp/dilosim-ckpt-XXXXXX", tr[128], rs[48];
    trace_at(path, tr, sizeof tr, trace);
    snprintf(rs, sizeof rs, "faults.restart_s=%.17g", r);
    const char *sets[] = {tr, rs, NULL};
    load(json, sets);
    seen z;
    run_result res = run(&z);
    unlink(path);
    ck_assert_int_eq(res.restart_ns, SEC(r));
    ck_assert_int_gt(z.rejoined[w], 0);
    return z.rejoined[w];
}

/* One DiLoCo worker over a finite link (the group empties: it rejoins
 * as soon as its download is over): the restart adds exactly r to its
 * down-to-rejoin time, whatever the download takes.  DP: the stall of
 * both ends r later, and so does the run. */
START_TEST(restart_adds_r) {
    const char *one =
        "{\"model\": {\"params\": 3e6, \"layers\": 2, \"step_time_s\": 0.5},"
        " \"workers\": {\"count\": 1},"
        " \"network\": {\"bandwidth_gbps\": 0.8, \"latency_ms\": 20},"
        " \"method\": {\"name\": \"diloco\", \"H\": 5}, \"steps\": 30}";
    const char *tr = "3.3 0 down\n5.1 0 up\n";
    int64_t base = rejoin_at(one, tr, 0, 0);
    ck_assert_int_gt(base, SEC(5.1)); /* the download took time */
    for (double r = 0.25; r < 10; r *= 3)
        ck_assert_int_eq(rejoin_at(one, tr, 0, r) - base, SEC(r));
    char path[] = "/tmp/dilosim-ckpt-XXXXXX", set[128];
    trace_at(path, set, sizeof set, "2.2 1 down\n3 1 up\n");
    const char *none[] = {set, NULL};
    load(dp_pair, none);
    int64_t wall0 = run(NULL).wall_ns;
    const char *some[] = {set, "faults.restart_s=2.75", NULL};
    load(dp_pair, some);
    ck_assert_int_eq(run(NULL).wall_ns - wall0, SEC(2.75));
    unlink(path);
}
END_TEST

/* ---- input and output -------------------------------------------------- */

static void load_fails(const char *body, const char *msg) {
    char json[256], err[512];
    snprintf(json, sizeof json, "{\n  \"faults\": {\n    %s\n  }\n}\n", body);
    int rc = scn_load_string(json, "s.json", NULL, 0, &cfg, err, sizeof err);
    ck_assert_int_eq(rc, MSG_EINPUT);
    ck_assert_str_eq(err, msg);
}

START_TEST(errors) {
    const char *num = "(expected a number in [0, 1000000000])";
    const char *in = "(expected an integer in 0..9007199254740992)";
    char m[256];
    snprintf(m, sizeof m,
             "s.json:3:21: faults.checkpoint_s: -1 is out of "
             "range %s",
             num);
    load_fails("\"checkpoint_s\": -1", m);
    snprintf(m, sizeof m,
             "s.json:3:21: faults.checkpoint_s: wrong type: "
             "string %s",
             num);
    load_fails("\"checkpoint_s\": \"x\"", m);
    snprintf(m, sizeof m,
             "s.json:3:18: faults.restart_s: -0.5 is out of "
             "range %s",
             num);
    load_fails("\"restart_s\": -0.5", m);
    snprintf(m, sizeof m,
             "s.json:3:18: faults.restart_s: wrong type: "
             "boolean %s",
             num);
    load_fails("\"restart_s\": true", m);
    snprintf(m, sizeof m,
             "s.json:3:31: faults.checkpoint_every_steps: -1 "
             "is out of range %s",
             in);
    load_fails("\"checkpoint_every_steps\": -1", m);
    snprintf(m, sizeof m,
             "s.json:3:31: faults.checkpoint_every_steps: 1.5 "
             "is not an integer %s",
             in);
    load_fails("\"checkpoint_every_steps\": 1.5", m);
    snprintf(m, sizeof m,
             "s.json:3:31: faults.checkpoint_every_steps: "
             "wrong type: string %s",
             in);
    load_fails("\"checkpoint_every_steps\": \"x\"", m);
}
END_TEST

/* The run JSON of cfg's run, in buf. */
static void json_of(char *buf, size_t n) {
    run_result r = run(NULL);
    FILE *f = fmemopen(buf, n, "w");
    ck_assert_ptr_nonnull(f);
    report_run_json(f, &cfg, &r);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(json_totals_only_when_set) {
    static char buf[1 << 16];
    const char *plain[] = {"workers.count=2", "steps=10", NULL};
    load(unbounded, plain);
    json_of(buf, sizeof buf);
    ck_assert_ptr_null(strstr(buf, "checkpoint_time_s"));
    ck_assert_ptr_null(strstr(buf, "restart_time_s"));
    const char *set[] = {"workers.count=2",
                         "steps=10",
                         "faults.checkpoint_every_steps=4",
                         "faults.checkpoint_s=0.5",
                         "faults.restart_s=2",
                         NULL};
    load(unbounded, set);
    json_of(buf, sizeof buf);
    /* 2 checkpoints of 0.5 s on each of 2 workers; no failure */
    ck_assert_ptr_nonnull(strstr(buf, "\"checkpoint_time_s\": 2,"));
    ck_assert_ptr_nonnull(strstr(buf, "\"restart_time_s\": 0,"));
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("checkpoint");
    TCase *tc = tcase_create("checkpoint");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, diloco_wall_by_hand);
    tcase_add_test(tc, interval_defaults);
    tcase_add_test(tc, dp_failure_by_hand);
    tcase_add_test(tc, failure_cuts_checkpoint);
    tcase_add_test(tc, restart_adds_r);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, json_totals_only_when_set);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
