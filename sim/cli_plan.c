/*
 * cli_plan.c -- `dilosim plan`: what network to buy for a target compute
 * utilization, per method, and what each choice costs per month.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/msg.h"
#include "cli.h"
#include "plan.h"
#include "report.h"

static const char help[] =
    "usage: dilosim plan SCENARIO.json --target-cu CU [--cost FILE.json]\n"
    "                    [--json] [--set KEY=VALUE]... [--variant NAME]...\n"
    "                    [--out FILE] [--jobs N]\n"
    "\n"
    "For each method (each variant of the scenario, or its base):\n"
    "  - the least bandwidth per worker link (network.bandwidth_gbps: every\n"
    "    worker's up and down link) in 0.01..100000 Gbit/s that reaches the\n"
    "    target compute utilization (CU) at the scenario's latency: a scan\n"
    "    of 10 points per decade, then Brent's method on log10 bandwidth\n"
    "    between the first point reaching the target and the one before, to\n"
    "    1e-6 relative (bisection where CU jumps); CU there is >= the target;\n"
    "  - the latency limit: at 1.05 x that bandwidth, the largest one-way\n"
    "    latency (network.latency_ms, every worker) in 0..1000 ms up to\n"
    "    which CU stays >= the target (a scan of 0 and 0.001..1000 ms, then\n"
    "    the same root finding; '> 1000' when it always does).\n"
    "With --cost, for each listed bandwidth and the least sufficient one:\n"
    "the monthly cost of the WAN, of the compute left idle, and their sum;\n"
    "the cheapest choice per method and overall is marked.\n"
    "\n"
    "options:\n"
    "  --target-cu CU    target compute utilization, in (0, 1] (required)\n"
    "  --cost FILE.json  prices (below)\n"
    "  --json            one JSON object instead of tables\n"
    "  --set KEY=VALUE   override a scenario key (repeatable)\n"
    "  --variant NAME    only this variant (repeatable; default: all)\n"
    "  --out FILE        write to FILE instead of stdout\n"
    "  --jobs N          threads (default: the CPUs this process may use,\n"
    "                    its affinity mask); the results do not depend\n"
    "                    on N\n"
    "  --full            simulate every op and period (no fast-forward;\n"
    "                    the results are the same)\n"
    "  --quiet           no progress line on a terminal\n"
    "  --progress        a plain progress line every ~10 s, even off a\n"
    "                    terminal (for logs)\n"
    "  -h, --help        show this help\n"
    "\n"
    "cost file: a JSON object with the keys\n"
    "  wan_usd_per_gbps_month    USD per Gbit/s per month of ONE worker's\n"
    "                            link: WAN = Gbit/s x workers x this\n"
    "                            (required, >= 0)\n"
    "  accelerator_usd_per_hour  USD per accelerator-hour (required, >= 0)\n"
    "  accelerators              accelerators of the whole job, all workers\n"
    "                            together: idle = (1 - CU) x this x price\n"
    "                            x 730 h (required, integer >= 1)\n"
    "  bandwidths_gbps           Gbit/s per worker link to price (optional,\n"
    "                            1 to 64 values > 0)\n"
    "e.g. {\"wan_usd_per_gbps_month\": 200,\n"
    "      \"accelerator_usd_per_hour\": 2.5, \"accelerators\": 1024,\n"
    "      \"bandwidths_gbps\": [1, 10, 100, 400]}\n"
    "\n"
    "exit status: 0 success, 1 runtime failure, 2 usage or input error\n";

/* ---- text -------------------------------------------------------------- */

/* The width of the method column. */
static int name_width(const plan_result *r) {
    int w = 6;
    for (int i = 0; i < r->nmethods; i++)
        if ((int)strlen(r->method[i].name) > w)
            w = (int)strlen(r->method[i].name);
    return w;
}

/* Says where CU is not monotone, since the answers then depend on it. */
static void write_notes(FILE *f, const plan_result *r) {
    for (int i = 0; i < r->nmethods; i++) {
        const plan_method *m = &r->method[i];
        if (m->bandwidth_dip)
            fprintf(f, "note: %s: CU falls somewhere as bandwidth grows; the "
                    "least bandwidth is a\ncrossing after the first point "
                    "of a 10-per-decade scan that reaches the target.\n",
                    m->name);
        if (m->latency_rise)
            fprintf(f, "note: %s: CU rises somewhere as latency grows; the "
                    "limit is a crossing\nbefore the first point of a "
                    "10-per-decade scan that misses the target.\n", m->name);
    }
}

