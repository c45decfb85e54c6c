/*
 * sweep.c -- a grid of scenarios run on worker threads, written as CSV
 * rows in point order (see sweep.h for the contract).
 *
 * The work, in order:
 *   plan      the variants and the dimensions (scenario sections, --vary),
 *             the point count, the header;
 *   validate  every point is loaded once, in this thread, so a bad value
 *             stops the sweep before anything runs;
 *   output    OUT.partial created (or, resuming, checked and cut after its
 *             last complete row) and locked against a second sweep
 *             (sweep_out.c, which also commits it);
 *   run       the worker pool (sim/base/pool.h), or the spec's runner, takes
 *             rows in order (a shard's rows are every N-th point); a
 *             finished row (sweep_compute) is delivered (sweep_deliver)
 *             to a reorder buffer until every earlier row is written,
 *             then the thread holding the lock writes it;
 *   commit    OUT.partial renamed to OUT.
 */
#include "sim/study/sweep.h"
#include "sim/study/sweep_int.h"
#include "sim/base/msg.h"
#include "sim/base/pool.h"
#include "sim/base/rng.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/study/grid.h"
#include "sim/out/report.h"
#include "sim/engine/run.h"
#include "sim/config/scenario.h"
#include "sim/study/sweepfile.h"

static const char result_columns[] =
    "compute_utilization,goodput,wall_time_s,compute_time_s,bytes_sent_total,"
    "peak_link_gbps,avg_link_gbps,syncs,failures,lost_compute_s,"
    "recovery_bytes,finished,events";

static void str_add(str *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = 2 * (b->n + n + 1) + 64;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p, b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->s[b->n += n] = 0;
}

static void str_puts(str *b, const char *s) {
    str_add(b, s, strlen(s));
}

/* A CSV field, quoted (RFC 4180) when it holds a comma, quote or line
 * break. */
static void str_csv(str *b, const char *s) {
    if (!strpbrk(s, ",\"\r\n")) {
        str_puts(b, s);
        return;
    }
    str_puts(b, "\"");
    for (const char *q; (q = strchr(s, '"')); s = q + 1) {
        str_add(b, s, (size_t)(q - s));
        str_puts(b, "\"\"");
    }
    str_puts(b, s);
    str_puts(b, "\"");
}

/* The string, or NULL (freed) when out of memory. */
static char *str_take(str *b) {
    if (!b->oom) return b->s;
    free(b->s);
    return NULL;
}

/* ---------------------------------------------------------------------
 * Points
 */

/* The point of row j of the output: the shard's j-th, or j. */
int64_t sweep__row_point(const sweep *sw, int64_t j) {
    const sweep_spec *s = sw->spec;
    return s->nshards ? s->shard - 1 + j * s->nshards : j;
}

/* The variant (or NULL) and per-dimension values of point p; its
 * variant's index (0 for the base) in *vi when vi is not NULL. */
static const char *point_values(const sweep *sw, int64_t p,
                                const char *vals[SWEEP_MAX_DIMS], int *vi) {
    int idx[SWEEP_MAX_DIMS + 1];
    grid_unrank(sw->naxis, sw->size, p, idx);
    int off = sw->nvar ? 1 : 0;
    for (int k = 0; k < sw->ndim; k++)
        vals[k] = sw->dim[k].vals.v[idx[off + k]];
    if (vi) *vi = sw->nvar ? idx[0] : 0;
    return sw->nvar ? sw->var[idx[0]] : NULL;
}

/* "variant=dp, network.bandwidth_gbps=-1" */
static void point_desc(const sweep *sw, int64_t p, char *buf, size_t len) {
    const char *vals[SWEEP_MAX_DIMS];
    const char *v = point_values(sw, p, vals, NULL);
    size_t n = 0;
    buf[0] = 0;
    if (v) n += (size_t)snprintf(buf, len, "variant=%s", v);
    for (int k = 0; k < sw->ndim && n < len; k++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", n ? ", " : "",
                              sw->dim[k].key, vals[k]);
}

