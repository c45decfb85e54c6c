/*
 * cli_report.c -- `dilosim report`: one self-contained HTML page about
 * one or more scenarios.
 *
 * Each scenario's figures and tables come from the library the other
 * commands use: the utilization curves from a sweep (sweep.h) over the
 * bandwidth grid, the thresholds from table_compute, the bytes from one
 * run_simulate per variant, the plan from plan_compute, and with a train
 * section the loss curves from coupled runs (coupled.h).  gnuplot draws
 * the figures as SVG (gnuplot.h) and the page is written by html.h,
 * whole or not at all (outfile.h).  Everything is computed before the
 * page is written: a failure leaves no output behind.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_live.h"
#include "sim/cli/cli_plan.h"
#include "sim/cli/cli_report.h"
#include "sim/adapter/coupled.h"
#include "sim/out/gnuplot.h"
#include "sim/study/html.h"
#include "sim/config/json.h"
#include "sim/study/plan.h"
#include "sim/engine/run.h"
#include "sim/study/sweep.h"
#include "sim/study/table.h"
#include "sim/base/version.h"

static const cli_help_opt help_opts[] = {
    {"--variant NAME", "only this variant (repeatable; every scenario\n"
                       "must have it; default: all)"},
    {"--set KEY=VALUE", "override a key of every scenario (repeatable)"},
    {"--set-from FILE.json", CLI_HELP_COMMON},
    {"--cost FILE.json", "prices for the plan: the cost file of\n"
                         "'dilosim plan' (see its --help)"},
    {"--target-cu CU", "the plan's target CU, in (0, 1] (default 0.95)"},
    {"--sensitivity", "the plan's sensitivity (as 'dilosim plan'): the\n"
                      "least bandwidth again with every latency x2, with\n"
                      "efficiency 0.6 and with failures at --mtbf-hours,\n"
                      "and CU under each at the option bought"},
    {"--mtbf-hours H", "the sensitivity's MTBF of a worker, hours\n"
                       "(default 24)"},
    {"--train-hours N", "price a training of N hours of compute at each\n"
                        "option (as 'dilosim plan')"},
    CLI_PLAN_HELP_SAMPLES,
    CLI_PLAN_HELP_SEED,
    CLI_PLAN_HELP_SEEDS,
    {"--grid-gco2-per-kwh G", "the plan's energy per month and emissions at\n"
                              "G g CO2 per kWh (as 'dilosim plan'; needs\n"
                              "workers.power_w)"},
    {"--grid SPEC", "the bandwidths (Gbit/s) of the figure and the\n"
                    "table, increasing: a comma list, logspace:A:B:N\n"
                    "or linspace:A:B:N (default logspace:-1:3:50, the\n"
                    "paper's 50 points from 0.1 to 1000 Gbit/s)"},
    {"--thresholds LIST", "CU thresholds of the table, increasing, each in\n"
                          "(0, 1] (default 0.5,0.8,0.9,0.95,0.99)"},
    {"--out FILE.html", "write the page to FILE.html instead of stdout"},
    {"--jobs N", "threads (default: the CPUs this process may use,\n"
                 "its affinity mask); the page does not depend on N"},
    CLI_LIVE_HELP,
    {NULL, NULL}};

static const cli_help help = {
    "usage: dilosim report SCENARIO.json... [--variant NAME]...\n"
    "                      [--set KEY=VALUE]... [--cost FILE.json]\n"
    "                      [--set-from FILE.json]\n"
    "                      [--target-cu CU] [--grid SPEC] [--thresholds LIST]\n"
    "                      [--sensitivity [--mtbf-hours H]]\n"
    "                      [--train-hours N]\n"
    "                      [--samples N] [--seed S] [--seeds N]\n"
    "                      [--out FILE.html] [--jobs N]\n"
    "                      [--interactive [--wasm FILE.js]]\n"
    "\n"
    "Writes one self-contained HTML page (inline style sheet and SVG\n"
    "figures; no script, nothing fetched from the network) with, for each\n"
    "scenario given:\n"
    "  - first, a summary box: what to buy (the plan's recommendation), the\n"
    "    runner-up and why it lost, the margin to the target at 2x latency\n"
    "    and at 60% efficiency, the links' load, and what the coupled\n"
    "    small-model runs say about the loss (or that it is not assessed);\n"
    "  - last, its assumptions, per variant: model, step time, workers, "
    "network\n"
    "    (links, latency or the latency matrix, all-reduce, completion,\n"
    "    transport, efficiency, step overhead, ring order when set),\n"
    "    codec, the method's parameters, faults, steps;\n"
    "  - compute utilization (CU) against network.bandwidth_gbps on the\n"
    "    grid, one curve per variant (a sweep, as 'dilosim sweep'; other\n"
    "    dimensions of the scenario's \"sweep\" section add curves);\n"
    "  - the bandwidth each variant needs per CU threshold, first grid\n"
    "    value and exact crossing (as 'dilosim table');\n"
    "  - the bytes each variant moves over the WAN in one run at the\n"
    "    scenario's own network (as 'dilosim run');\n"
    "  - the least bandwidth and the latency limit for --target-cu, and\n"
    "    with --cost what each choice costs per month (as 'dilosim plan');\n"
    "    with --set-from's fit block the least bandwidth's [5%, 95%] over\n"
    "    draws of the fitted keys, with --seeds CU over the seeds, with\n"
    "    --sensitivity and --train-hours their tables;\n"
    "  - with a \"train\" section, the eval loss against the simulated time\n"
    "    of each variant's coupled run (as 'dilosim train').\n"
    "gnuplot, found on PATH, draws the figures (run as a child process,\n"
    "its SVG read through a pipe).\n"
    "\n"
    "options:\n",
    21, help_opts,
    "\n"
    "exit status: 0 success, 1 runtime failure (gnuplot missing or failing,\n"
    "a page that cannot be written), 2 usage or input error\n",
    1};

#define DEFAULT_THRESHOLDS "0.5,0.8,0.9,0.95,0.99"
#define DEFAULT_GRID "logspace:-1:3:50"
#define DEFAULT_TARGET 0.95
#define BW_KEY "network.bandwidth_gbps"
#define LABEL_MAX 1024

/* ---- what one scenario's section shows ----------------------------------- */

