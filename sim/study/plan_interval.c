/*
 * plan_interval.c -- how sure the plan's answers are (plan.h, "Interval"
 * and "Seeds"): the draws of a fit's keys from their multivariate normal,
 * a whole least-bandwidth search per draw and the percentiles of the
 * answers; CU over the seeds at each option, and the least bandwidth
 * from which its 5th percentile reaches the target.
 *
 * Every draw is made here, on one thread, from one stream, before any
 * search runs; the searches are batches of plan_least_search and
 * table_parallel_on (threads or a runner), each curve computed alone and
 * the percentiles taken after the batch, so nothing depends on --jobs.
 * The draws' curves are searched in chunks of CHUNK_BLOCKS so that the
 * memory stays bounded however many draws are asked for.
 */
#include "sim/study/plan.h"
#include "sim/base/msg.h"
#include "sim/base/rng.h"
#include "sim/engine/run.h"

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EIGEN_TOL                                                              \
    1e-9                 /* an eigenvalue below 0 by at most this share of
                            the largest is rounding: taken as 0 */
#define CHUNK_BLOCKS 512 /* curves of one batch of draws */
#define SET_MAX (SETFILE_KEY_MAX + MSG_NUM_MAX + 2) /* "key=value" */
#define SCAN_MAX 128 /* points of PLAN_BANDWIDTH_SCAN, at most */

/* ---- percentiles ------------------------------------------------------- */

double plan_percentile(const double *sorted, int n, double p) {
    double h = (n - 1) * p;
    int j = (int)floor(h);
    if (j >= n - 1) return sorted[n - 1];
    if (j < 0) return sorted[0];
    double f = h - j;
    /* equal ends (two infinities too) and a whole h need no difference */
    if (f == 0 || sorted[j + 1] == sorted[j]) return sorted[j];
    return sorted[j] + f * (sorted[j + 1] - sorted[j]);
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts x[0..n-1] and gives its low, middle and high percentiles. */
static void spread(double *x, int n, double *lo, double *mid, double *hi) {
    qsort(x, (size_t)n, sizeof *x, by_value);
    *lo = plan_percentile(x, n, PLAN_P_LOW);
    if (mid) *mid = plan_percentile(x, n, PLAN_P_MID);
    *hi = plan_percentile(x, n, PLAN_P_HIGH);
}

static void gbps_text(double v, int below, char out[PLAN_CELL_MAX]) {
    if (isinf(v)) snprintf(out, PLAN_CELL_MAX, "> %g", PLAN_MAX_GBPS);
    else if (below && v <= PLAN_MIN_GBPS)
        snprintf(out, PLAN_CELL_MAX, "<= %g", PLAN_MIN_GBPS);
    else snprintf(out, PLAN_CELL_MAX, "%.4g", v);
}

void plan_interval_text(const plan_interval *x, char low[PLAN_CELL_MAX],
                        char high[PLAN_CELL_MAX]) {
    gbps_text(x->low, x->below, low);
    gbps_text(x->high, x->below, high);
}

/* ---- one curve: a method's scenario, its overrides, its seed ---------- */

typedef struct {
    table_scenario sc; /* the method's, its sets maybe a draw's */
    int reseed;        /* 1: run with seed, not the scenario's */
    uint64_t seed;
} curve;

/* table_cu_fn of a curve: v is the bandwidth. */
static int curve_cu(void *ctx, double v, double *cu, char *err, size_t errlen) {
    const curve *c = ctx;
    scn_config cfg;
    int rc = table_scenario_load(&c->sc, v, &cfg, err, errlen);
    if (rc) return rc;
    if (c->reseed) cfg.seed = c->seed;
    run_result r;
    if ((rc = run_simulate(&cfg, NULL, &r, err, errlen))) return rc;
    *cu = r.compute_utilization;
    return 0;
}

/* Does the scenario draw random numbers that its seed decides? */
static int draws_random(const scn_config *c) {
    return (c->faults.mtbf_s > 0 && !c->trace_path[0]) ||
           (c->straggler_prob > 0 && c->straggler_prob < 1 &&
            c->straggler_slowdown > 1);
}

/* Each method's randomness and seed, from its config at the fitted
 * values. */
static int methods_of(const table_scenario *bw, int n, plan_result *out,
                      char *err, size_t errlen) {
    for (int m = 0; m < n; m++) {
        scn_config cfg;
        int rc = table_scenario_load(&bw[m], PLAN_MIN_GBPS, &cfg, err, errlen);
        if (rc) return rc;
        out->method[m].random = draws_random(&cfg);
        out->method[m].seed = cfg.seed;
    }
    return 0;
}

/* ---- the fit's draws --------------------------------------------------- */

/* L = V diag(sqrt l), row-major nfit x nfit, of the fit's covariance
 * V diag(l) V^T.  An input error when it is not positive semi-definite
 * beyond rounding. */
static int fit_factor(const setfile *f, double *L, char *err, size_t errlen) {
    int n = f->nfit;
    double a[SETFILE_MAX_FIT * SETFILE_MAX_FIT], v[SETFILE_MAX_FIT];
    double vec[SETFILE_MAX_FIT * SETFILE_MAX_FIT];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) a[i * n + j] = f->fit_cov[i][j];
    gsl_matrix_view A = gsl_matrix_view_array(a, (size_t)n, (size_t)n);
    gsl_matrix_view V = gsl_matrix_view_array(vec, (size_t)n, (size_t)n);
    gsl_vector_view l = gsl_vector_view_array(v, (size_t)n);
    gsl_eigen_symmv_workspace *ws = gsl_eigen_symmv_alloc((size_t)n);
    if (!ws) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    gsl_eigen_symmv(&A.matrix, &l.vector, &V.matrix, ws);
    gsl_eigen_symmv_free(ws);
    gsl_eigen_symmv_sort(&l.vector, &V.matrix, GSL_EIGEN_SORT_VAL_DESC);
    double scale = 0;
    for (int k = 0; k < n; k++) scale = fmax(scale, fabs(v[k]));
    for (int k = 0; k < n; k++) {
        if (v[k] < -EIGEN_TOL * scale)
            return msg_set(err, errlen, MSG_EINPUT,
                           "%s: fit.covariance: not positive semi-definite "
                           "(an eigenvalue is %g; expected >= 0)",
                           f->path, v[k]);
        double s = sqrt(fmax(v[k], 0));
        for (int i = 0; i < n; i++) L[i * n + k] = vec[i * n + k] * s;
    }
    return 0;
}

