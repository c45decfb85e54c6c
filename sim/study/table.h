/*
 * table.h -- the bandwidth a scenario needs per compute-utilization
 * threshold (the Streaming DiLoCo paper's Table 4), with exact crossings.
 *
 * Compute utilization CU(v) is simulated with one scenario key (by default
 * network.bandwidth_gbps, every worker's up and down link) set to v on each
 * point of a grid.  For each threshold c the table gives
 *
 *   - the first grid point with CU >= c: the paper's convention, where a
 *     cell is the first point of a 50-point log grid 0.1..1000 Gbit/s;
 *   - the value needed, v*: the least value of the searched range from
 *     which CU >= c at every value the search evaluated (table_need).
 *
 * The search (table_need): the grid; then, between the LAST grid value
 * with CU < c and the next one, the crossing CU(v*) = c, found with GSL's
 * Brent solver on f(x) = CU(10^x) - c over x = log10 v (over v itself when
 * a grid value is <= 0), to 1e-6 relative in v.  CU is piecewise smooth:
 * when Brent's final bracket still holds a step in CU larger than
 * TABLE_JUMP_TOL (or it does not converge), the crossing is found again by
 * bisection as the value nearest the lower end with CU >= c, and the row
 * says so (method "bisection").  Where CU is monotone this is the one
 * crossing.
 *
 * CU need not be monotone: DP's per-layer all-reduces on one
 * non-preemptive stream (reduce_order forward_first) are a list schedule,
 * and a faster link can reorder them for the worse (docs/reproduction.md,
 * "Where CU falls as bandwidth grows").  So CU is also evaluated at
 * TABLE_CHECK_POINTS values evenly inside that grid interval, and when
 * the values evaluated in it (its ends, the solver's, those) show CU
 * falling by more than TABLE_DIP_TOL as v grows, the interval is scanned
 * at steps of at most TABLE_SCAN_STEP (relative; at most TABLE_SCAN_MAX
 * values), and so is each next interval while its scan still shows CU
 * falling.  (With every grid value reaching c, the first interval is
 * scanned when its ends show a fall.)  After any scan, v* is found by
 * bisection between the last value evaluated with CU < c and the next
 * value evaluated: every value evaluated above that one reaches c, and
 * every value bisection adds keeps it so.  Where nothing falls, v* is
 * Brent's root, as if CU were monotone.  A dip that the values evaluated
 * straddle, or narrower than the scan step, is missed; `dilosim table` and
 * `dilosim plan` share this definition (one code, on two grids), so they
 * agree wherever their scans resolve the dips.
 *
 * A CU equal to the threshold counts as reaching it, so on a plateau at
 * exactly c the crossing is its start.  The grid is scanned in the order
 * given.
 *
 * The same machinery serves `dilosim plan`: table_run over any
 * table_cu_fn evaluates many points in parallel (results do not depend on
 * the number of threads), table_need finds the value needed (the least
 * bandwidth of a plan) and table_solve one crossing.
 */
#ifndef DILOSIM_TABLE_H
#define DILOSIM_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/config/scenario.h"

#define TABLE_MAX_THRESHOLDS 64
#define TABLE_MAX_POINTS 100000
#define TABLE_REL_TOL 1e-6 /* crossing tolerance, relative in v */
#define TABLE_JUMP_TOL                                                         \
    1e-4 /* a CU step larger than this inside the
                                converged bracket is a discontinuity */
#define TABLE_DIP_TOL                                                          \
    1e-6 /* a fall of CU larger than this between two
                                values makes the curve non-monotone */
#define TABLE_SCAN_STEP                                                        \
    0.005                   /* the scan of a grid interval where CU
                                 falls: steps of at most 0.5% of the value
                                 (log scale; linear: of the larger end) */
#define TABLE_SCAN_MAX 1000 /* at most this many points per interval */
#define TABLE_CHECK_POINTS                                                     \
    8 /* values looked at inside the bracket of a
                                crossing for a fall of CU */

/*
 * Errors: every function below returns 0 or a negative MSG_E* code
 * (sim/base/msg.h) with a one-line message, and passes the codes of the
 * loader, of run_simulate and of a table_cu_fn through unchanged:
 * MSG_EINPUT is the user's input (exit 2), any other code a runtime
 * failure (exit 1); msg_exit_status maps them.
 */

/* Compute utilization at value v of the swept quantity.  Called from
 * several threads at once.  Returns 0, or a MSG_E* code (MSG_EINPUT: the
 * value or the scenario is invalid) with a one-line message in err. */
