/*
 * scenario_check.c -- pass 4 of the loader, continued: what spans several
 * keys (FLOP-derived step time, split, the schedule through
 * sched_normalize, the network's matrix and ring order, the run's length
 * in int64 nanoseconds, the fault trace, parsed here so that a bad trace
 * is an input error with its line), each conflict reported at the key
 * most responsible; and the config's derived values that the checks and
 * the engine share.
 */
#include "sim/config/scenario_int.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/config/faults_trace.h"
#include "sim/config/member_trace.h"

int scn_late_continues(const scn_config *c) {
    return c->late == SCN_LATE_CONTINUE && c->sched.method != SCHED_DP;
}

double scn_gbit_bits(scn_gbit g) {
    return g == SCN_GBIT_BINARY ? 1073741824.0 : 1e9;
}

const char *scn_gbit_note(int64_t nbinary, int64_t npoints) {
    if (nbinary <= 0) return "";
    return nbinary >= npoints
               ? "; Gbit = 2^30 bits (network.gbit binary)"
               : "; Gbit = 2^30 bits where network.gbit is binary, else 1e9 "
                 "bits";
}

double scn_latency_ms(const scn_config *c, int i, int j) {
    if (c->has_latency_matrix) return c->latency_matrix_ms[i * c->workers + j];
    return (c->latency_ms[i] + c->latency_ms[j]) / 2;
}

double scn_step_time_s(const scn_config *c) {
    if (c->step_time_s > 0) return c->step_time_s;
    return 6 * c->params * c->tokens_per_step /
           (c->chips * c->peak_tflops * 1e12 * c->mfu);
}

double scn_accelerators(const scn_config *c, int i) {
    return c->site_replicas[i] * (c->chips > 0 ? c->chips : 1);
}

/* step_time_s, or all four of tokens_per_step, chips, peak_tflops, mfu;
 * split sums to 1. */
static int check_model(ctx *c, const cJSON *root, scn_config *cfg) {
    static const char *const flops[] = {"tokens_per_step", "chips",
                                        "peak_tflops", "mfu"};
    static const char *const both = "expected either step_time_s, or "
                                    "tokens_per_step, chips, peak_tflops "
                                    "and mfu";
    const cJSON *m = get(root, "model"), *st = get(m, "step_time_s");
    const cJSON *first = NULL;
    const char *missing = NULL;
    char p[PATH_LEN], b[32];
    for (int k = 0; k < 4; k++) {
        const cJSON *v = get(m, flops[k]);
        if (v && !first) first = v;
        if (!v && !missing) missing = flops[k];
    }
    if (first && st) {
        if (is_later(c, st, first))
            return fail(c, st, 0, "model.step_time_s",
                        "cannot be given "
                        "together with %s (%s)",
                        first->string, both);
        join_key(p, "model", first->string);
        return fail(c, first, 0, p,
                    "cannot be given together with "
                    "step_time_s (%s)",
                    both);
    }
    if (first && missing) {
        join_key(p, "model", missing);
        return fail(c, m, 0, p,
                    "missing: tokens_per_step, chips, "
                    "peak_tflops and mfu go together (%s)",
                    both);
    }
    if (first) cfg->step_time_s = 0;

    const cJSON *sp = get(m, "split");
    double sum = cfg->split[0] + cfg->split[1] + cfg->split[2];
    if (sp && fabs(sum - 1) > 1e-9)
        return fail(c, sp, 0, "model.split",
                    "shares sum to %s (expected "
                    "forward + backward_activations + backward_parameters "
                    "= 1)",
                    msg_number(sum, b));
    return 0;
}

/* Sparta: its defaults where the keys are absent (tau SCN_SPARTA_TAU,
 * alpha 0), one tau for every worker, a dense codec, no outer state;
 * method.subset_fraction with sparta only.  H, fragments, layout, order,
 * rule and the outer optimizer do not apply: sched_normalize sets the
 * first ones, and the trainer takes no outer step. */
