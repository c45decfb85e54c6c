/*
 * cli_plan.c -- `dilosim plan`: what network to buy for a target compute
 * utilization, per method, and what each choice costs per month.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_plan.h"
#include "sim/engine/memory.h"
#include "sim/study/plan.h"

static const cli_help_opt help_opts[] = {
    {"--target-cu CU", "target compute utilization, in (0, 1] (required)"},
    {"--cost FILE.json", "prices (below)"},
    {"--sensitivity", "the least bandwidth again with every one-way latency\n"
                      "x2, with network.efficiency 0.6, and with random\n"
                      "failures at --mtbf-hours (the scenario's MTTR),\n"
                      "next to the base answer"},
    {"--mtbf-hours H", "the sensitivity's MTBF of a worker, hours, in\n"
                       "[1e-06, 1e6] (default 24)"},
    {"--train-hours N", "simulate a training of N hours of compute (steps =\n"
                        "N x 3600 / step time) at each candidate and price\n"
                        "it whole: wall, idle and WAN time, and with --cost\n"
                        "compute, WAN and egress USD"},
    {"--tokens N", "the same for a training of N tokens (steps = N /\n"
                   "model.tokens_per_step, rounded up)"},
    CLI_PLAN_HELP_SAMPLES,
    CLI_PLAN_HELP_SEED,
    CLI_PLAN_HELP_SEEDS,
    {"--grid-gco2-per-kwh G",
     "the grid's carbon intensity, g CO2 per kWh, >= 0:\n"
     "each candidate's energy per month (730 h) from\n"
     "workers.power_w (and network.joules_per_gb) and its\n"
     "kg CO2 (kWh x G / 1000); needs workers.power_w"},
    {"--json", "one JSON object instead of tables"},
    {"--set KEY=VALUE", CLI_HELP_COMMON},
    {"--set-from FILE.json", CLI_HELP_COMMON},
    {"--variant NAME", CLI_HELP_COMMON},
    {"--out FILE", "write to FILE instead of stdout"},
    {"--jobs N", "threads (default: the CPUs this process may use,\n"
                 "its affinity mask); the results do not depend\n"
                 "on N"},
    {NULL, NULL}};

static const cli_help help = {
    "usage: dilosim plan SCENARIO.json --target-cu CU [--cost FILE.json]\n"
    "                    [--sensitivity [--mtbf-hours H]]\n"
    "                    [--train-hours N | --tokens N]\n"
    "                    [--samples N] [--seed S] [--seeds N]\n"
    "                    [--grid-gco2-per-kwh G]\n"
    "                    [--json] [--set KEY=VALUE]... [--variant NAME]...\n"
    "                    [--set-from FILE.json]\n"
    "                    [--out FILE] [--jobs N]\n"
    "\n"
    "For each method (each variant of the scenario, or its base):\n"
    "  - the least bandwidth per worker link (network.bandwidth_gbps: every\n"
    "    worker's up and down link) in 0.01..100000 Gbit/s from which the\n"
    "    compute utilization (CU) stays >= the target at every bandwidth\n"
    "    evaluated above it, at the scenario's latency: a scan of 10 points\n"
    "    per decade, then Brent's method on log10 bandwidth between the last\n"
    "    point below the target and the next one, to 1e-6 relative\n"
    "    (bisection where CU jumps; where CU falls as bandwidth grows, the\n"
    "    scan refined to 0.5% steps there, as 'dilosim table' does); CU\n"
    "    there is >= the target;\n"
    "  - the latency limit: at 1.05 x that bandwidth, the largest one-way\n"
    "    latency (network.latency_ms, every worker) in 0..1000 ms up to\n"
    "    which CU stays >= the target (a scan of 0 and 0.001..1000 ms, then\n"
    "    the same root finding; '> 1000' when it always does).\n"
    "With --cost, for each listed bandwidth and the least sufficient one:\n"
    "the monthly cost of the WAN, of the compute busy and idle, (egress,)\n"
    "their total, and a month of work (the total / CU).\n"
    "\n"
    "First a summary: what to buy, the cheapest month of work (with a\n"
    "training: the cheapest training) among the listed options at or above\n"
    "a method's least sufficient bandwidth, the least shown beside it (or\n"
    "that none on the list suffices: the fastest, its CU, the shortfall);\n"
    "the runner-up and why it lost; the margin to the target there with\n"
    "every latency x2 and with efficiency 0.6; the links' load there.\n"
    "At the end, what it assumed: the latency and round trip, transport,\n"
    "efficiency, TCP window, buckets, what a Gbit is, failures, the steps\n"
    "and the time simulated at the least bandwidth.  For each candidate\n"
    "(each priced bandwidth and the least sufficient one) it names the\n"
    "binding limit: CU is simulated again with the bandwidth x2, every\n"
    "latency / 2 (the TCP window / 2 with it: window per round trip stays)\n"
    "and the TCP window x2, and the change that gains the most CU is the\n"
    "limit ('compute' when none gains more than 0.001); and the window a\n"
    "flow needs at that bandwidth (bandwidth x the longest round trip).\n"
    "And each method's memory per worker before activations.\n"
    "\n"
    "options:\n",
    20, help_opts,
    "\n"
    "cost file: a JSON object with the keys\n"
    "  wan_usd_per_gbps_month    USD per Gbit/s per month of ONE link:\n"
    "                            WAN = Gbit/s x links x this (required,\n"
    "                            >= 0)\n"
    "  accelerator_usd_per_hour  USD per accelerator-hour (required, >= 0)\n"
    "  accelerators              accelerators of the whole job, all workers\n"
    "                            together: idle = (1 - CU) x this x price\n"
    "                            x 730 h (required, integer >= 1)\n"
    "  bandwidths_gbps           Gbit/s per worker link to price (optional,\n"
    "                            1 to 64 values > 0)\n"
    "  pricing                   what a link is: \"port\" (default), each\n"
    "                            worker's link; \"link\", each link between\n"
    "                            two sites the collective sends over, bought\n"
    "                            once (a ring of M sites M, of 2 sites 1, a\n"
    "                            star M - 1, all_to_all M(M-1)/2)\n"
    "  egress_usd_per_gb         USD per GB (1e9 bytes) sent (optional; on\n"
    "                            the simulated bytes per month, or of the\n"
    "                            whole training)\n"
    "  links                     the speeds one can buy, instead of\n"
    "                            wan_usd_per_gbps_month and bandwidths_gbps:\n"
    "                            [{\"gbps\": G, \"usd_month\": P}, ...] by\n"
    "                            increasing G, P per link per month\n"
    "  currency                  3 capital letters beside every amount\n"
    "                            (default USD; the JSON keeps numbers)\n"
    "e.g. {\"wan_usd_per_gbps_month\": 200,\n"
    "      \"accelerator_usd_per_hour\": 2.5, \"accelerators\": 1024,\n"
    "      \"bandwidths_gbps\": [1, 10, 100, 400]}\n"
    "\n"
    "exit status: 0 success, 1 runtime failure, 2 usage or input error\n",
    1};

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
            fprintf(f,
                    "note: %s: CU falls somewhere as bandwidth grows;\n"
                    "the least bandwidth is the least from which CU stays >= "
                    "the target at every\nbandwidth evaluated above it (a "
                    "10-per-decade scan, refined to %g%% steps\nwhere CU "
                    "falls).\n",
                    m->name, 100 * TABLE_SCAN_STEP);
        if (m->latency_rise)
            fprintf(f,
                    "note: %s: CU rises somewhere as latency grows; the "
                    "limit is a crossing\nbefore the first point of a "
                    "10-per-decade scan that misses the target.\n",
                    m->name);
    }
}

static void write_methods(FILE *f, const plan_result *r, const char *fit_path) {
    int w = name_width(r);
    fprintf(f, "%-*s %14s", w, "method", "least Gbit/s");
    if (r->samples) fprintf(f, " %20s", "[5%, 95%]");
    fprintf(f, " %8s %18s %14s\n", "CU", "latency limit ms", "(at Gbit/s)");
    for (int i = 0; i < r->nmethods; i++) {
        const plan_method *m = &r->method[i];
        char least[PLAN_CELL_MAX], cu[PLAN_CELL_MAX], lat[PLAN_CELL_MAX];
        char at[PLAN_CELL_MAX], lo[PLAN_CELL_MAX], hi[PLAN_CELL_MAX];
        plan_method_text(m, least, cu, lat, at);
        fprintf(f, "%-*s %14s", w, m->name, least);
        if (r->samples) {
            char iv[2 * PLAN_CELL_MAX + 8];
            plan_interval_text(&m->least_interval, lo, hi);
            snprintf(iv, sizeof iv, "[%s, %s]", lo, hi);
            fprintf(f, " %20s", iv);
        }
        fprintf(f, " %8s %18s %14s\n", cu, lat, at);
    }
    fputs("\n", f);
    for (int i = 0; i < r->nmethods; i++)
        fprintf(f, "%-*s = %s\n", w, r->method[i].name, r->method[i].label);
    fprintf(f,
            "\nleast Gbit/s: per worker link, at the scenario's latency.\n"
            "latency limit: the largest one-way latency up to which CU stays "
            ">= the target,\nat %g x the least bandwidth.\n",
            PLAN_LATENCY_MARGIN);
    cli_plan_text_interval(f, r, fit_path);
    write_notes(f, r);
}

/* An amount as the tables print it: "12,345" ("-" without a price). */
static const char *amount(double x, char buf[PLAN_CELL_MAX]) {
    plan_thousands(x, buf, PLAN_CELL_MAX);
    return buf;
}

