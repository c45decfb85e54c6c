/*
 * test_faults.c -- failure/repair processes: determinism and independence
 * of the per-worker streams, sample means against MTBF/MTTR, trace files
 * and every trace error message.
 *
 * Fixtures live in tests/data/faults/; the tests run from the repository
 * root (as `make check` does).
 */
#include "sim/engine/faults.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>

#include "sim/base/msg.h"
#include "sim/base/rng.h"
#include "check_main.h"

#define DATA "tests/data/faults/"

static faults_spec random_spec(double mtbf_s, double mttr_s, faults_dist d,
                               double shape) {
    faults_spec s = {mtbf_s, mttr_s, d, shape, NULL};
    return s;
}

static faults *make(const faults_spec *s, int n, uint64_t seed) {
    char err[256] = "";
    faults *f = faults_new(s, n, seed, err, sizeof err);
    ck_assert_msg(f != NULL, "faults_new: %s", err);
    return f;
}

/* ---- names --------------------------------------------------------------- */

START_TEST(test_dist_names) {
    faults_dist d;
    ck_assert_int_eq(faults_parse_dist("exponential", &d), 0);
    ck_assert_int_eq(d, FAULTS_EXPONENTIAL);
    ck_assert_int_eq(faults_parse_dist("weibull", &d), 0);
    ck_assert_int_eq(d, FAULTS_WEIBULL);
    ck_assert_int_eq(faults_parse_dist("gamma", &d), -1);
    ck_assert_str_eq(faults_dist_name(FAULTS_EXPONENTIAL), "exponential");
    ck_assert_str_eq(faults_dist_name(FAULTS_WEIBULL), "weibull");
}
END_TEST

/* ---- random failures ----------------------------------------------------- */

START_TEST(test_no_failures) {
    faults_spec s = random_spec(0, 3600, FAULTS_EXPONENTIAL, 0);
    faults *f = make(&s, 3, 1);
    int64_t a = -7, b = -7;
    for (int w = 0; w < 3; w++)
        for (int i = 0; i < 3; i++)
            ck_assert_int_eq(faults_next(f, w, &a, &b), 0);
    ck_assert_int_eq(faults_next(f, 3, &a, &b), 0); /* out of range */
    ck_assert_int_eq(faults_next(f, -1, &a, &b), 0);
    ck_assert(a == -7 && b == -7);
    faults_free(f);
}
END_TEST

/* Same seed, same sequence; a different seed, a different one. */
START_TEST(test_same_seed) {
    faults_spec s = random_spec(100, 10, FAULTS_WEIBULL, 1.5);
    faults *f = make(&s, 2, 42), *g = make(&s, 2, 42), *h = make(&s, 2, 43);
    int differs = 0;
    for (int i = 0; i < 100; i++) {
        int64_t a, b, c, d, e, k;
        ck_assert_int_eq(faults_next(f, 0, &a, &b), 1);
        ck_assert_int_eq(faults_next(g, 0, &c, &d), 1);
        ck_assert_int_eq(faults_next(h, 0, &e, &k), 1);
        ck_assert(a == c && b == d);
        differs |= a != e;
    }
    ck_assert(differs);
    faults_free(f);
    faults_free(g);
    faults_free(h);
}
END_TEST

/* Worker 1's sequence does not depend on how often worker 0 was drawn. */
START_TEST(test_independent_workers) {
    faults_spec s = random_spec(100, 10, FAULTS_EXPONENTIAL, 0);
    faults *f = make(&s, 2, 7), *g = make(&s, 2, 7);
    int64_t a, b, c, d;
    for (int i = 0; i < 57; i++) faults_next(g, 0, &a, &b);
    for (int i = 0; i < 50; i++) {
        if (i % 3 == 0) faults_next(f, 0, &a, &b);
        ck_assert_int_eq(faults_next(f, 1, &a, &b), 1);
        ck_assert_int_eq(faults_next(g, 1, &c, &d), 1);
        ck_assert(a == c && b == d);
    }
    faults_free(f);
    faults_free(g);
}
END_TEST