static int check_sparta(ctx *c, const cJSON *root, scn_config *cfg) {
    const cJSON *m = get(root, "method"), *sf = get(m, "subset_fraction");
    const cJSON *tau = get(m, "tau"), *cd = get(m, "codec");
    const cJSON *off = get(m, "offload_outer");
    if (cfg->sched.method != SCHED_SPARTA)
        return sf ? fail(c, sf, 0, "method.subset_fraction",
                         "applies to method sparta only (got %s)",
                         sched_method_name(cfg->sched.method))
                  : 0;
    for (int i = 0; !tau && i < SCN_MAX_WORKERS; i++)
        cfg->tau_w[i] = SCN_SPARTA_TAU;
    if (!get(m, "alpha")) cfg->sched.alpha = 0;
    for (int i = 1; i < cfg->workers; i++)
        if (cfg->tau_w[i] != cfg->tau_w[0])
            return fail(c, tau, 0, "method.tau",
                        "one tau for every worker with method sparta (got "
                        "%d and %d)",
                        (int)cfg->tau_w[0], (int)cfg->tau_w[i]);
    if (cfg->codec.kind == CODEC_TOPK || cfg->codec.kind == CODEC_POWERSGD ||
        cfg->codec.kind == CODEC_DEMO)
        return fail(c, cd ? cd : m, 0, "method.codec",
                    "%s chooses what it sends, sparta draws its subset "
                    "(expected a dense codec: fp32, bf16, fp16, fp8_e4m3, "
                    "e3m0, e2m1, uint8, int8)",
                    codec_name(cfg->codec.kind));
    if (cfg->offload_outer)
        return fail(c, off, 0, "method.offload_outer",
                    "sparta keeps no outer parameters (expected false with "
                    "method sparta)");
    return 0;
}

/* The schedule, through sched_normalize; its message is reported at the
 * key most responsible. */
static int check_method(ctx *c, const cJSON *root, scn_config *cfg) {
    if (check_sparta(c, root, cfg)) return -1;
    sched_spec s = cfg->sched;
    char msg[256], p[PATH_LEN];
    s.layers = cfg->layers;
    int lo = INT_MAX, hi = 0; /* per-worker taus: the largest is checked */
    for (int i = 0; i < cfg->workers; i++) {
        int t = (int)cfg->tau_w[i];
        if (t < lo) lo = t;
        if (t > hi) hi = t;
    }
    s.tau = hi;
    /* method.k_fraction, rank and demo_* are the payload codec's, DP's
     * dp_codec too */
    const codec_spec *cs = &cfg->codec;
    cfg->dp_codec.k_fraction = cs->k_fraction;
    cfg->dp_codec.rank = cs->rank;
    cfg->dp_codec.demo_chunk = cs->demo_chunk;
    cfg->dp_codec.demo_topk = cs->demo_topk;
    cfg->dp_codec.demo_beta = cs->demo_beta;
    if (cs->demo_topk > cs->demo_chunk) {
        const cJSON *m = get(root, "method"), *v = get(m, "demo_topk");
        if (!v) v = get(m, "demo_chunk");
        return fail(c, v ? v : m, 0, "method.demo_topk",
                    "%llu coefficients of a chunk of %llu (expected at most "
                    "method.demo_chunk)",
                    (unsigned long long)cs->demo_topk,
                    (unsigned long long)cs->demo_chunk);
    }
    if (sched_normalize(&s, msg, sizeof msg) == 0) {
        int keep = s.tau > 0; /* streaming: the taus stand */
        cfg->sched = s;
        cfg->sched.tau = keep ? lo : 0;
        for (int i = 0; i < SCN_MAX_WORKERS; i++)
            cfg->tau_extra[i] =
                keep && i < cfg->workers ? (int)cfg->tau_w[i] - lo : 0;
        return 0;
    }
    /* The same order of checks as sched_normalize, on its output. */
    int narrow = sched_narrow(&s), cap = sched_tau_cap(&s);
    const char *key = s.layout == SCHED_SLICED && s.overlap ? "overlap"
                      : s.H < 1                             ? "H"
                      : narrow && s.P > s.H                 ? "fragments"
                      : s.P < 1 || s.P > s.layers           ? "fragments"
                      : s.overlap != SCHED_INNER && s.tau   ? "tau"
                      : s.tau < 0 || s.tau >= cap           ? "tau"
                                                            : "alpha";
    if (s.method == SCHED_SPARTA) /* sparta_normalize's two */
        key = s.overlap != SCHED_INNER ? "overlap" : "tau";
    const cJSON *m = get(root, "method"), *v = get(m, key);
    join_key(p, "method", key);
    return fail(c, v ? v : m ? m : root, 0, p, "%s", msg);
}

