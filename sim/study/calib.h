/*
 * calib.h -- scenario keys fitted to what was measured on a buyer's own
 * cluster (`dilosim calibrate`; docs/calibration.md).
 *
 * The model: every measured row (sim/study/measure.h) is predicted by a
 * real simulation of its world, the base scenario with its overrides and
 * the keys' current values:
 *   MEAS_RUN        the run's wall time: the base with the row's columns;
 *   MEAS_ALLREDUCE  one warm all-reduce of `bytes` among `ranks`: the base
 *                   as a DiLoCo of one layer of bytes / 4 fp32 parameters
 *                   on `ranks` workers, H = 1, CALIB_AR_WARMUP collectives
 *                   and then the one timed (nccl-tests times its
 *                   iterations after 5 warm-up ones), back to back (steps
 *                   of 1 us); its time is the last collective's span, the
 *                   last worker's end minus the first worker's start;
 *   MEAS_STREAM     one iperf3 test: probe_stream (sim/engine/probe.h),
 *                   `bytes` over `streams` new connections from worker 0
 *                   to worker 1 of the base.
 * The fit is nonlinear least squares on the relative residuals
 *     r_i = predicted_i / measured_i - 1,
 * so that a row of 10 ms weighs as much as one of 10 minutes, by GSL's
 * trust region (gsl_multifit_nlinear_trust, Levenberg-Marquardt), with a
 * Jacobian of central differences of whole simulations (calib.c says how
 * the step is chosen), and covariance (J^T J)^-1 s^2, s^2 = sum r_i^2 /
 * (n - p) over the n rows and p keys fitted.  A key whose column of the
 * Jacobian is zero at the start (no row sees it) is dropped with a note; a
 * key that ends at or past a bound of its range (network.efficiency in
 * (0, 1], the *_ms keys >= 0, model.step_time_s >= 1e-9, other keys >= 0)
 * is fixed there (standard error 0) and the others fitted again.  Same
 * inputs, same result, whatever the number of threads: every prediction
 * is a simulation of its own.
 */
#ifndef DILOSIM_CALIB_H
#define DILOSIM_CALIB_H

#include <stddef.h>
#include <stdint.h>

#include "sim/study/measure.h"

#define CALIB_MAX_KEYS 8     /* keys of one fit (--fit) */
#define CALIB_KEY_MAX 128    /* bytes of a key, with the NUL */
#define CALIB_WHY_MAX 160    /* bytes of a note on a key */
#define CALIB_OUTSIDE 0.10   /* rows beyond +-10% are counted and marked */
#define CALIB_AR_WARMUP 5    /* all-reduces before the one timed */
#define CALIB_AR_STEP_S 1e-6 /* the compute between them */
#define CALIB_MAX_ITER 200   /* trust-region iterations of one fit */
#define CALIB_H_REL 1e-3     /* the Jacobian's step, relative (calib.c) */

/* The keys fitted when none is named (docs/calibration.md). */
#define CALIB_DEFAULT_KEYS                                                     \
    {                                                                          \
        "network.efficiency", "network.startup_ms",                            \
            "network.collective_overhead_ms", "network.queue_ms"               \
    }
#define CALIB_NDEFAULT 4

typedef enum {
    CALIB_FITTED,   /* fitted, with a standard error */
    CALIB_AT_BOUND, /* ended at or past a bound: fixed there */
    CALIB_DROPPED   /* not fitted: see why */
} calib_status;

typedef struct {
    char key[CALIB_KEY_MAX];
    double lo, hi; /* its range; lo_open: lo itself excluded */
    int lo_open;
    double start; /* its value in the base scenario (with the --set
                      overrides and the speeds) */
    double value; /* the fit's (AT_BOUND: the bound; DROPPED: start) */
    double se;    /* its standard error (0 at a bound, NAN dropped) */
    calib_status status;
    char why[CALIB_WHY_MAX]; /* DROPPED: why, one line */
} calib_key;

typedef struct {
    const char *scenario;    /* the base scenario file */
    const char *const *sets; /* its --set overrides (nset) */
    int nset;
    const meas_set *m;       /* the measurements */
    const char *const *keys; /* the keys to fit; NULL: CALIB_DEFAULT_KEYS */
    int nkeys;
    const meas_speeds *speeds; /* step times' estimates, applied to every
                                  prediction before the row's own
                                  overrides and the keys; NULL: none */
    int jobs;                  /* threads (>= 1) */
    int full;                  /* 1: no fast-forward (the same results) */
    /* NULL, or called after each simulation with the count done and the
     * count of the batch it belongs to (from one thread at a time) */
    void (*progress)(void *ctx, int64_t done, int64_t total);
    void *progress_ctx;
} calib_spec;

typedef struct {
    int nkeys;
    calib_key key[CALIB_MAX_KEYS]; /* in the order asked */
    int fitted;                    /* keys with CALIB_FITTED */
    /* over key[] (0 in the rows and columns of keys not CALIB_FITTED) */
    double cov[CALIB_MAX_KEYS][CALIB_MAX_KEYS];
    int n, dof;               /* rows; n - fitted */
    double *measured_s;       /* per row of m, n of them */
    double *base_s;           /* predicted with the keys as the base
                                      has them */
    double *fit_s;            /* predicted at the fit */
    double rms_base, rms_fit; /* sqrt(mean r_i^2) at each */
    int outside;              /* rows with |r_i| > CALIB_OUTSIDE at
                                      the fit */
    int iterations;           /* trust-region iterations, all fits */
    int fits;                 /* fits run: 1 + refits after a bound */
    int64_t runs;             /* simulations */
    int workers;              /* workers.count of the base */
    uint64_t digest;          /* the base's scn_config digest (its --set) */
} calib_result;

/* The relative residual of row i: predicted / measured - 1. */
double calib_residual(double predicted_s, double measured_s);

/* Fits.  Returns 0 with *r filled (calib_free it), MSG_EINPUT (the base
 * or an override the loader rejects, a row's world it rejects, prefixed
 * with "FILE:LINE: ", a key it does not know or that is not one number,
 * a key twice, more keys than CALIB_MAX_KEYS, rows no more than keys:
 * standard errors need n > p), MSG_EFAIL (the fit did not converge: the
 * message says so) or another code, with a one-line message in err; *r
 * is then empty.  Without rows (only step times or outages) and without
 * spec->keys every key is dropped and nothing is simulated but the base's
 * load. */
int calib_run(const calib_spec *spec, calib_result *r, char *err,
              size_t errlen);

/* The prediction of row `row` of spec->m with the keys (spec->keys, or
 * the default list) at values[] (NULL: as the base has them), in
 * seconds: one simulation.  Returns 0, or a code with its message. */
int calib_predict(const calib_spec *spec, int row, const double *values,
                  double *seconds, char *err, size_t errlen);

/* Frees what calib_run allocated; *r is left empty. */
void calib_free(calib_result *r);

#endif