typedef int (*table_cu_fn)(void *ctx, double v, double *cu, char *err,
                           size_t errlen);

/* A table_cu_fn context that simulates a scenario file: the variant
 * (NULL: the base) with the overrides `sets`, then "key=v".  With doc
 * (opened by table_docs_open, or scn_doc_open(path, variant, NULL, 0))
 * every load copies that parsed document instead of reading path again;
 * the messages are the same. */
typedef struct {
    const char *path;
    const char *variant;
    const char *const *sets;
    int nset;
    const char *key;
    const scn_doc *doc; /* NULL: read path at every load */
    int full;           /* the loaded configs' `full` (--full) */
} table_scenario;

/* Loads the scenario with key = v (v written by msg_number, so it reads
 * back as the same double).  Returns 0, or the loader's code (MSG_EINPUT,
 * MSG_ENOMEM) and message. */
int table_scenario_load(const table_scenario *s, double v, scn_config *cfg,
                        char *err, size_t errlen);

/* table_scenario_load, and the name of what was loaded in name: the
 * variant's, or for the base the method's ("dp", "diloco", "streaming"). */
int table_scenario_name(const table_scenario *s, double v,
                        char name[SCN_NAME_MAX], scn_config *cfg, char *err,
                        size_t errlen);

/* table_cu_fn over a table_scenario: loads, then run_simulate; either's
 * code is returned unchanged. */
int table_scenario_cu(void *ctx, double v, double *cu, char *err,
                      size_t errlen);

/* Progress: `done` of `total` tasks finished; called from one thread at
 * a time. */
typedef void (*table_progress_fn)(void *ctx, int64_t done, int64_t total);

/* A count of finished tasks shared by the steps of one computation: each
 * task of table_run_progress / table_parallel_progress adds one to done
 * and calls fn(ctx, done, total) (fn NULL: nothing).  The caller sets
 * total to the tasks it expects and may raise it as it learns more. */
typedef struct {
    table_progress_fn fn;
    void *ctx;
    int64_t done, total;
} table_progress;

/* One task finished: adds one to pr->done and calls pr->fn (pr NULL:
 * nothing).  Thread-safe. */
void table_progress_step(table_progress *pr);

/* Where task i of a batch writes its result: the len bytes at *ptr, and
 * nothing else that a later step reads. */
typedef void (*table_out_fn)(void *ctx, int i, void **ptr, size_t *len);

/* A task of a batch: computes index i.  Returns 0, or a MSG_E* code with
 * a one-line message. */
typedef int (*table_task_fn)(void *ctx, int i, char *err, size_t errlen);

/* Runs batches somewhere else than on this process's threads (over the
 * processes of an MPI job, sim/mpi/).  run must do what table_parallel
 * does -- task(ctx, i) once for every i in 0..n-1, no new one after a
 * failure, the lowest failed index's code and message -- and leave every
 * task's out bytes in this process, counting each finished task in pr
 * (table_progress_step; pr may be NULL).  Every process of the job makes
 * the same calls in the same order. */
typedef struct {
    int (*run)(void *self, int n, int jobs, table_task_fn task,
               table_out_fn out, void *ctx, table_progress *pr, char *err,
               size_t errlen);
    void *self;
} table_runner;

/* How the batches of one computation run. */
typedef struct {
    int jobs;                   /* threads; <= 0: pool_cpu_count() */
    const table_runner *runner; /* NULL: this process's threads */
    table_progress *pr;         /* the count of finished tasks, or NULL */
} table_exec;

typedef enum {
    TABLE_FOUND,      /* crossing between two points */
    TABLE_AT_START,   /* every point reaches the threshold (table_need;
                          table_solve never gives it) */
    TABLE_NOT_REACHED /* the last point does not reach it */
} table_status;

typedef enum { TABLE_BRENT, TABLE_BISECTION } table_method;

typedef struct {
    double v, cu;
} table_point;

typedef struct {
    table_status status;
    table_method method; /* TABLE_FOUND only */
    double v, cu;        /* the crossing and CU there: Brent's root (CU
                             within the tolerance of c, either side), or
                             with bisection equal to v_hi, cu_hi */
    double v_hi, cu_hi;  /* the value nearest the crossing known to reach
                             the threshold (within 1e-6 relative of v) */
    int evals;           /* simulations the solve ran (table_need: with
                             its scans) */
    int scans;           /* table_need: grid intervals scanned at
                             TABLE_SCAN_STEP because CU falls there (0:
                             none, the curve looked monotone) */
    table_point fall_from, fall_to; /* scans > 0: the first fall of CU seen
                             in a scanned interval (fall_from.v <
                             fall_to.v, fall_from.cu > fall_to.cu) */
} table_crossing;