static void write_cost_head(FILE *f, const plan_result *r) {
    const plan_cost *c = &r->cost;
    char all[PLAN_CELL_MAX];
    const char *per = c->pricing == PLAN_PRICING_LINK ? "link between two sites"
                                                      : "worker link";
    fprintf(f, "\nmonthly cost, %s: ", c->currency);
    if (c->has_links) fprintf(f, "WAN the listed link's price per %s;\n", per);
    else
        fprintf(f, "WAN %g per Gbit/s per %s;\n", c->wan_usd_per_gbps_month,
                per);
    fprintf(f,
            "compute %g accelerators x %g per hour x %g h = %s, busy CU of "
            "it, idle the rest\n",
            c->accelerators, c->accelerator_usd_per_hour, PLAN_HOURS_PER_MONTH,
            amount(c->accelerators * c->accelerator_usd_per_hour *
                       PLAN_HOURS_PER_MONTH,
                   all));
    if (c->has_egress)
        fprintf(f,
                "egress %g per GB (1e9 bytes) of the bytes sent per month "
                "(simulated)\n",
                c->egress_usd_per_gb);
    fputs("total = WAN + busy + idle", f);
    fputs(c->has_egress ? " + egress" : "", f);
    fputs("; per month of work = total / CU (what the\nrecommendation "
          "ranks)\n",
          f);
}

