/*
 * calib.c -- the fit of a calibration (calib.h): the keys, their ranges
 * and base values, the keys no row sees, the trust region on the relative
 * residuals, the keys that end at a bound, the covariance.
 *
 * The Jacobian.  Predictions are whole simulations whose instants are
 * whole ns, so a prediction moves in steps of about 1 ns however small a
 * key's change: a difference over a step h of the key is exact to about
 * 1 ns / (2h x the prediction's slope).  GSL's own differences step by
 * sqrt(eps) = 1.5e-8 relative, which moves a 1 s prediction by some 15 ns:
 * rounding would be 7% of the slope.  So the Jacobian is computed here,
 * by central differences with h = CALIB_H_REL x max(|x|, u) in the key's
 * own unit, u its base value (1 where that is 0: 1 ms for a *_ms key at
 * its default): a change of 1e-3 relative moves a prediction by 1e-3 of
 * the part the key drives (0.1 ms of a 0.1 s transfer for
 * network.efficiency; 2 us per collective step for a *_ms key at 1 ms),
 * far above 1 ns, while the truncation error of a central difference,
 * of order h^2 (1e-6 relative), stays below the fit's resolution.  At a
 * bound the difference is one-sided, into the range.  Where the trust
 * region steps past a bound, the predictions take the bound (the key is
 * clamped), and a key that ends at or past its bound is then fixed there.
 */
#include "sim/study/calib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "sim/base/msg.h"
#include "sim/study/calib_int.h"

#define XTOL 1e-10     /* the trust region's tolerance on the step */
#define GTOL 1e-12     /* on the gradient */
#define FTOL 1e-14     /* on the cost */
#define BOUND_TOL 1e-6 /* a key this close (relative to u) is at a bound */
#define OPEN_EPS 1e-9  /* an open bound's nearest value, relative to u */

double calib_residual(double predicted_s, double measured_s) {
    return predicted_s / measured_s - 1;
}

/* ---- keys ------------------------------------------------------------------ */

/* A key's range, as the schema has it (docs/scenarios.md): the keys the
 * fit is meant for, and >= 0 for the others (every numeric key of the
 * schema is; a value its range refuses stops the fit with the loader's
 * message). */
static void key_range(calib_key *k) {
    static const struct {
        const char *key;
        double lo, hi;
        int lo_open;
    } range[] = {{"network.efficiency", 0, 1, 1},
                 {"model.step_time_s", 1e-9, 1e6, 0},
                 {"workers.speed", 0.001, 1000, 0},
                 {"workers.stragglers.probability", 0, 1, 0},
                 {"workers.stragglers.slowdown", 1, 1000, 0}};
    k->lo = 0, k->hi = INFINITY, k->lo_open = 0;
    size_t n = strlen(k->key);
    if (n > 3 && !strcmp(k->key + n - 3, "_ms")) k->hi = 1e6;
    for (size_t i = 0; i < sizeof range / sizeof *range; i++)
        if (!strcmp(range[i].key, k->key)) {
            k->lo = range[i].lo, k->hi = range[i].hi;
            k->lo_open = range[i].lo_open;
        }
}

/* The key's unit of change: its base value, 1 where that is 0. */
static double key_unit(const calib_key *k) {
    return k->start != 0 ? fabs(k->start) : 1;
}

/* x within the key's range (an open bound: its nearest value inside). */
static double clamp(const calib_key *k, double x) {
    double lo = k->lo_open ? k->lo + OPEN_EPS * key_unit(k) : k->lo;
    return x < lo ? lo : x > k->hi ? k->hi : x;
}

