/*
 * plan.h -- what network to buy: for each method (variant) of a scenario,
 * the least bandwidth that reaches a target compute utilization, the
 * latency at which a little more than that stops being enough, and,
 * given prices, what each choice of bandwidth costs per month.
 *
 * - Least bandwidth: the smallest network.bandwidth_gbps (every worker's
 *   up and down link) in [PLAN_MIN_GBPS, PLAN_MAX_GBPS] with CU >= the
 *   target, at the scenario's own latency: a table over a scan of 10
 *   points per decade (the first scan point reaching the target and the
 *   one before bracket the crossing; table_solve over log10 bandwidth, to
 *   1e-6 relative), reported on the reaching side, so CU there is >= the
 *   target.  Scanning first keeps the answer the first crossing where CU
 *   is not monotone in bandwidth.
 * - Latency limit: at PLAN_LATENCY_MARGIN (1.05) times that bandwidth,
 *   the largest network.latency_ms (every worker) in
 *   [0, PLAN_MAX_LATENCY_MS] up to which CU stays >= the target: a scan
 *   of 0 and 0.001..1000 ms, 10 points per decade, finds the first
 *   latency where CU falls under the target, and table_solve the crossing
 *   between it and the scan point before (to 1e-6 relative).
 * - Costs, per month of PLAN_HOURS_PER_MONTH (730) hours, for each listed
 *   bandwidth and for the least sufficient one:
 *     WAN  = bandwidth (Gbit/s per worker link) x workers x
 *            wan_usd_per_gbps_month
 *     idle = (1 - CU) x accelerators x accelerator_usd_per_hour x 730
 *   and their sum; the cheapest choice per method and overall is marked
 *   (ties: the earlier, i.e. lower bandwidth, then earlier method).
 */
#ifndef DILOSIM_PLAN_H
#define DILOSIM_PLAN_H

#include <stddef.h>

#include "scenario.h"
#include "table.h"

#define PLAN_MIN_GBPS 0.01
#define PLAN_MAX_GBPS 100000.0
#define PLAN_MAX_LATENCY_MS 1000.0
#define PLAN_LATENCY_MARGIN 1.05
#define PLAN_HOURS_PER_MONTH 730.0
#define PLAN_MAX_BANDWIDTHS 64

/* Prices, from a cost file:
 *   {"wan_usd_per_gbps_month": 200, "accelerator_usd_per_hour": 2.5,
 *    "accelerators": 1024, "bandwidths_gbps": [1, 10, 100, 400]} */
typedef struct {
    double wan_usd_per_gbps_month;   /* USD per Gbit/s of one worker's
                                        link per month, >= 0 (required) */
    double accelerator_usd_per_hour; /* USD per accelerator-hour, >= 0
                                        (required) */
    double accelerators;             /* accelerators of the whole job,
                                        all workers together, integer
                                        >= 1 (required) */
    int nbandwidths;                 /* bandwidths to price (optional, */
    double bandwidths_gbps[PLAN_MAX_BANDWIDTHS]; /* Gbit/s per worker
                                        link, > 0, at most 64) */
} plan_cost;

/* Parses a cost document of len bytes (any bytes; `name` stands for the
 * file in messages) with the scenario's strict JSON reader.  Syntax
 * errors, unknown, duplicate or missing keys and bad values are errors:
 * returns 0, or MSG_EINPUT with a one-line message "name:line:col: key:
 * what is wrong (expected ...)" (MSG_ENOMEM when out of memory).  A
 * document is at most 64 KiB. */
int plan_cost_parse_n(const char *text, size_t len, const char *name,
                      plan_cost *out, char *err, size_t errlen);

/* plan_cost_parse_n of a NUL-terminated text. */
int plan_cost_parse(const char *text, const char *name, plan_cost *out,
                    char *err, size_t errlen);

/* plan_cost_parse_n of a file (at most 64 KiB). */
int plan_cost_load(const char *path, plan_cost *out, char *err,
                   size_t errlen);

