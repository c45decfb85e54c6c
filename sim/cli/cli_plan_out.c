/*
 * cli_plan_out.c -- `dilosim plan --json`, and how sure the plan is: the
 * options --samples, --seed and --seeds (also `dilosim report`'s), the
 * text that says what the least bandwidth's interval means, and the
 * table of CU over the seeds.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jw.h"
#include "sim/base/msg.h"
#include "sim/cli/cli_plan.h"
#include "sim/engine/memory.h"
#include "sim/base/version.h"

/* ---- JSON -------------------------------------------------------------- */

static const char *range_name(table_status s) {
    return s == TABLE_FOUND      ? "found"
           : s == TABLE_AT_START ? "below_range"
                                 : "above_range";
}

/* The plan's objects are inline, wrapped at fixed columns (jw_wrap):
 * a method's members at 5, its assumptions' at 6, a candidate's at 9,
 * its training's at 10; the arrays of methods and of options one
 * element a line. */

/* An option's CU over the seeds (nothing without --seeds), on a line of
 * its own. */
static void json_cu_seeds(jw *w, const plan_result *r, const plan_option *o) {
    if (!r->seeds) return;
    jw_wrap(w, 9);
    jw_object(w, "cu_seeds");
    jw_num(w, "p5", o->cu_p5);
    jw_num(w, "p50", o->cu_p50);
    jw_num(w, "p95", o->cu_p95);
    jw_int(w, "seeds", r->seeds);
    jw_end(w);
}

/* An option's energy per month and emissions (nothing without a grid),
 * wrapped at column `wrap` (0: one member a line, as the recommendation's). */
static void json_energy(jw *w, const plan_result *r, const plan_option *o,
                        int wrap) {
    if (!r->has_grid) return;
    if (wrap) jw_wrap(w, wrap);
    jw_num(w, "energy_kwh_month", o->energy_kwh_month);
    jw_num(w, "emissions_kg_co2_month", o->emissions_kg_co2_month);
}

static void json_option(jw *w, const plan_result *r, const plan_option *o) {
    int egress = r->cost.has_egress;
    jw_object(w, NULL);
    jw_num(w, "gbps", o->gbps);
    jw_num(w, "cu", o->cu);
    jw_num(w, "wan_usd_month", o->wan_usd);
    jw_num(w, "idle_usd_month", o->idle_usd);
    if (egress) jw_num(w, "egress_usd_month", o->egress_usd);
    jw_num(w, "total_usd_month", o->total_usd);
    jw_wrap(w, 9);
    jw_num(w, "busy_usd_month", o->busy_usd);
    jw_num(w, "bill_usd_month", o->bill_usd);
    jw_num(w, "work_usd_month", o->work_usd);
    jw_bool(w, "listed", o->listed);
    jw_bool(w, "least", o->is_least);
    jw_bool(w, "cheapest_for_method", o->cheapest_method);
    jw_bool(w, "cheapest_overall", o->cheapest_overall);
    json_energy(w, r, o, 9);
    json_cu_seeds(w, r, o);
    jw_end(w);
}

static void json_assumptions(jw *w, const plan_method *m) {
    const plan_assumptions *a = &m->assume;
    jw_wrap(w, 5);
    jw_object(w, "assumptions");
    jw_num(w, "latency_min_ms", a->latency_min_ms);
    jw_num(w, "latency_max_ms", a->latency_max_ms);
    jw_num(w, "rtt_min_ms", 2 * a->latency_min_ms);
    jw_num(w, "rtt_max_ms", 2 * a->latency_max_ms);
    jw_bool(w, "latency_matrix", a->latency_matrix);
    jw_str(w, "transport", a->transport == SCN_TRANSPORT_TCP ? "tcp" : "ideal");
    jw_num(w, "tcp_init_window_kb", a->tcp_init_window_kb);
    jw_bool(w, "tcp_slow_start_after_idle", a->tcp_slow_start_after_idle);
    jw_wrap(w, 6);
    jw_num(w, "efficiency", a->efficiency);
    jw_num(w, "collective_overhead_ms", a->collective_overhead_ms);
    /* a measured network's costs, only when set (0: as before they were) */
    if (a->startup_ms > 0) jw_num(w, "startup_ms", a->startup_ms);
    if (a->ack_bytes_per_kb > 0)
        jw_num(w, "ack_bytes_per_kb", a->ack_bytes_per_kb);
    if (a->queue_ms > 0) jw_num(w, "queue_ms", a->queue_ms);
    jw_num(w, "tcp_window_mb", a->tcp_window_mb);
    jw_str(w, "collective", coll_algo_name(a->collective));
    jw_int(w, "site_links", a->links);
    jw_num(w, "dp_bucket_mb", a->dp ? a->dp_bucket_mb : NAN);
    jw_num(w, "bucket_mb", a->dp ? NAN : a->bucket_mb);
    jw_wrap(w, 6);
    jw_str(w, "gbit", a->gbit == SCN_GBIT_BINARY ? "binary" : "si");
    jw_num(w, "mtbf_s", a->mtbf_s);
    jw_num(w, "mttr_s", a->mttr_s);
    jw_bool(w, "fault_trace", a->trace);
    jw_int(w, "steps", (long long)a->steps);
    jw_num(w, "step_time_s", a->step_time_s);
    jw_num(w, "wall_time_s_at_least", a->wall_s);
    jw_end(w);
}