/* The keys of the fit, checked, with their ranges and base values. */
static int setup_keys(calib_ctx *c, calib_result *r, char *err, size_t errlen) {
    if (c->nkeys > CALIB_MAX_KEYS)
        return msg_set(err, errlen, MSG_EINPUT,
                       "%d keys to fit (expected at most %d)", c->nkeys,
                       CALIB_MAX_KEYS);
    r->nkeys = c->nkeys;
    for (int k = 0; k < c->nkeys; k++) {
        calib_key *key = &r->key[k];
        if (strlen(c->key[k]) >= CALIB_KEY_MAX)
            return msg_set(err, errlen, MSG_EINPUT,
                           "--fit %.40s...: a key "
                           "of more than %d bytes",
                           c->key[k], CALIB_KEY_MAX - 1);
        for (int i = 0; i < k; i++)
            if (!strcmp(c->key[i], c->key[k]))
                return msg_set(err, errlen, MSG_EINPUT, "--fit %s: given twice",
                               c->key[k]);
        snprintf(key->key, sizeof key->key, "%s", c->key[k]);
        key_range(key);
        key->status = CALIB_FITTED;
    }
    double v[CALIB_MAX_KEYS];
    int rc = calib__base(c, v, &r->workers, &r->digest, err, errlen);
    for (int k = 0; !rc && k < c->nkeys; k++) {
        r->key[k].start = r->key[k].value = v[k];
        r->key[k].se = NAN;
    }
    return rc;
}

/* ---- predictions at a point ------------------------------------------------ */

/* The job of row i at the keys' current values (clamped), every key set
 * but the dropped ones; key j (>= 0) at x instead. */
static void job_at(const calib_result *r, int i, int j, double x,
                   calib_job *job) {
    job->row = i;
    for (int k = 0; k < r->nkeys; k++) {
        const calib_key *key = &r->key[k];
        job->use[k] = key->status != CALIB_DROPPED;
        job->val[k] = clamp(key, k == j ? x : key->value);
    }
}

/* Every row at the current values (use 0: as the base has them) into
 * s[n]. */
static int predict_rows(calib_ctx *c, const calib_result *r, int use, double *s,
                        char *err, size_t errlen) {
    calib_job *jobs = calloc((size_t)r->n + 1, sizeof *jobs);
    if (!jobs) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    for (int i = 0; i < r->n; i++) {
        job_at(r, i, -1, 0, &jobs[i]);
        if (!use) memset(jobs[i].use, 0, sizeof jobs[i].use);
    }
    int rc = calib__batch(c, jobs, r->n, err, errlen);
    for (int i = 0; !rc && i < r->n; i++) s[i] = jobs[i].s;
    free(jobs);
    return rc;
}

/* The two points of key k's difference at its current value: central,
 * or one-sided into the range at a bound. */
static void diff_points(const calib_key *k, double *a, double *b) {
    double x = clamp(k, k->value), h = CALIB_H_REL * fmax(fabs(x), key_unit(k));
    double lo = clamp(k, -INFINITY);
    *a = x - h, *b = x + h;
    if (*a < lo) *a = x;
    else if (*b > k->hi) *b = x;
}

/* The Jacobian of the relative residuals in the keys cols[0..p-1] at the
 * current values: J[i * p + j]. */
static int jacobian(calib_ctx *c, const calib_result *r, const int *cols, int p,
                    double *J, char *err, size_t errlen) {
    int n = r->n;
    calib_job *jobs = calloc((size_t)(2 * n * p) + 1, sizeof *jobs);
    if (!jobs) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    double a[CALIB_MAX_KEYS], b[CALIB_MAX_KEYS];
    for (int j = 0; j < p; j++) {
        diff_points(&r->key[cols[j]], &a[j], &b[j]);
        for (int i = 0; i < n; i++) {
            job_at(r, i, cols[j], a[j], &jobs[2 * (j * n + i)]);
            job_at(r, i, cols[j], b[j], &jobs[2 * (j * n + i) + 1]);
        }
    }
    int rc = calib__batch(c, jobs, 2 * n * p, err, errlen);
    for (int j = 0; !rc && j < p; j++)
        for (int i = 0; i < n; i++) {
            double d = jobs[2 * (j * n + i) + 1].s - jobs[2 * (j * n + i)].s;
            J[i * p + j] = d / ((b[j] - a[j]) * r->measured_s[i]);
        }
    free(jobs);
    return rc;
}

