/*
 * table.c -- compute utilization on a grid, first grid points and exact
 * crossings per threshold (see table.h).
 *
 * Three layers: table_parallel hands indices to the worker pool;
 * table_solve finds one crossing (Brent, with a bisection fallback),
 * remembering every CU it computed so that no point is simulated twice;
 * table_run and table_compute put a whole table together.
 */
#include "sim/study/table.h"
#include "sim/base/msg.h"
#include "sim/base/pool.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>

#include "sim/study/grid.h"
#include "sim/engine/run.h"

#define MAX_SETS 520 /* --set overrides plus the ones we add */
#define MAX_ITER 200 /* Brent iterations, bisection steps */
#define MEMO_MAX (2 * MAX_ITER + 4)
#define REACH_EPS 1e-12 /* f >= this where CU >= c: see excess() */

/* ---- parallel for (sim/base/pool.h) ------------------------------------- */

/* Serializes the progress callbacks of every count (a count is used by
 * one computation at a time; the lock only orders its calls). */
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;

void table_progress_step(table_progress *pr) {
    if (!pr || !pr->fn) return;
    pthread_mutex_lock(&progress_lock);
    pr->done++;
    pr->fn(pr->ctx, pr->done, pr->total);
    pthread_mutex_unlock(&progress_lock);
}

typedef struct {
    table_task_fn task;
    void *ctx;
    table_progress *pr;
} int_task;

static int run_int_task(void *ctx, int64_t i, char *err, size_t errlen) {
    const int_task *t = ctx;
    int rc = t->task(t->ctx, (int)i, err, errlen);
    table_progress_step(t->pr);
    return rc;
}

int table_parallel_on(int n, table_task_fn task, table_out_fn out, void *ctx,
                      const table_exec *ex, char *err, size_t errlen) {
    if (ex->runner)
        return ex->runner->run(ex->runner->self, n, ex->jobs, task, out, ctx,
                               ex->pr, err, errlen);
    int_task t = {task, ctx, ex->pr};
    return pool_for(ex->jobs, n, run_int_task, &t, err, errlen);
}

int table_parallel(int n, int jobs, table_task_fn task, void *ctx, char *err,
                   size_t errlen) {
    table_exec ex = {jobs, NULL, NULL};
    return table_parallel_on(n, task, NULL, ctx, &ex, err, errlen);
}

/* ---- a scenario as a CU curve ------------------------------------------ */

int table_scenario_load(const table_scenario *s, double v, scn_config *cfg,
                        char *err, size_t errlen) {
    if (s->nset >= MAX_SETS)
        return msg_set(err, errlen, MSG_EINPUT, "%s: too many --set overrides",
                       s->path);
    const char *sets[MAX_SETS];
    char kv[512], num[MSG_NUM_MAX];
    if (strlen(s->key) > sizeof kv - 32)
        return msg_set(err, errlen, MSG_EINPUT, "%.40s...: key too long",
                       s->key);
    for (int i = 0; i < s->nset; i++) sets[i] = s->sets[i];
    /* the shortest decimal that reads back as v: the point loaded is v */
    snprintf(kv, sizeof kv, "%s=%s", s->key, msg_number(v, num));
    sets[s->nset] = kv;
    int rc = s->doc /* thread-safe on a shared doc */
                 ? scn_doc_load(s->doc, sets, s->nset + 1, cfg, err, errlen)
                 : scn_load_variant(s->path, s->variant, sets, s->nset + 1, cfg,
                                    err, errlen); /* thread-safe */
    cfg->full = s->full;
    return rc;
}

int table_scenario_cu(void *ctx, double v, double *cu, char *err,
                      size_t errlen) {
    scn_config cfg;
    int rc = table_scenario_load(ctx, v, &cfg, err, errlen);
    if (rc) return rc;
    run_result r;
    if ((rc = run_simulate(&cfg, NULL, &r, err, errlen))) return rc;
    *cu = r.compute_utilization;
    return 0;
}

