/*
 * test_table.c -- bandwidth tables against closed forms and made-up
 * curves.
 *
 * The closed form: one layer, DP, two workers, no latency
 * (tests/data/table/one_layer_dp.json).  A step is t = 0.1 s of compute,
 * then a ring all-reduce of the bf16 gradient, S = 2 * params = 2e6 bytes,
 * that nothing overlaps: 2 ring steps of S/2 bytes at b*1e9/8 bytes/s, so
 *
 *     CU(b) = t / (t + S*8 / (b*1e9))   and   b*(c) = S*8*c / (t*(1-c)*1e9)
 *
 * (up to whole-nanosecond rounding of each ring step).  Made-up curves
 * (table_cu_fn callbacks) cover what a simulated one rarely shows: steps,
 * dips, plateaus, failures.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "fifo_feeder.h"
#include "fork_runner.h"
#include "sim/base/msg.h"
#include "sim/study/plan.h"
#include "sim/engine/run.h"
#include "sim/study/table.h"

#define DATA "tests/data/table/"

static const double paper_thresholds[] = {0.5, 0.8, 0.9, 0.95, 0.99};
#define NTHR 5

/* b*(c) of the closed form, Gbit/s. */
static double b_star(double c, double step_s) {
    return 2e6 * 8 * c / (step_s * (1 - c) * 1e9);
}

/* table_compute of a scenario over a grid spec with the paper's
 * thresholds, variants as given, through runner (NULL: threads). */
static table_result tabulate_on(const char *path, const char *grid_spec,
                                const char *const *variants, int nvariants,
                                int jobs, double **grid, int *npoints,
                                const table_runner *runner) {
    char err[1024];
    ck_assert_msg(!table_parse_numbers("grid", grid_spec, TABLE_MAX_POINTS,
                                       grid, npoints, err, sizeof err),
                  "%s", err);
    table_spec spec = {path,  variants, nvariants,
                       NULL,  0,        "network.bandwidth_gbps",
                       *grid, *npoints, paper_thresholds,
                       NTHR,  jobs,     0,
                       runner};
    table_result r;
    int rc = table_compute(&spec, &r, err, sizeof err);
    ck_assert_msg(rc == 0, "table: %s", err);
    return r;
}

static table_result tabulate(const char *path, const char *grid_spec,
                             const char *const *variants, int nvariants,
                             int jobs, double **grid, int *npoints) {
    return tabulate_on(path, grid_spec, variants, nvariants, jobs, grid,
                       npoints, NULL);
}

/* The crossing is analytic, Brent found it, and the first grid point is
 * the first grid value >= b*. */
static void check_closed_form(const table_block *b, const double *grid,
                              double step_s) {
    for (int i = 0; i < NTHR; i++) {
        const table_row *row = &b->row[i];
        double want = b_star(paper_thresholds[i], step_s);
        ck_assert_int_eq(row->exact.status, TABLE_FOUND);
        ck_assert_int_eq(row->exact.method, TABLE_BRENT);
        ck_assert_msg(fabs(row->exact.v / want - 1) < 1e-5,
                      "c %g: %.9g, expected %.9g", row->threshold, row->exact.v,
                      want);
        ck_assert_double_eq_tol(row->exact.cu, row->threshold, 1e-5);
        ck_assert_msg(row->exact.cu_hi >= row->threshold &&
                          fabs(row->exact.v_hi / want - 1) < 1e-5,
                      "reaching side %.9g", row->exact.v_hi);
        int k = 0;
        while (grid[k] < want) k++;
        ck_assert_int_eq(row->grid_index, k);
        ck_assert_double_eq(row->grid_value, grid[k]);
    }
}

START_TEST(exact_crossing_matches_closed_form) {
    double *grid;
    int n;
    table_result r = tabulate(DATA "one_layer_dp.json", "logspace:-2:3:50",
                              NULL, 0, 2, &grid, &n);
    ck_assert_int_eq(r.nblocks, 1);
    ck_assert_str_eq(r.block[0].name, "dp");
    ck_assert_int_eq(r.block[0].npoints, 50);
    for (int p = 0; p < n; p++) /* the curve itself */
        ck_assert_double_eq_tol(r.block[0].cu[p], 0.1 / (0.1 + 0.016 / grid[p]),
                                1e-7);
    check_closed_form(&r.block[0], grid, 0.1);
    ck_assert_int_eq(r.block[0].dip, -1); /* monotone */
    table_result_free(&r);
    free(grid);
}
END_TEST

