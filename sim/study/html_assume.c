/*
 * html_assume.c -- the report's table of assumptions: one row a modelling
 * choice (model, workers, network, method, faults, run, training), one
 * column a scenario, each cell the choice in words.
 */
#include "sim/study/html.h"
#include "sim/study/html_int.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/codec.h"
#include "sim/base/schedule.h"

/* ---- assumptions -------------------------------------------------------- */

/* The rows, in groups (R_GROUP opens one). */
enum {
    R_GROUP,
    R_PARAMS,
    R_LAYERS,
    R_STEP,
    R_SPLIT,
    R_WORKERS,
    R_SPEED,
    R_STRAGGLERS,
    R_UP,
    R_DOWN,
    R_LATENCY,
    R_GBIT,
    R_COLLECTIVE,
    R_WINDOW,
    R_RING_ORDER,
    R_COMPLETION,
    R_TRANSPORT,
    R_EFFICIENCY,
    R_OVERHEAD,
    R_STARTUP,
    R_ACK,
    R_QUEUE,
    R_BW_TRACE,
    R_METHOD,
    R_H,
    R_FRAGMENTS,
    R_TAU,
    R_RULE,
    R_ALPHA,
    R_CODEC,
    R_LATE,
    R_BUCKETS,
    R_OFFLOAD,
    R_FAULTS,
    R_CHECKPOINT,
    R_RECOVERY,
    R_CKPT_COST,
    R_STEPS,
    R_SEED,
    R_TRAIN
};
static const struct {
    int id;
    const char *label;
} rows[] = {{R_GROUP, "Model"},
            {R_PARAMS, "parameters"},
            {R_LAYERS, "layers"},
            {R_STEP, "step time (at speed 1)"},
            {R_SPLIT, "step split: forward / backward (activations) / backward "
                      "(parameters)"},
            {R_GROUP, "Workers"},
            {R_WORKERS, "workers (datacenters)"},
            {R_SPEED, "relative speed"},
            {R_STRAGGLERS, "stragglers"},
            {R_GROUP, "Network"},
            {R_UP, "up link, Gbit/s"},
            {R_DOWN, "down link, Gbit/s"},
            {R_LATENCY, "one-way latency, ms"},
            {R_GBIT, "1 Gbit"},
            {R_COLLECTIVE, "all-reduce, stream order"},
            {R_RING_ORDER, "ring order (star: hub first)"},
            {R_COMPLETION, "a worker passes an all-reduce"},
            {R_TRANSPORT, "transport"},
            {R_WINDOW, "TCP window"},
            {R_EFFICIENCY, "payload share of the line rate"},
            {R_OVERHEAD, "overhead per collective step"},
            {R_STARTUP, "set-up of each pair's first transfer"},
            {R_ACK, "ACK bytes per KB of payload (reverse path)"},
            {R_QUEUE, "standing queue in TCP's round trip"},
            {R_BW_TRACE, "bandwidth over time"},
            {R_GROUP, "Method"},
            {R_METHOD, "method"},
            {R_H, "H: inner steps between syncs of a fragment"},
            {R_FRAGMENTS, "fragments, layout, sync order"},
            {R_TAU, "overlap"},
            {R_RULE, "(P, tau) rule"},
            {R_ALPHA, "merge alpha (local weight)"},
            {R_CODEC, "payload codec"},
            {R_LATE, "late syncs"},
            {R_BUCKETS, "all-reduce buckets"},
            {R_OFFLOAD, "outer parameters and momentum"},
            {R_GROUP, "Faults"},
            {R_FAULTS, "failures"},
            {R_CHECKPOINT, "DP checkpoint interval"},
            {R_RECOVERY, "recovery download"},
            {R_CKPT_COST, "checkpoint and restart costs"},
            {R_GROUP, "Run"},
            {R_STEPS, "steps"},
            {R_SEED, "seed"},
            {R_TRAIN, "train section"}};
#define NROWS ((int)(sizeof rows / sizeof *rows))

/* "v" when all n values are equal, else "v0, v1, ...". */
static void per_worker(const double *v, int n, char *buf, size_t len) {
    char num[HTML_NUM_MAX];
    int same = 1;
    for (int i = 1; i < n; i++) same &= v[i] == v[0];
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < (same ? 1 : n) && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "",
                              html_number(v[i], num));
}

/* The one-way latencies: per worker as given (between two workers their
 * mean), or the matrix row by row (from the row's worker to the
 * column's), or for more than LATENCY_ROWS workers its least and largest
 * value between two workers. */