/* ---- one crossing ------------------------------------------------------ */

/* A solve in progress: the curve, the scale, and every point computed. */
typedef struct {
    table_cu_fn fn;
    void *ctx;
    double c; /* threshold */
    int log_scale;
    double epsabs, epsrel; /* gsl_root_test_interval over x */
    int n, evals, rc;
    double x[MEMO_MAX], v[MEMO_MAX], cu[MEMO_MAX];
    char *err;
    size_t errlen;
} solve;

static void remember(solve *s, double x, double v, double cu) {
    if (s->n == MEMO_MAX) return;
    s->x[s->n] = x;
    s->v[s->n] = v;
    s->cu[s->n++] = cu;
}

/* CU at v from fn, which must be finite.  Returns 0 or an error code. */
static int cu_at(table_cu_fn fn, void *ctx, double v, double *cu, char *err,
                 size_t errlen) {
    int rc = fn(ctx, v, cu, err, errlen);
    if (!rc && !isfinite(*cu))
        rc = msg_set(err, errlen, MSG_EFAIL,
                     "compute utilization is not finite at %g", v);
    return rc;
}

/* The value and CU at solver coordinate x, from memory or simulated.
 * Returns 0, or the error code (also kept in s->rc: after a failure
 * nothing more is simulated). */
static int point_at(solve *s, double x, double *v, double *cu) {
    for (int i = 0; i < s->n; i++)
        if (s->x[i] == x) {
            *v = s->v[i];
            *cu = s->cu[i];
            return 0;
        }
    if (s->rc) return s->rc;
    *v = s->log_scale ? pow(10, x) : x;
    s->evals++;
    int rc = cu_at(s->fn, s->ctx, *v, cu, s->err, s->errlen);
    if (rc) return s->rc = rc;
    remember(s, x, *v, *cu);
    return 0;
}

/* CU - c, except that reaching c counts as above it (>= REACH_EPS), so a
 * plateau at exactly c is not mistaken for the root: the solvers then
 * converge to the plateau's start. */
static double excess(double cu, double c) {
    return cu >= c ? fmax(cu - c, REACH_EPS) : cu - c;
}

static double gsl_f(double x, void *arg) {
    solve *s = arg;
    double v, cu;
    if (point_at(s, x, &v, &cu))
        return -1; /* any finite value: the
                                               caller stops on s->rc */
    return excess(cu, s->c);
}

static int converged(const solve *s, double a, double b) {
    return gsl_root_test_interval(fmin(a, b), fmax(a, b), s->epsabs,
                                  s->epsrel) == GSL_SUCCESS;
}

/* Brent between xb (below) and xr (reaching).  Returns 1 and fills out
 * when it converged with no CU step larger than TABLE_JUMP_TOL left in its
 * bracket, 0 when bisection should take over, < 0 on error. */
static int solve_brent(solve *s, double xb, double xr, table_crossing *out) {
    gsl_root_fsolver *so = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    if (!so) return msg_set(s->err, s->errlen, MSG_ENOMEM, "out of memory");
    gsl_function F = {gsl_f, s};
    double lo = fmin(xb, xr), hi = fmax(xb, xr);
    gsl_root_fsolver_set(so, &F, lo, hi); /* both ends are remembered */
    int done = 0;
    for (int it = 0; it < MAX_ITER && !done && !s->rc; it++) {
        gsl_root_fsolver_iterate(so);
        lo = gsl_root_fsolver_x_lower(so);
        hi = gsl_root_fsolver_x_upper(so);
        done = converged(s, lo, hi);
    }
    double root = gsl_root_fsolver_root(so);
    gsl_root_fsolver_free(so);
    if (s->rc) return s->rc;
    if (!done) return 0;
    double vlo, culo, vhi, cuhi;
    if (point_at(s, lo, &vlo, &culo) || point_at(s, hi, &vhi, &cuhi) ||
        point_at(s, root, &out->v, &out->cu))
        return s->rc;
    if (fabs(cuhi - culo) > TABLE_JUMP_TOL) return 0;
    /* the reaching end nearest the below side */
    int lo_first = fabs(lo - xb) <= fabs(hi - xb);
    double v1 = lo_first ? vlo : vhi, cu1 = lo_first ? culo : cuhi;
    double v2 = lo_first ? vhi : vlo, cu2 = lo_first ? cuhi : culo;
    int first = cu1 >= s->c;
    out->v_hi = first ? v1 : v2;
    out->cu_hi = first ? cu1 : cu2;
    out->method = TABLE_BRENT;
    return 1;
}