/* The stream is rng_stream(seed, RNG_FAULTS, w): up then down, each
 * rounded to the nearest ns; the first failure is the first up time. */
START_TEST(test_stream_contract) {
    faults_spec s = random_spec(3600, 600, FAULTS_EXPONENTIAL, 0);
    faults *f = make(&s, 3, 99);
    gsl_rng *r = rng_stream(99, RNG_FAULTS, 2);
    ck_assert_ptr_nonnull(r);
    int64_t t = 0;
    for (int i = 0; i < 10; i++) {
        int64_t up = llround(gsl_ran_exponential(r, 3600) * 1e9);
        int64_t down = llround(gsl_ran_exponential(r, 600) * 1e9);
        int64_t a, b;
        ck_assert_int_eq(faults_next(f, 2, &a, &b), 1);
        ck_assert_int_eq(a, t + up);
        ck_assert_int_eq(b, t + up + down);
        t = b;
    }
    gsl_rng_free(r);
    faults_free(f);
}
END_TEST

/* Sample means of n up and down periods of worker 0, in seconds. */
static void sample_means(const faults_spec *s, int n, double *up,
                         double *down) {
    faults *f = make(s, 1, 2024);
    int64_t t = 0, a, b;
    double su = 0, sd = 0;
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(faults_next(f, 0, &a, &b), 1);
        ck_assert(a > t && b > a);
        su += (double)(a - t) * 1e-9;
        sd += (double)(b - a) * 1e-9;
        t = b;
    }
    *up = su / n;
    *down = sd / n;
    faults_free(f);
}

/* Sample-mean tolerances from the distribution: the mean of n draws of a
 * distribution with mean mu and coefficient of variation CV has standard
 * error mu CV / sqrt(n), so |mean - mu| <= Z mu CV / sqrt(n) holds except
 * with a probability of about 6e-7 for Z = 5 (and the seed is fixed).  The
 * CV of the exponential is 1; of a Weibull of shape k it is
 * sqrt(Gamma(1+2/k) / Gamma(1+1/k)^2 - 1), whatever its scale. */
#define MEAN_Z 5.0
#define MEAN_N 20000

static double weibull_cv(double k) {
    double g1 = gsl_sf_gamma(1 + 1 / k);
    return sqrt(gsl_sf_gamma(1 + 2 / k) / (g1 * g1) - 1);
}

static double mean_tol(double mu, double cv) {
    return MEAN_Z * mu * cv / sqrt((double)MEAN_N);
}

START_TEST(test_weibull_cv) {
    /* shape 1 is the exponential; shape 2 is the Rayleigh distribution,
     * CV sqrt(4/pi - 1) */
    const double pi = 4 * atan(1.0);
    ck_assert_double_eq_tol(weibull_cv(1), 1, 1e-12);
    ck_assert_double_eq_tol(weibull_cv(2), sqrt(4 / pi - 1), 1e-12);
    ck_assert(weibull_cv(0.7) > 1 && weibull_cv(4) < 0.3);
}
END_TEST

START_TEST(test_mean_exponential) {
    faults_spec s = random_spec(3600, 600, FAULTS_EXPONENTIAL, 0);
    double up, down;
    sample_means(&s, MEAN_N, &up, &down);
    ck_assert_double_eq_tol(up, 3600, mean_tol(3600, 1));
    ck_assert_double_eq_tol(down, 600, mean_tol(600, 1));
}
END_TEST

/* Up periods are Weibull with the scale that makes the mean MTBF; down
 * periods stay exponential.  At shape 4 the tolerance is 1%: a scale left
 * at MTBF (mean MTBF Gamma(1.25), 9% short) fails it. */