/* Finds where CU crosses `threshold` between `below` (cu < threshold) and
 * `reach` (cu >= threshold); either may be the larger value.  log_scale:
 * solve over log10 v (both values > 0).  Tolerance TABLE_REL_TOL relative
 * in v, and on a linear scale also 1e-9 * max(|below.v|, |reach.v|)
 * absolute.  Fills out (status TABLE_FOUND).  Returns 0, fn's error, or
 * MSG_EINPUT when the two points do not bracket a crossing. */
int table_solve(table_cu_fn fn, void *ctx, double threshold, table_point below,
                table_point reach, int log_scale, table_crossing *out,
                char *err, size_t errlen);

/* One row of a table. */
typedef struct {
    double threshold;
    int grid_index;       /* first grid point with CU >= threshold; -1 */
    double grid_value;    /* its value; NAN when none */
    table_crossing exact; /* the value needed (table_need); status
                             AT_START: <= the first grid value;
                             NOT_REACHED: > the last */
} table_row;

/* The value needed to reach threshold c (the header comment's search) on
 * a curve evaluated at grid[0..n-1] (increasing, n >= 1) as cu[0..n-1];
 * fn(ctx, v) gives CU at the other values the search evaluates.
 * log_scale: every grid value is > 0 (solve and scan over log10 v).
 * Fills row: threshold c; grid_index and grid_value, the first grid point
 * with CU >= c (the paper's convention); exact, the value needed (v_hi:
 * CU >= c there and at every value evaluated above it), with status
 * AT_START when every value evaluated reaches c and NOT_REACHED when the
 * last grid value does not (v, cu, v_hi, cu_hi NAN for both).  `dilosim
 * table` (each row) and `dilosim plan` (the least bandwidth) call it.
 * Returns 0, fn's error, or MSG_ENOMEM. */
int table_need(table_cu_fn fn, void *ctx, double c, const double *grid,
               const double *cu, int n, int log_scale, table_row *row,
               char *err, size_t errlen);

/* One variant's table. */
typedef struct {
    char name[SCN_NAME_MAX]; /* the variant, or the method for the base */
    scn_gbit gbit;           /* table_compute: what its Gbit is */
    int npoints;
    double *cu; /* CU at each grid point (npoints, owned) */
    int dip;    /* first grid index where CU falls below the
                                point before (by > TABLE_DIP_TOL); -1 when
                                it never does */
    int nrows;
    table_row row[TABLE_MAX_THRESHOLDS];
} table_block;

/* Evaluates nblocks curves (block b through fn with ctx[b]) at every grid
 * point on `jobs` threads (<= 0: one per online core), then solves every
 * threshold (any count up to TABLE_MAX_THRESHOLDS; 0 only evaluates).
 * Fills blocks[b].npoints, cu (allocated), dip and rows; names are left
 * alone.  Returns 0, or the code and message of the failing evaluation
 * of lowest index (MSG_EINPUT for a bad grid or threshold count).  On
 * failure nothing is left allocated. */
int table_run(int nblocks, table_cu_fn fn, void *const *ctx, const double *grid,
              int npoints, const double *thresholds, int nthresholds, int jobs,
              table_block *blocks, char *err, size_t errlen);

/* Where block b's CU is seen to fall as the value grows: the grid's first
 * dip (values: its grid), else the first fall a row's scan found.  Returns
 * 1 with the two points, or 0 when the curve looked monotone. */
int table_block_fall(const table_block *b, const double *values,
                     table_point *from, table_point *to);

/* The first index k of cu[0..n-1] where the curve goes the wrong way by
 * more than TABLE_DIP_TOL: cu[k] < cu[k-1] when rising (1), cu[k] >
 * cu[k-1] when not (0).  -1 when it never does. */
int table_first_dip(const double *cu, int n, int rising);

/* What table_compute tabulates. */
typedef struct {
    const char *path;            /* scenario file */
    const char *const *variants; /* which ones (nvariants 0: all of
                                        the scenario's, or the base) */
    int nvariants;
    const char *const *sets; /* --set overrides */
    int nset;
    const char *key;    /* swept key, e.g.
                                        "network.bandwidth_gbps" */
    const double *grid; /* points, npoints >= 1 */
    int npoints;
    const double *thresholds; /* each in (0, 1] */
    int nthresholds;
    int jobs;                   /* threads; <= 0: pool_cpu_count() */
    int full;                   /* --full: no fast-forward */
    const table_runner *runner; /* NULL: this process's threads */
} table_spec;