/* A curve of a figure, collected point by point. */
typedef struct {
    const char *path;
    char *name, *description; /* "name", "description"; or NULL */
    int nvar;
    const char *var[SCN_MAX_VARIANTS]; /* the variants (NULL: the base) */
    char label[SCN_MAX_VARIANTS][SCN_NAME_MAX]; /* the variants' names */
    const char *labels[SCN_MAX_VARIANTS];
    /* as people read them: "Label (variant)" (scn_method_label), and the
     * colour of each (gnuplot_method_color) */
    char human[SCN_MAX_VARIANTS][PLAN_LABEL_MAX + SCN_NAME_MAX + 4];
    const char *humans[SCN_MAX_VARIANTS];
    const char *color[SCN_MAX_VARIANTS];
    scn_config *cfg;      /* nvar of them */
    scn_train *train_sec; /* nvar: their train sections */
    run_result *run;      /* nvar */
    table_result table;
    plan_result *plan;
    char *cu_svg; /* ready to inline */
    int ntrain;   /* variants with a train section */
    const char *train_label[SCN_MAX_VARIANTS];
    cpl_summary *train; /* ntrain */
    char *loss_svg;     /* NULL without training */
    double same_time_s; /* the simulated time every training reached */
    double loss_at_time[SCN_MAX_VARIANTS]; /* ntrain: eval loss there */
} section;

typedef struct {
    cli_options o;
    const char *variants[SCN_MAX_VARIANTS];
    int nvariants, jobs, npoints, nthresholds, has_cost;
    const char *grid_spec;
    double *grid, *thresholds, target;
    plan_cost cost;
    plan_extra sure; /* --set-from's fit, --samples, --seed, --seeds */
    const char *sweep_sets[CLI_MAX_SETS]; /* --set without the grid key */
    int nsweep_sets;
    int nsec;
    section *sec;
} report;

static void section_free(section *s) {
    free(s->name);
    free(s->description);
    free(s->cfg);
    free(s->train_sec);
    free(s->run);
    table_result_free(&s->table);
    free(s->plan);
    free(s->cu_svg);
    free(s->train);
    free(s->loss_svg);
}

/* Prints a library error: input errors as they are (they name their
 * place), others after "dilosim report: ".  Returns the exit status. */
static int fail(int rc, const char *err) {
    if (rc == MSG_EINPUT) fprintf(stderr, "%s\n", err);
    else fprintf(stderr, "dilosim report: %s\n", err);
    return msg_exit_status(rc);
}

/* ---- the scenario's name and description --------------------------------- */

