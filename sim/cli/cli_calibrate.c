/*
 * cli_calibrate.c -- `dilosim calibrate`: the network's keys fitted to
 * what a buyer measured on their own cluster (sim/study/calib.h), with
 * the step times' and outages' estimates (sim/study/measure.h), written
 * as a file of overrides with its fit block (sim/config/setfile.h) that
 * every command reads back with --set-from; docs/calibration.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jw.h"
#include "sim/base/msg.h"
#include "sim/base/version.h"
#include "sim/cli/cli.h"
#include "sim/config/setfile.h"
#include "sim/out/outfile.h"
#include "sim/study/calib.h"

static const cli_help_opt help_opts[] = {
    {"--scenario BASE.json", "the scenario the measurements are of "
                             "(required)"},
    {"--fit KEY", "a key to fit (repeatable, at most 8; default:\n"
                  "network.efficiency, network.startup_ms,\n"
                  "network.collective_overhead_ms, network.queue_ms)"},
    {"--out FIT.json", "write the fit there, whole or not at all\n"
                       "(required)"},
    {"--set KEY=VALUE", "override a key of BASE.json (repeatable)"},
    {"--set-from FILE.json", CLI_HELP_COMMON},
    {"--span-hours H", "how long the outage log watched the workers, in\n"
                       "hours (required with an outage log)"},
    {"--jobs N", "threads (default: the CPUs this process may use,\n"
                 "its affinity mask); the results do not depend\n"
                 "on N"},
    {"--json", "the report as one JSON object instead of tables"},
    {NULL, NULL}};

static const cli_help help = {
    "usage: dilosim calibrate MEASUREMENTS... --scenario BASE.json\n"
    "                         [--fit KEY]... --out FIT.json\n"
    "                         [--set KEY=VALUE]... [--set-from FILE.json]\n"
    "                         [--jobs N] [--span-hours H] [--json] "
    "[--quiet]\n"
    "\n"
    "Fits scenario keys to what was measured on a cluster, by nonlinear\n"
    "least squares on the relative residuals predicted / measured - 1 of\n"
    "every measured row, each predicted by a simulation of its world:\n"
    "  runs (CSV)            a run's wall time, BASE with the row's columns\n"
    "  nccl-tests output     one warm all-reduce of each size among the\n"
    "                        ranks\n"
    "  iperf3 --json output  one test: bytes over parallel connections\n"
    "                        from worker 0 to worker 1\n"
    "Step-time logs (worker,step,seconds) give model.step_time_s, the\n"
    "workers' speeds and the stragglers, applied to every prediction\n"
    "first; outage logs (worker,down_s,up_s) give faults.mtbf_hours and\n"
    "faults.mttr_hours.  A key no row sees is dropped; one that ends at a\n"
    "bound of its range is fixed there.  Standard errors from the\n"
    "covariance (J^T J)^-1 s^2, s^2 = sum r^2 / (rows - keys).\n"
    "\n"
    "Prints each key with its standard error, then every row (measured,\n"
    "predicted at the base's values and at the fit, residuals), the rows\n"
    "off by more than 10% marked.  FIT.json holds the fitted values as\n"
    "overrides and a \"fit\" block (keys, stderr, covariance, and more for\n"
    "people): 'dilosim run BASE.json --set-from FIT.json' runs the fit.\n"
    "\n"
    "options:\n",
    22, help_opts,
    "\n"
    "exit status: 0 success, 1 runtime failure or a fit that does not\n"
    "converge, 2 usage or input error (nothing is written)\n",
    1};

/* ---- the inputs ------------------------------------------------------------ */

typedef struct {
    cli_options o;
    const char *scenario;
    const char *fit[CALIB_MAX_KEYS + 1];
    int nfit, jobs, json;
    double span_hours; /* 0: none */
    meas_set m;
    int has_speeds, has_faults;
    meas_speeds speeds;
    meas_faults faults;
    calib_result r;
} cal;

