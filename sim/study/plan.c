/*
 * plan.c -- least bandwidth, latency limit and monthly costs per method
 * (see plan.h), and what explains them: the assumptions, each
 * candidate's binding limit, the sensitivity and a whole training.  Every
 * search is a scan evaluated by table_run (all methods' points on the
 * same threads), then a table_solve between the first scan point on the
 * far side of the target and the one before, so the points, the
 * crossings and the threads are the table's; the candidates' further
 * simulations are one batch of table_parallel_on.  The cost file is
 * read in plan_cost.c.
 */
#include "sim/study/plan.h"
#include "sim/base/msg.h"
#include "sim/engine/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BANDWIDTH_KEY "network.bandwidth_gbps"
#define MAX_SETS 520

/* ---- searches ---------------------------------------------------------- */

/* The scan grids (grid.h specs): bandwidth PLAN_BANDWIDTH_SCAN, latency
 * 0 then 0.001..PLAN_MAX_LATENCY_MS ms, 10 points per decade. */
#define LATENCY_SCAN "logspace:-3:3:61"
#define MAX_SCAN 72

/* A change made to a loaded config before it runs. */
typedef enum {
    CH_NONE,
    CH_BANDWIDTH_X2, /* every up and down link */
    CH_LATENCY_HALF, /* every one-way latency (and matrix entry), and the
                         windows with it: window / round trip stays */
    CH_WINDOW_X2,    /* tcp_window_mb, and with tcp tcp_init_window_kb */
    CH_LATENCY_X2,
    CH_EFFICIENCY, /* network.efficiency = PLAN_LOW_EFFICIENCY */
    CH_MTBF,       /* random failures at mtbf_s, no trace */
    CH_LATENCY_SET /* every pair at latency_ms one way (no matrix) */
} change;

/* A table_cu_fn context: a scenario, changed. */
typedef struct {
    const table_scenario *sc;
    change ch;
    double mtbf_s;     /* CH_MTBF */
    int64_t steps;     /* > 0: the run's steps, set on the config */
    double latency_ms; /* CH_LATENCY_SET */
} changed;

/* The latency scan's table_cu_fn context: a scenario at one bandwidth. */
typedef struct {
    changed x;
    double gbps;
} at_gbps;

/* One simulation of a candidate: option k of method m. */
typedef struct {
    int m, k, try; /* try: a PLAN_TRY_*, or -1 for the base run */
    int train;     /* the whole training */
    changed x;
} cand_task;

/* The scenario contexts of every method: bandwidth swept (bw), and
 * latency swept at a fixed bandwidth (lat). */
typedef struct {
    int n;
    const char *names[SCN_MAX_VARIANTS];
    scn_meta meta;                   /* names[] may point here */
    scn_doc *docs[SCN_MAX_VARIANTS]; /* each method parsed once */
    table_scenario bw[SCN_MAX_VARIANTS];
    at_gbps lat[SCN_MAX_VARIANTS];
    table_block blocks[SCN_MAX_VARIANTS];
    int lat_idx[SCN_MAX_VARIANTS], nlat; /* methods with a latency scan */
    double lat_grid[MAX_SCAN];
    int nlat_grid;
    struct { /* latency_task's results */
        table_crossing latency;
        int rise;
    } lat_res[SCN_MAX_VARIANTS];
    double target;
    plan_result *out;
    table_progress *pr; /* tasks done, or NULL */
    table_exec ex;      /* how the batches run (pr their count) */
    changed sens[PLAN_NSENS * SCN_MAX_VARIANTS]; /* sensitivity curves */
    int ntasks; /* the candidates' simulations */
    cand_task *tasks;
    plan_run *runs; /* their results */
} work;

/* A scan grid into x (n values). */
static int scan_grid(const char *spec, double *x, int *n, char *err,
                     size_t errlen) {
    double *v;
    int rc =
        table_parse_numbers("plan", spec, MAX_SCAN - 1, &v, n, err, errlen);
    if (rc) return rc;
    memcpy(x, v, (size_t)*n * sizeof *x);
    free(v);
    return 0;
}

/* The one-way latency of every pair of workers: its least and largest
 * (0 and 0 with one worker). */
static void latency_range(const scn_config *c, double *lo, double *hi) {
    *lo = *hi = 0;
    for (int i = 0, first = 1; i < c->workers; i++)
        for (int j = i + 1; j < c->workers; j++, first = 0) {
            double l = scn_latency_ms(c, i, j);
            if (first || l < *lo) *lo = l;
            if (first || l > *hi) *hi = l;
        }
}

static void latency_scale(scn_config *c, double f) {
    for (int i = 0; i < c->workers; i++) c->latency_ms[i] *= f;
    if (c->has_latency_matrix)
        for (int i = 0; i < c->workers * c->workers; i++)
            c->latency_matrix_ms[i] *= f;
}

