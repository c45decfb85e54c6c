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

#include "sim/base/msg.h"
#include "sim/engine/memory.h"
#include "sim/base/version.h"

void report_number(FILE *f, double x) {
    if (isinf(x)) {
        fputs(x > 0 ? "\"inf\"" : "\"-inf\"", f);
        return;
    }
    if (isnan(x)) {
        fputs("null", f);
        return;
    }
    char buf[32];
    if (x == floor(x) && fabs(x) < 1e15) { /* integers without exponent */
        fprintf(f, "%.0f", x);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) break;
    }
    fputs(buf, f);
}

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

static void key(FILE *f, const char *k) {
    fprintf(f, "  \"%s\": ", k);
}

static void field(FILE *f, const char *k, double x) {
    key(f, k);
    report_number(f, x);
    fputs(",\n", f);
}

static void field_int(FILE *f, const char *k, long long x) {
    fprintf(f, "  \"%s\": %lld,\n", k, x);
}

static void field_bytes(FILE *f, const char *k, uint64_t x) {
    fprintf(f, "  \"%s\": %" PRIu64 ",\n", k, x);
}

static void field_s(FILE *f, const char *k, int64_t ns) {
    char b[REPORT_SECONDS_MAX];
    fprintf(f, "  \"%s\": %s,\n", k, report_seconds(ns, b));
}

void report_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
    fputc('"', f);
}

static void field_str(FILE *f, const char *k, const char *s) {
    key(f, k);
    report_string(f, s);
    fputs(",\n", f);
}

/* One value when every worker has the same, else an array of M. */
static void field_per_worker(FILE *f, const char *k, const double *v, int M) {
    int same = 1;
    for (int i = 1; i < M; i++) same &= v[i] == v[0];
    key(f, k);
    if (same) {
        report_number(f, v[0]);
    } else {
        fputc('[', f);
        for (int i = 0; i < M; i++) {
            if (i) fputs(", ", f);
            report_number(f, v[i]);
        }
        fputc(']', f);
    }
    fputs(",\n", f);
}

/* The network and memory keys beyond the ideal model, each only when it
 * is not its default (so the output of a scenario that does not use them
 * is what it was): transport (with its window and restart), completion,
 * efficiency, collective_overhead_ms, the latency matrix, ring order, DP
 * buckets and the offload with its host rate. */
static void network_realism(FILE *f, const scn_config *c) {
    int M = c->workers;
    if (c->transport == SCN_TRANSPORT_TCP) {
        field_str(f, "transport", "tcp");
        field(f, "tcp_init_window_kb", c->tcp_init_window_kb);
        field_int(f, "tcp_slow_start_after_idle", c->tcp_slow_start_after_idle);
    }
    if (c->completion == SCN_COMPLETION_MEMBER) field_str(f, "completion", "member");
    if (c->efficiency != 1) field(f, "efficiency", c->efficiency);
    if (c->collective_overhead_ms != 0)
        field(f, "collective_overhead_ms", c->collective_overhead_ms);
    if (c->has_latency_matrix) {
        key(f, "latency_matrix_ms");
        for (int i = 0; i < M; i++) {
            fputs(i ? ", [" : "[[", f);
            for (int j = 0; j < M; j++) {
                if (j) fputs(", ", f);
                report_number(f, c->latency_matrix_ms[i * M + j]);
            }
            fputc(']', f);
        }
        fputs("],\n", f);
    }
    if (c->has_ring_order) {
        key(f, "ring_order");
        for (int i = 0; i < M; i++) fprintf(f, "%s%d", i ? ", " : "[", c->ring_order[i]);
        fputs("],\n", f);
    }
    if (c->sched.method == SCHED_DP && c->dp_bucket_mb > 0)
        field(f, "dp_bucket_mb", c->dp_bucket_mb);
    if (c->offload_outer && c->sched.method != SCHED_DP) {
        field_int(f, "offload_outer", 1);
        field(f, "host_gbps", c->host_gbps);
    }
}

