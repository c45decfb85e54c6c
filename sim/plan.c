/*
 * plan.c -- least bandwidth, latency limit and monthly costs per method
 * (see plan.h).  Every search is a scan evaluated by table_run (all
 * methods' points on the same threads), then a table_solve between the
 * first scan point on the far side of the target and the one before, so
 * the points, the crossings and the threads are the table's.
 */
#include "plan.h"
#include "../models/msg.h"
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BANDWIDTH_KEY "network.bandwidth_gbps"
#define LATENCY_KEY "network.latency_ms"
#define MAX_SETS 520

/* ---- the cost file ----------------------------------------------------- */

/* The cost file goes through the scenario's strict JSON reader (sim/json.h):
 * errors are "file:line:col: key: what is wrong (expected ...)". */
#define COST_MAX_BYTES (64 << 10)

enum { K_WAN, K_ACC_PRICE, K_ACC, K_BANDWIDTHS, NKEYS };
static const char *const cost_key[NKEYS] = {
    "wan_usd_per_gbps_month", "accelerator_usd_per_hour", "accelerators",
    "bandwidths_gbps"};

/* The parsed text and where its messages go. */
typedef struct {
    const char *name, *text;
    const json_doc *doc;
    char *err;
    size_t errlen;
} cost_ctx;

/* "name:line:col: path: what", at node at (its key when at_key). */
static int cost_fail(const cost_ctx *c, const cJSON *at, int at_key,
                     const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int cost_fail(const cost_ctx *c, const cJSON *at, int at_key,
                     const char *path, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    msg_vset(msg, sizeof msg, 0, fmt, ap);
    va_end(ap);
    size_t off = 0;
    for (size_t i = 0; i < c->doc->npos; i++)
        if (c->doc->pos[i].node == at) {
            const json_pos *p = &c->doc->pos[i];
            off = at_key && p->key != JSON_NO_POS ? p->key : p->val;
            break;
        }
    int line, col;
    json_line_col(c->text, off, &line, &col);
    return msg_set(c->err, c->errlen, MSG_EINPUT, "%s:%d:%d: %s: %s",
                   c->name, line, col, path, msg);
}

/* A finite number >= lo (> lo when strict), an integer when asked. */
static int cost_number(const cost_ctx *c, const cJSON *it, const char *key,
                       double lo, int strict, int integer, double *out) {
    const char *what = integer ? "an integer" : "a number";
    char b[MSG_NUM_MAX], l[MSG_NUM_MAX];
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
        return cost_fail(c, it, 0, key, "must be %s", what);
    double x = it->valuedouble;
    if (x < lo || (strict && x == lo) || (integer && x != floor(x)) ||
        x > 1e15)
        return cost_fail(c, it, 0, key, "must be %s %s %s, at most 1e15 "
                         "(got %s)", what, strict ? ">" : ">=",
                         msg_number(lo, l), msg_number(x, b));
    *out = x;
    return 0;
}

static int cost_bandwidths(const cost_ctx *c, const cJSON *it,
                           plan_cost *out) {
    const char *key = cost_key[K_BANDWIDTHS];
    int n = cJSON_GetArraySize(it);
    if (!cJSON_IsArray(it) || n < 1 || n > PLAN_MAX_BANDWIDTHS)
        return cost_fail(c, it, 0, key, "must be an array of 1 to %d "
                         "bandwidths (Gbit/s)", PLAN_MAX_BANDWIDTHS);
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, it) {
        char path[64];
        snprintf(path, sizeof path, "%s[%d]", key, i);
        if (cost_number(c, e, path, 0, 1, 0, &out->bandwidths_gbps[i]))
            return MSG_EINPUT;
        i++;
    }
    out->nbandwidths = n;
    return 0;
}

static int cost_member(const cost_ctx *c, const cJSON *it, int k,
                       plan_cost *out) {
    switch (k) {
    case K_WAN:
        return cost_number(c, it, cost_key[k], 0, 0, 0,
                           &out->wan_usd_per_gbps_month);
    case K_ACC_PRICE:
        return cost_number(c, it, cost_key[k], 0, 0, 0,
                           &out->accelerator_usd_per_hour);
    case K_ACC:
        return cost_number(c, it, cost_key[k], 1, 0, 1, &out->accelerators);
    default:
        return cost_bandwidths(c, it, out);
    }
}