/* s->name and s->description from the file's root object (both are
 * optional strings the loader has checked). */
static void read_title(section *s) {
    FILE *f = fopen(s->path, "rb");
    if (!f) return;
    char *text = malloc(SCN_MAX_BYTES + 1);
    size_t n = text ? fread(text, 1, SCN_MAX_BYTES, f) : 0;
    fclose(f);
    if (!text) return;
    text[n] = 0;
    json_doc doc;
    size_t at;
    char msg[256];
    if (!json_parse(text, n, &doc, &at, msg, sizeof msg)) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc.root, "name");
        if (cJSON_IsString(v)) s->name = strdup(v->valuestring);
        v = cJSON_GetObjectItemCaseSensitive(doc.root, "description");
        if (cJSON_IsString(v)) s->description = strdup(v->valuestring);
        json_doc_free(&doc);
    }
    free(text);
}

/* ---- loading ---------------------------------------------------------- */

static const char *method_key(const scn_config *c, const scn_train *t);

/* The variants of s and their configs.  Returns 0 or the exit status
 * (message printed). */
static int load_variants(const report *r, section *s) {
    char err[CLI_ERR_MAX];
    scn_meta meta;
    int rc = scn_meta_load(s->path, &meta, err, sizeof err);
    if (rc) return fail(rc, err);
    s->nvar = r->nvariants ? r->nvariants : meta.nvariants ? meta.nvariants : 1;
    for (int i = 0; i < s->nvar; i++)
        s->var[i] = r->nvariants     ? r->variants[i]
                    : meta.nvariants ? meta.variant[i]
                                     : NULL;
    s->cfg = malloc((size_t)s->nvar * sizeof *s->cfg);
    s->train_sec = malloc((size_t)s->nvar * sizeof *s->train_sec);
    s->run = calloc((size_t)s->nvar, sizeof *s->run);
    if (!s->cfg || !s->train_sec || !s->run)
        return fail(MSG_ENOMEM, "out of memory");
    for (int i = 0; i < s->nvar; i++) {
        if ((rc =
                 scn_load_train(s->path, s->var[i], r->o.sets, r->o.nset,
                                &s->cfg[i], &s->train_sec[i], err, sizeof err)))
            return fail(rc, err);
        s->cfg[i].full = r->o.full;
        snprintf(s->label[i], SCN_NAME_MAX, "%s",
                 s->var[i] ? s->var[i]
                           : sched_method_name(s->cfg[i].sched.method));
        s->labels[i] = s->label[i];
        int n = scn_method_label(&s->cfg[i], s->human[i], PLAN_LABEL_MAX);
        if (s->var[i] && n >= 0 && n < PLAN_LABEL_MAX)
            snprintf(s->human[i] + n, sizeof s->human[i] - (size_t)n, " (%s)",
                     s->var[i]);
        s->humans[i] = s->human[i];
        s->color[i] =
            gnuplot_method_color(method_key(&s->cfg[i], &s->train_sec[i]));
    }
    read_title(s);
    return 0;
}

/* ---- the utilization curves: a sweep ----------------------------------- */

static void progress_tasks(void *ctx, int64_t done, int64_t total) {
    cli_progress_count(ctx, (double)done, (double)total);
}

/* Runs the sweep into memory and parses it into curves. */
static int sweep_curves(const report *r, const section *s, curve **c, int *nc) {
    char err[CLI_ERR_MAX], vary[SCN_SPEC_MAX + 64], label[LABEL_MAX];
    snprintf(vary, sizeof vary, "%s=%s", BW_KEY, r->grid_spec);
    const char *varies[] = {vary};
    char *csv = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&csv, &len);
    if (!mem) return fail(MSG_ENOMEM, "out of memory");
    cli_progress progress;
    snprintf(label, sizeof label, "%s: sweep", s->path);
    sweep_spec sw = {.scenario = s->path,
                     .vary = varies,
                     .nvary = 1,
                     .variants = r->variants,
                     .nvariants = r->nvariants,
                     .sets = r->sweep_sets,
                     .nset = r->nsweep_sets,
                     .jobs = r->jobs,
                     .full = r->o.full,
                     .stream = mem,
                     .progress = progress_tasks,
                     .progress_ctx = &progress};
    cli_progress_start(&progress, label);
    int rc = sweep_run(&sw, err, sizeof err);
    cli_progress_end(&progress);
    if (fclose(mem) && !rc)
        rc = msg_set(err, sizeof err, MSG_ENOMEM, "out of memory");
    if (!rc)
        rc = rep_csv_curves(csv, BW_KEY, s->label[0], c, nc, err, sizeof err);
    free(csv);
    return rc ? fail(rc, err) : 0;
}