#define LATENCY_ROWS 8
static void latency_text(const scn_config *c, char *buf, size_t len) {
    int M = c->workers;
    if (!c->has_latency_matrix) {
        per_worker(c->latency_ms, M, buf, len);
        int same = 1;
        for (int i = 1; i < M; i++)
            same &= c->latency_ms[i] == c->latency_ms[0];
        if (!same)
            snprintf(buf + strlen(buf), len - strlen(buf),
                     " (per worker; between two, their mean)");
        return;
    }
    char num[HTML_NUM_MAX], hi[HTML_NUM_MAX];
    size_t k = 0;
    if (M <= LATENCY_ROWS) {
        k = (size_t)snprintf(buf, len, "per pair, from row to column: ");
        for (int i = 0; i < M && k < len; i++)
            for (int j = 0; j < M && k < len; j++)
                k += (size_t)
                    snprintf(buf + k, len - k, "%s%s",
                             j   ? ", "
                             : i ? "; "
                                 : "",
                             html_number(c->latency_matrix_ms[i * M + j], num));
        return;
    }
    double lo = INFINITY, top = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++)
            if (i != j) {
                lo = fmin(lo, c->latency_matrix_ms[i * M + j]);
                top = fmax(top, c->latency_matrix_ms[i * M + j]);
            }
    snprintf(buf, len,
             "per pair (a %d x %d matrix): %s to %s between two workers", M, M,
             html_number(lo, num), html_number(top, hi));
}

static const char *method_title(sched_method m) {
    return m == SCHED_DP       ? "data-parallel (dp)"
           : m == SCHED_DILOCO ? "DiLoCo (diloco)"
           : m == SCHED_SPARTA ? "SPARTA, sparse parameter averaging (sparta)"
                               : "Streaming DiLoCo (streaming)";
}

static void codec_text(codec_spec c, char *buf, size_t len) {
    char num[HTML_NUM_MAX];
    if (c.kind == CODEC_E3M0 || c.kind == CODEC_E2M1 || c.kind == CODEC_UINT8)
        snprintf(buf, len, "%s, %s", codec_name(c.kind),
                 c.block ? html_number((double)c.block, num)
                         : "one scale per tensor");
    else if (c.kind == CODEC_TOPK)
        snprintf(buf, len, "topk, %s of the values",
                 html_number(c.k_fraction, num));
    else if (c.kind == CODEC_POWERSGD)
        snprintf(buf, len, "powersgd, rank %llu",
                 (unsigned long long)codec_rank(c));
    else if (c.kind == CODEC_DEMO)
        snprintf(buf, len, "demo, %llu of each %llu DCT coefficients",
                 (unsigned long long)codec_demo_topk(c),
                 (unsigned long long)codec_demo_chunk(c));
    else snprintf(buf, len, "%s", codec_name(c.kind));
    if (c.block &&
        (c.kind == CODEC_E3M0 || c.kind == CODEC_E2M1 || c.kind == CODEC_UINT8))
        snprintf(buf + strlen(buf), len - strlen(buf), " values per scale");
}

static void faults_text(const scn_config *c, char *buf, size_t len) {
    char a[HTML_NUM_MAX], b[HTML_NUM_MAX], k[HTML_NUM_MAX];
    if (c->trace_path[0]) snprintf(buf, len, "replayed from %s", c->trace_path);
    else if (c->faults.mtbf_s <= 0) snprintf(buf, len, "none");
    else if (c->faults.dist == FAULTS_WEIBULL)
        snprintf(buf, len, "MTBF %s h (Weibull, shape %s), MTTR %s h",
                 html_number(c->faults.mtbf_s / 3600, a),
                 html_number(c->faults.weibull_shape, k),
                 html_number(c->faults.mttr_s / 3600, b));
    else
        snprintf(buf, len, "MTBF %s h (exponential), MTTR %s h",
                 html_number(c->faults.mtbf_s / 3600, a),
                 html_number(c->faults.mttr_s / 3600, b));
}

/* The train section sec (NULL: none). */
static void train_text(const scn_train *sec, char *buf, size_t len) {
    char lr[HTML_NUM_MAX], olr[HTML_NUM_MAX], om[HTML_NUM_MAX];
    if (!sec || !sec->has_train) {
        snprintf(buf, len, "none");
        return;
    }
    const train_config *t = &sec->train;
    snprintf(buf, len,
             "%s, width %d, %d blocks, vocabulary %d; %s data; "
             "batch %d x %d tokens; inner %s lr %s; outer lr %s, momentum %s",
             t->nn.kind == NN_MLP ? "residual MLP" : "transformer", t->nn.d,
             t->nn.layers, t->nn.vocab,
             t->data.kind == DATA_TEXT ? "text" : "Markov", t->batch, t->seq,
             t->inner.kind == OPTIM_SGD ? "SGD" : "AdamW",
             html_number(t->inner.lr, lr), html_number(t->outer_lr, olr),
             html_number(t->outer_momentum, om));
}

