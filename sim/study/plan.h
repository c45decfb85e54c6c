/*
 * plan.h -- what network to buy: for each method (variant) of a scenario,
 * the least bandwidth that reaches a target compute utilization, the
 * latency at which a little more than that stops being enough, and,
 * given prices, what each choice of bandwidth costs per month; on request
 * what the plan assumed, what limits each choice, the memory of a worker,
 * how the answer moves when an assumption changes, and what a whole
 * training costs.
 *
 * - Least bandwidth: the least network.bandwidth_gbps (every worker's
 *   up and down link) in [PLAN_MIN_GBPS, PLAN_MAX_GBPS] from which CU >=
 *   the target at every bandwidth evaluated above it, at the scenario's
 *   own latency: table_need over a scan of 10 points per decade (the last
 *   scan point below the target and the next one bracket the crossing,
 *   solved over log10 bandwidth to 1e-6 relative; where CU falls as
 *   bandwidth grows, the scan is refined to TABLE_SCAN_STEP there), the
 *   definition and the code `dilosim table` uses for its rows, reported
 *   on the reaching side, so CU there is >= the target.
 * - Latency limit: at PLAN_LATENCY_MARGIN (1.05) times that bandwidth,
 *   the largest one-way latency of every pair of workers (every worker's
 *   network.latency_ms, in place of a network.latency_matrix_ms) in
 *   [0, PLAN_MAX_LATENCY_MS] up to which CU stays >= the target: a scan
 *   of 0 and 0.001..1000 ms, 10 points per decade, finds the first
 *   latency where CU falls under the target, and table_solve the crossing
 *   between it and the scan point before (to 1e-6 relative).
 * - Costs, per month of PLAN_HOURS_PER_MONTH (730) hours, for each listed
 *   bandwidth and for the least sufficient one:
 *     WAN    = bandwidth (Gbit/s) x links x wan_usd_per_gbps_month, where
 *              links = workers ("pricing": "port", each worker's link) or
 *              the site-to-site links of the collective ("link": a ring
 *              of M >= 3 sites M, of 2 sites 1, a star M - 1, all-to-all
 *              M (M - 1) / 2: each pair of sites the collective sends
 *              between, bought once, with that bandwidth each way)
 *              (with "links": links x the listed link's usd_month; the
 *              least sufficient bandwidth, not listed, has no WAN price)
 *     busy   = CU x accelerators x accelerator_usd_per_hour x 730
 *     idle   = (1 - CU) x accelerators x accelerator_usd_per_hour x 730
 *     egress = bytes sent per month (bytes_sent_total / wall x 730 h) /
 *              1e9 x egress_usd_per_gb (only when the file has that key)
 *   total_usd = WAN + idle + egress (as before), bill_usd = WAN + busy +
 *   idle + egress (the whole month) and work_usd = bill_usd / CU (a month
 *   of work: every accelerator busy for 730 h); the cheapest total_usd
 *   per method and overall is marked, among the listed options where a
 *   method has some (ties: the earlier, i.e. lower bandwidth, then
 *   earlier method).
 * - Recommendation (plan_recommend, plan_rec.c): with listed options, of
 *   every method's listed options whose bandwidth is >= that method's
 *   least sufficient one, the least work_usd (with a training: the least
 *   finished training total_usd), ties the lower bandwidth, then the
 *   earlier method (PLAN_REC_BUY); none: PLAN_REC_SHORT, the fastest
 *   listed option of the method with the highest CU there; nothing
 *   listed: the least sufficient bandwidth of the method that needs
 *   least (PLAN_REC_LEAST); no method reaches the target: PLAN_REC_NONE.
 *   The runner-up: the best sufficient option of another method (it lost
 *   on bandwidth when its least is larger, else on cost); none there: a
 *   method that no listed option brings to the target; with one method
 *   its next sufficient option, else its fastest insufficient one.  At
 *   the option bought (BUY, LEAST) the scenario is simulated again at its
 *   steps: as it is (the links' average and peak load), with every
 *   one-way latency x2, with network.efficiency 0.6, and under the
 *   sensitivity with random failures at mtbf_hours.
 * - Binding limit (plan_spec.explain) of each candidate (each priced
 *   bandwidth and the least sufficient one; without prices the least):
 *   CU is simulated again with every link's bandwidth x2, every one-way
 *   latency / 2 (only when some latency is > 0; the TCP windows / 2 with
 *   it, so that what a window lets through per round trip stays and the
 *   change is the latency's own), and the TCP window x2
 *   (network.tcp_window_mb and with transport tcp tcp_init_window_kb;
 *   only when a window is set or the transport is tcp).  The limit is
 *   the change that gains the most CU (ties: bandwidth, latency, window),
 *   "compute" when none gains more than PLAN_LIMIT_MIN_GAIN (0.001): more
 *   network would not make the workers busier (plan_binding).
 * - Sensitivity (plan_spec.sensitivity): the least bandwidth again with
 *   every one-way latency x2, with network.efficiency 0.6, and with
 *   random failures at faults.mtbf_hours = mtbf_hours (the scenario's
 *   MTTR; a fault trace is dropped), at the scenario's steps.
 * - Training (plan_spec.train_hours or tokens): each candidate simulated
 *   again for steps = round(hours x 3600 / step time) (tokens: ceil(tokens
 *   / model.tokens_per_step)), the steps set on the loaded config (the
 *   loader's estimate of the run's length does not apply: a run that
 *   would pass RUN_TIME_MAX_NS stops unfinished), and priced whole:
 *     compute = accelerators x wall h x accelerator_usd_per_hour (busy
 *               and idle; idle = (1 - CU) of it)
 *     WAN     = the monthly WAN x wall h / 730
 *     egress  = bytes sent / 1e9 x egress_usd_per_gb
 *   the cheapest finished run per method and overall marked.
 * - Interval (plan_extra.fit, a fit block of --set-from; plan_interval.c):
 *   the least bandwidth as [low, mid, high]: mid the plain answer, at the
 *   fitted values; low and high the PLAN_P_LOW and PLAN_P_HIGH
 *   percentiles (plan_percentile) of the least bandwidth over `samples`
 *   draws of the fitted keys from N(value, covariance), each draw a whole
 *   least-bandwidth search (the same search; no latency scan, no
 *   sensitivity, no prices).  The covariance C = V diag(l) V^T
 *   (gsl_eigen_symmv, sorted by gsl_eigen_symmv_sort descending; an l
 *   below 0 by at most 1e-9 of the largest is rounding and taken as 0, so
 *   a singular C, a key fixed at a bound, is fine); draw x = value + V
 *   diag(sqrt l) z, z the next nfit gsl_ran_gaussian(1) values of the one
 *   stream rng_stream(sample_seed, PLAN_RNG_FIT, 0), draw after draw.  A
 *   draw the loader rejects for some method (MSG_EINPUT: a key out of
 *   range) is drawn again from the same stream, a truncated normal; the
 *   redraws are counted, and past PLAN_REDRAWS_PER_SAMPLE x samples of
 *   them the plan is an input error.  A draw below the range counts as
 *   PLAN_MIN_GBPS, above it as infinity.  Where a method's scenario draws
 *   random numbers (plan_method.random), draw k runs with seed =
 *   the scenario's seed + k, so the interval covers the failure draws too.
 *   The draws' overrides go right after the file's own overrides
 *   (spec->sets[0..fit->nset-1]), so a later --set of a fitted key holds
 *   it fixed.
 * - Seeds (plan_extra.seeds = N): where a method's scenario draws random
 *   numbers (failures at faults.mtbf_hours > 0 without a trace, or
 *   stragglers with 0 < workers.straggler_prob < 1), CU at each option is
 *   simulated with seed = the scenario's seed + k, k = 0..N-1, and given
 *   as its 5th, 50th and 95th percentiles (plan_percentile); and the
 *   least bandwidth from which the 5th percentile reaches the target, CU
 *   "in 95% of the draws" (the same search, table_need's definition, on
 *   that percentile as the curve).  A trace is fixed: without randomness
 *   every seed gives the same CU, and the spreads are CU itself, the least
 *   bandwidth the plain one, with nothing simulated.
 */