/* ---- figures ---------------------------------------------------------- */

/* Draws fig and makes it inline, ids prefixed with "sN-what-". */
static int draw(const gnuplot_figure *fig, int sec, const char *what,
                char **svg) {
    char err[CLI_ERR_MAX], prefix[64];
    char *doc;
    int rc = gnuplot_svg(fig, &doc, err, sizeof err);
    if (rc) return fail(rc, err);
    snprintf(prefix, sizeof prefix, "s%d-%s-", sec + 1, what);
    rc = html_svg_inline(doc, prefix, svg, err, sizeof err);
    free(doc);
    return rc ? fail(rc, err) : 0;
}

/* The bandwidth axis' label, in the unit of the scenario's Gbit. */
static void bandwidth_label(const scn_config *c, char *buf, size_t n) {
    snprintf(buf, n,
             "bandwidth per worker link (Gbit/s, 1 Gbit = %s; "
             "log scale)",
             c->gbit == SCN_GBIT_BINARY ? "2^30 bit" : "10^9 bit");
}

/* The palette key of a variant's method (gnuplot_method_color): the
 * method and, for Streaming DiLoCo, whether it overlaps (tau >= 1) and
 * sends 4-bit payloads; an outer-step overlap and FedPart have their
 * own. */
static const char *method_key(const scn_config *c, const scn_train *t) {
    const sched_spec *m = &c->sched;
    if (m->method == SCHED_DP) return "dp";
    if (m->method == SCHED_SPARTA) return "sparta";
    if (t->has_train && t->train.fedpart) return "fedpart";
    if (m->overlap == SCHED_OUTER) return "outer";
    if (m->overlap == SCHED_EAGER) return "eager";
    if (m->method == SCHED_DILOCO) return "diloco";
    if (m->tau == 0) return "streaming";
    return c->codec.kind == CODEC_E3M0 || c->codec.kind == CODEC_E2M1
               ? "streaming_overlap_fp4"
               : "streaming_overlap";
}

/* The variant a curve shows: the one whose label is the curve's title,
 * or starts it followed by ", " (a curve of another sweep dimension);
 * the only one of a scenario without variants.  -1: none. */
static int curve_variant(const section *s, const char *title) {
    int best = s->nvar == 1 ? 0 : -1;
    size_t longest = 0;
    for (int i = 0; title && s->nvar > 1 && i < s->nvar; i++) {
        size_t n = strlen(s->label[i]);
        if (n >= longest && !strncmp(title, s->label[i], n) &&
            (!title[n] || !strncmp(title + n, ", ", 2))) {
            best = i;
            longest = n;
        }
    }
    return best;
}

/* The style of each curve of g[0..n-1] into st[0..n-1]: its variant's
 * method colour, the same in every figure (plots/palette.gp); curves of
 * one colour get dash types 1, 2, 3, ... in order. */
static void curves_style(const section *s, const gnuplot_curve *g,
                         gnuplot_style *st, int n) {
    for (int i = 0; i < n; i++) {
        int v = g[i].dashed ? -1 : curve_variant(s, g[i].title);
        st[i] = (gnuplot_style){NULL, 0};
        if (v < 0) continue;
        st[i].color =
            gnuplot_method_color(method_key(&s->cfg[v], &s->train_sec[v]));
        st[i].dash = 1;
        for (int j = 0; j < i; j++)
            st[i].dash += st[j].color && !strcmp(st[j].color, st[i].color);
    }
}

/* Each curve a variant's own (its title the variant's name) titled as
 * people read the variant (after the styles are chosen by name). */
static void curves_humane(const section *s, gnuplot_curve *g, int n) {
    for (int i = 0; i < n; i++) {
        int v = g[i].dashed ? -1 : curve_variant(s, g[i].title);
        if (v >= 0 && g[i].title && !strcmp(g[i].title, s->label[v]))
            g[i].title = s->humans[v];
    }
}