START_TEST(every_variant_gets_a_block) {
    double *grid;
    int n;
    table_result r = tabulate(DATA "variants.json", "logspace:-2:3:30", NULL, 0,
                              0, &grid, &n);
    ck_assert_int_eq(r.nblocks, 2);
    ck_assert_str_eq(r.block[0].name, "fast");
    ck_assert_str_eq(r.block[1].name, "slow");
    check_closed_form(&r.block[0], grid, 0.1);
    check_closed_form(&r.block[1], grid, 0.2);
    table_result_free(&r);
    free(grid);

    const char *only[] = {"slow"};
    r = tabulate(DATA "variants.json", "logspace:-2:3:30", only, 1, 1, &grid,
                 &n);
    ck_assert_int_eq(r.nblocks, 1);
    ck_assert_str_eq(r.block[0].name, "slow");
    check_closed_form(&r.block[0], grid, 0.2);
    table_result_free(&r);
    free(grid);
}
END_TEST

/* Checks that a and b hold the same blocks over n grid points, then
 * frees them. */
static void same_tables(table_result *a, table_result *b, int n) {
    ck_assert_int_eq(a->nblocks, b->nblocks);
    for (int k = 0; k < a->nblocks; k++) {
        ck_assert_str_eq(a->block[k].name, b->block[k].name);
        ck_assert_int_eq(a->block[k].dip, b->block[k].dip);
        ck_assert(!memcmp(a->block[k].cu, b->block[k].cu,
                          (size_t)n * sizeof *a->block[k].cu));
        ck_assert(
            !memcmp(a->block[k].row, b->block[k].row, sizeof a->block[k].row));
    }
    table_result_free(a);
    table_result_free(b);
}

START_TEST(results_do_not_depend_on_jobs) {
    double *g1, *g2;
    int n1, n2;
    table_result a = tabulate(DATA "variants.json", "logspace:-1:2:20", NULL, 0,
                              1, &g1, &n1);
    table_result b = tabulate(DATA "variants.json", "logspace:-1:2:20", NULL, 0,
                              2, &g2, &n2);
    same_tables(&a, &b, n1);
    free(g1);
    free(g2);
}
END_TEST

/* b*(0.5) = 0.16, b*(0.99) = 15.84 Gbit/s. */
START_TEST(thresholds_outside_the_grid) {
    double *grid;
    int n;
    table_result r = tabulate(DATA "one_layer_dp.json", "logspace:-2:-1:5",
                              NULL, 0, 0, &grid, &n);
    for (int i = 0; i < NTHR; i++) { /* up to 0.1 Gbit/s: none reached */
        ck_assert_int_eq(r.block[0].row[i].grid_index, -1);
        ck_assert(isnan(r.block[0].row[i].grid_value));
        ck_assert_int_eq(r.block[0].row[i].exact.status, TABLE_NOT_REACHED);
    }
    table_result_free(&r);
    free(grid);
    r = tabulate(DATA "one_layer_dp.json", "4,100,1000", NULL, 0, 0, &grid, &n);
    for (int i = 0; i < 4; i++) { /* 0.5 .. 0.95 at 4 Gbit/s already */
        ck_assert_int_eq(r.block[0].row[i].grid_index, 0);
        ck_assert_int_eq(r.block[0].row[i].exact.status, TABLE_AT_START);
    }
    ck_assert_int_eq(r.block[0].row[4].grid_index, 1);
    ck_assert_int_eq(r.block[0].row[4].exact.status, TABLE_FOUND);
    table_result_free(&r);
    free(grid);
}
END_TEST