/* ---- the trust region -------------------------------------------------------- */

typedef struct {
    calib_ctx *c;
    calib_result *r;
    int p, cols[CALIB_MAX_KEYS]; /* the keys fitted, in r->key */
    int rc;                      /* the first failure, its message in err */
    char err[CALIB_ERR_MAX];
    double *s; /* n predictions (scratch) */
    double *J; /* n x p (scratch) */
} fit_ctx;

/* The keys' values from the trust region's x. */
static void take_x(fit_ctx *F, const gsl_vector *x) {
    for (int j = 0; j < F->p; j++)
        F->r->key[F->cols[j]].value = gsl_vector_get(x, (size_t)j);
}

static int fit_f(const gsl_vector *x, void *params, gsl_vector *f) {
    fit_ctx *F = params;
    take_x(F, x);
    F->rc = predict_rows(F->c, F->r, 1, F->s, F->err, sizeof F->err);
    if (F->rc) return GSL_EBADFUNC;
    for (int i = 0; i < F->r->n; i++)
        gsl_vector_set(f, (size_t)i,
                       calib_residual(F->s[i], F->r->measured_s[i]));
    return GSL_SUCCESS;
}

static int fit_df(const gsl_vector *x, void *params, gsl_matrix *J) {
    fit_ctx *F = params;
    take_x(F, x);
    F->rc = jacobian(F->c, F->r, F->cols, F->p, F->J, F->err, sizeof F->err);
    if (F->rc) return GSL_EBADFUNC;
    for (int i = 0; i < F->r->n; i++)
        for (int j = 0; j < F->p; j++)
            gsl_matrix_set(J, (size_t)i, (size_t)j, F->J[i * F->p + j]);
    return GSL_SUCCESS;
}

/* The covariance of the fitted keys, (J^T J)^-1 s^2, into r->cov. */
static void covariance(fit_ctx *F, gsl_multifit_nlinear_workspace *w) {
    calib_result *r = F->r;
    gsl_matrix *cov = gsl_matrix_alloc((size_t)F->p, (size_t)F->p);
    double chi2;
    gsl_blas_ddot(gsl_multifit_nlinear_residual(w),
                  gsl_multifit_nlinear_residual(w), &chi2);
    double s2 = chi2 / (r->n - F->p);
    if (cov) gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0, cov);
    memset(r->cov, 0, sizeof r->cov);
    for (int a = 0; a < F->p; a++) {
        for (int b = 0; b < F->p; b++)
            r->cov[F->cols[a]][F->cols[b]] =
                cov ? gsl_matrix_get(cov, (size_t)a, (size_t)b) * s2 : NAN;
        r->key[F->cols[a]].se = sqrt(r->cov[F->cols[a]][F->cols[a]]);
    }
    gsl_matrix_free(cov);
}

/* One fit of the keys with status CALIB_FITTED from their current
 * values. */