static int figure_cu(const report *r, section *s, int k) {
    curve *c = NULL;
    int nc = 0, rc = sweep_curves(r, s, &c, &nc);
    gnuplot_curve *g = rc ? NULL : calloc((size_t)nc + 3, sizeof *g);
    gnuplot_style *st = rc ? NULL : calloc((size_t)nc + 3, sizeof *st);
    if (!rc && (!g || !st)) rc = fail(MSG_ENOMEM, "out of memory");
    if (!rc) {
        for (int i = 0; i < nc; i++)
            g[i] = (gnuplot_curve){c[i].title, c[i].n, c[i].x, c[i].y, 0};
        curves_style(s, g, st, nc);
        curves_humane(s, g, nc);
        double ref[6];
        char rtitle[128];
        int ng = nc + html_cu_references(s->plan, r->grid[0],
                                         r->grid[r->npoints - 1], g + nc,
                                         st + nc, ref, rtitle, sizeof rtitle);
        char xl[128];
        bandwidth_label(&s->cfg[0], xl, sizeof xl);
        gnuplot_figure fig = {.xlabel = xl,
                              .ylabel = "compute utilization (%)",
                              .logx = 1,
                              .xmin = r->grid[0],
                              .xmax = r->grid[r->npoints - 1],
                              .ymin = 0,
                              .ymax = 102,
                              .ncurves = ng,
                              .curve = g,
                              .style = st};
        rc = draw(&fig, k, "cu", &s->cu_svg);
    }
    free(st);
    free(g);
    rep_curves_free(c, nc);
    return rc;
}

/* ---- table, plan, runs ------------------------------------------------- */

static int thresholds(const report *r, section *s) {
    char err[CLI_ERR_MAX], label[LABEL_MAX];
    table_spec spec = {s->path,       r->variants,    r->nvariants, r->o.sets,
                       r->o.nset,     BW_KEY,         r->grid,      r->npoints,
                       r->thresholds, r->nthresholds, r->jobs,      r->o.full,
                       NULL};
    cli_progress progress;
    snprintf(label, sizeof label, "%s: table", s->path);
    cli_progress_start(&progress, label);
    int rc = table_compute_progress(&spec, progress_tasks, &progress, &s->table,
                                    err, sizeof err);
    cli_progress_end(&progress);
    return rc ? fail(rc, err) : 0;
}

static int plan(const report *r, section *s) {
    char err[CLI_ERR_MAX], label[LABEL_MAX];
    if (!(s->plan = malloc(sizeof *s->plan)))
        return fail(MSG_ENOMEM, "out of memory");
    plan_spec spec = {s->path,
                      r->variants,
                      r->nvariants,
                      r->o.sets,
                      r->o.nset,
                      r->target,
                      r->has_cost ? &r->cost : NULL,
                      r->jobs,
                      r->o.full,
                      NULL};
    cli_progress progress;
    snprintf(label, sizeof label, "%s: plan", s->path);
    cli_progress_start(&progress, label);
    int rc = plan_compute_extra(&spec, &r->sure, progress_tasks, &progress,
                                s->plan, err, sizeof err);
    cli_progress_end(&progress);
    return rc ? fail(rc, err) : 0;
}

/* One run of each variant at the scenario's own settings: its bytes. */
static int runs(section *s) {
    char err[CLI_ERR_MAX], label[LABEL_MAX];
    for (int i = 0; i < s->nvar; i++) {
        cli_progress progress;
        snprintf(label, sizeof label, "%s: run %s", s->path, s->label[i]);
        cli_progress_start(&progress, label);
        run_hooks hooks = {.progress = cli_progress_update,
                           .progress_ctx = &progress};
        int rc = run_simulate(&s->cfg[i], &hooks, &s->run[i], err, sizeof err);
        cli_progress_end(&progress);
        if (rc) return fail(rc, err);
    }
    return 0;
}

/* ---- training ---------------------------------------------------------- */

static int on_row(const cpl_row *row, void *ctx) {
    return rep_curve_add(ctx, row->sim_time_s, row->eval_loss) ? -1 : 0;
}

/* The time axis: seconds, minutes or hours, by the longest run. */
static double time_unit(const curve *c, int n, const char **name) {
    double t = 0;
    for (int i = 0; i < n; i++)
        if (c[i].n && c[i].x[c[i].n - 1] > t) t = c[i].x[c[i].n - 1];
    *name = t >= 7200 ? "h" : t >= 120 ? "min" : "s";
    return t >= 7200 ? 3600 : t >= 120 ? 60 : 1;
}

