/*
 * html.c -- the page of `dilosim report`: escaping, the frame and its
 * style sheet, inline SVG, and the tables of one scenario.
 */
#include "sim/study/html.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/base/codec.h"
#include "sim/base/msg.h"
#include "sim/base/schedule.h"
#include "sim/engine/collective.h"
#include "sim/engine/faults.h"

/* ---- text --------------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at p (2..4), or 0. */
static int utf8_len(const unsigned char *p) {
    unsigned c = p[0];
    int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    unsigned lo = 0x80, hi = 0xbf;
    if (c < 0xc2 || c > 0xf4) return 0;
    if (c == 0xe0) lo = 0xa0;
    else if (c == 0xed) hi = 0x9f;
    else if (c == 0xf0) lo = 0x90;
    else if (c == 0xf4) hi = 0x8f;
    if (p[1] < lo || p[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf) return 0;
    return n;
}

void html_escape(FILE *f, const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (p && *p) {
        unsigned c = *p;
        const char *e = c == '&' ? "&amp;" : c == '<' ? "&lt;"
                        : c == '>' ? "&gt;" : c == '"' ? "&quot;"
                        : c == '\'' ? "&#39;" : NULL;
        if (e) {
            fputs(e, f);
            p++;
        } else if (c < 0x80) {
            int ctl = (c < 0x20 && c != '\t' && c != '\n' && c != '\r') ||
                      c == 0x7f;
            if (ctl) fputs("&#xFFFD;", f);
            else fputc((int)c, f);
            p++;
        } else {
            int n = utf8_len(p);
            if (!n || (c == 0xc2 && p[1] < 0xa0)) { /* invalid, or C1 */
                fputs("&#xFFFD;", f);
                p += n ? n : 1;
            } else {
                fwrite(p, 1, (size_t)n, f);
                p += n;
            }
        }
    }
}

const char *html_number(double x, char buf[HTML_NUM_MAX]) {
    if (isinf(x)) {
        snprintf(buf, HTML_NUM_MAX, "%s", x > 0 ? "unbounded" : "-unbounded");
        return buf;
    }
    char t[HTML_NUM_MAX];
    snprintf(t, sizeof t, "%.4g", x);
    char *e = strchr(t, 'e');
    if (!e) {
        snprintf(buf, HTML_NUM_MAX, "%s", t);
        return buf;
    }
    const char *x1 = e + 1;
    int neg = *x1 == '-';
    if (*x1 == '+' || *x1 == '-') x1++;
    while (*x1 == '0' && x1[1]) x1++;
    snprintf(buf, HTML_NUM_MAX, "%.*se%s%s", (int)(e - t), t, neg ? "-" : "",
             x1);
    return buf;
}

const char *html_bytes_text(double bytes, char buf[HTML_NUM_MAX]) {
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB",
                                       "EB"};
    int u = 0;
    double v = bytes;
    while (v >= 999.5 && u < 6) {
        v /= 1000;
        u++;
    }
    if (u == 0) snprintf(buf, HTML_NUM_MAX, "%.0f B", v);
    else snprintf(buf, HTML_NUM_MAX, "%.*f %s", v < 9.995 ? 2 : v < 99.95 ? 1
                  : 0, v, unit[u]);
    return buf;
}

/* ---- SVG ---------------------------------------------------------------- */

/* Whether s holds a <script element, in any case. */
static int has_script(const char *s) {
    for (const char *p = strchr(s, '<'); p; p = strchr(p + 1, '<'))
        if (!strncasecmp(p + 1, "script", 6)) return 1;
    return 0;
}

int html_svg_inline(const char *svg, const char *prefix, char **out,
                    char *err, size_t errlen) {
    *out = NULL;
    const char *s = strstr(svg, "<svg");
    if (!s)
        return msg_set(err, errlen, MSG_EFAIL, "gnuplot's output holds no "
                       "<svg> element");
    if (has_script(s))
        return msg_set(err, errlen, MSG_EFAIL, "gnuplot's SVG holds a "
                       "<script> element");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    static const char *const marks[] = {" id=\"", " id='", "href=\"#",
                                        "href='#", "url(#"};
    while (*s) {
        size_t k = 0, m = 0;
        for (; k < sizeof marks / sizeof *marks; k++) {
            m = strlen(marks[k]);
            if (!strncmp(s, marks[k], m)) break;
        }
        if (k < sizeof marks / sizeof *marks) {
            fwrite(s, 1, m, f);
            fputs(prefix, f);
            s += m;
        } else {
            fputc(*s++, f);
        }
    }
    if (fclose(f) || !text) {
        free(text);
        return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    }
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
        text[--len] = 0;
    *out = text;
    return 0;
}