/* The network keys that span several values: the ring order is a
 * permutation, the latency matrix symmetric with a zero diagonal and not
 * given together with latency_ms. */
static int check_network(ctx *c, const cJSON *root, scn_config *cfg) {
    const cJSON *n = get(root, "network"), *ro = get(n, "ring_order");
    const cJSON *lm = get(n, "latency_matrix_ms"), *lv = get(n, "latency_ms");
    int M = cfg->workers;
    char a[MSG_NUM_MAX], b[MSG_NUM_MAX];
    if (ro) {
        uint8_t seen[SCN_MAX_WORKERS] = {0};
        for (int i = 0; i < M; i++) {
            int w = (int)cfg->ring_order_w[i];
            if (w >= M || seen[w])
                return fail(c, ro, 0, "network.ring_order",
                            "worker %d %s "
                            "(expected a permutation of 0..%d)",
                            w, w >= M ? "does not exist" : "given twice",
                            M - 1);
            seen[w] = 1;
            cfg->ring_order[i] = w;
        }
        cfg->has_ring_order = 1;
    }
    const cJSON *cp = get(n, "completion");
    if (cp && cfg->completion == SCN_COMPLETION_MEMBER &&
        scn_late_continues(cfg))
        return fail(c, cp, 0, "network.completion",
                    "\"member\" cannot be "
                    "combined with method.late \"continue\" (expected "
                    "\"group\", or late \"wait\")");
    if (!lm) return 0;
    if (lv) { /* at the later of the two */
        int later = is_later(c, lv, lm);
        return fail(
            c, later ? lv : lm, 0,
            later ? "network.latency_ms" : "network.latency_matrix_ms",
            "cannot be given together "
            "with %s (expected one of latency_ms and latency_matrix_ms)",
            later ? "latency_matrix_ms" : "latency_ms");
    }
    const double *L = cfg->latency_matrix_ms;
    char p[PATH_LEN];
    for (int i = 0; i < M; i++)
        for (int j = 0; j <= i; j++) {
            double x = L[i * M + j], y = L[j * M + i];
            if (i == j ? x == 0 : x == y) continue;
            const cJSON *at = cJSON_GetArrayItem(cJSON_GetArrayItem(lm, i), j);
            snprintf(p, sizeof p, "network.latency_matrix_ms[%d][%d]", i, j);
            if (i == j)
                return fail(c, at, 0, p, "%s ms (expected 0 on the diagonal)",
                            msg_number(x, a));
            return fail(c, at, 0, p,
                        "%s ms but [%d][%d] is %s ms (expected a "
                        "symmetric matrix)",
                        msg_number(x, a), j, i, msg_number(y, b));
        }
    cfg->has_latency_matrix = 1;
    return 0;
}

/* The longest simulated time the engine represents with room to spare:
 * time is int64 nanoseconds (2^63 ns is about 292 years), and a whole run
 * must fit in RUN_MAX_S = 1e9 s (about 31.7 years, 1e18 ns). */
#define RUN_MAX_S 1e9
#define STEP_MIN_S 1e-9 /* one nanosecond */

/* The first of keys (in section sec of root) that was given, or NULL. */
static const cJSON *given(const cJSON *root, const char *sec,
                          const char *const *keys, const char **key) {
    for (; *keys; keys++) {
        const cJSON *v = get(get(root, sec), *keys);
        if (v) return *key = *keys, v;
    }
    return NULL;
}

static const char *const net_keys[] = {"bandwidth_gbps",
                                       "up_gbps",
                                       "down_gbps",
                                       "tcp_window_mb",
                                       "latency_ms",
                                       "latency_matrix_ms",
                                       "efficiency",
                                       "collective_overhead_ms",
                                       NULL};