/* The CSV fields of point p's values, each followed by a comma. */
void sweep__point_prefix(const sweep *sw, int64_t p, str *b) {
    const char *vals[SWEEP_MAX_DIMS];
    const char *v = point_values(sw, p, vals, NULL);
    if (v) {
        str_csv(b, v);
        str_puts(b, ",");
    }
    for (int k = 0; k < sw->ndim; k++) {
        str_csv(b, vals[k]);
        str_puts(b, ",");
    }
}

/* "point K (values): msg" into err; returns rc. */
static int point_error(const sweep *sw, int64_t p, int rc, const char *msg,
                       char *err, size_t errlen) {
    char desc[MSG_MAX];
    point_desc(sw, p, desc, sizeof desc);
    return msg_set(err, errlen, rc, "point %lld%s%s%s: %s", (long long)p + 1,
                   *desc ? " (" : "", desc, *desc ? ")" : "", msg);
}

/* Loads point p into *cfg: its variant's doc, the --set overrides, then
 * KEY=VALUE per dimension.  Thread-safe.  Returns 0, or the loader's
 * code (MSG_EINPUT, MSG_ENOMEM) with "point K (...): message". */
static int point_load(const sweep *sw, int64_t p, scn_config *cfg, char *err,
                      size_t errlen) {
    const sweep_spec *s = sw->spec;
    const char *vals[SWEEP_MAX_DIMS];
    int vi;
    point_values(sw, p, vals, &vi);
    int nset = s->nset + sw->ndim;
    const char **sets = malloc((size_t)(nset + 1) * sizeof *sets);
    str kv = {0};
    size_t at[SWEEP_MAX_DIMS];
    for (int k = 0; k < sw->ndim; k++) {
        at[k] = kv.n;
        str_puts(&kv, sw->dim[k].key);
        str_puts(&kv, "=");
        str_add(&kv, vals[k], strlen(vals[k]) + 1); /* with its NUL */
    }
    char msg[MSG_MAX];
    int rc = MSG_ENOMEM;
    scn_origin *from = malloc((size_t)(nset + 1) * sizeof *from);
    if (!sets || !from || kv.oom) {
        snprintf(msg, sizeof msg, "out of memory");
    } else {
        for (int i = 0; i < s->nset; i++) {
            sets[i] = s->sets[i];
            from[i] = (scn_origin){.sweep = -1, .item = -1};
        }
        int idx[SWEEP_MAX_DIMS + 1], off = sw->nvar ? 1 : 0;
        grid_unrank(sw->naxis, sw->size, p, idx);
        for (int k = 0; k < sw->ndim; k++) {
            sets[s->nset + k] = kv.s + at[k];
            from[s->nset + k] = sw->dim[k].from;
            from[s->nset + k].item = idx[off + k];
        }
        rc = scn_doc_load_from(sw->doc[vi], sets, from, nset, cfg, msg,
                               sizeof msg);
        cfg->full = sw->spec->full;
    }
    free(sets);
    free(from);
    free(kv.s);
    return rc ? point_error(sw, p, rc, msg, err, errlen) : rc;
}

/* Appends the exact seconds of ns and a comma. */
static void str_seconds(str *b, int64_t ns) {
    char buf[REPORT_SECONDS_MAX];
    str_puts(b, report_seconds(ns, buf));
    str_puts(b, ",");
}

/* The CSV row of point p: its values, then the result.  Times are the
 * exact decimals of the run's ns counts, bytes whole numbers; ratios and
 * rates the shortest decimal that reads back. */