static void apply_change(scn_config *c, const changed *x) {
    switch (x->ch) {
    case CH_BANDWIDTH_X2:
        for (int i = 0; i < c->workers; i++) {
            c->up_gbps[i] *= 2;
            c->down_gbps[i] *= 2;
        }
        break;
    case CH_LATENCY_HALF:
        latency_scale(c, 0.5);
        c->tcp_window_mb *= 0.5;
        c->tcp_init_window_kb *= 0.5;
        break;
    case CH_LATENCY_X2: latency_scale(c, 2); break;
    case CH_WINDOW_X2:
        c->tcp_window_mb *= 2;
        if (c->transport == SCN_TRANSPORT_TCP) c->tcp_init_window_kb *= 2;
        break;
    case CH_EFFICIENCY: c->efficiency = PLAN_LOW_EFFICIENCY; break;
    case CH_MTBF:
        c->faults.mtbf_s = x->mtbf_s;
        c->trace_path[0] = 0;
        break;
    case CH_LATENCY_SET:
        c->has_latency_matrix = 0;
        for (int i = 0; i < c->workers; i++) c->latency_ms[i] = x->latency_ms;
        break;
    case CH_NONE: break;
    }
    if (x->steps > 0) c->steps = x->steps;
}

/* Simulates x's scenario at gbps, changed. */
static int changed_run(const changed *x, double gbps, plan_run *out, char *err,
                       size_t errlen) {
    scn_config cfg;
    int rc = table_scenario_load(x->sc, gbps, &cfg, err, errlen);
    if (rc) return rc;
    apply_change(&cfg, x);
    run_result r;
    if ((rc = run_simulate(&cfg, NULL, &r, err, errlen))) return rc;
    *out = (plan_run){r.steps,
                      r.finished,
                      r.compute_utilization,
                      r.wall_time_s,
                      (double)r.bytes_sent_total,
                      r.failures,
                      r.avg_link_gbps,
                      r.peak_link_gbps};
    return 0;
}

/* CU of x's scenario at gbps, changed. */
static int changed_cu_at(const changed *x, double gbps, double *cu, char *err,
                         size_t errlen) {
    plan_run run;
    int rc = changed_run(x, gbps, &run, err, errlen);
    if (!rc) *cu = run.cu;
    return rc;
}

/* table_cu_fn over a changed scenario: v is the bandwidth. */
static int changed_cu(void *ctx, double v, double *cu, char *err,
                      size_t errlen) {
    return changed_cu_at(ctx, v, cu, err, errlen);
}

/* The least bandwidth of nblocks curves (fn over ctx[b]) into
 * blocks[b].row[0].exact (table_need, as `dilosim table` finds a row;
 * AT_START: the first scan point) and dip; their CU arrays are freed. */
static int scan_least(const table_exec *ex, double target, int nblocks,
                      table_cu_fn fn, void *const *ctx, table_block *blocks,
                      char *err, size_t errlen) {
    double grid[MAX_SCAN];
    int n;
    int rc = scan_grid(PLAN_BANDWIDTH_SCAN, grid, &n, err, errlen);
    if (rc) return rc;
    if (ex->pr) ex->pr->total += (int64_t)nblocks * (n + 1);
    rc = table_run_on(nblocks, fn, ctx, grid, n, &target, 1, ex, blocks, err,
                      errlen);
    if (rc) return rc;
    for (int b = 0; b < nblocks; b++) {
        table_crossing *x = &blocks[b].row[0].exact;
        if (x->status == TABLE_AT_START) {
            x->v = x->v_hi = grid[0];
            x->cu = x->cu_hi = blocks[b].cu[0];
        }
        free(blocks[b].cu);
        blocks[b].cu = NULL;
    }
    return 0;
}

static int find_least(work *w, const plan_spec *spec, plan_result *out,
                      char *err, size_t errlen) {
    void *ctx[SCN_MAX_VARIANTS] = {0};
    for (int m = 0; m < w->n; m++) ctx[m] = &w->bw[m];
    int rc = scan_least(&w->ex, spec->target_cu, w->n, table_scenario_cu, ctx,
                        w->blocks, err, errlen);
    for (int m = 0; m < w->n && !rc; m++) {
        out->method[m].least = w->blocks[m].row[0].exact;
        out->method[m].bandwidth_dip =
            w->blocks[m].dip >= 0 || w->blocks[m].row[0].exact.scans;
    }
    return rc;
}

int plan_least_search(int n, table_cu_fn fn, void *const *ctx, double target,
                      const table_exec *ex, table_crossing *least, int *dip,
                      char *err, size_t errlen) {
    table_block *blocks = calloc((size_t)n, sizeof *blocks);
    if (!blocks) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    int rc = scan_least(ex, target, n, fn, ctx, blocks, err, errlen);
    for (int b = 0; b < n && !rc; b++) {
        least[b] = blocks[b].row[0].exact;
        if (dip) dip[b] = blocks[b].dip >= 0 || least[b].scans;
    }
    free(blocks);
    return rc;
}