#ifndef DILOSIM_PLAN_H
#define DILOSIM_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "sim/engine/memory.h"
#include "sim/config/scenario.h"
#include "sim/config/setfile.h"
#include "sim/study/table.h"

#define PLAN_MIN_GBPS 0.01
#define PLAN_MAX_GBPS 100000.0
#define PLAN_BANDWIDTH_SCAN                                                    \
    "logspace:-2:5:71" /* PLAN_MIN_GBPS..PLAN_MAX_GBPS,
                                                  10 points per decade */
#define PLAN_MAX_LATENCY_MS 1000.0
#define PLAN_LATENCY_MARGIN 1.05
#define PLAN_HOURS_PER_MONTH 730.0
#define PLAN_MAX_BANDWIDTHS 64
#define PLAN_LIMIT_MIN_GAIN 0.001 /* CU a change must gain to bind */
#define PLAN_MTBF_HOURS 24.0      /* the sensitivity's MTBF by default */
#define PLAN_LOW_EFFICIENCY 0.6   /* the sensitivity's efficiency */
#define PLAN_GB 1e9               /* bytes of the GB egress is priced by */
#define PLAN_SAMPLES 200          /* draws of the fitted keys by default */
#define PLAN_MAX_SAMPLES 100000
#define PLAN_MAX_SEEDS 100000
#define PLAN_REDRAWS_PER_SAMPLE 100 /* redraws allowed per draw asked */
#define PLAN_P_LOW 0.05             /* the interval's and the seeds' */
#define PLAN_P_MID 0.5              /*   percentiles */
#define PLAN_P_HIGH 0.95
/* The rng_stream purpose of the fit's draws, apart from rng.h's. */
#define PLAN_RNG_FIT 0x706c616eu