/* The overrides of one draw x[0..nfit-1] into sets[] (room for
 * spec->nset + nfit), "key=x" written in buf (nfit x SET_MAX bytes) and
 * put right after the file's own overrides.  Returns their count. */
static int draw_sets(const plan_spec *spec, const setfile *f, const double *x,
                     const char **sets, char *buf) {
    int n = 0, from = f->nset < spec->nset ? f->nset : spec->nset;
    for (int i = 0; i < from; i++) sets[n++] = spec->sets[i];
    for (int k = 0; k < f->nfit; k++) {
        char num[MSG_NUM_MAX], *kv = buf + (size_t)k * SET_MAX;
        snprintf(kv, SET_MAX, "%s=%s", f->fit_key[k], msg_number(x[k], num));
        sets[n++] = kv;
    }
    for (int i = from; i < spec->nset; i++) sets[n++] = spec->sets[i];
    return n;
}

/* Whether every method loads with the draw x: 1 yes, 0 a key out of its
 * range (the loader's message in err), or the loader's other code. */
static int draw_loads(const plan_spec *spec, const setfile *f,
                      const table_scenario *bw, int nm, const double *x,
                      const char **sets, char *buf, char *err, size_t errlen) {
    int ns = draw_sets(spec, f, x, sets, buf);
    for (int m = 0; m < nm; m++) {
        table_scenario sc = bw[m];
        sc.sets = sets;
        sc.nset = ns;
        scn_config cfg;
        int rc = table_scenario_load(&sc, PLAN_MIN_GBPS, &cfg, err, errlen);
        if (rc == MSG_EINPUT) return 0;
        if (rc) return rc;
    }
    return 1;
}

/* The draws x[k * nfit ..], k = 0..N-1 (plan.h: one stream, each draw
 * made again until every method loads with it), and the redraws. */