static void write_methods(FILE *f, const plan_result *r) {
    int w = name_width(r);
    fprintf(f, "%-*s %14s %8s %18s %14s\n", w, "method", "least Gbit/s",
            "CU", "latency limit ms", "(at Gbit/s)");
    for (int i = 0; i < r->nmethods; i++) {
        const plan_method *m = &r->method[i];
        char least[PLAN_CELL_MAX], cu[PLAN_CELL_MAX], lat[PLAN_CELL_MAX];
        char at[PLAN_CELL_MAX];
        plan_method_text(m, least, cu, lat, at);
        fprintf(f, "%-*s %14s %8s %18s %14s\n", w, m->name, least, cu, lat,
                at);
    }
    fprintf(f, "\nleast Gbit/s: per worker link, at the scenario's latency.\n"
            "latency limit: the largest one-way latency up to which CU stays "
            ">= the target,\nat %g x the least bandwidth.\n",
            PLAN_LATENCY_MARGIN);
    write_notes(f, r);
}

static void write_costs(FILE *f, const plan_result *r) {
    const plan_cost *c = &r->cost;
    fprintf(f, "\nmonthly cost, USD: WAN %g per Gbit/s per worker link;\n"
            "idle compute (1 - CU) x %g accelerators x %g per hour x %g h\n",
            c->wan_usd_per_gbps_month, c->accelerators,
            c->accelerator_usd_per_hour, PLAN_HOURS_PER_MONTH);
    int w = name_width(r);
    fprintf(f, "%-*s %10s %8s %12s %14s %12s\n", w, "method", "Gbit/s", "CU",
            "WAN", "idle compute", "total");
    for (int i = 0; i < r->nmethods; i++) {
        const plan_method *m = &r->method[i];
        for (int k = 0; k < m->noptions; k++) {
            const plan_option *o = &m->option[k];
            char note[64];
            plan_option_note(o, note, sizeof note);
            fprintf(f, "%-*s %10.4g %8.4f %12.0f %14.0f %12.0f%s%s\n", w,
                    m->name, o->gbps, o->cu, o->wan_usd, o->idle_usd,
                    o->total_usd, *note ? "  " : "", note);
        }
    }
    if (r->best_method >= 0) {
        const plan_method *m = &r->method[r->best_method];
        const plan_option *o = &m->option[r->best_option];
        fprintf(f, "\ncheapest: %s at %.4g Gbit/s per worker link, %.0f USD "
                "per month\n", m->name, o->gbps, o->total_usd);
    }
}

static void write_text(FILE *f, const char *scenario, const plan_result *r) {
    fprintf(f, "plan for %s: compute utilization >= %g\n\n", scenario,
            r->target_cu);
    write_methods(f, r);
    if (r->has_cost) write_costs(f, r);
}

/* ---- JSON -------------------------------------------------------------- */

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, const char *key, double x, const char *after) {
    fprintf(f, "\"%s\": ", key);
    report_number(f, x);
    fputs(after, f);
}

static const char *range_name(table_status s) {
    return s == TABLE_FOUND ? "found"
           : s == TABLE_AT_START ? "below_range" : "above_range";
}

static void json_option(FILE *f, const plan_option *o, int last) {
    fputs("        {", f);
    json_num(f, "gbps", o->gbps, ", ");
    json_num(f, "cu", o->cu, ", ");
    json_num(f, "wan_usd_month", o->wan_usd, ", ");
    json_num(f, "idle_usd_month", o->idle_usd, ", ");
    json_num(f, "total_usd_month", o->total_usd, ", ");
    fprintf(f, "\"least\": %s, \"cheapest_for_method\": %s, "
            "\"cheapest_overall\": %s}%s\n", o->is_least ? "true" : "false",
            o->cheapest_method ? "true" : "false",
            o->cheapest_overall ? "true" : "false", last ? "" : ",");
}

static void json_method(FILE *f, const plan_method *m, int has_cost,
                        int last) {
    int reached = m->least.status != TABLE_NOT_REACHED;
    const char *lat_status =
        !reached || m->latency.status == TABLE_NOT_REACHED ? "none"
        : m->latency.status == TABLE_AT_START ? "above_range" : "found";
    fputs("    {\"name\": ", f);
    json_string(f, m->name);
    fprintf(f, ", \"workers\": %d,\n     ", m->workers);
    json_num(f, "least_gbps", reached ? m->least.v_hi : NAN, ", ");
    json_num(f, "cu_at_least", reached ? m->least.cu_hi : NAN, ", ");
    fprintf(f, "\"least_status\": \"%s\",\n     ",
            range_name(m->least.status));
    json_num(f, "latency_at_gbps", m->latency_gbps, ", ");
    json_num(f, "latency_limit_ms", reached ? m->latency.v_hi : NAN, ", ");
    fprintf(f, "\"latency_status\": \"%s\",\n     \"cu_falls_with_bandwidth\": "
            "%s, \"cu_rises_with_latency\": %s", lat_status,
            m->bandwidth_dip ? "true" : "false",
            m->latency_rise ? "true" : "false");
    if (has_cost) {
        fputs(",\n     \"options\": [\n", f);
        for (int k = 0; k < m->noptions; k++)
            json_option(f, &m->option[k], k + 1 == m->noptions);
        fputs("     ]", f);
    }
    fprintf(f, "}%s\n", last ? "" : ",");
}