/* --span-hours H: a number in (0, 1e9]. */
static int span_option(cal *c) {
    const char *v = cli_value(&c->o, "--span-hours");
    if (!v) return 0;
    char *end;
    c->span_hours = strtod(v, &end);
    if (*v == 0 || *end || !(c->span_hours > 0 && c->span_hours <= 1e9))
        return cli_usage_error("calibrate",
                               "--span-hours: '%s' is not a number in (0, "
                               "1e9]",
                               v);
    return 0;
}

static int parse_args(cal *c, int argc, char **argv) {
    static const char *const extra[] = {"--scenario", "--fit", "--jobs",
                                        "--span-hours", NULL};
    static const char *const flags[] = {"--json", NULL};
    int rc = cli_parse_files("calibrate", &help, argc, argv, extra, flags,
                             MEAS_MAX_FILES, &c->o);
    if (rc) return rc < 0 ? -1 : rc;
    c->scenario = cli_value(&c->o, "--scenario");
    c->json = cli_flag(&c->o, "--json");
    if (!c->scenario)
        return cli_usage_error("calibrate", "--scenario BASE.json is "
                                            "required");
    if (!c->o.out)
        return cli_usage_error("calibrate", "--out FIT.json is "
                                            "required");
    if (!strcmp(c->o.out, "-"))
        return cli_usage_error("calibrate", "--out -: the fit goes to a file "
                                            "(stdout has the report)");
    if ((rc = cli_values(&c->o, "calibrate", "--fit", c->fit, CALIB_MAX_KEYS,
                         &c->nfit)) ||
        (rc = cli_jobs(&c->o, "calibrate", &c->jobs)) || (rc = span_option(c)))
        return rc;
    return 0;
}

/* The measurements, the base's workers, the step times' and outages'
 * estimates. */
static int load_inputs(cal *c, char *err, size_t errlen) {
    int rc = 0;
    for (int i = 0; !rc && i < c->o.nfiles; i++)
        rc = meas_load(&c->m, c->o.files[i], err, errlen);
    if (rc) return rc;
    if (c->m.noutages && !c->span_hours)
        return cli_usage_error("calibrate", "an outage log needs "
                                            "--span-hours H (how long it "
                                            "watched the workers)");
    if (!c->m.noutages && c->span_hours)
        return cli_usage_error("calibrate", "--span-hours is the span of an "
                                            "outage log (none given)");
    scn_config *cfg = malloc(sizeof *cfg);
    if (!cfg) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    rc = scn_load(c->scenario, c->o.sets, c->o.nset, cfg, err, errlen);
    int workers = cfg->workers;
    free(cfg);
    if (!rc && c->m.nsteps) {
        rc = meas_fit_speeds(&c->m, &c->speeds, err, errlen);
        c->has_speeds = !rc;
    }
    if (!rc && c->m.noutages) {
        rc = meas_fit_faults(&c->m, workers, c->span_hours * 3600, &c->faults,
                             err, errlen);
        c->has_faults = !rc;
    }
    return rc;
}

/* ---- the estimates in order: a key, its value, its standard error -------- */

#define MAX_ENTRIES (CALIB_MAX_KEYS + SETFILE_MAX_FIT + 8)

typedef struct {
    char key[CALIB_KEY_MAX];
    double value, se; /* se NAN: none (not in the fit block) */
    int net;          /* its index in r.key, or -1 */
} entry;

static int add_entry(entry *e, int n, const char *key, double v, double se,
                     int net) {
    snprintf(e[n].key, sizeof e[n].key, "%s", key);
    e[n].value = v, e[n].se = se, e[n].net = net;
    return n + 1;
}

/* Whether the network fit has key (then the estimate of a log is not
 * written: the fit's is). */
static int fitted(const calib_result *r, const char *key) {
    for (int k = 0; k < r->nkeys; k++)
        if (r->key[k].status != CALIB_DROPPED && !strcmp(r->key[k].key, key))
            return 1;
    return 0;
}

/* Every estimate but workers.speed's array, in the order written: the
 * network's keys, the step times', the outages'. */