/* ---- the frame ---------------------------------------------------------- */

static const char style[] =
    "body{font:15px/1.45 'DejaVu Sans',system-ui,sans-serif;color:#222;"
    "max-width:1180px;margin:1.5em auto;padding:0 1.5em}\n"
    "h1{font-size:1.6em;margin:.2em 0}\n"
    "h2{font-size:1.35em;border-bottom:2px solid #ccd;padding-bottom:.2em;"
    "margin-top:2.2em}\n"
    "h3{font-size:1.1em;margin-top:1.6em}\n"
    "table{border-collapse:collapse;margin:.5em 0 1em;"
    "font-variant-numeric:tabular-nums}\n"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;"
    "vertical-align:top}\n"
    "thead th{background:#eef1f5}\n"
    "tr.group th{background:#e3eaf3;font-weight:bold}\n"
    "td.num{text-align:right}\n"
    "div.wide{overflow-x:auto}\n"
    "table.assumptions{font-size:.9em}\n"
    "table.assumptions tbody th{min-width:13em}\n"
    "td small,p.note,figcaption,footer{color:#555}\n"
    "p.note,figcaption{font-size:.9em}\n"
    "figure{margin:1em 0}\n"
    "figure svg{max-width:100%;height:auto;display:block}\n"
    "code{font-size:.95em}\n"
    "footer{margin-top:3em;border-top:1px solid #ddd;padding-top:.5em;"
    "font-size:.85em}\n";

void html_begin(FILE *f, const char *title) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
          "<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, "
          "initial-scale=1\">\n<title>", f);
    html_escape(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
}

void html_end(FILE *f) { fputs("</body>\n</html>\n", f); }

void html_figure(FILE *f, const char *svg, const char *caption) {
    fputs("<figure>\n", f);
    fputs(svg, f);
    fputs("\n<figcaption>", f);
    html_escape(f, caption);
    fputs("</figcaption>\n</figure>\n", f);
}

/* <th>text</th>, <td>text</td>, <td class="num">text</td>, escaped. */
static void cell(FILE *f, const char *tag, const char *cls, const char *s) {
    fprintf(f, "<%s%s%s%s>", tag, cls ? " class=\"" : "", cls ? cls : "",
            cls ? "\"" : "");
    html_escape(f, s);
    fprintf(f, "</%s>", tag);
}

static void head_row(FILE *f, const char *const *titles, int n) {
    fputs("<thead><tr>", f);
    for (int i = 0; i < n; i++) cell(f, "th", NULL, titles[i]);
    fputs("</tr></thead>\n", f);
}

/* <tr><th>head</th>, n numeric cells, then `text` as a plain cell (NULL:
 * none), </tr>. */
static void row(FILE *f, const char *head, const char *const *num, int n,
                const char *text) {
    fputs("<tr>", f);
    cell(f, "th", NULL, head);
    for (int i = 0; i < n; i++) cell(f, "td", "num", num[i]);
    if (text) cell(f, "td", NULL, text);
    fputs("</tr>\n", f);
}

static void note(FILE *f, const char *text) {
    fputs("<p class=\"note\">", f);
    html_escape(f, text);
    fputs("</p>\n", f);
}

/* ---- assumptions -------------------------------------------------------- */