typedef struct {
    int nblocks;
    table_block *block;
} table_result;

/* The whole table of a scenario: the file is read and parsed once per
 * variant (table_docs_open), every variant loaded at the first grid value
 * to check it (which also names the base after its method), then
 * table_run.  Returns 0, or a MSG_E* code with a one-line message; on
 * failure out holds nothing to free. */
int table_compute(const table_spec *spec, table_result *out, char *err,
                  size_t errlen);

/* table_compute, calling progress(ctx, done, total) (from one thread at
 * a time) as its tasks finish: every variant's grid points, then one per
 * variant and threshold. */
int table_compute_progress(const table_spec *spec, table_progress_fn progress,
                           void *ctx, table_result *out, char *err,
                           size_t errlen);

void table_result_free(table_result *r);

/* The variants a command should visit, each opened once: `wanted` (count
 * nwanted) when given, else every variant of the scenario, else one NULL
 * (the base).  names and docs must hold SCN_MAX_VARIANTS; names[i] is
 * wanted[i] or points into *meta; docs[i] is scn_doc_open(path, names[i],
 * NULL, 0) (the overrides are applied at each load).  path "-" reads
 * standard input, once: it then serves one doc only (the base of a
 * scenario without variants, or one --variant), and a second is an input
 * error.  Returns the count, or a MSG_E* code with a message (nothing left
 * open). */
int table_docs_open(const char *path, const char *const *wanted, int nwanted,
                    const char **names, scn_meta *meta, scn_doc **docs,
                    char *err, size_t errlen);

/* Frees docs[0..n-1] (NULL entries allowed). */
void table_docs_free(scn_doc **docs, int n);

/* Parses a grid spec (see grid.h: a comma list, logspace:A:B:N or
 * linspace:A:B:N) into *n finite numbers, strictly increasing, at most
 * max of them, in *out (allocated; free it).  Messages start with label.
 * Returns 0, or MSG_EINPUT (MSG_ENOMEM) with a one-line message. */
int table_parse_numbers(const char *label, const char *spec, int max,
                        double **out, int *n, char *err, size_t errlen);

/* Runs task(ctx, i, ...) for i = 0..n-1 on min(jobs, n) threads of the
 * worker pool (sim/base/pool.h; jobs <= 0: pool_cpu_count()), handing out
 * i in increasing order.  After a
 * failure no new task starts; since every lower i has started by then,
 * the return is deterministic: 0, or the code and message of the failing
 * task of lowest i. */
int table_parallel(int n, int jobs, table_task_fn task, void *ctx, char *err,
                   size_t errlen);

/* table_run and table_parallel as ex says: on its threads or runner,
 * counting their tasks in ex->pr: table_run's are nblocks x npoints
 * evaluations, then nblocks x nthresholds solves.  out says where each
 * task of table_parallel_on writes (needed with a runner). */
int table_run_on(int nblocks, table_cu_fn fn, void *const *ctx,
                 const double *grid, int npoints, const double *thresholds,
                 int nthresholds, const table_exec *ex, table_block *blocks,
                 char *err, size_t errlen);
int table_parallel_on(int n, table_task_fn task, table_out_fn out, void *ctx,
                      const table_exec *ex, char *err, size_t errlen);

/* How a row's crossing was found, as the table and its CSV name it:
 * "brent", "bisection", "scan" (CU falls near it: grid intervals scanned,
 * then bisection; see table_need), "below_grid" (AT_START),
 * "not_reached". */
const char *table_method_name(const table_crossing *x);

/* Bytes of one cell of table_row_text, with the NUL. */
#define TABLE_CELL_MAX 32

/* A row as the readable table prints it, given the grid's values[0..n-1]:
 * first, the first grid value reaching the threshold ("%.1f", the paper's
 * convention; "-" when none does); exact, the crossing ("%#.4g"; "<= V"
 * when the first grid value V already reaches it, "> V" when the last
 * does not); cu, CU at the crossing ("%.4f", or "-"). */
void table_row_text(const table_row *row, const double *values, int n,
                    char first[TABLE_CELL_MAX], char exact[TABLE_CELL_MAX],
                    char cu[TABLE_CELL_MAX]);

#endif