static int entries(const cal *c, entry *e) {
    const calib_result *r = &c->r;
    const meas_speeds *s = &c->speeds;
    int n = 0;
    char key[CALIB_KEY_MAX];
    for (int k = 0; k < r->nkeys; k++)
        if (r->key[k].status != CALIB_DROPPED)
            n = add_entry(e, n, r->key[k].key, r->key[k].value, r->key[k].se,
                          k);
    if (c->has_speeds && !fitted(r, "model.step_time_s"))
        n = add_entry(e, n, "model.step_time_s", s->step_time_s,
                      s->step_time_se, -1);
    for (int i = 1; c->has_speeds && i < s->workers; i++) {
        snprintf(key, sizeof key, "workers.speed.%d", i);
        if (n < MAX_ENTRIES - 4)
            n = add_entry(e, n, key, s->speed[i], s->speed_se[i], -1);
    }
    static const char *const strag[] = {"workers.stragglers.probability",
                                        "workers.stragglers.slowdown"};
    const double sv[] = {s->straggler_prob, s->straggler_slowdown};
    const double ss[] = {s->straggler_prob_se, s->straggler_slowdown_se};
    for (int i = 0; c->has_speeds && i < 2; i++)
        if (!fitted(r, strag[i]))
            n = add_entry(e, n, strag[i], sv[i], ss[i], -1);
    if (c->has_faults) {
        n = add_entry(e, n, "faults.mtbf_hours", c->faults.mtbf_hours,
                      c->faults.mtbf_hours_se, -1);
        n = add_entry(e, n, "faults.mttr_hours", c->faults.mttr_hours,
                      c->faults.mttr_hours_se, -1);
    }
    return n;
}

/* Whether entry i goes into the fit block: a standard error, and room
 * (SETFILE_MAX_FIT keys in all). */
static int in_block(const entry *e, int n, int i) {
    int before = 0;
    for (int j = 0; j < i && j < n; j++) before += !isnan(e[j].se);
    return !isnan(e[i].se) && before < SETFILE_MAX_FIT;
}

/* ---- FIT.json ---------------------------------------------------------------- */

/* A list of n members, one a line (inline when empty: "[]"). */
static void json_list(jw *w, const char *key, int n, int indent) {
    if (n) jw_lines(w, key, '[', indent, indent - 2);
    else jw_array(w, key);
}

static void json_inputs(jw *w, const meas_set *m) {
    char hex[17];
    jw_lines(w, "inputs", '[', 6, 4);
    for (int i = 0; i < m->nfiles; i++) {
        snprintf(hex, sizeof hex, "%016llx",
                 (unsigned long long)m->file[i].digest);
        jw_object(w, NULL);
        jw_str(w, "file", m->file[i].path);
        jw_str(w, "format", meas_format_name(m->file[i].format));
        jw_str(w, "digest", hex);
        jw_int(w, "rows", m->file[i].rows);
        jw_end(w);
    }
    jw_end(w);
}

/* The fit block's members for people, after keys, stderr, covariance. */
static void json_about(jw *w, const cal *c, const entry *e, int n) {
    const calib_result *r = &c->r;
    char hex[17];
    jw_int(w, "rows", r->n);
    jw_int(w, "dof", r->dof);
    jw_num(w, "rms_relative_residual", r->rms_fit);
    jw_num(w, "rms_relative_residual_at_base", r->rms_base);
    jw_int(w, "rows_outside_10pct", r->outside);
    json_inputs(w, &c->m);
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)r->digest);
    jw_object(w, "scenario");
    jw_str(w, "file", c->scenario);
    jw_str(w, "digest", hex);
    jw_array(w, "sets");
    for (int i = 0; i < c->o.nset; i++) jw_str(w, NULL, c->o.sets[i]);
    jw_end(w);
    jw_end(w);
    jw_str(w, "dilosim", DILOSIM_VERSION);
    int dropped = 0;
    for (int k = 0; k < r->nkeys; k++)
        dropped |= r->key[k].status == CALIB_DROPPED;
    json_list(w, "dropped", dropped, 6);
    for (int k = 0; k < r->nkeys; k++)
        if (r->key[k].status == CALIB_DROPPED) {
            jw_object(w, NULL);
            jw_str(w, "key", r->key[k].key);
            jw_str(w, "why", r->key[k].why);
            jw_end(w);
        }
    jw_end(w);
    jw_array(w, "at_bound");
    for (int k = 0; k < r->nkeys; k++)
        if (r->key[k].status == CALIB_AT_BOUND) jw_str(w, NULL, r->key[k].key);
    jw_end(w);
    jw_array(w, "no_stderr");
    for (int i = 0; i < n; i++)
        if (!in_block(e, n, i)) jw_str(w, NULL, e[i].key);
    jw_end(w);
}