/* The rows, in groups (R_GROUP opens one). */
enum {
    R_GROUP, R_PARAMS, R_LAYERS, R_STEP, R_SPLIT, R_WORKERS, R_SPEED,
    R_STRAGGLERS, R_UP, R_DOWN, R_LATENCY, R_GBIT, R_COLLECTIVE, R_WINDOW,
    R_RING_ORDER, R_COMPLETION, R_TRANSPORT, R_EFFICIENCY, R_OVERHEAD,
    R_METHOD, R_H, R_FRAGMENTS, R_TAU, R_RULE, R_ALPHA, R_CODEC, R_LATE,
    R_BUCKETS, R_OFFLOAD, R_FAULTS,
    R_CHECKPOINT, R_RECOVERY, R_STEPS, R_SEED, R_TRAIN
};
static const struct {
    int id;
    const char *label;
} rows[] = {
    {R_GROUP, "Model"},
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
    {R_GROUP, "Method"},
    {R_METHOD, "method"},
    {R_H, "H: inner steps between syncs of a fragment"},
    {R_FRAGMENTS, "fragments, layout, sync order"},
    {R_TAU, "overlap"},
    {R_RULE, "(P, tau) rule"},
    {R_ALPHA, "merge alpha (local weight)"},
    {R_CODEC, "payload codec"},
    {R_LATE, "late syncs"},
    {R_BUCKETS, "DP gradient buckets"},
    {R_OFFLOAD, "outer parameters and momentum"},
    {R_GROUP, "Faults"},
    {R_FAULTS, "failures"},
    {R_CHECKPOINT, "DP checkpoint interval"},
    {R_RECOVERY, "recovery download"},
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
        for (int i = 1; i < M; i++) same &= c->latency_ms[i] == c->latency_ms[0];
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
                k += (size_t)snprintf(buf + k, len - k, "%s%s",
                                      j ? ", " : i ? "; " : "",
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
    snprintf(buf, len, "per pair (a %d x %d matrix): %s to %s between two workers",
             M, M, html_number(lo, num), html_number(top, hi));
}

static const char *method_title(sched_method m) {
    return m == SCHED_DP ? "data-parallel (dp)"
           : m == SCHED_DILOCO ? "DiLoCo (diloco)"
                               : "Streaming DiLoCo (streaming)";
}

static void codec_text(codec_spec c, char *buf, size_t len) {
    char num[HTML_NUM_MAX];
    if (c.kind == CODEC_E3M0 || c.kind == CODEC_E2M1 || c.kind == CODEC_UINT8)
        snprintf(buf, len, "%s, %s", codec_name(c.kind), c.block ?
                 html_number((double)c.block, num) : "one scale per tensor");
    else
        snprintf(buf, len, "%s", codec_name(c.kind));
    if (c.block && (c.kind == CODEC_E3M0 || c.kind == CODEC_E2M1 ||
                    c.kind == CODEC_UINT8))
        snprintf(buf + strlen(buf), len - strlen(buf), " values per scale");
}

static void faults_text(const scn_config *c, char *buf, size_t len) {
    char a[HTML_NUM_MAX], b[HTML_NUM_MAX], k[HTML_NUM_MAX];
    if (c->trace_path[0])
        snprintf(buf, len, "replayed from %s", c->trace_path);
    else if (c->faults.mtbf_s <= 0)
        snprintf(buf, len, "none");
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
    snprintf(buf, len, "%s, width %d, %d blocks, vocabulary %d; %s data; "
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
    if (x > 0)
        snprintf(buf, len, "%s %s", html_number(x, num), unit);
    else
        snprintf(buf, len, "none");
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
                 c->split[1], c->split[2], c->bwd_order == SCN_PARAM_FIRST
                 ? "parameters" : "activations");
        break;
    case R_WORKERS: snprintf(buf, len, "%d", c->workers); break;
    case R_SPEED: per_worker(c->speed, c->workers, buf, len); break;
    case R_STRAGGLERS:
        if (c->straggler_prob > 0)
            snprintf(buf, len, "%s of the steps, %s times slower",
                     html_number(c->straggler_prob, a),
                     html_number(c->straggler_slowdown, b));
        else
            snprintf(buf, len, "none");
        break;
    default: return 0;
    }
    return 1;
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
        snprintf(buf, len, "%s", c->gbit == SCN_GBIT_BINARY
                 ? "2^30 bit (binary)" : "10^9 bit (si)");
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
        snprintf(buf, len, "%s", c->completion == SCN_COMPLETION_MEMBER
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
            snprintf(buf, len, "ideal: a flow gets its share from its first byte");
        break;
    case R_EFFICIENCY: snprintf(buf, len, "%s", html_number(c->efficiency, a)); break;
    case R_OVERHEAD: amount_or_none(c->collective_overhead_ms, "ms", buf, len); break;
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
    case R_BUCKETS:
        if (s->method != SCHED_DP)
            snprintf(buf, len, "n/a (not DP)");
        else if (c->dp_bucket_mb > 0)
            snprintf(buf, len, "at least %s MB of payload each",
                     html_number(c->dp_bucket_mb, a));
        else
            snprintf(buf, len, "one per layer");
        break;
    case R_OFFLOAD:
        if (c->offload_outer && s->method != SCHED_DP)
            snprintf(buf, len, "in host memory, copied at %s Gbit/s",
                     html_number(c->host_gbps, a));
        else
            snprintf(buf, len, "on the accelerator");
        break;
    default: return 0;
    }
    return 1;
}