void report_run_json(FILE *f, const scn_config *c, const run_result *r) {
    sched_spec s = c->sched;
    s.layers = c->layers;
    char err[256];
    sched_normalize(&s, err, sizeof err); /* the run did it, so it passes */
    codec_spec codec = s.method == SCHED_DP ? c->dp_codec : c->codec;
    static const char *const orders[] = {"fifo", "forward_first"};
    fputs("{\n", f);
    field_str(f, "version", DILOSIM_VERSION);
    field_str(f, "revision", version_revision());
    char digest[24];
    snprintf(digest, sizeof digest, "%016" PRIx64, c->digest);
    field_str(f, "scenario_digest", digest);
    /* the resolved inputs */
    field_str(f, "method", sched_method_name(s.method));
    field_int(f, "workers", r->workers);
    field_int(f, "steps", (long long)r->steps);
    fprintf(f, "  \"seed\": %" PRIu64 ",\n", c->seed);
    field(f, "params", c->params);
    field_int(f, "layers", c->layers);
    field_s(f, "step_time_s", r->step_ns);
    field_int(f, "H", s.H);
    field_int(f, "fragments", s.P);
    field_int(f, "tau", s.tau);
    int varied = 0; /* per-worker taus: the schedule's is the least */
    for (int i = 0; i < c->workers; i++) varied |= c->tau_extra[i];
    if (varied) {
        fputs("  \"tau_per_worker\": [", f);
        for (int i = 0; i < c->workers; i++)
            fprintf(f, "%s%d", i ? ", " : "", s.tau + c->tau_extra[i]);
        fputs("],\n", f);
    }
    field_str(f, "overlap", sched_overlap_name(s.overlap));
    field_str(f, "rule", sched_rule_name(s.rule));
    field(f, "alpha", s.alpha);
    field_str(f, "late", scn_late_continues(c) ? "continue" : "wait");
    field(f, "sync_timeout_s", c->sync_timeout_s);
    field_str(f, "codec", codec_name(codec.kind));
    field_bytes(f, "codec_block", codec.block);
    field_str(f, "collective", coll_algo_name(c->collective));
    field_str(f, "reduce_order", orders[c->reduce_order == SCN_FORWARD_FIRST]);
    field_str(f, "gbit", c->gbit == SCN_GBIT_BINARY ? "binary" : "si");
    field_per_worker(f, "up_gbps", c->up_gbps, c->workers);
    field_per_worker(f, "down_gbps", c->down_gbps, c->workers);
    if (!c->has_latency_matrix) /* else latency_matrix_ms below */
        field_per_worker(f, "latency_ms", c->latency_ms, c->workers);
    field(f, "tcp_window_mb", c->tcp_window_mb);
    network_realism(f, c);
    field_per_worker(f, "speed", c->speed, c->workers);
    field(f, "straggler_probability", c->straggler_prob);
    field(f, "straggler_slowdown", c->straggler_slowdown);
    /* in s, as the run used them (hours / 3600 would not read back) */
    field(f, "mtbf_s", c->faults.mtbf_s);
    field(f, "mttr_s", c->faults.mttr_s);
    field_str(f, "measure", c->measure == SCN_MEASURE_STEADY ? "steady" : "run");
    /* the results */
    field_int(f, "finished", r->finished);
    field_str(f, "stop_reason", r->stop_reason);
    field_s(f, "wall_time_s", r->wall_ns);
    field_s(f, "compute_time_s", r->compute_ns);
    field(f, "compute_utilization", r->compute_utilization);
    field(f, "goodput", r->goodput);
    field_bytes(f, "bytes_sent_total", r->bytes_sent_total);
    field(f, "peak_link_gbps", r->peak_link_gbps);
    field(f, "avg_link_gbps", r->avg_link_gbps);
    field_int(f, "syncs", (long long)r->syncs);
    field_int(f, "syncs_not_waited", (long long)r->syncs_not_waited);
    field(f, "sync_delay_mean_steps", r->delays.count ? (double)r->delays.sum /
                                      (double)r->delays.count : 0);
    field_int(f, "sync_delay_max_steps", (long long)r->delays.max);
    field_int(f, "sync_timeouts", (long long)r->timeouts);
    field_int(f, "failures", (long long)r->failures);
    field_s(f, "lost_compute_s", r->lost_ns);
    field_bytes(f, "recovery_bytes", r->recovery_bytes);
    fprintf(f, "  \"events\": %" PRIu64 ",\n", r->events);
    mem_worker mem; /* of the config; null if it cannot be had */
    int offloaded = 0;
    key(f, "memory_per_worker");
    if (mem_worker_of(c, &mem, err, sizeof err)) {
        fputs("null", f);
    } else {
        mem_write_json(f, &mem);
        offloaded = mem.offload;
    }
    fputs(",\n", f);
    fputs("  \"per_worker\": [\n", f);
    for (int i = 0; i < r->workers; i++) {
        const run_worker *w = &r->per_worker[i];
        char b[REPORT_SECONDS_MAX];
        fputs("    {\"utilization\": ", f);
        report_number(f, w->utilization);
        fputs(", \"goodput\": ", f);
        report_number(f, w->goodput);
        fprintf(f, ", \"compute_time_s\": %s", report_seconds(w->compute_ns, b));
        fprintf(f, ", \"bytes_sent\": %" PRIu64, w->bytes_sent);
        fprintf(f, ", \"bytes_received\": %" PRIu64, w->bytes_received);
        fprintf(f, ", \"lost_compute_s\": %s", report_seconds(w->lost_ns, b));
        fprintf(f, ", \"failures\": %lld", (long long)w->failures);
        if (offloaded) /* measured by the run, against memory_per_worker */
            fprintf(f, ", \"outer_device_peak_bytes\": %" PRIu64,
                    w->outer_device_peak_bytes);
        fprintf(f, "}%s\n", i + 1 < r->workers ? "," : "");
    }
    fputs("  ]\n}\n", f);
}