static int figure_loss(section *s, curve *c, int k) {
    const char *unit;
    double u = time_unit(c, s->ntrain, &unit), floor = NAN;
    gnuplot_curve g[SCN_MAX_VARIANTS + 1];
    double fx[2] = {INFINITY, 0}, fy[2];
    for (int i = 0; i < s->ntrain; i++) {
        for (int j = 0; j < c[i].n; j++) c[i].x[j] /= u;
        g[i] = (gnuplot_curve){s->train_label[i], c[i].n, c[i].x, c[i].y, 0};
        if (c[i].n) {
            fx[0] = fmin(fx[0], c[i].x[0]);
            fx[1] = fmax(fx[1], c[i].x[c[i].n - 1]);
        }
        if (isnan(floor)) floor = s->train[i].entropy_floor;
    }
    int n = s->ntrain;
    gnuplot_style st[SCN_MAX_VARIANTS + 1] = {{0}};
    curves_style(s, g, st, n);
    for (int i = 0; i < n; i++) /* as people read them */
        for (int v = 0; v < s->nvar; v++)
            if (g[i].title == s->label[v]) g[i].title = s->humans[v];
    if (!isnan(floor)) {
        fy[0] = fy[1] = floor;
        g[n++] = (gnuplot_curve){"entropy floor of the data", 2, fx, fy, 1};
    }
    char xl[96];
    snprintf(xl, sizeof xl, "simulated wall-clock time (%s)", unit);
    gnuplot_figure fig = {.xlabel = xl,
                          .ylabel = "eval loss of the outer parameters (nats)",
                          .xmin = NAN,
                          .xmax = NAN,
                          .ymin = NAN,
                          .ymax = NAN,
                          .key = "top right",
                          .ncurves = n,
                          .curve = g,
                          .style = st};
    return draw(&fig, k, "loss", &s->loss_svg);
}

/* The simulated time every training reached (the shortest run's end) and
 * each one's eval loss at its last row by then, for the summary. */
static void same_time(section *s, const curve *c) {
    s->same_time_s = INFINITY;
    for (int t = 0; t < s->ntrain; t++)
        s->same_time_s =
            c[t].n ? fmin(s->same_time_s, c[t].x[c[t].n - 1]) : NAN;
    for (int t = 0; t < s->ntrain; t++) {
        s->loss_at_time[t] = NAN;
        for (int j = 0; j < c[t].n && c[t].x[j] <= s->same_time_s; j++)
            s->loss_at_time[t] = c[t].y[j];
    }
}

/* The coupled run of every variant with a train section. */
static int training(section *s, int k) {
    char err[CLI_ERR_MAX], label[LABEL_MAX];
    int n = 0;
    for (int i = 0; i < s->nvar; i++) n += s->train_sec[i].has_train;
    if (!n) return 0;
    curve *c = calloc((size_t)n, sizeof *c);
    s->train = calloc((size_t)n, sizeof *s->train);
    int rc = c && s->train ? 0 : fail(MSG_ENOMEM, "out of memory");
    for (int i = 0; i < s->nvar && !rc; i++) {
        const scn_config *cfg = &s->cfg[i];
        const scn_train *sec = &s->train_sec[i];
        if (!sec->has_train) continue;
        int t = s->ntrain++;
        s->train_label[t] = s->humans[i];
        cli_progress progress;
        snprintf(label, sizeof label, "%s: train %s", s->path, s->label[i]);
        cli_progress_start(&progress, label);
        cpl_options o = {cfg,      sec, on_row, &c[t], cli_progress_update,
                         &progress};
        int e = cpl_run(&o, &s->train[t], err, sizeof err);
        cli_progress_end(&progress);
        if (e == MSG_EIO)
            e = msg_set(err, sizeof err, MSG_ENOMEM, "out of memory");
        /* the variant's input, its run or its training (a trainer's
         * argument, order or numerical failure): said for that variant */
        if (e == MSG_EINPUT || e == MSG_EFAIL || e == MSG_EINVAL ||
            e == MSG_ESTATE || e == MSG_ENUM) {
            fprintf(stderr, "%s: %s: %s\n", s->path, s->label[i], err);
            rc = msg_exit_status(e);
        } else if (e) {
            rc = fail(e, err);
        }
    }
    if (!rc) same_time(s, c);
    if (!rc) rc = figure_loss(s, c, k);
    rep_curves_free(c, n);
    return rc;
}

/* ---- the page --------------------------------------------------------- */

static void heading(FILE *f, const char *tag, const char *text) {
    fprintf(f, "<%s>", tag);
    html_escape(f, text);
    fprintf(f, "</%s>\n", tag);
}