static char *point_row(const sweep *sw, int64_t p, const scn_config *cfg,
                       const run_result *r) {
    str b = {0};
    char buf[64];
    sweep__point_prefix(sw, p, &b);
    str_puts(&b, msg_number(r->compute_utilization, buf));
    str_puts(&b, ",");
    str_puts(&b, msg_number(r->goodput, buf));
    str_puts(&b, ",");
    str_seconds(&b, r->wall_ns);
    str_seconds(&b, r->compute_ns);
    snprintf(buf, sizeof buf, "%llu,", (unsigned long long)r->bytes_sent_total);
    str_puts(&b, buf);
    str_puts(&b, msg_number(r->peak_link_gbps, buf));
    str_puts(&b, ",");
    str_puts(&b, msg_number(r->avg_link_gbps, buf));
    snprintf(buf, sizeof buf, ",%lld,%lld,", (long long)r->syncs,
             (long long)r->failures);
    str_puts(&b, buf);
    str_seconds(&b, r->lost_ns);
    snprintf(buf, sizeof buf, "%llu,%d,%llu",
             (unsigned long long)r->recovery_bytes, r->finished,
             (unsigned long long)r->events);
    str_puts(&b, buf);
    if (sw->energy) { /* 0 at a point that gives neither key */
        run_energy e;
        run_energy_of(cfg, r, &e);
        str_puts(&b, ",");
        str_puts(&b, msg_number(e.total, buf));
    }
    str_puts(&b, "\n");
    return str_take(&b);
}

/* ---------------------------------------------------------------------
 * The plan
 */

static int plan_variants(sweep *sw, char *err, size_t errlen) {
    const sweep_spec *s = sw->spec;
    const scn_meta *m = &sw->meta;
    if (s->nvariants == 0) {
        for (int i = 0; i < m->nvariants; i++) sw->var[i] = m->variant[i];
        sw->nvar = m->nvariants;
        return MSG_OK;
    }
    char names[SCN_MAX_VARIANTS * (SCN_NAME_MAX + 2)] = "";
    size_t n = 0;
    for (int i = 0; i < m->nvariants; i++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s",
                              i ? ", " : "", m->variant[i]);
    for (int k = 0; k < s->nvariants; k++) {
        const char *v = s->variants[k];
        int i = 0;
        while (i < m->nvariants && strcmp(m->variant[i], v)) i++;
        if (i == m->nvariants && !m->nvariants)
            return msg_set(err, errlen, MSG_EINPUT,
                           "--variant %s: unknown "
                           "variant (%s has no variants)",
                           v, s->scenario);
        if (i == m->nvariants)
            return msg_set(err, errlen, MSG_EINPUT,
                           "--variant %s: unknown "
                           "variant (expected one of: %s)",
                           v, names);
        for (int j = 0; j < sw->nvar; j++)
            if (sw->var[j] == m->variant[i])
                return msg_set(err, errlen, MSG_EINPUT,
                               "--variant %s: "
                               "given twice",
                               v);
        sw->var[sw->nvar++] = m->variant[i];
    }
    return MSG_OK;
}

static dim *find_dim(sweep *sw, const char *key, size_t n) {
    for (int k = 0; k < sw->ndim; k++)
        if (strlen(sw->dim[k].key) == n && !strncmp(sw->dim[k].key, key, n))
            return &sw->dim[k];
    return NULL;
}