START_TEST(test_mean_weibull) {
    double shapes[] = {0.7, 1.5, 4.0};
    for (int i = 0; i < 3; i++) {
        faults_spec s = random_spec(7200, 300, FAULTS_WEIBULL, shapes[i]);
        double up, down, tol = mean_tol(7200, weibull_cv(shapes[i]));
        sample_means(&s, MEAN_N, &up, &down);
        ck_assert_msg(fabs(up - 7200) <= tol, "shape %g: mean %g, tolerance %g",
                      shapes[i], up, tol);
        ck_assert_double_eq_tol(down, 300, mean_tol(300, 1));
    }
}
END_TEST

/* Periods shorter than half a ns still last 1 ns; periods beyond the
 * int64 range end the failures. */
START_TEST(test_extreme_periods) {
    faults_spec s = random_spec(1e-12, 1e-12, FAULTS_EXPONENTIAL, 0);
    faults *f = make(&s, 1, 5);
    int64_t a, b;
    ck_assert_int_eq(faults_next(f, 0, &a, &b), 1);
    ck_assert(a == 1 && b == 2);
    faults_free(f);
    s = random_spec(1e300, 1, FAULTS_EXPONENTIAL, 0);
    f = make(&s, 1, 5);
    ck_assert_int_eq(faults_next(f, 0, &a, &b), 0);
    ck_assert_int_eq(faults_next(f, 0, &a, &b), 0);
    faults_free(f);
    s = random_spec(1, 1e300, FAULTS_EXPONENTIAL, 0);
    f = make(&s, 1, 5);
    ck_assert_int_eq(faults_next(f, 0, &a, &b), 1);
    ck_assert(a > 0 && b == INT64_MAX);
    ck_assert_int_eq(faults_next(f, 0, &a, &b), 0);
    faults_free(f);
}
END_TEST

/* Bad specs are refused with a message. */
START_TEST(test_bad_spec) {
    char err[256];
    faults_spec bad[] = {
        random_spec(-1, 10, FAULTS_EXPONENTIAL, 0),
        random_spec(NAN, 10, FAULTS_EXPONENTIAL, 0),
        random_spec(10, 0, FAULTS_EXPONENTIAL, 0),
        random_spec(10, INFINITY, FAULTS_EXPONENTIAL, 0),
        random_spec(10, 1, FAULTS_WEIBULL, 0),
        random_spec(10, 1, FAULTS_WEIBULL, 0.001),
        random_spec(10, 1, (faults_dist)9, 1),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        ck_assert_ptr_null(faults_new(&bad[i], 2, 1, err, sizeof err));
        ck_assert_msg(strncmp(err, "faults: ", 8) == 0, "%zu: %s", i, err);
    }
    ck_assert_str_eq(err, "faults: unknown distribution 9 (expected "
                          "exponential or weibull)");
    faults_spec ok = random_spec(10, 1, FAULTS_EXPONENTIAL, 0);
    ck_assert_ptr_null(faults_new(&ok, 0, 1, err, sizeof err));
    ck_assert_str_eq(err, "faults: nworkers must be >= 1");
    /* a mttr of 0 is fine when nothing fails */
    ok = random_spec(0, 0, FAULTS_EXPONENTIAL, 0);
    faults_free(make(&ok, 1, 1));
}
END_TEST

/* ---- traces -------------------------------------------------------------- */

static faults_spec trace_spec(const char *path) {
    faults_spec s = {0, 0, FAULTS_EXPONENTIAL, 0, path};
    return s;
}

static void expect(faults *f, int w, int64_t fail, int64_t repair) {
    int64_t a, b;
    ck_assert_int_eq(faults_next(f, w, &a, &b), 1);
    ck_assert_int_eq(a, fail);
    ck_assert_int_eq(b, repair);
}

