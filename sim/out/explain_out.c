/*
 * explain_out.c -- an explained run as a person reads it: the sentence,
 * the JSON object of a method, the text table.
 *
 * The sentence is built from the run and the scenario, in the order a
 * person reasons: the payload of one sync (the bytes the group put on
 * the WAN for syncs, over the syncs and the 2(M-1) payloads every
 * algorithm sends), the time its collectives took on the stream per sync
 * (expl_result.comm_ns over the syncs) at the slowest link's rate, what
 * the overlap hid of that (that time less the exposed communication per
 * sync), the exposed time per
 * sync times the syncs against the wall; then the other parts that take
 * at least 1% of the wall (late peers, slow steps, failures, copies).
 * DP says it per step.  Figures in the sentence are rounded for reading;
 * the tables are exact.
 */
#include "sim/out/explain_out.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/engine/payload.h"
#include "sim/out/report.h"

static const int comm_parts[] = {EXPL_BANDWIDTH, EXPL_LATENCY, EXPL_TCP_RAMP,
                                 EXPL_STARTUP,   EXPL_QUEUE,   EXPL_OVERHEAD};

/* Seconds for reading: two or three significant digits. */
static const char *secs(double s, char b[32]) {
    if (s >= 100) snprintf(b, 32, "%.0f", s);
    else if (s >= 10) snprintf(b, 32, "%.1f", s);
    else snprintf(b, 32, "%.3g", s);
    return b;
}

/* A growing sentence in buf[n]; len counts what did not fit too. */
typedef struct {
    char *buf;
    size_t n;
    int len;
} sbuf;

__attribute__((format(printf, 2, 3))) static void say(sbuf *s, const char *fmt,
                                                      ...) {
    va_list ap;
    va_start(ap, fmt);
    size_t at = (size_t)s->len < s->n ? (size_t)s->len : s->n;
    int k = vsnprintf(s->buf ? s->buf + at : NULL, s->n - at, fmt, ap);
    va_end(ap);
    if (k > 0) s->len += k;
}

/* The slowest link's rate (Gbit/s, as the scenario gives it) and whether
 * the links differ. */
static double slowest_gbps(const scn_config *c, int *differ) {
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < c->workers; i++) {
        double g = fmin(c->up_gbps[i], c->down_gbps[i]);
        lo = fmin(lo, g);
        hi = fmax(hi, g);
    }
    *differ = lo != hi;
    return lo;
}

/* Without the TCP transport, tcp_window_mb caps every flow at the window
 * per longest round trip (world.c): that cap in Gbit/s, INFINITY none. */
static double window_gbps(const scn_config *c) {
    double lat = 0;
    for (int i = 0; i < c->workers; i++)
        for (int j = 0; j < c->workers; j++)
            lat = fmax(lat, scn_latency_ms(c, i, j));
    double rtt_s = (2 * lat + c->queue_ms) * 1e-3;
    if (c->tcp_window_mb <= 0 || rtt_s <= 0 ||
        c->transport == SCN_TRANSPORT_TCP)
        return INFINITY;
    return c->tcp_window_mb * 1e6 / rtt_s * 8 / scn_gbit_bits(c->gbit);
}

/* What hides communication under this method. */
static void say_hidden(sbuf *s, const scn_config *c, double hidden) {
    char b[32];
    const sched_spec *k = &c->sched;
    if (k->method == SCHED_DP)
        say(s, "; the backward hides %s s", secs(hidden, b));
    else if (k->overlap != SCHED_INNER)
        say(s, "; the %s overlap hides %s s",
            k->overlap == SCHED_OUTER ? "outer" : "eager", secs(hidden, b));
    else if (k->tau > 0)
        say(s, "; tau = %d hides %s s", k->tau, secs(hidden, b));
    else say(s, "; the backward hides %s s", secs(hidden, b));
}

/* Bytes for reading: MB, or GB from 10 GB on. */
static const char *bytes_text(double bytes, char b[32]) {
    if (bytes >= 1e10) snprintf(b, 32, "%.4g GB", bytes * 1e-9);
    else snprintf(b, 32, "%.4g MB", bytes * 1e-6);
    return b;
}

/* The syncs: payload, time on the stream, hidden, exposed x count of
 * wall. */