static const char *const step_keys[] = {"step_time_s", "tokens_per_step",
                                        "chips",       "peak_tflops",
                                        "mfu",         NULL};

/* What the engine must represent in int64 nanoseconds, one value at a
 * time: the step time (given or derived from FLOPs) at least 1 ns and at
 * most 1e6 s, a sync timeout of 0 or at least 1 ns; "0: none", else at
 * least the smallest value that means something. */
static int check_run_values(ctx *c, const cJSON *root, scn_config *cfg) {
    char a[MSG_NUM_MAX], p[PATH_LEN];
    const char *key = NULL;
    double step = scn_step_time_s(cfg);
    const cJSON *sv = given(root, "model", step_keys, &key);
    if (sv && !(step >= STEP_MIN_S && step <= 1e6)) {
        join_key(p, "model", key);
        return fail(c, sv, 0, p,
                    "the step time 6 * params * tokens_per_step "
                    "/ (chips * peak_tflops * 1e12 * mfu) = %s s is out of "
                    "range (expected a step of 1e-09 to 1e+06 s)",
                    msg_number(step, a));
    }
    /* A window of one byte, an MTBF of 3.6 ms (shorter ones would flood
     * the run with failures). */
    const cJSON *w = get(get(root, "network"), "tcp_window_mb");
    if (w && cfg->tcp_window_mb > 0 && cfg->tcp_window_mb < 1e-6)
        return fail(c, w, 0, "network.tcp_window_mb",
                    "%s is below one byte "
                    "(expected 0 for none, or a number in [1e-06, 1000000])",
                    msg_number(cfg->tcp_window_mb, a));
    const cJSON *mt = get(get(root, "faults"), "mtbf_hours");
    if (mt && cfg->faults.mtbf_s > 0 && cfg->faults.mtbf_s < 3600e-6)
        return fail(c, mt, 0, "faults.mtbf_hours",
                    "%s is below 1e-06 h "
                    "(expected 0 for none, or a number in [1e-06, 1000000])",
                    msg_number(cfg->faults.mtbf_s / 3600, a));
    /* A timeout is whole ns: one below 1 ns would round to 0, none. */
    const cJSON *to = get(get(root, "method"), "sync_timeout_s");
    if (to && cfg->sync_timeout_s > 0 && cfg->sync_timeout_s < STEP_MIN_S)
        return fail(c, to, 0, "method.sync_timeout_s",
                    "%s is a positive "
                    "value below 1 ns (expected 0 for none, or a number in "
                    "[1e-09, 1000000000])",
                    msg_number(cfg->sync_timeout_s, a));
    return 0;
}

/* An estimate of a whole run, s, in its parts. */
typedef struct {
    double compute, latency, transfer, copies, total;
    double hop, overhead; /* one collective step's latency and overhead */
} run_estimate;

/* Every step at the slowest worker's speed and slowdown, plus every
 * sync's collective steps, each with its latency and software overhead,
 * the transfer of its payload at the lowest bandwidth (less the ACKs'
 * share) and TCP window (over the round trip with its standing queue),
 * one connection set-up, and the host copies of offloaded outer state. */