static void write_costs(FILE *f, const plan_result *r) {
    int eg = r->cost.has_egress, w = name_width(r);
    write_cost_head(f, r);
    fprintf(f, "%-*s %10s %8s %11s %13s %13s", w, "method", "Gbit/s", "CU",
            "WAN", "busy compute", "idle compute");
    if (eg) fprintf(f, " %11s", "egress");
    fprintf(f, " %13s %13s\n", "total", "month of work");
    for (int i = 0; i < r->nmethods; i++) {
        const plan_method *m = &r->method[i];
        for (int k = 0; k < m->noptions; k++) {
            const plan_option *o = &m->option[k];
            char note[80], c[6][PLAN_CELL_MAX];
            plan_option_note(o, note, sizeof note);
            if (r->rec.status == PLAN_REC_BUY && r->rec.method == i &&
                r->rec.option == k) {
                size_t n = strlen(note);
                snprintf(note + n, sizeof note - n, "%sbuy", n ? ", " : "");
            }
            fprintf(f, "%-*s %10.4g %8.4f %11s %13s %13s", w, m->name, o->gbps,
                    o->cu, amount(o->wan_usd, c[0]), amount(o->busy_usd, c[1]),
                    amount(o->idle_usd, c[2]));
            if (eg) fprintf(f, " %11s", amount(o->egress_usd, c[3]));
            fprintf(f, " %13s %13s%s%s\n", amount(o->bill_usd, c[4]),
                    amount(o->work_usd, c[5]), *note ? "  " : "", note);
        }
    }
    if (r->best_method >= 0) {
        const plan_method *m = &r->method[r->best_method];
        const plan_option *o = &m->option[r->best_option];
        char x[64];
        plan_money_text(o->work_usd, r->cost.currency, x, sizeof x);
        fprintf(f,
                "\ncheapest that meets the target: %s at %.4g Gbit/s per %s "
                "(%s): %s per month of work\n",
                m->name, o->gbps, plan_link_word(r), m->label, x);
    }
}

/* ---- what the plan assumed ---------------------------------------------- */

#define ITEM_MAX 192

/* One assumption of a method, as text. */
typedef void (*item_fn)(const plan_method *m, char *b, size_t n);