static void say_syncs(sbuf *s, const scn_config *c, const expl_result *r,
                      double comm) {
    const run_result *u = &r->run;
    char b1[32], b2[32], b3[32];
    int dp = c->sched.method == SCHED_DP, differ;
    double wall = (double)u->wall_ns * 1e-9, n = (double)u->syncs;
    /* one sync's payload on the wire: the model's (DP, DiLoCo), a
     * fragment's on average, whoever took part and whatever was redone,
     * or (sparta) the model's subset */
    codec_spec codec = dp ? c->dp_codec : c->codec;
    int sparta = c->sched.method == SCHED_SPARTA;
    double S = 0;
    for (int l = 0; l < c->layers; l++)
        S += (double)(sparta ? payload_subset_bytes(c, codec, l)
                             : payload_layer_bytes(c, codec, l));
    if (!sparta) S /= c->sched.P;
    double gbps = slowest_gbps(c, &differ);
    double t = (double)r->comm_ns * 1e-9 / n, exposed = comm / n;
    char rate[96];
    if (isfinite(gbps)) snprintf(rate, sizeof rate, "at %g Gbit/s", gbps);
    else snprintf(rate, sizeof rate, "over unbounded links");
    double cap = window_gbps(c);
    if (cap < gbps * c->efficiency)
        snprintf(rate + strlen(rate), sizeof rate - strlen(rate),
                 " (a flow at most %.3g Gbit/s: the TCP window per round trip)",
                 cap);
    say(s, "%seach %s %s takes %s s %s%s", dp ? "per step: " : "",
        bytes_text(S, b1), dp ? "gradient all-reduce" : "payload", secs(t, b2),
        rate, differ ? " (the slowest link)" : "");
    if (t - exposed > 0.005 * t) say_hidden(s, c, t - exposed);
    say(s, "; %s s exposed x %lld %s = %s s of %s s", secs(exposed, b1),
        (long long)u->syncs, dp ? "steps" : "syncs", secs(comm, b2),
        secs(wall, b3));
}

/* The other parts worth a word: at least 1% of the wall. */
static void say_others(sbuf *s, const expl_result *r) {
    const int64_t *p = r->method.ns;
    double wall = (double)r->run.wall_ns, min = 0.01 * wall;
    char b[32], b1[32], b2[32], b3[32];
    int64_t fail =
        p[EXPL_DOWN] + p[EXPL_REDONE] + p[EXPL_RECOVERY] + p[EXPL_STALLED];
    if (p[EXPL_GATE_WAIT] + p[EXPL_DONE_WAIT] >= min)
        say(s, "; waiting for late peers %s s",
            secs((double)(p[EXPL_GATE_WAIT] + p[EXPL_DONE_WAIT]) * 1e-9, b));
    if (p[EXPL_STRAGGLER] >= min)
        say(s, "; slow steps and slower workers %s s",
            secs((double)p[EXPL_STRAGGLER] * 1e-9, b));
    if (fail >= min)
        say(s,
            "; failures %s s (down %s s, redone %s s, recovery and "
            "stalls %s s)",
            secs((double)fail * 1e-9, b), secs((double)p[EXPL_DOWN] * 1e-9, b1),
            secs((double)p[EXPL_REDONE] * 1e-9, b2),
            secs((double)(p[EXPL_RECOVERY] + p[EXPL_STALLED]) * 1e-9, b3));
    if (p[EXPL_OFFLOAD] >= min)
        say(s, "; offload copies %s s",
            secs((double)p[EXPL_OFFLOAD] * 1e-9, b));
    if (p[EXPL_CKPT] >= min)
        say(s, "; checkpoints %s s", secs((double)p[EXPL_CKPT] * 1e-9, b));
    if (p[EXPL_RESTART] >= min)
        say(s, "; restarts %s s", secs((double)p[EXPL_RESTART] * 1e-9, b));
    if (p[EXPL_ABSENT] >= min)
        say(s, "; not members %s s", secs((double)p[EXPL_ABSENT] * 1e-9, b));
}

int expl_sentence(const scn_config *c, const expl_result *r, char *buf,
                  size_t n) {
    sbuf s = {buf, n, 0};
    if (buf && n) buf[0] = 0;
    const run_result *u = &r->run;
    double comm = 0;
    for (size_t k = 0; k < sizeof comm_parts / sizeof *comm_parts; k++)
        comm += (double)r->method.ns[comm_parts[k]] * 1e-9;
    char b1[32], b2[32];
    if (u->syncs > 0 && u->workers > 1) {
        say_syncs(&s, c, r, comm);
    } else {
        say(&s, "no syncs: %lld steps of %s s of compute in %s s",
            (long long)u->steps, secs((double)u->step_ns * 1e-9, b1),
            secs((double)u->wall_ns * 1e-9, b2));
    }
    say_others(&s, r);
    say(&s, "; compute %s s (CU %.3g)",
        secs((double)r->method.ns[EXPL_COMPUTE] * 1e-9, b1),
        u->compute_utilization);
    if (!u->finished) say(&s, "; not finished: %s", u->stop_reason);
    say(&s, ".");
    return s.len;
}

