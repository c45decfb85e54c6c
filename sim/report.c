/*
 * report.c -- JSON results, Chrome trace timelines.
 *
 * Numbers are printed as the shortest decimal that reads back exactly, so
 * the same run gives the same bytes and nothing is lost in printing.
 */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static void field(FILE *f, const char *key, double x, int last) {
    fprintf(f, "  \"%s\": ", key);
    report_number(f, x);
    fputs(last ? "\n" : ",\n", f);
}

static void field_str(FILE *f, const char *key, const char *s) {
    fprintf(f, "  \"%s\": \"%s\",\n", key, s);
}

void report_run_json(FILE *f, const scn_config *c, const run_result *r) {
    const sched_spec *s = &c->sched;
    fputs("{\n", f);
    field_str(f, "method", sched_method_name(s->method));
    field(f, "workers", r->workers, 0);
    field(f, "steps", (double)r->steps, 0);
    field(f, "seed", (double)c->seed, 0);
    field(f, "finished", r->finished, 0);
    field(f, "step_time_s", r->step_time_s, 0);
    field(f, "wall_time_s", r->wall_time_s, 0);
    field(f, "compute_time_s", r->compute_time_s, 0);
    field(f, "compute_utilization", r->compute_utilization, 0);
    field(f, "bytes_sent_total", r->bytes_sent_total, 0);
    field(f, "peak_link_gbps", r->peak_link_gbps, 0);
    field(f, "avg_link_gbps", r->avg_link_gbps, 0);
    field(f, "syncs", (double)r->syncs, 0);
    field(f, "failures", (double)r->failures, 0);
    field(f, "lost_compute_s", r->lost_compute_s, 0);
    field(f, "recovery_bytes", r->recovery_bytes, 0);
    field(f, "events", (double)r->events, 0);
    fputs("  \"per_worker\": [\n", f);
    for (int i = 0; i < r->workers; i++) {
        const run_worker *w = &r->per_worker[i];
        fputs("    {\"utilization\": ", f);
        report_number(f, w->utilization);
        fputs(", \"compute_time_s\": ", f);
        report_number(f, w->compute_time_s);
        fputs(", \"bytes_sent\": ", f);
        report_number(f, w->bytes_sent);
        fputs(", \"bytes_received\": ", f);
        report_number(f, w->bytes_received);
        fputs(", \"lost_compute_s\": ", f);
        report_number(f, w->lost_compute_s);
        fprintf(f, ", \"failures\": %lld}%s\n", (long long)w->failures,
                i + 1 < r->workers ? "," : "");
    }
    fputs("  ]\n}\n", f);
}

void report_trace_begin(FILE *f, int workers) {
    static const char *const tracks[] = {"compute", "communication"};
    /* Records are joined by ",\n": the name records first, then every
     * span starts with the separator, so the array never ends in a comma. */
    fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", f);
    for (int i = 0; i < workers; i++) {
        fprintf(f,
                "%s{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, "
                "\"args\": {\"name\": \"worker %d\"}}",
                i ? ",\n" : "", i, i);
        for (int t = 0; t < 2; t++)
            fprintf(f,
                    ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, "
                    "\"tid\": %d, \"args\": {\"name\": \"%s\"}}",
                    i, t, tracks[t]);
    }
}

void report_trace_span(void *ctx, const run_span *s) {
    FILE *f = ctx;
    char name[48];
    if (s->layer >= 0)
        snprintf(name, sizeof name, "%s L%d", s->name, s->layer);
    else
        snprintf(name, sizeof name, "%s", s->name);
    /* Trace timestamps are microseconds; keep nanosecond precision. */
    fprintf(f,
            ",\n{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", "
            "\"pid\": %d, \"tid\": %d, \"ts\": %lld.%03lld, "
            "\"dur\": %lld.%03lld, \"args\": {\"step\": %lld, \"layer\": %d}}",
            name, s->name, s->worker, s->track,
            (long long)(s->start_ns / 1000), (long long)(s->start_ns % 1000),
            (long long)((s->end_ns - s->start_ns) / 1000),
            (long long)((s->end_ns - s->start_ns) % 1000), (long long)s->step,
            s->layer);
}

void report_trace_end(FILE *f) {
    fputs("\n]}\n", f);
}