/* One --vary KEY=SPEC: replaces the section's KEY or adds a dimension. */
static int plan_vary(sweep *sw, const char *v, char *err, size_t errlen) {
    const char *eq = strchr(v, '=');
    if (!eq || eq == v)
        return msg_set(err, errlen, MSG_EINPUT,
                       "--vary %s: expected "
                       "KEY=SPEC",
                       v);
    size_t n = (size_t)(eq - v);
    if (n >= sizeof sw->dim[0].key)
        return msg_set(err, errlen, MSG_EINPUT,
                       "--vary %s: key longer than "
                       "%d bytes",
                       v, (int)sizeof sw->dim[0].key - 1);
    dim *d = find_dim(sw, v, n);
    if (d && d->from_vary)
        return msg_set(err, errlen, MSG_EINPUT,
                       "--vary %s: %.*s is varied "
                       "twice",
                       v, (int)n, v);
    if (!d && sw->ndim == SWEEP_MAX_DIMS)
        return msg_set(err, errlen, MSG_EINPUT,
                       "--vary %s: more than %d "
                       "dimensions",
                       v, SWEEP_MAX_DIMS);
    if (!d) {
        d = &sw->dim[sw->ndim++];
        memcpy(d->key, v, n);
        d->key[n] = 0;
    }
    d->spec = eq + 1;
    d->from_vary = 1;
    d->from = (scn_origin){.vary = v, .sweep = -1, .item = -1};
    msg_set(d->label, sizeof d->label, 0, "--vary %s", v);
    return MSG_OK;
}

/* The dimensions: the sweep section, then --vary; their values. */
static int plan_dims(sweep *sw, char *err, size_t errlen) {
    const sweep_spec *s = sw->spec;
    const scn_meta *m = &sw->meta;
    for (int i = 0; i < m->nsweep; i++) {
        dim *d = &sw->dim[sw->ndim++];
        strcpy(d->key, m->sweep_key[i]);
        d->spec = m->sweep_spec[i];
        d->from = (scn_origin){.sweep = i, .item = -1};
        msg_set(d->label, sizeof d->label, 0, "%s:%d:%d: sweep.%s",
                strcmp(s->scenario, "-") ? s->scenario : "<stdin>",
                m->sweep_line[i], m->sweep_col[i], d->key);
    }
    for (int i = 0; i < s->nvary; i++) {
        int rc = plan_vary(sw, s->vary[i], err, errlen);
        if (rc) return rc;
    }
    for (int k = 0; k < sw->ndim; k++) {
        dim *d = &sw->dim[k];
        if (grid_parse(d->label, d->spec, &d->vals, err, errlen))
            return MSG_EINPUT;
    }
    /* A --set of a swept key would be overridden by every point. */
    for (int i = 0; i < s->nset; i++) {
        const char *eq = strchr(s->sets[i], '=');
        size_t n = eq ? (size_t)(eq - s->sets[i]) : 0;
        if (n && find_dim(sw, s->sets[i], n))
            return msg_set(err, errlen, MSG_EINPUT,
                           "--set %s: %.*s is "
                           "swept (drop the --set, or give it as --vary %s)",
                           s->sets[i], (int)n, s->sets[i], s->sets[i]);
    }
    return MSG_OK;
}

/* The file read and parsed once: doc[0] is the base (whose sections plan
 * the sweep), later replaced by one doc per variant run.  Standard input
 * ("-") is read once, so it serves the base of a scenario without
 * variants, or exactly one --variant (opened at once: its doc's sections
 * are the file's). */
static int open_docs(sweep *sw, char *err, size_t errlen) {
    const sweep_spec *s = sw->spec;
    int in = !strcmp(s->scenario, "-");
    const char *first = in && s->nvariants == 1 ? s->variants[0] : NULL;
    int rc =
        scn_doc_open(s->scenario, first, NULL, 0, &sw->doc[0], err, errlen);
    if (rc) return rc;
    rc = scn_doc_meta(sw->doc[0], &sw->meta, err, errlen);
    if (rc || !in || first || !sw->meta.nvariants) return rc;
    return msg_set(err, errlen, MSG_EINPUT,
                   "<stdin>: read once, it serves "
                   "one variant only (expected a file for its %d variants, "
                   "or one --variant)",
                   sw->meta.nvariants);
}