START_TEST(bad_scenario_input_is_an_input_error) {
    double grid[] = {1, 10}, thr[] = {0.5};
    char err[1024];
    const char *nope[] = {"nope"};
    table_spec spec = {DATA "variants.json",
                       nope,
                       1,
                       NULL,
                       0,
                       "network.bandwidth_gbps",
                       grid,
                       2,
                       thr,
                       1,
                       1,
                       0,
                       NULL};
    table_result r;
    ck_assert_int_eq(table_compute(&spec, &r, err, sizeof err), MSG_EINPUT);
    ck_assert_msg(strstr(err, "nope"), "%s", err);
    spec.nvariants = 0;
    spec.key = "network.bandwith_gbps";
    ck_assert_int_eq(table_compute(&spec, &r, err, sizeof err), MSG_EINPUT);
    ck_assert_msg(strstr(err, "bandwith"), "%s", err);
    ck_assert_ptr_null(r.block);
}
END_TEST

/* ---- made-up curves ------------------------------------------------------ */

typedef struct {
    int kind;       /* see curve() */
    double fail_at; /* values >= this fail (kind 3) */
} curve_ctx;

/* 0: a step from 0.3 to 0.97 at v = 3;  1: piecewise linear through
 * (1, 0.1) (2, 0.6) (3, 0.3) (4, 0.9) (5, 0.95): a dip;  2: min(1, v/5), a
 * plateau at 1 from v = 5;  3: v/10 but failing at v >= fail_at;  4: a
 * sawtooth as DP's per-layer reductions make one (docs/reproduction.md):
 * v/200 below 100, then 15 teeth 10 wide, each rising from 0.93 to 0.97
 * and falling back, then 0.97 + (v - 250) / 1e4 up to 1.  CU >= 0.95 at
 * every v >= 245, and falls below it in every tooth before. */
static int curve(void *arg, double v, double *cu, char *err, size_t errlen) {
    const curve_ctx *c = arg;
    static const double ys[] = {0.1, 0.6, 0.3, 0.9, 0.95};
    switch (c->kind) {
    case 4:
        *cu = v < 100   ? v / 200
              : v < 250 ? 0.93 + 0.004 * fmod(v - 100, 10)
                        : fmin(1, 0.97 + (v - 250) / 1e4);
        return 0;
    case 0: *cu = v < 3 ? 0.3 : 0.97; return 0;
    case 1: {
        int k = v >= 5 ? 3 : (int)floor(v) - 1;
        *cu = ys[k] + (ys[k + 1] - ys[k]) * (v - (k + 1));
        return 0;
    }
    case 2: *cu = fmin(1, v / 5); return 0;
    default:
        if (v >= c->fail_at) {
            snprintf(err, errlen, "failed at %g", v);
            return -1;
        }
        *cu = v / 10;
        return 0;
    }
}

static table_block run_curve(curve_ctx *c, const double *grid, int n,
                             const double *thr, int nthr, int *rc, char *err) {
    table_block b;
    void *ctx[] = {c};
    memset(&b, 0, sizeof b);
    *rc = table_run(1, curve, ctx, grid, n, thr, nthr, 2, &b, err, 1024);
    return b;
}

START_TEST(a_step_falls_back_to_bisection) {
    curve_ctx c = {0, 0};
    double grid[] = {1, 2, 4, 8}, thr[] = {0.5, 0.97};
    char err[1024];
    int rc;
    table_block b = run_curve(&c, grid, 4, thr, 2, &rc, err);
    ck_assert_msg(rc == 0, "%s", err);
    for (int i = 0; i < 2; i++) {
        const table_crossing *x = &b.row[i].exact;
        ck_assert_int_eq(b.row[i].grid_index, 2);
        ck_assert_int_eq(x->status, TABLE_FOUND);
        ck_assert_int_eq(x->method, TABLE_BISECTION);
        ck_assert_double_eq(x->v, x->v_hi);
        ck_assert(x->v >= 3 && x->v / 3 - 1 < 1e-6);
        ck_assert_double_eq(x->cu, 0.97);
    }
    free(b.cu);
}
END_TEST

/* The value needed is the least from which every grid value reaches the
 * threshold: a later grid point dipping below it moves the crossing past
 * the dip (it used to be the first crossing, 1.8 for 0.5); the first grid
 * value reaching it stays the paper's cell. */
