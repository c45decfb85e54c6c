/*
 * run_protocol.h -- what every run's observer events must satisfy, for the
 * tests and the run fuzzer (header-only: both include it).
 *
 *   - each worker computes its steps in order, and ends the step it
 *     computed;
 *   - a worker contributes to a fragment's open sync once, at the step it
 *     has just computed, and every contributor of a sync took the same step;
 *   - the members of a sync contributed to it since their last failure
 *     (a coupled trainer reduces only payloads its replicas encoded), and
 *     each merges the result at a step it has not computed yet, no sooner
 *     than take + tau + 1;
 *   - a repaired worker rejoins at most at the step after the newest step
 *     any worker has finished: never ahead of the group.
 *
 * Use: run_protocol_init, then run_protocol_observe as the run's
 * `observe` hook with the protocol as its context; after the run, `bad`
 * holds the first violation ("" for none).
 */
#ifndef DILOSIM_RUN_PROTOCOL_H
#define DILOSIM_RUN_PROTOCOL_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim/engine/run.h"

#define RUN_PROTOCOL_MAX_P 64 /* fragments followed; more are not checked */

typedef struct {
    int M, tau;
    int64_t last[SCN_MAX_WORKERS];    /* last step computed, per worker */
    int64_t ended;                    /* newest step any worker finished */
    int64_t take[RUN_PROTOCOL_MAX_P]; /* per fragment: its open sync, -1 */
    uint8_t came[RUN_PROTOCOL_MAX_P][SCN_MAX_WORKERS]; /* its contributors */
    char bad[300]; /* the first violation, "" for none */
} run_protocol;

/* Starts p for cfg's workers and (normalised) tau. */
static inline void run_protocol_init(run_protocol *p, const scn_config *cfg) {
    memset(p, 0, sizeof *p);
    p->M = cfg->workers;
    sched_spec s = cfg->sched;
    s.layers = cfg->layers;
    char err[256];
    p->tau = sched_normalize(&s, err, sizeof err) ? 0 : s.tau;
    for (int k = 0; k < RUN_PROTOCOL_MAX_P; k++) p->take[k] = -1;
}

static inline void run_protocol_bad(run_protocol *p, const char *fmt, ...) {
    if (p->bad[0]) return; /* the first one only */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->bad, sizeof p->bad, fmt, ap);
    va_end(ap);
}

/* The observe hook: checks e against what came before (see above). */
static inline int run_protocol_observe(void *ctx, const run_event *e, char *err,
                                       size_t errlen) {
    (void)err, (void)errlen;
    run_protocol *p = ctx;
    int w = e->worker, f = e->fragment;
    if (f >= RUN_PROTOCOL_MAX_P) return 0;
    switch (e->kind) {
    case RUN_EV_STEP:
        if (e->step != p->last[w] + 1)
            run_protocol_bad(p, "worker %d computes step %lld after %lld", w,
                             (long long)e->step, (long long)p->last[w]);
        p->last[w] = e->step;
        break;
    case RUN_EV_STEP_END:
        if (e->step != p->last[w])
            run_protocol_bad(p, "worker %d ends step %lld, computed %lld", w,
                             (long long)e->step, (long long)p->last[w]);
        if (e->step > p->ended) p->ended = e->step;
        break;
    case RUN_EV_CONTRIBUTE:
        if (e->step != p->last[w] ||
            (p->take[f] >= 0 && p->take[f] != e->step) || p->came[f][w])
            run_protocol_bad(p,
                             "worker %d contributes to fragment %d's sync "
                             "of step %lld at step %lld (open: %lld)",
                             w, f, (long long)e->step, (long long)p->last[w],
                             (long long)p->take[f]);
        p->take[f] = e->step;
        p->came[f][w] = 1;
        break;
    case RUN_EV_SYNCED:
        for (int i = 0; i < p->M; i++) {
            int64_t m = e->merge_step[i];
            if (e->member[i] && !p->came[f][i])
                run_protocol_bad(p,
                                 "worker %d is a member of fragment %d's "
                                 "sync of step %lld without having "
                                 "contributed since it failed",
                                 i, f, (long long)e->step);
            if (m >= 0 && (m <= p->last[i] || m < e->step + p->tau + 1))
                run_protocol_bad(p,
                                 "fragment %d's sync of step %lld: worker "
                                 "%d merges at step %lld, at step %lld",
                                 f, (long long)e->step, i, (long long)m,
                                 (long long)p->last[i]);
        }
        p->take[f] = -1;
        memset(p->came[f], 0, sizeof p->came[f]);
        break;
    case RUN_EV_FAILED: /* what it contributed counts for nothing */
    case RUN_EV_LEFT:
        for (int k = 0; k < RUN_PROTOCOL_MAX_P; k++) p->came[k][w] = 0;
        break;
    case RUN_EV_REJOINED:
        if (e->step > p->ended + 1)
            run_protocol_bad(p,
                             "worker %d rejoins at step %lld, the group "
                             "has finished %lld",
                             w, (long long)e->step, (long long)p->ended);
        p->last[w] = e->step - 1;
        if (e->src < 0) /* nobody in the group: it begins again there */
            p->ended = e->step - 1;
        break;
    case RUN_EV_ROLLBACK:
        p->ended = e->step;
        for (int i = 0; i < p->M; i++) p->last[i] = e->step;
        for (int k = 0; k < RUN_PROTOCOL_MAX_P; k++) {
            p->take[k] = -1;
            memset(p->came[k], 0, sizeof p->came[k]);
        }
        break;
    default: break;
    }
    return 0;
}

#endif