static void item_latency(const plan_method *m, char *b, size_t n) {
    const plan_assumptions *a = &m->assume;
    double lo = a->latency_min_ms, hi = a->latency_max_ms;
    const char *src = a->latency_matrix ? " (network.latency_matrix_ms)" : "";
    if (m->workers < 2) snprintf(b, n, "none (one worker)");
    else if (hi == 0)
        snprintf(b, n, "0 ms: none between any two workers%s", src);
    else if (lo == hi)
        snprintf(b, n, "%g ms one way, %g ms round trip, every pair%s", hi,
                 2 * hi, src);
    else
        snprintf(b, n,
                 "%g..%g ms one way, %g..%g ms round trip over the "
                 "pairs%s",
                 lo, hi, 2 * lo, 2 * hi, src);
}

static void item_transport(const plan_method *m, char *b, size_t n) {
    const plan_assumptions *a = &m->assume;
    if (a->transport == SCN_TRANSPORT_TCP)
        snprintf(b, n, "tcp: slow start from %g kB, %s after idle",
                 a->tcp_init_window_kb,
                 a->tcp_slow_start_after_idle ? "again" : "not again");
    else snprintf(b, n, "ideal (a flow takes its share of the links at once)");
}

/* The efficiency line, and the costs of a measured network when set
 * (network.startup_ms, ack_bytes_per_kb, queue_ms). */
static void item_efficiency(const plan_method *m, char *b, size_t n) {
    const plan_assumptions *a = &m->assume;
    int k = snprintf(b, n,
                     "payload at %g x the line rate; %g ms overhead per "
                     "collective step",
                     a->efficiency, a->collective_overhead_ms);
    if (k > 0 && (size_t)k < n && a->startup_ms > 0)
        k += snprintf(b + k, n - k, "; %g ms set-up per pair", a->startup_ms);
    if (k > 0 && (size_t)k < n && a->ack_bytes_per_kb > 0)
        k += snprintf(b + k, n - k, "; ACKs of %g bytes per kB",
                      a->ack_bytes_per_kb);
    if (k > 0 && (size_t)k < n && a->queue_ms > 0)
        snprintf(b + k, n - k, "; a %g ms queue in the round trip",
                 a->queue_ms);
}

static void item_window(const plan_method *m, char *b, size_t n) {
    double w = m->assume.tcp_window_mb;
    if (w > 0)
        snprintf(b, n,
                 "%g MB per flow: a flow moves at most a window per "
                 "round trip",
                 w);
    else snprintf(b, n, "none (network.tcp_window_mb 0)");
}

static void item_collective(const plan_method *m, char *b, size_t n) {
    snprintf(b, n, "%s; %d link%s between sites",
             coll_algo_name(m->assume.collective), m->assume.links,
             m->assume.links == 1 ? "" : "s");
}

static void item_buckets(const plan_method *m, char *b, size_t n) {
    const plan_assumptions *a = &m->assume;
    double mb = a->dp ? a->dp_bucket_mb : a->bucket_mb;
    const char *what = a->dp ? "dp gradients" : "sync payloads";
    if (mb > 0)
        snprintf(b, n, "%s in buckets of at least %g MB%s", what, mb,
                 a->dp ? "" : ", per fragment");
    else snprintf(b, n, "%s in one bucket per layer", what);
}

static void item_gbit(const plan_method *m, char *b, size_t n) {
    snprintf(b, n, "%s",
             m->assume.gbit == SCN_GBIT_BINARY
                 ? "2^30 bits (network.gbit binary)"
                 : "1e9 bits (network.gbit si)");
}

static void item_failures(const plan_method *m, char *b, size_t n) {
    const plan_assumptions *a = &m->assume;
    if (a->trace) snprintf(b, n, "replayed from faults.trace");
    else if (a->mtbf_s > 0)
        snprintf(b, n, "MTBF %g h, MTTR %g h per worker", a->mtbf_s / 3600,
                 a->mttr_s / 3600);
    else snprintf(b, n, "none");
}

static void item_steps(const plan_method *m, char *b, size_t n) {
    const plan_assumptions *a = &m->assume;
    char wall[48] = "no least bandwidth to simulate";
    if (!isnan(a->wall_s))
        snprintf(wall, sizeof wall, "%.6g s simulated at the least bandwidth",
                 a->wall_s);
    snprintf(b, n, "%lld of %g s; %s", (long long)a->steps, a->step_time_s,
             wall);
}

/* Prints one assumption: once when every method has it alike, else one
 * line per method. */