/* The text of assumption `id` about faults, recovery, the run and the
 * training into buf: 1, or 0 when id is not one of those. */
static int run_text(const scn_config *c, const scn_train *t, int id,
                    char *buf, size_t len) {
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
    case R_STEPS: snprintf(buf, len, "%lld", (long long)c->steps); break;
    case R_SEED:
        snprintf(buf, len, "%llu", (unsigned long long)c->seed);
        break;
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

/* Whether row `id` is shown: the ring order when a variant sets one, DP's
 * buckets when a variant is DP, the offload when a variant offloads;
 * every other row always. */
static int row_shown(int id, int n, const scn_config *cfg) {
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= id == R_RING_ORDER ? cfg[i].has_ring_order
               : id == R_BUCKETS  ? cfg[i].sched.method == SCHED_DP
               : id == R_OFFLOAD  ? cfg[i].offload_outer && cfg[i].sched.method != SCHED_DP
                                  : 1;
    return any;
}

#define CELL_MAX 1536

void html_assumptions(FILE *f, int n, const char *const *names,
                      const scn_config *cfg, const scn_train *train) {
    char (*v)[CELL_MAX] = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) return; /* out of memory: the stream's error shows it */
    fputs("<div class=\"wide\"><table class=\"assumptions\">\n<thead><tr>"
          "<th>assumption</th>", f);
    for (int i = 0; i < n; i++) cell(f, "th", NULL, names[i]);
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
        cell(f, "th", NULL, rows[r].label);
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

/* ---- thresholds --------------------------------------------------------- */

void html_thresholds(FILE *f, const table_result *t, const double *grid,
                     int npoints) {
    if (!t->nblocks) return;
    const table_block *b0 = &t->block[0];
    fputs("<table class=\"thresholds\">\n<thead><tr><th>method</th>", f);
    for (int i = 0; i < b0->nrows; i++) {
        char th[64];
        snprintf(th, sizeof th, "CU \xe2\x89\xa5 %g", b0->row[i].threshold);
        cell(f, "th", NULL, th);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    for (int k = 0; k < t->nblocks; k++) {
        const table_block *b = &t->block[k];
        fputs("<tr>", f);
        cell(f, "th", NULL, b->name);
        for (int i = 0; i < b->nrows; i++) {
            char first[TABLE_CELL_MAX], exact[TABLE_CELL_MAX];
            char cu[TABLE_CELL_MAX], more[128];
            table_row_text(&b->row[i], grid, npoints, first, exact, cu);
            fputs("<td class=\"num\">", f);
            html_escape(f, first);
            if (b->row[i].exact.status == TABLE_FOUND)
                snprintf(more, sizeof more, "exact %s (%s)", exact,
                         table_method_name(&b->row[i].exact));
            else
                snprintf(more, sizeof more, "%s", exact);
            fputs("<br><small>", f);
            html_escape(f, more);
            fputs("</small></td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n", f);
    for (int k = 0; k < t->nblocks; k++) {
        const table_block *b = &t->block[k];
        table_point from, to;
        if (!table_block_fall(b, grid, &from, &to)) continue;
        char msg[256 + SCN_NAME_MAX];
        snprintf(msg, sizeof msg, "%s: CU is not monotone: it falls from "
                 "%.4f at %.4g to %.4f at %.4g; each exact value is the least "
                 "from which every value evaluated reaches the threshold.",
                 b->name, from.cu, from.v, to.cu, to.v);
        note(f, msg);
    }
}

/* ---- bytes -------------------------------------------------------------- */

void html_bytes(FILE *f, int n, const char *const *names,
                const run_result *r) {
    static const char *const titles[] = {
        "method", "syncs", "bytes on the WAN, all workers", "per worker",
        "against the least", "wall time", "CU"};
    uint64_t least = UINT64_MAX;
    for (int i = 0; i < n; i++)
        if (r[i].bytes_sent_total && r[i].bytes_sent_total < least)
            least = r[i].bytes_sent_total;
    fputs("<table class=\"bytes\">\n", f);
    head_row(f, titles, 7);
    fputs("<tbody>\n", f);
    for (int i = 0; i < n; i++) {
        char b[HTML_NUM_MAX], w[HTML_NUM_MAX], x[64], t[64], cu[32], s[32];
        double total = (double)r[i].bytes_sent_total;
        html_bytes_text(total, b);
        html_bytes_text(r[i].workers ? total / r[i].workers : 0, w);
        if (least != UINT64_MAX && r[i].bytes_sent_total)
            snprintf(x, sizeof x, "%.3g x", total / (double)least);
        else
            snprintf(x, sizeof x, "-");
        snprintf(t, sizeof t, "%.6g s%s", r[i].wall_time_s,
                 r[i].finished ? "" : " (not finished)");
        snprintf(cu, sizeof cu, "%.4f", r[i].compute_utilization);
        snprintf(s, sizeof s, "%lld", (long long)r[i].syncs);
        fputs("<tr>", f);
        cell(f, "th", NULL, names[i]);
        cell(f, "td", "num", s);
        fprintf(f, "<td class=\"num\">");
        html_escape(f, b);
        fprintf(f, "<br><small>%llu bytes</small></td>",
                (unsigned long long)r[i].bytes_sent_total);
        cell(f, "td", "num", w);
        cell(f, "td", "num", x);
        cell(f, "td", "num", t);
        cell(f, "td", "num", cu);
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n", f);
}

/* ---- plan --------------------------------------------------------------- */

static void plan_costs(FILE *f, const plan_result *p) {
    static const char *const all[] = {
        "method", "Gbit/s", "CU", "WAN, USD/month", "idle compute, USD/month",
        "egress, USD/month", "total, USD/month", ""};
    const plan_cost *c = &p->cost;
    int egress = c->has_egress, n = 0;
    const char *titles[8];
    for (int k = 0; k < 8; k++) /* the egress column only when priced */
        if (k != 5 || egress) titles[n++] = all[k];
    char msg[640], eg[160] = "";
    if (egress)
        snprintf(eg, sizeof eg, "; egress %g USD per GB (1e9 bytes) sent",
                 c->egress_usd_per_gb);
    snprintf(msg, sizeof msg, "Monthly cost: the WAN at %g USD per Gbit/s "
             "per %s; idle compute (1 - CU) x %g accelerators x %g "
             "USD per hour x %g h%s.", c->wan_usd_per_gbps_month,
             c->pricing == PLAN_PRICING_LINK ? "link between two sites (each "
             "pair the collective sends between, bought once)" : "worker link",
             c->accelerators, c->accelerator_usd_per_hour,
             PLAN_HOURS_PER_MONTH, eg);
    note(f, msg);
    fputs("<table class=\"cost\">\n", f);
    head_row(f, titles, n);
    fputs("<tbody>\n", f);
    for (int i = 0; i < p->nmethods; i++) {
        const plan_method *m = &p->method[i];
        for (int k = 0; k < m->noptions; k++) {
            const plan_option *o = &m->option[k];
            char g[32], cu[32], wan[32], idle[32], egr[32], tot[32], mark[64];
            snprintf(g, sizeof g, "%.4g", o->gbps);
            snprintf(cu, sizeof cu, "%.4f", o->cu);
            snprintf(wan, sizeof wan, "%.0f", o->wan_usd);
            snprintf(idle, sizeof idle, "%.0f", o->idle_usd);
            snprintf(egr, sizeof egr, "%.0f", o->egress_usd);
            snprintf(tot, sizeof tot, "%.0f", o->total_usd);
            plan_option_note(o, mark, sizeof mark);
            const char *num[] = {g, cu, wan, idle, egress ? egr : tot, tot};
            row(f, m->name, num, egress ? 6 : 5, mark);
        }
    }
    fputs("</tbody>\n</table>\n", f);
    if (p->best_method >= 0) {
        const plan_method *m = &p->method[p->best_method];
        const plan_option *o = &m->option[p->best_option];
        snprintf(msg, sizeof msg, "Cheapest: %s at %.4g Gbit/s per worker "
                 "link, %.0f USD per month.", m->name, o->gbps, o->total_usd);
        note(f, msg);
    }
}

void html_plan(FILE *f, const plan_result *p) {
    static const char *const titles[] = {
        "method", "least Gbit/s", "CU there", "latency limit, ms",
        "(at Gbit/s)"};
    fputs("<table class=\"plan\">\n", f);
    head_row(f, titles, 5);
    fputs("<tbody>\n", f);
    for (int i = 0; i < p->nmethods; i++) {
        const plan_method *m = &p->method[i];
        char least[PLAN_CELL_MAX], cu[PLAN_CELL_MAX], lat[PLAN_CELL_MAX];
        char at[PLAN_CELL_MAX];
        plan_method_text(m, least, cu, lat, at);
        const char *num[] = {least, cu, lat, at};
        row(f, m->name, num, 4, NULL);
    }
    fputs("</tbody>\n</table>\n", f);
    char msg[256];
    snprintf(msg, sizeof msg, "Least Gbit/s: per worker link, at the "
             "scenario's latency. Latency limit: the largest one-way latency "
             "up to which CU stays >= %g, at %g x the least bandwidth.",
             p->target_cu, PLAN_LATENCY_MARGIN);
    note(f, msg);
    for (int i = 0; i < p->nmethods; i++) {
        const plan_method *m = &p->method[i];
        char line[128 + SCN_NAME_MAX];
        if (m->bandwidth_dip) {
            snprintf(line, sizeof line, "%s: CU falls somewhere as bandwidth "
                     "grows; the least bandwidth is the first crossing of "
                     "the scan.", m->name);
            note(f, line);
        }
        if (m->latency_rise) {
            snprintf(line, sizeof line, "%s: CU rises somewhere as latency "
                     "grows; the limit is the first crossing of the scan.",
                     m->name);
            note(f, line);
        }
    }
    if (p->has_cost) plan_costs(f, p);
}

/* ---- training ----------------------------------------------------------- */

void html_train(FILE *f, int n, const char *const *names,
                const cpl_summary *s) {
    static const char *const titles[] = {
        "method", "steps", "eval loss (outer), nats", "train loss, nats",
        "simulated time", "simulated CU", "WAN bytes (simulated model)",
        "target"};
    fputs("<table class=\"train\">\n", f);
    head_row(f, titles, 8);
    fputs("<tbody>\n", f);
    for (int i = 0; i < n; i++) {
        const cpl_row *r = &s[i].last;
        char st[32], ev[32], tr[32], t[48], cu[32], b[HTML_NUM_MAX], tg[96];
        snprintf(st, sizeof st, "%lld", (long long)r->step);
        snprintf(ev, sizeof ev, "%.4f", r->eval_loss);
        snprintf(tr, sizeof tr, "%.4f", r->train_loss);
        snprintf(t, sizeof t, "%.6g s%s", r->sim_time_s,
                 s[i].sim.finished ? "" : " (not finished)");
        snprintf(cu, sizeof cu, "%.4f", r->sim_utilization);
        html_bytes_text((double)r->wan_bytes, b);
        if (isnan(s[i].target_loss))
            snprintf(tg, sizeof tg, "-");
        else if (s[i].target_step < 0)
            snprintf(tg, sizeof tg, "%.4g not reached", s[i].target_loss);
        else
            snprintf(tg, sizeof tg, "%.4g at step %lld, %.6g s",
                     s[i].target_loss, (long long)s[i].target_step,
                     s[i].target_time_s);
        const char *num[] = {st, ev, tr, t, cu, b};
        row(f, names[i], num, 6, tg);
    }
    fputs("</tbody>\n</table>\n", f);
}