/* The least bandwidth of every method under each PLAN_SENS_* change. */
static int find_sensitivity(work *w, const plan_spec *spec, plan_result *out,
                            char *err, size_t errlen) {
    static const change ch[PLAN_NSENS] = {CH_LATENCY_X2, CH_EFFICIENCY,
                                          CH_MTBF};
    int nb = PLAN_NSENS * w->n;
    void *ctx[PLAN_NSENS * SCN_MAX_VARIANTS] = {0};
    if (nb < 1) return 0;
    for (int b = 0; b < nb; b++) {
        w->sens[b] = (changed){&w->bw[b % w->n], ch[b / w->n],
                               out->mtbf_hours * 3600, 0, 0};
        ctx[b] = &w->sens[b];
    }
    table_crossing least[PLAN_NSENS * SCN_MAX_VARIANTS];
    int dip[PLAN_NSENS * SCN_MAX_VARIANTS];
    int rc = plan_least_search(nb, changed_cu, ctx, spec->target_cu, &w->ex,
                               least, dip, err, errlen);
    for (int b = 0; b < nb && !rc; b++) {
        plan_sensitive *x = &out->method[b % w->n].sens[b / w->n];
        x->least = least[b];
        x->bandwidth_dip = dip[b];
    }
    return rc;
}

/* table_cu_fn of the latency scan: the scenario at its bandwidth with
 * every pair of workers v ms apart (one way). */
static int latency_cu(void *ctx, double v, double *cu, char *err,
                      size_t errlen) {
    const at_gbps *a = ctx;
    changed x = a->x;
    x.ch = CH_LATENCY_SET;
    x.latency_ms = v;
    return changed_cu_at(&x, a->gbps, cu, err, errlen);
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
    x->status = k == 0            ? TABLE_NOT_REACHED
                : k == b->npoints ? TABLE_AT_START
                                  : TABLE_FOUND;
    if (x->status == TABLE_AT_START) {
        x->v = x->v_hi = g[k - 1];
        x->cu = x->cu_hi = b->cu[k - 1];
    }
    if (x->status != TABLE_FOUND) return 0;
    table_point below = {g[k], b->cu[k]}, reach = {g[k - 1], b->cu[k - 1]};
    return table_solve(latency_cu, &w->lat[w->lat_idx[i]], w->target, below,
                       reach, g[k - 1] > 0, x, err, errlen);
}

static void latency_out(void *arg, int i, void **ptr, size_t *len) {
    work *w = arg;
    *ptr = &w->lat_res[i];
    *len = sizeof w->lat_res[i];
}

