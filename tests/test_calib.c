/*
 * test_calib.c -- the fit of `dilosim calibrate` (sim/study/calib.h) on
 * measurements made with dilosim itself under known keys.
 *
 * The base (tests/data/calibrate/base.json): two workers at 1 Gbit/s, 10
 * ms one way.  The measurements: ten runs of varied worlds (DP, DiLoCo,
 * Streaming DiLoCo; 2 to 4 workers; other sizes, codecs, bandwidths and
 * latencies), each simulated here with network.efficiency e and
 * network.collective_overhead_ms o set; three warm all-reduces, whose
 * time is a closed form (a ring of R ranks moves S bytes in 2(R - 1)
 * steps, each o + L + (S / R) / (B e), B the link's bytes/s); two
 * streams, L + S / (B e) (no collective, so no o).  Those closed forms
 * are checked against the predictions first.  Then the recovery: from
 * other starting values, the fit finds (e, o) again, to 1e-6 relative
 * without noise, within 3 standard errors with 1% of seeded noise.  Last
 * the edges: a key no row sees, a key at its bound, the default keys, too
 * few rows, a row the loader rejects, the speeds of step times applied
 * first, threads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "check_main.h"
#include "sim/base/msg.h"
#include "sim/engine/run.h"
#include "sim/study/calib.h"

#define BASE "tests/data/calibrate/base.json"
#define NRUNS 10
#define MAXROWS 16

/* The runs' worlds, as a runs CSV's columns give them. */
static const char *const RUNS[NRUNS] = {
    "method.name=dp workers.count=2 model.params=1e6 method.codec=fp32 "
    "steps=10 model.step_time_s=0.05",
    "method.name=dp workers.count=3 model.params=2e6 method.codec=bf16 "
    "steps=8 model.step_time_s=0.1 network.bandwidth_gbps=2 "
    "network.latency_ms=5",
    "method.name=diloco workers.count=2 model.params=2e7 method.codec=fp32 "
    "method.H=5 steps=20 network.latency_ms=20",
    "method.name=diloco workers.count=4 model.params=1e7 method.codec=bf16 "
    "method.H=4 steps=16 model.step_time_s=0.02 network.bandwidth_gbps=0.5",
    "method.name=streaming workers.count=2 model.params=1e7 "
    "method.codec=fp32 method.H=4 method.fragments=2 method.tau=1 steps=16",
    "method.name=streaming workers.count=3 model.params=4e7 "
    "method.codec=bf16 method.H=6 method.fragments=2 method.tau=0 steps=12 "
    "model.step_time_s=0.1 network.bandwidth_gbps=0.2 network.latency_ms=30",
    "method.name=dp workers.count=4 model.params=5e5 method.codec=fp32 "
    "steps=12 model.step_time_s=0.01 network.bandwidth_gbps=5 "
    "network.latency_ms=2",
    "method.name=diloco workers.count=3 model.params=5e6 method.codec=fp32 "
    "method.H=2 steps=10 model.step_time_s=0.03 network.bandwidth_gbps=0.3 "
    "network.latency_ms=15",
    "method.name=streaming workers.count=4 model.params=2e7 "
    "method.codec=bf16 method.H=8 method.fragments=2 method.tau=2 steps=24 "
    "network.bandwidth_gbps=2 network.latency_ms=40",
    "method.name=dp workers.count=2 model.params=1e5 method.codec=fp32 "
    "steps=20 model.step_time_s=0.005 network.bandwidth_gbps=10 "
    "network.latency_ms=1"};

/* The all-reduces (bytes, ranks) and the streams (bytes, streams). */
static const struct {
    double bytes;
    int n;
} ARS[] = {{8e6, 2}, {4e4, 4}, {1.6e7, 4}}, STREAMS[] = {{1e7, 1}, {4e7, 4}};
#define NARS 3
#define NSTREAMS 2

static const char *const KEYS[] = {"network.efficiency",
                                   "network.collective_overhead_ms",
                                   "network.queue_ms"};

/* ---- measurements made by hand ------------------------------------------- */

