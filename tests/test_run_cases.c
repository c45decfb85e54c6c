/*
 * test_run_cases.c -- whole runs worked out by hand, to the nanosecond.
 *
 * Each test builds a small world (2 or 3 workers, 1 to 4 layers, a few
 * outer periods), writes the schedule of every op and every all-reduce in
 * a comment, and asserts the simulated wall time, compute, lost compute
 * and bytes equal the hand-worked values exactly: time in whole ns, bytes
 * with ==.  The timeline hook (run_hooks.span) is used to check instants
 * the result does not hold: when a reduction ran, when a repaired worker
 * downloaded and rejoined, where a worker stalled.  Derivations that
 * found engine defects are kept at the end as DEFECT (fixed) cases.
 *
 * Conventions of the engine used in the derivations (sim/engine/run.c, docs/model.md):
 *  - a step is 3L ops on one stream: forward 0..L-1, then per layer
 *    L-1..0 the two backward halves (activations first by default); with
 *    the default split every op of a 1.2 s, 4-layer step lasts 0.1 s, so
 *    in a step starting at s the parameter backward of layer 3 ends at
 *    s+0.6, of layer 2 at s+0.8, of layer 1 at s+1.0, of layer 0 at s+1.2;
 *  - fragment at position q syncs after steps floor((q+1)H/P)+kH, taken
 *    tau steps earlier (after step t); a layer's all-reduce is ready when
 *    its parameter backward of step t ends on every member, the stream
 *    runs one all-reduce at a time (fifo), and the forward of that layer
 *    in step t+1+tau waits for it;
 *  - a ring all-reduce of S bytes among 2 workers is 2 steps of
 *    latency + (S/2)/B; among 3 workers 4 steps of latency + (S/3)/B.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "sim/engine/run.h"

/* ---- helpers ------------------------------------------------------------ */

#define NS(s) ((int64_t)llround((s)*1e9)) /* seconds -> ns, exact here */

typedef struct {
    int worker, track, layer;
    char name[32];
    int64_t step, start, end;
} span_rec;

typedef struct {
    span_rec *v;
    int n, cap;
} spans;

static void collect(void *ctx, const run_span *s) {
    spans *sp = ctx;
    if (sp->n == sp->cap) {
        sp->cap = sp->cap ? 2 * sp->cap : 256;
        sp->v = realloc(sp->v, (size_t)sp->cap * sizeof *sp->v);
        ck_assert_ptr_nonnull(sp->v);
    }
    span_rec *r = &sp->v[sp->n++];
    r->worker = s->worker;
    r->track = s->track;
    r->layer = s->layer;
    snprintf(r->name, sizeof r->name, "%s", s->name);
    r->step = s->step;
    r->start = s->start_ns;
    r->end = s->end_ns;
}

/* Loads a scenario from text plus overrides (NULL-terminated), runs it
 * (spans into sp unless sp is NULL) and checks that it finished.  The
 * closed forms here reduce layer by layer: both bucket sizes are 0 before
 * the case's own overrides (which may set them). */
static run_result sim_spans(spans *sp, const char *json, ...) {
    const char *sets[32] = {"method.dp_bucket_mb=0", "method.bucket_mb=0"};
    int n = 2;
    va_list ap;
    va_start(ap, json);
    for (const char *s; (s = va_arg(ap, const char *));) sets[n++] = s;
    va_end(ap);
    char err[512];
    scn_config cfg;
    int rc = scn_load_string(json, "case.json", sets, n, &cfg, err, sizeof err);
    ck_assert_msg(rc == 0, "load: %s", err);
    run_hooks hooks = {.span = collect, .span_ctx = sp};
    run_result r;
    rc = run_simulate(&cfg, sp ? &hooks : NULL, &r, err, sizeof err);
    ck_assert_msg(rc == 0, "run: %s", err);
    ck_assert_int_eq(r.finished, 1);
    return r;
}

#define SIM(sp, json, ...) sim_spans(sp, json, __VA_ARGS__, (const char *)NULL)

static void spans_free(spans *sp) {
    free(sp->v);
    sp->v = NULL;
    sp->n = sp->cap = 0;
}

/* The spans named `name` of worker w, in the order they were emitted. */
static int find_spans(const spans *sp, int w, const char *name,
                      const span_rec **out, int max) {
    int k = 0;
    for (int i = 0; i < sp->n; i++)
        if (sp->v[i].worker == w && strcmp(sp->v[i].name, name) == 0) {
            if (k < max) out[k] = &sp->v[i];
            k++;
        }
    return k;
}

/* The all-reduce span of layer l taken after step t on worker w. */
static const span_rec *allreduce_span(const spans *sp, int w, int l,
                                      int64_t t) {
    const span_rec *hit = NULL;
    for (int i = 0; i < sp->n; i++) {
        const span_rec *s = &sp->v[i];
        if (s->worker == w && s->layer == l && s->step == t &&
            strcmp(s->name, "allreduce") == 0) {
            ck_assert_msg(hit == NULL,
                          "two allreduce spans, layer %d step %lld", l,
                          (long long)t);
            hit = s;
        }
    }
    ck_assert_msg(hit != NULL,
                  "no allreduce span for worker %d layer %d step %lld", w, l,
                  (long long)t);
    return hit;
}

