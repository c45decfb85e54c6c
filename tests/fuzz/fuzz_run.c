/*
 * fuzz_run.c -- libFuzzer target: a small bounded run_simulate
 * (sim/engine/run.h) of a fuzzed scenario.
 *
 * Input: as fuzz_scenario.c, document \0 variant \0 override ..., where
 * an override that starts with "#trace" is instead a fault trace
 * (sim/engine/faults.h), used in place of the document's failures when it
 * parses.  A scenario that loads is clamped to a tiny world so that one
 * run takes milliseconds: at most 50 steps, 8 workers and 8 layers (the
 * schedule cut down to match and normalised again), sites of at most 16
 * accelerators (one ring over all of them is 2(T-1) steps), unbounded
 * bandwidths made 100 Gbit/s, random failures no more often than every 10
 * steps, no trace file but the input's own.  Everything else (step time, latency,
 * codecs, stragglers, the schedule) is run as loaded.  A DiLoCo or
 * streaming config is then run again with another overlap mode drawn from
 * the input's bytes (inner, outer, eager; tau 0 and a layout other than
 * sliced where the mode needs them) and with failures: its own, or when
 * it has none, random ones every 10 to 40 steps repaired in 1 to 10,
 * drawn too.
 *
 * Checks: no crash, leak or undefined behaviour; the run succeeds (a
 * valid config only fails when out of memory); 0 <= utilization <= 1
 * overall and per worker, goodput too when no worker is faster than
 * speed 1; a finished run's wall covers its steps (T steps at the fastest
 * worker's step time: some worker computed each); times >= 0; bytes
 * finite and >= 0; the same config run twice (the second time with a
 * timeline and
 * progress hooks, whose spans and fractions are checked; a timeline turns
 * the engine's fast-forward off, so this also holds the fast-forward to
 * the full simulation) gives the same result; in the second run the
 * observer's events keep the protocol a coupled trainer relies on (a
 * worker computes its steps in order and
 * contributes after the step it computed; a sync's result never reaches
 * a worker that has already computed its merge step; members contributed,
 * since their last failure; a repaired worker rejoins at most at the step
 * after the newest one any worker has finished, never ahead of the group).
 */
#include "sim/engine/faults.h"
#include "sim/engine/run.h"
#include "fuzz.h"
#include "../run_protocol.h"

#include <math.h>

#define MAX_STEPS 50
#define MAX_WORKERS 8
#define MAX_LAYERS 8
#define MAX_REPLICAS 16

/* The glue to the loader (the one place to change when its entry points
 * change): the document with the variant (NULL: base) and the overrides,
 * through a temporary file.  Returns the loader's code, or 1 when the
 * input cannot be tried. */
static int load(const char *doc, size_t len, const char *variant,
                const char *const *sets, int nset, scn_config *cfg) {
    char path[64], err[FUZZ_ERRLEN];
    if (fuzz_temp(doc, len, path)) return 1;
    int rc = scn_load_variant(path, variant, sets, nset, cfg, err, sizeof err);
    unlink(path);
    return rc;
}

/* Cuts a loaded config down to the tiny world above.  Returns 0, or -1
 * when the schedule cannot be cut down (the input is skipped). */
static int clamp(scn_config *c) {
    if (c->steps > MAX_STEPS) c->steps = MAX_STEPS;
    if (c->workers > MAX_WORKERS) c->workers = MAX_WORKERS;
    if (c->layers > MAX_LAYERS) {
        c->layers = MAX_LAYERS;
        sched_spec *s = &c->sched;
        s->layers = MAX_LAYERS;
        if (s->P > s->layers) s->P = s->layers;
        if (s->tau >= s->H / s->P) s->tau = s->H / s->P - 1;
        char err[256];
        if (sched_normalize(s, err, sizeof err)) return -1;
    }
    for (int w = 0; w < c->workers; w++) {
        if (c->site_replicas[w] > MAX_REPLICAS)
            c->site_replicas[w] = MAX_REPLICAS;
        if (!isfinite(c->up_gbps[w])) c->up_gbps[w] = 100;
        if (!isfinite(c->down_gbps[w])) c->down_gbps[w] = 100;
    }
    /* random failures at most every 10 steps */
    double floor_s = 10 * scn_step_time_s(c);
    if (c->faults.mtbf_s > 0 && c->faults.mtbf_s < floor_s)
        c->faults.mtbf_s = floor_s;
    c->trace_path[0] = '\0';
    c->faults.trace = NULL;
    return 0;
}

static int finite_ge0(double x) {
    return isfinite(x) && x >= 0;
}
static int unit(double x) {
    return x >= 0 && x <= 1;
}

/* Equal, or both NaN (bit-for-bit determinism of the doubles). */
static int same(double a, double b) {
    return memcmp(&a, &b, sizeof a) == 0;
}