static meas_row *add_row(meas_set *m, meas_kind kind, int file) {
    meas_row *r = &m->rows[m->nrows++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->file = file;
    r->line = m->nrows + 1; /* after a header line */
    r->sync_blocked_s = r->compute_s = NAN;
    m->file[file].rows++;
    return r;
}

/* The run's wall time with efficiency e and overhead o, simulated here. */
static double run_wall(const meas_row *r, double e, double o) {
    char se[64], so[64], err[1024];
    const char *sets[MEAS_MAX_SETS + 2];
    snprintf(se, sizeof se, "network.efficiency=%.17g", e);
    snprintf(so, sizeof so, "network.collective_overhead_ms=%.17g", o);
    int n = 0;
    sets[n++] = se, sets[n++] = so;
    for (int i = 0; i < r->nset; i++) sets[n++] = r->sets[i];
    scn_config *c = malloc(sizeof *c);
    run_result *res = malloc(sizeof *res);
    ck_assert_msg(!scn_load(BASE, sets, n, c, err, sizeof err), "%s", err);
    ck_assert_msg(!run_simulate(c, NULL, res, err, sizeof err), "%s", err);
    ck_assert(res->finished);
    double s = (double)res->wall_ns * 1e-9;
    free(c);
    free(res);
    return s;
}

/* A warm ring all-reduce at the base's 1 Gbit/s, 10 ms, in s. */
static double allreduce_s(double S, int R, double e, double o) {
    double B = 1e9 / 8 * e;
    int64_t step = llround(o * 1e6) + 10000000 + (int64_t)ceil(S / R / B * 1e9);
    return 2.0 * (R - 1) * (double)step * 1e-9;
}

/* A stream at the base's 1 Gbit/s, 10 ms, in s. */
static double stream_s(double S, double e) {
    return (10000000 + (double)(int64_t)ceil(S / (1e9 / 8 * e) * 1e9)) * 1e-9;
}

/* The measurements of truth (e, o): multiplied by 1 + noise x N(0, 1),
 * seeded. */
static meas_set *measure(double e, double o, double noise) {
    meas_set *m = calloc(1, sizeof *m);
    m->rows = calloc(MAXROWS, sizeof *m->rows);
    m->nfiles = 3;
    m->file[0].path = "runs.csv", m->file[0].format = MEAS_FORMAT_RUNS;
    m->file[1].path = "nccl.txt", m->file[1].format = MEAS_FORMAT_NCCL;
    m->file[2].path = "iperf.json", m->file[2].format = MEAS_FORMAT_IPERF3;
    for (int i = 0; i < NRUNS; i++) {
        meas_row *r = add_row(m, MEAS_RUN, 0);
        char buf[512], *save = NULL;
        snprintf(buf, sizeof buf, "%s", RUNS[i]);
        for (char *t = strtok_r(buf, " ", &save); t;
             t = strtok_r(NULL, " ", &save))
            snprintf(r->sets[r->nset++], MEAS_SET_MAX, "%s", t);
        r->measured_s = run_wall(r, e, o);
    }
    for (int i = 0; i < NARS; i++) {
        meas_row *r = add_row(m, MEAS_ALLREDUCE, 1);
        r->bytes = ARS[i].bytes, r->ranks = ARS[i].n;
        r->measured_s = allreduce_s(r->bytes, r->ranks, e, o);
    }
    for (int i = 0; i < NSTREAMS; i++) {
        meas_row *r = add_row(m, MEAS_STREAM, 2);
        r->bytes = STREAMS[i].bytes, r->streams = STREAMS[i].n;
        r->measured_s = stream_s(r->bytes, e);
    }
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 42);
    for (int i = 0; i < m->nrows; i++)
        m->rows[i].measured_s *= 1 + noise * gsl_ran_gaussian(g, 1);
    gsl_rng_free(g);
    return m;
}

static void free_set(meas_set *m) {
    free(m->rows);
    free(m);
}

/* The starting values: efficiency 0.95, overhead 1 ms. */
static const char *const START[] = {"network.efficiency=0.95",
                                    "network.collective_overhead_ms=1"};

static calib_spec spec_of(const meas_set *m, int nkeys, int jobs) {
    return (calib_spec){.scenario = BASE,
                        .sets = START,
                        .nset = 2,
                        .m = m,
                        .keys = KEYS,
                        .nkeys = nkeys,
                        .jobs = jobs};
}

static void fit(const calib_spec *s, calib_result *r) {
    char err[2048];
    int rc = calib_run(s, r, err, sizeof err);
    ck_assert_msg(rc == 0, "calib_run: %s", err);
}

