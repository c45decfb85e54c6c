/*
 * test_plan_interval.c -- how sure the plan is: the interval of the least
 * bandwidth over the draws of a fit, and CU over the seeds, against the
 * same draws and runs made here.
 *
 * The fit is test_plan.c's closed form (tests/data/table/one_layer_dp.json:
 * one layer, DP, two workers, t = 0.1 s steps, a ring all-reduce of S =
 * 2e6 bytes, no latency) with network.efficiency e fitted: the payload
 * moves at e x the line rate, so
 *
 *     CU = t / (t + S*8 / (b*1e9*e)),  least b = S*8*c / (t*(1-c)*1e9*e)
 *
 * (3.04 / e Gbit/s for c = 0.95).  The test draws e as plan.h says (one
 * stream rng_stream(seed, PLAN_RNG_FIT, 0), gsl_ran_gaussian, a draw
 * outside (0, 1] drawn again), takes each draw's closed-form least
 * bandwidth and the type 7 percentiles by hand, and compares.
 *
 * The seeds: tests/data/plan/failures.json (DiLoCo with failures), whose
 * CU at an option over seeds 5 + k is run here one seed at a time.
 */
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "fork_runner.h"
#include "sim/base/msg.h"
#include "sim/base/rng.h"
#include "sim/engine/run.h"
#include "sim/study/plan.h"

#define DP "tests/data/table/one_layer_dp.json"
#define FAILURES "tests/data/plan/failures.json"
#define TARGET 0.95

static void ck_rel(double got, double want, double tol) {
    ck_assert_msg(fabs(got / want - 1) <= tol, "%.10g, expected %.10g", got,
                  want);
}

/* A fit of network.efficiency at e with standard error se, as
 * setfile_load would fill it; its one override is f->sets[0]. */
static void fit_efficiency(setfile *f, char *set, double e, double se) {
    memset(f, 0, sizeof *f);
    f->path = "fit.json";
    snprintf(set, 64, "network.efficiency=%.17g", e);
    f->nset = 1;
    f->sets[0] = set;
    f->nfit = 1;
    snprintf(f->fit_key[0], SETFILE_KEY_MAX, "network.efficiency");
    f->fit_value[0] = e;
    f->fit_stderr[0] = se;
    f->fit_cov[0][0] = se * se;
}

/* plan_compute_extra of path with x, on jobs threads or through runner
 * (NULL: none); rc its code. */
static plan_result *plan_on(const char *path, double target,
                            const char *const *sets, int nset,
                            const plan_extra *x, int jobs,
                            const table_runner *runner, int *rc, char *err) {
    plan_spec spec = {path, NULL, 0, sets, nset, target, NULL, jobs, 0, runner};
    plan_result *r = malloc(sizeof *r);
    ck_assert_ptr_nonnull(r);
    *rc = plan_compute_extra(&spec, x, NULL, NULL, r, err, 1024);
    return r;
}

static plan_result *plan_rc(const char *path, double target,
                            const char *const *sets, int nset,
                            const plan_extra *x, int jobs, int *rc, char *err) {
    return plan_on(path, target, sets, nset, x, jobs, NULL, rc, err);
}

static plan_result *plan_x(const char *path, double target,
                           const char *const *sets, int nset,
                           const plan_extra *x, int jobs) {
    char err[1024];
    int rc;
    plan_result *r = plan_rc(path, target, sets, nset, x, jobs, &rc, err);
    ck_assert_msg(rc == 0, "plan: %s", err);
    return r;
}

