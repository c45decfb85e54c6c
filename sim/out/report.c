/*
 * report.c -- JSON results, Chrome trace timelines.
 *
 * Numbers are printed exactly: times from their integer ns (the decimal
 * of the ns count in seconds), bytes and counts as integers, ratios and
 * inputs as the shortest decimal that reads back as the same double.  The
 * same run gives the same bytes and nothing is lost in printing.
 */
#include "sim/out/report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/base/jw.h"
#include "sim/base/msg.h"
#include "sim/engine/memory.h"
#include "sim/base/version.h"

const char *report_seconds(int64_t ns, char buf[REPORT_SECONDS_MAX]) {
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    char frac[16];
    snprintf(frac, sizeof frac, "%09" PRIu64, u % 1000000000u);
    int n = 9;
    while (n > 0 && frac[n - 1] == '0') frac[--n] = 0;
    snprintf(buf, REPORT_SECONDS_MAX, "%s%" PRIu64 "%s%s", ns < 0 ? "-" : "",
             u / 1000000000u, n ? "." : "", frac);
    return buf;
}

/* Member key: ns as the exact decimal of seconds. */
static void field_s(jw *w, const char *k, int64_t ns) {
    char b[REPORT_SECONDS_MAX];
    jw_raw(w, k, report_seconds(ns, b));
}

/* One value when every worker has the same, else an array of M. */
static void field_per_worker(jw *w, const char *k, const double *v, int M) {
    int same = 1;
    for (int i = 1; i < M; i++) same &= v[i] == v[0];
    if (same) {
        jw_num(w, k, v[0]);
        return;
    }
    jw_array(w, k);
    for (int i = 0; i < M; i++) jw_num(w, NULL, v[i]);
    jw_end(w);
}

/* The network and memory keys beyond the ideal model, each only when it
 * is not its default (so the output of a scenario that does not use them
 * is what it was): transport (with its window and restart), completion,
 * efficiency, collective_overhead_ms, startup_ms, ack_bytes_per_kb,
 * queue_ms, the latency matrix, ring order, the buckets, the offload
 * with its host rate, the bandwidth trace (its file as resolved, or
 * the diurnal form's keys) and the sites (workers.sites). */
static void network_realism(jw *w, const scn_config *c) {
    int M = c->workers;
    if (c->transport == SCN_TRANSPORT_TCP) {
        jw_str(w, "transport", "tcp");
        jw_num(w, "tcp_init_window_kb", c->tcp_init_window_kb);
        jw_int(w, "tcp_slow_start_after_idle", c->tcp_slow_start_after_idle);
    }
    if (c->completion == SCN_COMPLETION_MEMBER)
        jw_str(w, "completion", "member");
    if (c->efficiency != 1) jw_num(w, "efficiency", c->efficiency);
    if (c->collective_overhead_ms != 0)
        jw_num(w, "collective_overhead_ms", c->collective_overhead_ms);
    if (c->startup_ms != 0) jw_num(w, "startup_ms", c->startup_ms);
    if (c->ack_bytes_per_kb != 0)
        jw_num(w, "ack_bytes_per_kb", c->ack_bytes_per_kb);
    if (c->queue_ms != 0) jw_num(w, "queue_ms", c->queue_ms);
    if (c->has_latency_matrix) {
        jw_array(w, "latency_matrix_ms");
        for (int i = 0; i < M; i++) {
            jw_array(w, NULL);
            for (int j = 0; j < M; j++)
                jw_num(w, NULL, c->latency_matrix_ms[i * M + j]);
            jw_end(w);
        }
        jw_end(w);
    }
    if (c->has_ring_order) {
        jw_array(w, "ring_order");
        for (int i = 0; i < M; i++) jw_int(w, NULL, c->ring_order[i]);
        jw_end(w);
    }
    if (c->sched.method == SCHED_DP && c->dp_bucket_mb != SCN_BUCKET_MB)
        jw_num(w, "dp_bucket_mb", c->dp_bucket_mb);
    if (c->sched.method != SCHED_DP && c->bucket_mb != SCN_BUCKET_MB)
        jw_num(w, "bucket_mb", c->bucket_mb);
    if (c->offload_outer && c->sched.method != SCHED_DP) {
        jw_int(w, "offload_outer", 1);
        jw_num(w, "host_gbps", c->host_gbps);
    }
    if (c->bw_trace_path[0]) jw_str(w, "bandwidth_trace", c->bw_trace_path);
    if (c->bw_diurnal) {
        const bwt_diurnal *d = &c->diurnal;
        jw_object(w, "bandwidth_trace");
        jw_object(w, "diurnal");
        jw_num(w, "low_gbps", d->low_gbps);
        jw_num(w, "high_gbps", d->high_gbps);
        jw_num(w, "period_h", d->period_h);
        jw_num(w, "phase_h", d->phase_h);
        jw_int(w, "steps_per_period", d->steps);
        jw_end(w);
        jw_end(w);
    }
    if (c->has_sites) { /* workers.sites, network.site_allreduce */
        double n[SCN_MAX_WORKERS];
        for (int i = 0; i < M; i++) n[i] = c->site_replicas[i];
        field_per_worker(w, "site_replicas", n, M);
        field_per_worker(w, "site_intra_gbps", c->site_intra_gbps, M);
        field_per_worker(w, "site_intra_latency_us", c->site_intra_latency_us,
                         M);
        jw_str(w, "site_allreduce",
               c->site_allreduce == SCN_SITE_RING ? "ring" : "hierarchical");
    }
}