static void json_training(jw *w, const plan_training *t, int has_cost) {
    jw_wrap(w, 9);
    jw_object(w, "training");
    jw_int(w, "steps", (long long)t->run.steps);
    jw_bool(w, "finished", t->run.finished);
    jw_num(w, "cu", t->run.cu);
    jw_num(w, "wall_h", t->wall_h);
    jw_num(w, "idle_h", t->idle_h);
    jw_num(w, "wan_months", t->wan_months);
    jw_num(w, "bytes_sent_total", t->run.bytes);
    jw_int(w, "failures", (long long)t->run.failures);
    if (has_cost) {
        jw_wrap(w, 10);
        jw_num(w, "compute_usd", t->compute_usd);
        jw_num(w, "idle_usd", t->idle_usd);
        jw_num(w, "wan_usd", t->wan_usd);
        jw_num(w, "egress_usd", t->egress_usd);
        jw_num(w, "total_usd", t->total_usd);
        jw_bool(w, "cheapest_for_method", t->cheapest_method);
        jw_bool(w, "cheapest_overall", t->cheapest_overall);
    }
    jw_end(w);
}

static void json_candidate(jw *w, const plan_result *r, const plan_option *o) {
    static const char *const gain_key[PLAN_NTRIES] = {"gain_bandwidth_x2",
                                                      "gain_latency_half",
                                                      "gain_window_x2"};
    jw_object(w, NULL);
    jw_num(w, "gbps", o->gbps);
    jw_num(w, "cu", o->cu);
    jw_bool(w, "least", o->is_least);
    if (o->has_run) {
        jw_num(w, "wall_time_s", o->run.wall_s);
        jw_num(w, "bytes_sent_total", o->run.bytes);
    }
    if (r->explain) {
        jw_wrap(w, 9);
        jw_str(w, "limit", plan_limit_name(o->limit));
        for (int t = 0; t < PLAN_NTRIES; t++)
            jw_num(w, gain_key[t], o->gain[t]);
        jw_num(w, "window_needed_mb", o->window_mb);
        if (o->window_covers < 0) jw_null(w, "window_covers");
        else jw_bool(w, "window_covers", o->window_covers);
    }
    if (r->train_hours > 0 || r->tokens > 0)
        json_training(w, &o->train, r->has_cost);
    json_energy(w, r, o, 9);
    json_cu_seeds(w, r, o);
    jw_end(w);
}

static void json_sensitivity(jw *w, const plan_method *m) {
    static const char *const key[PLAN_NSENS] = {"latency_x2", "efficiency",
                                                "mtbf"};
    jw_wrap(w, 5);
    jw_object(w, "sensitivity");
    for (int k = 0; k < PLAN_NSENS; k++) {
        const table_crossing *x = &m->sens[k].least;
        int reached = x->status != TABLE_NOT_REACHED;
        jw_object(w, key[k]);
        jw_num(w, "least_gbps", reached ? x->v_hi : NAN);
        jw_num(w, "cu_at_least", reached ? x->cu_hi : NAN);
        jw_str(w, "least_status", range_name(x->status));
        jw_bool(w, "cu_falls_with_bandwidth", m->sens[k].bandwidth_dip);
        jw_end(w);
    }
    jw_num(w, "mtbf_failures_expected", m->mtbf_failures);
    jw_end(w);
}

