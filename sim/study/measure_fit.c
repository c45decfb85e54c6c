/*
 * measure_fit.c -- the closed-form estimators of measure.h: what step
 * times say about the workers' speeds and stragglers, what outages say
 * about failures and repairs, each with its standard error, and both as
 * scenario overrides.
 *
 * No simulation: medians, shares and means of the logs, with the
 * standard errors measure.h names, so that a test can compute each one
 * by hand.
 */
#include "sim/study/measure_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"

static int dbl_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the n sorted values at v. */
static double median(const double *v, int64_t n) {
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The sample standard deviation (n - 1) of the n values at v; NAN for
 * n < 2. */
static double sample_sd(const double *v, int64_t n) {
    if (n < 2) return NAN;
    double mean = 0, ss = 0;
    for (int64_t i = 0; i < n; i++) mean += v[i];
    mean /= (double)n;
    for (int64_t i = 0; i < n; i++) ss += (v[i] - mean) * (v[i] - mean);
    return sqrt(ss / (double)(n - 1));
}

/* Each worker's steps' seconds, sorted, at v + off[w] (off[w + 1] - off[w]
 * of them): counting sort by worker. */
static int by_worker(const meas_set *m, int workers, double *v, int64_t *off) {
    memset(off, 0, (size_t)(workers + 1) * sizeof *off);
    for (int i = 0; i < m->nsteps; i++) off[m->steps[i].worker + 1]++;
    for (int w = 0; w < workers; w++) {
        if (off[w + 1] == 0) return w;
        off[w + 1] += off[w];
    }
    int64_t *fill = malloc((size_t)workers * sizeof *fill);
    if (!fill) return -2;
    memcpy(fill, off, (size_t)workers * sizeof *fill);
    for (int i = 0; i < m->nsteps; i++)
        v[fill[m->steps[i].worker]++] = m->steps[i].seconds;
    free(fill);
    for (int w = 0; w < workers; w++)
        qsort(v + off[w], (size_t)(off[w + 1] - off[w]), sizeof *v, dbl_cmp);
    return -1;
}

/* The stragglers, pooled over the workers: steps above (1 + margin) times
 * their worker's median med[w]. */
static void stragglers(const double *v, const int64_t *off, int workers,
                       const double *med, meas_speeds *out) {
    double sum = 0, ss = 0;
    int64_t k = 0;
    for (int w = 0; w < workers; w++)
        for (int64_t i = off[w]; i < off[w + 1]; i++)
            if (v[i] > (1 + MEAS_STRAGGLER_MARGIN) * med[w]) {
                sum += v[i] / med[w];
                k++;
            }
    double mean = k ? sum / (double)k : 1;
    for (int w = 0; k > 1 && w < workers; w++)
        for (int64_t i = off[w]; i < off[w + 1]; i++)
            if (v[i] > (1 + MEAS_STRAGGLER_MARGIN) * med[w])
                ss += (v[i] / med[w] - mean) * (v[i] / med[w] - mean);
    int64_t n = off[workers];
    double p = (double)k / (double)n;
    out->steps = n;
    out->slow_steps = k;
    out->straggler_prob = p;
    out->straggler_prob_se = sqrt(p * (1 - p) / (double)n);
    out->straggler_slowdown = mean;
    out->straggler_slowdown_se =
        k > 1 ? sqrt(ss / (double)(k - 1)) / sqrt((double)k) : NAN;
}

int meas_fit_speeds(const meas_set *m, meas_speeds *out, char *err,
                    size_t errlen) {
    memset(out, 0, sizeof *out);
    if (m->nsteps <= 0)
        return msg_set(err, errlen, MSG_EINPUT,
                       "no step times (expected a step-time CSV: "
                       "worker,step,seconds)");
    int workers = 0;
    for (int i = 0; i < m->nsteps; i++)
        if (m->steps[i].worker + 1 > workers) workers = m->steps[i].worker + 1;
    if (workers > SCN_MAX_WORKERS)
        return msg_set(err, errlen, MSG_EINPUT,
                       "step times of %d workers (expected at most %d)",
                       workers, SCN_MAX_WORKERS);
    double *v = malloc((size_t)m->nsteps * sizeof *v);
    int64_t off[SCN_MAX_WORKERS + 1];
    int missing = v ? by_worker(m, workers, v, off) : -2;
    if (missing != -1) {
        free(v);
        if (missing == -2)
            return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
        return msg_set(err, errlen, MSG_EINPUT,
                       "worker %d has no step times (expected steps of "
                       "every worker 0..%d)",
                       missing, workers - 1);
    }
    double med[SCN_MAX_WORKERS] = {0}, se[SCN_MAX_WORKERS] = {0};
    for (int w = 0; w < workers; w++) {
        int64_t n = off[w + 1] - off[w];
        med[w] = median(v + off[w], n);
        se[w] =
            sqrt(acos(-1.0) / 2) * sample_sd(v + off[w], n) / sqrt((double)n);
    }
    out->workers = workers;
    out->step_time_s = med[0];
    out->step_time_se = se[0];
    for (int w = 0; w < workers; w++) {
        out->speed[w] = med[0] / med[w];
        out->speed_se[w] =
            w == 0 ? 0
                   : out->speed[w] * sqrt(se[0] / med[0] * (se[0] / med[0]) +
                                          se[w] / med[w] * (se[w] / med[w]));
    }
    stragglers(v, off, workers, med, out);
    free(v);
    return 0;
}

/* An outage's place in the set, sorted by worker and start. */
static int outage_cmp(const void *a, const void *b) {
    const meas_outage *x = *(const meas_outage *const *)a;
    const meas_outage *y = *(const meas_outage *const *)b;
    if (x->worker != y->worker) return x->worker < y->worker ? -1 : 1;
    if (x->down_s != y->down_s) return x->down_s < y->down_s ? -1 : 1;
    return (x > y) - (x < y);
}

/* "FILE:LINE:1: " of outage o, then the message. */
static int outage_fail(const meas_set *m, const meas_outage *o, char *err,
                       size_t errlen, const char *what) {
    return msg_set(err, errlen, MSG_EINPUT, "%s:%d:1: %s",
                   m->file[o->file].path, o->line, what);
}

/* Each outage of a worker < workers, within the span, none overlapping
 * the one before it of its worker. */
static int outages_check(const meas_set *m, int workers, double span_s,
                         const meas_outage **o, char *err, size_t errlen) {
    char msg[400], a[MSG_NUM_MAX], b[MSG_NUM_MAX];
    for (int i = 0; i < m->noutages; i++) {
        const meas_outage *x = &m->outages[i];
        if (x->worker >= workers) {
            snprintf(msg, sizeof msg,
                     "worker %d is not one of the %d workers (expected "
                     "0..%d)",
                     x->worker, workers, workers - 1);
            return outage_fail(m, x, err, errlen, msg);
        }
        if (x->up_s > span_s) {
            snprintf(msg, sizeof msg,
                     "up_s %s is past the observed span of %s s (expected "
                     "outages that end within it)",
                     msg_number(x->up_s, a), msg_number(span_s, b));
            return outage_fail(m, x, err, errlen, msg);
        }
        o[i] = x;
    }
    qsort(o, (size_t)m->noutages, sizeof *o, outage_cmp);
    for (int i = 1; i < m->noutages; i++) {
        const meas_outage *p = o[i - 1], *x = o[i];
        if (p->worker != x->worker || x->down_s >= p->up_s) continue;
        /* the message is at the later of the two in the files */
        int swap =
            p->file > x->file || (p->file == x->file && p->line > x->line);
        const meas_outage *at = swap ? p : x, *other = swap ? x : p;
        snprintf(msg, sizeof msg,
                 "worker %d: the outage from %s s to %s s overlaps the one "
                 "at %s:%d (expected one outage of a worker at a time)",
                 x->worker, msg_number(at->down_s, a), msg_number(at->up_s, b),
                 m->file[other->file].path, other->line);
        return outage_fail(m, at, err, errlen, msg);
    }
    return 0;
}

int meas_fit_faults(const meas_set *m, int workers, double span_s,
                    meas_faults *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (workers < 1 || workers > SCN_MAX_WORKERS || !isfinite(span_s) ||
        !(span_s > 0))
        return msg_set(err, errlen, MSG_EINVAL,
                       "%d workers over %g s (expected 1..%d workers and a "
                       "span > 0 s)",
                       workers, span_s, SCN_MAX_WORKERS);
    if (m->noutages <= 0)
        return msg_set(err, errlen, MSG_EINPUT,
                       "no outages (expected an outage CSV: "
                       "worker,down_s,up_s)");
    const meas_outage **o = malloc((size_t)m->noutages * sizeof *o);
    if (!o) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    int rc = outages_check(m, workers, span_s, o, err, errlen);
    free(o);
    if (rc) return rc;
    double down = 0, mean, ss = 0;
    int64_t n = m->noutages;
    for (int64_t i = 0; i < n; i++)
        down += m->outages[i].up_s - m->outages[i].down_s;
    mean = down / (double)n;
    for (int64_t i = 0; i < n; i++) {
        double d = m->outages[i].up_s - m->outages[i].down_s - mean;
        ss += d * d;
    }
    double up = workers * span_s - down;
    if (!(up > 0))
        return msg_set(err, errlen, MSG_EINPUT,
                       "the %d workers were down for the whole span of %g s "
                       "(expected some time up between failures)",
                       workers, span_s);
    out->failures = n;
    out->mtbf_hours = up / (double)n / 3600;
    out->mtbf_hours_se = out->mtbf_hours / sqrt((double)n);
    out->mttr_hours = mean / 3600;
    out->mttr_hours_se =
        n > 1 ? sqrt(ss / (double)(n - 1)) / sqrt((double)n) / 3600 : NAN;
    return 0;
}

/* "key=x", x the shortest exact decimal. */
static void num_set(char *out, const char *key, double x) {
    char num[MSG_NUM_MAX];
    snprintf(out, MEAS_FIT_SET_MAX, "%s=%s", key, msg_number(x, num));
}

int meas_speeds_sets(const meas_speeds *s, char sets[][MEAS_FIT_SET_MAX],
                     int max) {
    if (max < MEAS_SPEEDS_SETS) return MSG_EINVAL;
    num_set(sets[0], "model.step_time_s", s->step_time_s);
    /* at most SCN_MAX_WORKERS numbers of MSG_NUM_MAX bytes: it fits */
    char num[MSG_NUM_MAX], *p = sets[1];
    p += sprintf(p, "workers.speed=[");
    for (int w = 0; w < s->workers; w++)
        p += sprintf(p, "%s%s", w ? "," : "", msg_number(s->speed[w], num));
    sprintf(p, "]");
    num_set(sets[2], "workers.stragglers.probability", s->straggler_prob);
    num_set(sets[3], "workers.stragglers.slowdown", s->straggler_slowdown);
    return MEAS_SPEEDS_SETS;
}

int meas_faults_sets(const meas_faults *f, char sets[][MEAS_FIT_SET_MAX],
                     int max) {
    if (max < MEAS_FAULTS_SETS) return MSG_EINVAL;
    num_set(sets[0], "faults.mtbf_hours", f->mtbf_hours);
    num_set(sets[1], "faults.mttr_hours", f->mttr_hours);
    return MEAS_FAULTS_SETS;
}