START_TEST(a_dip_gives_the_last_crossing) {
    curve_ctx c = {1, 0};
    double grid[] = {1, 2, 3, 4, 5}, thr[] = {0.5, 0.8, 0.99};
    char err[1024];
    int rc;
    table_block b = run_curve(&c, grid, 5, thr, 3, &rc, err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_int_eq(b.row[0].grid_index, 1);
    ck_assert_double_eq_tol(b.row[0].exact.v, 3 + 1.0 / 3,
                            7e-6); /* 0.3 + 0.6x */
    ck_assert_int_eq(b.row[0].exact.method, TABLE_BRENT);
    ck_assert_int_eq(b.row[0].exact.scans, 0); /* linear above the dip */
    ck_assert_int_eq(b.row[1].grid_index, 3);
    ck_assert_double_eq_tol(b.row[1].exact.v, 3 + 5.0 / 6, 8e-6);
    ck_assert_int_eq(b.row[2].exact.status, TABLE_NOT_REACHED);
    ck_assert_int_eq(b.dip, 2); /* 0.6 at 2, then 0.3 at 3 */
    table_point from, to;
    ck_assert(table_block_fall(&b, grid, &from, &to));
    ck_assert_double_eq(from.v, 2);
    ck_assert_double_eq(to.cu, 0.3);
    free(b.cu);
}
END_TEST

/* Defect: `dilosim table` (the paper's grid) and `dilosim plan` (its
 * 10-per-decade scan) gave two answers to one question where CU is not
 * monotone (DP 1B at 95%: 206.5 and 197.5 Gbit/s), each a crossing in its
 * own bracket.  Both grids now give the least value from which CU stays
 * >= the target, 245 on the sawtooth, though neither grid has a point in
 * the last tooth's dip and Brent's points alone do not see it. */
START_TEST(table_and_plan_grids_agree_on_a_sawtooth) {
    curve_ctx c = {4, 0};
    const char *specs[] = {"logspace:-1:3:50", PLAN_BANDWIDTH_SCAN};
    double thr[] = {0.5, 0.95};
    char err[1024];
    for (int g = 0; g < 2; g++) {
        double *grid;
        int n, rc;
        ck_assert(!table_parse_numbers("grid", specs[g], TABLE_MAX_POINTS,
                                       &grid, &n, err, sizeof err));
        table_block b = run_curve(&c, grid, n, thr, 2, &rc, err);
        ck_assert_msg(rc == 0, "%s", err);
        const table_crossing *x = &b.row[1].exact;
        ck_assert_int_eq(x->status, TABLE_FOUND);
        ck_assert_msg(x->v_hi >= 245 && x->v_hi / 245 - 1 < 2e-6,
                      "%s: %.9g, expected 245", specs[g], x->v_hi);
        ck_assert(x->cu_hi >= 0.95);
        ck_assert_int_gt(x->scans, 0);
        ck_assert_str_eq(table_method_name(x), "scan");
        ck_assert(x->fall_from.v < x->fall_to.v &&
                  x->fall_from.cu > x->fall_to.cu);
        /* 0.5 at the step to the teeth, v = 100: no fall in its bracket,
         * so no scan (the teeth above it are all >= 0.93) */
        ck_assert_int_eq(b.row[0].exact.scans, 0);
        ck_assert_str_eq(table_method_name(&b.row[0].exact), "bisection");
        ck_assert_double_eq_tol(b.row[0].exact.v_hi, 100, 1e-4);
        free(b.cu);
        free(grid);
    }
}
END_TEST

/* The same on a linear grid (it holds 0), and when every grid value
 * reaches the threshold but CU falls between two of them: the scan finds
 * the teeth below it, so the answer is no longer "at the start".  Where
 * no value evaluated shows a fall nothing is scanned: the search sees the
 * curve only at the values it evaluates. */
START_TEST(falls_are_scanned_on_any_grid) {
    curve_ctx c = {4, 0};
    double lin[] = {0, 100, 300}, thr[] = {0.95};
    char err[1024];
    int rc;
    table_block b = run_curve(&c, lin, 3, thr, 1, &rc, err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_int_eq(b.row[0].exact.status, TABLE_FOUND);
    ck_assert_double_eq_tol(b.row[0].exact.v_hi, 245, 245 * 2e-6);
    free(b.cu);
    double high[] = {109.5, 116, 300}; /* 0.968, 0.954, 0.975 */
    b = run_curve(&c, high, 3, thr, 1, &rc, err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_int_eq(b.row[0].grid_index, 0);
    ck_assert_int_eq(b.row[0].exact.status, TABLE_FOUND);
    ck_assert_double_eq_tol(b.row[0].exact.v_hi, 245, 245 * 2e-6);
    free(b.cu);
    double flat[] = {108, 118, 300}; /* 0.962, 0.962, 0.975: no fall seen */
    b = run_curve(&c, flat, 3, thr, 1, &rc, err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_int_eq(b.row[0].exact.status, TABLE_AT_START);
    ck_assert_int_eq(b.row[0].exact.scans, 0);
    free(b.cu);
}
END_TEST

/* A CU equal to the threshold counts as reaching it: on the plateau at 1
 * the crossing is where the plateau starts, not a grid point on it. */
START_TEST(a_plateau_at_the_threshold_gives_its_start) {
    curve_ctx c = {2, 0};
    double grid[] = {1, 2, 4, 8, 16}, thr[] = {1};
    char err[1024];
    int rc;
    table_block b = run_curve(&c, grid, 5, thr, 1, &rc, err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_int_eq(b.row[0].grid_index, 3);
    ck_assert_double_eq_tol(b.row[0].exact.v_hi, 5, 5e-6);
    ck_assert_double_eq(b.row[0].exact.cu_hi, 1);
    free(b.cu);
}
END_TEST

/* A grid with 0 is solved on a linear scale. */
START_TEST(a_linear_grid) {
    curve_ctx c = {3, INFINITY};
    double grid[] = {0, 4, 8}, thr[] = {0.5};
    char err[1024];
    int rc;
    table_block b = run_curve(&c, grid, 3, thr, 1, &rc, err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_double_eq_tol(b.row[0].exact.v, 5, 1e-5);
    free(b.cu);
}
END_TEST

START_TEST(a_failure_reports_the_lowest_point) {
    curve_ctx c = {3, 2.5};
    double grid[] = {1, 2, 3, 4, 5, 6, 7, 8}, thr[] = {0.5};
    char err[1024];
    for (int jobs = 1; jobs <= 4; jobs++) {
        table_block b;
        void *ctx[] = {&c};
        int rc = table_run(1, curve, ctx, grid, 8, thr, 1, jobs, &b, err,
                           sizeof err);
        ck_assert_int_eq(rc, -1);
        ck_assert_str_eq(err, "failed at 3");
        ck_assert_ptr_null(b.cu);
    }
}
END_TEST

/* Through a runner whose tasks run in child processes, last first
 * (fork_runner.h, as on other MPI ranks): the same table as on threads,
 * both batches (grid points, then rows) through it, and a failure is the
 * lowest task's. */
START_TEST(a_runner_gives_the_same_table) {
    int batches = 0;
    table_runner fork = {fork_table_run, &batches};
    double *g1, *g2;
    int n1, n2;
    table_result a = tabulate(DATA "variants.json", "logspace:-1:2:12", NULL, 0,
                              2, &g1, &n1);
    table_result b = tabulate_on(DATA "variants.json", "logspace:-1:2:12", NULL,
                                 0, 2, &g2, &n2, &fork);
    ck_assert_int_eq(batches, 2);
    same_tables(&a, &b, n1);
    free(g1);
    free(g2);

    curve_ctx c = {3, 2.5};
    double grid[] = {1, 2, 3, 4, 5, 6, 7, 8}, thr[] = {0.5};
    char err[1024];
    table_block blk;
    void *ctx[] = {&c};
    table_exec ex = {1, &fork, NULL};
    ck_assert_int_eq(table_run_on(1, curve, ctx, grid, 8, thr, 1, &ex, &blk,
                                  err, sizeof err),
                     -1);
    ck_assert_str_eq(err, "failed at 3");
    ck_assert_ptr_null(blk.cu);
}
END_TEST

START_TEST(grid_and_threshold_lists) {
    double *x;
    int n;
    char err[256];
    ck_assert(!table_parse_numbers("--grid", "logspace:-1:3:50", 100, &x, &n,
                                   err, sizeof err));
    ck_assert_int_eq(n, 50);
    ck_assert_double_eq(x[0], 0.1);
    ck_assert_double_eq(x[49], 1000);
    ck_assert_double_eq_tol(x[22], 6.25055192527397, 1e-13); /* the paper's */
    free(x);
    ck_assert(
        table_parse_numbers("--grid", "1,3,2", 100, &x, &n, err, sizeof err));
    ck_assert_str_eq(err, "--grid: values must increase (2 after 3)");
    ck_assert(
        table_parse_numbers("--grid", "1,dp", 100, &x, &n, err, sizeof err));
    ck_assert(
        table_parse_numbers("--grid", "1,2,3", 2, &x, &n, err, sizeof err));
    ck_assert_ptr_null(x);
}
END_TEST

static const char one_layer_text[] =
    "{\"model\": {\"params\": 1e6, \"layers\": 1, \"step_time_s\": 0.1},\n"
    " \"workers\": {\"count\": 2}, \"method\": {\"name\": \"dp\"},\n"
    " \"network\": {\"bandwidth_gbps\": 10, \"latency_ms\": 0},\n"
    " \"steps\": 20, \"seed\": 1}\n";

/* The scenario is read and parsed once for a whole table (it used to be
 * read again at every point): a FIFO, which can be read once, tabulates,
 * and its writer saw one reader. */
START_TEST(the_scenario_is_read_once) {
    const char *texts[] = {one_layer_text};
    feeder f;
    feeder_start(&f, "scenario.json", texts, 1);
    double grid[] = {0.1, 0.4, 1.6, 6.4}, thr[] = {0.5, 0.9};
    table_spec spec = {f.path, NULL, 0,   NULL, 0, "network.bandwidth_gbps",
                       grid,   4,    thr, 2,    2, 0,
                       NULL};
    table_result r;
    char err[1024];
    int rc = table_compute(&spec, &r, err, sizeof err);
    int served = feeder_stop(&f);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_int_eq(served, 1);
    ck_assert_int_eq(r.nblocks, 1);
    ck_assert_str_eq(r.block[0].name, "dp");
    ck_assert_int_eq(r.block[0].row[0].exact.status, TABLE_FOUND);
    ck_assert_double_eq_tol(r.block[0].row[0].exact.v, b_star(0.5, 0.1),
                            1e-5 * b_star(0.5, 0.1));
    table_result_free(&r);
}
END_TEST

/* Defect (error codes): table_scenario_cu turned every run_simulate error
 * into -1, a runtime failure (exit 1), though the run can fail on the
 * user's input: a fault trace valid when the scenario loaded and garbage
 * when the run reads it again is MSG_EINPUT from run_simulate, and must
 * come back as MSG_EINPUT. */
START_TEST(a_run_input_error_stays_an_input_error) {
    const char *texts[] = {"30 1 down\n90 1 up\n", "1.5x up\n"};
    feeder f;
    feeder_start(&f, "trace.txt", texts, 2);
    char scenario[160], text[1024], err[1024];
    snprintf(scenario, sizeof scenario, "%s/s.json", f.dir);
    snprintf(text, sizeof text,
             "{\"model\": {\"params\": 1e6, \"layers\": 1, "
             "\"step_time_s\": 0.1}, \"workers\": {\"count\": 2}, "
             "\"method\": {\"name\": \"dp\"}, \"faults\": {\"trace\": "
             "\"trace.txt\"}, \"steps\": 20}");
    FILE *sf = fopen(scenario, "w");
    ck_assert_ptr_nonnull(sf);
    fputs(text, sf);
    fclose(sf);
    scn_doc *doc;
    ck_assert_int_eq(scn_doc_open(scenario, NULL, NULL, 0, &doc, err,
                                  sizeof err),
                     0);
    ck_assert_msg(doc != NULL, "%s", err);
    table_scenario sc = {scenario, NULL, NULL, 0, "network.bandwidth_gbps",
                         doc,      0};
    double cu = -1;
    int rc = table_scenario_cu(&sc, 10, &cu, err, sizeof err);
    int served = feeder_stop(&f);
    unlink(scenario);
    rmdir(f.dir);
    scn_doc_free(doc);
    ck_assert_int_eq(served, 2); /* the load, then the run */
    ck_assert_msg(rc == MSG_EINPUT, "rc %d: %s", rc, err);
    ck_assert_int_eq(msg_exit_status(rc), 2);
    ck_assert_msg(strstr(err, "bad time") && !strstr(err, "faults.trace:"),
                  "%s", err);
    ck_assert_double_eq(cu, -1);
}
END_TEST

/* Other codes of a curve pass through table_run unchanged too. */
static int cu_fails_io(void *ctx, double v, double *cu, char *err,
                       size_t errlen) {
    (void)ctx;
    *cu = 0;
    return v > 2 ? msg_set(err, errlen, MSG_EIO, "cannot read at %g", v) : 0;
}

START_TEST(curve_codes_pass_through) {
    double grid[] = {1, 2, 3, 4}, thr[] = {0.5};
    table_block b[1];
    void *ctx[1] = {NULL};
    char err[256];
    ck_assert_int_eq(table_run(1, cu_fails_io, ctx, grid, 4, thr, 1, 1, b, err,
                               sizeof err),
                     MSG_EIO);
    ck_assert_str_eq(err, "cannot read at 3");
    ck_assert_int_eq(table_run(1, cu_fails_io, ctx, grid, 0, thr, 1, 1, b, err,
                               sizeof err),
                     MSG_EINPUT);
}
END_TEST

/* Defect (exact numbers): the "key=value" override was written with
 * %.17g, so a message about the point said "=0.10000000000000001" for the
 * grid value 0.1; msg_number writes the shortest decimal that reads back
 * as the same double, so the point loaded is exactly v and its message
 * says 0.1. */
START_TEST(override_is_the_shortest_round_trip) {
    char err[1024];
    table_scenario sc = {DATA "one_layer_dp.json", NULL, NULL, 0,
                         "network.latency_ms",     NULL, 0};
    scn_config cfg;
    ck_assert_int_eq(table_scenario_load(&sc, -0.1, &cfg, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_msg(strstr(err, "network.latency_ms=-0.1:"), "%s", err);
    /* Values of every kind load as themselves. */
    double *grid;
    int n;
    ck_assert(!table_parse_numbers("grid", "logspace:-3:5:97", 100, &grid, &n,
                                   err, sizeof err));
    const double odd[] = {
        0.1,        1.0 / 3, 2.0 / 3 * 1e-5,     123456789.01234567,
        1e9 - 1e-7, 1e9,     0.30000000000000004};
    sc.key = "network.bandwidth_gbps";
    for (int i = 0; i < n + 7; i++) {
        double v = i < n ? grid[i] : odd[i - n];
        ck_assert_msg(!table_scenario_load(&sc, v, &cfg, err, sizeof err), "%s",
                      err);
        ck_assert_msg(cfg.up_gbps[0] == v && cfg.down_gbps[1] == v,
                      "%.17g loaded as %.17g", v, cfg.up_gbps[0]);
    }
    free(grid);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("table");
    TCase *tc = tcase_create("table");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, exact_crossing_matches_closed_form);
    tcase_add_test(tc, every_variant_gets_a_block);
    tcase_add_test(tc, results_do_not_depend_on_jobs);
    tcase_add_test(tc, thresholds_outside_the_grid);
    tcase_add_test(tc, bad_scenario_input_is_an_input_error);
    tcase_add_test(tc, a_step_falls_back_to_bisection);
    tcase_add_test(tc, a_dip_gives_the_last_crossing);
    tcase_add_test(tc, table_and_plan_grids_agree_on_a_sawtooth);
    tcase_add_test(tc, falls_are_scanned_on_any_grid);
    tcase_add_test(tc, a_plateau_at_the_threshold_gives_its_start);
    tcase_add_test(tc, a_linear_grid);
    tcase_add_test(tc, a_failure_reports_the_lowest_point);
    tcase_add_test(tc, a_runner_gives_the_same_table);
    tcase_add_test(tc, grid_and_threshold_lists);
    tcase_add_test(tc, the_scenario_is_read_once);
    tcase_add_test(tc, a_run_input_error_stays_an_input_error);
    tcase_add_test(tc, curve_codes_pass_through);
    tcase_add_test(tc, override_is_the_shortest_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