static int fit_once(fit_ctx *F, char *err, size_t errlen) {
    calib_result *r = F->r;
    gsl_multifit_nlinear_parameters par =
        gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par,
                                   (size_t)r->n, (size_t)F->p);
    gsl_vector *x0 = gsl_vector_alloc((size_t)F->p);
    if (!w || !x0) {
        gsl_vector_free(x0);
        if (w) gsl_multifit_nlinear_free(w);
        return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    }
    for (int j = 0; j < F->p; j++)
        gsl_vector_set(x0, (size_t)j, r->key[F->cols[j]].value);
    gsl_multifit_nlinear_fdf fdf = {.f = fit_f,
                                    .df = fit_df,
                                    .n = (size_t)r->n,
                                    .p = (size_t)F->p,
                                    .params = F};
    int info = 0, st = gsl_multifit_nlinear_init(x0, &fdf, w);
    if (!st)
        st = gsl_multifit_nlinear_driver(CALIB_MAX_ITER, XTOL, GTOL, FTOL, NULL,
                                         NULL, &info, w);
    r->iterations += (int)gsl_multifit_nlinear_niter(w);
    r->fits++;
    /* no step lowers the cost (at the predictions' resolution): from the
     * start (the driver says GSL_EMAXITER, info GSL_ENOPROG: a refit
     * from an optimum after a bound), or later: converged either way */
    int rc = F->rc, stuck = st == GSL_ENOPROG ||
                            (st == GSL_EMAXITER && info == GSL_ENOPROG);
    if (rc) msg_set(err, errlen, rc, "%s", F->err);
    else if (st && !stuck)
        rc = msg_set(err, errlen, MSG_EFAIL,
                     "the fit did not converge in %d iterations (%s)",
                     (int)gsl_multifit_nlinear_niter(w), gsl_strerror(st));
    if (!rc) {
        take_x(F, gsl_multifit_nlinear_position(w));
        covariance(F, w);
    }
    gsl_vector_free(x0);
    gsl_multifit_nlinear_free(w);
    return rc;
}

/* Keys that ended at or past a bound: fixed there.  Returns how many. */
static int fix_bounds(calib_result *r) {
    int fixed = 0;
    for (int k = 0; k < r->nkeys; k++) {
        calib_key *key = &r->key[k];
        if (key->status != CALIB_FITTED) continue;
        double tol = BOUND_TOL * key_unit(key), lo = clamp(key, -INFINITY);
        double at = key->value <= lo + tol        ? lo
                    : key->value >= key->hi - tol ? key->hi
                                                  : NAN;
        if (isnan(at)) continue;
        key->value = at;
        key->status = CALIB_AT_BOUND;
        fixed++;
    }
    return fixed;
}

/* Drops the keys whose column of the Jacobian is zero at the start. */
static int drop_unseen(calib_ctx *c, calib_result *r, char *err,
                       size_t errlen) {
    int cols[CALIB_MAX_KEYS] = {0}, p = r->nkeys;
    for (int k = 0; k < p; k++) cols[k] = k;
    double *J = malloc(((size_t)r->n * p + 1) * sizeof *J);
    if (!J) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    int rc = jacobian(c, r, cols, p, J, err, errlen);
    for (int k = 0; !rc && k < p; k++) {
        int seen = 0;
        for (int i = 0; i < r->n; i++) seen |= J[i * p + k] != 0;
        if (seen) continue;
        r->key[k].status = CALIB_DROPPED;
        snprintf(r->key[k].why, sizeof r->key[k].why,
                 "no effect on these measurements: every prediction is the "
                 "same with it %g%% higher or lower",
                 100 * CALIB_H_REL);
    }
    free(J);
    return rc;
}

/* Fits the free keys, fixes those at a bound and fits the others again,
 * until none ends at a bound. */
static int fit_all(calib_ctx *c, calib_result *r, char *err, size_t errlen) {
    fit_ctx F = {.c = c, .r = r};
    F.s = malloc(((size_t)r->n + 1) * sizeof *F.s);
    F.J = malloc(((size_t)r->n * CALIB_MAX_KEYS + 1) * sizeof *F.J);
    int rc = F.s && F.J ? 0 : msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    for (;;) {
        F.p = 0;
        for (int k = 0; k < r->nkeys; k++)
            if (r->key[k].status == CALIB_FITTED) F.cols[F.p++] = k;
        r->fitted = F.p;
        if (rc || F.p == 0) break;
        if ((rc = fit_once(&F, err, errlen)) || !fix_bounds(r)) break;
    }
    /* a key fixed at a bound is not uncertain: its stderr and its row and
     * column of the covariance are 0 (the fit that moved it there left
     * its own figures in them) */
    for (int k = 0; k < r->nkeys; k++) {
        if (r->key[k].status != CALIB_AT_BOUND) continue;
        r->key[k].se = 0;
        for (int j = 0; j < r->nkeys; j++) r->cov[k][j] = r->cov[j][k] = 0;
    }
    free(F.s);
    free(F.J);
    return rc;
}