/* The method's options, one a line: their prices ("options"), or with
 * candidates their limits and trainings ("candidates"). */
static void json_options(jw *w, const plan_result *r, const plan_method *m,
                         int candidates) {
    jw_wrap(w, 5);
    jw_lines(w, candidates ? "candidates" : "options", '[', 8, 5);
    for (int k = 0; k < m->noptions; k++) {
        if (candidates) json_candidate(w, r, &m->option[k]);
        else json_option(w, r, &m->option[k]);
    }
    jw_end(w);
}

/* The least bandwidth and the latency limit of a method. */
static void json_answer(jw *w, const plan_method *m) {
    int reached = m->least.status != TABLE_NOT_REACHED;
    const char *lat_status =
        !reached || m->latency.status == TABLE_NOT_REACHED ? "none"
        : m->latency.status == TABLE_AT_START              ? "above_range"
                                                           : "found";
    jw_wrap(w, 5);
    jw_num(w, "least_gbps", reached ? m->least.v_hi : NAN);
    jw_num(w, "cu_at_least", reached ? m->least.cu_hi : NAN);
    jw_str(w, "least_status", range_name(m->least.status));
    jw_wrap(w, 5);
    jw_num(w, "latency_at_gbps", m->latency_gbps);
    jw_num(w, "latency_limit_ms", reached ? m->latency.v_hi : NAN);
    jw_str(w, "latency_status", lat_status);
    jw_wrap(w, 5);
    jw_bool(w, "cu_falls_with_bandwidth", m->bandwidth_dip);
    jw_bool(w, "cu_rises_with_latency", m->latency_rise);
}

/* How sure the least bandwidth is: its interval over the fit's draws,
 * and over the seeds the least bandwidth of CU's 5th percentile. */
static void json_sure(jw *w, const plan_result *r, const plan_method *m) {
    if (r->samples) {
        const plan_interval *x = &m->least_interval;
        jw_wrap(w, 5);
        jw_object(w, "least_gbps_interval");
        jw_num(w, "low", x->low);
        jw_num(w, "mid", x->mid);
        jw_num(w, "high", x->high);
        jw_int(w, "samples", r->samples);
        jw_int(w, "redraws", (long long)r->redraws);
        jw_u64(w, "seed", r->sample_seed);
        jw_int(w, "below_range", x->below);
        jw_int(w, "above_range", x->above);
        jw_end(w);
    }
    if (!r->seeds) return;
    const table_crossing *p5 = &m->least_p5;
    int reached = p5->status != TABLE_NOT_REACHED;
    jw_wrap(w, 5);
    jw_bool(w, "seeds_random", m->random);
    jw_object(w, "least_gbps_p5");
    jw_num(w, "gbps", reached ? p5->v_hi : NAN);
    jw_num(w, "cu_p5", reached ? p5->cu_hi : NAN);
    jw_str(w, "status", range_name(p5->status));
    jw_int(w, "seeds", r->seeds);
    jw_end(w);
}

static void json_method(jw *w, const plan_result *r, const plan_method *m) {
    jw_object(w, NULL);
    jw_str(w, "name", m->name);
    jw_str(w, "label", m->label);
    jw_int(w, "workers", m->workers);
    if (r->has_grid) {
        jw_num(w, "accelerators", m->power.accelerators);
        jw_num(w, "power_busy_w", m->power.busy_w);
        jw_num(w, "power_idle_w", m->power.idle_w);
    }
    json_answer(w, m);
    json_sure(w, r, m);
    if (r->has_cost) json_options(w, r, m, 0);
    if (r->explain) {
        json_assumptions(w, m);
        jw_wrap(w, 5);
        if (m->has_memory) mem_write_json(w, "memory_per_worker", &m->memory);
        else jw_null(w, "memory_per_worker");
    }
    if (r->explain || r->train_hours > 0 || r->tokens > 0)
        json_options(w, r, m, 1);
    if (r->sensitivity) json_sensitivity(w, m);
    jw_end(w);
}