/* Bisection between xb (below) and xr (reaching) to the reaching value
 * nearest the below side. */
static int solve_bisect(solve *s, double xb, double xr, table_crossing *out) {
    double v, cu;
    for (int it = 0; it < MAX_ITER && !converged(s, xb, xr); it++) {
        double xm = 0.5 * (xb + xr);
        if (point_at(s, xm, &v, &cu)) return s->rc;
        if (cu >= s->c) xr = xm;
        else xb = xm;
    }
    if (point_at(s, xr, &out->v, &out->cu)) return s->rc;
    out->v_hi = out->v;
    out->cu_hi = out->cu;
    out->method = TABLE_BISECTION;
    return 0;
}

/* The values a search evaluated: kept sorted by v (pointset_sort). */
typedef struct {
    int n, cap;
    table_point *p;
} pointset;

static int pointset_add(pointset *ps, double v, double cu) {
    if (ps->n == ps->cap) {
        int cap = ps->cap ? 2 * ps->cap : 64;
        table_point *p = realloc(ps->p, (size_t)cap * sizeof *p);
        if (!p) return MSG_ENOMEM;
        ps->p = p;
        ps->cap = cap;
    }
    ps->p[ps->n++] = (table_point){v, cu};
    return 0;
}

static int by_value(const void *a, const void *b) {
    double x = ((const table_point *)a)->v, y = ((const table_point *)b)->v;
    return (x > y) - (x < y);
}

static void pointset_sort(pointset *ps) {
    qsort(ps->p, (size_t)ps->n, sizeof *ps->p, by_value);
}

/* table_solve; bisect: bisection only (no Brent); ps (or NULL): every
 * point the solve knew, its two ends included, appended. */
static int solve_points(table_cu_fn fn, void *ctx, double threshold,
                        table_point below, table_point reach, int log_scale,
                        int bisect, table_crossing *out, pointset *ps,
                        char *err, size_t errlen) {
    if (!(below.cu < threshold && reach.cu >= threshold) ||
        (log_scale && !(below.v > 0 && reach.v > 0)))
        return msg_set(err, errlen, MSG_EINPUT,
                       "no crossing of %g "
                       "between %g (CU %g) and %g (CU %g)",
                       threshold, below.v, below.cu, reach.v, reach.cu);
    solve *s = calloc(1, sizeof *s);
    if (!s) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    *s = (solve){.fn = fn,
                 .ctx = ctx,
                 .c = threshold,
                 .log_scale = log_scale,
                 .err = err,
                 .errlen = errlen};
    if (log_scale) {
        s->epsabs = log10(1 + TABLE_REL_TOL);
    } else {
        s->epsabs = 1e-9 * fmax(fabs(below.v), fabs(reach.v));
        s->epsrel = TABLE_REL_TOL;
    }
    double xb = log_scale ? log10(below.v) : below.v;
    double xr = log_scale ? log10(reach.v) : reach.v;
    remember(s, xb, below.v, below.cu);
    remember(s, xr, reach.v, reach.cu);
    memset(out, 0, sizeof *out);
    out->status = TABLE_FOUND;
    int rc = bisect ? 0 : solve_brent(s, xb, xr, out);
    if (rc == 0) rc = solve_bisect(s, xb, xr, out);
    out->evals = s->evals;
    for (int i = 0; i < s->n && ps && rc >= 0; i++)
        if (pointset_add(ps, s->v[i], s->cu[i]))
            rc = msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    free(s);
    return rc < 0 ? rc : 0;
}