/* The measurements of truth (e, o) with noise, fitted (nkeys of KEYS, on
 * jobs threads) into *r. */
static meas_set *fit_truth(double e, double o, double noise, int nkeys,
                           int jobs, calib_result *r) {
    meas_set *m = measure(e, o, noise);
    calib_spec s = spec_of(m, nkeys, jobs);
    fit(&s, r);
    return m;
}

static void done(meas_set *m, calib_result *r) {
    calib_free(r);
    free_set(m);
}

/* ---- the predictions against their closed forms ------------------------------- */

START_TEST(predictions_by_hand) {
    meas_set *m = measure(0.85, 3, 0);
    calib_spec s = spec_of(m, 2, 1);
    double v[] = {0.85, 3}, got;
    char err[1024];
    for (int i = 0; i < m->nrows; i++) {
        ck_assert_msg(!calib_predict(&s, i, v, &got, err, sizeof err), "%s",
                      err);
        ck_assert_msg(fabs(got - m->rows[i].measured_s) <= 2e-9,
                      "row %d: predicted %.9f s, by hand %.9f s", i, got,
                      m->rows[i].measured_s);
    }
    /* the base's own values: efficiency 0.95, overhead 1 (its --set) */
    ck_assert(!calib_predict(&s, NRUNS, NULL, &got, err, sizeof err));
    ck_assert(fabs(got - allreduce_s(8e6, 2, 0.95, 1)) <= 2e-9);
    free_set(m);
}
END_TEST

/* ---- recovery ------------------------------------------------------------------ */

START_TEST(recovers_without_noise) {
    calib_result r;
    meas_set *m = fit_truth(0.85, 3, 0, 2, 2, &r);
    ck_assert_int_eq(r.n, NRUNS + NARS + NSTREAMS);
    ck_assert_int_eq(r.fitted, 2);
    ck_assert_int_eq(r.dof, r.n - 2);
    ck_assert_double_eq(r.key[0].start, 0.95);
    ck_assert_double_eq(r.key[1].start, 1);
    ck_assert_msg(fabs(r.key[0].value / 0.85 - 1) < 1e-6, "e %.12g",
                  r.key[0].value);
    ck_assert_msg(fabs(r.key[1].value / 3 - 1) < 1e-6, "o %.12g",
                  r.key[1].value);
    ck_assert(r.rms_fit < 1e-7 && r.rms_base > 0.01);
    ck_assert_int_eq(r.outside, 0);
    fprintf(stderr,
            "no noise: e %.9g (se %.3g), o %.9g ms (se %.3g), %d iterations, "
            "%lld simulations\n",
            r.key[0].value, r.key[0].se, r.key[1].value, r.key[1].se,
            r.iterations, (long long)r.runs);
    done(m, &r);
}
END_TEST

START_TEST(recovers_with_noise) {
    calib_result r;
    meas_set *m = fit_truth(0.85, 3, 0.01, 2, 2, &r);
    const double truth[] = {0.85, 3};
    for (int k = 0; k < 2; k++) {
        const calib_key *key = &r.key[k];
        fprintf(stderr, "1%% noise: %s truth %g, fit %.6g, se %.3g\n", key->key,
                truth[k], key->value, key->se);
        ck_assert_int_eq(key->status, CALIB_FITTED);
        ck_assert_msg(fabs(key->value - truth[k]) <= 3 * key->se,
                      "%s: %g not within 3 x %g of %g", key->key, key->value,
                      key->se, truth[k]);
        ck_assert(key->se > 0 && key->se < 0.1 * key->value);
        ck_assert(fabs(r.cov[k][k] - key->se * key->se) <= 1e-12 * r.cov[k][k]);
    }
    ck_assert_double_eq(r.cov[0][1], r.cov[1][0]);
    ck_assert(r.rms_fit < r.rms_base && r.rms_fit > 0.002 && r.rms_fit < 0.02);
    done(m, &r);
}
END_TEST