START_TEST(test_trace_periods) {
    faults_spec s = trace_spec(DATA "mixed.trace");
    s.mtbf_s = 10; /* ignored: the trace wins */
    faults *f = make(&s, 3, 1);
    int64_t a, b;
    expect(f, 0, 500000000, 1250000000);
    expect(f, 0, 2000000001, 4500000000);
    ck_assert_int_eq(faults_next(f, 0, &a, &b), 0);
    expect(f, 1, 3000000000, INT64_MAX);
    ck_assert_int_eq(faults_next(f, 1, &a, &b), 0);
    expect(f, 2, 0, 10000000000);
    ck_assert_int_eq(faults_next(f, 2, &a, &b), 0);
    ck_assert_int_eq(faults_next(f, 2, &a, &b), 0);
    faults_free(f);
    /* more workers than the trace mentions: the others never fail */
    f = make(&s, 5, 1);
    ck_assert_int_eq(faults_next(f, 4, &a, &b), 0);
    faults_free(f);
}
END_TEST

/* Each broken fixture and its exact one-line message. */
static const struct {
    const char *file;
    int nworkers;
    const char *msg;
} bad_traces[] = {
    {"bad_number.trace", 1,
     DATA "bad_number.trace:3: bad time '1.5x' (expected a finite number "
          "of seconds)"},
    {"unknown_state.trace", 1,
     DATA "unknown_state.trace:2: unknown state 'sideways' (expected 0, 1, "
          "down or up)"},
    {"decreasing.trace", 1,
     DATA "decreasing.trace:3: worker 0: time 6 s is not after 7 s (times "
          "must increase)"},
    {"repeated.trace", 4,
     DATA "repeated.trace:2: worker 3 is already down (states must "
          "alternate, starting with down)"},
    {"starts_up.trace", 1,
     DATA "starts_up.trace:1: worker 0 is already up (states must "
          "alternate, starting with down)"},
    {"worker_range.trace", 4,
     DATA "worker_range.trace:3: worker 4 out of range (expected 0..3)"},
    {"bad_worker.trace", 4,
     DATA "bad_worker.trace:1: bad worker 'x' (expected an integer 0..3)"},
    {"fields.trace", 1,
     DATA "fields.trace:1: more than 3 fields (expected 'time_s state' or "
          "'time_s worker state')"},
    {"negative.trace", 1,
     DATA "negative.trace:1: negative time '-1' (expected seconds >= 0)"},
};

START_TEST(test_trace_errors) {
    char path[256], err[256];
    snprintf(path, sizeof path, DATA "%s", bad_traces[_i].file);
    faults_spec s = trace_spec(path);
    err[0] = '\0';
    ck_assert_ptr_null(
        faults_new(&s, bad_traces[_i].nworkers, 1, err, sizeof err));
    ck_assert_str_eq(err, bad_traces[_i].msg);
}
END_TEST

START_TEST(test_trace_unreadable) {
    char err[256], want[256];
    faults_spec s = trace_spec(DATA "no_such.trace");
    ck_assert_ptr_null(faults_new(&s, 1, 1, err, sizeof err));
    snprintf(want, sizeof want, DATA "no_such.trace: cannot open: %s",
             strerror(ENOENT));
    ck_assert_str_eq(err, want);
    s = trace_spec(DATA);
    ck_assert_ptr_null(faults_new(&s, 1, 1, err, sizeof err));
    snprintf(want, sizeof want, DATA ": cannot read: %s", strerror(EISDIR));
    ck_assert_str_eq(err, want);
    /* a tiny buffer gets a truncated message, and nothing overflows */
    char small[8];
    s = trace_spec(DATA "bad_number.trace");
    ck_assert_ptr_null(faults_new(&s, 1, 1, small, sizeof small));
    ck_assert_str_eq(small, "tests/d");
    ck_assert_ptr_null(faults_new(&s, 1, 1, NULL, 0));
}
END_TEST

/* ---- faults_trace_parse: a trace from bytes (what the loader calls) ---- */