int table_solve(table_cu_fn fn, void *ctx, double threshold, table_point below,
                table_point reach, int log_scale, table_crossing *out,
                char *err, size_t errlen) {
    return solve_points(fn, ctx, threshold, below, reach, log_scale, 0, out,
                        NULL, err, errlen);
}

/* ---- the value needed -------------------------------------------------- */

/* A search in progress (table_need). */
typedef struct {
    table_cu_fn fn;
    void *ctx;
    int log_scale;
    pointset ps; /* every value evaluated at or above the start */
    int evals;
    char *err;
    size_t errlen;
} need;

/* The first fall of CU among the values evaluated in [a, b] (ps sorted):
 * 1 and the two points, or 0 when CU never falls there. */
static int fall_in(const pointset *ps, double a, double b, table_point *from,
                   table_point *to) {
    int lo = 0, hi = ps->n; /* the first point with v >= a */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ps->p[mid].v < a) lo = mid + 1;
        else hi = mid;
    }
    for (int i = lo; i + 1 < ps->n && ps->p[i + 1].v <= b; i++)
        if (ps->p[i + 1].cu < ps->p[i].cu - TABLE_DIP_TOL) {
            *from = ps->p[i];
            *to = ps->p[i + 1];
            return 1;
        }
    return 0;
}

/* Evaluates the interior of [a, b] at `parts` equal steps (over log10 v
 * on a log scale): parts - 1 values. */
static int eval_interior(need *nd, double a, double b, int parts) {
    double xa = nd->log_scale ? log10(a) : a;
    double xb = nd->log_scale ? log10(b) : b;
    for (int i = 1; i < parts; i++) {
        double x = xa + (xb - xa) * i / parts;
        double v = nd->log_scale ? pow(10, x) : x, cu;
        nd->evals++;
        int rc = cu_at(nd->fn, nd->ctx, v, &cu, nd->err, nd->errlen);
        if (!rc && pointset_add(&nd->ps, v, cu))
            rc = msg_set(nd->err, nd->errlen, MSG_ENOMEM, "out of memory");
        if (rc) return rc;
    }
    pointset_sort(&nd->ps);
    return 0;
}

/* Evaluates the interior of [a, b] at steps of at most TABLE_SCAN_STEP
 * (at most TABLE_SCAN_MAX values). */
static int scan_interval(need *nd, double a, double b) {
    double span = nd->log_scale ? log10(b) - log10(a) : b - a;
    double step = nd->log_scale ? log10(1 + TABLE_SCAN_STEP)
                                : TABLE_SCAN_STEP * fmax(fabs(a), fabs(b));
    double parts = ceil(span / step);
    return eval_interior(nd, a, b,
                         parts > TABLE_SCAN_MAX + 1 ? TABLE_SCAN_MAX + 1
                                                    : (int)parts);
}

/* Scans grid interval `from` when the values evaluated in it show CU
 * falling, then each next one while its scan still does; the count and
 * the first fall seen into x. */
static int scan_falls(need *nd, const double *grid, int n, int from,
                      table_crossing *x) {
    table_point f, t;
    int falls =
        from + 1 < n && fall_in(&nd->ps, grid[from], grid[from + 1], &f, &t);
    if (falls) { /* the fall that starts the scan, refined by its first step */
        x->fall_from = f;
        x->fall_to = t;
    }
    for (int j = from; falls && j + 1 < n; j++) {
        int rc = scan_interval(nd, grid[j], grid[j + 1]);
        if (rc) return rc;
        falls = fall_in(&nd->ps, grid[j], grid[j + 1], &f, &t);
        if (falls && !x->scans) {
            x->fall_from = f;
            x->fall_to = t;
        }
        x->scans++;
    }
    return 0;
}