static int draw_all(const plan_spec *spec, const setfile *f,
                    const table_scenario *bw, int nm, int N, uint64_t seed,
                    double *x, int64_t *redraws, char *err, size_t errlen) {
    int n = f->nfit, rc = 0;
    double L[SETFILE_MAX_FIT * SETFILE_MAX_FIT], z[SETFILE_MAX_FIT];
    const char **sets = malloc((size_t)(spec->nset + n) * sizeof *sets);
    char *buf = malloc((size_t)n * SET_MAX), why[1024] = "";
    gsl_rng *r = rng_stream(seed, PLAN_RNG_FIT, 0);
    *redraws = 0;
    if (!sets || !buf || !r)
        rc = msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    if (!rc) rc = fit_factor(f, L, err, errlen);
    for (int k = 0; k < N && !rc; k++) {
        double *xk = x + (size_t)k * n;
        for (;;) {
            for (int i = 0; i < n; i++) z[i] = gsl_ran_gaussian(r, 1.0);
            for (int i = 0; i < n; i++) {
                xk[i] = f->fit_value[i];
                for (int j = 0; j < n; j++) xk[i] += L[i * n + j] * z[j];
            }
            int ok =
                draw_loads(spec, f, bw, nm, xk, sets, buf, why, sizeof why);
            if (ok < 0) rc = msg_set(err, errlen, ok, "%s", why);
            if (ok) break;
            if (++*redraws > (int64_t)PLAN_REDRAWS_PER_SAMPLE * N) {
                rc = msg_set(err, errlen, MSG_EINPUT,
                             "%s: fit: more than %d x %d draws of the fitted "
                             "keys outside their ranges (expected most draws "
                             "to load; the last: %s)",
                             f->path, PLAN_REDRAWS_PER_SAMPLE, N, why);
                break;
            }
        }
    }
    if (r) gsl_rng_free(r);
    free(sets);
    free(buf);
    return rc;
}

/* ---- the interval: a least-bandwidth search per draw --------------------- */

/* The draws k0..k1-1 of every method searched as one batch, their least
 * bandwidths into val[m * N + k]. */
static int search_chunk(const plan_spec *spec, const plan_extra *x,
                        const table_scenario *bw, int nm, const double *draws,
                        int k0, int k1, const table_exec *ex, plan_result *out,
                        double *val, char *err, size_t errlen) {
    const setfile *f = x->fit;
    int cnt = k1 - k0, nb = cnt * nm, ns = spec->nset + f->nfit,
        N = out->samples;
    curve *c = malloc((size_t)nb * sizeof *c);
    void **ctx = malloc((size_t)nb * sizeof *ctx);
    const char **sets = malloc((size_t)cnt * ns * sizeof *sets);
    char *buf = malloc((size_t)cnt * f->nfit * SET_MAX);
    table_crossing *least = malloc((size_t)nb * sizeof *least);
    int rc = c && ctx && sets && buf && least
                 ? 0
                 : msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    for (int d = 0; d < cnt && !rc; d++) {
        const char **s = sets + (size_t)d * ns;
        int n = draw_sets(spec, f, draws + (size_t)(k0 + d) * f->nfit, s,
                          buf + (size_t)d * f->nfit * SET_MAX);
        for (int m = 0; m < nm; m++) {
            curve *cv = &c[d * nm + m];
            *cv = (curve){bw[m], out->method[m].random,
                          out->method[m].seed + (uint64_t)(k0 + d)};
            cv->sc.sets = s;
            cv->sc.nset = n;
            ctx[d * nm + m] = cv;
        }
    }
    if (!rc)
        rc = plan_least_search(nb, curve_cu, ctx, spec->target_cu, ex, least,
                               NULL, err, errlen);
    for (int b = 0; b < nb && !rc; b++) {
        plan_interval *iv = &out->method[b % nm].least_interval;
        iv->below += least[b].status == TABLE_AT_START;
        iv->above += least[b].status == TABLE_NOT_REACHED;
        val[(size_t)(b % nm) * N + k0 + b / nm] =
            least[b].status == TABLE_NOT_REACHED ? INFINITY : least[b].v_hi;
    }
    free(c);
    free(ctx);
    free(sets);
    free(buf);
    free(least);
    return rc;
}