/* The build and the resolved method inputs: the version, the digest, the
 * run's size, the schedule s (normalized) and the codec. */
static void inputs_method(jw *w, const scn_config *c, const run_result *r,
                          const sched_spec *s) {
    codec_spec codec = s->method == SCHED_DP ? c->dp_codec : c->codec;
    static const char *const orders[] = {"fifo", "forward_first"};
    jw_str(w, "version", DILOSIM_VERSION);
    jw_str(w, "revision", version_revision());
    char digest[24];
    snprintf(digest, sizeof digest, "%016" PRIx64, c->digest);
    jw_str(w, "scenario_digest", digest);
    jw_str(w, "method", sched_method_name(s->method));
    jw_int(w, "workers", r->workers);
    jw_int(w, "steps", (long long)r->steps);
    jw_u64(w, "seed", c->seed);
    jw_num(w, "params", c->params);
    jw_int(w, "layers", c->layers);
    field_s(w, "step_time_s", r->step_ns);
    jw_int(w, "H", s->H);
    jw_int(w, "fragments", s->P);
    jw_int(w, "tau", s->tau);
    int varied = 0; /* per-worker taus: the schedule's is the least */
    for (int i = 0; i < c->workers; i++) varied |= c->tau_extra[i];
    if (varied) {
        jw_array(w, "tau_per_worker");
        for (int i = 0; i < c->workers; i++)
            jw_int(w, NULL, s->tau + c->tau_extra[i]);
        jw_end(w);
    }
    jw_str(w, "overlap", sched_overlap_name(s->overlap));
    jw_str(w, "rule", sched_rule_name(s->rule));
    jw_num(w, "alpha", s->alpha);
    if (s->method == SCHED_SPARTA) jw_num(w, "subset_fraction", s->subset);
    jw_str(w, "late", scn_late_continues(c) ? "continue" : "wait");
    jw_num(w, "sync_timeout_s", c->sync_timeout_s);
    jw_str(w, "codec", codec_name(codec.kind));
    jw_u64(w, "codec_block", codec.block);
    if (codec.kind == CODEC_TOPK) jw_num(w, "k_fraction", codec.k_fraction);
    if (codec.kind == CODEC_POWERSGD) jw_u64(w, "rank", codec_rank(codec));
    if (codec.kind == CODEC_DEMO) {
        jw_u64(w, "demo_chunk", codec_demo_chunk(codec));
        jw_u64(w, "demo_topk", codec_demo_topk(codec));
        jw_num(w, "demo_beta", codec.demo_beta);
    }
    jw_str(w, "collective", coll_algo_name(c->collective));
    jw_str(w, "reduce_order", orders[c->reduce_order == SCN_FORWARD_FIRST]);
}

/* The resolved inputs of the world: links, speeds, faults, measure. */
static void inputs_world(jw *w, const scn_config *c) {
    jw_str(w, "gbit", c->gbit == SCN_GBIT_BINARY ? "binary" : "si");
    field_per_worker(w, "up_gbps", c->up_gbps, c->workers);
    field_per_worker(w, "down_gbps", c->down_gbps, c->workers);
    if (!c->has_latency_matrix) /* else latency_matrix_ms below */
        field_per_worker(w, "latency_ms", c->latency_ms, c->workers);
    jw_num(w, "tcp_window_mb", c->tcp_window_mb);
    network_realism(w, c);
    field_per_worker(w, "speed", c->speed, c->workers);
    jw_num(w, "straggler_probability", c->straggler_prob);
    jw_num(w, "straggler_slowdown", c->straggler_slowdown);
    /* in s, as the run used them (hours / 3600 would not read back) */
    jw_num(w, "mtbf_s", c->faults.mtbf_s);
    jw_num(w, "mttr_s", c->faults.mttr_s);
    if (c->has_power) { /* only with the keys: the default output stays */
        jw_num(w, "power_busy_w", c->power_busy_w);
        jw_num(w, "power_idle_w", c->power_idle_w);
    }
    if (c->has_joules_per_gb) jw_num(w, "joules_per_gb", c->joules_per_gb);
    jw_str(w, "measure", c->measure == SCN_MEASURE_STEADY ? "steady" : "run");
}