/* How the WAN is priced: per worker link, or per link between sites. */
typedef enum { PLAN_PRICING_PORT, PLAN_PRICING_LINK } plan_pricing;

/* Prices, from a cost file:
 *   {"wan_usd_per_gbps_month": 200, "accelerator_usd_per_hour": 2.5,
 *    "accelerators": 1024, "bandwidths_gbps": [1, 10, 100, 400],
 *    "pricing": "port", "egress_usd_per_gb": 0.02}
 * the last two optional ("port" and no egress by default). */
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
    plan_pricing pricing;     /* "pricing" (optional: port) */
    int has_egress;           /* "egress_usd_per_gb" given */
    double egress_usd_per_gb; /* USD per 1e9 bytes sent, >= 0 */
    /* "links": the speeds one can buy, each at its price per link per
     * month (a link as "pricing" says); given, bandwidths_gbps holds
     * their speeds (increasing) and nbandwidths their count, and
     * wan_usd_per_gbps_month is not used */
    int has_links;
    double link_usd_month[PLAN_MAX_BANDWIDTHS];
    char currency[4]; /* "currency": 3 letters (default "USD") */
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
int plan_cost_load(const char *path, plan_cost *out, char *err, size_t errlen);

/* Why a candidate's CU is what it is (see the header comment). */
typedef enum {
    PLAN_LIMIT_BANDWIDTH,
    PLAN_LIMIT_LATENCY,
    PLAN_LIMIT_WINDOW,
    PLAN_LIMIT_COMPUTE
} plan_limit;

/* The changes a binding limit tries, in the order ties go. */
enum { PLAN_TRY_BANDWIDTH, PLAN_TRY_LATENCY, PLAN_TRY_WINDOW, PLAN_NTRIES };

/* The rule: the change of the largest gain (CU with it minus CU without;
 * NAN: the change does not apply), the first of equal ones, or
 * PLAN_LIMIT_COMPUTE when no gain exceeds PLAN_LIMIT_MIN_GAIN. */
plan_limit plan_binding(const double gain[PLAN_NTRIES]);

/* "bandwidth", "latency", "window", "compute". */
const char *plan_limit_name(plan_limit l);

/* What one simulation gave. */
typedef struct {
    int64_t steps;
    int finished;  /* run_result.finished */
    double cu;     /* compute utilization */
    double wall_s; /* simulated time */
    double bytes;  /* bytes_sent_total */
    int64_t failures;
    double avg_link_gbps, peak_link_gbps; /* run_result's */
} plan_run;