static int find_interval(const plan_spec *spec, const plan_extra *x,
                         const table_scenario *bw, int nm, const table_exec *ex,
                         plan_result *out, char *err, size_t errlen) {
    const setfile *f = x->fit;
    int N = out->samples, per = CHUNK_BLOCKS / nm > 0 ? CHUNK_BLOCKS / nm : 1;
    double *draws = malloc((size_t)N * f->nfit * sizeof *draws);
    double *val = malloc((size_t)N * nm * sizeof *val);
    int rc =
        draws && val ? 0 : msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    if (!rc)
        rc = draw_all(spec, f, bw, nm, N, x->sample_seed, draws, &out->redraws,
                      err, errlen);
    for (int k0 = 0; k0 < N && !rc; k0 += per)
        rc = search_chunk(spec, x, bw, nm, draws, k0,
                          k0 + per < N ? k0 + per : N, ex, out, val, err,
                          errlen);
    for (int m = 0; m < nm && !rc; m++) {
        plan_method *pm = &out->method[m];
        plan_interval *iv = &pm->least_interval;
        spread(val + (size_t)m * N, N, &iv->low, NULL, &iv->high);
        iv->mid =
            pm->least.status == TABLE_NOT_REACHED ? INFINITY : pm->least.v_hi;
    }
    free(draws);
    free(val);
    return rc;
}

/* ---- seeds ------------------------------------------------------------- */

/* The runs of one method at nv bandwidths over n seeds, as one batch. */
typedef struct {
    const table_scenario *sc;
    uint64_t seed; /* the scenario's: run i has seed + i % n */
    int n;
    const double *gbps; /* nv */
    double *cu;         /* bandwidth b, seed k: cu[b * n + k] */
} seeds_job;

static int seed_task(void *arg, int i, char *err, size_t errlen) {
    const seeds_job *j = arg;
    curve c = {*j->sc, 1, j->seed + (uint64_t)(i % j->n)};
    return curve_cu(&c, j->gbps[i / j->n], &j->cu[i], err, errlen);
}

static void seed_out(void *arg, int i, void **ptr, size_t *len) {
    const seeds_job *j = arg;
    *ptr = &j->cu[i];
    *len = sizeof *j->cu;
}

/* CU of method pm (its curve sc) at gbps[0..nv-1] over the seeds, into
 * cu (nv x seeds), on ex's threads or runner. */
static int seeds_at(const table_scenario *sc, const plan_method *pm, int n,
                    const double *gbps, int nv, double *cu,
                    const table_exec *ex, char *err, size_t errlen) {
    seeds_job j = {sc, pm->seed, n, gbps, cu};
    if (ex->pr) ex->pr->total += (int64_t)nv * n;
    return table_parallel_on(nv * n, seed_task, seed_out, &j, ex, err, errlen);
}

/* CU over the seeds at every option of every method that draws random
 * numbers; CU itself at the others. */
static int find_seeds(const table_scenario *bw, int nm, const table_exec *ex,
                      plan_result *out, char *err, size_t errlen) {
    int n = out->seeds;
    for (int m = 0; m < nm; m++) {
        plan_method *pm = &out->method[m];
        double gbps[PLAN_MAX_BANDWIDTHS + 1];
        for (int k = 0; k < pm->noptions; k++) {
            plan_option *o = &pm->option[k];
            o->cu_p5 = o->cu_p50 = o->cu_p95 = o->cu;
            gbps[k] = o->gbps;
        }
        if (!pm->random || !pm->noptions) continue;
        double *cu = malloc((size_t)pm->noptions * n * sizeof *cu);
        if (!cu) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
        int rc =
            seeds_at(&bw[m], pm, n, gbps, pm->noptions, cu, ex, err, errlen);
        for (int k = 0; k < pm->noptions && !rc; k++) {
            plan_option *o = &pm->option[k];
            spread(cu + (size_t)k * n, n, &o->cu_p5, &o->cu_p50, &o->cu_p95);
        }
        free(cu);
        if (rc) return rc;
    }
    return 0;
}