static void para(FILE *f, const char *cls, const char *text) {
    fprintf(f, "<p%s%s%s>", cls ? " class=\"" : "", cls ? cls : "",
            cls ? "\"" : "");
    html_escape(f, text);
    fputs("</p>\n", f);
}

static void write_section(FILE *f, const report *r, const section *s, int k) {
    char text[2048];
    fprintf(f, "<section id=\"s%d\">\n<h2>", k + 1);
    html_escape(f, s->path);
    if (s->name) {
        fputs(" &mdash; ", f);
        html_escape(f, s->name);
    }
    fputs("</h2>\n", f);
    if (s->description) para(f, NULL, s->description);

    heading(f, "h3", "Compute utilization against bandwidth");
    snprintf(text, sizeof text,
             "Compute utilization (busy time over wall "
             "time, all workers) of each variant at each of the %d "
             "bandwidths of %s (Gbit/s per worker link, up and down), the "
             "rest of the scenario as in its assumptions (at the end); the "
             "dashed line is the target, the black point the bandwidth the "
             "plan buys.",
             r->npoints, r->grid_spec);
    html_figure(f, s->cu_svg, text);

    heading(f, "h3", "Bandwidth per utilization threshold");
    snprintf(text, sizeof text,
             "Gbit/s per worker link: the first value of "
             "the grid %s whose CU reaches the threshold (the paper's "
             "convention), and below it the exact crossing on the "
             "continuous curve (Brent's method on log bandwidth; bisection "
             "where CU jumps).",
             r->grid_spec);
    para(f, "note", text);
    html_thresholds(f, &s->table, r->grid, r->npoints, s->nvar, s->labels,
                    s->humans);

    heading(f, "h3", "Bytes moved");
    para(f, "note",
         "One run of each variant with the scenario's own network "
         "(above): the bytes all workers put on the WAN, payloads with "
         "their scales and recovery downloads.");
    html_bytes(f, s->nvar, s->humans, s->run);

    snprintf(text, sizeof text, "Plan: compute utilization >= %g", r->target);
    heading(f, "h3", text);
    html_plan_styled(f, s->plan, s->color);

    if (s->ntrain) {
        heading(f, "h3", "Training: loss against simulated time");
        html_figure(f, s->loss_svg,
                    "The eval loss of the outer parameters "
                    "of the small trained model (the train section) at the "
                    "simulated instants of the coupled run: the clock is the "
                    "simulated model's, the loss the small model's.");
        html_train(f, s->ntrain, s->train_label, s->train);
    }
    heading(f, "h3", "Assumptions");
    html_assumptions(f, s->nvar, s->humans, s->cfg, s->train_sec);
    fputs("</section>\n", f);
}

static void write_page(FILE *f, const void *ctx) {
    const report *r = ctx;
    char text[1024];
    html_begin(f, "dilosim report");
    fputs("<header>\n", f);
    heading(f, "h1", "dilosim report");
    snprintf(text, sizeof text,
             "%d scenario%s, simulated by dilosim %s "
             "(%s). Bandwidth grid %s (%d points); CU thresholds of the "
             "table as given; plan target CU %g.",
             r->nsec, r->nsec == 1 ? "" : "s", DILOSIM_VERSION,
             version_revision(), r->grid_spec, r->npoints, r->target);
    para(f, NULL, text);
    fputs("<nav><ul>\n", f);
    for (int k = 0; k < r->nsec; k++) {
        fprintf(f, "<li><a href=\"#s%d\">", k + 1);
        html_escape(f, r->sec[k].path);
        fputs("</a></li>\n", f);
    }
    fputs("</ul></nav>\n</header>\n", f);
    html_summary_part part[CLI_MAX_FILES];
    for (int k = 0; k < r->nsec; k++) {
        const section *s = &r->sec[k];
        part[k] = (html_summary_part){s->path,        s->plan,  s->ntrain,
                                      s->train_label, s->train, s->same_time_s,
                                      s->loss_at_time};
    }
    html_summary(f, r->nsec, part);
    for (int k = 0; k < r->nsec; k++) write_section(f, r, &r->sec[k], k);
    fputs("<footer>", f);
    snprintf(text, sizeof text,
             "Written by dilosim %s (%s). A single file: "
             "style and figures inline, no script, nothing fetched.",
             DILOSIM_VERSION, version_revision());
    html_escape(f, text);
    fputs("</footer>\n", f);
    html_end(f);
}