static int plan(sweep *sw, char *err, size_t errlen) {
    const sweep_spec *s = sw->spec;
    int rc;
    if ((rc = open_docs(sw, err, errlen)) ||
        (rc = plan_variants(sw, err, errlen)) ||
        (rc = plan_dims(sw, err, errlen)))
        return rc;
    if (sw->nvar && strcmp(s->scenario, "-")) {
        scn_doc_free(sw->doc[0]); /* the base: no point uses it */
        sw->doc[0] = NULL;
        for (int v = 0; v < sw->nvar; v++)
            if ((rc = scn_doc_open(s->scenario, sw->var[v], NULL, 0,
                                   &sw->doc[v], err, errlen)))
                return rc;
    }
    if (sw->nvar) sw->size[sw->naxis++] = sw->nvar;
    for (int k = 0; k < sw->ndim; k++)
        sw->size[sw->naxis++] = sw->dim[k].vals.n;
    sw->npoints = grid_count(sw->naxis, sw->size, SWEEP_MAX_POINTS);
    if (sw->npoints < 0)
        return msg_set(err, errlen, MSG_EINPUT, "more than %d points",
                       SWEEP_MAX_POINTS);
    if (s->nshards < 0 || s->nshards > SWEEPFILE_MAX_SHARDS ||
        (s->nshards && (s->shard < 1 || s->shard > s->nshards)))
        return msg_set(err, errlen, MSG_EINPUT,
                       "--shard %d/%d: expected "
                       "K/N with 1 <= K <= N <= %d",
                       s->shard, s->nshards, SWEEPFILE_MAX_SHARDS);
    sw->count = sweepfile_rows(sw->npoints, s->shard, s->nshards);

    str h = {0};
    if (sw->nvar) str_puts(&h, "variant,");
    for (int k = 0; k < sw->ndim; k++) {
        str_csv(&h, sw->dim[k].key);
        str_puts(&h, ",");
    }
    str_puts(&h, result_columns);
    str_puts(&h, "\n");
    if (!(sw->header = str_take(&h)))
        return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    return MSG_OK;
}

/* One pass of validate over every point: the digest, the points in the
 * binary Gbit, and whether some point gives an energy key (*energy). */
static int digest_points(sweep *sw, scn_config *cfg, int64_t *nbinary,
                         int *energy, char *err, size_t errlen) {
    int rc = MSG_OK;
    str vals = {0};
    *nbinary = 0;
    *energy = 0;
    sw->digest = rng_mix((uint64_t)sw->npoints);
    sw->digest =
        rng_mix(sw->digest ^ scn_digest_bytes(sw->header, strlen(sw->header)));
    for (int64_t p = 0; p < sw->npoints && !rc; p++) {
        rc = point_load(sw, p, cfg, err, errlen);
        vals.n = 0;
        sweep__point_prefix(sw, p, &vals);
        if (!rc && vals.oom)
            rc = msg_set(err, errlen, MSG_ENOMEM, "out of memory");
        sw->digest = rng_mix(sw->digest ^ cfg->digest);
        sw->digest = rng_mix(sw->digest ^ scn_digest_bytes(vals.s, vals.n));
        *nbinary += !rc && cfg->gbit == SCN_GBIT_BINARY;
        *energy |= !rc && (cfg->has_power || cfg->has_joules_per_gb);
    }
    free(vals.s);
    return rc;
}

/* The header with the energy column after the others. */
static int add_energy_column(sweep *sw, char *err, size_t errlen) {
    str h = {0};
    str_add(&h, sw->header, strlen(sw->header) - 1); /* before its newline */
    str_puts(&h, ",energy_kwh_total\n");
    char *s = str_take(&h);
    if (!s) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    free(sw->header);
    sw->header = s;
    sw->energy = 1;
    return MSG_OK;
}

/* Loads every point once: input errors before anything runs.  The
 * digest folds the point count, the header, and each point's config and
 * values as its row writes them: another scenario, variant, override or
 * grid (even one writing a value otherwise, 1.0 for 1) gives another.
 * When some point gives workers.power_w or network.joules_per_gb the
 * header gains energy_kwh_total and the points are folded again (a sweep
 * without them loads each point once and keeps its header). */