static int cost_object(const cost_ctx *c, const cJSON *root, plan_cost *out) {
    char names[160];
    msg_name_list(cost_key, NKEYS, names, sizeof names);
    if (!cJSON_IsObject(root))
        return cost_fail(c, root, 0, "(root)", "must be a JSON object "
                         "(expected the keys %s)", names);
    const cJSON *seen[NKEYS] = {0}, *it;
    cJSON_ArrayForEach(it, root) {
        int k = msg_parse_name(it->string, cost_key, NKEYS);
        if (k < 0)
            return cost_fail(c, it, 1, it->string, "unknown key (expected "
                             "one of: %s)", names);
        if (seen[k]) {
            int line, col;
            size_t off = 0;
            for (size_t i = 0; i < c->doc->npos; i++)
                if (c->doc->pos[i].node == seen[k]) off = c->doc->pos[i].key;
            json_line_col(c->text, off, &line, &col);
            return cost_fail(c, it, 1, it->string, "duplicate key (first "
                             "given at %d:%d)", line, col);
        }
        seen[k] = it;
        if (cost_member(c, it, k, out)) return MSG_EINPUT;
    }
    for (int k = 0; k < K_BANDWIDTHS; k++)
        if (!seen[k])
            return cost_fail(c, root, 0, cost_key[k], "missing (expected "
                             "%s, %s and %s)", cost_key[0], cost_key[1],
                             cost_key[2]);
    return 0;
}

int plan_cost_parse_n(const char *text, size_t len, const char *name,
                      plan_cost *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (len > COST_MAX_BYTES)
        return msg_set(err, errlen, MSG_EINPUT, "%s: larger than 64 KiB "
                       "(expected a cost file of at most %d bytes)", name,
                       COST_MAX_BYTES);
    json_doc doc;
    size_t at;
    char msg[128];
    int rc = json_parse(text, len, &doc, &at, msg, sizeof msg);
    if (rc == MSG_EINPUT) {
        int line, col;
        json_line_col(text, at, &line, &col);
        return msg_set(err, errlen, rc, "%s:%d:%d: syntax error (%s)", name,
                       line, col, msg);
    }
    if (rc) return msg_set(err, errlen, rc, "%s: %s", name, msg);
    cost_ctx c = {name, text, &doc, err, errlen};
    rc = cost_object(&c, doc.root, out);
    json_doc_free(&doc);
    if (rc) memset(out, 0, sizeof *out);
    return rc;
}

int plan_cost_parse(const char *text, const char *name, plan_cost *out,
                    char *err, size_t errlen) {
    return plan_cost_parse_n(text, strlen(text), name, out, err, errlen);
}

int plan_cost_load(const char *path, plan_cost *out, char *err,
                   size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return msg_set(err, errlen, MSG_EINPUT, "%s: cannot open: %s", path,
                       strerror(errno));
    char *buf = malloc(COST_MAX_BYTES + 2);
    if (!buf) {
        fclose(f);
        return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", path);
    }
    size_t n = fread(buf, 1, COST_MAX_BYTES + 1, f);
    int bad = ferror(f), e = errno;
    fclose(f);
    int rc;
    if (bad)
        rc = msg_set(err, errlen, MSG_EINPUT, "%s: cannot read: %s", path,
                     strerror(e));
    else {
        buf[n] = 0;
        rc = plan_cost_parse_n(buf, n, path, out, err, errlen);
    }
    free(buf);
    return rc;
}

/* ---- searches ---------------------------------------------------------- */

/* The scan grids (grid.h specs): bandwidth PLAN_MIN_GBPS..PLAN_MAX_GBPS,
 * latency 0 then 0.001..PLAN_MAX_LATENCY_MS ms, 10 points per decade. */
#define BANDWIDTH_SCAN "logspace:-2:5:71"
#define LATENCY_SCAN "logspace:-3:3:61"
#define MAX_SCAN 72

/* The scenario contexts of every method: bandwidth swept (bw), and
 * latency swept at a fixed bandwidth (lat, with one more override). */
typedef struct {
    int n;
    const char *names[SCN_MAX_VARIANTS];
    scn_meta meta;                         /* names[] may point here */
    scn_doc *docs[SCN_MAX_VARIANTS];       /* each method parsed once */
    table_scenario bw[SCN_MAX_VARIANTS], lat[SCN_MAX_VARIANTS];
    const char *lat_sets[SCN_MAX_VARIANTS][MAX_SETS];
    char lat_bw[SCN_MAX_VARIANTS][64];
    table_block blocks[SCN_MAX_VARIANTS];
    int lat_idx[SCN_MAX_VARIANTS], nlat;   /* methods with a latency scan */
    double lat_grid[MAX_SCAN];
    int nlat_grid;
    struct {                               /* latency_task's results */
        table_crossing latency;
        int rise;
    } lat_res[SCN_MAX_VARIANTS];
    double target;
    plan_result *out;
    table_progress *pr;    /* tasks done, or NULL */
    table_exec ex;         /* how the batches run (pr their count) */
} work;