/* The figures of the whole run. */
static void results(jw *w, const scn_config *c, const run_result *r) {
    jw_int(w, "finished", r->finished);
    jw_str(w, "stop_reason", r->stop_reason);
    field_s(w, "wall_time_s", r->wall_ns);
    field_s(w, "compute_time_s", r->compute_ns);
    jw_num(w, "compute_utilization", r->compute_utilization);
    jw_num(w, "goodput", r->goodput);
    jw_u64(w, "bytes_sent_total", r->bytes_sent_total);
    jw_num(w, "peak_link_gbps", r->peak_link_gbps);
    jw_num(w, "avg_link_gbps", r->avg_link_gbps);
    jw_int(w, "syncs", (long long)r->syncs);
    jw_int(w, "syncs_not_waited", (long long)r->syncs_not_waited);
    jw_num(w, "sync_delay_mean_steps",
           r->delays.count ? (double)r->delays.sum / (double)r->delays.count
                           : 0);
    jw_int(w, "sync_delay_max_steps", (long long)r->delays.max);
    jw_int(w, "sync_timeouts", (long long)r->timeouts);
    jw_int(w, "failures", (long long)r->failures);
    field_s(w, "lost_compute_s", r->lost_ns);
    jw_u64(w, "recovery_bytes", r->recovery_bytes);
    /* only with the keys set: the default output stays as it was */
    if (c->checkpoint_s > 0) field_s(w, "checkpoint_time_s", r->checkpoint_ns);
    if (c->restart_s > 0) field_s(w, "restart_time_s", r->restart_ns);
    if (c->member_trace_path[0]) {
        jw_int(w, "joins", (long long)r->joins);
        jw_int(w, "leaves", (long long)r->leaves);
        field_s(w, "member_time_s", r->member_ns);
        jw_num(w, "member_utilization",
               r->member_ns > 0 ? (double)r->compute_ns / (double)r->member_ns
                                : 0);
    }
    if (c->quorum > 1) jw_int(w, "quorum", c->quorum);
    jw_u64(w, "events", r->events);
    if (c->has_power || c->has_joules_per_gb) {
        run_energy e;
        run_energy_of(c, r, &e);
        jw_object(w, "energy_kwh");
        jw_num(w, "compute_busy", e.compute_busy);
        jw_num(w, "compute_idle", e.compute_idle);
        jw_num(w, "network", e.network);
        jw_num(w, "total", e.total);
        jw_end(w);
    }
}

/* memory_per_worker (null when the config's cannot be had) and the
 * per_worker array; the device peak of the outer state only when the
 * outer state is offloaded (measured by the run, against the memory). */
static void workers(jw *w, const scn_config *c, const run_result *r) {
    mem_worker mem;
    char err[256];
    int offloaded = 0;
    if (mem_worker_of(c, &mem, err, sizeof err)) {
        jw_null(w, "memory_per_worker");
    } else {
        mem_write_json(w, "memory_per_worker", &mem);
        offloaded = mem.offload;
    }
    jw_lines(w, "per_worker", '[', 4, 2);
    for (int i = 0; i < r->workers; i++) {
        const run_worker *p = &r->per_worker[i];
        jw_object(w, NULL);
        jw_num(w, "utilization", p->utilization);
        jw_num(w, "goodput", p->goodput);
        field_s(w, "compute_time_s", p->compute_ns);
        jw_u64(w, "bytes_sent", p->bytes_sent);
        jw_u64(w, "bytes_received", p->bytes_received);
        field_s(w, "lost_compute_s", p->lost_ns);
        jw_int(w, "failures", (long long)p->failures);
        if (c->member_trace_path[0]) {
            jw_int(w, "joins", (long long)p->joins);
            jw_int(w, "leaves", (long long)p->leaves);
            field_s(w, "member_time_s", p->member_ns);
            jw_num(w, "member_utilization",
                   p->member_ns > 0
                       ? (double)p->compute_ns / (double)p->member_ns
                       : 0);
        }
        if (offloaded)
            jw_u64(w, "outer_device_peak_bytes", p->outer_device_peak_bytes);
        jw_end(w);
    }
    jw_end(w);
}