static run_estimate estimate_run(const scn_config *cfg) {
    run_estimate e;
    double step = scn_step_time_s(cfg);
    int M = cfg->workers;
    double slow = INFINITY, rate = INFINITY, lat = 0;
    double unit = scn_gbit_bits(cfg->gbit);
    for (int i = 0; i < M; i++) {
        if (cfg->speed[i] < slow) slow = cfg->speed[i];
        double r = fmin(cfg->up_gbps[i], cfg->down_gbps[i]) * unit / 8;
        if (r < rate) rate = r;
        for (int j = 0; j < M; j++) lat = fmax(lat, scn_latency_ms(cfg, i, j));
    }
    rate *= cfg->efficiency;
    rate /= 1 + cfg->ack_bytes_per_kb / 1000; /* exactly rate without */
    lat *= 1e-3;
    double rtt = 2 * lat + cfg->queue_ms * 1e-3; /* exactly 2 lat at 0 */
    if (cfg->tcp_window_mb > 0 && rtt > 0)
        rate = fmin(rate, cfg->tcp_window_mb * 1e6 / rtt);
    double factor = cfg->straggler_prob > 0 ? cfg->straggler_slowdown : 1;
    double steps = (double)cfg->steps;
    e.compute = steps * step / slow * factor;
    /* Syncs: every step for DP, else P every H steps; each moves at most
     * the fp32 payload (all parameters for DP, a fragment otherwise), M
     * times over the busiest link, in one collective per layer it holds
     * (per bucket; every layer for a sliced layout), each of 2M steps;
     * a repair moves recovery_bytes_per_param per parameter. */
    int dp = cfg->sched.method == SCHED_DP, P = cfg->sched.P;
    double syncs = dp ? steps : floor(steps / cfg->sched.H) * P;
    double bytes = 4 * cfg->params / (dp ? 1 : P);
    double layers = cfg->layers;
    double colls = dp                                  ? layers
                   : cfg->sched.layout == SCHED_SLICED ? layers
                                                       : ceil(layers / P);
    double mb = dp ? cfg->dp_bucket_mb : cfg->bucket_mb;
    if (mb > 0 && cfg->sched.layout != SCHED_SLICED)
        colls = fmin(colls, ceil(bytes / (mb * 1e6)));
    double repair = cfg->params * cfg->recovery_bytes_per_param / rate;
    /* every collective step: its latency, its software overhead and, over
     * TCP, the round trips of a slow start from the initial window */
    double rounds = 0;
    if (cfg->transport == SCN_TRANSPORT_TCP && rtt > 0 && isfinite(rate))
        rounds =
            ceil(log2(fmax(1, rate * rtt / (cfg->tcp_init_window_kb * 1e3))));
    e.hop = lat + rounds * rtt;
    e.overhead = cfg->collective_overhead_ms * 1e-3;
    e.latency = syncs * colls * 2 * M * (e.hop + e.overhead);
    e.latency += cfg->startup_ms * 1e-3; /* once: the pairs stay set up */
    e.transfer = syncs * M * bytes / rate + repair;
    /* Offloaded outer state: each sync copies its fragment's outer
     * parameters and momentum in and out at host_gbps. */
    e.copies = 0;
    if (cfg->offload_outer && !dp)
        e.copies = syncs * 2 * bytes * 2 / (cfg->host_gbps * unit / 8);
    e.total = e.compute + e.latency + e.transfer + e.copies;
    return e;
}

/* The whole run estimated at most RUN_MAX_S, else an error reported at
 * the key that dominates the estimate, naming the others. */
static int check_run(ctx *c, const cJSON *root, scn_config *cfg) {
    char a[MSG_NUM_MAX], b[MSG_NUM_MAX], d[MSG_NUM_MAX], p[PATH_LEN];
    const char *key = NULL;
    run_estimate e = estimate_run(cfg);
    if (e.total <= RUN_MAX_S && isfinite(e.total)) return 0;
    const cJSON *sv = given(root, "model", step_keys, &key);
    const cJSON *at = get(root, "steps");
    const char *path = "steps";
    const cJSON *hv = get(get(root, "model"), "host_gbps");
    const cJSON *ov = get(get(root, "network"), "collective_overhead_ms");
    double syncing = fmax(fmax(e.latency, e.transfer), e.copies);
    double comm = fmax(e.latency, e.transfer);
    if (syncing > e.compute && e.copies == syncing && hv) {
        at = hv, path = "model.host_gbps";
    } else if (syncing > e.compute && e.latency == syncing && ov &&
               e.overhead >= e.hop) {
        at = ov, path = "network.collective_overhead_ms";
    } else if (!at || comm > e.compute) {
        const cJSON *nv = given(root, "network", net_keys, &key);
        if (e.compute >= comm && sv) {
            join_key(p, "model", key); /* nv's key when one was given */
            at = sv, path = p;
        } else if (e.compute < comm && nv) {
            join_key(p, "network", key);
            at = nv, path = p;
        } else if (!at) {
            at = get(root, "model") ? get(root, "model") : root;
            path = get(root, "model") ? "model" : "";
        }
    }
    char h[MSG_NUM_MAX + 64] = "";
    if (e.copies > 0)
        snprintf(h, sizeof h,
                 ", %s s of host copies (method.offload_outer "
                 "at model.host_gbps)",
                 msg_number(e.copies, a));
    return fail(c, at, 0, path,
                "the run would last about %s s: %s s of "
                "compute (steps * step time / speed * slowdown)%s and %s s of "
                "syncs (latencies, collective overheads and transfers at the "
                "lowest bandwidth, given model.params) (expected at most "
                "1e+09 s, about 31.7 years; fewer steps, a shorter step or a "
                "faster network)",
                msg_number(e.total, a), msg_number(e.compute, b), h,
                msg_number(e.latency + e.transfer, d));
}