/* "x unit" for x > 0, else "none". */
static void amount_or_none(double x, const char *unit, char *buf, size_t len) {
    char num[HTML_NUM_MAX];
    if (x > 0) snprintf(buf, len, "%s %s", html_number(x, num), unit);
    else snprintf(buf, len, "none");
}

/* The tau row's text for config c with schedule s. */
static void tau_text(const scn_config *c, const sched_spec *s, char *buf,
                     size_t len) {
    if (s->overlap == SCHED_INNER) {
        int per = 0;
        for (int i = 0; i < c->workers; i++) per |= c->tau_extra[i] != 0;
        int k = per ? snprintf(buf, len, "inner, tau ")
                    : snprintf(buf, len, "inner, tau %d", s->tau);
        for (int i = 0; per && i < c->workers && k < (int)len; i++)
            k += snprintf(buf + k, len - (size_t)k, "%s%d", i ? ", " : "",
                          s->tau + c->tau_extra[i]);
        if (k < (int)len)
            snprintf(buf + k, len - (size_t)k, " step%s%s",
                     s->tau == 1 && !per ? "" : "s",
                     per ? " (per worker)" : "");
    } else
        snprintf(buf, len, "%s (one outer step)",
                 sched_overlap_name(s->overlap));
}

/* The text of assumption `id` about the model and the workers into
 * buf: 1, or 0 when id is not one of those. */
static int model_text(const scn_config *c, int id, char *buf, size_t len) {
    char a[HTML_NUM_MAX], b[HTML_NUM_MAX];
    switch (id) {
    case R_PARAMS: snprintf(buf, len, "%s", html_number(c->params, a)); break;
    case R_LAYERS: snprintf(buf, len, "%d", c->layers); break;
    case R_STEP:
        snprintf(buf, len, "%s s%s", html_number(scn_step_time_s(c), a),
                 c->step_time_s > 0 ? "" : " (from FLOPs)");
        break;
    case R_SPLIT:
        snprintf(buf, len, "%.4g / %.4g / %.4g, %s first", c->split[0],
                 c->split[1], c->split[2],
                 c->bwd_order == SCN_PARAM_FIRST ? "parameters"
                                                 : "activations");
        break;
    case R_WORKERS: snprintf(buf, len, "%d", c->workers); break;
    case R_SPEED: per_worker(c->speed, c->workers, buf, len); break;
    case R_STRAGGLERS:
        if (c->straggler_prob > 0)
            snprintf(buf, len, "%s of the steps, %s times slower",
                     html_number(c->straggler_prob, a),
                     html_number(c->straggler_slowdown, b));
        else snprintf(buf, len, "none");
        break;
    default: return 0;
    }
    return 1;
}

/* The bandwidth trace: its file, or the diurnal form in words; "none". */
static void bw_trace_text(const scn_config *c, char *buf, size_t len) {
    char lo[HTML_NUM_MAX], hi[HTML_NUM_MAX], per[HTML_NUM_MAX],
        ph[HTML_NUM_MAX];
    if (c->bw_trace_path[0])
        snprintf(buf, len, "steps replayed from %s", c->bw_trace_path);
    else if (c->bw_diurnal)
        snprintf(buf, len,
                 "diurnal: every link from %s to %s Gbit/s, period %s h, "
                 "high at %s h, %d steps a period",
                 html_number(c->diurnal.low_gbps, lo),
                 html_number(c->diurnal.high_gbps, hi),
                 html_number(c->diurnal.period_h, per),
                 html_number(c->diurnal.phase_h, ph), c->diurnal.steps);
    else snprintf(buf, len, "constant");
}

/* The text of assumption `id` about the network into buf: 1, or 0
 * when id is not one of those. */