/* The covariance of entries i and j (both in the block). */
static double cov_of(const cal *c, const entry *a, const entry *b) {
    if (a->net >= 0 && b->net >= 0) return c->r.cov[a->net][b->net];
    return a == b ? a->se * a->se : 0;
}

static void json_block(jw *w, const cal *c, const entry *e, int n) {
    jw_lines(w, "fit", '{', 4, 2);
    jw_array(w, "keys");
    for (int i = 0; i < n; i++)
        if (in_block(e, n, i)) jw_str(w, NULL, e[i].key);
    jw_end(w);
    jw_array(w, "stderr");
    for (int i = 0; i < n; i++)
        if (in_block(e, n, i)) jw_num(w, NULL, e[i].se);
    jw_end(w);
    jw_lines(w, "covariance", '[', 6, 4);
    for (int i = 0; i < n; i++) {
        if (!in_block(e, n, i)) continue;
        jw_array(w, NULL);
        for (int j = 0; j < n; j++)
            if (in_block(e, n, j)) jw_num(w, NULL, cov_of(c, &e[i], &e[j]));
        jw_end(w);
    }
    jw_end(w);
    json_about(w, c, e, n);
    jw_end(w);
}

/* FIT.json: the estimates as overrides (workers.speed as its array before
 * its items; each value exactly: --set-from reads the text as written),
 * then the fit block. */
static void write_fit(FILE *f, const void *ctx) {
    const cal *c = ctx;
    entry e[MAX_ENTRIES];
    int n = entries(c, e);
    jw w;
    jw_init(&w, f);
    jw_lines(&w, NULL, '{', 2, 0);
    for (int i = 0; i < n; i++) {
        if (!strcmp(e[i].key, "workers.speed.1") &&
            !fitted(&c->r, "workers.speed")) {
            jw_array(&w, "workers.speed");
            for (int k = 0; k < c->speeds.workers; k++)
                jw_num(&w, NULL, c->speeds.speed[k]);
            jw_end(&w);
        }
        if (strncmp(e[i].key, "workers.speed.", 14) || in_block(e, n, i))
            jw_num(&w, e[i].key, e[i].value);
    }
    json_block(&w, c, e, n);
    jw_end(&w);
}

/* ---- the report ---------------------------------------------------------------- */

static const char *kind_name(meas_kind k) {
    return k == MEAS_RUN ? "run" : k == MEAS_ALLREDUCE ? "allreduce" : "stream";
}

static const char *status_name(calib_status s) {
    return s == CALIB_FITTED     ? "fitted"
           : s == CALIB_AT_BOUND ? "at_bound"
                                 : "dropped";
}

/* "FILE:LINE" of row i. */
static void row_place(const cal *c, int i, char *b, size_t n) {
    const meas_row *row = &c->m.rows[i];
    snprintf(b, n, "%s:%d", c->m.file[row->file].path, row->line);
}

static void text_estimates(FILE *f, const cal *c) {
    entry e[MAX_ENTRIES];
    int n = entries(c, e), first = 1;
    for (int i = 0; i < n; i++) {
        if (e[i].net >= 0) continue;
        if (first)
            fputs("\nfrom the logs (the step times applied to every "
                  "prediction before the fit):\n",
                  f);
        first = 0;
        fprintf(f, "  %-32s %12.6g", e[i].key, e[i].value);
        if (!isnan(e[i].se)) fprintf(f, " +- %.3g", e[i].se);
        else fputs(" (no standard error: one sample)", f);
        fputc('\n', f);
    }
}