static void write_item(FILE *f, const plan_result *r, const char *label,
                       item_fn fn) {
    char first[ITEM_MAX], b[ITEM_MAX];
    fn(&r->method[0], first, sizeof first);
    int same = 1;
    for (int i = 1; i < r->nmethods && same; i++) {
        fn(&r->method[i], b, sizeof b);
        same = !strcmp(b, first);
    }
    if (same) {
        fprintf(f, "  %-11s %s\n", label, first);
        return;
    }
    for (int i = 0; i < r->nmethods; i++) {
        fn(&r->method[i], b, sizeof b);
        fprintf(f, "  %-11s %s: %s\n", i ? "" : label, r->method[i].name, b);
    }
}

static void write_assumptions(FILE *f, const plan_result *r) {
    static const struct {
        const char *label;
        item_fn fn;
    } items[] = {{"latency", item_latency},
                 {"transport", item_transport},
                 {"efficiency", item_efficiency},
                 {"TCP window", item_window},
                 {"collective", item_collective},
                 {"buckets", item_buckets},
                 {"Gbit", item_gbit},
                 {"failures", item_failures},
                 {"steps", item_steps}};
    fputs("\nassumptions:\n", f);
    for (size_t i = 0; i < sizeof items / sizeof *items; i++)
        write_item(f, r, items[i].label, items[i].fn);
}

/* ---- binding limits, memory, sensitivity, training ------------------------ */

static void gain_text(double g, char b[PLAN_CELL_MAX]) {
    if (isnan(g)) snprintf(b, PLAN_CELL_MAX, "-");
    else snprintf(b, PLAN_CELL_MAX, "%+.4f", g);
}

static void window_text(const plan_option *o, const plan_assumptions *a,
                        char *b, size_t n) {
    if (o->window_covers < 0)
        snprintf(b, n, "%.4g MB (none set)", o->window_mb);
    else
        snprintf(b, n, "%.4g MB (%g MB set: %s)", o->window_mb,
                 a->tcp_window_mb, o->window_covers ? "covers it" : "short");
}

static void write_limits(FILE *f, const plan_result *r) {
    int w = name_width(r);
    fprintf(f,
            "\nbinding limit of each candidate: the CU gained with bandwidth "
            "x2, every latency / 2\n(the TCP window / 2 with it) and the TCP "
            "window x2; the limit is the largest gain\n(compute: none gains "
            "more than %g)\n",
            PLAN_LIMIT_MIN_GAIN);
    fprintf(f, "%-*s %10s %8s %9s %9s %9s  %-9s  %s\n", w, "method", "Gbit/s",
            "CU", "bw x2", "lat / 2", "win x2", "limit",
            "window needed (bandwidth x RTT)");
    for (int i = 0; i < r->nmethods; i++) {
        const plan_method *m = &r->method[i];
        if (!m->noptions)
            fprintf(f,
                    "%-*s %10s  (no candidate: no bandwidth reaches the "
                    "target)\n",
                    w, m->name, "-");
        for (int k = 0; k < m->noptions; k++) {
            const plan_option *o = &m->option[k];
            char g[PLAN_NTRIES][PLAN_CELL_MAX], win[96];
            for (int t = 0; t < PLAN_NTRIES; t++) gain_text(o->gain[t], g[t]);
            window_text(o, &m->assume, win, sizeof win);
            fprintf(f, "%-*s %10.4g %8.4f %9s %9s %9s  %-9s  %s\n", w, m->name,
                    o->gbps, o->cu, g[0], g[1], g[2], plan_limit_name(o->limit),
                    win);
        }
    }
}

static void write_memory(FILE *f, const plan_result *r) {
    int w = name_width(r);
    fputs("\nmemory per worker before activations, GB (1e9 bytes): parameters "
          "and gradients\nbf16, AdamW m and v fp32, outer parameters and "
          "momentum fp32 (not dp)\n",
          f);
    fprintf(f, "%-*s %9s %9s %9s %9s %9s %9s %8s\n", w, "method", "params",
            "grads", "AdamW", "outer", "momentum", "total", "B/param");
    for (int i = 0; i < r->nmethods; i++) {
        const mem_worker *m = &r->method[i].memory;
        if (!r->method[i].has_memory) continue;
        fprintf(f, "%-*s %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g %8.4g\n", w,
                r->method[i].name, m->parameters_bytes / 1e9,
                m->gradients_bytes / 1e9, m->inner_optimizer_bytes / 1e9,
                m->outer_parameters_bytes / 1e9, m->outer_momentum_bytes / 1e9,
                m->accelerator_bytes / 1e9, mem_bytes_per_param(m));
    }
    for (int i = 0; i < r->nmethods; i++) {
        const mem_worker *m = &r->method[i].memory;
        if (r->method[i].has_memory && m->offload)
            fprintf(f,
                    "%s: outer state offloaded, %.4g GB in host memory; on "
                    "the accelerator at most\n%d of %d fragments at once (the "
                    "largest %.4g G parameters)\n",
                    r->method[i].name, m->host_bytes / 1e9, m->in_flight,
                    m->fragments, m->fragment_params / 1e9);
    }
}