/* After a scan: the crossing between the last value evaluated with CU < c
 * and the next one, by bisection (AT_START when every value reaches c). */
static int solve_last(need *nd, double c, table_crossing *x) {
    int k = nd->ps.n;
    while (k > 0 && nd->ps.p[k - 1].cu >= c) k--;
    table_crossing found = *x;
    if (k == 0) {
        found.status = TABLE_AT_START;
        *x = found;
        return 0;
    }
    int rc = solve_points(nd->fn, nd->ctx, c, nd->ps.p[k - 1], nd->ps.p[k],
                          nd->log_scale, 1, &found, NULL, nd->err, nd->errlen);
    if (rc) return rc;
    found.evals += nd->evals;
    found.scans = x->scans;
    found.fall_from = x->fall_from;
    found.fall_to = x->fall_to;
    *x = found;
    return 0;
}

int table_need(table_cu_fn fn, void *ctx, double c, const double *grid,
               const double *cu, int n, int log_scale, table_row *row,
               char *err, size_t errlen) {
    int first = 0, last = n - 1;
    while (first < n && !(cu[first] >= c)) first++;
    while (last >= 0 && cu[last] >= c) last--;
    *row = (table_row){.threshold = c,
                       .grid_index = first < n ? first : -1,
                       .grid_value = first < n ? grid[first] : NAN};
    table_crossing *x = &row->exact;
    x->v = x->cu = x->v_hi = x->cu_hi = NAN;
    x->status = last < 0 ? TABLE_AT_START : TABLE_NOT_REACHED;
    if (last == n - 1) return 0;
    need nd = {.fn = fn,
               .ctx = ctx,
               .log_scale = log_scale,
               .err = err,
               .errlen = errlen};
    int start = last < 0 ? 0 : last, rc = 0;
    for (int p = start; p < n && !rc; p++)
        if (pointset_add(&nd.ps, grid[p], cu[p]))
            rc = msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    if (!rc && last >= 0) {
        table_point below = {grid[last], cu[last]};
        table_point reach = {grid[last + 1], cu[last + 1]};
        rc = solve_points(fn, ctx, c, below, reach, log_scale, 0, x, &nd.ps,
                          err, errlen);
        nd.evals = x->evals;
        /* a look for falls the solver's points may straddle */
        if (!rc)
            rc = eval_interior(&nd, below.v, reach.v, TABLE_CHECK_POINTS + 1);
    }
    if (!rc) {
        pointset_sort(&nd.ps);
        rc = scan_falls(&nd, grid, n, start, x);
    }
    if (!rc && !x->scans) x->evals = nd.evals;
    if (!rc && x->scans) rc = solve_last(&nd, c, x);
    if (x->status != TABLE_FOUND) x->v = x->cu = x->v_hi = x->cu_hi = NAN;
    free(nd.ps.p);
    return rc;
}

/* ---- a table ----------------------------------------------------------- */

typedef struct {
    int nblocks, npoints, nthresholds, log_scale;
    table_cu_fn fn;
    void *const *ctx;
    const double *grid, *thresholds;
    table_block *blocks;
} run_job;

static int eval_task(void *arg, int i, char *err, size_t errlen) {
    run_job *j = arg;
    int b = i / j->npoints, p = i % j->npoints;
    return j->fn(j->ctx[b], j->grid[p], &j->blocks[b].cu[p], err, errlen);
}

static void eval_out(void *arg, int i, void **ptr, size_t *len) {
    run_job *j = arg;
    *ptr = &j->blocks[i / j->npoints].cu[i % j->npoints];
    *len = sizeof(double);
}

static void row_out(void *arg, int i, void **ptr, size_t *len) {
    run_job *j = arg;
    *ptr = &j->blocks[i / j->nthresholds].row[i % j->nthresholds];
    *len = sizeof(table_row);
}