static int validate(sweep *sw, char *err, size_t errlen) {
    const sweep_spec *s = sw->spec;
    scn_config *cfg = malloc(sizeof *cfg);
    if (!cfg) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    int64_t nbinary;
    int energy;
    int rc = digest_points(sw, cfg, &nbinary, &energy, err, errlen);
    if (!rc && energy) rc = add_energy_column(sw, err, errlen);
    if (!rc && energy)
        rc = digest_points(sw, cfg, &nbinary, &energy, err, errlen);
    free(cfg);
    sw->id = (sweepfile_id){.digest = sw->digest,
                            .shard = s->shard,
                            .nshards = s->nshards,
                            .npoints = s->nshards ? sw->npoints : 0};
    sweepfile_line(&sw->id, sw->digest_line);
    /* The unit of the Gbit/s columns after the version: not part of the
     * identity a resume compares. */
    sw->gbit_note = scn_gbit_note(nbinary, sw->npoints);
    size_t n = strlen(sw->digest_line) - 1; /* before its newline */
    snprintf(sw->digest_line + n, sizeof sw->digest_line - n, "%s\n",
             sw->gbit_note);
    return rc;
}

/* ---------------------------------------------------------------------
 * The workers
 */

/* Records the failure of row j (under mu); the lowest row wins, so the
 * message does not depend on the number of threads. */
static void record_failure(sweep *sw, int64_t j, int rc, const char *msg) {
    if (sw->failed && sw->fail_point <= j) return;
    sw->failed = 1;
    sw->fail_point = j;
    sw->fail_rc = rc;
    msg_set(sw->fail_msg, sizeof sw->fail_msg, 0, "%s", msg);
}

/* Writes every finished row that is next in order (under mu). */
static void drain(sweep *sw) {
    while (sw->written < sw->count && sw->rows[sw->written]) {
        char *row = sw->rows[sw->written];
        sw->rows[sw->written] = NULL;
        if (!sw->failed || sw->written < sw->fail_point) {
            fputs(row, sw->f);
            if (fflush(sw->f)) {
                char msg[ERR_MAX];
                sweep__out_error(sw, errno, msg, sizeof msg);
                record_failure(sw, sw->written, MSG_EIO, msg);
            }
        }
        free(row);
        sw->written++;
    }
}

/* Runs point p; returns its row, or NULL with the code in *rc
 * (run_simulate's, unchanged, or MSG_ENOMEM) and the message in err. */
static char *run_point(const sweep *sw, int64_t p, const scn_config *cfg,
                       int *rc, char *err, size_t errlen) {
    run_result *r = malloc(sizeof *r);
    char msg[MSG_MAX] = "out of memory", *row = NULL;
    *rc = r ? run_simulate(cfg, NULL, r, msg, sizeof msg) : MSG_ENOMEM;
    if (!*rc && !(row = point_row(sw, p, cfg, r))) {
        *rc = MSG_ENOMEM;
        snprintf(msg, sizeof msg, "out of memory");
    }
    free(r);
    if (!row) point_error(sw, p, *rc, msg, err, errlen);
    return row;
}

int64_t sweep_kept(const sweep *sw) {
    return sw->kept;
}

int64_t sweep_count(const sweep *sw) {
    return sw->count;
}

const char *sweep_partial(const sweep *sw) {
    return sw->partial;
}

/* Loaded from its variant's doc (scn_doc_load is thread-safe) and run
 * without any lock. */
int sweep_compute(const sweep *sw, int64_t j, char **row, char *err,
                  size_t errlen) {
    int64_t p = sweep__row_point(sw, j);
    scn_config *cfg = malloc(sizeof *cfg);
    int rc = cfg ? MSG_OK : msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    *row = NULL;
    if (!rc) rc = point_load(sw, p, cfg, err, errlen);
    if (!rc) *row = run_point(sw, p, cfg, &rc, err, errlen);
    free(cfg);
    return rc;
}