void report_trace_begin(report_trace *t, FILE *f, int workers,
                        int64_t first_step, int64_t last_step) {
    static const char *const tracks[] = {"compute", "communication"};
    t->f = f;
    t->first_step = first_step;
    t->last_step = last_step;
    /* Records are joined by ",\n": the name records first, then every
     * span starts with the separator, so the array never ends in a comma. */
    fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", f);
    for (int i = 0; i < workers; i++) {
        fprintf(f,
                "%s{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, "
                "\"args\": {\"name\": \"worker %d\"}}",
                i ? ",\n" : "", i, i);
        for (int k = 0; k < 2; k++)
            fprintf(f,
                    ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, "
                    "\"tid\": %d, \"args\": {\"name\": \"%s\"}}",
                    i, k, tracks[k]);
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
    FILE *f = t->f;
    char name[48], ts[32], dur[MSG_NUM_MAX];
    if (s->layer >= 0)
        snprintf(name, sizeof name, "%s L%d", s->name, s->layer);
    else
        snprintf(name, sizeof name, "%s", s->name);
    micros(s->start_ns, ts);
    report_trace_dur(s->start_ns, s->end_ns, dur);
    fprintf(f,
            ",\n{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", "
            "\"pid\": %d, \"tid\": %d, \"ts\": %s, \"dur\": %s, "
            "\"args\": {\"step\": %lld",
            name, s->name, s->worker, s->track, ts, dur, (long long)s->step);
    if (s->layer >= 0) fprintf(f, ", \"layer\": %d", s->layer);
    if (s->track == 1) {
        if (s->fragment >= 0) fprintf(f, ", \"fragment\": %d", s->fragment);
        fprintf(f, ", \"bytes\": %" PRIu64, s->bytes);
    }
    fputs("}}", f);
}

void report_trace_end(report_trace *t) {
    fputs("\n]}\n", t->f);
}