void report_run_json(FILE *f, const scn_config *c, const run_result *r) {
    sched_spec s = c->sched;
    s.layers = c->layers;
    char err[256];
    sched_normalize(&s, err, sizeof err); /* the run did it, so it passes */
    jw w;
    jw_init(&w, f);
    jw_lines(&w, NULL, '{', 2, 0);
    inputs_method(&w, c, r, &s);
    inputs_world(&w, c);
    results(&w, c, r);
    workers(&w, c, r);
    jw_end(&w);
}

void report_trace_begin(report_trace *t, FILE *f, int workers,
                        int64_t first_step, int64_t last_step) {
    static const char *const tracks[] = {"compute", "communication"};
    t->f = f;
    t->first_step = first_step;
    t->last_step = last_step;
    /* Records one a line, joined by ",\n": the name records first, then
     * the spans as they come. */
    jw *w = &t->w;
    jw_init(w, f);
    jw_object(w, NULL);
    jw_str(w, "displayTimeUnit", "ms");
    jw_lines(w, "traceEvents", '[', 0, 0);
    for (int i = 0; i < workers; i++) {
        char name[32];
        snprintf(name, sizeof name, "worker %d", i);
        for (int k = -1; k < 2; k++) {
            jw_object(w, NULL);
            jw_str(w, "name", k < 0 ? "process_name" : "thread_name");
            jw_str(w, "ph", "M");
            jw_int(w, "pid", i);
            if (k >= 0) jw_int(w, "tid", k);
            jw_object(w, "args");
            jw_str(w, "name", k < 0 ? name : tracks[k]);
            jw_end(w);
            jw_end(w);
        }
    }
}

/* ns (>= 0) as the exact decimal of microseconds ("1234.567"). */
static void micros(int64_t ns, char buf[32]) {
    snprintf(buf, 32, "%lld.%03lld", (long long)(ns / 1000),
             (long long)(ns % 1000));
}

/* ns / 1000 as the double nearest to it (what a reader's strtod gives for
 * the exact decimal): one correctly rounded division while ns is exact in
 * a double, strtod of the decimal beyond. */
static double micros_double(int64_t ns) {
    if (ns >= -(1ll << 53) && ns <= (1ll << 53)) return (double)ns / 1000.0;
    char a[32];
    micros(ns, a);
    return strtod(a, NULL);
}

const char *report_trace_dur(int64_t start_ns, int64_t end_ns,
                             char buf[MSG_NUM_MAX]) {
    double ts = micros_double(start_ns), te = micros_double(end_ns);
    int64_t dn = end_ns - start_ns;
    if (ts + micros_double(dn) == te) { /* most spans: the exact decimal */
        micros(dn, buf);
        return buf;
    }
    /* at most a few ulps away: step d until ts + d lands on te */
    double d = te - ts;
    for (int k = 0; k < 64 && ts + d != te; k++)
        d = nextafter(d, ts + d < te ? INFINITY : -INFINITY);
    if (d < 0) d = 0;
    /* 17 significant digits read back as d; one formatting call, where a
     * shortest form would take a dozen (traces have millions of spans) */
    snprintf(buf, MSG_NUM_MAX, "%.17g", d);
    return buf;
}

void report_trace_span(void *ctx, const run_span *s) {
    report_trace *t = ctx;
    if (s->step < t->first_step || s->step > t->last_step) return;
    jw *w = &t->w;
    char name[48], ts[32], dur[MSG_NUM_MAX];
    if (s->layer >= 0) snprintf(name, sizeof name, "%s L%d", s->name, s->layer);
    else snprintf(name, sizeof name, "%s", s->name);
    micros(s->start_ns, ts);
    report_trace_dur(s->start_ns, s->end_ns, dur);
    jw_object(w, NULL);
    jw_str(w, "name", name);
    jw_str(w, "cat", s->name);
    jw_str(w, "ph", "X");
    jw_int(w, "pid", s->worker);
    jw_int(w, "tid", s->track);
    jw_raw(w, "ts", ts);
    jw_raw(w, "dur", dur);
    jw_object(w, "args");
    jw_int(w, "step", (long long)s->step);
    if (s->layer >= 0) jw_int(w, "layer", s->layer);
    if (s->track == 1) {
        if (s->fragment >= 0) jw_int(w, "fragment", s->fragment);
        jw_u64(w, "bytes", s->bytes);
    }
    jw_end(w);
    jw_end(w);
}

void report_trace_end(report_trace *t) {
    jw_end(&t->w); /* traceEvents */
    jw_end(&t->w); /* the document, and its newline */
}