/* A trace file's key `key` (at tr): its path resolved against the
 * scenario's directory into path, and the file parsed now by check(path,
 * workers, msg), so that a bad line is an input error with its line
 * before any run (the run reads it again). */
static int check_trace_file(ctx *c, const cJSON *tr, const char *key,
                            char *path, int workers,
                            int (*check)(const char *path, int workers,
                                         char *msg, size_t len)) {
    if (scn__resolve_path(c, tr, key, path)) return -1;
    char msg[SCN_PATH_MAX + 256];
    int rc = check(path, workers, msg, sizeof msg);
    if (rc == MSG_ENOMEM) return oom(c);
    if (rc) return fail(c, tr, 0, key, "%s", msg);
    return 0;
}

/* The three parsers as check_trace_file's check: parse, then free. */
static int faults_check(const char *p, int w, char *msg, size_t len) {
    faults_trace *t;
    int rc = faults_trace_load(p, w, &t, msg, len);
    faults_trace_free(t);
    return rc;
}

static int bw_check(const char *p, int w, char *msg, size_t len) {
    bwt_trace *t;
    int rc = bwt_load(p, w, &t, msg, len);
    bwt_free(t);
    return rc;
}

static int members_check(const char *p, int w, char *msg, size_t len) {
    mbt_trace *t;
    int rc = mbt_load(p, w, &t, msg, len);
    mbt_free(t);
    return rc;
}

/* trace: a path resolved against the scenario's directory, not with a
 * positive MTBF. */
static int check_faults(ctx *c, const cJSON *root, scn_config *cfg) {
    const cJSON *f = get(root, "faults"), *tr = get(f, "trace");
    const cJSON *mtbf = get(f, "mtbf_hours");
    cfg->faults.trace = NULL;
    if (!tr) return 0;
    if (mtbf && cfg->faults.mtbf_s > 0) {
        if (is_later(c, mtbf, tr))
            return fail(c, mtbf, 0, "faults.mtbf_hours",
                        "must be 0 when "
                        "a trace is given (expected either a trace file or "
                        "random failures)");
        return fail(c, tr, 0, "faults.trace",
                    "cannot be used together "
                    "with mtbf_hours > 0 (expected either a trace file or "
                    "random failures)");
    }
    return check_trace_file(c, tr, "faults.trace", cfg->trace_path,
                            cfg->workers, faults_check);
}

/* network.bandwidth_trace: a file resolved against the scenario's
 * directory and parsed now (a bad line is an input error before any run;
 * the run reads it again), or the diurnal form with its two rates. */