/* Parses text (n bytes) for nworkers; expects rc and, on error, msg. */
static void trace_bytes(const char *text, size_t n, int nworkers, int rc,
                        const char *msg) {
    char err[256] = "";
    faults_trace *t = (faults_trace *)1;
    ck_assert_int_eq(faults_trace_parse(text, n, "t.trace", nworkers, &t, err,
                                        sizeof err),
                     rc);
    if (rc) {
        ck_assert_ptr_null(t);
        ck_assert_str_eq(err, msg);
    }
    faults_trace_free(t);
}

START_TEST(test_trace_parse_bytes) {
    static const char ok[] = "# comment\n1 down\n2 0 up\r\n\n3 1 down";
    trace_bytes(ok, sizeof ok - 1, 2, 0, NULL);
    trace_bytes("", 0, 1, 0, NULL);
    /* A NUL byte is an error at its line, not the end of the text. */
    trace_bytes("1 down\n2 u\0p\n", 12, 1, MSG_EINPUT,
                "t.trace:2: NUL byte (expected a text line)");
    /* Only len bytes are read: "up" is cut to "u". */
    trace_bytes("1 down\n2 up", 10, 1, MSG_EINPUT,
                "t.trace:2: unknown state 'u' (expected 0, 1, down or up)");
    trace_bytes("1 3 down\n", 9, 2, MSG_EINPUT,
                "t.trace:1: worker 3 out of range (expected 0..1)");
    trace_bytes("1 down\n", 7, 0, MSG_EINPUT, "t.trace: nworkers must be >= 1");
}
END_TEST

/* defect 7: the trace is checked by the loader through faults_trace_load;
 * faults_new reads the same periods from it. */
START_TEST(test_trace_load_same_periods) {
    faults_trace *t;
    char err[256];
    ck_assert_int_eq(faults_trace_load(DATA "mixed.trace", 4, &t, err,
                                       sizeof err),
                     0);
    faults_trace_free(t);
    ck_assert_int_eq(faults_trace_load(DATA "bad_number.trace", 1, &t, err,
                                       sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, DATA "bad_number.trace:3: bad time '1.5x' "
                               "(expected a finite number of seconds)");
    ck_assert_int_eq(faults_trace_load(DATA "no_such.trace", 1, &t, err,
                                       sizeof err),
                     MSG_EIO);
    /* defect 9: a trace above the cap is refused before it is read. */
    char path[] = "/tmp/test_faults_big_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)FAULTS_TRACE_MAX_BYTES + 1), 0);
    close(fd);
    ck_assert_int_eq(faults_trace_load(path, 1, &t, err, sizeof err),
                     MSG_EINPUT);
    char want[256];
    snprintf(want, sizeof want,
             "%s: larger than 64 MiB (expected a trace "
             "of at most 67108864 bytes)",
             path);
    ck_assert_str_eq(err, want);
    unlink(path);
}
END_TEST

static TCase *trace_parse_tcase(void) {
    TCase *t = tcase_create("trace_parse");
    tcase_add_test(t, test_trace_parse_bytes);
    tcase_add_test(t, test_trace_load_same_periods);
    return t;
}

Suite *make_suite(void) {
    Suite *s = suite_create("faults");
    TCase *t = tcase_create("core");
    tcase_add_test(t, test_dist_names);
    tcase_add_test(t, test_no_failures);
    tcase_add_test(t, test_same_seed);
    tcase_add_test(t, test_independent_workers);
    tcase_add_test(t, test_stream_contract);
    tcase_add_test(t, test_weibull_cv);
    tcase_add_test(t, test_mean_exponential);
    tcase_add_test(t, test_mean_weibull);
    tcase_add_test(t, test_extreme_periods);
    tcase_add_test(t, test_bad_spec);
    tcase_add_test(t, test_trace_periods);
    tcase_add_loop_test(t, test_trace_errors, 0,
                        (int)(sizeof bad_traces / sizeof bad_traces[0]));
    tcase_add_test(t, test_trace_unreadable);
    suite_add_tcase(s, t);
    suite_add_tcase(s, trace_parse_tcase());
    return s;
}

CHECK_MAIN(make_suite)