static int find_latency(work *w, plan_result *out, char *err, size_t errlen) {
    void *ctx[SCN_MAX_VARIANTS];
    w->nlat = 0;
    for (int m = 0; m < w->n; m++) {
        plan_method *pm = &out->method[m];
        pm->latency_gbps = NAN;
        pm->latency = (table_crossing){.status = TABLE_NOT_REACHED,
                                       .v = NAN,
                                       .cu = NAN,
                                       .v_hi = NAN,
                                       .cu_hi = NAN};
        if (pm->least.status == TABLE_NOT_REACHED) continue;
        pm->latency_gbps = PLAN_LATENCY_MARGIN * pm->least.v_hi;
        w->lat[m] = (at_gbps){{&w->bw[m], CH_NONE, 0, 0, 0}, pm->latency_gbps};
        ctx[w->nlat] = &w->lat[m];
        w->lat_idx[w->nlat++] = m;
    }
    if (!w->nlat) return 0;
    w->lat_grid[0] = 0;
    int rc =
        scan_grid(LATENCY_SCAN, w->lat_grid + 1, &w->nlat_grid, err, errlen);
    if (rc) return rc;
    w->nlat_grid++;
    if (w->pr) w->pr->total += (int64_t)w->nlat * (w->nlat_grid + 1);
    rc = table_run_on(w->nlat, latency_cu, ctx, w->lat_grid, w->nlat_grid, NULL,
                      0, &w->ex, w->blocks, err, errlen);
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

/* The pairs of sites a config's collective sends between: a ring of
 * M >= 3 sites M, of 2 sites 1, a star M - 1, all-to-all every pair. */
static int site_links(const scn_config *cfg) {
    int M = cfg->workers;
    switch (cfg->collective) {
    case COLL_RING: return M < 3 ? M - 1 : M;
    case COLL_STAR: return M - 1;
    default: return M * (M - 1) / 2;
    }
}

/* Option gbps at CU cu, priced: listed i (-1: the least sufficient one,
 * which with "links" has no WAN price). */
static plan_option price(const plan_cost *c, int links, double gbps, double cu,
                         int i) {
    plan_option o = {.gbps = gbps, .cu = cu, .listed = i >= 0};
    double compute =
        c->accelerators * c->accelerator_usd_per_hour * PLAN_HOURS_PER_MONTH;
    if (c->has_links) o.wan_usd = i >= 0 ? links * c->link_usd_month[i] : NAN;
    else o.wan_usd = gbps * links * c->wan_usd_per_gbps_month;
    o.idle_usd = (1 - cu) * compute;
    o.busy_usd = cu * compute;
    o.total_usd = o.wan_usd + o.idle_usd;
    o.bill_usd = o.total_usd + o.busy_usd;
    o.work_usd = cu > 0 ? o.bill_usd / cu : INFINITY;
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

/* What mark_cheapest compares, as the recommendation does
 * (plan_rec.c): the cost of a month of work (the monthly bill / CU) or
 * the training's total (only finished trainings compete); INFINITY for
 * an option without a price or below the method's least bandwidth (it
 * does not meet the target). */
static double total_of(const plan_method *m, const plan_option *o,
                       int training) {
    if (m->least.status == TABLE_NOT_REACHED || o->gbps < m->least.v_hi)
        return INFINITY;
    double x = !training               ? o->work_usd
               : o->train.run.finished ? o->train.total_usd
                                       : INFINITY;
    return isnan(x) ? INFINITY : x;
}

static void set_marks(plan_option *o, int training, int overall) {
    int *method = training ? &o->train.cheapest_method : &o->cheapest_method;
    int *all = training ? &o->train.cheapest_overall : &o->cheapest_overall;
    *(overall ? all : method) = 1;
}

/* Marks the cheapest option that meets the target of each method and of
 * all, into *best_m and *best_k (-1 when none); where a method has
 * listed options, only those (an unpriced computed speed is not for
 * sale). */
static void mark_cheapest(plan_result *out, int training, int *best_m,
                          int *best_k) {
    *best_m = *best_k = -1;
    double best = INFINITY;
    for (int m = 0; m < out->nmethods; m++) {
        plan_method *pm = &out->method[m];
        int k = -1, listed = 0;
        for (int i = 0; i < pm->noptions; i++) listed |= pm->option[i].listed;
        for (int i = 0; i < pm->noptions; i++)
            if ((pm->option[i].listed || !listed) &&
                isfinite(total_of(pm, &pm->option[i], training)) &&
                (k < 0 || total_of(pm, &pm->option[i], training) <
                              total_of(pm, &pm->option[k], training)))
                k = i;
        if (k < 0) continue;
        set_marks(&pm->option[k], training, 0);
        if (total_of(pm, &pm->option[k], training) < best) {
            best = total_of(pm, &pm->option[k], training);
            *best_m = m;
            *best_k = k;
        }
    }
    if (*best_m >= 0)
        set_marks(&out->method[*best_m].option[*best_k], training, 1);
}

/* The options: every listed bandwidth and the least sufficient one, with
 * prices; without prices (for the candidates' simulations) the least. */
static int find_options(work *w, const plan_spec *spec, plan_result *out,
                        char *err, size_t errlen) {
    const plan_cost *c = spec->cost;
    int nb = c ? c->nbandwidths : 0;
    if (nb) {
        void *ctx[SCN_MAX_VARIANTS];
        for (int m = 0; m < w->n; m++) ctx[m] = &w->bw[m];
        if (w->pr) w->pr->total += (int64_t)w->n * nb;
        int rc = table_run_on(w->n, table_scenario_cu, ctx, c->bandwidths_gbps,
                              nb, NULL, 0, &w->ex, w->blocks, err, errlen);
        if (rc) return rc;
    }
    plan_cost none = {0};
    for (int m = 0; m < w->n; m++) {
        plan_method *pm = &out->method[m];
        for (int i = 0; i < nb; i++)
            add_option(pm, price(c, pm->links, c->bandwidths_gbps[i],
                                 w->blocks[m].cu[i], i));
        if (nb) free(w->blocks[m].cu);
        if (pm->least.status == TABLE_NOT_REACHED) continue;
        plan_option o = price(c ? c : &none, pm->links, pm->least.v_hi,
                              pm->least.cu_hi, -1);
        o.is_least = 1;
        add_option(pm, o);
    }
    return 0;
}

/* ---- the candidates' simulations ---------------------------------------- */

static int cand_run(void *arg, int i, char *err, size_t errlen) {
    work *w = arg;
    const cand_task *t = &w->tasks[i];
    return changed_run(&t->x, w->out->method[t->m].option[t->k].gbps,
                       &w->runs[i], err, errlen);
}

static void cand_out(void *arg, int i, void **ptr, size_t *len) {
    work *w = arg;
    *ptr = &w->runs[i];
    *len = sizeof w->runs[i];
}

/* Appends a task for option k of method m. */
static void cand_add(work *w, int m, int k, int try, change ch, int64_t steps) {
    w->tasks[w->ntasks++] =
        (cand_task){m, k, try, steps > 0, {&w->bw[m], ch, 0, steps, 0}};
}

/* Does a binding-limit change apply to the method? */
static int try_applies(const plan_assumptions *a, int try) {
    if (try == PLAN_TRY_LATENCY) return a->latency_max_ms > 0;
    if (try == PLAN_TRY_WINDOW)
        return a->tcp_window_mb > 0 || a->transport == SCN_TRANSPORT_TCP;
    return 1;
}

/* The tasks of every option: its run at the scenario's steps (for the
 * explanation and the egress), the binding limit's changes, the
 * training. */
static int cand_tasks(work *w, plan_result *out, char *err, size_t errlen) {
    static const change tries[PLAN_NTRIES] = {CH_BANDWIDTH_X2, CH_LATENCY_HALF,
                                              CH_WINDOW_X2};
    int base = out->explain || out->cost.has_egress || out->has_grid;
    size_t most = (size_t)w->n * (PLAN_MAX_BANDWIDTHS + 1) * (PLAN_NTRIES + 2);
    w->tasks = malloc(most * sizeof *w->tasks);
    w->runs = calloc(most, sizeof *w->runs);
    if (!w->tasks || !w->runs)
        return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    for (int m = 0; m < w->n; m++) {
        const plan_method *pm = &out->method[m];
        for (int k = 0; k < pm->noptions; k++) {
            if (base) cand_add(w, m, k, -1, CH_NONE, 0);
            for (int t = 0; t < PLAN_NTRIES && out->explain; t++)
                if (try_applies(&pm->assume, t))
                    cand_add(w, m, k, t, tries[t], 0);
            if (pm->train_steps > 0)
                cand_add(w, m, k, -1, CH_NONE, pm->train_steps);
        }
    }
    return 0;
}

/* The price of option o's training (c NULL: hours only). */
static void price_training(const plan_cost *c, plan_option *o) {
    plan_training *t = &o->train;
    t->wall_h = t->run.wall_s / 3600;
    t->idle_h = (1 - t->run.cu) * t->wall_h;
    t->wan_months = t->wall_h / PLAN_HOURS_PER_MONTH;
    if (!c) return;
    t->compute_usd = c->accelerators * c->accelerator_usd_per_hour * t->wall_h;
    t->idle_usd = (1 - t->run.cu) * t->compute_usd;
    t->wan_usd = o->wan_usd * t->wan_months;
    t->egress_usd = t->run.bytes / PLAN_GB * c->egress_usd_per_gb;
    t->total_usd = t->compute_usd + t->wan_usd + t->egress_usd;
}

/* What each task's run says about its option. */
static void cand_results(work *w, const plan_cost *c, plan_result *out) {
    for (int i = 0; i < w->ntasks; i++) {
        const cand_task *t = &w->tasks[i];
        plan_option *o = &out->method[t->m].option[t->k];
        if (t->train) {
            o->train.run = w->runs[i];
            price_training(c, o);
        } else if (t->try < 0) {
            o->has_run = 1;
            o->run = w->runs[i];
        } else {
            o->gain[t->try] = w->runs[i].cu - o->run.cu;
        }
    }
    for (int m = 0; m < out->nmethods; m++) {
        plan_method *pm = &out->method[m];
        const plan_assumptions *a = &pm->assume;
        double unit = scn_gbit_bits(a->gbit);
        for (int k = 0; k < pm->noptions; k++) {
            plan_option *o = &pm->option[k];
            if (o->is_least && o->has_run) pm->assume.wall_s = o->run.wall_s;
            if (c && c->has_egress && o->has_run && o->run.wall_s > 0) {
                o->egress_usd = o->run.bytes / o->run.wall_s * 3600 *
                                PLAN_HOURS_PER_MONTH / PLAN_GB *
                                c->egress_usd_per_gb;
                o->total_usd = o->wan_usd + o->idle_usd + o->egress_usd;
                o->bill_usd = o->total_usd + o->busy_usd;
                o->work_usd = o->cu > 0 ? o->bill_usd / o->cu : INFINITY;
            }
            if (!w->out->explain) continue;
            o->limit = plan_binding(o->gain);
            o->window_mb =
                o->gbps * unit / 8 * 2 * a->latency_max_ms * 1e-3 / 1e6;
            o->window_covers =
                a->tcp_window_mb > 0 ? a->tcp_window_mb >= o->window_mb : -1;
        }
    }
}

static int find_candidates(work *w, const plan_spec *spec, plan_result *out,
                           char *err, size_t errlen) {
    int rc = cand_tasks(w, out, err, errlen);
    if (rc) return rc;
    for (int m = 0; m < out->nmethods; m++)
        for (int k = 0; k < out->method[m].noptions; k++)
            for (int t = 0; t < PLAN_NTRIES; t++)
                out->method[m].option[k].gain[t] = NAN;
    if (w->ntasks) {
        if (w->pr) w->pr->total += w->ntasks;
        rc = table_parallel_on(w->ntasks, cand_run, cand_out, w, &w->ex, err,
                               errlen);
        if (rc) return rc;
    }
    cand_results(w, spec->cost, out);
    return 0;
}

/* ---- at the recommended option ------------------------------------------ */

typedef struct {
    changed x[PLAN_NAT];
    int idx[PLAN_NAT];
    double gbps;
    plan_run *at;
} at_work;

static int at_run(void *arg, int i, char *err, size_t errlen) {
    at_work *a = arg;
    return changed_run(&a->x[a->idx[i]], a->gbps, &a->at[a->idx[i]], err,
                       errlen);
}

static void at_out(void *arg, int i, void **ptr, size_t *len) {
    at_work *a = arg;
    *ptr = &a->at[a->idx[i]];
    *len = sizeof a->at[a->idx[i]];
}

int plan__at_option(const table_scenario *bw, double gbps, double mtbf_s,
                    const int has_at[PLAN_NAT], const table_exec *ex,
                    plan_run at[PLAN_NAT], char *err, size_t errlen) {
    static const change ch[PLAN_NAT] = {CH_NONE, CH_LATENCY_X2, CH_EFFICIENCY,
                                        CH_MTBF};
    at_work a = {.gbps = gbps, .at = at};
    int n = 0;
    for (int k = 0; k < PLAN_NAT; k++) {
        a.x[k] = (changed){bw, ch[k], mtbf_s, 0, 0};
        if (has_at[k]) a.idx[n++] = k;
    }
    if (ex->pr) ex->pr->total += n;
    return n ? table_parallel_on(n, at_run, at_out, &a, ex, err, errlen) : 0;
}

plan_limit plan_binding(const double gain[PLAN_NTRIES]) {
    int best = -1;
    for (int t = 0; t < PLAN_NTRIES; t++)
        if (!isnan(gain[t]) && gain[t] > PLAN_LIMIT_MIN_GAIN &&
            (best < 0 || gain[t] > gain[best]))
            best = t;
    static const plan_limit limit[PLAN_NTRIES] = {PLAN_LIMIT_BANDWIDTH,
                                                  PLAN_LIMIT_LATENCY,
                                                  PLAN_LIMIT_WINDOW};
    return best < 0 ? PLAN_LIMIT_COMPUTE : limit[best];
}

const char *plan_limit_name(plan_limit l) {
    static const char *const names[] = {"bandwidth", "latency", "window",
                                        "compute"};
    return names[l];
}

/* ---- the plan ---------------------------------------------------------- */

static void assumptions_of(const scn_config *c, plan_assumptions *a) {
    latency_range(c, &a->latency_min_ms, &a->latency_max_ms);
    a->latency_matrix = c->has_latency_matrix;
    a->transport = c->transport;
    a->tcp_init_window_kb = c->tcp_init_window_kb;
    a->tcp_slow_start_after_idle = c->tcp_slow_start_after_idle;
    a->efficiency = c->efficiency;
    a->collective_overhead_ms = c->collective_overhead_ms;
    a->startup_ms = c->startup_ms;
    a->ack_bytes_per_kb = c->ack_bytes_per_kb;
    a->queue_ms = c->queue_ms;
    a->tcp_window_mb = c->tcp_window_mb;
    a->collective = c->collective;
    a->links = site_links(c);
    a->dp = c->sched.method == SCHED_DP;
    a->dp_bucket_mb = c->dp_bucket_mb;
    a->bucket_mb = c->sched.layout == SCHED_SLICED ? 0 : c->bucket_mb;
    a->gbit = c->gbit;
    a->mtbf_s = c->faults.mtbf_s;
    a->mttr_s = c->faults.mttr_s;
    a->trace = c->trace_path[0] != 0;
    a->steps = c->steps;
    a->step_time_s = scn_step_time_s(c);
    a->wall_s = NAN;
}

/* The steps of the training r asks for, of a method loaded as c from
 * path. */
static int training_steps(const plan_result *r, const char *path,
                          const scn_config *c, const char *name, int64_t *out,
                          char *err, size_t errlen) {
    double steps;
    if (r->tokens > 0) {
        if (!(c->tokens_per_step > 0))
            return msg_set(err, errlen, MSG_EINPUT,
                           "%s: %s: --tokens needs "
                           "model.tokens_per_step (the tokens of one inner "
                           "step)",
                           path, name);
        steps = ceil(r->tokens / c->tokens_per_step);
    } else {
        steps = round(r->train_hours * 3600 / scn_step_time_s(c));
    }
    if (steps < 1) steps = 1;
    if (!(steps <= 1e12)) {
        char num[MSG_NUM_MAX];
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: %s: the training is %s "
                       "steps (expected at most 1e12, as the key steps)",
                       path, name, msg_number(steps, num));
    }
    *out = (int64_t)steps;
    return 0;
}

/* What method m needs from its config: workers, links, assumptions,
 * memory, the training's steps. */
static int method_of(const plan_spec *spec, const scn_config *c,
                     plan_result *out, int m, char *err, size_t errlen) {
    plan_method *pm = &out->method[m];
    pm->workers = c->workers;
    pm->links = spec->cost && spec->cost->pricing == PLAN_PRICING_LINK
                    ? site_links(c)
                    : c->workers;
    assumptions_of(c, &pm->assume);
    pm->mtbf_failures = c->workers * (double)c->steps * scn_step_time_s(c) /
                        (out->mtbf_hours * 3600);
    int rc = plan__power_of(out, spec->path, c, pm, err, errlen);
    if (!rc && out->explain) {
        rc = mem_worker_of(c, &pm->memory, err, errlen);
        pm->has_memory = !rc;
    }
    if (!rc && (out->train_hours > 0 || out->tokens > 0))
        rc = training_steps(out, spec->path, c, pm->name, &pm->train_steps, err,
                            errlen);
    return rc;
}

/* Two methods of equal labels: each gets " (its name)" appended. */
static void distinct_labels(plan_result *out) {
    int same[SCN_MAX_VARIANTS] = {0};
    for (int i = 0; i < out->nmethods; i++)
        for (int j = i + 1; j < out->nmethods; j++)
            if (!strcmp(out->method[i].label, out->method[j].label))
                same[i] = same[j] = 1;
    for (int i = 0; i < out->nmethods; i++) {
        plan_method *pm = &out->method[i];
        size_t n = strlen(pm->label);
        if (same[i] && n < PLAN_LABEL_MAX)
            snprintf(pm->label + n, PLAN_LABEL_MAX - n, " (%s)", pm->name);
    }
}

/* Sets up the bandwidth contexts, each method's file parsed once (w->docs,
 * freed by the caller); loads every method once (input errors show here)
 * for its name, worker count and the rest of method_of. */
static int setup(work *w, const plan_spec *spec, plan_result *out, char *err,
                 size_t errlen) {
    int n = table_docs_open(spec->path, spec->variants, spec->nvariants,
                            w->names, &w->meta, w->docs, err, errlen);
    if (n < 0) return n;
    w->n = n;
    if (spec->nset + 1 >= MAX_SETS)
        return msg_set(err, errlen, MSG_EINPUT, "%s: too many --set overrides",
                       spec->path);
    out->nmethods = w->n;
    for (int m = 0; m < w->n; m++) {
        w->bw[m] =
            (table_scenario){spec->path,    w->names[m], spec->sets, spec->nset,
                             BANDWIDTH_KEY, w->docs[m],  spec->full};
        scn_config cfg;
        int rc = table_scenario_name(&w->bw[m], PLAN_MIN_GBPS,
                                     out->method[m].name, &cfg, err, errlen);
        if (!rc) rc = method_of(spec, &cfg, out, m, err, errlen);
        if (rc) return rc;
        scn_method_label(&cfg, out->method[m].label, PLAN_LABEL_MAX);
    }
    distinct_labels(out);
    return 0;
}

/* The steps after the searches: options, their simulations, the marks. */
static int find_rest(work *w, const plan_spec *spec, plan_result *out,
                     char *err, size_t errlen) {
    int rc = 0, train = out->train_hours > 0 || out->tokens > 0;
    if (!rc && out->sensitivity)
        rc = find_sensitivity(w, spec, out, err, errlen);
    if (!rc && spec->cost) {
        out->has_cost = 1;
        out->cost = *spec->cost;
    }
    if (!rc) /* at least the least sufficient one, which a recommendation
                without prices buys */
        rc = find_options(w, spec, out, err, errlen);
    if (!rc && (out->explain || train || out->cost.has_egress || out->has_grid))
        rc = find_candidates(w, spec, out, err, errlen);
    if (!rc) plan__energy(out);
    if (!rc && spec->cost)
        mark_cheapest(out, 0, &out->best_method, &out->best_option);
    if (!rc && spec->cost && train)
        mark_cheapest(out, 1, &out->train_best_method, &out->train_best_option);
    return rc;
}

/* The recommendation and its runs at the option bought. */
static int recommend_runs(work *w, plan_result *out, char *err, size_t errlen) {
    plan_recommend(out);
    plan_rec *rec = &out->rec;
    if ((rec->status != PLAN_REC_BUY && rec->status != PLAN_REC_LEAST) ||
        rec->option < 0)
        return 0;
    int has[PLAN_NAT] = {1, 1, 1, out->sensitivity};
    memcpy(rec->has_at, has, sizeof has);
    return plan__at_option(&w->bw[rec->method],
                           out->method[rec->method].option[rec->option].gbps,
                           out->mtbf_hours * 3600, has, &w->ex, rec->at, err,
                           errlen);
}

int plan_compute(const plan_spec *spec, plan_result *out, char *err,
                 size_t errlen) {
    return plan_compute_progress(spec, NULL, NULL, out, err, errlen);
}

int plan_compute_progress(const plan_spec *spec, table_progress_fn progress,
                          void *ctx, plan_result *out, char *err,
                          size_t errlen) {
    return plan_compute_extra(spec, NULL, progress, ctx, out, err, errlen);
}

int plan_compute_extra(const plan_spec *spec, const plan_extra *extra,
                       table_progress_fn progress, void *ctx, plan_result *out,
                       char *err, size_t errlen) {
    table_progress pr = {progress, ctx, 0, 0};
    plan_extra x = extra ? *extra : (plan_extra){0};
    memset(out, 0, sizeof *out);
    out->target_cu = spec->target_cu;
    out->best_method = out->best_option = -1;
    out->train_best_method = out->train_best_option = -1;
    out->explain = x.explain;
    out->sensitivity = x.sensitivity;
    out->mtbf_hours = x.mtbf_hours > 0 ? x.mtbf_hours : PLAN_MTBF_HOURS;
    out->tokens = x.tokens > 0 ? x.tokens : 0;
    out->train_hours = out->tokens ? 0 : fmax(x.train_hours, 0);
    out->seeds = x.seeds > 0 ? x.seeds : 0;
    out->has_grid = x.has_grid, out->grid_gco2_per_kwh = x.grid_gco2_per_kwh;
    if (!(spec->target_cu > 0 && spec->target_cu <= 1))
        return msg_set(err, errlen, MSG_EINPUT,
                       "target CU must be in (0, 1] (got %g)", spec->target_cu);
    work *w = calloc(1, sizeof *w);
    if (!w) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    w->target = spec->target_cu;
    w->out = out;
    w->pr = progress ? &pr : NULL;
    w->ex = (table_exec){spec->jobs, spec->runner, w->pr};
    int rc = setup(w, spec, out, err, errlen);
    if (!rc) rc = find_least(w, spec, out, err, errlen);
    if (!rc) rc = find_latency(w, out, err, errlen);
    if (!rc) rc = find_rest(w, spec, out, err, errlen);
    if (!rc)
        rc = plan__uncertainty(spec, &x, w->bw, w->n, &w->ex, out, err, errlen);
    if (!rc) rc = recommend_runs(w, out, err, errlen);
    table_docs_free(w->docs, w->n);
    free(w->tasks);
    free(w->runs);
    free(w);
    return rc;
}

void plan_least_text(const table_crossing *least, char out[PLAN_CELL_MAX]) {
    if (least->status == TABLE_NOT_REACHED)
        snprintf(out, PLAN_CELL_MAX, "> %g", PLAN_MAX_GBPS);
    else if (least->status == TABLE_AT_START)
        snprintf(out, PLAN_CELL_MAX, "<= %g", PLAN_MIN_GBPS);
    else snprintf(out, PLAN_CELL_MAX, "%.4g", least->v_hi);
}

void plan_method_text(const plan_method *m, char least[PLAN_CELL_MAX],
                      char cu[PLAN_CELL_MAX], char latency[PLAN_CELL_MAX],
                      char at[PLAN_CELL_MAX]) {
    snprintf(cu, PLAN_CELL_MAX, "-");
    snprintf(at, PLAN_CELL_MAX, "-");
    plan_least_text(&m->least, least);
    if (m->least.status == TABLE_NOT_REACHED) {
        snprintf(latency, PLAN_CELL_MAX, "-");
        return;
    }
    snprintf(cu, PLAN_CELL_MAX, "%.4f", m->least.cu_hi);
    snprintf(at, PLAN_CELL_MAX, "%.4g", m->latency_gbps);
    if (m->latency.status == TABLE_AT_START)
        snprintf(latency, PLAN_CELL_MAX, "> %g", PLAN_MAX_LATENCY_MS);
    else if (m->latency.status == TABLE_NOT_REACHED)
        snprintf(latency, PLAN_CELL_MAX, "none");
    else snprintf(latency, PLAN_CELL_MAX, "%.4g", m->latency.v_hi);
}

void plan_option_note(const plan_option *o, char *buf, size_t n) {
    const char *cheap = o->cheapest_overall  ? "cheapest overall"
                        : o->cheapest_method ? "cheapest"
                                             : "";
    snprintf(buf, n, "%s%s%s", o->is_least ? "least" : "",
             o->is_least && *cheap ? ", " : "", cheap);
}