static void write_sensitivity(FILE *f, const plan_result *r) {
    int w = name_width(r);
    char mtbf[32];
    snprintf(mtbf, sizeof mtbf, "MTBF %g h", r->mtbf_hours);
    fprintf(f, "\nsensitivity: the least Gbit/s per worker link with one "
               "assumption changed\n");
    fprintf(f, "%-*s %14s %14s %14s %14s\n", w, "method", "base", "latency x2",
            "efficiency 0.6", mtbf);
    for (int i = 0; i < r->nmethods; i++) {
        const plan_method *m = &r->method[i];
        char c[1 + PLAN_NSENS][PLAN_CELL_MAX];
        plan_least_text(&m->least, c[0]);
        for (int k = 0; k < PLAN_NSENS; k++)
            plan_least_text(&m->sens[k].least, c[k + 1]);
        fprintf(f, "%-*s %14s %14s %14s %14s\n", w, m->name, c[0], c[1], c[2],
                c[3]);
    }
    /* too few failures to tell: once when alike for every method */
    char note[SCN_MAX_VARIANTS][ITEM_MAX];
    int same = 1;
    for (int i = 0; i < r->nmethods; i++) {
        const plan_method *m = &r->method[i];
        note[i][0] = 0;
        if (m->mtbf_failures < 1) /* with the steps that expect 10 */
            snprintf(
                note[i], ITEM_MAX,
                "about %.2g failures expected in the "
                "simulated steps at %s, too few to\ntell (--set steps=%.0f "
                "expects 10).",
                m->mtbf_failures, mtbf,
                ceil(10 * (double)m->assume.steps / m->mtbf_failures));
        same &= !strcmp(note[i], note[0]);
    }
    for (int i = 0; i < r->nmethods; i++) {
        if (!note[i][0] || (same && i)) continue;
        if (same) fprintf(f, "note: %s\n", note[i]);
        else fprintf(f, "note: %s: %s\n", r->method[i].name, note[i]);
    }
}

static void write_training(FILE *f, const plan_result *r) {
    int w = name_width(r);
    if (r->tokens > 0)
        fprintf(f,
                "\nwhole training: %g tokens (steps = tokens / "
                "model.tokens_per_step)\n",
                r->tokens);
    else
        fprintf(f,
                "\nwhole training: %g h of compute (steps = %g x 3600 / "
                "step time)\n",
                r->train_hours, r->train_hours);
    fprintf(f, "%-*s %12s %10s %8s %10s %10s %10s %12s\n", w, "method", "steps",
            "Gbit/s", "CU", "wall h", "idle h", "WAN months", "GB sent");
    for (int i = 0; i < r->nmethods; i++) {
        const plan_method *m = &r->method[i];
        for (int k = 0; k < m->noptions; k++) {
            const plan_training *t = &m->option[k].train;
            fprintf(f,
                    "%-*s %12lld %10.4g %8.4f %10.4g %10.4g %10.4g %12.4g%s"
                    "\n",
                    w, m->name, (long long)m->train_steps, m->option[k].gbps,
                    t->run.cu, t->wall_h, t->idle_h, t->wan_months,
                    t->run.bytes / 1e9,
                    t->run.finished ? "" : "  not finished");
        }
    }
    fputs("idle h: (1 - CU) x wall h, of every accelerator.\n", f);
    if (!r->has_cost) return;
    const plan_cost *c = &r->cost;
    fprintf(f,
            "\nwhole training, %s: compute %g accelerators x wall h x %g "
            "per hour, busy CU of\nit, idle the rest; WAN the monthly cost x "
            "WAN months; egress %g per GB sent;\ntotal = busy + idle + WAN "
            "+ egress\n",
            c->currency, c->accelerators, c->accelerator_usd_per_hour,
            c->egress_usd_per_gb);
    fprintf(f, "%-*s %10s %14s %14s %12s %12s %14s\n", w, "method", "Gbit/s",
            "busy compute", "idle compute", "WAN", "egress", "total");
    for (int i = 0; i < r->nmethods; i++) {
        const plan_method *m = &r->method[i];
        for (int k = 0; k < m->noptions; k++) {
            const plan_training *t = &m->option[k].train;
            const char *note = !t->run.finished      ? "  not finished"
                               : t->cheapest_overall ? "  cheapest overall"
                               : t->cheapest_method  ? "  cheapest"
                                                     : "";
            char a[5][PLAN_CELL_MAX];
            fprintf(f, "%-*s %10.4g %14s %14s %12s %12s %14s%s\n", w, m->name,
                    m->option[k].gbps,
                    amount(t->compute_usd - t->idle_usd, a[0]),
                    amount(t->idle_usd, a[1]), amount(t->wan_usd, a[2]),
                    amount(t->egress_usd, a[3]), amount(t->total_usd, a[4]),
                    note);
        }
    }
    if (r->train_best_method >= 0) {
        const plan_method *m = &r->method[r->train_best_method];
        const plan_option *o = &m->option[r->train_best_option];
        char x[64];
        plan_money_text(o->train.total_usd, c->currency, x, sizeof x);
        fprintf(f,
                "\ncheapest training: %s at %.4g Gbit/s per %s (%s), "
                "%s in %.4g h\n",
                m->name, o->gbps, plan_link_word(r), m->label, x,
                o->train.wall_h);
    }
}