/* One priced bandwidth of one method. */
typedef struct {
    double gbps;          /* per worker link */
    double cu;            /* compute utilization there */
    double wan_usd;       /* per month */
    double idle_usd;      /* per month: compute paid for but idle */
    double total_usd;     /* wan_usd + idle_usd */
    int is_least;         /* the least sufficient bandwidth */
    int cheapest_method;  /* cheapest of this method */
    int cheapest_overall; /* cheapest of all */
} plan_option;

typedef struct {
    char name[SCN_NAME_MAX]; /* the variant, or the method for the base */
    int workers;
    int bandwidth_dip;       /* CU falls somewhere on the bandwidth scan */
    int latency_rise;        /* CU rises somewhere on the latency scan */
    table_crossing least;    /* FOUND: the least bandwidth is least.v_hi,
                                CU least.cu_hi; AT_START: <= PLAN_MIN_GBPS
                                (v_hi, cu_hi: that point); NOT_REACHED:
                                > PLAN_MAX_GBPS */
    double latency_gbps;     /* PLAN_LATENCY_MARGIN x the least; NAN when
                                not reached */
    table_crossing latency;  /* FOUND: the limit is latency.v_hi ms;
                                AT_START: still enough at the maximum;
                                NOT_REACHED: not even at 0 ms (or no least
                                bandwidth to test) */
    int noptions;            /* by increasing bandwidth */
    plan_option option[PLAN_MAX_BANDWIDTHS + 1];
} plan_method;

typedef struct {
    const char *path;                /* scenario file */
    const char *const *variants;     /* nvariants 0: all (or the base) */
    int nvariants;
    const char *const *sets;         /* --set overrides */
    int nset;
    double target_cu;                /* (0, 1] */
    const plan_cost *cost;           /* NULL: no prices */
    int jobs;                        /* threads; <= 0: pool_cpu_count() */
    int full;                        /* --full: no fast-forward */
    const table_runner *runner;      /* NULL: this process's threads; else
                                        every batch (table.h) */
} plan_spec;

typedef struct {
    double target_cu;
    int has_cost;
    plan_cost cost;
    int nmethods;
    plan_method method[SCN_MAX_VARIANTS];
    int best_method, best_option;    /* cheapest overall; -1 without */
} plan_result;

/* Plans every method, the scenario read and parsed once per method
 * (table_docs_open: "-" is standard input, for one method).  Returns 0,
 * or a MSG_E* code (MSG_EINPUT: the input; others: runtime, passed
 * through from the loader and run_simulate) with a one-line message. */
int plan_compute(const plan_spec *spec, plan_result *out, char *err,
                 size_t errlen);

/* plan_compute, calling progress(ctx, done, total) (one thread at a time)
 * as its simulations finish; total grows as each search starts (the
 * bandwidth scan, the latency scans, the priced bandwidths). */
int plan_compute_progress(const plan_spec *spec, table_progress_fn progress,
                          void *ctx, plan_result *out, char *err,
                          size_t errlen);

/* Bytes of one cell of plan_method_text, with the NUL. */
#define PLAN_CELL_MAX 32

/* A method's answers as `dilosim plan` prints them: the least bandwidth
 * ("%.4g" Gbit/s, "> 100000" when not reached, "<= 0.01" below the
 * range), CU there ("%.4f"), the latency limit ("%.4g" ms, "> 1000" when
 * CU stays above the target, "none" when not even 0 ms is enough) and
 * the bandwidth it was found at ("%.4g"); "-" where there is no least
 * bandwidth. */
void plan_method_text(const plan_method *m, char least[PLAN_CELL_MAX],
                      char cu[PLAN_CELL_MAX], char latency[PLAN_CELL_MAX],
                      char at[PLAN_CELL_MAX]);

/* A priced option's marks: "least", "cheapest", "cheapest overall",
 * joined by ", " ("" when none applies). */
void plan_option_note(const plan_option *o, char *buf, size_t n);

#endif