static void json_cheapest(jw *w, const char *key, const plan_result *r, int bm,
                          int bo, int training) {
    if (bm < 0) {
        jw_null(w, key);
        return;
    }
    const plan_method *m = &r->method[bm];
    const plan_option *o = &m->option[bo];
    jw_object(w, key);
    jw_str(w, "name", m->name);
    jw_num(w, "gbps", o->gbps);
    if (training) jw_num(w, "total_usd", o->train.total_usd);
    else jw_num(w, "total_usd_month", o->total_usd);
    jw_end(w);
}

static void json_cost(jw *w, const plan_result *r) {
    const plan_cost *c = &r->cost;
    jw_object(w, "cost");
    jw_num(w, "wan_usd_per_gbps_month", c->wan_usd_per_gbps_month);
    jw_num(w, "accelerator_usd_per_hour", c->accelerator_usd_per_hour);
    jw_num(w, "accelerators", c->accelerators);
    jw_num(w, "hours_per_month", PLAN_HOURS_PER_MONTH);
    jw_str(w, "pricing", c->pricing == PLAN_PRICING_LINK ? "link" : "port");
    if (c->has_egress) jw_num(w, "egress_usd_per_gb", c->egress_usd_per_gb);
    jw_str(w, "currency", c->currency);
    if (c->has_links) {
        jw_array(w, "links");
        for (int i = 0; i < c->nbandwidths; i++) {
            jw_object(w, NULL);
            jw_num(w, "gbps", c->bandwidths_gbps[i]);
            jw_num(w, "usd_month", c->link_usd_month[i]);
            jw_end(w);
        }
        jw_end(w);
    }
    jw_end(w);
    json_cheapest(w, "cheapest", r, r->best_method, r->best_option, 0);
    if (r->train_hours > 0 || r->tokens > 0)
        json_cheapest(w, "cheapest_training", r, r->train_best_method,
                      r->train_best_option, 1);
}

static const char *rec_status_name(plan_rec_status s) {
    static const char *const names[] = {"none", "buy", "short", "least"};
    return names[s];
}

static const char *lost_name(plan_lost l) {
    static const char *const names[] = {"none", "cost", "bandwidth", "target"};
    return names[l];
}

/* The runs at the recommended option: CU under each change, its margin
 * to the target, the links' load. */
static void json_at_option(jw *w, const plan_result *r) {
    static const char *const key[PLAN_NAT] = {"base", "latency_x2",
                                              "efficiency_0.6", "mtbf"};
    const plan_rec *x = &r->rec;
    jw_object(w, "at_option");
    for (int k = 0; k < PLAN_NAT; k++) {
        if (!x->has_at[k]) continue;
        jw_object(w, key[k]);
        jw_num(w, "cu", x->at[k].cu);
        jw_num(w, "margin", x->at[k].cu - r->target_cu);
        if (k == PLAN_AT_BASE) {
            jw_num(w, "avg_link_gbps", x->at[k].avg_link_gbps);
            jw_num(w, "peak_link_gbps", x->at[k].peak_link_gbps);
        }
        jw_end(w);
    }
    jw_end(w);
}

/* What to buy (plan_rec), with the summary's sentences. */
static void json_recommendation(jw *w, const plan_result *r) {
    const plan_rec *x = &r->rec;
    jw_lines(w, "recommendation", '{', 4, 2);
    jw_str(w, "status", rec_status_name(x->status));
    jw_bool(w, "by_training", x->by_training);
    if (x->method >= 0 && x->option >= 0) {
        const plan_method *m = &r->method[x->method];
        const plan_option *o = &m->option[x->option];
        jw_str(w, "method", m->name);
        jw_str(w, "label", m->label);
        jw_num(w, "gbps", o->gbps);
        jw_num(w, "cu", o->cu);
        jw_num(w, "least_sufficient_gbps",
               m->least.status != TABLE_NOT_REACHED ? m->least.v_hi : NAN);
        if (r->has_cost) {
            jw_num(w, "per_link_usd_month", o->wan_usd / m->links);
            jw_num(w, "bill_usd_month", o->bill_usd);
            jw_num(w, "work_usd_month", o->work_usd);
        }
        if (r->train_hours > 0 || r->tokens > 0)
            jw_num(w, "training_total_usd", o->train.total_usd);
        json_energy(w, r, o, 0);
    }
    if (x->runner_method >= 0) {
        const plan_method *m = &r->method[x->runner_method];
        jw_object(w, "runner_up");
        jw_str(w, "method", m->name);
        jw_str(w, "label", m->label);
        jw_num(w, "gbps",
               x->runner_option >= 0 ? m->option[x->runner_option].gbps : NAN);
        jw_str(w, "lost_on", lost_name(x->lost));
        jw_end(w);
    }
    json_at_option(w, r);
    plan_summary s;
    plan_summary_text(r, &s);
    jw_str(w, "summary", s.buy);
    jw_end(w);
}