static void text_keys(FILE *f, const cal *c) {
    const calib_result *r = &c->r;
    fprintf(f, "%-32s %12s %12s %12s\n", "key", "base", "fit", "stderr");
    for (int k = 0; k < r->nkeys; k++) {
        const calib_key *key = &r->key[k];
        fprintf(f, "%-32s %12.6g ", key->key, key->start);
        if (key->status == CALIB_DROPPED)
            fprintf(f, "%12s  %s\n", "dropped", key->why);
        else if (key->status == CALIB_AT_BOUND)
            fprintf(f, "%12.6g %12s\n", key->value, "at bound");
        else fprintf(f, "%12.6g %12.3g\n", key->value, key->se);
    }
}

static void text_rows(FILE *f, const cal *c) {
    const calib_result *r = &c->r;
    char at[600];
    int w = 3; /* the width of the row column */
    for (int i = 0; i < r->n; i++) {
        row_place(c, i, at, sizeof at);
        if ((int)strlen(at) > w) w = (int)strlen(at);
    }
    if (!r->n) return;
    fprintf(f,
            "\nresiduals, predicted / measured - 1: rms %.3g%% at the base, "
            "%.3g%% at the fit\n",
            100 * r->rms_base, 100 * r->rms_fit);
    fprintf(f, "%-*s %-9s %12s %12s %8s %12s %8s\n", w, "row", "kind",
            "measured s", "base s", "base %", "fit s", "fit %");
    for (int i = 0; i < r->n; i++) {
        row_place(c, i, at, sizeof at);
        double rb = calib_residual(r->base_s[i], r->measured_s[i]);
        double rf = calib_residual(r->fit_s[i], r->measured_s[i]);
        fprintf(f, "%-*s %-9s %12.6g %12.6g %+8.2f %12.6g %+8.2f%s\n", w, at,
                kind_name(c->m.rows[i].kind), r->measured_s[i], r->base_s[i],
                100 * rb, r->fit_s[i], 100 * rf,
                fabs(rf) > CALIB_OUTSIDE ? "  *" : "");
    }
    fprintf(f, "%d of %d rows off by more than %g%% at the fit%s\n", r->outside,
            r->n, 100 * CALIB_OUTSIDE, r->outside ? " (marked *)" : "");
}

static void write_text(FILE *f, const cal *c) {
    const calib_result *r = &c->r;
    fprintf(f, "calibrate %s: %d rows from %d files\n", c->scenario, r->n,
            c->m.nfiles);
    if (r->n)
        fprintf(f,
                "fit: %d key%s, %d iterations in %d fit%s, %lld simulations, "
                "%d degrees of freedom\n\n",
                r->fitted, r->fitted == 1 ? "" : "s", r->iterations, r->fits,
                r->fits == 1 ? "" : "s", (long long)r->runs, r->dof);
    else fputs("no rows that time the network: no fit\n\n", f);
    text_keys(f, c);
    text_estimates(f, c);
    text_rows(f, c);
}

static void json_rows(jw *w, const cal *c) {
    const calib_result *r = &c->r;
    jw_lines(w, "rows", '[', 4, 2);
    for (int i = 0; i < r->n; i++) {
        const meas_row *row = &c->m.rows[i];
        double rf = calib_residual(r->fit_s[i], r->measured_s[i]);
        jw_object(w, NULL);
        jw_str(w, "file", c->m.file[row->file].path);
        jw_int(w, "line", row->line);
        jw_str(w, "kind", kind_name(row->kind));
        jw_num(w, "measured_s", r->measured_s[i]);
        jw_num(w, "base_s", r->base_s[i]);
        jw_num(w, "base_residual",
               calib_residual(r->base_s[i], r->measured_s[i]));
        jw_num(w, "fit_s", r->fit_s[i]);
        jw_num(w, "residual", rf);
        jw_bool(w, "outside", fabs(rf) > CALIB_OUTSIDE);
        jw_end(w);
    }
    jw_end(w);
}