/* A whole training at one bandwidth (plan_spec.train_hours, tokens). */
typedef struct {
    plan_run run;
    double wall_h;       /* run.wall_s / 3600 */
    double idle_h;       /* (1 - CU) x wall_h, per accelerator */
    double wan_months;   /* wall_h / 730 */
    double compute_usd;  /* with prices: accelerators x wall_h x price */
    double idle_usd;     /* the idle part of compute_usd */
    double wan_usd;      /* monthly WAN x wan_months */
    double egress_usd;   /* bytes / 1e9 x egress price */
    double total_usd;    /* compute + WAN + egress */
    int cheapest_method; /* cheapest finished run of the method */
    int cheapest_overall;
} plan_training;

/* One priced bandwidth of one method (without prices, with explain or a
 * training: the least sufficient one, its prices 0). */
typedef struct {
    double gbps;          /* per worker link */
    double cu;            /* compute utilization there */
    double wan_usd;       /* per month */
    double idle_usd;      /* per month: compute paid for but idle */
    double total_usd;     /* wan_usd + idle_usd + egress_usd */
    int is_least;         /* the least sufficient bandwidth */
    int cheapest_method;  /* cheapest of this method */
    int cheapest_overall; /* cheapest of all */
    double egress_usd;    /* per month (0 without an egress price) */
    double busy_usd;      /* per month: compute busy, CU x accelerators x
                             price x 730 h */
    double bill_usd;      /* per month, everything: WAN + busy + idle +
                             egress (NAN when the WAN has no price: the
                             least sufficient bandwidth with "links") */
    double work_usd;      /* bill_usd / CU: what a month of work (a month
                             of every accelerator busy) costs here, the
                             recommendation's monthly rank */
    int listed;           /* a listed bandwidth (or link) of the cost file */
    /* simulated for explain, an egress price or a training: */
    int has_run;
    plan_run run; /* the scenario's steps at this bandwidth */
    /* explain: */
    double gain[PLAN_NTRIES]; /* CU gained by each change; NAN: none */
    plan_limit limit;
    double window_mb;  /* bandwidth x the longest round trip, MB (1e6
                             bytes): the window a flow needs for it */
    int window_covers; /* network.tcp_window_mb >= window_mb: 1 or 0;
                             -1 when no window is set */
    /* a training: */
    plan_training train;

    /* seeds: CU's percentiles over the seeds (all three CU without
     * randomness) */
    double cu_p5, cu_p50, cu_p95;

    /* a grid (plan_extra.has_grid; plan_energy.c): kWh per month of 730 h
     * and its kg of CO2 */
    double energy_kwh_month, emissions_kg_co2_month;
} plan_option;

/* What a method's accelerators and WAN draw (a grid: from its config). */
typedef struct {
    double accelerators;   /* summed over the workers (scn_accelerators) */
    double busy_w, idle_w; /* workers.power_w, per accelerator */
    int has_joules;        /* network.joules_per_gb given */
    double joules_per_gb;
} plan_power;

/* What the plan of a method assumed (explain), from its config. */
typedef struct {
    double latency_min_ms, latency_max_ms; /* one way, over the pairs of
                                              workers (0 with one) */
    int latency_matrix;                    /* from network.latency_matrix_ms */
    scn_transport transport;
    double tcp_init_window_kb; /* transport tcp */
    int tcp_slow_start_after_idle;
    double efficiency;
    double collective_overhead_ms;
    /* network.startup_ms, ack_bytes_per_kb and queue_ms; 0: none */
    double startup_ms, ack_bytes_per_kb, queue_ms;
    double tcp_window_mb; /* 0: none */
    coll_algo collective;
    int links;           /* site-to-site links of the collective */
    int dp;              /* the method is DP */
    double dp_bucket_mb; /* DP: 0, one bucket per layer */
    double bucket_mb;    /* DiLoCo, streaming: 0, one bucket per layer
                            (always with the sliced layout) */
    scn_gbit gbit;
    double mtbf_s, mttr_s; /* mtbf 0: no random failures */
    int trace;             /* failures replayed from a trace */
    int64_t steps;
    double step_time_s;
    double wall_s; /* simulated time at the least bandwidth;
                                    NAN when there is none */
} plan_assumptions;

