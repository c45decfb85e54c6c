/*
 * cli_table.c -- `dilosim table`: the bandwidth needed per compute-
 * utilization threshold, as a readable table or CSV.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/msg.h"
#include "cli.h"
#include "grid.h"
#include "report.h"
#include "table.h"

static const char help[] =
    "usage: dilosim table SCENARIO.json [--thresholds LIST] [--grid SPEC]\n"
    "                     [--key KEY] [--set KEY=VALUE]...\n"
    "                     [--variant NAME]... [--csv] [--out FILE] [--jobs N]\n"
    "\n"
    "The bandwidth each method needs to reach a compute utilization (CU),\n"
    "as in Table 4 of the Streaming DiLoCo paper.  For every variant of the\n"
    "scenario (its base when it has none) CU is simulated with KEY set to\n"
    "each grid value.  For each threshold the table gives\n"
    "  - the first grid value with CU >= threshold (the paper's convention,\n"
    "    printed to one decimal);\n"
    "  - the exact crossing, where CU = threshold: Brent's method on log10\n"
    "    of the value, between that grid value and the one before, to 1e-6\n"
    "    relative (4 significant digits shown); where CU jumps across the\n"
    "    threshold, bisection to the least value with CU >= threshold\n"
    "    (method 'bisection'); and CU at the crossing.\n"
    "'<= V': the first grid value V already reaches the threshold;\n"
    "'> V': no grid value (up to V) does.\n"
    "\n"
    "options:\n"
    "  --thresholds LIST  CU thresholds, increasing, each in (0, 1]\n"
    "                     (default 0.5,0.8,0.9,0.95,0.99)\n"
    "  --grid SPEC        values of KEY, increasing: a comma list such as\n"
    "                     1,10,100, logspace:A:B:N (N values 10^A..10^B) or\n"
    "                     linspace:A:B:N (default logspace:-1:3:50, the\n"
    "                     paper's 50 points from 0.1 to 1000 Gbit/s)\n"
    "  --key KEY          the swept scenario key (default\n"
    "                     network.bandwidth_gbps: every worker's links)\n"
    "  --set KEY=VALUE    override a scenario key (repeatable)\n"
    "  --variant NAME     only this variant (repeatable; default: all)\n"
    "  --csv              CSV instead of tables (below)\n"
    "  --out FILE         write to FILE instead of stdout\n"
    "  --jobs N           threads (default: the CPUs this process may use,\n"
    "                     its affinity mask); the\n"
    "                     results do not depend on N\n"
    "  --full             simulate every op and period (no fast-forward;\n"
    "                     the results are the same)\n"
    "  --quiet            no progress line on a terminal\n"
    "  --progress         a plain progress line every ~10 s, even off a\n"
    "                     terminal (for logs)\n"
    "  -h, --help         show this help\n"
    "\n"
    "CSV columns: variant,threshold,grid_gbps,exact_gbps,cu_at_exact,method\n"
    "(values of KEY, whatever KEY is).  grid_gbps is empty when no grid\n"
    "value reaches the threshold; exact_gbps and cu_at_exact are empty\n"
    "unless method is brent or bisection; method below_grid: the crossing\n"
    "is at or below grid_gbps; not_reached: above the last grid value.\n"
    "\n"
    "exit status: 0 success, 1 runtime failure, 2 usage or input error\n";

#define DEFAULT_THRESHOLDS "0.5,0.8,0.9,0.95,0.99"
#define DEFAULT_GRID "logspace:-1:3:50"
#define DEFAULT_KEY "network.bandwidth_gbps"

/* A CSV field, quoted (RFC 4180) when it holds a comma, quote or break. */
static void csv_text(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void write_csv(FILE *f, const table_result *r) {
    cli_csv_comment(f);
    fputs("variant,threshold,grid_gbps,exact_gbps,cu_at_exact,method\n", f);
    for (int b = 0; b < r->nblocks; b++)
        for (int i = 0; i < r->block[b].nrows; i++) {
            const table_row *row = &r->block[b].row[i];
            csv_text(f, r->block[b].name);
            fputc(',', f);
            cli_csv_number(f, row->threshold);
            fputc(',', f);
            cli_csv_number(f, row->grid_value);
            fputc(',', f);
            cli_csv_number(f, row->exact.v);
            fputc(',', f);
            cli_csv_number(f, row->exact.cu);
            fprintf(f, ",%s\n", table_method_name(&row->exact));
        }
}

/* One variant as a readable block. */
static void write_block(FILE *f, const table_block *b, const char *key,
                        const char *grid, const double *values) {
    size_t n = strlen(key);
    int gbps = n >= 5 && !strcmp(key + n - 5, "_gbps");
    fprintf(f, "%s: compute utilization (CU) against %s%s, grid %s\n",
            b->name, key, gbps ? " (Gbit/s)" : "", grid);
    fprintf(f, "%9s  %16s  %14s  %14s  %s\n", "threshold", "first grid value",
            "exact crossing", "CU at crossing", "method");
    for (int i = 0; i < b->nrows; i++) {
        const table_row *row = &b->row[i];
        char first[TABLE_CELL_MAX], exact[TABLE_CELL_MAX], cu[TABLE_CELL_MAX];
        table_row_text(row, values, b->npoints, first, exact, cu);
        const char *how = row->exact.status == TABLE_FOUND
                              ? table_method_name(&row->exact) : "-";
        fprintf(f, "%9g  %16s  %14s  %14s  %s\n", row->threshold, first, exact,
                cu, how);
    }
    if (b->dip >= 0)
        fprintf(f, "note: CU is not monotone: it falls from %.4f at %.4g to "
                "%.4f at %.4g; each\nrow holds the first crossing on the grid"
                ", one crossing inside its bracket.\n", b->cu[b->dip - 1],
                values[b->dip - 1], b->cu[b->dip], values[b->dip]);
}

/* The options a table needs beyond cli_options. */
typedef struct {
    double *thresholds, *grid;
    int nthresholds, npoints, jobs;
    const char *grid_spec, *key;
    const char *variants[SCN_MAX_VARIANTS];
    int nvariants;
} table_args;

static int parse_args(const cli_options *o, table_args *a) {
    const char *v;
    int rc = cli_thresholds(o, "table", DEFAULT_THRESHOLDS, &a->thresholds,
                            &a->nthresholds);
    if (rc) return rc;
    a->grid_spec = (v = cli_value(o, "--grid")) ? v : DEFAULT_GRID;
    char err[512];
    if (table_parse_numbers("--grid", a->grid_spec, TABLE_MAX_POINTS, &a->grid,
                            &a->npoints, err, sizeof err))
        return cli_usage_error("table", "%s", err);
    a->key = (v = cli_value(o, "--key")) ? v : DEFAULT_KEY;
    if ((rc = cli_jobs(o, "table", &a->jobs))) return rc;
    return cli_values(o, "table", "--variant", a->variants, SCN_MAX_VARIANTS,
                      &a->nvariants);
}

static void write_blocks(FILE *f, const table_args *a,
                         const table_result *r) {
    for (int b = 0; b < r->nblocks; b++) {
        if (b) fputc('\n', f);
        write_block(f, &r->block[b], a->key, a->grid_spec, a->grid);
    }
}

typedef struct {
    const table_args *a;
    const table_result *r;
    int csv;
} table_output;

static void write_output(FILE *f, const void *ctx) {
    const table_output *t = ctx;
    if (t->csv) write_csv(f, t->r);
    else write_blocks(f, t->a, t->r);
}

static void progress_tasks(void *ctx, int64_t done, int64_t total) {
    cli_progress_count(ctx, (double)done, (double)total);
}

int cli_table(int argc, char **argv) {
    return cli_table_par(argc, argv, NULL);
}

int cli_table_par(int argc, char **argv, const cli_par *par) {
    static const char *const extra[] = {"--thresholds", "--grid", "--key",
                                        "--variant", "--jobs", NULL};
    static const char *const flags[] = {"--csv", NULL};
    cli_options o;
    int rc = cli_parse("table", help, argc, argv, extra, flags, &o);
    if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
    table_args a = {0};
    table_result r = {0};
    if (!(rc = parse_args(&o, &a))) {
        cli_progress progress;
        table_spec spec = {o.scenario, a.variants, a.nvariants, o.sets, o.nset,
                           a.key, a.grid, a.npoints, a.thresholds,
                           a.nthresholds, a.jobs, o.full,
                           par ? par->table : NULL};
        char err[1024];
        cli_progress_start(&progress, o.scenario);
        rc = table_compute_progress(&spec, progress_tasks, &progress, &r, err,
                                    sizeof err);
        cli_progress_end(&progress);
        if (rc == MSG_EINPUT) fprintf(stderr, "%s\n", err);
        else if (rc) fprintf(stderr, "dilosim table: %s\n", err);
        rc = msg_exit_status(rc);
    }
    if (!rc && !(par && par->worker)) {
        table_output t = {&a, &r, cli_flag(&o, "--csv")};
        rc = cli_write(&o, "table", write_output, &t);
    }
    table_result_free(&r);
    free(a.thresholds);
    free(a.grid);
    return rc;
}