static void check_result(const run_result *r, const scn_config *c) {
    if (r->workers != c->workers || r->steps != c->steps)
        fuzz_fail("result has %d workers, %lld steps", r->workers,
                  (long long)r->steps);
    if (!unit(r->compute_utilization))
        fuzz_fail("compute_utilization %.17g", r->compute_utilization);
    double fastest = 0; /* the highest speed: each step lasts at least
                           llround(step / fastest) ns */
    for (int w = 0; w < c->workers; w++)
        if (c->speed[w] > fastest) fastest = c->speed[w];
    int64_t least = llround((double)r->step_ns / fastest) - 1; /* 1 ns:
                                                       the op ends' rounding */
    if (r->finished && r->wall_ns / r->steps < least)
        fuzz_fail("wall %lld ns for %lld steps of at least %lld ns",
                  (long long)r->wall_ns, (long long)r->steps, (long long)least);
    if (fastest <= 1 && !unit(r->goodput))
        fuzz_fail("goodput %.17g", r->goodput);
    if (!finite_ge0(r->wall_time_s))
        fuzz_fail("wall_time_s %g", r->wall_time_s);
    if (!finite_ge0(r->compute_time_s))
        fuzz_fail("compute_time_s %g", r->compute_time_s);
    if (!finite_ge0(r->bytes_sent_total))
        fuzz_fail("bytes_sent_total %g", r->bytes_sent_total);
    if (!finite_ge0(r->recovery_bytes))
        fuzz_fail("recovery_bytes %g", r->recovery_bytes);
    if (!finite_ge0(r->lost_compute_s))
        fuzz_fail("lost_compute_s %g", r->lost_compute_s);
    if (!(r->peak_link_gbps >= 0) || !(r->avg_link_gbps >= 0))
        fuzz_fail("link rates %g peak, %g average", r->peak_link_gbps,
                  r->avg_link_gbps);
    if (r->syncs < 0 || r->failures < 0)
        fuzz_fail("%lld syncs, %lld failures", (long long)r->syncs,
                  (long long)r->failures);
    for (int w = 0; w < r->workers; w++) {
        const run_worker *p = &r->per_worker[w];
        if (!unit(p->utilization))
            fuzz_fail("worker %d utilization %.17g", w, p->utilization);
        if (fastest <= 1 && !unit(p->goodput))
            fuzz_fail("worker %d goodput %.17g", w, p->goodput);
        if (!finite_ge0(p->compute_time_s) || !finite_ge0(p->bytes_sent) ||
            !finite_ge0(p->bytes_received) || !finite_ge0(p->lost_compute_s))
            fuzz_fail("worker %d: compute %g s, bytes %g up %g down, lost "
                      "%g s",
                      w, p->compute_time_s, p->bytes_sent, p->bytes_received,
                      p->lost_compute_s);
    }
}

static void check_same(const run_result *a, const run_result *b) {
    int eq = a->workers == b->workers && a->steps == b->steps &&
             a->finished == b->finished && a->syncs == b->syncs &&
             a->failures == b->failures && a->events == b->events &&
             same(a->wall_time_s, b->wall_time_s) &&
             same(a->compute_time_s, b->compute_time_s) &&
             same(a->compute_utilization, b->compute_utilization) &&
             same(a->bytes_sent_total, b->bytes_sent_total) &&
             same(a->peak_link_gbps, b->peak_link_gbps) &&
             same(a->avg_link_gbps, b->avg_link_gbps) &&
             same(a->lost_compute_s, b->lost_compute_s) &&
             same(a->recovery_bytes, b->recovery_bytes);
    for (int w = 0; eq && w < a->workers; w++) {
        const run_worker *p = &a->per_worker[w], *q = &b->per_worker[w];
        eq = same(p->utilization, q->utilization) &&
             same(p->compute_time_s, q->compute_time_s) &&
             same(p->bytes_sent, q->bytes_sent) &&
             same(p->bytes_received, q->bytes_received) &&
             same(p->lost_compute_s, q->lost_compute_s) &&
             p->failures == q->failures;
    }
    if (!eq) fuzz_fail("two runs of one config differ");
}

/* The timeline and progress hooks of the second run: every span lies in
 * [0, INT64_MAX) with start <= end, on a worker and track that exist;
 * progress never goes back and stays in [0, 1]. */
typedef struct {
    int workers;
    double progress;
} hook_ctx;

static void on_span(void *ctx, const run_span *sp) {
    const hook_ctx *h = ctx;
    if (sp->worker < 0 || sp->worker >= h->workers || sp->track < 0 ||
        sp->track > 1 || !sp->name || sp->start_ns < 0 ||
        sp->end_ns < sp->start_ns)
        fuzz_fail("span %s of worker %d track %d: %lld..%lld ns",
                  sp->name ? sp->name : "(null)", sp->worker, sp->track,
                  (long long)sp->start_ns, (long long)sp->end_ns);
}

static void on_progress(void *ctx, double fraction) {
    hook_ctx *h = ctx;
    if (!(fraction >= h->progress) || !(fraction <= 1))
        fuzz_fail("progress %g after %g", fraction, h->progress);
    h->progress = fraction;
}