static int network_text(const scn_config *c, int id, char *buf, size_t len) {
    char a[HTML_NUM_MAX];
    switch (id) {
    case R_UP: per_worker(c->up_gbps, c->workers, buf, len); break;
    case R_DOWN: per_worker(c->down_gbps, c->workers, buf, len); break;
    case R_LATENCY: latency_text(c, buf, len); break;
    case R_GBIT:
        snprintf(buf, len, "%s",
                 c->gbit == SCN_GBIT_BINARY ? "2^30 bit (binary)"
                                            : "10^9 bit (si)");
        break;
    case R_COLLECTIVE:
        snprintf(buf, len, "%s, %s", coll_algo_name(c->collective),
                 c->reduce_order == SCN_FORWARD_FIRST ? "forward_first"
                                                      : "fifo");
        break;
    case R_WINDOW: amount_or_none(c->tcp_window_mb, "MB", buf, len); break;
    case R_RING_ORDER:
        if (!c->has_ring_order) {
            snprintf(buf, len, "by worker id");
            break;
        }
        for (int i = 0, k = 0; i < c->workers && k < (int)len; i++)
            k += snprintf(buf + k, len - (size_t)k, "%s%d", i ? ", " : "",
                          c->ring_order[i]);
        break;
    case R_COMPLETION:
        snprintf(buf, len, "%s",
                 c->completion == SCN_COMPLETION_MEMBER
                     ? "member: once it has its own result"
                     : "group: once the whole all-reduce is over");
        break;
    case R_TRANSPORT:
        if (c->transport == SCN_TRANSPORT_TCP)
            snprintf(buf, len, "tcp: slow start from %s kB, %s",
                     html_number(c->tcp_init_window_kb, a),
                     c->tcp_slow_start_after_idle ? "restart after idle"
                                                  : "no restart after idle");
        else
            snprintf(buf, len,
                     "ideal: a flow gets its share from its first byte");
        break;
    case R_EFFICIENCY:
        snprintf(buf, len, "%s", html_number(c->efficiency, a));
        break;
    case R_OVERHEAD:
        amount_or_none(c->collective_overhead_ms, "ms", buf, len);
        break;
    case R_STARTUP: amount_or_none(c->startup_ms, "ms", buf, len); break;
    case R_ACK: amount_or_none(c->ack_bytes_per_kb, "bytes", buf, len); break;
    case R_QUEUE: amount_or_none(c->queue_ms, "ms", buf, len); break;
    case R_BW_TRACE: bw_trace_text(c, buf, len); break;
    default: return 0;
    }
    return 1;
}

/* The text of assumption `id` about the method (its schedule s,
 * normalized, and codec) into buf: 1, or 0 when id is not one of those. */
static int method_text(const scn_config *c, const sched_spec *s, int id,
                       char *buf, size_t len) {
    char a[HTML_NUM_MAX];
    switch (id) {
    case R_METHOD: snprintf(buf, len, "%s", method_title(s->method)); break;
    case R_H: snprintf(buf, len, "%d", s->H); break;
    case R_FRAGMENTS:
        snprintf(buf, len, "%d, %s, %s", s->P, sched_layout_name(s->layout),
                 sched_order_name(s->order));
        break;
    case R_TAU: tau_text(c, s, buf, len); break;
    case R_RULE: snprintf(buf, len, "%s", sched_rule_name(s->rule)); break;
    case R_ALPHA: snprintf(buf, len, "%s", html_number(s->alpha, a)); break;
    case R_CODEC:
        codec_text(s->method == SCHED_DP ? c->dp_codec : c->codec, buf, len);
        break;
    case R_LATE:
        snprintf(buf, len, "%s", scn_late_continues(c) ? "continue" : "wait");
        if (c->sync_timeout_s > 0)
            snprintf(buf + strlen(buf), len - strlen(buf), "; timeout %s s",
                     html_number(c->sync_timeout_s, a));
        break;
    case R_BUCKETS: {
        double mb = s->method == SCHED_DP       ? c->dp_bucket_mb
                    : s->layout == SCHED_SLICED ? 0
                                                : c->bucket_mb;
        if (mb > 0)
            snprintf(buf, len, "at least %s MB of payload each%s",
                     html_number(mb, a),
                     s->method == SCHED_DP ? "" : " (per fragment)");
        else snprintf(buf, len, "one per layer");
    } break;
    case R_OFFLOAD:
        if (c->offload_outer && s->method != SCHED_DP)
            snprintf(buf, len, "in host memory, copied at %s Gbit/s",
                     html_number(c->host_gbps, a));
        else snprintf(buf, len, "on the accelerator");
        break;
    default: return 0;
    }
    return 1;
}