/* The curve of the 5th percentile of CU over the seeds: each point one
 * batch of the seeds' runs (so that the solve, which asks for one point
 * at a time, runs on every thread too). */
typedef struct {
    const table_scenario *sc;
    const plan_method *pm;
    int n;
    const table_exec *ex;
} low_curve;

static int low_cu(void *ctx, double v, double *cu, char *err, size_t errlen) {
    const low_curve *lc = ctx;
    double *x = malloc((size_t)lc->n * sizeof *x);
    if (!x) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    int rc = seeds_at(lc->sc, lc->pm, lc->n, &v, 1, x, lc->ex, err, errlen);
    if (!rc) {
        qsort(x, (size_t)lc->n, sizeof *x, by_value);
        *cu = plan_percentile(x, lc->n, PLAN_P_LOW);
    }
    free(x);
    return rc;
}

/* The least bandwidth of lc's 5th percentile: plan's search (its scan,
 * then table_need; AT_START: the first scan point), the scan's points
 * one batch. */
static int low_least(low_curve *lc, double target, table_crossing *out,
                     char *err, size_t errlen) {
    double *grid, *cu = NULL, p5[SCAN_MAX];
    int ng, n = lc->n;
    int rc = table_parse_numbers("plan", PLAN_BANDWIDTH_SCAN, SCAN_MAX, &grid,
                                 &ng, err, errlen);
    if (!rc && !(cu = malloc((size_t)ng * n * sizeof *cu)))
        rc = msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    if (!rc)
        rc = seeds_at(lc->sc, lc->pm, n, grid, ng, cu, lc->ex, err, errlen);
    for (int p = 0; p < ng && !rc; p++) {
        qsort(cu + (size_t)p * n, (size_t)n, sizeof *cu, by_value);
        p5[p] = plan_percentile(cu + (size_t)p * n, n, PLAN_P_LOW);
    }
    table_row row;
    if (!rc)
        rc = table_need(low_cu, lc, target, grid, p5, ng, 1, &row, err, errlen);
    if (!rc) *out = row.exact;
    if (!rc && out->status == TABLE_AT_START) { /* as plan's search says */
        out->v = out->v_hi = grid[0];
        out->cu = out->cu_hi = p5[0];
    }
    free(grid);
    free(cu);
    return rc;
}

static int find_low(const plan_spec *spec, const table_scenario *bw, int nm,
                    const table_exec *ex, plan_result *out, char *err,
                    size_t errlen) {
    for (int m = 0; m < nm; m++) {
        plan_method *pm = &out->method[m];
        pm->least_p5 = pm->least;
        if (!pm->random) continue;
        low_curve lc = {&bw[m], pm, out->seeds, ex};
        int rc = low_least(&lc, spec->target_cu, &pm->least_p5, err, errlen);
        if (rc) return rc;
    }
    return 0;
}

/* ---- the entry --------------------------------------------------------- */

int plan__uncertainty(const plan_spec *spec, const plan_extra *x,
                      const table_scenario *bw, int n, const table_exec *ex,
                      plan_result *out, char *err, size_t errlen) {
    int fit = x->fit && x->fit->nfit > 0;
    if (!fit && x->seeds <= 0) return 0;
    if (x->samples > PLAN_MAX_SAMPLES || x->seeds > PLAN_MAX_SEEDS)
        return msg_set(err, errlen, MSG_EINPUT,
                       "samples and seeds: at most %d each", PLAN_MAX_SAMPLES);
    int rc = methods_of(bw, n, out, err, errlen);
    if (!rc && fit) {
        out->samples = x->samples > 0 ? x->samples : PLAN_SAMPLES;
        out->sample_seed = x->sample_seed;
        out->nfit = x->fit->nfit;
        memcpy(out->fit_key, x->fit->fit_key, sizeof out->fit_key);
        rc = find_interval(spec, x, bw, n, ex, out, err, errlen);
    }
    if (!rc && out->seeds) rc = find_seeds(bw, n, ex, out, err, errlen);
    if (!rc && out->seeds) rc = find_low(spec, bw, n, ex, out, err, errlen);
    return rc;
}