/* ---- options ---------------------------------------------------------- */

static int parse_args(report *r) {
    const cli_options *o = &r->o;
    char err[CLI_ERR_MAX];
    int rc;
    if ((rc = cli_thresholds(o, "report", DEFAULT_THRESHOLDS, &r->thresholds,
                             &r->nthresholds)) ||
        (rc = cli_fraction(o, "report", "--target-cu", DEFAULT_TARGET,
                           &r->target)) ||
        (rc = cli_cost(o, &r->cost, &r->has_cost)) ||
        (rc = cli_plan_sure(o, "report", &r->sure)) ||
        (rc = cli_plan_extra(o, "report", &r->sure)))
        return rc;
    const char *v = cli_value(o, "--grid");
    r->grid_spec = v ? v : DEFAULT_GRID;
    if (strlen(r->grid_spec) >= SCN_SPEC_MAX)
        return cli_usage_error("report", "--grid: longer than %d bytes",
                               SCN_SPEC_MAX - 1);
    if (table_parse_numbers("--grid", r->grid_spec, TABLE_MAX_POINTS, &r->grid,
                            &r->npoints, err, sizeof err))
        return cli_usage_error("report", "%s", err);
    for (int i = 0; i < o->nfiles; i++)
        if (!strcmp(o->files[i], "-"))
            return cli_usage_error("report",
                                   "'-': the report reads each "
                                   "scenario several times (give a file)");
    /* the sweep sets the grid key at every point: a --set of it is for
     * the other parts (the runs, the assumptions) */
    size_t kl = strlen(BW_KEY);
    for (int i = 0; i < o->nset; i++)
        if (strncmp(o->sets[i], BW_KEY, kl) || o->sets[i][kl] != '=')
            r->sweep_sets[r->nsweep_sets++] = o->sets[i];
    if ((rc = cli_jobs(o, "report", &r->jobs))) return rc;
    return cli_values(o, "report", "--variant", r->variants, SCN_MAX_VARIANTS,
                      &r->nvariants);
}

/* Everything the page shows, scenario by scenario. */
static int compute(report *r) {
    if (!(r->sec = calloc((size_t)r->o.nfiles, sizeof *r->sec)))
        return fail(MSG_ENOMEM, "out of memory");
    for (int k = 0; k < r->o.nfiles; k++) {
        section *s = &r->sec[r->nsec++];
        s->path = r->o.files[k];
        int rc;
        if ((rc = load_variants(r, s)) || (rc = thresholds(r, s)) ||
            (rc = runs(s)) || (rc = plan(r, s)) || (rc = figure_cu(r, s, k)) ||
            (rc = training(s, k)))
            return rc;
    }
    return 0;
}

int cli_report(int argc, char **argv) {
    static const char *const extra[] = {"--variant",
                                        "--cost",
                                        "--target-cu",
                                        "--grid",
                                        "--thresholds",
                                        "--jobs",
                                        "--samples",
                                        "--seed",
                                        "--seeds",
                                        "--mtbf-hours",
                                        "--train-hours",
                                        "--wasm",
                                        "--grid-gco2-per-kwh",
                                        NULL};
    static const char *const flags[] = {"--sensitivity", "--interactive", NULL};
    report *r = calloc(1, sizeof *r);
    if (!r) return fail(MSG_ENOMEM, "out of memory");
    int rc = cli_parse_files("report", &help, argc, argv, extra, flags,
                             CLI_MAX_FILES, &r->o);
    if (rc) {
        free(r);
        return rc < 0 ? CLI_EXIT_OK : rc;
    }
    char err[CLI_ERR_MAX];
    if (!(rc = parse_args(r))) {
        int e = gnuplot_check(err, sizeof err); /* before the simulations */
        rc = e ? fail(e, err) : 0;
    }
    int live = cli_flag(&r->o, "--interactive");
    if (!rc && live && r->o.nfiles != 1)
        rc = cli_usage_error("report", "--interactive: one scenario");
    if (!rc) rc = compute(r);
    if (!rc && live)
        rc = cli_live_write(&r->o, r->o.files[0], r->grid_spec, r->target,
                            write_page, r);
    else if (!rc) rc = cli_write(&r->o, "report", write_page, r);
    for (int k = 0; k < r->nsec; k++) section_free(&r->sec[k]);
    free(r->sec);
    free(r->grid);
    free(r->thresholds);
    free(r);
    return rc;
}