/* A scan grid into x (n values). */
static int scan_grid(const char *spec, double *x, int *n, char *err,
                     size_t errlen) {
    double *v;
    int rc = table_parse_numbers("plan", spec, MAX_SCAN - 1, &v, n, err,
                                 errlen);
    if (rc) return rc;
    memcpy(x, v, (size_t)*n * sizeof *x);
    free(v);
    return 0;
}

static int find_least(work *w, const plan_spec *spec, plan_result *out,
                      char *err, size_t errlen) {
    double grid[MAX_SCAN];
    int n;
    void *ctx[SCN_MAX_VARIANTS];
    int rc = scan_grid(BANDWIDTH_SCAN, grid, &n, err, errlen);
    if (rc) return rc;
    for (int m = 0; m < w->n; m++) ctx[m] = &w->bw[m];
    if (w->pr) w->pr->total += (int64_t)w->n * (n + 1);
    rc = table_run_on(w->n, table_scenario_cu, ctx, grid, n,
                      &spec->target_cu, 1, &w->ex, w->blocks, err, errlen);
    if (rc) return rc;
    for (int m = 0; m < w->n; m++) {
        table_crossing x = w->blocks[m].row[0].exact;
        if (x.status == TABLE_AT_START) {
            x.v = x.v_hi = grid[0];
            x.cu = x.cu_hi = w->blocks[m].cu[0];
        }
        out->method[m].least = x;
        out->method[m].bandwidth_dip = w->blocks[m].dip >= 0;
        free(w->blocks[m].cu);
    }
    return 0;
}

/* The latency context of method m: its overrides, then the bandwidth. */
static void latency_context(work *w, const plan_spec *spec, int m,
                            double gbps) {
    char num[MSG_NUM_MAX];
    snprintf(w->lat_bw[m], sizeof w->lat_bw[m], BANDWIDTH_KEY "=%s",
             msg_number(gbps, num));
    for (int i = 0; i < spec->nset; i++) w->lat_sets[m][i] = spec->sets[i];
    w->lat_sets[m][spec->nset] = w->lat_bw[m];
    w->lat[m] = w->bw[m];
    w->lat[m].sets = w->lat_sets[m];
    w->lat[m].nset = spec->nset + 1;
    w->lat[m].key = LATENCY_KEY;
}

/* Task i: the latency limit of method lat_idx[i] from its scan: below the
 * first latency at which CU falls under the target (into lat_res[i],
 * which starts as the method's latency). */
static int latency_task(void *arg, int i, char *err, size_t errlen) {
    work *w = arg;
    const table_block *b = &w->blocks[i];
    const double *g = w->lat_grid;
    table_crossing *x = &w->lat_res[i].latency;
    int k = 0;
    while (k < b->npoints && b->cu[k] >= w->target) k++;
    w->lat_res[i].rise = table_first_dip(b->cu, b->npoints, 0) >= 0;
    x->status = k == 0 ? TABLE_NOT_REACHED
                : k == b->npoints ? TABLE_AT_START : TABLE_FOUND;
    if (x->status == TABLE_AT_START) {
        x->v = x->v_hi = g[k - 1];
        x->cu = x->cu_hi = b->cu[k - 1];
    }
    if (x->status != TABLE_FOUND) return 0;
    table_point below = {g[k], b->cu[k]}, reach = {g[k - 1], b->cu[k - 1]};
    return table_solve(table_scenario_cu, &w->lat[w->lat_idx[i]], w->target,
                       below, reach, g[k - 1] > 0, x, err, errlen);
}

static void latency_out(void *arg, int i, void **ptr, size_t *len) {
    work *w = arg;
    *ptr = &w->lat_res[i];
    *len = sizeof w->lat_res[i];
}