/* ---- the whole calibration ---------------------------------------------------- */

/* The residuals' root mean square and the rows beyond CALIB_OUTSIDE. */
static double rms(const calib_result *r, const double *s, int *outside) {
    double sum = 0;
    if (outside) *outside = 0;
    for (int i = 0; i < r->n; i++) {
        double e = calib_residual(s[i], r->measured_s[i]);
        sum += e * e;
        if (outside && fabs(e) > CALIB_OUTSIDE) ++*outside;
    }
    return r->n ? sqrt(sum / r->n) : NAN;
}

/* Rows, keys and the arrays of r. */
static int setup(calib_ctx *c, calib_result *r, char *err, size_t errlen) {
    r->n = c->spec->m->nrows;
    r->measured_s = malloc(((size_t)r->n + 1) * sizeof(double));
    r->base_s = malloc(((size_t)r->n + 1) * sizeof(double));
    r->fit_s = malloc(((size_t)r->n + 1) * sizeof(double));
    if (!r->measured_s || !r->base_s || !r->fit_s)
        return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    for (int i = 0; i < r->n; i++)
        r->measured_s[i] = c->spec->m->rows[i].measured_s;
    int rc = setup_keys(c, r, err, errlen);
    if (!rc && r->n <= r->nkeys && (r->n > 0 || c->spec->keys))
        rc = msg_set(err, errlen, MSG_EINPUT,
                     "%d row%s for %d key%s: the fit needs more rows than "
                     "keys (one at least for the standard errors)",
                     r->n, r->n == 1 ? "" : "s", r->nkeys,
                     r->nkeys == 1 ? "" : "s");
    return rc;
}

int calib_run(const calib_spec *spec, calib_result *r, char *err,
              size_t errlen) {
    calib_ctx c;
    memset(r, 0, sizeof *r);
    int rc = calib__open(&c, spec, err, errlen);
    if (!rc) rc = setup(&c, r, err, errlen);
    if (!rc && r->n == 0) /* only step times or outages */
        for (int k = 0; k < r->nkeys; k++) {
            r->key[k].status = CALIB_DROPPED;
            snprintf(r->key[k].why, sizeof r->key[k].why,
                     "no rows that time the network (runs, all-reduces, "
                     "streams)");
        }
    if (!rc && r->n > 0) rc = predict_rows(&c, r, 0, r->base_s, err, errlen);
    if (!rc && r->n > 0) rc = drop_unseen(&c, r, err, errlen);
    if (!rc && r->n > 0) rc = fit_all(&c, r, err, errlen);
    if (!rc && r->n > 0) rc = predict_rows(&c, r, 1, r->fit_s, err, errlen);
    r->dof = r->n - r->fitted;
    r->rms_base = rms(r, r->base_s, NULL);
    r->rms_fit = rms(r, r->fit_s, &r->outside);
    r->runs = c.runs;
    calib__close(&c);
    if (rc) calib_free(r);
    return rc;
}

int calib_predict(const calib_spec *spec, int row, const double *values,
                  double *seconds, char *err, size_t errlen) {
    calib_ctx c;
    calib_job j = {.row = row};
    int rc = calib__open(&c, spec, err, errlen);
    for (int k = 0; values && k < c.nkeys && k < CALIB_MAX_KEYS; k++)
        j.val[k] = values[k], j.use[k] = 1;
    if (!rc && (row < 0 || row >= spec->m->nrows))
        rc = msg_set(err, errlen, MSG_EINVAL, "no row %d", row);
    if (!rc) rc = calib__predict(&c, &j, err, errlen);
    if (!rc) *seconds = j.s;
    calib__close(&c);
    return rc;
}

void calib_free(calib_result *r) {
    free(r->measured_s);
    free(r->base_s);
    free(r->fit_s);
    memset(r, 0, sizeof *r);
}