/* A method's least bandwidth over the draws of a fit (Gbit/s). */
typedef struct {
    double low, mid, high; /* percentiles PLAN_P_LOW and PLAN_P_HIGH of the
                              draws (INFINITY: above the range), and the
                              plain answer (least.v_hi; INFINITY when
                              not reached) */
    int below, above;      /* draws below the range (counted as
                              PLAN_MIN_GBPS) and above it (infinite) */
} plan_interval;

/* The sensitivity's changes. */
enum { PLAN_SENS_LATENCY, PLAN_SENS_EFFICIENCY, PLAN_SENS_MTBF, PLAN_NSENS };

typedef struct {
    table_crossing least; /* as plan_method.least */
    int bandwidth_dip;
} plan_sensitive;

#define PLAN_LABEL_MAX 160

typedef struct {
    char name[SCN_NAME_MAX];    /* the variant, or the method for the base */
    char label[PLAN_LABEL_MAX]; /* scn_method_label; where two methods'
                                   labels are equal, " (name)" appended */
    int workers;
    int bandwidth_dip;      /* CU falls somewhere on the bandwidth scan
                                (least.scans: near the least one) */
    int latency_rise;       /* CU rises somewhere on the latency scan */
    table_crossing least;   /* FOUND: the least bandwidth is least.v_hi,
                                CU least.cu_hi; AT_START: <= PLAN_MIN_GBPS
                                (v_hi, cu_hi: that point); NOT_REACHED:
                                > PLAN_MAX_GBPS */
    double latency_gbps;    /* PLAN_LATENCY_MARGIN x the least; NAN when
                                not reached */
    table_crossing latency; /* FOUND: the limit is latency.v_hi ms;
                                AT_START: still enough at the maximum;
                                NOT_REACHED: not even at 0 ms (or no least
                                bandwidth to test) */
    int noptions;           /* by increasing bandwidth */
    plan_option option[PLAN_MAX_BANDWIDTHS + 1];
    int links;               /* WAN links priced: workers, or with
                                "pricing": "link" the site-to-site ones */
    plan_assumptions assume; /* from its config */
    int has_memory;          /* explain */
    mem_worker memory;
    plan_sensitive sens[PLAN_NSENS]; /* sensitivity */
    double mtbf_failures; /* sensitivity: failures expected in the MTBF
                                run, workers x steps x step time / MTBF */
    int64_t train_steps;  /* a training: its steps; else 0 */

    /* A fit or seeds: random, its scenario draws random numbers (failures
     * at faults.mtbf_hours > 0 without a trace, or stragglers); seed, the
     * scenario's.  A fit: the interval.  Seeds: least_p5, the least
     * bandwidth from which the 5th percentile of CU over the seeds
     * reaches the target (as least; without randomness least). */
    int random;
    uint64_t seed;
    plan_interval least_interval;
    table_crossing least_p5;
    plan_power power; /* a grid */
} plan_method;

typedef struct {
    const char *path;            /* scenario file */
    const char *const *variants; /* nvariants 0: all (or the base) */
    int nvariants;
    const char *const *sets; /* --set overrides */
    int nset;
    double target_cu;           /* (0, 1] */
    const plan_cost *cost;      /* NULL: no prices */
    int jobs;                   /* threads; <= 0: pool_cpu_count() */
    int full;                   /* --full: no fast-forward */
    const table_runner *runner; /* NULL: this process's threads; else
                                        every batch (table.h) */
} plan_spec;

/* What `dilosim plan` adds to plan_compute's answers (all 0: nothing). */
typedef struct {
    int explain;        /* assumptions, binding limits,
                                        memory */
    int sensitivity;    /* the answer under PLAN_NSENS changes */
    double mtbf_hours;  /* the sensitivity's; <= 0:
                                        PLAN_MTBF_HOURS */
    double train_hours; /* > 0: price a training of this many
                                        hours of compute */
    double tokens;      /* > 0: of this many tokens (instead
                                        of train_hours) */

    /* How sure: fit, --set-from's file (NULL: none), whose fit block
     * (nfit > 0) asks for the interval and whose nset overrides are
     * plan_spec.sets[0..nset-1]; samples, its draws (1..PLAN_MAX_SAMPLES;
     * <= 0: PLAN_SAMPLES) from the stream of sample_seed; seeds > 0: CU
     * over this many seeds (at most PLAN_MAX_SEEDS). */
    const setfile *fit;
    int samples;
    uint64_t sample_seed;
    int seeds;

    /* has_grid: the energy per month of each option and its emissions at
     * grid_gco2_per_kwh (g CO2 per kWh, >= 0); every method's scenario
     * must give workers.power_w (plan_energy.c) */
    int has_grid;
    double grid_gco2_per_kwh;
} plan_extra;