static int find_latency(work *w, const plan_spec *spec, plan_result *out,
                        char *err, size_t errlen) {
    void *ctx[SCN_MAX_VARIANTS];
    w->nlat = 0;
    for (int m = 0; m < w->n; m++) {
        plan_method *pm = &out->method[m];
        pm->latency_gbps = NAN;
        pm->latency = (table_crossing){.status = TABLE_NOT_REACHED,
                                       .v = NAN, .cu = NAN, .v_hi = NAN,
                                       .cu_hi = NAN};
        if (pm->least.status == TABLE_NOT_REACHED) continue;
        pm->latency_gbps = PLAN_LATENCY_MARGIN * pm->least.v_hi;
        latency_context(w, spec, m, pm->latency_gbps);
        ctx[w->nlat] = &w->lat[m];
        w->lat_idx[w->nlat++] = m;
    }
    if (!w->nlat) return 0;
    w->lat_grid[0] = 0;
    int rc = scan_grid(LATENCY_SCAN, w->lat_grid + 1, &w->nlat_grid, err,
                       errlen);
    if (rc) return rc;
    w->nlat_grid++;
    if (w->pr) w->pr->total += (int64_t)w->nlat * (w->nlat_grid + 1);
    rc = table_run_on(w->nlat, table_scenario_cu, ctx, w->lat_grid,
                      w->nlat_grid, NULL, 0, &w->ex, w->blocks, err, errlen);
    if (rc) return rc;
    for (int i = 0; i < w->nlat; i++)
        w->lat_res[i].latency = out->method[w->lat_idx[i]].latency;
    rc = table_parallel_on(w->nlat, latency_task, latency_out, w, &w->ex, err,
                           errlen);
    for (int i = 0; i < w->nlat && !rc; i++) {
        out->method[w->lat_idx[i]].latency = w->lat_res[i].latency;
        out->method[w->lat_idx[i]].latency_rise = w->lat_res[i].rise;
    }
    for (int i = 0; i < w->nlat; i++) free(w->blocks[i].cu);
    return rc;
}

/* ---- costs ------------------------------------------------------------- */

static plan_option price(const plan_cost *c, int workers, double gbps,
                         double cu) {
    plan_option o = {.gbps = gbps, .cu = cu};
    o.wan_usd = gbps * workers * c->wan_usd_per_gbps_month;
    o.idle_usd = (1 - cu) * c->accelerators * c->accelerator_usd_per_hour *
                 PLAN_HOURS_PER_MONTH;
    o.total_usd = o.wan_usd + o.idle_usd;
    return o;
}

/* Inserts o keeping the options in increasing bandwidth (stable). */
static void add_option(plan_method *pm, plan_option o) {
    int i = pm->noptions++;
    while (i > 0 && pm->option[i - 1].gbps > o.gbps) {
        pm->option[i] = pm->option[i - 1];
        i--;
    }
    pm->option[i] = o;
}

static void mark_cheapest(plan_result *out) {
    out->best_method = out->best_option = -1;
    double best = INFINITY;
    for (int m = 0; m < out->nmethods; m++) {
        plan_method *pm = &out->method[m];
        int k = -1;
        for (int i = 0; i < pm->noptions; i++)
            if (k < 0 || pm->option[i].total_usd < pm->option[k].total_usd)
                k = i;
        if (k < 0) continue;
        pm->option[k].cheapest_method = 1;
        if (pm->option[k].total_usd < best) {
            best = pm->option[k].total_usd;
            out->best_method = m;
            out->best_option = k;
        }
    }
    if (out->best_method >= 0)
        out->method[out->best_method]
            .option[out->best_option]
            .cheapest_overall = 1;
}

static int find_costs(work *w, const plan_spec *spec, plan_result *out,
                      char *err, size_t errlen) {
    const plan_cost *c = spec->cost;
    int nb = c->nbandwidths;
    if (nb) {
        void *ctx[SCN_MAX_VARIANTS];
        for (int m = 0; m < w->n; m++) ctx[m] = &w->bw[m];
        if (w->pr) w->pr->total += (int64_t)w->n * nb;
        int rc = table_run_on(w->n, table_scenario_cu, ctx,
                              c->bandwidths_gbps, nb, NULL, 0, &w->ex,
                              w->blocks, err, errlen);
        if (rc) return rc;
    }
    for (int m = 0; m < w->n; m++) {
        plan_method *pm = &out->method[m];
        for (int i = 0; i < nb; i++)
            add_option(pm, price(c, pm->workers, c->bandwidths_gbps[i],
                                 w->blocks[m].cu[i]));
        if (nb) free(w->blocks[m].cu);
        if (pm->least.status == TABLE_NOT_REACHED) continue;
        plan_option o = price(c, pm->workers, pm->least.v_hi,
                              pm->least.cu_hi);
        o.is_least = 1;
        add_option(pm, o);
    }
    mark_cheapest(out);
    return 0;
}