/* The plan of DP with a fit of efficiency (e, se), n draws, seed s. */
static plan_result *fit_plan(double e, double se, int n, uint64_t s, int jobs) {
    static setfile f;
    static char set[64];
    fit_efficiency(&f, set, e, se);
    plan_extra x = {.fit = &f, .samples = n, .sample_seed = s};
    const char *sets[] = {f.sets[0]};
    return plan_x(DP, TARGET, sets, 1, &x, jobs);
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Type 7 by hand: h = (n-1) p, between the order statistics around h. */
static double type7(const double *sorted, int n, double p) {
    double h = (n - 1) * p, lo = floor(h);
    int j = (int)lo;
    if (j + 1 >= n) return sorted[n - 1];
    return sorted[j] + (h - lo) * (sorted[j + 1] - sorted[j]);
}

START_TEST(percentile_type_7) {
    const double x[] = {1, 2, 3, 4}, y[] = {1, 2, 3, INFINITY};
    ck_assert_double_eq_tol(plan_percentile(x, 4, 0.05), 1.15, 1e-12);
    ck_assert_double_eq_tol(plan_percentile(x, 4, 0.95), 3.85, 1e-12);
    ck_assert_double_eq(plan_percentile(x, 4, 0.5), 2.5);
    ck_assert_double_eq(plan_percentile(x, 4, 0), 1);
    ck_assert_double_eq(plan_percentile(x, 4, 1), 4);
    ck_assert_double_eq(plan_percentile(x, 1, 0.95), 1);
    ck_assert(isinf(plan_percentile(y, 4, 0.95)));
    ck_assert_double_eq(plan_percentile(y, 4, 2.0 / 3), 3);
    const double z[] = {INFINITY, INFINITY};
    ck_assert(isinf(plan_percentile(z, 2, 0.5)));
}
END_TEST

/* With no spread every draw is the fitted value: the same search as the
 * plain answer, so low = mid = high exactly, nothing drawn again. */
START_TEST(zero_covariance_is_the_plain_answer) {
    plan_result *r = fit_plan(0.8, 0, 20, 1, 2);
    const plan_method *m = &r->method[0];
    ck_assert_int_eq(r->samples, 20);
    ck_assert_int_eq(r->nfit, 1);
    ck_assert_str_eq(r->fit_key[0], "network.efficiency");
    ck_assert_int_eq(m->least.status, TABLE_FOUND);
    ck_rel(m->least.v_hi, 3.04 / 0.8, 1e-5);
    ck_assert_double_eq(m->least_interval.mid, m->least.v_hi);
    ck_assert_double_eq(m->least_interval.low, m->least.v_hi);
    ck_assert_double_eq(m->least_interval.high, m->least.v_hi);
    ck_assert_int_eq(r->redraws, 0);
    ck_assert_int_eq(m->random, 0);
    free(r);
}
END_TEST

/* The draws of e made here, and the percentiles of 3.04 / e. */
static void by_hand(double e0, double se, int n, uint64_t seed, double *lo,
                    double *hi, int64_t *redraws) {
    gsl_rng *g = rng_stream(seed, PLAN_RNG_FIT, 0);
    double *b = malloc((size_t)n * sizeof *b);
    ck_assert(g && b);
    *redraws = 0;
    for (int k = 0; k < n; k++) {
        double e;
        while (!((e = e0 + se * gsl_ran_gaussian(g, 1.0)) > 0 && e <= 1))
            ++*redraws;
        b[k] = 2e6 * 8 * TARGET / (0.1 * (1 - TARGET) * 1e9 * e);
    }
    qsort(b, (size_t)n, sizeof *b, by_value);
    *lo = type7(b, n, PLAN_P_LOW);
    *hi = type7(b, n, PLAN_P_HIGH);
    gsl_rng_free(g);
    free(b);
}

/* efficiency 0.8 +- 0.05: the interval of 3.04 / e over the same draws,
 * to the search's tolerance (each draw's least within 1e-6 of its root,
 * on the reaching side). */
START_TEST(one_key_fit_closed_form) {
    double lo, hi;
    int64_t redraws;
    by_hand(0.8, 0.05, 200, 1, &lo, &hi, &redraws);
    plan_result *r = fit_plan(0.8, 0.05, 200, 1, 2);
    const plan_interval *iv = &r->method[0].least_interval;
    ck_rel(iv->low, lo, 2e-6);
    ck_rel(iv->high, hi, 2e-6);
    ck_rel(iv->mid, 3.04 / 0.8, 1e-5);
    ck_assert(iv->low < iv->mid && iv->mid < iv->high);
    ck_assert_int_eq(r->redraws, redraws);
    ck_assert_int_eq(iv->below + iv->above, 0);
    free(r);
}
END_TEST

/* efficiency 0.97 +- 0.05: about a quarter of the draws are above 1, the
 * loader rejects them and they are drawn again, as many as here; another
 * seed gives other draws. */
START_TEST(redraws_are_counted) {
    double lo, hi;
    int64_t redraws;
    by_hand(0.97, 0.05, 100, 7, &lo, &hi, &redraws);
    ck_assert(redraws > 10);
    plan_result *r = fit_plan(0.97, 0.05, 100, 7, 2);
    const plan_interval *iv = &r->method[0].least_interval;
    ck_assert_int_eq(r->redraws, redraws);
    ck_assert_int_eq(r->sample_seed, 7);
    ck_rel(iv->low, lo, 2e-6);
    ck_rel(iv->high, hi, 2e-6);
    ck_assert(iv->low >= 3.04 - 1e-5); /* e <= 1 */
    free(r);
}
END_TEST

/* The threads do not change a draw or a search. */
START_TEST(jobs_do_not_matter) {
    plan_result *a = fit_plan(0.9, 0.05, 60, 3, 1);
    plan_result *b = fit_plan(0.9, 0.05, 60, 3, 2);
    const plan_interval *x = &a->method[0].least_interval;
    const plan_interval *y = &b->method[0].least_interval;
    ck_assert_double_eq(x->low, y->low);
    ck_assert_double_eq(x->high, y->high);
    ck_assert_double_eq(x->mid, y->mid);
    ck_assert_int_eq(a->redraws, b->redraws);
    free(a);
    free(b);
}
END_TEST

/* Input errors: a mean so far out of range that no draw loads (past 100
 * x N redraws), and a covariance that is not positive semi-definite. */
START_TEST(fit_input_errors) {
    setfile f;
    char set[64], err[1024];
    int rc;
    fit_efficiency(&f, set, 1, 1e-3);
    f.fit_value[0] = 1.01; /* the override stays 1: the plain plan runs */
    plan_extra x = {.fit = &f, .samples = 5, .sample_seed = 1};
    const char *sets[] = {f.sets[0]};
    free(plan_rc(DP, TARGET, sets, 1, &x, 2, &rc, err));
    ck_assert_int_eq(rc, MSG_EINPUT);
    ck_assert_msg(strstr(err, "fit.json: fit: more than 100 x 5 draws"), "%s",
                  err);
    ck_assert(!strchr(err, '\n'));
    /* two keys, variances 1e-4 and 1e-4, covariance 2e-4: eigenvalues
     * 3e-4 and -1e-4 */
    fit_efficiency(&f, set, 0.8, 0.01);
    f.nfit = 2;
    snprintf(f.fit_key[1], SETFILE_KEY_MAX, "model.step_time_s");
    f.fit_value[1] = 0.1;
    f.fit_cov[1][1] = 1e-4;
    f.fit_cov[0][1] = f.fit_cov[1][0] = 2e-4;
    free(plan_rc(DP, TARGET, sets, 1, &x, 2, &rc, err));
    ck_assert_int_eq(rc, MSG_EINPUT);
    ck_assert_msg(strstr(err, "fit.covariance: not positive semi-definite"),
                  "%s", err);
}
END_TEST

/* A singular covariance: latency fixed (variance 0) beside efficiency.
 * Every draw keeps latency 0, so the interval is the one-key fit's
 * closed form; the second normal of each draw is drawn and unused. */
START_TEST(singular_covariance) {
    setfile f;
    char set[64];
    fit_efficiency(&f, set, 0.8, 0.05);
    f.nfit = 2;
    snprintf(f.fit_key[1], SETFILE_KEY_MAX, "network.latency_ms");
    plan_extra x = {.fit = &f, .samples = 50, .sample_seed = 2};
    const char *sets[] = {f.sets[0]};
    plan_result *r = plan_x(DP, TARGET, sets, 1, &x, 2);
    gsl_rng *g = rng_stream(2, PLAN_RNG_FIT, 0);
    double b[50];
    for (int k = 0; k < 50; k++) {
        double e = 0.8 + 0.05 * gsl_ran_gaussian(g, 1.0);
        gsl_ran_gaussian(g, 1.0);
        b[k] = 3.04 / e;
    }
    gsl_rng_free(g);
    qsort(b, 50, sizeof *b, by_value);
    const plan_interval *iv = &r->method[0].least_interval;
    ck_rel(iv->low, type7(b, 50, PLAN_P_LOW), 2e-6);
    ck_rel(iv->high, type7(b, 50, PLAN_P_HIGH), 2e-6);
    free(r);
}
END_TEST

/* CU of failures.json at gbps with seed, one run. */
static double cu_seed(double gbps, uint64_t seed) {
    char num[MSG_NUM_MAX], kv[64], err[1024];
    snprintf(kv, sizeof kv, "network.bandwidth_gbps=%s", msg_number(gbps, num));
    const char *sets[] = {kv};
    scn_config cfg;
    ck_assert_msg(!scn_load(FAILURES, sets, 1, &cfg, err, sizeof err), "%s",
                  err);
    cfg.seed = seed;
    run_result r;
    ck_assert_msg(!run_simulate(&cfg, NULL, &r, err, sizeof err), "%s", err);
    return r.compute_utilization;
}

/* Nine seeds: the median is the 5th of the nine CUs run here, P5 is
 * x0 + 0.4 (x1 - x0) and P95 x7 + 0.6 (x8 - x7); seed 5 (k = 0) is the
 * plain CU.  The least bandwidth of P5 reaches the target there. */
START_TEST(seeds_closed_form) {
    plan_extra x = {.explain = 1, .seeds = 9};
    plan_result *r = plan_x(FAILURES, 0.7, NULL, 0, &x, 2);
    const plan_method *m = &r->method[0];
    ck_assert_int_eq(r->seeds, 9);
    ck_assert(m->random);
    ck_assert_int_eq(m->seed, 5);
    ck_assert_int_eq(m->noptions, 1);
    const plan_option *o = &m->option[0];
    double cu[9];
    for (int k = 0; k < 9; k++) cu[k] = cu_seed(o->gbps, 5 + (uint64_t)k);
    ck_assert_double_eq(cu[0], o->cu);
    qsort(cu, 9, sizeof *cu, by_value);
    ck_assert_double_eq(o->cu_p50, cu[4]);
    ck_assert_double_eq_tol(o->cu_p5, cu[0] + 0.4 * (cu[1] - cu[0]), 1e-15);
    ck_assert_double_eq_tol(o->cu_p95, cu[7] + 0.6 * (cu[8] - cu[7]), 1e-15);
    ck_assert(o->cu_p5 <= o->cu_p50 && o->cu_p50 <= o->cu_p95);
    ck_assert(o->cu_p5 < o->cu_p95);
    const table_crossing *p5 = &m->least_p5;
    ck_assert_int_eq(p5->status, TABLE_FOUND);
    for (int k = 0; k < 9; k++) cu[k] = cu_seed(p5->v_hi, 5 + (uint64_t)k);
    qsort(cu, 9, sizeof *cu, by_value);
    ck_assert(cu[0] + 0.4 * (cu[1] - cu[0]) >= 0.7);
    ck_assert_double_eq_tol(p5->cu_hi, cu[0] + 0.4 * (cu[1] - cu[0]), 1e-15);
    free(r);
}
END_TEST

/* Without randomness every seed gives the same CU: nothing is simulated,
 * the spreads are CU and the least of P5 is the least. */
START_TEST(seeds_without_randomness) {
    plan_extra x = {.explain = 1, .seeds = 50};
    plan_result *r = plan_x(DP, TARGET, NULL, 0, &x, 2);
    const plan_method *m = &r->method[0];
    ck_assert(!m->random);
    const plan_option *o = &m->option[0];
    ck_assert_double_eq(o->cu_p5, o->cu);
    ck_assert_double_eq(o->cu_p50, o->cu);
    ck_assert_double_eq(o->cu_p95, o->cu);
    ck_assert_double_eq(m->least_p5.v_hi, m->least.v_hi);
    free(r);
}
END_TEST

/* A fit on a scenario with failures: draw k runs with seed 5 + k, so a
 * fit without spread still spreads over the failure draws: draw 0 is the
 * plain answer's seed. */
START_TEST(fit_with_failures_draws_seeds) {
    setfile f;
    char set[64];
    fit_efficiency(&f, set, 1, 0);
    plan_extra x = {.fit = &f, .samples = 9, .sample_seed = 1};
    const char *sets[] = {f.sets[0]};
    plan_result *r = plan_x(FAILURES, 0.7, sets, 1, &x, 2);
    const plan_method *m = &r->method[0];
    ck_assert(m->random);
    ck_assert(m->least_interval.low < m->least_interval.high);
    free(r);
}
END_TEST

/* Through a runner whose tasks run in child processes (as on other MPI
 * ranks): the same interval, spreads and least bandwidth of P5, every
 * search's batches through it. */
START_TEST(a_runner_gives_the_same_answers) {
    int batches = 0, rc;
    table_runner fork = {fork_table_run, &batches};
    setfile f;
    char set[64], err[1024];
    fit_efficiency(&f, set, 1, 0.02);
    plan_extra x = {.explain = 1, .fit = &f, .samples = 3, .seeds = 3};
    const char *sets[] = {f.sets[0]};
    plan_result *a = plan_x(FAILURES, 0.7, sets, 1, &x, 2);
    plan_result *b = plan_on(FAILURES, 0.7, sets, 1, &x, 2, &fork, &rc, err);
    ck_assert_msg(rc == 0, "%s", err);
    const plan_method *p = &a->method[0], *q = &b->method[0];
    ck_assert_double_eq(p->least_interval.low, q->least_interval.low);
    ck_assert_double_eq(p->least_interval.high, q->least_interval.high);
    ck_assert_int_eq(a->redraws, b->redraws);
    ck_assert_double_eq(p->option[0].cu_p5, q->option[0].cu_p5);
    ck_assert_double_eq(p->option[0].cu_p95, q->option[0].cu_p95);
    ck_assert_double_eq(p->least_p5.v_hi, q->least_p5.v_hi);
    ck_assert_int_ge(batches, 6); /* two per search, and the seeds' */
    free(a);
    free(b);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("plan_interval");
    TCase *tc = tcase_create("plan_interval");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, percentile_type_7);
    tcase_add_test(tc, zero_covariance_is_the_plain_answer);
    tcase_add_test(tc, one_key_fit_closed_form);
    tcase_add_test(tc, redraws_are_counted);
    tcase_add_test(tc, jobs_do_not_matter);
    tcase_add_test(tc, fit_input_errors);
    tcase_add_test(tc, singular_covariance);
    tcase_add_test(tc, seeds_closed_form);
    tcase_add_test(tc, seeds_without_randomness);
    tcase_add_test(tc, fit_with_failures_draws_seeds);
    tcase_add_test(tc, a_runner_gives_the_same_answers);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