/* The recommendation's kinds (plan_rec.status). */
typedef enum {
    PLAN_REC_NONE,  /* no method reaches the target at all */
    PLAN_REC_BUY,   /* a listed option (with a cost file) suffices */
    PLAN_REC_SHORT, /* listed options, none sufficient */
    PLAN_REC_LEAST  /* nothing listed: the least sufficient bandwidth */
} plan_rec_status;

/* Why the runner-up lost. */
typedef enum {
    PLAN_LOST_NONE,      /* no runner-up */
    PLAN_LOST_COST,      /* it costs more (its least bandwidth is not more) */
    PLAN_LOST_BANDWIDTH, /* it needs more bandwidth (and costs more) */
    PLAN_LOST_TARGET     /* no listed option of it reaches the target */
} plan_lost;

/* The changes simulated at the recommended option (plan_rec.at). */
enum {
    PLAN_AT_BASE,
    PLAN_AT_LATENCY,
    PLAN_AT_EFFICIENCY,
    PLAN_AT_MTBF,
    PLAN_NAT
};

/* What to buy (plan_recommend; plan.h's header comment, "Recommendation").
 * method, option: the option bought (BUY, LEAST) or the fastest listed
 * one of the method that comes closest (SHORT); -1 with NONE.
 * runner_method, runner_option: the runner-up, -1 when none (runner_option
 * -1 with a method: its method has no sufficient option). */
typedef struct {
    plan_rec_status status;
    int method, option;
    int runner_method, runner_option;
    plan_lost lost;
    int by_training; /* ranked by the whole training's total */
    /* simulated at the option (plan_compute_extra), has_at[i] when run:
     * BASE always, LATENCY (every one-way latency x2) and EFFICIENCY
     * (network.efficiency 0.6) always, MTBF with the sensitivity */
    int has_at[PLAN_NAT];
    plan_run at[PLAN_NAT];
} plan_rec;

