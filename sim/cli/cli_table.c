/*
 * cli_table.c -- `dilosim table`: the bandwidth needed per compute-
 * utilization threshold, as a readable table or CSV.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/cli/cli.h"
#include "sim/study/grid.h"
#include "sim/out/report.h"
#include "sim/study/table.h"

static const cli_help_opt help_opts[] = {
    {"--thresholds LIST", "CU thresholds, increasing, each in (0, 1]\n"
                          "(default 0.5,0.8,0.9,0.95,0.99)"},
    {"--grid SPEC", "values of KEY, increasing: a comma list such as\n"
                    "1,10,100, logspace:A:B:N (N values 10^A..10^B) or\n"
                    "linspace:A:B:N (default logspace:-1:3:50, the\n"
                    "paper's 50 points from 0.1 to 1000 Gbit/s)"},
    {"--key KEY", "the swept scenario key (default\n"
                  "network.bandwidth_gbps: every worker's links)"},
    {"--set KEY=VALUE", CLI_HELP_COMMON},
    {"--set-from FILE.json", CLI_HELP_COMMON},
    {"--variant NAME", CLI_HELP_COMMON},
    {"--csv", "CSV instead of tables (below)"},
    {"--out FILE", "write to FILE instead of stdout"},
    {"--jobs N", "threads (default: the CPUs this process may use,\n"
                 "its affinity mask); the\n"
                 "results do not depend on N"},
    {NULL, NULL}};

static const cli_help help = {
    "usage: dilosim table SCENARIO.json [--thresholds LIST] [--grid SPEC]\n"
    "                     [--key KEY] [--set KEY=VALUE]...\n"
    "                     [--set-from FILE.json]\n"
    "                     [--variant NAME]... [--csv] [--out FILE] [--jobs N]\n"
    "\n"
    "The bandwidth each method needs to reach a compute utilization (CU),\n"
    "as in Table 4 of the Streaming DiLoCo paper.  For every variant of the\n"
    "scenario (its base when it has none) CU is simulated with KEY set to\n"
    "each grid value.  For each threshold the table gives\n"
    "  - the first grid value with CU >= threshold (the paper's convention,\n"
    "    printed to one decimal);\n"
    "  - the exact crossing: the least value from which CU >= threshold at\n"
    "    every value evaluated above it (4 significant digits shown), and CU\n"
    "    there.  Brent's method on log10 of the value finds CU = threshold\n"
    "    between the last grid value below the threshold and the next one,\n"
    "    to 1e-6 relative; where CU jumps across it, bisection to the least\n"
    "    value reaching it (method 'bisection').  CU need not be monotone:\n"
    "    where the values evaluated show it falling as the value grows, that\n"
    "    grid interval (and each next one while CU still falls there) is\n"
    "    scanned at 0.5% steps, then bisection after the last value below\n"
    "    the threshold (method 'scan').  'dilosim plan' finds its least\n"
    "    bandwidth the same way.\n"
    "'<= V': every value evaluated, from the first grid value V on, reaches\n"
    "the threshold; '> V': the last grid value V does not.\n"
    "\n"
    "options:\n",
    21, help_opts,
    "\n"
    "CSV columns: variant,threshold,grid_V,exact_V,cu_at_exact,method, V\n"
    "being gbps for the default KEY, else KEY's last part (grid_latency_ms\n"
    "for network.latency_ms); the values are KEY's.  grid_V is empty when\n"
    "no grid value reaches the threshold; exact_V and cu_at_exact are\n"
    "empty unless method is brent, bisection or scan; method below_grid:\n"
    "the crossing is at or below the first grid value; not_reached: above\n"
    "the last.  The first line is a comment, '# dilosim VERSION (REVISION)',\n"
    "ending with '; Gbit = 2^30 bits (network.gbit binary)' when the\n"
    "scenario counts binary Gbit (see the man page).\n"
    "\n"
    "exit status: 0 success, 1 runtime failure, 2 usage or input error\n",
    1};

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

/* What the value columns are named after: "gbps" for the bandwidth (the
 * default key), else the key's last part ("latency_ms" for
 * network.latency_ms). */
static const char *value_name(const char *key) {
    if (!strcmp(key, DEFAULT_KEY)) return "gbps";
    const char *dot = strrchr(key, '.');
    return dot ? dot + 1 : key;
}

static void write_csv(FILE *f, const table_result *r, const char *key) {
    int64_t binary = 0;
    for (int b = 0; b < r->nblocks; b++)
        binary += r->block[b].gbit == SCN_GBIT_BINARY;
    cli_csv_comment_note(f, scn_gbit_note(binary, r->nblocks));
    char col[2 * SCN_NAME_MAX + 16];
    fputs("variant,threshold,", f);
    snprintf(col, sizeof col, "grid_%s", value_name(key));
    csv_text(f, col);
    snprintf(col, sizeof col, "exact_%s", value_name(key));
    fputc(',', f);
    csv_text(f, col);
    fputs(",cu_at_exact,method\n", f);
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
    fprintf(f, "%s: compute utilization (CU) against %s%s, grid %s\n", b->name,
            key, gbps ? " (Gbit/s)" : "", grid);
    fprintf(f, "%9s  %16s  %14s  %14s  %s\n", "threshold", "first grid value",
            "exact crossing", "CU at crossing", "method");
    for (int i = 0; i < b->nrows; i++) {
        const table_row *row = &b->row[i];
        char first[TABLE_CELL_MAX], exact[TABLE_CELL_MAX], cu[TABLE_CELL_MAX];
        table_row_text(row, values, b->npoints, first, exact, cu);
        const char *how = row->exact.status == TABLE_FOUND
                              ? table_method_name(&row->exact)
                              : "-";
        fprintf(f, "%9g  %16s  %14s  %14s  %s\n", row->threshold, first, exact,
                cu, how);
    }
    table_point from, to;
    if (table_block_fall(b, values, &from, &to))
        fprintf(f,
                "note: CU is not monotone: it falls from %.4f at %.4g to "
                "%.4f at %.4g;\neach exact crossing is the least value from "
                "which every value evaluated\nreaches the threshold (method "
                "scan: where CU falls, the grid is scanned\nat %g%% steps)."
                "\n",
                from.cu, from.v, to.cu, to.v, 100 * TABLE_SCAN_STEP);
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

static void write_blocks(FILE *f, const table_args *a, const table_result *r) {
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
    if (t->csv) write_csv(f, t->r, t->a->key);
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
                                        "--variant",    "--jobs", NULL};
    static const char *const flags[] = {"--csv", NULL};
    cli_options o;
    int rc = cli_parse("table", &help, argc, argv, extra, flags, &o);
    if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
    table_args a = {0};
    table_result r = {0};
    if (!(rc = parse_args(&o, &a))) {
        cli_progress progress;
        table_spec spec = {o.scenario,
                           a.variants,
                           a.nvariants,
                           o.sets,
                           o.nset,
                           a.key,
                           a.grid,
                           a.npoints,
                           a.thresholds,
                           a.nthresholds,
                           a.jobs,
                           o.full,
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