static int by_start(const void *a, const void *b) {
    const span_rec *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

static int is_compute_op(const span_rec *s) {
    return s->track == 0 && (strcmp(s->name, "forward") == 0 ||
                             strcmp(s->name, "backward_act") == 0 ||
                             strcmp(s->name, "backward_param") == 0);
}

/* The compute-op spans of worker w (track 0 may also hold spans of
 * states, such as a failed worker's), sorted by start, into a new array;
 * *n gets their count. */
static span_rec *compute_track(const spans *sp, int w, int *n) {
    span_rec *v = calloc((size_t)sp->n + 1, sizeof *v);
    ck_assert_ptr_nonnull(v);
    int k = 0;
    for (int i = 0; i < sp->n; i++)
        if (sp->v[i].worker == w && is_compute_op(&sp->v[i])) v[k++] = sp->v[i];
    qsort(v, (size_t)k, sizeof *v, by_start);
    *n = k;
    return v;
}

/* A trace file with `text` in a fresh temporary directory; *set gets the
 * override that points the scenario at it. */
typedef struct {
    char dir[64], path[96], set[160];
} trace_tmp;

static void trace_write(trace_tmp *t, const char *text) {
    snprintf(t->dir, sizeof t->dir, "/tmp/dilosim_cases_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(t->dir));
    snprintf(t->path, sizeof t->path, "%s/faults.trace", t->dir);
    FILE *f = fopen(t->path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
    snprintf(t->set, sizeof t->set, "faults.trace=\"%s\"", t->path);
}

static void trace_remove(trace_tmp *t) {
    remove(t->path);
    rmdir(t->dir);
}

/* ---- 1. streaming, P 2, tau 1, finite bandwidth ------------------------ */

/* 2 workers, 4 layers of 1e6 parameters (fp32: S = 4e6 bytes a layer),
 * 1.2 s steps (0.1 s an op), H 4, P 2 strided (fragment 0 = layers {0,2},
 * fragment 1 = {1,3}), tau 1, 8 steps.  Links 0.04 Gbit/s = 5e6 B/s, 60 ms
 * latency: one layer's ring = 2 (0.06 + 2e6/5e6) = 0.92 s.
 * Fragment 0 syncs after steps 2, 6, taken after 1, 5; fragment 1 after
 * 4, 8, taken after 3, 7.  Forward of step t+2 waits.
 *
 *   step 1  [0, 1.2]        take F0: L2 ready 0.8  -> ring [0.8, 1.72]
 *                                    L0 ready 1.2  -> ring [1.72, 2.64]
 *   step 2  [1.2, 2.4]
 *   step 3  forward L0 waits for L0 until 2.64 (stall 0.24): [2.64, 3.84]
 *                           take F1: L3 ready 3.24 -> ring [3.24, 4.16]
 *                                    L1 ready 3.64 -> ring [4.16, 5.08]
 *   step 4  [3.84, 5.04]
 *   step 5  [5.04, 6.24]    (forward L1 at 5.14, its ring ended 5.08)
 *                           take F0: L2 ready 5.84 -> ring [5.84, 6.76]
 *                                    L0 ready 6.24 -> ring [6.76, 7.68]
 *   step 6  [6.24, 7.44]
 *   step 7  forward L0 waits until 7.68 (stall 0.24): [7.68, 8.88]
 *                           take F1: L3 ready 8.28 -> ring [8.28, 9.20]
 *                                    L1 ready 8.68 -> ring [9.20, 10.12]
 *   step 8  [8.88, 10.08]   (not taken: its sync would apply after 9)
 *
 * wall = 10.12 s (the last ring ends after the last step); compute 9.6 s a
 * worker; 4 fragment syncs; each worker sends S per layer all-reduce
 * (2(M-1)/M S = S), 8 of them: 32e6 bytes. */
static const char *streaming4 =
    "{\"model\": {\"params\": 4e6, \"layers\": 4, \"step_time_s\": 1.2},"
    " \"workers\": {\"count\": 2},"
    " \"network\": {\"bandwidth_gbps\": 0.04, \"latency_ms\": 60},"
    " \"method\": {\"name\": \"streaming\", \"H\": 4, \"fragments\": 2,"
    "  \"layout\": \"strided\", \"tau\": 1, \"codec\": \"fp32\"},"
    " \"steps\": 8}";

/* The rings of the derivation above, per (layer, take step). */
static const struct {
    int layer;
    int64_t step;
    double start, end;
} streaming4_rings[] = {
    {2, 1, 0.80, 1.72}, {0, 1, 1.72, 2.64},  {3, 3, 3.24, 4.16},
    {1, 3, 4.16, 5.08}, {2, 5, 5.84, 6.76},  {0, 5, 6.76, 7.68},
    {3, 7, 8.28, 9.20}, {1, 7, 9.20, 10.12},
};

START_TEST(streaming_p2_tau1_by_hand) {
    spans sp = {0};
    run_result r = SIM(&sp, streaming4, "seed=1");
    ck_assert_int_eq(NS(r.wall_time_s), NS(10.12));
    ck_assert_int_eq(r.syncs, 4);
    for (int w = 0; w < 2; w++) {
        ck_assert_int_eq(NS(r.per_worker[w].compute_time_s), NS(9.6));
        ck_assert(r.per_worker[w].bytes_sent == 32e6);
        ck_assert(r.per_worker[w].bytes_received == 32e6);
        ck_assert_int_eq(NS(r.per_worker[w].lost_compute_s), 0);
    }
    ck_assert(r.bytes_sent_total == 64e6);
    ck_assert_double_eq_tol(r.peak_link_gbps, 0.04, 1e-12);
    ck_assert_double_eq_tol(r.compute_utilization, 9.6 / 10.12, 1e-12);
    /* every ring at the instants of the derivation, on both workers */
    for (size_t i = 0; i < sizeof streaming4_rings / sizeof *streaming4_rings;
         i++)
        for (int w = 0; w < 2; w++) {
            const span_rec *s =
                allreduce_span(&sp, w, streaming4_rings[i].layer,
                               streaming4_rings[i].step);
            ck_assert_int_eq(s->start, NS(streaming4_rings[i].start));
            ck_assert_int_eq(s->end, NS(streaming4_rings[i].end));
        }
    spans_free(&sp);
}
END_TEST

/* ---- 1b. the outer overlap, and P > H ------------------------------- */

/* The world of 1 with overlap outer (tau 0): fragment 0 is taken after
 * step 2 and applied after 6 (forward of step 7 waits), fragment 1 taken
 * after 4 and applied after 8; the takes after 6 and 8 would apply past
 * the last step.  Nothing waits: step k is [1.2(k-1), 1.2k].
 *   F0 after 2: L2 ready 2.0 -> ring [2.0, 2.92], L0 ready 2.4 -> [2.92, 3.84]
 *   F1 after 4: L3 ready 4.2 -> ring [4.2, 5.12], L1 ready 4.6 -> [5.12, 6.04]
 * wall = 9.6 s, utilization 1, 2 syncs, 4 layer rings of S = 4e6 bytes a
 * worker; the same at unbounded bandwidth (no stall at all either). */
START_TEST(outer_overlap_by_hand) {
    static const struct {
        int layer;
        int64_t step;
        double start, end;
    } rings[] = {{2, 2, 2.0, 2.92},
                 {0, 2, 2.92, 3.84},
                 {3, 4, 4.2, 5.12},
                 {1, 4, 5.12, 6.04}};
    spans sp = {0};
    run_result r =
        SIM(&sp, streaming4, "method.tau=0", "method.overlap=\"outer\"");
    ck_assert_int_eq(NS(r.wall_time_s), NS(9.6));
    ck_assert(r.compute_utilization == 1);
    ck_assert_int_eq(r.syncs, 2);
    ck_assert(r.per_worker[0].bytes_sent == 16e6);
    for (size_t i = 0; i < sizeof rings / sizeof *rings; i++) {
        const span_rec *x =
            allreduce_span(&sp, 0, rings[i].layer, rings[i].step);
        ck_assert_int_eq(x->start, NS(rings[i].start));
        ck_assert_int_eq(x->end, NS(rings[i].end));
    }
    spans_free(&sp);
    r = SIM(NULL, streaming4, "method.tau=0", "method.overlap=\"eager\"",
            "network.bandwidth_gbps=\"inf\"");
    ck_assert_int_eq(NS(r.wall_time_s), NS(9.6));
    ck_assert(r.compute_utilization == 1);
    /* inner overlap in the same world stalls (1 derives 10.12 s with tau 1) */
    r = SIM(NULL, streaming4, "method.tau=0");
    ck_assert(r.compute_utilization < 1);
}
END_TEST

/* P > H: the world of 1 with H 2, P 4 (strided: fragment j = layer j),
 * tau 0, 4 steps.  Offsets floor((q+1)2/4) = 0, 1, 1, 2, the 0 taken as 2:
 * fragments 1 and 2 sync after odd steps, 0 and 3 after even ones.
 *   step 1 [0, 1.2]: L2 ready 0.8 -> ring [0.8, 1.72]; L1 ready 1.0 ->
 *     [1.72, 2.64]
 *   step 2 from 1.2: forward L0 [1.2, 1.3], L1 waits until 2.64 (stall
 *     1.34): L1..L3 [2.64, 2.94], backward L3 ends 3.14 -> ring
 *     [3.14, 4.06]; L0 ends 3.74 -> [4.06, 4.98]
 *   step 3 from 3.74: forward L0 waits until 4.98: forward [4.98, 5.38],
 *     L2 ready 5.78 -> ring [5.78, 6.70]; L1 ready 5.98 -> [6.70, 7.62];
 *     the step ends 6.18
 *   step 4 from 6.18: L0 [6.18, 6.28], L1 waits until 7.62: forward
 *     [7.62, 7.92], L3 ready 8.12 -> ring [8.12, 9.04]; L0 ready 8.72 ->
 *     [9.04, 9.96]
 * wall = 9.96 s, compute 4.8 s a worker, 8 fragment syncs, 8 layer rings
 * of 4e6 bytes a worker. */
START_TEST(more_fragments_than_steps_by_hand) {
    static const struct {
        int layer;
        int64_t step;
        double start, end;
    } rings[] = {{2, 1, 0.8, 1.72},  {1, 1, 1.72, 2.64}, {3, 2, 3.14, 4.06},
                 {0, 2, 4.06, 4.98}, {2, 3, 5.78, 6.70}, {1, 3, 6.70, 7.62},
                 {3, 4, 8.12, 9.04}, {0, 4, 9.04, 9.96}};
    spans sp = {0};
    run_result r = SIM(&sp, streaming4, "method.tau=0", "method.H=2",
                       "method.fragments=4", "steps=4");
    ck_assert_int_eq(NS(r.wall_time_s), NS(9.96));
    ck_assert_int_eq(NS(r.per_worker[1].compute_time_s), NS(4.8));
    ck_assert_int_eq(r.syncs, 8);
    ck_assert(r.per_worker[1].bytes_sent == 32e6);
    for (size_t i = 0; i < sizeof rings / sizeof *rings; i++)
        for (int w = 0; w < 2; w++) {
            const span_rec *x =
                allreduce_span(&sp, w, rings[i].layer, rings[i].step);
            ck_assert_int_eq(x->start, NS(rings[i].start));
            ck_assert_int_eq(x->end, NS(rings[i].end));
        }
    spans_free(&sp);
}
END_TEST

/* Per-worker taus (1, 3) in the world of 1: the syncs are taken where tau
 * 1 takes them (after 1, 3, 5, 7) and every ring runs at the instants of
 * 1 (it starts once the later worker, worker 0, arrives), but worker 1's
 * forward waits only at take + 4: it never stalls, runs its steps back to
 * back (step k is [1.2(k-1), 1.2k]) and is done at 9.6 s, while worker 0
 * stalls before steps 3 and 7 as in 1.  The group's all-reduce ends at one
 * instant for all, so the wall time is still 10.12 s: a larger tau for one
 * worker alone buys no throughput here (every sync still waits for worker
 * 0's arrival). */
START_TEST(per_worker_tau_by_hand) {
    spans sp = {0};
    run_result r = SIM(&sp, streaming4, "method.tau=[1, 3]");
    ck_assert_int_eq(NS(r.wall_time_s), NS(10.12));
    ck_assert_int_eq(r.syncs, 4);
    for (size_t i = 0; i < sizeof streaming4_rings / sizeof *streaming4_rings;
         i++) {
        const span_rec *x = allreduce_span(&sp, 1, streaming4_rings[i].layer,
                                           streaming4_rings[i].step);
        ck_assert_int_eq(x->start, NS(streaming4_rings[i].start));
        ck_assert_int_eq(x->end, NS(streaming4_rings[i].end));
    }
    int n0, n1;
    span_rec *c0 = compute_track(&sp, 0, &n0), *c1 = compute_track(&sp, 1, &n1);
    ck_assert_int_eq(n0, 8 * 12);
    ck_assert_int_eq(n1, 8 * 12);
    for (int k = 0; k < 8; k++) /* worker 1: no stall at all */
        ck_assert_int_eq(c1[12 * k].start, NS(1.2 * k));
    ck_assert_int_eq(c1[8 * 12 - 1].end, NS(9.6));
    ck_assert_int_eq(c0[12 * 2].start, NS(2.64)); /* worker 0, steps 3, 7 */
    ck_assert_int_eq(c0[12 * 6].start, NS(7.68));
    free(c0);
    free(c1);
    spans_free(&sp);
}
END_TEST

/* ---- 2. streaming failure, P 2: lost work 1/P per fragment, rejoin ---- */

/* The same 4-layer world at unbounded bandwidth (rings and downloads take
 * no time, so step k is [1.2(k-1), 1.2k]), tau 0, 12 steps: fragment 0
 * ({0,2}) syncs after steps 2, 6, 10, fragment 1 ({1,3}) after 4, 8, 12.
 * Worker 1 fails at 8.05 s, 0.85 s into step 7 (0.05 s into the
 * activation backward of layer 1): busy 8.05 s.  It last contributed to
 * fragment 0 with layer 0 of step 6 (at 7.2 s) and to fragment 1 with
 * layer 1 of step 4 (at 3.6 + 1.0 = 4.6 s), so it loses
 *     ((8.05 - 7.2) + (8.05 - 4.6)) / 2 = (0.85 + 3.45) / 2 = 2.15 s.
 * Repaired at 10 s, it downloads 4e6 x 4 bytes at once and waits for the
 * group's next fragment sync: fragment 1's taken after step 8 ended at
 * 9.4 s, before; fragment 0's taken after step 10 ends with layer 0 at
 * 12.0 s.  It rejoins there, at step 11, with worker 0: both end at
 * 14.4 s.  Worker 1 computed 8.05 + 2 x 1.2 = 10.45 s.  Bytes (bf16,
 * 2e6 a layer, S a ring): rings with both members are fragment syncs of
 * steps 2, 4, 6, 12 (two layers each): 16e6 bytes a worker; worker 0 also
 * sends the 16e6-byte download. */
static const char *streaming4_inf =
    "{\"model\": {\"params\": 4e6, \"layers\": 4, \"step_time_s\": 1.2},"
    " \"workers\": {\"count\": 2},"
    " \"network\": {\"bandwidth_gbps\": \"inf\"},"
    " \"method\": {\"name\": \"streaming\", \"H\": 4, \"fragments\": 2,"
    "  \"layout\": \"strided\", \"tau\": 0},"
    " \"steps\": 12}";

START_TEST(streaming_failure_lost_per_fragment_and_rejoin) {
    trace_tmp t;
    trace_write(&t, "# worker 1 fails in step 7\n8.05 1 down\n10 1 up\n");
    spans sp = {0};
    run_result r = SIM(&sp, streaming4_inf, t.set);
    trace_remove(&t);
    ck_assert_int_eq(NS(r.wall_time_s), NS(14.4));
    ck_assert_int_eq(r.failures, 1);
    ck_assert_int_eq(r.per_worker[1].failures, 1);
    ck_assert_int_eq(r.per_worker[0].failures, 0);
    ck_assert_int_eq(NS(r.per_worker[1].lost_compute_s), NS(2.15));
    ck_assert_int_eq(NS(r.per_worker[0].lost_compute_s), 0);
    ck_assert_int_eq(NS(r.lost_compute_s), NS(2.15));
    ck_assert_int_eq(NS(r.per_worker[0].compute_time_s), NS(14.4));
    ck_assert_int_eq(NS(r.per_worker[1].compute_time_s), NS(10.45));
    ck_assert_int_eq(r.syncs, 6);
    ck_assert(r.recovery_bytes == 16e6);
    ck_assert(r.per_worker[0].bytes_sent == 32e6);
    ck_assert(r.per_worker[1].bytes_sent == 16e6);
    ck_assert(r.per_worker[1].bytes_received == 32e6);

    /* The rejoin: worker 1's first op after the failure is the forward of
     * layer 0 of step 11, at 12.0 s; the last op it finished before is
     * the parameter backward of layer 2 of step 7 (its 8th op), at 8.0 s. */
    int n;
    span_rec *c = compute_track(&sp, 1, &n);
    ck_assert_int_eq(n, 6 * 12 + 8 + 2 * 12);
    int k = 0;
    while (k < n && c[k].start < NS(8.05)) k++;
    ck_assert_int_eq(k, 6 * 12 + 8);
    ck_assert_int_eq(c[k - 1].end, NS(8.0));
    ck_assert_int_eq(c[k - 1].step, 7);
    ck_assert_str_eq(c[k].name, "forward");
    ck_assert_int_eq(c[k].layer, 0);
    ck_assert_int_eq(c[k].step, 11);
    ck_assert_int_eq(c[k].start, NS(12.0));
    free(c);
    /* one recovery span, on worker 1's communication track, at the repair */
    const span_rec *rec[4];
    ck_assert_int_eq(find_spans(&sp, 1, "recovery", rec, 4), 1);
    ck_assert_int_eq(find_spans(&sp, 0, "recovery", rec, 4), 0);
    find_spans(&sp, 1, "recovery", rec, 4);
    ck_assert_int_eq(rec[0]->track, 1);
    ck_assert_int_eq(rec[0]->layer, -1);
    ck_assert_int_eq(rec[0]->start, NS(10.0));
    ck_assert_int_eq(rec[0]->end, NS(10.0));
    spans_free(&sp);
}
END_TEST

/* Sequential layout, same failure: fragment 0 = {0,1}, fragment 1 =
 * {2,3}.  Worker 1 last contributed to fragment 0 with layer 0 of step 6
 * (7.2 s) and to fragment 1 with layer 2 of step 4 (3.6 + 0.8 = 4.4 s):
 * lost ((8.05 - 7.2) + (8.05 - 4.4)) / 2 = (0.85 + 3.65) / 2 = 2.25 s.
 * Everything else is as with strided. */
START_TEST(streaming_failure_lost_sequential) {
    trace_tmp t;
    trace_write(&t, "8.05 1 down\n10 1 up\n");
    run_result r =
        SIM(NULL, streaming4_inf, t.set, "method.layout=\"sequential\"");
    trace_remove(&t);
    ck_assert_int_eq(NS(r.per_worker[1].lost_compute_s), NS(2.25));
    ck_assert_int_eq(NS(r.per_worker[1].compute_time_s), NS(10.45));
    ck_assert_int_eq(NS(r.wall_time_s), NS(14.4));
}
END_TEST

/* The same failure with tau 1: fragment 0 is taken after steps 1, 5, 9
 * (applied after 2, 6, 10), fragment 1 after 3, 7, 11.  Repaired at 10 s,
 * worker 1 waits for the next fragment sync to complete: fragment 0's
 * taken after step 9, whose layer 0 ends step 9 at 10.8 s.  It rejoins at
 * the step after that sync's apply step, 9 + tau + 1 = 11, once the group
 * has finished step 10: worker 0 computes step 10 in [10.8, 12.0], and
 * worker 1 rejoins at 12.0 s, never ahead of it (the engine once rejoined
 * it at 10.8 s, tau steps ahead).  Both compute steps 11, 12 in
 * [12.0, 14.4].  Worker 1 computed 8.05 + 2.4 = 10.45 s.  Bytes a worker
 * in rings with both members: fragment syncs taken after 1, 3, 5, 11 (two
 * layers each) and layer 3 of the one taken after 7 (it arrived at 7.8 s,
 * before the failure; layer 1 at 8.2 s would have been after): 9 x 2e6 =
 * 18e6; worker 0 also sends the 16e6-byte download. */
START_TEST(streaming_failure_rejoin_with_tau) {
    trace_tmp t;
    trace_write(&t, "8.05 1 down\n10 1 up\n");
    spans sp = {0};
    run_result r = SIM(&sp, streaming4_inf, t.set, "method.tau=1");
    trace_remove(&t);
    ck_assert_int_eq(NS(r.wall_time_s), NS(14.4));
    ck_assert_int_eq(NS(r.per_worker[1].compute_time_s), NS(10.45));
    ck_assert_int_eq(r.syncs, 6);
    ck_assert(r.per_worker[1].bytes_sent == 18e6);
    ck_assert(r.per_worker[0].bytes_sent == 18e6 + 16e6);
    int n;
    span_rec *c = compute_track(&sp, 1, &n);
    ck_assert_int_eq(n, 6 * 12 + 8 + 2 * 12);
    ck_assert_int_eq(c[6 * 12 + 8].step, 11);
    ck_assert_int_eq(c[6 * 12 + 8].start, NS(12.0));
    ck_assert_int_eq(c[n - 1].end, NS(14.4));
    free(c);
    c = compute_track(&sp, 0, &n);
    int k = 0;
    while (k < n && c[k].start < NS(10.8)) k++;
    ck_assert_int_eq(c[k].step, 10);
    ck_assert_int_eq(c[k].start, NS(10.8));
    free(c);
    spans_free(&sp);
}
END_TEST

/* A sync timeout leaves the slow worker out: DiLoCo, H 2, 4 steps, 3
 * workers, one layer of 1e6 parameters in fp32 (S = 4e6 bytes), worker 2
 * at half speed (2 s steps), unbounded links, timeout 0.5 s.
 *   Workers 0, 1 end step 2 at 2.0 s and arrive; worker 2 is in step 2
 *   until 4.0 s: at 2.5 s it is left out, and the ring of {0, 1} runs at
 *   once (each sends and receives 2 x S/2 = S).  Steps 3, 4 of workers
 *   0, 1 [2.5, 4.5]; again left out at 5.0 s.  Worker 2 ends at 8.0 s.
 * Worker 2 merges both results: it receives each from worker 0, S per
 * sync.  Bytes: worker 0 sends 2S (rings) + 2S (to worker 2) = 16e6 and
 * receives 2S; worker 1 sends and receives 2S; worker 2 receives 2S and
 * sends nothing.  (The engine once charged worker 2 nothing.) */
static const char *diloco3_slow =
    "{\"model\": {\"params\": 1e6, \"layers\": 1, \"step_time_s\": 1},"
    " \"workers\": {\"count\": 3, \"speed\": [1, 1, 0.5]},"
    " \"network\": {\"bandwidth_gbps\": \"inf\"},"
    " \"method\": {\"name\": \"diloco\", \"H\": 2, \"codec\": \"fp32\"},"
    " \"steps\": 4}";

START_TEST(sync_timeout_left_out_worker_receives_the_result) {
    run_result r = SIM(NULL, diloco3_slow, "method.sync_timeout_s=0.5");
    ck_assert_int_eq(r.timeouts, 2);
    ck_assert_int_eq(r.syncs, 2);
    ck_assert_int_eq(r.wall_ns, NS(8.0));
    ck_assert(r.per_worker[0].bytes_sent == 16e6);
    ck_assert(r.per_worker[0].bytes_received == 8e6);
    ck_assert(r.per_worker[1].bytes_sent == 8e6);
    ck_assert(r.per_worker[1].bytes_received == 8e6);
    ck_assert(r.per_worker[2].bytes_sent == 0);
    ck_assert(r.per_worker[2].bytes_received == 8e6);
    ck_assert(r.bytes_sent_total == 24e6);
}
END_TEST

/* ---- 3. a failure during a running all-reduce ------------------------- */

/* DiLoCo, 3 workers, 1 layer of 3e6 parameters (fp32: S = 12e6 bytes),
 * 1 s steps, H 5, 10 steps; 0.32 Gbit/s = 4e7 B/s, 10 ms latency.
 * Ring among 3: 4 steps of 0.01 + 4e6/4e7 = 0.11 s; among 2: 2 steps of
 * 0.01 + 6e6/4e7 = 0.16 s.
 *   steps 1-5 [0, 5]; ring of 3 from 5.0: [5.00, 5.11] [5.11, 5.22], and
 *   its third step moves from 5.23 (after the latency) to 5.33.
 *   Worker 2 fails at 5.25 s: each of the three flows has moved
 *   0.02 x 4e7 = 8e5 bytes, so each worker has sent 2 x 4e6 + 8e5 =
 *   8.8e6 bytes.  The ring restarts among {0, 1}: [5.25, 5.41]
 *   [5.41, 5.57]: 2 x 6e6 bytes each.
 *   steps 6-10 [5.57, 10.57]; ring of 2 [10.57, 10.89]: 2 x 6e6 each.
 * wall 10.89 s; bytes 8.8e6 + 12e6 + 12e6 = 32.8e6 for workers 0 and 1,
 * 8.8e6 for worker 2.  (Its lost compute is defect_lost_dropped_allreduce,
 * below.) */
START_TEST(failure_during_allreduce_restarts_among_survivors) {
    trace_tmp t;
    trace_write(&t, "5.25 2 down\n");
    spans sp = {0};
    run_result r = SIM(&sp,
                       "{\"model\": {\"params\": 3e6, \"layers\": 1,"
                       " \"step_time_s\": 1}, \"workers\": {\"count\": 3},"
                       " \"network\": {\"bandwidth_gbps\": 0.32,"
                       " \"latency_ms\": 10}, \"method\": {\"name\":"
                       " \"diloco\", \"H\": 5, \"codec\": \"fp32\"},"
                       " \"steps\": 10}",
                       t.set);
    trace_remove(&t);
    ck_assert_int_eq(NS(r.wall_time_s), NS(10.89));
    ck_assert_int_eq(r.syncs, 2);
    ck_assert_int_eq(r.failures, 1);
    ck_assert(r.per_worker[0].bytes_sent == 32.8e6);
    ck_assert(r.per_worker[1].bytes_sent == 32.8e6);
    ck_assert(r.per_worker[2].bytes_sent == 8.8e6);
    ck_assert(r.bytes_sent_total == 74.4e6);
    ck_assert(r.per_worker[2].bytes_received == 8.8e6);
    ck_assert_int_eq(NS(r.per_worker[0].compute_time_s), NS(10));
    ck_assert_int_eq(NS(r.per_worker[2].compute_time_s), NS(5));
    ck_assert(r.recovery_bytes == 0);
    /* the interrupted reduction: one span per survivor, from its start to
     * the end of the restarted ring; none for the failed worker */
    for (int w = 0; w < 2; w++) {
        const span_rec *s = allreduce_span(&sp, w, 0, 5);
        ck_assert_int_eq(s->start, NS(5.0));
        ck_assert_int_eq(s->end, NS(5.57));
        s = allreduce_span(&sp, w, 0, 10);
        ck_assert_int_eq(s->start, NS(10.57));
        ck_assert_int_eq(s->end, NS(10.89));
    }
    const span_rec *none[1];
    ck_assert_int_eq(find_spans(&sp, 2, "allreduce", none, 1), 0);
    spans_free(&sp);
}
END_TEST

/* ---- 4. a recovery download at finite bandwidth ----------------------- */

/* DiLoCo, 2 workers, 1 layer of 1e6 parameters (fp32: S = 4e6 bytes), 1 s
 * steps, H 5, 20 steps; 0.16 Gbit/s = 2e7 B/s, 30 ms latency: a ring is
 * 2 (0.03 + 2e6/2e7) = 0.26 s.  Worker 1 fails at 6.5 s and is repaired at
 * 10.2 s; it downloads params x recovery_bytes_per_param bytes from
 * worker 0, taking latency + bytes x 8 / bandwidth.
 *   steps 1-5 [0, 5], ring [5, 5.26]; worker 1 fails 0.24 s into step 7
 *   (busy 6.24 s, lost 6.24 - 5 = 1.24 s).  Worker 0 alone: steps 6-10
 *   [5.26, 10.26], its sync after step 10 is immediate (a group of one).
 * (a) 2 bytes a parameter: 2e6 bytes, 0.03 + 0.1 = 0.13 s, done at
 *     10.33 s, after the sync at 10.26: worker 1 waits for the next one,
 *     after step 15 at 15.26 s (immediate again), and rejoins at step 16.
 *     Steps 16-20 [15.26, 20.26], ring [20.26, 20.52]: wall 20.52 s;
 *     worker 1 computed 6.24 + 5 = 11.24 s.
 * (b) 0.5 bytes a parameter: 5e5 bytes, 0.03 + 0.025 = 0.055 s, done at
 *     10.255 s, before the sync at 10.26: it rejoins at step 11.  Steps
 *     11-15 [10.26, 15.26], ring [15.26, 15.52], steps 16-20
 *     [15.52, 20.52], ring [20.52, 20.78]: wall 20.78 s; worker 1
 *     computed 6.24 + 10 = 16.24 s.
 * So the 0.13 s download costs worker 1 a whole outer period (5 s of
 * compute) and the group its 0.26 s ring. */
static const char *diloco_recovery =
    "{\"model\": {\"params\": 1e6, \"layers\": 1, \"step_time_s\": 1},"
    " \"workers\": {\"count\": 2},"
    " \"network\": {\"bandwidth_gbps\": 0.16, \"latency_ms\": 30},"
    " \"method\": {\"name\": \"diloco\", \"H\": 5, \"codec\": \"fp32\"},"
    " \"steps\": 20}";

START_TEST(recovery_download_finite_bandwidth) {
    trace_tmp t;
    trace_write(&t, "6.5 1 down\n10.2 1 up\n");
    spans sp = {0};
    run_result a =
        SIM(&sp, diloco_recovery, t.set, "faults.recovery_bytes_per_param=2");
    const span_rec *rec[2];
    ck_assert_int_eq(find_spans(&sp, 1, "recovery", rec, 2), 1);
    ck_assert_int_eq(rec[0]->start, NS(10.2));
    ck_assert_int_eq(rec[0]->end - rec[0]->start, NS(0.03 + 2e6 * 8 / 0.16e9));
    ck_assert(a.recovery_bytes == 2e6);
    ck_assert(a.per_worker[0].bytes_sent == 2 * 4e6 + 2e6);
    ck_assert(a.per_worker[1].bytes_sent == 2 * 4e6);
    ck_assert(a.per_worker[1].bytes_received == 2 * 4e6 + 2e6);
    ck_assert_int_eq(NS(a.wall_time_s), NS(20.52));
    ck_assert_int_eq(NS(a.per_worker[1].compute_time_s), NS(11.24));
    ck_assert_int_eq(NS(a.per_worker[1].lost_compute_s), NS(1.24));
    ck_assert_int_eq(a.syncs, 4);
    int n;
    span_rec *c = compute_track(&sp, 1, &n);
    int k = 0;
    while (k < n && c[k].start < NS(10.2)) k++;
    ck_assert_int_lt(k, n);
    ck_assert_int_eq(c[k].step, 16);
    ck_assert_int_eq(c[k].start, NS(15.26));
    free(c);
    spans_free(&sp);

    run_result b =
        SIM(&sp, diloco_recovery, t.set, "faults.recovery_bytes_per_param=0.5");
    ck_assert_int_eq(find_spans(&sp, 1, "recovery", rec, 2), 1);
    ck_assert_int_eq(rec[0]->end - rec[0]->start, NS(0.03 + 5e5 * 8 / 0.16e9));
    ck_assert(b.recovery_bytes == 5e5);
    ck_assert(b.per_worker[0].bytes_sent == 3 * 4e6 + 5e5);
    ck_assert_int_eq(NS(b.wall_time_s), NS(20.78));
    ck_assert_int_eq(NS(b.per_worker[1].compute_time_s), NS(16.24));
    ck_assert_int_eq(b.syncs, 4);
    c = compute_track(&sp, 1, &n);
    k = 0;
    while (k < n && c[k].start < NS(10.2)) k++;
    ck_assert_int_lt(k, n);
    ck_assert_int_eq(c[k].step, 11);
    ck_assert_int_eq(c[k].start, NS(10.26));
    free(c);
    spans_free(&sp);
    trace_remove(&t);
}
END_TEST

/* A download that shares worker 0's up link with a running ring.  DiLoCo,
 * 3 workers, 1 layer of 1.2e6 parameters (fp32: S = 4.8e6 bytes), 1 s
 * steps, H 5, 10 steps, 0.32 Gbit/s = 4e7 B/s, no latency; 3 bytes a
 * parameter to download (3.6e6).  Worker 2 fails at 0.5 s (lost 0.5 s)
 * and is repaired at 5.0 s, the instant the ring among {0, 1} starts
 * (failures and repairs run before compute completions: the download is
 * first).  Max-min sharing: worker 0's up link carries the download D and
 * the ring flow 0->1 at 2e7 each; 1->0 runs alone at 4e7.
 *   ring step 1: 1->0 moves 2.4e6 in [5.00, 5.06]; 0->1 in [5.00, 5.12]
 *                at 2e7; D moves 2.4e6 by 5.12
 *   ring step 2: 1->0 in [5.12, 5.18]; D's last 1.2e6 at 2e7 ends at 5.18;
 *                0->1 moves 1.2e6 at 2e7 to 5.18, then alone at 4e7 its
 *                last 1.2e6 in 0.03 s: the ring ends at 5.21
 * Alone, the ring would take 2 x 0.06 = 0.12 s and D 0.09 s; shared, 0.21
 * and 0.18.  D ends before the sync, so worker 2 rejoins at 5.21 for
 * step 6; steps 6-10 [5.21, 10.21]; ring of 3, 4 x 1.6e6/4e7:
 * [10.21, 10.37].  Bytes sent: worker 0 2 x 2.4e6 + 3.6e6 + 4 x 1.6e6 =
 * 14.8e6, worker 1 4.8e6 + 6.4e6 = 11.2e6, worker 2 6.4e6 (and it
 * receives 3.6e6 + 6.4e6). */
START_TEST(recovery_download_shares_link_with_ring) {
    trace_tmp t;
    trace_write(&t, "0.5 2 down\n5 2 up\n");
    spans sp = {0};
    run_result r = SIM(&sp,
                       "{\"model\": {\"params\": 1.2e6, \"layers\": 1,"
                       " \"step_time_s\": 1}, \"workers\": {\"count\": 3},"
                       " \"network\": {\"bandwidth_gbps\": 0.32},"
                       " \"method\": {\"name\": \"diloco\", \"H\": 5,"
                       " \"codec\": \"fp32\"}, \"faults\":"
                       " {\"recovery_bytes_per_param\": 3}, \"steps\": 10}",
                       t.set);
    trace_remove(&t);
    const span_rec *rec[2];
    ck_assert_int_eq(find_spans(&sp, 2, "recovery", rec, 2), 1);
    ck_assert_int_eq(rec[0]->start, NS(5.0));
    ck_assert_int_eq(rec[0]->end, NS(5.18));
    for (int w = 0; w < 2; w++) {
        const span_rec *s = allreduce_span(&sp, w, 0, 5);
        ck_assert_int_eq(s->start, NS(5.0));
        ck_assert_int_eq(s->end, NS(5.21));
    }
    for (int w = 0; w < 3; w++) {
        const span_rec *s = allreduce_span(&sp, w, 0, 10);
        ck_assert_int_eq(s->start, NS(10.21));
        ck_assert_int_eq(s->end, NS(10.37));
    }
    ck_assert_int_eq(NS(r.wall_time_s), NS(10.37));
    ck_assert(r.recovery_bytes == 3.6e6);
    ck_assert(r.per_worker[0].bytes_sent == 14.8e6);
    ck_assert(r.per_worker[1].bytes_sent == 11.2e6);
    ck_assert(r.per_worker[2].bytes_sent == 6.4e6);
    ck_assert(r.per_worker[2].bytes_received == 10e6);
    ck_assert_int_eq(NS(r.per_worker[2].compute_time_s), NS(5.5));
    ck_assert_int_eq(NS(r.per_worker[2].lost_compute_s), NS(0.5));
    ck_assert_double_eq_tol(r.peak_link_gbps, 0.32, 1e-12);
    spans_free(&sp);
}
END_TEST

/* ---- 5. split, backward order, layout, order -------------------------- */

/* DP, 2 workers, 2 layers of 1e6 parameters (bf16: 2e6 bytes a layer),
 * 1 s steps, 10 steps, 0.032 Gbit/s = 4e6 B/s, no latency: a layer's ring
 * is 2 x 1e6/4e6 = R = 0.5 s.  With split (f, a, p) and activations first
 * a step is: forward L0, L1 (f/2 each), then a/2, p/2 for L1, then for L0.
 * L1's ring is ready at 1 - (a+p)/2 and L0's at 1; the stream sends L1
 * then L0, which ends at 1 - (a+p)/2 + 2R (R >= (a+p)/2), and gates the
 * next step's forward of L0.  So the step period is 1 - (a+p)/2 + 2R:
 *   split (0.5, 0.25, 0.25): 1.75 s, wall 17.5 s
 *   split (0.2, 0.4, 0.4):   1.60 s, wall 16.0 s
 * With parameters first the halves swap: L1's ring is ready at f + p/2,
 * earlier by L1's activation backward a/2, L0's at 1 - a/2; the period is
 * f + p/2 + 2R:
 *   split (0.5, 0.25, 0.25): 1.625 s, wall 16.25 s. */
static const char *dp2 =
    "{\"model\": {\"params\": 2e6, \"layers\": 2, \"step_time_s\": 1},"
    " \"workers\": {\"count\": 2},"
    " \"network\": {\"bandwidth_gbps\": 0.032},"
    " \"method\": {\"name\": \"dp\"}, \"steps\": 10}";

START_TEST(split_changes_overlap) {
    run_result a = SIM(NULL, dp2,
                       "model.split={\"forward\": 0.5, "
                       "\"backward_activations\": 0.25, "
                       "\"backward_parameters\": 0.25}");
    run_result b = SIM(NULL, dp2,
                       "model.split={\"forward\": 0.2, "
                       "\"backward_activations\": 0.4, "
                       "\"backward_parameters\": 0.4}");
    ck_assert_int_eq(NS(a.wall_time_s), NS(10 * 1.75));
    ck_assert_int_eq(NS(b.wall_time_s), NS(10 * 1.6));
    ck_assert_int_eq(a.syncs, 10);
    ck_assert(a.bytes_sent_total == b.bytes_sent_total);
    ck_assert(a.bytes_sent_total == 2 * 10 * 2 * 2e6);
}
END_TEST

START_TEST(parameters_first_starts_reduction_earlier) {
    const char *split = "model.split={\"forward\": 0.5, "
                        "\"backward_activations\": 0.25, "
                        "\"backward_parameters\": 0.25}";
    spans sa = {0}, sp = {0};
    run_result act =
        SIM(&sa, dp2, split, "model.backward_order=\"activations_first\"");
    run_result par =
        SIM(&sp, dp2, split, "model.backward_order=\"parameters_first\"");
    ck_assert_int_eq(NS(act.wall_time_s), NS(17.5));
    ck_assert_int_eq(NS(par.wall_time_s), NS(16.25));
    /* step 1: layer 1's ring [0.75, 1.25] against [0.625, 1.125], layer
     * 0's [1.25, 1.75] against [1.125, 1.625] */
    for (int w = 0; w < 2; w++) {
        ck_assert_int_eq(allreduce_span(&sa, w, 1, 1)->start, NS(0.75));
        ck_assert_int_eq(allreduce_span(&sp, w, 1, 1)->start, NS(0.625));
        ck_assert_int_eq(allreduce_span(&sa, w, 0, 1)->end, NS(1.75));
        ck_assert_int_eq(allreduce_span(&sp, w, 0, 1)->end, NS(1.625));
    }
    spans_free(&sa);
    spans_free(&sp);
    /* the gain per step is the activation backward of one layer, a/2 */
    ck_assert_int_eq(NS(act.wall_time_s) - NS(par.wall_time_s),
                     10 * NS(0.25 / 2));
    ck_assert_int_eq(NS(par.compute_time_s), NS(2 * 10.0));
}
END_TEST

/* DP gradient buckets, 2 layers of 2e6 bytes (bf16), a 1.2 s step (every
 * op 0.2 s), 4e6 B/s links, one-way latency lam.  A ring step of a layer
 * is lam + 1e6/4e6 = lam + 0.25 s; of the whole-model bucket lam + 0.5.
 *   per layer: L1 ready at 0.8, [0.8, 0.8 + 2(lam + 0.25)], L0 (ready at
 *              1.2) after it: period 0.8 + 4(lam + 0.25) = 1.8 + 4 lam
 *   one bucket: ready at 1.2 (L0's gradient), period 1.2 + 2(lam + 0.5)
 *              = 2.2 + 2 lam
 * lam 0: 18 s against 22 s; lam 0.5: 38 s against 32 s.  Same bytes. */
static const char *dp_1200ms =
    "{\"model\": {\"params\": 2e6, \"layers\": 2,"
    " \"step_time_s\": 1.2}, \"workers\": {\"count\": 2},"
    " \"network\": {\"bandwidth_gbps\": 0.032},"
    " \"method\": {\"name\": \"dp\"}, \"steps\": 10}";

START_TEST(dp_buckets_by_hand) {
    const char *dp = dp_1200ms;
    for (int k = 0; k < 2; k++) {
        double lam = 0.5 * k;
        char l[64];
        snprintf(l, sizeof l, "network.latency_ms=%g", lam * 1e3);
        run_result layer = SIM(NULL, dp, l);
        run_result one = SIM(NULL, dp, l, "method.dp_bucket_mb=4");
        run_result small = SIM(NULL, dp, l, "method.dp_bucket_mb=1");
        ck_assert_int_eq(NS(layer.wall_time_s), NS(10 * (1.8 + 4 * lam)));
        ck_assert_int_eq(NS(one.wall_time_s), NS(10 * (2.2 + 2 * lam)));
        /* a bucket of at most one layer's bytes is the per-layer case */
        ck_assert_int_eq(NS(small.wall_time_s), NS(layer.wall_time_s));
        ck_assert(one.bytes_sent_total == layer.bytes_sent_total);
        ck_assert_int_eq(one.syncs, layer.syncs);
    }
}
END_TEST

/* Streaming buckets (method.bucket_mb), the world of section 1: a bucket
 * of 8e6 bytes holds both layers of a fragment, one ring of
 * 2 (0.06 + 4e6/5e6) = 1.72 s, ready when the fragment's lowest layer is
 * (L0 at a step's end, L1 1.0 s into the step):
 *   step 1  [0, 1.2]        F0 ring [1.2, 2.92]
 *   step 3  waits for F0: [2.92, 4.12]      F1 ring [3.92, 5.64]
 *   step 5  [5.32, ...]: forward L1 waits 5.42 -> 5.64, ends 6.74
 *                           F0 ring [6.74, 8.46]
 *   step 7  waits for F0: [8.46, 9.66]      F1 ring [9.46, 11.18]
 * wall 11.18 s against 10.12 s layer by layer (a bucket waits for its
 * last layer); the same bytes and syncs.  A bucket of one layer's size
 * (4 MB) is the per-layer case. */
START_TEST(streaming_buckets_by_hand) {
    run_result layer = SIM(NULL, streaming4, "seed=1");
    run_result one = SIM(NULL, streaming4, "method.bucket_mb=8");
    run_result small = SIM(NULL, streaming4, "method.bucket_mb=4");
    ck_assert_int_eq(NS(layer.wall_time_s), NS(10.12));
    ck_assert_int_eq(NS(one.wall_time_s), NS(11.18));
    ck_assert_int_eq(NS(small.wall_time_s), NS(10.12));
    ck_assert(one.bytes_sent_total == layer.bytes_sent_total &&
              one.per_worker[0].bytes_sent == 32000000);
    ck_assert_int_eq(one.syncs, 4);
    ck_assert_int_eq(one.compute_ns, layer.compute_ns);
}
END_TEST

/* The payload efficiency e: every transfer of the per-layer world above
 * takes 1/e as long, latency not: at e 0.5 a ring step of a layer is
 * lam + 0.5 s and the period 0.8 + 4(lam + 0.5) = 2.8 + 4 lam.  The
 * bytes do not change (they are the payload's). */
START_TEST(efficiency_scales_transfers) {
    const char *lam = "network.latency_ms=100";
    run_result full = SIM(NULL, dp_1200ms, lam, "network.efficiency=1");
    run_result half = SIM(NULL, dp_1200ms, lam, "network.efficiency=0.5");
    ck_assert_int_eq(NS(full.wall_time_s), NS(10 * (1.8 + 0.4)));
    ck_assert_int_eq(NS(half.wall_time_s), NS(10 * (2.8 + 0.4)));
    ck_assert(half.bytes_sent_total == full.bytes_sent_total);
}
END_TEST

/* Four sites with a latency matrix: neighbours 0-1, 1-2, 2-3, 3-0 are 10
 * ms apart, the diagonals 0-2 and 1-3 50 ms.  DP, one layer, unbounded
 * links: each of the ring's 2(M-1) = 6 steps lasts its slowest pair's
 * latency.  Ring order 0 1 2 3 crosses only 10 ms pairs: a step 1.2 +
 * 6 x 0.01 = 1.26 s; order 0 2 1 3 crosses both diagonals: 1.2 + 6 x
 * 0.05 = 1.5 s. */
START_TEST(latency_matrix_and_ring_order) {
    static const char *dp =
        "{\"model\": {\"params\": 1e6, \"layers\": 1,"
        " \"step_time_s\": 1.2}, \"workers\": {\"count\": 4},"
        " \"network\": {\"bandwidth_gbps\": \"inf\", \"latency_matrix_ms\":"
        " [[0, 10, 50, 10], [10, 0, 10, 50], [50, 10, 0, 10], [10, 50, 10, "
        "0]]},"
        " \"method\": {\"name\": \"dp\"}, \"steps\": 10}";
    run_result near = SIM(NULL, dp, "network.ring_order=[0, 1, 2, 3]");
    run_result far = SIM(NULL, dp, "network.ring_order=[0, 2, 1, 3]");
    run_result dflt = SIM(NULL, dp, "steps=10");
    ck_assert_int_eq(NS(near.wall_time_s), NS(10 * 1.26));
    ck_assert_int_eq(NS(far.wall_time_s), NS(10 * 1.5));
    ck_assert_int_eq(NS(dflt.wall_time_s), NS(near.wall_time_s));
}
END_TEST

/* One far site, with per-member completion (network.completion member).
 * Streaming, P 1, H 4, one layer, 1.2 s steps, unbounded links, a star
 * with its hub at worker 0, latencies lat(0,1) 0.5 s, lat(0,2) = lat(1,2)
 * 2.5 s: a star all-reduce gives worker 0 its result 2.5 s after it
 * starts (its gather), worker 1 3.0 s (the broadcast to it), worker 2
 * 5.0 s, when it ends.  Payloads are taken after step 3 (the least tau,
 * 1), ready at 3.6: the all-reduce [3.6, 8.6]; with steps 8 the second
 * sync is taken after step 7.
 *   tau (1, 1, 3), member: workers 0 and 1 begin step 5 when they have the
 *     result, at 6.1 and 6.6, and end step 7 at 9.7 and 10.2; worker 2
 *     waits only at step 7 (8.6, [8.6, 9.8]): the second all-reduce runs
 *     [10.2, 15.2], wall 15.2 s.
 *   tau (1, 1, 1), member: worker 2 waits at step 5 until 8.6, ends step 7
 *     at 12.2: [12.2, 17.2], wall 17.2 s.
 *   group completion: workers 0 and 1 wait until 8.6 whatever worker 2's
 *     tau, and end step 7 at 12.2: wall 17.2 s.
 * So the far site's larger tau buys 2 s only when the others may go on
 * as soon as they have their own result. */
START_TEST(far_site_member_completion) {
    static const char *far =
        "{\"model\": {\"params\": 1e6, \"layers\": 1,"
        " \"step_time_s\": 1.2}, \"workers\": {\"count\": 3},"
        " \"network\": {\"bandwidth_gbps\": \"inf\", \"collective\": \"star\","
        " \"latency_matrix_ms\": [[0, 500, 2500], [500, 0, 2500], [2500, 2500, "
        "0]]},"
        " \"method\": {\"name\": \"streaming\", \"H\": 4, \"fragments\": 1},"
        " \"steps\": 8}";
    const struct {
        const char *completion, *tau;
        double wall;
    } cases[] = {
        {"network.completion=\"member\"", "method.tau=[1, 1, 3]", 15.2},
        {"network.completion=\"member\"", "method.tau=[1, 1, 1]", 17.2},
        {"network.completion=\"group\"", "method.tau=[1, 1, 3]", 17.2},
        {"network.completion=\"group\"", "method.tau=[1, 1, 1]", 17.2}};
    for (int k = 0; k < 4; k++) {
        spans sp = {0};
        run_result r = SIM(&sp, far, cases[k].completion, cases[k].tau);
        ck_assert_msg(NS(r.wall_time_s) == NS(cases[k].wall),
                      "%s %s: wall %.9f", cases[k].completion, cases[k].tau,
                      r.wall_time_s);
        ck_assert_int_eq(NS(r.compute_time_s), NS(3 * 8 * 1.2));
        if (k == 0) { /* each worker's all-reduce span ends when it has it */
            ck_assert_int_eq(allreduce_span(&sp, 0, 0, 3)->end, NS(6.1));
            ck_assert_int_eq(allreduce_span(&sp, 1, 0, 3)->end, NS(6.6));
            ck_assert_int_eq(allreduce_span(&sp, 2, 0, 3)->end, NS(8.6));
            ck_assert_int_eq(allreduce_span(&sp, 1, 0, 7)->start, NS(10.2));
        }
        spans_free(&sp);
    }
}
END_TEST

/* Outer state offloaded to the host (method.offload_outer): DiLoCo, 2
 * workers, 1 layer, H 3, 1.2 s steps (three 0.4 s ops), unbounded WAN,
 * 1e6 parameters: 8e6 bytes of outer parameters and momentum, copied at
 * 4e6 B/s (0.032 Gbit/s) in 2 s each way.
 *   step 3 begins at 2.4: copy-in [2.4, 4.4]; its parameter backward ends
 *          at 3.6 and waits for it: the sync is at 4.4, copy-out [4.4, 6.4]
 *   steps 4, 5 [4.4, 6.8]; step 6 begins at 6.8: copy-in [6.8, 8.8], its
 *          backward ends at 8.0 and waits: the last sync at 8.8
 * wall 8.8 s against 7.2 s without offload; one fragment on the
 * accelerator at a time: 8e6 bytes at most.  A host link 100x faster
 * hides the copies (each 0.02 s, inside the step): 7.2 s. */
START_TEST(offload_outer_by_hand) {
    static const char *dl =
        "{\"model\": {\"params\": 1e6, \"layers\": 1,"
        " \"step_time_s\": 1.2, \"host_gbps\": 0.032},"
        " \"workers\": {\"count\": 2}, \"network\": {\"bandwidth_gbps\": "
        "\"inf\"},"
        " \"method\": {\"name\": \"diloco\", \"H\": 3}, \"steps\": 6}";
    run_result off = SIM(NULL, dl, "method.offload_outer=true");
    run_result on = SIM(NULL, dl, "method.offload_outer=false");
    run_result fast =
        SIM(NULL, dl, "method.offload_outer=true", "model.host_gbps=3.2");
    ck_assert_int_eq(NS(off.wall_time_s), NS(8.8));
    ck_assert_int_eq(NS(on.wall_time_s), NS(7.2));
    ck_assert_int_eq(NS(fast.wall_time_s), NS(7.2));
    ck_assert_int_eq(NS(off.compute_time_s), NS(2 * 7.2));
    for (int w = 0; w < 2; w++) {
        ck_assert(off.per_worker[w].outer_device_peak_bytes == 8000000);
        ck_assert(on.per_worker[w].outer_device_peak_bytes == 0);
    }
}
END_TEST

/* The world of test 1 with sequential fragments, F0 = {0,1}, F1 = {2,3}:
 *   step 1 [0, 1.2]         take F0: L1 ready 1.0  -> [1.0, 1.92]
 *                                    L0 ready 1.2  -> [1.92, 2.84]
 *   step 2 [1.2, 2.4]
 *   step 3 waits until 2.84 (stall 0.44): [2.84, 4.04]
 *                           take F1: L3 ready 3.44 -> [3.44, 4.36]
 *                                    L2 ready 3.64 -> [4.36, 5.28]
 *   step 4 [4.04, 5.24]
 *   step 5 [5.24, 6.44]     (forward L2 at 5.44, its ring ended 5.28)
 *                           take F0: L1 ready 6.24 -> [6.24, 7.16]
 *                                    L0 ready 6.44 -> [7.16, 8.08]
 *   step 6 [6.44, 7.64]
 *   step 7 waits until 8.08 (stall 0.44): [8.08, 9.28]
 *                           take F1: L3 ready 8.68 -> [8.68, 9.60]
 *                                    L2 ready 8.88 -> [9.60, 10.52]
 *   step 8 [9.28, 10.48]
 * wall 10.52 s against strided's 10.12: F0's first layer is ready 0.2 s
 * later (layer 1 at +1.0 instead of layer 2 at +0.8), twice. */
START_TEST(layout_sequential_vs_strided) {
    run_result st = SIM(NULL, streaming4, "method.layout=\"strided\"");
    run_result sq = SIM(NULL, streaming4, "method.layout=\"sequential\"");
    ck_assert_int_eq(NS(st.wall_time_s), NS(10.12));
    ck_assert_int_eq(NS(sq.wall_time_s), NS(10.52));
    ck_assert(sq.bytes_sent_total == st.bytes_sent_total);
    ck_assert_int_eq(sq.syncs, 4);
}
END_TEST

/* The world of test 1 with the rotated order: fragment 1 ({1,3}) syncs
 * first (taken after steps 1, 5), fragment 0 ({0,2}) second (3, 7):
 *   step 1 [0, 1.2]         take F1: L3 ready 0.6  -> [0.6, 1.52]
 *                                    L1 ready 1.0  -> [1.52, 2.44]
 *   step 2 [1.2, 2.4]
 *   step 3 [2.4, 3.6]       (forward L1 at 2.5, its ring ended 2.44)
 *                           take F0: L2 ready 3.2  -> [3.2, 4.12]
 *                                    L0 ready 3.6  -> [4.12, 5.04]
 *   step 4 [3.6, 4.8]
 *   step 5 waits until 5.04 (stall 0.24): [5.04, 6.24]
 *                           take F1: L3 ready 5.64 -> [5.64, 6.56]
 *                                    L1 ready 6.04 -> [6.56, 7.48]
 *   step 6 [6.24, 7.44]
 *   step 7 [7.44, 8.64]     (forward L1 at 7.54, its ring ended 7.48)
 *                           take F0: L2 ready 8.24 -> [8.24, 9.16]
 *                                    L0 ready 8.64 -> [9.16, 10.08]
 *   step 8 [8.64, 9.84]
 * wall 10.08 s against ascending's 10.12: one stall before the end
 * instead of two, and the last ring 0.24 s after the last step. */
START_TEST(order_rotated_vs_ascending) {
    spans sp = {0};
    run_result asc = SIM(NULL, streaming4, "method.order=\"ascending\"");
    run_result rot = SIM(&sp, streaming4, "method.order=\"rotated\"");
    ck_assert_int_eq(NS(asc.wall_time_s), NS(10.12));
    ck_assert_int_eq(NS(rot.wall_time_s), NS(10.08));
    ck_assert_int_eq(rot.syncs, 4);
    ck_assert(rot.bytes_sent_total == asc.bytes_sent_total);
    const span_rec *s = allreduce_span(&sp, 0, 1, 1);
    ck_assert_int_eq(s->start, NS(1.52));
    ck_assert_int_eq(s->end, NS(2.44));
    s = allreduce_span(&sp, 1, 0, 7);
    ck_assert_int_eq(s->start, NS(9.16));
    ck_assert_int_eq(s->end, NS(10.08));
    spans_free(&sp);
}
END_TEST

/* ---- 6. what the timeline holds --------------------------------------- */

/* Test 1's run: 8 steps x 3 ops x 4 layers x 2 workers compute spans; one
 * worker's compute spans never overlap and add up to its compute time;
 * the only gaps are the two stalls of the derivation (before steps 3 and
 * 7, 0.24 s each); every op of every step appears once; and there is one
 * allreduce span per worker for each (layer, take step) of the schedule:
 * layers 0 and 2 after steps 1 and 5, layers 1 and 3 after 3 and 7. */
START_TEST(trace_spans_tile_compute) {
    spans sp = {0};
    run_result r = SIM(&sp, streaming4, "seed=1");
    int ncompute = 0, nreduce = 0, nother = 0;
    for (int i = 0; i < sp.n; i++) {
        const span_rec *s = &sp.v[i];
        ck_assert_int_le(s->start, s->end);
        if (is_compute_op(s)) {
            ncompute++;
        } else if (strcmp(s->name, "allreduce") == 0) {
            nreduce++;
            ck_assert_int_eq(s->track, 1);
            int frag0 = s->layer % 2 == 0;
            ck_assert(frag0 ? (s->step == 1 || s->step == 5)
                            : (s->step == 3 || s->step == 7));
        } else {
            nother++;
        }
    }
    ck_assert_int_eq(ncompute, 8 * 3 * 4 * 2);
    ck_assert_int_eq(nreduce, 8 * 2);
    ck_assert_int_eq(nother, 0);
    for (int w = 0; w < 2; w++) {
        int n;
        span_rec *c = compute_track(&sp, w, &n);
        ck_assert_int_eq(n, 96);
        int64_t busy = 0, gaps = 0;
        int seen[9][3][4] = {{{0}}};
        for (int i = 0; i < n; i++) {
            busy += c[i].end - c[i].start;
            if (i > 0) {
                ck_assert_int_ge(c[i].start, c[i - 1].end); /* no overlap */
                int64_t gap = c[i].start - c[i - 1].end;
                if (gap) {
                    /* a stall: before the forward of layer 0 of step 3 or 7 */
                    ck_assert_str_eq(c[i].name, "forward");
                    ck_assert_int_eq(c[i].layer, 0);
                    ck_assert(c[i].step == 3 || c[i].step == 7);
                    ck_assert_int_eq(gap, NS(0.24));
                }
                gaps += gap;
            }
            int kind = strcmp(c[i].name, "forward") == 0        ? 0
                       : strcmp(c[i].name, "backward_act") == 0 ? 1
                                                                : 2;
            ck_assert(c[i].step >= 1 && c[i].step <= 8);
            ck_assert(c[i].layer >= 0 && c[i].layer < 4);
            seen[c[i].step][kind][c[i].layer]++;
        }
        for (int t = 1; t <= 8; t++)
            for (int k = 0; k < 3; k++)
                for (int l = 0; l < 4; l++) ck_assert_int_eq(seen[t][k][l], 1);
        ck_assert_int_eq(busy, NS(r.per_worker[w].compute_time_s));
        ck_assert_int_eq(gaps, NS(2 * 0.24));
        ck_assert_int_eq(c[0].start, 0);
        ck_assert_int_eq(c[n - 1].end, NS(10.08));
        free(c);
    }
    spans_free(&sp);
}
END_TEST

/* ---- defects found by these derivations ------------------------------- *
 *
 * Each of these failed on the engine before it was fixed; the comments
 * keep the derivation and say what the engine did wrong. */

/* DEFECT (fixed): a failed worker's lost compute is counted from its last
 * *arrival* at a reduction, not from its last contribution that reached a
 * sync.  run.c's arrive() sets contrib[fragment] = busy when the worker
 * arrives; when the worker then fails, the running all-reduce restarts
 * among the survivors (or a collecting one goes on without it), so what it
 * computed since its previous sync never reaches the outer parameters, yet
 * on_fail() counts only busy - contrib.
 * Test 3's world: worker 2 arrived for the outer step after step 5 at
 * 5.0 s and failed at 5.25 s during its ring, which restarted among {0, 1}:
 * none of its 5 s of compute reached an outer step, so it lost 5 s.
 * Expected lost_compute_s 5; the engine gave 0. */
START_TEST(defect_lost_dropped_allreduce) {
    trace_tmp t;
    trace_write(&t, "5.25 2 down\n");
    run_result r = SIM(NULL,
                       "{\"model\": {\"params\": 3e6, \"layers\": 1,"
                       " \"step_time_s\": 1}, \"workers\": {\"count\": 3},"
                       " \"network\": {\"bandwidth_gbps\": 0.32,"
                       " \"latency_ms\": 10}, \"method\": {\"name\":"
                       " \"diloco\", \"H\": 5, \"codec\": \"fp32\"},"
                       " \"steps\": 10}",
                       t.set);
    trace_remove(&t);
    ck_assert_int_eq(NS(r.per_worker[2].lost_compute_s), NS(5.0));
    ck_assert_int_eq(r.per_worker[2].useful_ns, 0);
}
END_TEST

/* DEFECT (fixed): the same with a fragment of several layers.  Test 2's world
 * (tau 0, strided, unbounded links); worker 1 fails at 6.85 s, in step 6
 * after the parameter backward of layer 2 (6.8 s) and before that of
 * layer 0 (7.2 s): fragment 0's sync taken after step 6 reduces layer 2
 * with it and layer 0 without it, so its fragment-0 work since the sync
 * taken after step 2 (layer 0 at 2.4 s) is lost, and its fragment-1 work
 * since the sync taken after step 4 (layer 1 at 4.6 s):
 *     ((6.85 - 2.4) + (6.85 - 4.6)) / 2 = (4.45 + 2.25) / 2 = 3.35 s.
 * The engine counts fragment 0 from the layer-2 arrival at 6.8 s and
 * gives (0.05 + 2.25) / 2 = 1.15 s. */
START_TEST(defect_lost_partial_fragment) {
    trace_tmp t;
    trace_write(&t, "6.85 1 down\n");
    run_result r = SIM(NULL, streaming4_inf, t.set);
    trace_remove(&t);
    ck_assert_int_eq(NS(r.per_worker[1].lost_compute_s), NS(3.35));
}
END_TEST

/* DEFECT (fixed): DP takes its checkpoint when a step's compute ends, before
 * the step's gradient all-reduce has completed (run.c: dp_checkpoint() is
 * called from on_op_done() at the last op of the step).  A failure during
 * that all-reduce then rolls back to a checkpoint of a step whose update
 * never happened, and the step's gradient exchange silently vanishes.
 * DP, 2 workers, 1 layer of 1e6 parameters (bf16: 2e6 bytes), 1 s steps,
 * 4 steps, checkpoint every 2 steps, 0.16 Gbit/s = 2e7 B/s: a ring is
 * 2 x 1e6/2e7 = 0.1 s.  Step 1 [0, 1], ring [1, 1.1]; step 2 [1.1, 2.1],
 * ring from 2.1.  Worker 1 fails at 2.17 s, inside that ring: step 2 has
 * not completed, so the last checkpoint is the start, and both workers
 * lose steps 1 and 2 (2 s each).  Repaired at 3 s, worker 1 downloads
 * 4e6 bytes in 0.2 s; from 3.2 s the four steps take 4 x 1.1 s: wall
 * 7.6 s.  The engine resumes at step 3 with nothing lost: wall 5.4 s,
 * lost 0, and 3 completed syncs for 4 steps. */
START_TEST(defect_dp_checkpoint_before_allreduce) {
    trace_tmp t;
    trace_write(&t, "2.17 1 down\n3 1 up\n");
    run_result r = SIM(NULL,
                       "{\"model\": {\"params\": 1e6, \"layers\": 1,"
                       " \"step_time_s\": 1}, \"workers\": {\"count\": 2},"
                       " \"network\": {\"bandwidth_gbps\": 0.16},"
                       " \"method\": {\"name\": \"dp\"}, \"faults\":"
                       " {\"checkpoint_steps\": 2}, \"steps\": 4}",
                       t.set);
    trace_remove(&t);
    ck_assert_int_eq(NS(r.lost_compute_s), NS(2 * 2.0));
    ck_assert_int_eq(NS(r.wall_time_s), NS(7.6));
    ck_assert_int_eq(r.syncs, 4 + 1); /* step 1's sync, then steps 1..4 */
    ck_assert_int_eq(r.useful_ns, 2 * 4 * 1000000000ll);
}
END_TEST

/* DEFECT (fixed): the op a failure interrupts counted in compute_time_s
 * (and in lost_compute_s) but had no span, so a failed worker's compute
 * spans did not add up to its compute time (run.c: cancel_op() added
 * now - op_start to busy and emitted nothing); it now emits the cut part
 * as "<op>_interrupted".  Test 2's world: worker 1 fails at 8.05 s,
 * 0.05 s into the activation backward of layer 1 of step 7; its compute
 * is 10.45 s, its completed ops 10.40 s.  Expected a span [8.0, 8.05] for
 * the interrupted op (compute spans summing to 10.45 s); there is none. */
START_TEST(defect_interrupted_op_has_no_span) {
    trace_tmp t;
    trace_write(&t, "8.05 1 down\n10 1 up\n");
    spans sp = {0};
    run_result r = SIM(&sp, streaming4_inf, t.set);
    trace_remove(&t);
    int64_t busy = 0, cut = 0;
    for (int i = 0; i < sp.n; i++) {
        const span_rec *x = &sp.v[i];
        if (x->worker != 1 || x->track != 0) continue;
        if (is_compute_op(x)) busy += x->end - x->start;
        if (strstr(x->name, "_interrupted")) {
            ck_assert_int_eq(x->start, NS(8.0));
            ck_assert_int_eq(x->end, NS(8.05));
            cut += x->end - x->start;
        }
    }
    spans_free(&sp);
    ck_assert_int_eq(NS(r.per_worker[1].compute_time_s), NS(10.45));
    ck_assert_int_eq(busy, NS(10.40));
    ck_assert_int_eq(busy + cut, NS(10.45));
}
END_TEST

/* ---- network.ack_bytes_per_kb, startup_ms, queue_ms -------------------- */

/* The world of dp_1200ms with lam = 0.1 s (a period of 0.8 + 4 (0.1 +
 * 0.25) = 2.2 s).  ACKs of a = ack_bytes_per_kb / 1000 load every ring
 * link with the other direction's ACKs: each flow at B / (1 + a), a ring
 * step 0.1 + 0.25 (1 + a): a = 0.25, 0.1 + 0.3125, a period of 2.45 s
 * (24.5 s); a = 1, 0.1 + 0.5, 3.2 s (32 s).  The bytes are the payload's,
 * as without. */
START_TEST(acks_slow_the_ring) {
    const char *lam = "network.latency_ms=100";
    run_result none = SIM(NULL, dp_1200ms, lam);
    run_result q = SIM(NULL, dp_1200ms, lam, "network.ack_bytes_per_kb=250");
    run_result one = SIM(NULL, dp_1200ms, lam, "network.ack_bytes_per_kb=1000");
    ck_assert_int_eq(NS(none.wall_time_s), NS(22));
    ck_assert_int_eq(NS(q.wall_time_s), NS(10 * (0.8 + 4 * (0.1 + 0.3125))));
    ck_assert_int_eq(NS(one.wall_time_s), NS(10 * (0.8 + 4 * (0.1 + 0.5))));
    ck_assert(q.bytes_sent_total == none.bytes_sent_total);
    ck_assert(one.bytes_sent_total == none.bytes_sent_total);
    ck_assert(q.per_worker[1].bytes_received ==
              none.per_worker[1].bytes_received);
}
END_TEST

/* A set-up of 0.3 s, paid by the first ring's first step once per pair:
 * layer 1's ring [0.8, 0.8 + 0.3 + 2 (0.1 + 0.25) = 1.8], layer 0's
 * [1.8, 2.5], step 2 at 2.5 and every period after 2.2 s: 22.3 s.  Each
 * worker's communication track shows one "startup" span, [0.8, 1.1], of
 * layer 1 taken after step 1. */
START_TEST(startup_paid_once) {
    spans sp = {0};
    run_result r =
        SIM(&sp, dp_1200ms, "network.latency_ms=100", "network.startup_ms=300");
    ck_assert_int_eq(NS(r.wall_time_s), NS(22.3));
    for (int w = 0; w < 2; w++) {
        const span_rec *su[2];
        ck_assert_int_eq(find_spans(&sp, w, "startup", su, 2), 1);
        ck_assert_int_eq(su[0]->track, 1);
        ck_assert_int_eq(su[0]->layer, 1);
        ck_assert_int_eq(su[0]->step, 1);
        ck_assert_int_eq(su[0]->start, NS(0.8));
        ck_assert_int_eq(su[0]->end, NS(1.1));
        ck_assert_int_eq(allreduce_span(&sp, w, 1, 1)->end, NS(1.8));
        ck_assert_int_eq(allreduce_span(&sp, w, 0, 1)->end, NS(2.5));
    }
    spans_free(&sp);
}
END_TEST

/* A repaired worker's connections are new: diloco_recovery (b) with a
 * set-up of 0.1 s.  The first ring [5, 5.36] (its first step 0.1 longer);
 * worker 1 fails 0.14 s into step 7 (busy 6.14 s); worker 0's steps 6-10
 * [5.36, 10.36], its sync at once; worker 1's download ends at 10.255,
 * it rejoins at step 11: steps 11-15 [10.36, 15.36], the ring with the
 * repaired worker sets its pairs up again: [15.36, 15.72]; steps 16-20
 * [15.72, 20.72], ring [20.72, 20.98] (set up).  Wall 20.98 s (20.88 were
 * the old pairs kept); worker 1 computed 6.14 + 10 s. */
START_TEST(startup_again_after_repair) {
    spans sp = {0};
    trace_tmp t;
    trace_write(&t, "6.5 1 down\n10.2 1 up\n");
    run_result r =
        SIM(&sp, diloco_recovery, t.set, "faults.recovery_bytes_per_param=0.5",
            "network.startup_ms=100");
    trace_remove(&t);
    ck_assert_int_eq(NS(r.wall_time_s), NS(20.98));
    ck_assert_int_eq(NS(r.per_worker[1].compute_time_s), NS(16.14));
    ck_assert_int_eq(r.syncs, 4);
    const span_rec *su[3];
    ck_assert_int_eq(find_spans(&sp, 1, "startup", su, 3), 2);
    ck_assert_int_eq(su[0]->start, NS(5));
    ck_assert_int_eq(su[1]->start, NS(15.36));
    ck_assert_int_eq(su[1]->end, NS(15.46));
    spans_free(&sp);
}
END_TEST

/* A standing queue without TCP: only the window's cap sees it.
 * dp_1200ms at lam = 0.1 s with a window of 0.1 MB: every flow at most
 * 1e5 / 0.2 = 5e5 B/s, a ring step 0.1 + 2 s, a period 0.8 + 4 x 2.1 =
 * 9.2 s (92 s); a queue of 50 ms makes the round trip 0.25 s, 4e5 B/s,
 * 0.1 + 2.5 s a step, 11.2 s a period (112 s).  Without a window the
 * queue changes nothing at all. */
START_TEST(queue_ideal_transport) {
    const char *lam = "network.latency_ms=100";
    const char *win = "network.tcp_window_mb=0.1";
    run_result w0 = SIM(NULL, dp_1200ms, lam, win);
    run_result wq = SIM(NULL, dp_1200ms, lam, win, "network.queue_ms=50");
    ck_assert_int_eq(NS(w0.wall_time_s), NS(92));
    ck_assert_int_eq(NS(wq.wall_time_s), NS(112));
    run_result n0 = SIM(NULL, dp_1200ms, lam);
    run_result nq = SIM(NULL, dp_1200ms, lam, "network.queue_ms=50");
    ck_assert(memcmp(&n0, &nq, sizeof n0) == 0);
}
END_TEST

/* Method sparta: 2 workers, 1e6 parameters, 10 ms steps, 0.32 Gbit/s, a
 * random 1% of each layer in FP32 after every step, 10 steps. */
static const char *const sparta_1e6 =
    "{\"model\": {\"params\": 1e6, \"layers\": 1, \"step_time_s\": 0.01},"
    " \"network\": {\"bandwidth_gbps\": 0.32},"
    " \"method\": {\"name\": \"sparta\", \"codec\": \"fp32\","
    "  \"subset_fraction\": 0.01},"
    " \"steps\": 10}";

/* tau 0, one layer: 1e6 parameters, p 0.01, FP32: S = 40000 bytes a step.
 * Each 10 ms step ends with the ring all-reduce of two workers, 2 steps
 * of (S/2) * 8 / 0.32e9 = 0.5 ms, and the next forward waits: 10 steps
 * take 10 * 11 ms = 110 ms, CU = 100/110; each worker sends S a step. */
START_TEST(sparta_blocking_by_hand) {
    run_result r = SIM(NULL, sparta_1e6, "model.layers=1", "method.tau=0");
    ck_assert_int_eq(r.wall_ns, 110000000);
    ck_assert_uint_eq(r.bytes_sent_total, 2 * 10 * 40000);
    ck_assert(fabs(r.compute_utilization - 100.0 / 110.0) < 1e-12);
    ck_assert_int_eq(r.syncs, 10);
}
END_TEST

/* tau 1, two layers (slot 0 = layer 0, slot 1 = layer 1, each carrying
 * both layers' subsets, 2 x 5000 FP32 values = 40000 bytes): the sync
 * taken after step t (t = 1..9, its apply t + 1 <= 10) takes 1 ms and
 * gates step t + 2's forward; the latest, after step 9 at the parameter
 * backward of layer 1 (80 ms + 4/6 of 10 ms), ends before 100 ms: no
 * stall, CU 1, and 9 syncs of 40000 bytes per worker. */
START_TEST(sparta_overlap_by_hand) {
    run_result r = SIM(NULL, sparta_1e6, "model.layers=2"); /* tau 1 */
    ck_assert_int_eq(r.wall_ns, 100000000);
    ck_assert(r.compute_utilization == 1);
    ck_assert_uint_eq(r.bytes_sent_total, 2 * 9 * 40000);
    ck_assert_int_eq(r.syncs, 9);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("run_cases");
    TCase *tc = tcase_create("by_hand");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, streaming_p2_tau1_by_hand);
    tcase_add_test(tc, outer_overlap_by_hand);
    tcase_add_test(tc, more_fragments_than_steps_by_hand);
    tcase_add_test(tc, per_worker_tau_by_hand);
    tcase_add_test(tc, streaming_failure_lost_per_fragment_and_rejoin);
    tcase_add_test(tc, streaming_failure_lost_sequential);
    tcase_add_test(tc, streaming_failure_rejoin_with_tau);
    tcase_add_test(tc, sync_timeout_left_out_worker_receives_the_result);
    tcase_add_test(tc, failure_during_allreduce_restarts_among_survivors);
    tcase_add_test(tc, recovery_download_finite_bandwidth);
    tcase_add_test(tc, recovery_download_shares_link_with_ring);
    tcase_add_test(tc, split_changes_overlap);
    tcase_add_test(tc, dp_buckets_by_hand);
    tcase_add_test(tc, sparta_blocking_by_hand);
    tcase_add_test(tc, sparta_overlap_by_hand);
    tcase_add_test(tc, streaming_buckets_by_hand);
    tcase_add_test(tc, offload_outer_by_hand);
    tcase_add_test(tc, far_site_member_completion);
    tcase_add_test(tc, efficiency_scales_transfers);
    tcase_add_test(tc, latency_matrix_and_ring_order);
    tcase_add_test(tc, parameters_first_starts_reduction_earlier);
    tcase_add_test(tc, layout_sequential_vs_strided);
    tcase_add_test(tc, order_rotated_vs_ascending);
    tcase_add_test(tc, trace_spans_tile_compute);
    tcase_add_test(tc, acks_slow_the_ring);
    tcase_add_test(tc, startup_paid_once);
    tcase_add_test(tc, startup_again_after_repair);
    tcase_add_test(tc, queue_ideal_transport);
    suite_add_tcase(s, tc);
    TCase *dc = tcase_create("defects");
    tcase_set_timeout(dc, 60);
    tcase_add_test(dc, defect_lost_dropped_allreduce);
    tcase_add_test(dc, defect_lost_partial_fragment);
    tcase_add_test(dc, defect_dp_checkpoint_before_allreduce);
    tcase_add_test(dc, defect_interrupted_op_has_no_span);
    suite_add_tcase(s, dc);
    return s;
}

CHECK_MAIN(make_suite)