/* Each candidate's energy per month and its emissions (a grid). */
static void write_energy(FILE *f, const plan_result *r) {
    int w = name_width(r);
    fprintf(f,
            "\nenergy per month (%g h): CU x accelerators x busy W + (1 - CU) "
            "x accelerators x\nidle W (workers.power_w), + the bytes sent per "
            "month x network.joules_per_gb;\nemissions at %g g CO2 per kWh\n",
            PLAN_HOURS_PER_MONTH, r->grid_gco2_per_kwh);
    fprintf(f, "%-*s %10s %8s %13s %12s %12s\n", w, "method", "Gbit/s", "CU",
            "accelerators", "kWh/month", "kg CO2/month");
    for (int i = 0; i < r->nmethods; i++) {
        const plan_method *m = &r->method[i];
        for (int k = 0; k < m->noptions; k++) {
            const plan_option *o = &m->option[k];
            fprintf(f, "%-*s %10.4g %8.4f %13.6g %12.6g %12.6g\n", w, m->name,
                    o->gbps, o->cu, m->power.accelerators, o->energy_kwh_month,
                    o->emissions_kg_co2_month);
        }
    }
    const plan_rec *x = &r->rec;
    if (x->method < 0 || x->option < 0) return;
    const plan_option *o = &r->method[x->method].option[x->option];
    fprintf(f,
            "at the recommendation (%s at %.4g Gbit/s): %.6g kWh, %.6g kg CO2 "
            "per month\n",
            r->method[x->method].name, o->gbps, o->energy_kwh_month,
            o->emissions_kg_co2_month);
}

static void write_text(FILE *f, const char *scenario, const plan_result *r,
                       const char *fit_path) {
    fprintf(f, "plan for %s: compute utilization >= %g\n\n", scenario,
            r->target_cu);
    cli_plan_text_summary(f, r);
    write_methods(f, r, fit_path);
    if (r->has_cost) write_costs(f, r);
    if (r->has_grid) write_energy(f, r);
    cli_plan_text_seeds(f, r, name_width(r));
    if (r->explain) {
        write_limits(f, r);
        write_memory(f, r);
    }
    if (r->sensitivity) write_sensitivity(f, r);
    if (r->train_hours > 0 || r->tokens > 0) write_training(f, r);
    if (r->explain) write_assumptions(f, r);
}

/* ---- the command ------------------------------------------------------- */

typedef struct {
    double target;
    plan_cost cost;
    int has_cost, jobs, nvariants;
    const char *variants[SCN_MAX_VARIANTS];
    plan_extra extra;
} plan_args;

/* Option name, when given: a number in [lo, hi] into *out (else 0). */
static int number_option(const cli_options *o, const char *cmd,
                         const char *name, double lo, double hi, double *out) {
    const char *v = cli_value(o, name);
    *out = 0;
    if (!v) return 0;
    char *end;
    double x = strtod(v, &end);
    if (*v == 0 || *end || !(x >= lo && x <= hi))
        return cli_usage_error(cmd, "%s: '%s' is not a number in [%g, %g]",
                               name, v, lo, hi);
    *out = x;
    return 0;
}