static int row_task(void *arg, int i, char *err, size_t errlen) {
    run_job *j = arg;
    table_block *blk = &j->blocks[i / j->nthresholds];
    return table_need(j->fn, j->ctx[i / j->nthresholds],
                      j->thresholds[i % j->nthresholds], j->grid, blk->cu,
                      j->npoints, j->log_scale, &blk->row[i % j->nthresholds],
                      err, errlen);
}

static void free_blocks(table_block *blocks, int n) {
    for (int b = 0; b < n; b++) {
        free(blocks[b].cu);
        blocks[b].cu = NULL;
    }
}

int table_run_on(int nblocks, table_cu_fn fn, void *const *ctx,
                 const double *grid, int npoints, const double *thresholds,
                 int nthresholds, const table_exec *ex, table_block *blocks,
                 char *err, size_t errlen) {
    if (npoints < 1 || npoints > TABLE_MAX_POINTS || nthresholds < 0 ||
        nthresholds > TABLE_MAX_THRESHOLDS)
        return msg_set(err, errlen, MSG_EINPUT,
                       "need 1..%d grid points "
                       "and at most %d thresholds",
                       TABLE_MAX_POINTS, TABLE_MAX_THRESHOLDS);
    run_job j = {.nblocks = nblocks,
                 .npoints = npoints,
                 .nthresholds = nthresholds,
                 .log_scale = 1,
                 .fn = fn,
                 .ctx = ctx,
                 .grid = grid,
                 .thresholds = thresholds,
                 .blocks = blocks};
    for (int p = 0; p < npoints; p++) {
        if (!isfinite(grid[p]))
            return msg_set(err, errlen, MSG_EINPUT,
                           "grid value %g is not finite", grid[p]);
        if (grid[p] <= 0) j.log_scale = 0;
    }
    for (int b = 0; b < nblocks; b++) {
        blocks[b].npoints = npoints;
        blocks[b].nrows = nthresholds;
        blocks[b].cu = calloc((size_t)npoints, sizeof *blocks[b].cu);
        if (!blocks[b].cu) {
            free_blocks(blocks, b);
            return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
        }
    }
    int rc = table_parallel_on(nblocks * npoints, eval_task, eval_out, &j, ex,
                               err, errlen);
    for (int b = 0; b < nblocks && !rc; b++)
        blocks[b].dip = table_first_dip(blocks[b].cu, npoints, 1);
    if (!rc && nthresholds)
        rc = table_parallel_on(nblocks * nthresholds, row_task, row_out, &j, ex,
                               err, errlen);
    if (rc) free_blocks(blocks, nblocks);
    return rc;
}

int table_run(int nblocks, table_cu_fn fn, void *const *ctx, const double *grid,
              int npoints, const double *thresholds, int nthresholds, int jobs,
              table_block *blocks, char *err, size_t errlen) {
    table_exec ex = {jobs, NULL, NULL};
    return table_run_on(nblocks, fn, ctx, grid, npoints, thresholds,
                        nthresholds, &ex, blocks, err, errlen);
}

int table_first_dip(const double *cu, int n, int rising) {
    for (int k = 1; k < n; k++)
        if (rising ? cu[k] < cu[k - 1] - TABLE_DIP_TOL
                   : cu[k] > cu[k - 1] + TABLE_DIP_TOL)
            return k;
    return -1;
}

int table_block_fall(const table_block *b, const double *values,
                     table_point *from, table_point *to) {
    if (b->dip >= 0) {
        *from = (table_point){values[b->dip - 1], b->cu[b->dip - 1]};
        *to = (table_point){values[b->dip], b->cu[b->dip]};
        return 1;
    }
    for (int i = 0; i < b->nrows; i++)
        if (b->row[i].exact.scans) {
            *from = b->row[i].exact.fall_from;
            *to = b->row[i].exact.fall_to;
            return 1;
        }
    return 0;
}

void table_docs_free(scn_doc **docs, int n) {
    for (int i = 0; i < n; i++) {
        scn_doc_free(docs[i]);
        docs[i] = NULL;
    }
}