/* The fit the interval draws from, and the seeds asked. */
static void json_sure_head(jw *w, const plan_result *r, const char *fit_path) {
    if (r->samples) {
        jw_object(w, "fit");
        jw_str(w, "file", fit_path ? fit_path : "");
        jw_array(w, "keys");
        for (int k = 0; k < r->nfit; k++) jw_str(w, NULL, r->fit_key[k]);
        jw_end(w);
        jw_int(w, "samples", r->samples);
        jw_u64(w, "seed", r->sample_seed);
        jw_int(w, "redraws", (long long)r->redraws);
        jw_num(w, "p_low", PLAN_P_LOW);
        jw_num(w, "p_high", PLAN_P_HIGH);
        jw_end(w);
    }
    if (r->seeds) jw_int(w, "seeds", r->seeds);
}

void cli_plan_write_json(FILE *f, const char *scenario, const plan_result *r,
                         const char *fit_path) {
    jw w;
    jw_init(&w, f);
    jw_lines(&w, NULL, '{', 2, 0);
    jw_str(&w, "version", DILOSIM_VERSION);
    jw_str(&w, "revision", version_revision());
    jw_str(&w, "scenario", scenario);
    jw_num(&w, "target_cu", r->target_cu);
    jw_num(&w, "latency_margin", PLAN_LATENCY_MARGIN);
    if (r->explain) jw_num(&w, "limit_min_gain", PLAN_LIMIT_MIN_GAIN);
    if (r->sensitivity) {
        jw_object(&w, "sensitivity");
        jw_int(&w, "latency_factor", 2);
        jw_num(&w, "efficiency", PLAN_LOW_EFFICIENCY);
        jw_num(&w, "mtbf_hours", r->mtbf_hours);
        jw_end(&w);
    }
    if (r->tokens > 0) jw_num(&w, "training_tokens", r->tokens);
    else if (r->train_hours > 0) jw_num(&w, "training_hours", r->train_hours);
    if (r->has_cost) json_cost(&w, r);
    if (r->has_grid) jw_num(&w, "grid_gco2_per_kwh", r->grid_gco2_per_kwh);
    json_sure_head(&w, r, fit_path);
    json_recommendation(&w, r);
    jw_lines(&w, "methods", '[', 4, 2);
    for (int i = 0; i < r->nmethods; i++) json_method(&w, r, &r->method[i]);
    jw_end(&w);
    jw_end(&w);
}

/* ---- how sure: the options ---------------------------------------------- */

/* --seed S, a decimal integer in 0..2^64-1, into *out (absent: left). */
static int seed_option(const cli_options *o, const char *cmd, uint64_t *out) {
    const char *v = cli_value(o, "--seed");
    if (!v) return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (*v < '0' || *v > '9' || *end || errno)
        return cli_usage_error(cmd,
                               "--seed must be an integer in 0..%llu (got "
                               "'%s')",
                               ULLONG_MAX, v);
    *out = x;
    return 0;
}

int cli_plan_sure(const cli_options *o, const char *cmd, plan_extra *x) {
    int rc;
    x->fit = o->set_from;
    x->samples = PLAN_SAMPLES;
    x->sample_seed = 1;
    if ((rc = cli_count(o, cmd, "--samples", PLAN_MAX_SAMPLES, &x->samples)) ||
        (rc = seed_option(o, cmd, &x->sample_seed)) ||
        (rc = cli_count(o, cmd, "--seeds", PLAN_MAX_SEEDS, &x->seeds)))
        return rc;
    int fit = o->set_from && o->set_from->nfit > 0;
    if (!fit && (cli_value(o, "--samples") || cli_value(o, "--seed")))
        return cli_usage_error(cmd,
                               "--samples and --seed are for the draws of the "
                               "fitted keys of --set-from FIT.json (%s)",
                               o->set_from ? "its file has no fit block"
                                           : "give it");
    return 0;
}