int cli_plan_extra(const cli_options *o, const char *cmd, plan_extra *x) {
    int rc;
    x->sensitivity = cli_flag(o, "--sensitivity");
    if ((rc = number_option(o, cmd, "--mtbf-hours", 1e-6, 1e6,
                            &x->mtbf_hours)) ||
        (rc = number_option(o, cmd, "--train-hours", 1e-6, 1e12,
                            &x->train_hours)) ||
        (rc = number_option(o, cmd, "--tokens", 1, 1e18, &x->tokens)) ||
        (rc = number_option(o, cmd, "--grid-gco2-per-kwh", 0, 1e6,
                            &x->grid_gco2_per_kwh)))
        return rc;
    x->has_grid = cli_value(o, "--grid-gco2-per-kwh") != NULL;
    if (x->mtbf_hours > 0 && !x->sensitivity)
        return cli_usage_error(cmd, "--mtbf-hours is the MTBF of "
                                    "--sensitivity (give both)");
    if (x->train_hours > 0 && x->tokens > 0)
        return cli_usage_error(cmd,
                               "--train-hours and --tokens are two "
                               "ways to say how long the training is (give "
                               "one)");
    return 0;
}

static int parse_extra(const cli_options *o, plan_extra *x) {
    x->explain = 1;
    return cli_plan_extra(o, "plan", x);
}

static int parse_args(const cli_options *o, plan_args *a) {
    int rc;
    if ((rc = cli_fraction(o, "plan", "--target-cu", NAN, &a->target)) ||
        (rc = cli_cost(o, &a->cost, &a->has_cost)) ||
        (rc = cli_jobs(o, "plan", &a->jobs)) ||
        (rc = parse_extra(o, &a->extra)) ||
        (rc = cli_plan_sure(o, "plan", &a->extra)))
        return rc;
    return cli_values(o, "plan", "--variant", a->variants, SCN_MAX_VARIANTS,
                      &a->nvariants);
}

typedef struct {
    const char *scenario;
    const plan_result *r;
    int json;
    const char *fit_path; /* --set-from's file, or NULL */
} plan_output;

static void write_output(FILE *f, const void *ctx) {
    const plan_output *p = ctx;
    if (p->json) cli_plan_write_json(f, p->scenario, p->r, p->fit_path);
    else write_text(f, p->scenario, p->r, p->fit_path);
}

static void progress_tasks(void *ctx, int64_t done, int64_t total) {
    cli_progress_count(ctx, (double)done, (double)total);
}

int cli_plan(int argc, char **argv) {
    return cli_plan_par(argc, argv, NULL);
}

int cli_plan_par(int argc, char **argv, const cli_par *par) {
    static const char *const extra[] = {"--target-cu",
                                        "--cost",
                                        "--variant",
                                        "--jobs",
                                        "--mtbf-hours",
                                        "--train-hours",
                                        "--tokens",
                                        "--samples",
                                        "--seed",
                                        "--seeds",
                                        "--grid-gco2-per-kwh",
                                        NULL};
    static const char *const flags[] = {"--json", "--sensitivity", NULL};
    cli_options o;
    int rc = cli_parse("plan", &help, argc, argv, extra, flags, &o);
    if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
    plan_args a = {0};
    if ((rc = parse_args(&o, &a))) return rc;
    plan_spec spec = {o.scenario,
                      a.variants,
                      a.nvariants,
                      o.sets,
                      o.nset,
                      a.target,
                      a.has_cost ? &a.cost : NULL,
                      a.jobs,
                      o.full,
                      par ? par->table : NULL};
    plan_result *r = malloc(sizeof *r);
    char err[1024];
    cli_progress progress;
    cli_progress_start(&progress, o.scenario);
    rc = r ? plan_compute_extra(&spec, &a.extra, progress_tasks, &progress, r,
                                err, sizeof err)
           : MSG_ENOMEM;
    cli_progress_end(&progress);
    if (!r) snprintf(err, sizeof err, "out of memory");
    if (rc == MSG_EINPUT) fprintf(stderr, "%s\n", err);
    else if (rc) fprintf(stderr, "dilosim plan: %s\n", err);
    if (!rc && !(par && par->worker)) {
        plan_output out = {o.scenario, r, cli_flag(&o, "--json"),
                           o.set_from ? o.set_from->path : NULL};
        rc = cli_write(&o, "plan", write_output, &out);
    } else rc = msg_exit_status(rc);
    free(r);
    return rc;
}