/* docs[i] for names[0..n-1]; standard input serves one only. */
static int open_each(const char *path, const char **names, int n,
                     scn_doc **docs, char *err, size_t errlen) {
    if (n > 1 && !strcmp(path, "-"))
        return msg_set(err, errlen, MSG_EINPUT,
                       "<stdin>: read once, it "
                       "serves one variant only (expected a file for %d "
                       "variants, or one --variant)",
                       n);
    for (int i = 0; i < n; i++) {
        int rc = scn_doc_open(path, names[i], NULL, 0, &docs[i], err, errlen);
        if (rc) {
            table_docs_free(docs, i);
            return rc;
        }
    }
    return n;
}

int table_docs_open(const char *path, const char *const *wanted, int nwanted,
                    const char **names, scn_meta *meta, scn_doc **docs,
                    char *err, size_t errlen) {
    if (nwanted > SCN_MAX_VARIANTS)
        return msg_set(err, errlen, MSG_EINPUT, "at most %d variants",
                       SCN_MAX_VARIANTS);
    for (int i = 0; i < nwanted; i++) {
        for (int j = 0; j < i; j++)
            if (!strcmp(wanted[i], wanted[j]))
                return msg_set(err, errlen, MSG_EINPUT,
                               "--variant %s: given twice", wanted[i]);
        names[i] = wanted[i];
    }
    if (nwanted) return open_each(path, names, nwanted, docs, err, errlen);
    scn_doc *base;
    int rc = scn_doc_open(path, NULL, NULL, 0, &base, err, errlen);
    if (rc) return rc;
    rc = scn_doc_meta(base, meta, err, errlen);
    if (rc || !meta->nvariants) {
        if (rc) scn_doc_free(base);
        names[0] = NULL;
        docs[0] = rc ? NULL : base;
        return rc ? rc : 1;
    }
    scn_doc_free(base);
    if (!strcmp(path, "-"))
        return msg_set(err, errlen, MSG_EINPUT,
                       "<stdin>: read once, it "
                       "serves one variant only (expected a file for its "
                       "%d variants, or one --variant)",
                       meta->nvariants);
    for (int i = 0; i < meta->nvariants; i++) names[i] = meta->variant[i];
    return open_each(path, names, meta->nvariants, docs, err, errlen);
}

void table_result_free(table_result *r) {
    if (r->block) free_blocks(r->block, r->nblocks);
    free(r->block);
    r->block = NULL;
    r->nblocks = 0;
}

int table_scenario_name(const table_scenario *s, double v,
                        char name[SCN_NAME_MAX], scn_config *cfg, char *err,
                        size_t errlen) {
    int rc = table_scenario_load(s, v, cfg, err, errlen);
    if (rc) return rc;
    snprintf(name, SCN_NAME_MAX, "%s",
             s->variant ? s->variant : sched_method_name(cfg->sched.method));
    return 0;
}

int table_compute(const table_spec *spec, table_result *out, char *err,
                  size_t errlen) {
    return table_compute_progress(spec, NULL, NULL, out, err, errlen);
}