/* parts as an inline object of exact seconds; checkpoint, restart and
 * absent only when their keys are set (faults.checkpoint_s, restart_s,
 * membership_trace), so the output of a scenario without them stays as
 * it was. */
static void parts_json(jw *w, const char *key, const scn_config *c,
                       const expl_parts *p) {
    char b[REPORT_SECONDS_MAX];
    jw_object(w, key);
    for (int k = 0; k < EXPL_PARTS; k++) {
        if ((k == EXPL_CKPT && !(c->checkpoint_s > 0)) ||
            (k == EXPL_RESTART && !(c->restart_s > 0)) ||
            (k == EXPL_ABSENT && !c->member_trace_path[0]))
            continue;
        jw_raw(w, expl_part_names[k], report_seconds(p->ns[k], b));
    }
    jw_end(w);
}

void expl_write_json(jw *w, const char *key, const char *variant,
                     const scn_config *c, const expl_result *r) {
    char label[256], b[REPORT_SECONDS_MAX];
    scn_method_label(c, label, sizeof label);
    jw_lines(w, key, '{', 4, 2);
    jw_str(w, "method", variant);
    jw_str(w, "label", label);
    jw_raw(w, "wall_time_s", report_seconds(r->run.wall_ns, b));
    parts_json(w, "parts", c, &r->method);
    if (r->workers_differ) {
        jw_lines(w, "workers", '[', 6, 4);
        for (int i = 0; i < r->run.workers; i++) {
            jw_object(w, NULL);
            jw_int(w, "worker", i);
            parts_json(w, "parts", c, &r->worker[i]);
            jw_end(w);
        }
        jw_end(w);
    }
    int n = expl_sentence(c, r, NULL, 0);
    char *s = malloc((size_t)n + 1);
    if (s) expl_sentence(c, r, s, (size_t)n + 1);
    jw_str(w, "sentence", s ? s : "");
    free(s);
    jw_end(w);
}

/* One row of the text table: the name, the method's seconds and share,
 * each worker's seconds when they differ. */
static void text_row(FILE *f, const char *name, const expl_result *r,
                     int64_t ns, const int64_t *per, size_t stride) {
    char b[REPORT_SECONDS_MAX];
    double wall = (double)r->run.wall_ns;
    fprintf(f, "  %-10s %18s %6.1f", name, report_seconds(ns, b),
            wall > 0 ? 100.0 * (double)ns / wall : 0.0);
    for (int i = 0; r->workers_differ && i < r->run.workers; i++)
        fprintf(f, " %18s", report_seconds(*(per + (size_t)i * stride), b));
    fputc('\n', f);
}

void expl_write_text(FILE *f, const char *variant, const scn_config *c,
                     const expl_result *r) {
    char label[256];
    scn_method_label(c, label, sizeof label);
    fprintf(f, "%s: %s, %d workers\n", variant, label, r->run.workers);
    fprintf(f, "  %-10s %18s %6s", "part", "seconds", "%");
    for (int i = 0; r->workers_differ && i < r->run.workers; i++) {
        char h[32];
        snprintf(h, sizeof h, "worker %d", i);
        fprintf(f, " %18s", h);
    }
    fputc('\n', f);
    size_t stride = sizeof r->worker[0] / sizeof(int64_t);
    for (int k = 0; k < EXPL_PARTS; k++) {
        int any = r->method.ns[k] != 0;
        for (int i = 0; i < r->run.workers; i++) any |= r->worker[i].ns[k] != 0;
        if (any)
            text_row(f, expl_part_names[k], r, r->method.ns[k],
                     &r->worker[0].ns[k], stride);
    }
    int64_t walls[SCN_MAX_WORKERS];
    for (int i = 0; i < r->run.workers; i++) walls[i] = r->run.wall_ns;
    text_row(f, "wall", r, r->run.wall_ns, walls, 1);
    int n = expl_sentence(c, r, NULL, 0);
    char *s = malloc((size_t)n + 1);
    if (s) expl_sentence(c, r, s, (size_t)n + 1);
    fprintf(f, "  %s\n", s ? s : "");
    free(s);
}