/* ---- how sure: the text ------------------------------------------------- */

void cli_plan_text_interval(FILE *f, const plan_result *r,
                            const char *fit_path) {
    if (!r->samples) return;
    int random = 0;
    for (int i = 0; i < r->nmethods; i++) random |= r->method[i].random;
    fprintf(f,
            "[5%%, 95%%]: the 5th and 95th percentiles of the least Gbit/s "
            "over %d draws of\nthe fitted keys from their normal (the fit's "
            "values and covariance), each draw\na whole search (seed %llu; "
            "%lld draws outside a key's range drawn again); the\nkeys, "
            "fitted in %s:\n ",
            r->samples, (unsigned long long)r->sample_seed,
            (long long)r->redraws, fit_path ? fit_path : "the fit");
    for (int k = 0; k < r->nfit; k++)
        fprintf(f, " %s%s", r->fit_key[k], k + 1 < r->nfit ? "," : "\n");
    if (random)
        fputs("With random failures draw k runs with the scenario's seed + "
              "k.\n",
              f);
    fputs("The interval is the fit's statistical error under the model, "
          "not the model's\nown error.\n",
          f);
    for (int i = 0; i < r->nmethods; i++) {
        const plan_interval *x = &r->method[i].least_interval;
        if (x->above)
            fprintf(f,
                    "note: %s: %d of %d draws do not reach the target "
                    "below %g Gbit/s.\n",
                    r->method[i].name, x->above, r->samples, PLAN_MAX_GBPS);
        if (x->below)
            fprintf(f,
                    "note: %s: %d of %d draws reach the target at %g Gbit/s "
                    "already.\n",
                    r->method[i].name, x->below, r->samples, PLAN_MIN_GBPS);
    }
}

/* The seeds' rows of method m: each option's CU and its percentiles. */
static void seeds_rows(FILE *f, const plan_method *m, int w) {
    for (int k = 0; k < m->noptions; k++) {
        const plan_option *o = &m->option[k];
        const char *note = !m->random    ? "  no randomness"
                           : o->is_least ? "  least"
                                         : "";
        fprintf(f, "%-*s %10.4g %8.4f %8.4f %8.4f %8.4f%s\n", w, m->name,
                o->gbps, o->cu, o->cu_p5, o->cu_p50, o->cu_p95, note);
    }
}

void cli_plan_text_seeds(FILE *f, const plan_result *r, int w) {
    if (!r->seeds) return;
    int random = 0, trace = 0;
    for (int i = 0; i < r->nmethods; i++) {
        random |= r->method[i].random;
        trace |= r->method[i].assume.trace;
    }
    if (!random) {
        fprintf(f,
                "\nnote: --seeds %d: no method draws random failures or "
                "stragglers%s: every\nseed gives the same CU, and --seeds "
                "changes nothing.\n",
                r->seeds, trace ? " (a fault trace is fixed)" : "");
        return;
    }
    fprintf(f,
            "\nCU over %d seeds (the scenario's seed + k, k = 0..%d): CU at "
            "its own seed, and\nthe 5th, 50th and 95th percentiles over the "
            "seeds\n",
            r->seeds, r->seeds - 1);
    fprintf(f, "%-*s %10s %8s %8s %8s %8s\n", w, "method", "Gbit/s", "CU", "P5",
            "P50", "P95");
    for (int i = 0; i < r->nmethods; i++) seeds_rows(f, &r->method[i], w);
    fprintf(f,
            "\nthe least Gbit/s from which the 5th percentile of CU over the "
            "seeds is >= %g\n(the target in 95%% of them)\n",
            r->target_cu);
    fprintf(f, "%-*s %14s %8s\n", w, "method", "least Gbit/s", "P5 CU");
    for (int i = 0; i < r->nmethods; i++) {
        const table_crossing *x = &r->method[i].least_p5;
        char least[PLAN_CELL_MAX], cu[PLAN_CELL_MAX] = "-";
        plan_least_text(x, least);
        if (x->status != TABLE_NOT_REACHED)
            snprintf(cu, sizeof cu, "%.4f", x->cu_hi);
        fprintf(f, "%-*s %14s %8s%s\n", w, r->method[i].name, least, cu,
                r->method[i].random ? "" : "  no randomness: the least");
    }
}