int table_compute_progress(const table_spec *spec, table_progress_fn progress,
                           void *pctx, table_result *out, char *err,
                           size_t errlen) {
    memset(out, 0, sizeof *out);
    const char *names[SCN_MAX_VARIANTS];
    scn_doc *docs[SCN_MAX_VARIANTS];
    scn_meta *meta = malloc(sizeof *meta);
    if (!meta) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    int n = table_docs_open(spec->path, spec->variants, spec->nvariants, names,
                            meta, docs, err, errlen);
    if (n < 0) {
        free(meta);
        return n;
    }
    table_scenario sc[SCN_MAX_VARIANTS];
    void *ctx[SCN_MAX_VARIANTS];
    table_block *blocks = NULL;
    int rc = 0;
    if (spec->npoints < 1)
        rc = msg_set(err, errlen, MSG_EINPUT, "the grid is empty");
    else if (!(blocks = calloc((size_t)n, sizeof *blocks)))
        rc = msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    for (int b = 0; b < n && !rc; b++) {
        sc[b] = (table_scenario){spec->path, names[b], spec->sets, spec->nset,
                                 spec->key,  docs[b],  spec->full};
        ctx[b] = &sc[b];
        scn_config cfg;
        rc = table_scenario_name(&sc[b], spec->grid[0], blocks[b].name, &cfg,
                                 err, errlen);
        if (!rc) blocks[b].gbit = cfg.gbit;
    }
    table_progress pr = {progress, pctx, 0,
                         (int64_t)n * (spec->npoints + spec->nthresholds)};
    table_exec ex = {spec->jobs, spec->runner, &pr};
    if (!rc)
        rc = table_run_on(n, table_scenario_cu, ctx, spec->grid, spec->npoints,
                          spec->thresholds, spec->nthresholds, &ex, blocks, err,
                          errlen);
    table_docs_free(docs, n);
    free(meta);
    if (rc) {
        free(blocks);
        return rc;
    }
    out->nblocks = n;
    out->block = blocks;
    return 0;
}

/* Reads the value strings of a grid as numbers into x (l->n of them). */
static int grid_numbers(const char *label, const grid_list *l, double *x,
                        char *err, size_t errlen) {
    for (int i = 0; i < l->n; i++) {
        char *end;
        x[i] = strtod(l->v[i], &end);
        if (*end || !isfinite(x[i]))
            return msg_set(err, errlen, MSG_EINPUT,
                           "%s: '%s' is not a "
                           "finite number",
                           label, l->v[i]);
        if (i > 0 && x[i] <= x[i - 1])
            return msg_set(err, errlen, MSG_EINPUT,
                           "%s: values must "
                           "increase (%s after %s)",
                           label, l->v[i], l->v[i - 1]);
    }
    return 0;
}

int table_parse_numbers(const char *label, const char *spec, int max,
                        double **out, int *n, char *err, size_t errlen) {
    grid_list l;
    *out = NULL;
    *n = 0;
    if (grid_parse(label, spec, &l, err, errlen)) return MSG_EINPUT;
    int rc = 0;
    double *x = NULL;
    if (l.n > max)
        rc = msg_set(err, errlen, MSG_EINPUT, "%s: more than %d values", label,
                     max);
    else if (!(x = malloc((size_t)l.n * sizeof *x)))
        rc = msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", label);
    else rc = grid_numbers(label, &l, x, err, errlen);
    if (!rc) {
        *out = x;
        *n = l.n;
    } else {
        free(x);
    }
    grid_free(&l);
    return rc;
}

const char *table_method_name(const table_crossing *x) {
    switch (x->status) {
    case TABLE_AT_START: return "below_grid";
    case TABLE_NOT_REACHED: return "not_reached";
    default:
        return x->scans                   ? "scan"
               : x->method == TABLE_BRENT ? "brent"
                                          : "bisection";
    }
}

void table_row_text(const table_row *row, const double *values, int n,
                    char first[TABLE_CELL_MAX], char exact[TABLE_CELL_MAX],
                    char cu[TABLE_CELL_MAX]) {
    snprintf(first, TABLE_CELL_MAX, "-");
    snprintf(cu, TABLE_CELL_MAX, "-");
    if (row->grid_index >= 0)
        snprintf(first, TABLE_CELL_MAX, "%.1f", row->grid_value);
    switch (row->exact.status) {
    case TABLE_AT_START:
        snprintf(exact, TABLE_CELL_MAX, "<= %.4g", values[0]);
        break;
    case TABLE_NOT_REACHED:
        snprintf(exact, TABLE_CELL_MAX, "> %.4g", values[n - 1]);
        break;
    default:
        snprintf(exact, TABLE_CELL_MAX, "%#.4g", row->exact.v);
        snprintf(cu, TABLE_CELL_MAX, "%.4f", row->exact.cu);
    }
}