static int check_bw_trace(ctx *c, const cJSON *root, scn_config *cfg) {
    const cJSON *tr = get(get(root, "network"), "bandwidth_trace");
    if (!tr) return 0;
    if (cJSON_IsString(tr))
        return check_trace_file(c, tr, "network.bandwidth_trace",
                                cfg->bw_trace_path, cfg->workers, bw_check);
    const cJSON *d = get(tr, "diurnal");
    if (!d)
        return fail(c, tr, 0, "network.bandwidth_trace",
                    "an empty object (expected a trace file name or "
                    "{\"diurnal\": {...}})");
    static const char *const need[] = {"low_gbps", "high_gbps"};
    for (int k = 0; k < 2; k++)
        if (!get(d, need[k]))
            return fail(c, d, 0, "network.bandwidth_trace.diurnal",
                        "%s is missing (expected low_gbps and high_gbps)",
                        need[k]);
    if (cfg->diurnal.low_gbps > cfg->diurnal.high_gbps) {
        char a[MSG_NUM_MAX], b[MSG_NUM_MAX];
        return fail(c, get(d, "low_gbps"), 0,
                    "network.bandwidth_trace.diurnal.low_gbps",
                    "%s is above high_gbps %s (expected low_gbps <= "
                    "high_gbps)",
                    msg_number(cfg->diurnal.low_gbps, a),
                    msg_number(cfg->diurnal.high_gbps, b));
    }
    cfg->bw_diurnal = 1;
    return 0;
}

/* workers.sites against the network: a site's inside collectives need
 * group completion; one ring over every accelerator needs the ring; the
 * choice of site_allreduce needs sites. */
static int check_sites(ctx *c, const cJSON *root, const scn_config *cfg) {
    const cJSON *n = get(root, "network"), *sa = get(n, "site_allreduce");
    const cJSON *cp = get(n, "completion"), *co = get(n, "collective");
    if (sa && !cfg->has_sites)
        return fail(c, sa, 0, "network.site_allreduce",
                    "given without workers.sites (expected workers.sites, "
                    "or no site_allreduce)");
    if (!cfg->has_sites) return 0;
    if (cp && cfg->completion == SCN_COMPLETION_MEMBER)
        return fail(c, cp, 0, "network.completion",
                    "\"member\" cannot be combined with workers.sites "
                    "(expected \"group\")");
    if (cfg->site_allreduce == SCN_SITE_RING && cfg->collective != COLL_RING)
        return fail(c, co, 0, "network.collective",
                    "\"%s\" cannot be combined with network.site_allreduce "
                    "\"ring\" (expected \"ring\", or site_allreduce "
                    "\"hierarchical\")",
                    coll_algo_names[cfg->collective]);
    return 0;
}

/* workers.power_w needs both of its keys; either energy key given sets
 * its has_ flag (the run then reports energy_kwh). */
static int check_energy(ctx *c, const cJSON *root, scn_config *cfg) {
    const cJSON *pw = get(get(root, "workers"), "power_w");
    static const char *const need[] = {"busy", "idle"};
    for (int k = 0; pw && k < 2; k++)
        if (!get(pw, need[k]))
            return fail(c, pw, 0, "workers.power_w",
                        "%s is missing (expected both busy and idle, W per "
                        "accelerator)",
                        need[k]);
    cfg->has_power = pw != NULL;
    cfg->has_joules_per_gb = get(get(root, "network"), "joules_per_gb") != NULL;
    return 0;
}

/* faults.membership_trace: a file resolved against the scenario's
 * directory and parsed now (a bad line is an input error before any run;
 * the run reads it again); method.quorum at most workers.count. */
static int check_members(ctx *c, const cJSON *root, scn_config *cfg) {
    const cJSON *q = get(get(root, "method"), "quorum");
    if (q && cfg->quorum > cfg->workers)
        return fail(c, q, 0, "method.quorum",
                    "%d is above workers.count %d (expected 1..%d)",
                    cfg->quorum, cfg->workers, cfg->workers);
    const cJSON *tr = get(get(root, "faults"), "membership_trace");
    if (!tr) return 0;
    return check_trace_file(c, tr, "faults.membership_trace",
                            cfg->member_trace_path, cfg->workers,
                            members_check);
}

int scn__check_config(ctx *c, const cJSON *root, scn_config *cfg) {
    if (check_model(c, root, cfg) || check_method(c, root, cfg) ||
        check_network(c, root, cfg) || check_run_values(c, root, cfg) ||
        check_run(c, root, cfg) || check_faults(c, root, cfg) ||
        check_bw_trace(c, root, cfg) || check_sites(c, root, cfg) ||
        check_energy(c, root, cfg) || check_members(c, root, cfg))
        return -1;
    return 0;
}
