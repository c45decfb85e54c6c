/*
 * faults.c -- failure/repair processes of the workers: random (GSL) or
 * read from a trace file.
 *
 * Random mode.  Worker w owns the generator rng_stream(seed, RNG_FAULTS, w)
 * and draws, per call of faults_next(), one up time then one down time, in
 * that order, so its sequence depends only on (seed, w).  Up times are
 * exponential with mean mtbf_s, or Weibull with shape k and scale
 * mtbf_s / Gamma(1 + 1/k) (mean mtbf_s); down times are exponential with
 * mean mttr_s.  Each period is rounded to the nearest nanosecond and made
 * at least 1 ns.  The first failure is at the first up time after 0; each
 * later up time starts at the previous repair.  A period beyond the int64
 * nanosecond range means "never": a failure that would fall there ends the
 * worker's failures (faults_next returns 0), a repair there is INT64_MAX.
 *
 * Trace mode (spec->trace != NULL; it takes precedence over mtbf_s, which
 * is then ignored): the periods of the trace file, parsed by
 * sim/config/faults_trace.h (its format), replayed in order.
 *
 * Errors are one line: a bad trace's (faults_trace.h), or "faults: ..."
 * for a bad spec.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "sim/engine/faults.h"
#include "sim/base/msg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sf_gamma.h>

#include "sim/base/rng.h"

enum { MODE_NONE, MODE_RANDOM, MODE_TRACE };

/* Smallest Weibull shape: keeps Gamma(1 + 1/k) finite (GSL's limit is
 * 171) and the distribution within reason. */
#define WEIBULL_MIN_SHAPE 0.01

struct faults {
    int n, mode;
    faults_dist dist;
    double mtbf_s, mttr_s, weibull_shape, weibull_scale;
    gsl_rng **rng;  /* MODE_RANDOM: one generator per worker */
    int64_t *clock; /* MODE_RANDOM: end of each worker's last down period */
    faults_trace *trace; /* MODE_TRACE: each worker's periods */
    size_t *next;        /* MODE_TRACE: the period faults_next returns next */
};

/* Seconds to nanoseconds, rounded to nearest, at least 1, INT64_MAX when
 * out of range (or NaN). */
static int64_t period_ns(double s) {
    double v = s * 1e9;
    if (!(v < 9.2e18)) return INT64_MAX;
    int64_t ns = (int64_t)llround(v);
    return ns < 1 ? 1 : ns;
}

/* ---- random failures ----------------------------------------------------- */

/* Checks the random part of the spec; 0 or -1 with a message. */
static int check_random(const faults_spec *s, char *err, size_t errlen) {
    if (!(s->mtbf_s >= 0 && isfinite(s->mtbf_s))) {
        msg_set(err, errlen, 0,
                "faults: mtbf_s %g is invalid (expected a finite "
                "number of seconds >= 0)",
                s->mtbf_s);
        return -1;
    }
    if (s->mtbf_s == 0) return 0;
    if (!(s->mttr_s > 0 && isfinite(s->mttr_s))) {
        msg_set(err, errlen, 0,
                "faults: mttr_s %g is invalid (expected a finite "
                "number of seconds > 0 when mtbf_s > 0)",
                s->mttr_s);
        return -1;
    }
    if (s->dist != FAULTS_EXPONENTIAL && s->dist != FAULTS_WEIBULL) {
        msg_set(err, errlen, 0,
                "faults: unknown distribution %d (expected "
                "exponential or weibull)",
                (int)s->dist);
        return -1;
    }
    if (s->dist == FAULTS_WEIBULL && !(s->weibull_shape >= WEIBULL_MIN_SHAPE &&
                                       isfinite(s->weibull_shape))) {
        msg_set(err, errlen, 0,
                "faults: weibull_shape %g is invalid (expected a "
                "finite number >= %g)",
                s->weibull_shape, WEIBULL_MIN_SHAPE);
        return -1;
    }
    return 0;
}