/* ---- the plan ---------------------------------------------------------- */

/* Sets up the bandwidth contexts, each method's file parsed once (w->docs,
 * freed by the caller); loads every method once (input errors show here)
 * for its name and worker count. */
static int setup(work *w, const plan_spec *spec, plan_result *out, char *err,
                 size_t errlen) {
    int n = table_docs_open(spec->path, spec->variants, spec->nvariants,
                            w->names, &w->meta, w->docs, err, errlen);
    if (n < 0) return n;
    w->n = n;
    if (spec->nset + 1 >= MAX_SETS)
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: too many --set overrides", spec->path);
    out->nmethods = w->n;
    for (int m = 0; m < w->n; m++) {
        w->bw[m] = (table_scenario){spec->path, w->names[m], spec->sets,
                                    spec->nset, BANDWIDTH_KEY, w->docs[m],
                                    spec->full};
        scn_config cfg;
        int rc = table_scenario_name(&w->bw[m], PLAN_MIN_GBPS,
                                     out->method[m].name, &cfg, err, errlen);
        if (rc) return rc;
        out->method[m].workers = cfg.workers;
    }
    return 0;
}

int plan_compute(const plan_spec *spec, plan_result *out, char *err,
                 size_t errlen) {
    return plan_compute_progress(spec, NULL, NULL, out, err, errlen);
}

int plan_compute_progress(const plan_spec *spec, table_progress_fn progress,
                          void *ctx, plan_result *out, char *err,
                          size_t errlen) {
    table_progress pr = {progress, ctx, 0, 0};
    memset(out, 0, sizeof *out);
    out->target_cu = spec->target_cu;
    out->best_method = out->best_option = -1;
    if (!(spec->target_cu > 0 && spec->target_cu <= 1))
        return msg_set(err, errlen, MSG_EINPUT,
                       "target CU must be in (0, 1] (got %g)",
                       spec->target_cu);
    work *w = calloc(1, sizeof *w);
    if (!w) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    w->target = spec->target_cu;
    w->out = out;
    w->pr = progress ? &pr : NULL;
    w->ex = (table_exec){spec->jobs, spec->runner, w->pr};
    int rc = setup(w, spec, out, err, errlen);
    if (!rc) rc = find_least(w, spec, out, err, errlen);
    if (!rc) rc = find_latency(w, spec, out, err, errlen);
    if (!rc && spec->cost) {
        out->has_cost = 1;
        out->cost = *spec->cost;
        rc = find_costs(w, spec, out, err, errlen);
    }
    table_docs_free(w->docs, w->n);
    free(w);
    return rc;
}

void plan_method_text(const plan_method *m, char least[PLAN_CELL_MAX],
                      char cu[PLAN_CELL_MAX], char latency[PLAN_CELL_MAX],
                      char at[PLAN_CELL_MAX]) {
    snprintf(cu, PLAN_CELL_MAX, "-");
    snprintf(at, PLAN_CELL_MAX, "-");
    if (m->least.status == TABLE_NOT_REACHED) {
        snprintf(least, PLAN_CELL_MAX, "> %g", PLAN_MAX_GBPS);
        snprintf(latency, PLAN_CELL_MAX, "-");
        return;
    }
    if (m->least.status == TABLE_AT_START)
        snprintf(least, PLAN_CELL_MAX, "<= %g", PLAN_MIN_GBPS);
    else
        snprintf(least, PLAN_CELL_MAX, "%.4g", m->least.v_hi);
    snprintf(cu, PLAN_CELL_MAX, "%.4f", m->least.cu_hi);
    snprintf(at, PLAN_CELL_MAX, "%.4g", m->latency_gbps);
    if (m->latency.status == TABLE_AT_START)
        snprintf(latency, PLAN_CELL_MAX, "> %g", PLAN_MAX_LATENCY_MS);
    else if (m->latency.status == TABLE_NOT_REACHED)
        snprintf(latency, PLAN_CELL_MAX, "none");
    else
        snprintf(latency, PLAN_CELL_MAX, "%.4g", m->latency.v_hi);
}

void plan_option_note(const plan_option *o, char *buf, size_t n) {
    const char *cheap = o->cheapest_overall  ? "cheapest overall"
                        : o->cheapest_method ? "cheapest" : "";
    snprintf(buf, n, "%s%s%s", o->is_least ? "least" : "",
             o->is_least && *cheap ? ", " : "", cheap);
}