/* The observer: tests/run_protocol.h; a violation is a finding. */
static int observe(void *ctx, const run_event *e, char *err, size_t errlen) {
    run_protocol *p = ctx;
    run_protocol_observe(p, e, err, errlen);
    if (p->bad[0]) fuzz_fail("%s", p->bad);
    return 0;
}

/* Runs a clamped config twice, the second time with every hook, and
 * checks both runs (see the header comment). */
static void check_config(const scn_config *cfg) {
    static run_result r1, r2;
    char err[FUZZ_ERRLEN] = "";
    if (run_simulate(cfg, NULL, &r1, err, sizeof err) != 0)
        fuzz_fail("run_simulate failed: %s", err);
    check_result(&r1, cfg);
    hook_ctx h = {cfg->workers, 0};
    static run_protocol pr;
    run_protocol_init(&pr, cfg);
    run_hooks hooks = {.span = on_span,
                       .span_ctx = &h,
                       .progress = on_progress,
                       .progress_ctx = &h,
                       .observe = observe,
                       .observe_ctx = &pr};
    if (run_simulate(cfg, &hooks, &r2, err, sizeof err) != 0)
        fuzz_fail("second run_simulate failed: %s", err);
    check_same(&r1, &r2);
}

/* The input's own draws: FNV-1a of its bytes. */
static uint64_t input_hash(const uint8_t *data, size_t size) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 0x100000001b3ull;
    return h;
}

/* Another overlap mode, drawn from h, with failures (drawn too when the
 * config has none).  Returns 0, or -1 when there is nothing to draw (DP)
 * or the schedule does not allow the mode. */
static int draw_overlap(scn_config *c, uint64_t h) {
    sched_spec *s = &c->sched;
    if (s->method == SCHED_DP) return -1;
    s->overlap = (sched_overlap)((s->overlap + 1 + h % 2) % 3);
    h /= 2;
    if (s->overlap != SCHED_INNER) { /* a delay of H: tau 0, not sliced */
        s->tau = 0;
        memset(c->tau_extra, 0, sizeof c->tau_extra);
        if (s->layout == SCHED_SLICED) s->layout = SCHED_STRIDED;
    }
    char err[256];
    if (sched_normalize(s, err, sizeof err)) return -1;
    if (c->faults.mtbf_s == 0 && !c->trace_path[0]) {
        double step = scn_step_time_s(c);
        c->faults.mtbf_s = step * (double)(10 + h % 31);
        h /= 31;
        c->faults.mttr_s = step * (double)(1 + h % 10);
        h /= 10;
        c->faults.dist = h % 2 ? FAULTS_WEIBULL : FAULTS_EXPONENTIAL;
        if (c->faults.weibull_shape <= 0) c->faults.weibull_shape = 1.5;
        c->seed ^= h;
    }
    return 0;
}

/* Takes the first override that starts with "#trace" out of sets (its
 * text in *trace, NULL when none); returns the overrides left. */
static int take_trace(const char **sets, int nset, const char **trace) {
    *trace = NULL;
    for (int i = 0; i < nset; i++)
        if (!strncmp(sets[i], "#trace", 6)) {
            *trace = sets[i];
            memmove(sets + i, sets + i + 1,
                    (size_t)(nset - i - 1) * sizeof *sets);
            return nset - 1;
        }
    return nset;
}

/* The input's trace for the clamped config: written to a temporary file
 * named in c->trace_path (path: to unlink; "" when there is none, or it
 * does not parse for the config's workers). */
static void use_trace(scn_config *c, const char *trace, char path[64]) {
    path[0] = '\0';
    if (!trace) return;
    faults_trace *t;
    char err[FUZZ_ERRLEN];
    if (faults_trace_parse(trace, strlen(trace), "trace", c->workers, &t, err,
                           sizeof err))
        return;
    faults_trace_free(t);
    if (fuzz_temp(trace, strlen(trace), path)) {
        path[0] = '\0';
        return;
    }
    snprintf(c->trace_path, sizeof c->trace_path, "%s", path);
    c->faults.mtbf_s = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_parts p;
    if (fuzz_split(data, size, &p)) return 0;
    const char *variant, *sets[FUZZ_MAX_PARTS], *trace;
    int nset = fuzz_scenario_args(&p, &variant, sets);
    nset = take_trace(sets, nset, &trace);

    static scn_config cfg; /* large: not on the stack */
    int rc = load(p.part[0], p.len[0], variant, sets, nset, &cfg);
    char path[64] = "";
    if (rc == 0 && clamp(&cfg) == 0) {
        use_trace(&cfg, trace, path);
        check_config(&cfg);
        if (draw_overlap(&cfg, input_hash(data, size)) == 0) check_config(&cfg);
    }
    if (path[0]) unlink(path);
    fuzz_parts_free(&p);
    return 0;
}