/* The same result for 1 and 3 threads, to the bit. */
START_TEST(threads_do_not_matter) {
    meas_set *m = measure(0.85, 3, 0.01);
    calib_spec s1 = spec_of(m, 2, 1), s3 = spec_of(m, 2, 3);
    calib_result a, b;
    fit(&s1, &a);
    fit(&s3, &b);
    ck_assert(!memcmp(a.key, b.key, sizeof a.key));
    ck_assert(!memcmp(a.cov, b.cov, sizeof a.cov));
    ck_assert(!memcmp(a.fit_s, b.fit_s, (size_t)a.n * sizeof *a.fit_s));
    ck_assert_int_eq(a.runs, b.runs);
    calib_free(&a);
    calib_free(&b);
    free_set(m);
}
END_TEST

/* ---- edges ------------------------------------------------------------------------ */

/* network.queue_ms changes nothing on ideal transport (no TCP window
 * either): dropped. */
START_TEST(drops_a_key_no_row_sees) {
    calib_result r;
    meas_set *m = fit_truth(0.85, 3, 0, 3, 2, &r);
    ck_assert_int_eq(r.key[2].status, CALIB_DROPPED);
    ck_assert_str_eq(r.key[2].why,
                     "no effect on these measurements: every prediction is "
                     "the same with it 0.1% higher or lower");
    ck_assert(isnan(r.key[2].se));
    ck_assert_int_eq(r.fitted, 2);
    ck_assert(fabs(r.key[0].value / 0.85 - 1) < 1e-6);
    ck_assert_double_eq(r.cov[2][2], 0);
    done(m, &r);
}
END_TEST

/* Efficiency 1 is its upper bound: the fit ends there, fixes it, fits the
 * overhead alone. */
START_TEST(fixes_a_key_at_its_bound) {
    calib_result r;
    meas_set *m = fit_truth(1.0, 3, 0, 2, 2, &r);
    ck_assert_int_eq(r.key[0].status, CALIB_AT_BOUND);
    ck_assert_double_eq(r.key[0].value, 1);
    ck_assert_double_eq(r.key[0].se, 0);
    ck_assert_double_eq(r.cov[0][0], 0);
    ck_assert_double_eq(r.cov[0][1], 0);
    ck_assert_int_eq(r.key[1].status, CALIB_FITTED);
    ck_assert_msg(fabs(r.key[1].value / 3 - 1) < 1e-6, "o %.12g",
                  r.key[1].value);
    ck_assert_int_eq(r.fitted, 1);
    ck_assert_int_eq(r.dof, r.n - 1);
    ck_assert_int_ge(r.fits, 2);
    done(m, &r);
}
END_TEST

/* The only key fitted ends at its bound: no fit follows to clear the
 * covariance the first left, and the figures are 0 all the same (a fit
 * file's stderr and covariance diagonal agree). */
START_TEST(a_lone_key_at_its_bound_has_no_covariance) {
    calib_result r;
    meas_set *m = fit_truth(1.0, 1, 0.002, 1, 1, &r);
    ck_assert_int_eq(r.key[0].status, CALIB_AT_BOUND);
    ck_assert_int_eq(r.fitted, 0);
    ck_assert_double_eq(r.key[0].se, 0);
    ck_assert_double_eq(r.cov[0][0], 0);
    done(m, &r);
}
END_TEST

/* The default keys: the two of the truth found again, the set-up (truth
 * 0) at its bound, the queue dropped. */
START_TEST(default_keys) {
    meas_set *m = measure(0.85, 3, 0);
    calib_spec s = spec_of(m, 0, 2);
    s.keys = NULL;
    calib_result r;
    fit(&s, &r);
    ck_assert_int_eq(r.nkeys, CALIB_NDEFAULT);
    ck_assert_str_eq(r.key[0].key, "network.efficiency");
    ck_assert_str_eq(r.key[1].key, "network.startup_ms");
    ck_assert_str_eq(r.key[2].key, "network.collective_overhead_ms");
    ck_assert_str_eq(r.key[3].key, "network.queue_ms");
    ck_assert(fabs(r.key[0].value / 0.85 - 1) < 1e-6);
    ck_assert_int_eq(r.key[1].status, CALIB_AT_BOUND);
    ck_assert_double_eq(r.key[1].value, 0);
    ck_assert(fabs(r.key[2].value / 3 - 1) < 1e-6);
    ck_assert_int_eq(r.key[3].status, CALIB_DROPPED);
    done(m, &r);
}
END_TEST