int sweep_deliver(sweep *sw, int64_t j, char *row, int rc, const char *msg) {
    pthread_mutex_lock(&sw->mu);
    if (rc || !row) {
        free(row);
        record_failure(sw, j, rc ? rc : MSG_EFAIL, msg);
    } else if (j < sw->kept || j >= sw->count || sw->rows[j]) {
        free(row); /* not a row to run, or given twice: the first stays */
    } else {
        sw->rows[j] = row;
        sw->done++;
        drain(sw);
        if (sw->spec->progress)
            sw->spec->progress(sw->spec->progress_ctx, sw->kept + sw->done,
                               sw->count);
    }
    rc = sw->failed ? sw->fail_rc : MSG_OK;
    pthread_mutex_unlock(&sw->mu);
    return rc;
}

/* A pool task: row kept + i, computed, then delivered. */
static int point_task(void *ctx, int64_t i, char *err, size_t errlen) {
    sweep *sw = ctx;
    char *row;
    int rc = sweep_compute(sw, sw->kept + i, &row, err, errlen);
    return sweep_deliver(sw, sw->kept + i, row, rc, err);
}

/* Runs the remaining rows: through the spec's runner, or on the worker
 * pool, min(jobs, remaining) threads, this one included.  Every row must
 * have been written for the output to be complete. */
static int run_all(sweep *sw, char *err, size_t errlen) {
    const sweep_spec *s = sw->spec;
    sw->rows = calloc((size_t)sw->count + 1, sizeof *sw->rows);
    if (!sw->rows) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    int jobs = s->jobs < 1 ? 1 : s->jobs, rc = MSG_OK;
    char msg[MSG_MAX];
    if (s->runner) rc = s->runner(s->runner_ctx, sw, jobs, err, errlen);
    else pool_for(jobs, sw->count - sw->kept, point_task, sw, msg, sizeof msg);
    for (int64_t j = 0; j < sw->count; j++) free(sw->rows[j]);
    if (sw->failed)
        return msg_set(err, errlen, sw->fail_rc, "%s", sw->fail_msg);
    if (!rc && sw->written < sw->count)
        rc = msg_set(err, errlen, MSG_EFAIL, "%lld of %lld rows computed",
                     (long long)sw->written, (long long)sw->count);
    return rc;
}

static void sweep_free(sweep *sw) {
    for (int k = 0; k < sw->ndim; k++) grid_free(&sw->dim[k].vals);
    for (int v = 0; v < SCN_MAX_VARIANTS; v++) scn_doc_free(sw->doc[v]);
    free(sw->header);
    free(sw->rows);
    free(sw->target);
    free(sw->partial);
    pthread_mutex_destroy(&sw->mu);
    free(sw);
}

int sweep_run(const sweep_spec *s, char *err, size_t errlen) {
    sweep *sw = calloc(1, sizeof *sw);
    if (!sw) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    sw->spec = s;
    pthread_mutex_init(&sw->mu, NULL);
    int rc = plan(sw, err, errlen);
    if (s->worker) {
        if (!rc && !s->runner)
            rc = msg_set(err, errlen, MSG_EINPUT, "a worker needs a runner");
        if (!rc)
            rc = s->runner(s->runner_ctx, sw, s->jobs < 1 ? 1 : s->jobs, err,
                           errlen);
        sweep_free(sw);
        return rc;
    }
    if (!rc) rc = validate(sw, err, errlen);
    if (!rc) rc = sweep__open_output(sw, err, errlen);
    if (rc > 0) {
        if (s->log)
            fprintf(s->log,
                    "%s: already complete (%lld rows); nothing to "
                    "do\n",
                    s->out, (long long)sw->count);
        rc = MSG_OK;
    } else {
        if (!rc) rc = run_all(sw, err, errlen);
        rc = sweep__finish(sw, rc, err, errlen);
    }
    sweep_free(sw);
    return rc;
}