static void write_json(FILE *f, const cal *c) {
    const calib_result *r = &c->r;
    entry e[MAX_ENTRIES];
    int n = entries(c, e);
    jw w;
    jw_init(&w, f);
    jw_lines(&w, NULL, '{', 2, 0);
    jw_str(&w, "version", DILOSIM_VERSION);
    jw_str(&w, "revision", version_revision());
    jw_str(&w, "scenario", c->scenario);
    jw_lines(&w, "keys", '[', 4, 2);
    for (int k = 0; k < r->nkeys; k++) {
        const calib_key *key = &r->key[k];
        jw_object(&w, NULL);
        jw_str(&w, "key", key->key);
        jw_str(&w, "status", status_name(key->status));
        jw_num(&w, "base", key->start);
        jw_num(&w, "fit", key->status == CALIB_DROPPED ? NAN : key->value);
        jw_num(&w, "stderr", key->se);
        if (key->status == CALIB_DROPPED) jw_str(&w, "why", key->why);
        jw_end(&w);
    }
    jw_end(&w);
    int logs = 0;
    for (int i = 0; i < n; i++) logs += e[i].net < 0;
    json_list(&w, "estimates", logs, 4);
    for (int i = 0; i < n; i++) {
        if (e[i].net >= 0) continue;
        jw_object(&w, NULL);
        jw_str(&w, "key", e[i].key);
        jw_num(&w, "value", e[i].value);
        jw_num(&w, "stderr", e[i].se);
        jw_end(&w);
    }
    jw_end(&w);
    jw_int(&w, "iterations", r->iterations);
    jw_int(&w, "fits", r->fits);
    jw_int(&w, "simulations", (long long)r->runs);
    jw_int(&w, "dof", r->dof);
    jw_num(&w, "rms_relative_residual_at_base", r->rms_base);
    jw_num(&w, "rms_relative_residual", r->rms_fit);
    jw_int(&w, "rows_outside_10pct", r->outside);
    json_rows(&w, c);
    jw_end(&w);
}

/* ---- the command ---------------------------------------------------------------- */

static void progress_runs(void *ctx, int64_t done, int64_t total) {
    cli_progress_count(ctx, (double)done, (double)total);
}

/* The fit, its file, its report. */
static int calibrate(cal *c, char *err, size_t errlen) {
    calib_spec s = {.scenario = c->scenario,
                    .sets = c->o.sets,
                    .nset = c->o.nset,
                    .m = &c->m,
                    .keys = c->nfit ? c->fit : NULL,
                    .nkeys = c->nfit,
                    .speeds = c->has_speeds ? &c->speeds : NULL,
                    .jobs = c->jobs,
                    .full = c->o.full,
                    .progress = progress_runs};
    cli_progress progress;
    cli_progress_start(&progress, "calibrate");
    s.progress_ctx = &progress;
    int rc = calib_run(&s, &c->r, err, errlen);
    cli_progress_end(&progress);
    if (rc) return rc;
    outfile out;
    if ((rc = outfile_open(&out, c->o.out, err, errlen))) return rc;
    write_fit(out.f, c);
    if ((rc = outfile_commit(&out, err, errlen))) return rc;
    if (c->json) write_json(stdout, c);
    else write_text(stdout, c);
    return 0;
}

int cli_calibrate(int argc, char **argv) {
    cal *c = calloc(1, sizeof *c);
    if (!c) {
        fputs("dilosim calibrate: out of memory\n", stderr);
        return CLI_EXIT_RUNTIME;
    }
    char err[CLI_ERR_MAX];
    int rc = parse_args(c, argc, argv), status;
    if (rc) {
        free(c);
        return rc < 0 ? CLI_EXIT_OK : rc;
    }
    rc = load_inputs(c, err, sizeof err);
    if (rc == CLI_EXIT_INPUT) status = rc; /* a usage error, printed */
    else {
        if (!rc) rc = calibrate(c, err, sizeof err);
        if (rc == MSG_EINPUT) fprintf(stderr, "%s\n", err);
        else if (rc) fprintf(stderr, "dilosim calibrate: %s\n", err);
        status = msg_exit_status(rc);
    }
    calib_free(&c->r);
    meas_free(&c->m);
    free(c);
    return status;
}