typedef struct {
    double target_cu;
    int has_cost;
    plan_cost cost;
    int nmethods;
    plan_method method[SCN_MAX_VARIANTS];
    int best_method, best_option;             /* cheapest overall; -1 without */
    int explain, sensitivity;                 /* as asked */
    double mtbf_hours;                        /* the sensitivity's */
    double train_hours, tokens;               /* as asked (0: no training) */
    int train_best_method, train_best_option; /* cheapest training; -1 */

    /* A fit, as asked (samples 0: no interval): its draws, their seed,
     * the draws outside a key's range drawn again, the fitted keys; and
     * the seeds asked (0: none). */
    int samples;
    uint64_t sample_seed;
    int64_t redraws;
    int nfit;
    char fit_key[SETFILE_MAX_FIT][SETFILE_KEY_MAX];
    int seeds;

    plan_rec rec; /* what to buy (plan_recommend) */

    int has_grid; /* as asked: each option's energy and emissions */
    double grid_gco2_per_kwh;
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

/* plan_compute_progress with the extra answers (NULL: none).  A training
 * (tokens without model.tokens_per_step, more than 1e12 steps) is an
 * input error. */
int plan_compute_extra(const plan_spec *spec, const plan_extra *extra,
                       table_progress_fn progress, void *ctx, plan_result *out,
                       char *err, size_t errlen);

/* The least-bandwidth search of the plan (the header comment) over n
 * curves, fn with ctx[b], run as ex says: into least[b] (AT_START: v_hi,
 * cu_hi the first scan point) and, unless NULL, dip[b] (CU falls
 * somewhere on the scan).  Returns 0 or the first failing evaluation's
 * code and message. */
int plan_least_search(int n, table_cu_fn fn, void *const *ctx, double target,
                      const table_exec *ex, table_crossing *least, int *dip,
                      char *err, size_t errlen);

/* The p-quantile (p in [0, 1]) of sorted[0..n-1] (increasing, n >= 1; may
 * hold INFINITY), Hyndman and Fan's type 7: with h = (n - 1) p, sorted[j]
 * + (h - j) (sorted[j + 1] - sorted[j]) for j = floor(h) (sorted[j] when
 * h is j). */
double plan_percentile(const double *sorted, int n, double p);

/* plan_interval.c's part of plan_compute_extra, after the options: the
 * interval of a fit and the spreads of the seeds that x asks for (none:
 * nothing), for the n methods whose curves bw[] are (plan.c's).  Returns
 * 0 or a MSG_E* code with a one-line message. */
int plan__uncertainty(const plan_spec *spec, const plan_extra *x,
                      const table_scenario *bw, int n, const table_exec *ex,
                      plan_result *out, char *err, size_t errlen);

/* The recommendation of a plan whose options are priced and marked
 * (plan.h's header comment, "Recommendation"): into r->rec, its runs
 * left as they are.  Pure: no simulation. */
void plan_recommend(plan_result *r);

/* The summary's sentences (plan_summary_text), each "" when it has
 * nothing to say: what to buy (or that nothing listed is enough), the
 * runner-up and why it lost, the margin to the target at the option with
 * every latency x2, with efficiency 0.6 (and with failures under the
 * sensitivity), the links' load there, the whole training there. */
typedef struct {
    char buy[768], runner[512], margin[384], headroom[256], training[256];
} plan_summary;

/* The summary of a recommended plan (plan_recommend and its runs). */
void plan_summary_text(const plan_result *r, plan_summary *s);

/* What a priced link is, as "per ..." says it: "worker link", or
 * "site-to-site link" with the cost file's "pricing": "link". */
const char *plan_link_word(const plan_result *r);

/* An amount of money as people read it: "USD 12,345" (rounded to the
 * unit; cur the 3-letter currency), "-" when not finite. */
void plan_money_text(double x, const char *cur, char *buf, size_t n);

/* A number rounded to the unit with thousands separators: "12,345". */
void plan_thousands(double x, char *buf, size_t n);

/* plan.c's part of the recommendation: the runs of method m's scenario
 * bw at gbps with each change PLAN_AT_* that has_at[] asks for (mtbf_s:
 * the failures'), into at[].  Returns 0 or a MSG_E* code. */
int plan__at_option(const table_scenario *bw, double gbps, double mtbf_s,
                    const int has_at[PLAN_NAT], const table_exec *ex,
                    plan_run at[PLAN_NAT], char *err, size_t errlen);

/* plan_energy.c.  A grid (out->has_grid): method pm's power from its
 * config c into pm->power; MSG_EINPUT with "path: name: ..." when c has
 * no workers.power_w.  No grid: 0, nothing done. */
int plan__power_of(const plan_result *out, const char *path,
                   const scn_config *c, plan_method *pm, char *err,
                   size_t errlen);

/* Each option's energy per month of PLAN_HOURS_PER_MONTH hours, kWh, with
 * A the method's accelerators and CU the option's:
 *   CU x A x busy_w x 730 / 1000 + (1 - CU) x A x idle_w x 730 / 1000
 *   + the bytes sent per month (run.bytes / run.wall_s x 3600 x 730)
 *     / 1e9 x joules_per_gb / 3.6e6 (with network.joules_per_gb and the
 *     option's run)
 * and its emissions, kWh x grid_gco2_per_kwh / 1000 kg CO2.  CU is the
 * mean over the workers: exact when every worker has the same
 * accelerators.  Nothing without a grid. */
void plan__energy(plan_result *out);

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

/* A least bandwidth (plan_method.least, plan_sensitive.least) as
 * plan_method_text prints it: "%.4g", "> 100000" or "<= 0.01". */
void plan_least_text(const table_crossing *least, char out[PLAN_CELL_MAX]);

/* An interval's low and high ends as plan_least_text prints a least
 * bandwidth: "%.4g", "> 100000" when infinite, "<= 0.01" at
 * PLAN_MIN_GBPS. */
void plan_interval_text(const plan_interval *x, char low[PLAN_CELL_MAX],
                        char high[PLAN_CELL_MAX]);

/* A priced option's marks: "least", "cheapest", "cheapest overall",
 * joined by ", " ("" when none applies). */
void plan_option_note(const plan_option *o, char *buf, size_t n);

#endif