static void json_cost(FILE *f, const plan_result *r) {
    const plan_cost *c = &r->cost;
    fputs("  \"cost\": {", f);
    json_num(f, "wan_usd_per_gbps_month", c->wan_usd_per_gbps_month, ", ");
    json_num(f, "accelerator_usd_per_hour", c->accelerator_usd_per_hour, ", ");
    json_num(f, "accelerators", c->accelerators, ", ");
    json_num(f, "hours_per_month", PLAN_HOURS_PER_MONTH, "},\n");
    fputs("  \"cheapest\": ", f);
    if (r->best_method < 0) {
        fputs("null,\n", f);
        return;
    }
    const plan_method *m = &r->method[r->best_method];
    const plan_option *o = &m->option[r->best_option];
    fputs("{\"name\": ", f);
    json_string(f, m->name);
    fputs(", ", f);
    json_num(f, "gbps", o->gbps, ", ");
    json_num(f, "total_usd_month", o->total_usd, "},\n");
}

static void write_json(FILE *f, const char *scenario, const plan_result *r) {
    fputs("{\n  \"scenario\": ", f);
    json_string(f, scenario);
    fputs(",\n  ", f);
    json_num(f, "target_cu", r->target_cu, ",\n  ");
    json_num(f, "latency_margin", PLAN_LATENCY_MARGIN, ",\n");
    if (r->has_cost) json_cost(f, r);
    fputs("  \"methods\": [\n", f);
    for (int i = 0; i < r->nmethods; i++)
        json_method(f, &r->method[i], r->has_cost, i + 1 == r->nmethods);
    fputs("  ]\n}\n", f);
}

/* ---- the command ------------------------------------------------------- */

typedef struct {
    double target;
    plan_cost cost;
    int has_cost, jobs, nvariants;
    const char *variants[SCN_MAX_VARIANTS];
} plan_args;

static int parse_args(const cli_options *o, plan_args *a) {
    int rc;
    if ((rc = cli_fraction(o, "plan", "--target-cu", NAN, &a->target)) ||
        (rc = cli_cost(o, &a->cost, &a->has_cost)) ||
        (rc = cli_jobs(o, "plan", &a->jobs)))
        return rc;
    return cli_values(o, "plan", "--variant", a->variants, SCN_MAX_VARIANTS,
                      &a->nvariants);
}

typedef struct {
    const char *scenario;
    const plan_result *r;
    int json;
} plan_output;

static void write_output(FILE *f, const void *ctx) {
    const plan_output *p = ctx;
    if (p->json) write_json(f, p->scenario, p->r);
    else write_text(f, p->scenario, p->r);
}

static void progress_tasks(void *ctx, int64_t done, int64_t total) {
    cli_progress_count(ctx, (double)done, (double)total);
}

int cli_plan(int argc, char **argv) {
    return cli_plan_par(argc, argv, NULL);
}

int cli_plan_par(int argc, char **argv, const cli_par *par) {
    static const char *const extra[] = {"--target-cu", "--cost", "--variant",
                                        "--jobs", NULL};
    static const char *const flags[] = {"--json", NULL};
    cli_options o;
    int rc = cli_parse("plan", help, argc, argv, extra, flags, &o);
    if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
    plan_args a = {0};
    if ((rc = parse_args(&o, &a))) return rc;
    plan_spec spec = {o.scenario, a.variants, a.nvariants, o.sets, o.nset,
                      a.target, a.has_cost ? &a.cost : NULL, a.jobs, o.full,
                      par ? par->table : NULL};
    plan_result *r = malloc(sizeof *r);
    char err[1024];
    cli_progress progress;
    cli_progress_start(&progress, o.scenario);
    rc = r ? plan_compute_progress(&spec, progress_tasks, &progress, r, err,
                                   sizeof err)
           : MSG_ENOMEM;
    cli_progress_end(&progress);
    if (!r) snprintf(err, sizeof err, "out of memory");
    if (rc == MSG_EINPUT) fprintf(stderr, "%s\n", err);
    else if (rc) fprintf(stderr, "dilosim plan: %s\n", err);
    if (!rc && !(par && par->worker)) {
        plan_output out = {o.scenario, r, cli_flag(&o, "--json")};
        rc = cli_write(&o, "plan", write_output, &out);
    }
    else rc = msg_exit_status(rc);
    free(r);
    return rc;
}