static int init_random(faults *f, const faults_spec *s, uint64_t seed) {
    f->mode = MODE_RANDOM;
    f->dist = s->dist;
    f->mtbf_s = s->mtbf_s;
    f->mttr_s = s->mttr_s;
    if (s->dist == FAULTS_WEIBULL) {
        f->weibull_shape = s->weibull_shape;
        f->weibull_scale =
            s->mtbf_s / gsl_sf_gamma(1.0 + 1.0 / s->weibull_shape);
    }
    f->rng = calloc((size_t)f->n, sizeof *f->rng);
    f->clock = calloc((size_t)f->n, sizeof *f->clock);
    if (!f->rng || !f->clock) return -1;
    for (int w = 0; w < f->n; w++) {
        f->rng[w] = rng_stream(seed, RNG_FAULTS, (uint32_t)w);
        if (!f->rng[w]) return -1;
    }
    return 0;
}

static double draw_up(faults *f, gsl_rng *r) {
    if (f->dist == FAULTS_WEIBULL)
        return gsl_ran_weibull(r, f->weibull_scale, f->weibull_shape);
    return gsl_ran_exponential(r, f->mtbf_s);
}

static int next_random(faults *f, int w, int64_t *fail_ns, int64_t *repair_ns) {
    int64_t t = f->clock[w];
    if (t == INT64_MAX) return 0;
    int64_t up = period_ns(draw_up(f, f->rng[w]));
    int64_t down = period_ns(gsl_ran_exponential(f->rng[w], f->mttr_s));
    if (up >= INT64_MAX - t) { /* beyond the end of time: never again */
        f->clock[w] = INT64_MAX;
        return 0;
    }
    *fail_ns = t + up;
    *repair_ns = down >= INT64_MAX - *fail_ns ? INT64_MAX : *fail_ns + down;
    f->clock[w] = *repair_ns;
    return 1;
}

/* ---- trace files --------------------------------------------------------- */

static int init_trace(faults *f, const char *path, char *err, size_t errlen) {
    f->mode = MODE_TRACE;
    if (faults_trace_load(path, f->n, &f->trace, err, errlen)) return -1;
    if (!(f->next = calloc((size_t)f->n, sizeof *f->next))) {
        msg_set(err, errlen, 0, "faults: out of memory");
        return -1;
    }
    return 0;
}

static int next_trace(faults *f, int w, int64_t *fail_ns, int64_t *repair_ns) {
    size_t n;
    const faults_period *p = faults_trace_periods(f->trace, w, &n);
    if (f->next[w] >= n) return 0;
    *fail_ns = p[f->next[w]].fail;
    *repair_ns = p[f->next[w]].repair;
    f->next[w]++;
    return 1;
}

/* ---- the public face ----------------------------------------------------- */

faults *faults_new(const faults_spec *spec, int nworkers, uint64_t seed,
                   char *err, size_t errlen) {
    if (!spec || nworkers < 1) {
        msg_set(err, errlen, 0, "faults: %s",
                !spec ? "no spec" : "nworkers must be >= 1");
        return NULL;
    }
    if (!spec->trace && check_random(spec, err, errlen) < 0) return NULL;
    faults *f = calloc(1, sizeof *f);
    if (!f) {
        msg_set(err, errlen, 0, "faults: out of memory");
        return NULL;
    }
    f->n = nworkers;
    f->mode = MODE_NONE;
    int rc = 0;
    if (spec->trace) rc = init_trace(f, spec->trace, err, errlen);
    else if (spec->mtbf_s > 0 && init_random(f, spec, seed) < 0) {
        msg_set(err, errlen, 0, "faults: out of memory");
        rc = -1;
    }
    if (rc < 0) {
        faults_free(f);
        return NULL;
    }
    return f;
}

void faults_free(faults *f) {
    if (!f) return;
    if (f->rng)
        for (int w = 0; w < f->n; w++)
            if (f->rng[w]) gsl_rng_free(f->rng[w]);
    faults_trace_free(f->trace);
    free(f->rng);
    free(f->clock);
    free(f->next);
    free(f);
}

/* Returns 0 for a NULL f or a worker out of range, as for a worker that
 * never fails. */
int faults_next(faults *f, int w, int64_t *fail_ns, int64_t *repair_ns) {
    if (!f || w < 0 || w >= f->n) return 0;
    switch (f->mode) {
    case MODE_RANDOM: return next_random(f, w, fail_ns, repair_ns);
    case MODE_TRACE: return next_trace(f, w, fail_ns, repair_ns);
    default: return 0;
    }
}