/* Checkpoint writes and restarts: what each costs. */
static void ckpt_cost_text(const scn_config *c, char *buf, size_t len) {
    char ck[HTML_NUM_MAX], rs[HTML_NUM_MAX];
    int64_t every = scn_checkpoint_every(c);
    int k;
    if (every > 0 && c->checkpoint_s > 0)
        k = snprintf(buf, len,
                     "a checkpoint every %lld steps stops compute "
                     "%s s",
                     (long long)every, html_number(c->checkpoint_s, ck));
    else if (every > 0)
        k = snprintf(buf, len, "a checkpoint every %lld steps, free",
                     (long long)every);
    else k = snprintf(buf, len, "no checkpoints");
    if (k >= 0 && (size_t)k < len)
        snprintf(buf + k, len - (size_t)k, "; a restart takes %s s",
                 html_number(c->restart_s, rs));
}

/* The text of assumption `id` about faults, recovery, the run and the
 * training into buf: 1, or 0 when id is not one of those. */
static int run_text(const scn_config *c, const scn_train *t, int id, char *buf,
                    size_t len) {
    char a[HTML_NUM_MAX];
    switch (id) {
    case R_FAULTS: faults_text(c, buf, len); break;
    case R_CHECKPOINT:
        snprintf(buf, len, "%lld steps", (long long)c->checkpoint_steps);
        break;
    case R_RECOVERY:
        snprintf(buf, len, "%s bytes per parameter",
                 html_number(c->recovery_bytes_per_param, a));
        break;
    case R_CKPT_COST: ckpt_cost_text(c, buf, len); break;
    case R_STEPS: snprintf(buf, len, "%lld", (long long)c->steps); break;
    case R_SEED: snprintf(buf, len, "%llu", (unsigned long long)c->seed); break;
    case R_TRAIN: train_text(t, buf, len); break;
    default: return 0;
    }
    return 1;
}

/* The text of assumption `id` for config c and its train section t (NULL:
 * none). */
static void assumption(const scn_config *c, const scn_train *t, int id,
                       char *buf, size_t len) {
    sched_spec s = c->sched;
    s.layers = c->layers;
    char err[256];
    sched_normalize(&s, err, sizeof err); /* the loader did: it passes */
    buf[0] = 0;
    if (!model_text(c, id, buf, len) && !network_text(c, id, buf, len) &&
        !method_text(c, &s, id, buf, len))
        run_text(c, t, id, buf, len);
}

/* Whether row `id` is shown: the ring order when a variant sets one, the
 * offload when a variant offloads, the
 * set-up, ACKs and queue when a variant has them; every other row
 * always. */
static int row_shown(int id, int n, const scn_config *cfg) {
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= id == R_RING_ORDER ? cfg[i].has_ring_order
               : id == R_OFFLOAD
                   ? cfg[i].offload_outer && cfg[i].sched.method != SCHED_DP
               : id == R_STARTUP  ? cfg[i].startup_ms > 0
               : id == R_ACK      ? cfg[i].ack_bytes_per_kb > 0
               : id == R_QUEUE    ? cfg[i].queue_ms > 0
               : id == R_BW_TRACE ? cfg[i].bw_trace_path[0] || cfg[i].bw_diurnal
               : id == R_CKPT_COST
                   ? cfg[i].checkpoint_every_steps > 0 ||
                         cfg[i].checkpoint_s > 0 || cfg[i].restart_s > 0
                   : 1;
    return any;
}

#define CELL_MAX 1536

void html_assumptions(FILE *f, int n, const char *const *names,
                      const scn_config *cfg, const scn_train *train) {
    char(*v)[CELL_MAX] = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) return; /* out of memory: the stream's error shows it */
    fputs("<div class=\"wide\"><table class=\"assumptions\">\n<thead><tr>"
          "<th>assumption</th>",
          f);
    for (int i = 0; i < n; i++) html__cell(f, "th", NULL, names[i]);
    fputs("</tr></thead>\n<tbody>\n", f);
    for (int r = 0; r < NROWS; r++) {
        if (rows[r].id == R_GROUP) {
            fprintf(f, "<tr class=\"group\"><th colspan=\"%d\">", n + 1);
            html_escape(f, rows[r].label);
            fputs("</th></tr>\n", f);
            continue;
        }
        if (!row_shown(rows[r].id, n, cfg)) continue;
        int same = 1;
        for (int i = 0; i < n; i++) {
            assumption(&cfg[i], train ? &train[i] : NULL, rows[r].id, v[i],
                       CELL_MAX);
            same &= !strcmp(v[i], v[0]);
        }
        fputs("<tr>", f);
        html__cell(f, "th", NULL, rows[r].label);
        if (same && n > 1) fprintf(f, "<td colspan=\"%d\">", n);
        for (int i = 0; i < (same ? 1 : n); i++) {
            if (!(same && n > 1)) fputs("<td>", f);
            html_escape(f, v[i]);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table></div>\n", f);
    free(v);
}