START_TEST(too_few_rows) {
    meas_set *m = measure(0.85, 3, 0);
    m->nrows = 2;
    calib_spec s = spec_of(m, 2, 1);
    calib_result r;
    char err[1024];
    ck_assert_int_eq(calib_run(&s, &r, err, sizeof err), MSG_EINPUT);
    ck_assert_str_eq(err, "2 rows for 2 keys: the fit needs more rows than "
                          "keys (one at least for the standard errors)");
    free_set(m);
}
END_TEST

START_TEST(bad_keys) {
    meas_set *m = measure(0.85, 3, 0);
    calib_spec s = spec_of(m, 1, 1);
    calib_result r;
    char err[1024];
    const char *unknown[] = {"network.eficiency"};
    s.keys = unknown;
    ck_assert_int_eq(calib_run(&s, &r, err, sizeof err), MSG_EINPUT);
    const char *want = "--fit network.eficiency: unknown key (did you mean "
                       "network.efficiency? expected one of: ";
    ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
    const char *word[] = {"network.transport"};
    s.keys = word;
    ck_assert_int_eq(calib_run(&s, &r, err, sizeof err), MSG_EINPUT);
    ck_assert_msg(strstr(err, "--fit network.transport: ") == err, "%s", err);
    const char *count[] = {"workers.count"};
    s.keys = count;
    ck_assert_int_eq(calib_run(&s, &r, err, sizeof err), MSG_EINPUT);
    ck_assert_str_eq(err, "--fit workers.count: not a key of one number "
                          "(expected a key such as network.efficiency)");
    const char *twice[] = {"network.efficiency", "network.efficiency"};
    s.keys = twice, s.nkeys = 2;
    ck_assert_int_eq(calib_run(&s, &r, err, sizeof err), MSG_EINPUT);
    ck_assert_str_eq(err, "--fit network.efficiency: given twice");
    free_set(m);
}
END_TEST

/* A row's world the loader rejects: its message, after the row. */
START_TEST(bad_row) {
    meas_set *m = measure(0.85, 3, 0);
    meas_row *r = &m->rows[3];
    snprintf(r->sets[r->nset++], MEAS_SET_MAX, "method.H=0");
    calib_spec s = spec_of(m, 2, 2);
    calib_result res;
    char err[1024];
    ck_assert_int_eq(calib_run(&s, &res, err, sizeof err), MSG_EINPUT);
    ck_assert_msg(!strncmp(err, "runs.csv:5: method.H: ", 22), "%s", err);
    free_set(m);
}
END_TEST

/* The step times' estimates go before the row's own columns: a row
 * without step_time_s takes the log's, and the speeds apply. */
START_TEST(speeds_apply_first) {
    meas_set *m = measure(0.85, 3, 0);
    meas_row *r = &m->rows[2]; /* diloco, 2 workers, the base's 0.05 s */
    meas_speeds sp = {.workers = 2,
                      .step_time_s = 0.07,
                      .speed = {1, 0.8},
                      .straggler_prob = 0,
                      .straggler_slowdown = 1};
    calib_spec s = spec_of(m, 2, 1);
    s.speeds = &sp;
    double v[] = {0.85, 3}, got;
    char err[1024];
    ck_assert_msg(!calib_predict(&s, 2, v, &got, err, sizeof err), "%s", err);
    snprintf(r->sets[r->nset++], MEAS_SET_MAX, "model.step_time_s=0.07");
    snprintf(r->sets[r->nset++], MEAS_SET_MAX, "workers.speed=[1, 0.8]");
    ck_assert_double_eq(got, run_wall(r, 0.85, 3));
    ck_assert(got > m->rows[2].measured_s);
    free_set(m);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("calib");
    TCase *tc = tcase_create("calib");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, predictions_by_hand);
    tcase_add_test(tc, recovers_without_noise);
    tcase_add_test(tc, recovers_with_noise);
    tcase_add_test(tc, threads_do_not_matter);
    tcase_add_test(tc, drops_a_key_no_row_sees);
    tcase_add_test(tc, fixes_a_key_at_its_bound);
    tcase_add_test(tc, a_lone_key_at_its_bound_has_no_covariance);
    tcase_add_test(tc, default_keys);
    tcase_add_test(tc, too_few_rows);
    tcase_add_test(tc, bad_keys);
    tcase_add_test(tc, bad_row);
    tcase_add_test(tc, speeds_apply_first);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
