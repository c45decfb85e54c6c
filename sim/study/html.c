/*
 * html.c -- the page of `dilosim report`: escaping, the frame and its
 * style sheet, inline SVG, and the tables of the results (thresholds,
 * bytes, the plan, the training); the table of assumptions is
 * html_assume.c's.
 */
#include "sim/study/html.h"
#include "sim/study/html_int.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/base/msg.h"

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
        const char *e = c == '&'    ? "&amp;"
                        : c == '<'  ? "&lt;"
                        : c == '>'  ? "&gt;"
                        : c == '"'  ? "&quot;"
                        : c == '\'' ? "&#39;"
                                    : NULL;
        if (e) {
            fputs(e, f);
            p++;
        } else if (c < 0x80) {
            int ctl =
                (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
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
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    int u = 0;
    double v = bytes;
    while (v >= 999.5 && u < 6) {
        v /= 1000;
        u++;
    }
    if (u == 0) snprintf(buf, HTML_NUM_MAX, "%.0f B", v);
    else
        snprintf(buf, HTML_NUM_MAX, "%.*f %s",
                 v < 9.995   ? 2
                 : v < 99.95 ? 1
                             : 0,
                 v, unit[u]);
    return buf;
}

/* ---- SVG ---------------------------------------------------------------- */

/* Whether s holds a <script element, in any case. */
static int has_script(const char *s) {
    for (const char *p = strchr(s, '<'); p; p = strchr(p + 1, '<'))
        if (!strncasecmp(p + 1, "script", 6)) return 1;
    return 0;
}

int html_svg_inline(const char *svg, const char *prefix, char **out, char *err,
                    size_t errlen) {
    *out = NULL;
    const char *s = strstr(svg, "<svg");
    if (!s)
        return msg_set(err, errlen, MSG_EFAIL,
                       "gnuplot's output holds no "
                       "<svg> element");
    if (has_script(s))
        return msg_set(err, errlen, MSG_EFAIL,
                       "gnuplot's SVG holds a "
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
    ".sw{display:inline-block;width:.8em;height:.8em;margin-right:.4em;"
    "border-radius:2px;vertical-align:baseline}\n"
    "#summary{border:2px solid #0072b2;border-radius:6px;padding:.2em 1em;"
    "margin:1em 0;background:#f4f8fc}\n"
    "#summary .buy{font-size:1.15em;font-weight:bold}\n"
    "code{font-size:.95em}\n"
    "footer{margin-top:3em;border-top:1px solid #ddd;padding-top:.5em;"
    "font-size:.85em}\n";

void html_begin(FILE *f, const char *title) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
          "<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, "
          "initial-scale=1\">\n<title>",
          f);
    html_escape(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
}

void html_end(FILE *f) {
    fputs("</body>\n</html>\n", f);
}

void html_figure(FILE *f, const char *svg, const char *caption) {
    fputs("<figure>\n", f);
    fputs(svg, f);
    fputs("\n<figcaption>", f);
    html_escape(f, caption);
    fputs("</figcaption>\n</figure>\n", f);
}

void html__cell(FILE *f, const char *tag, const char *cls, const char *s) {
    fprintf(f, "<%s%s%s%s>", tag, cls ? " class=\"" : "", cls ? cls : "",
            cls ? "\"" : "");
    html_escape(f, s);
    fprintf(f, "</%s>", tag);
}

static void head_row(FILE *f, const char *const *titles, int n) {
    fputs("<thead><tr>", f);
    for (int i = 0; i < n; i++) html__cell(f, "th", NULL, titles[i]);
    fputs("</tr></thead>\n", f);
}

/* <tr><th>head</th>, n numeric cells, then `text` as a plain cell (NULL:
 * none), </tr>. */
static void row(FILE *f, const char *head, const char *const *num, int n,
                const char *text) {
    fputs("<tr>", f);
    html__cell(f, "th", NULL, head);
    for (int i = 0; i < n; i++) html__cell(f, "td", "num", num[i]);
    if (text) html__cell(f, "td", NULL, text);
    fputs("</tr>\n", f);
}

static void note(FILE *f, const char *text) {
    fputs("<p class=\"note\">", f);
    html_escape(f, text);
    fputs("</p>\n", f);
}

/* ---- thresholds --------------------------------------------------------- */

void html_thresholds(FILE *f, const table_result *t, const double *grid,
                     int npoints, int n, const char *const *names,
                     const char *const *humans) {
    if (!t->nblocks) return;
    const table_block *b0 = &t->block[0];
    fputs("<table class=\"thresholds\">\n<thead><tr><th>method</th>", f);
    for (int i = 0; i < b0->nrows; i++) {
        char th[64];
        snprintf(th, sizeof th, "CU \xe2\x89\xa5 %g", b0->row[i].threshold);
        html__cell(f, "th", NULL, th);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    for (int k = 0; k < t->nblocks; k++) {
        const table_block *b = &t->block[k];
        const char *head = b->name;
        for (int i = 0; names && i < n; i++)
            if (!strcmp(names[i], b->name)) head = humans[i];
        fputs("<tr>", f);
        html__cell(f, "th", NULL, head);
        for (int i = 0; i < b->nrows; i++) {
            char first[TABLE_CELL_MAX], exact[TABLE_CELL_MAX];
            char cu[TABLE_CELL_MAX], more[128];
            table_row_text(&b->row[i], grid, npoints, first, exact, cu);
            fputs("<td class=\"num\">", f);
            html_escape(f, first);
            if (b->row[i].exact.status == TABLE_FOUND)
                snprintf(more, sizeof more, "exact %s (%s)", exact,
                         table_method_name(&b->row[i].exact));
            else snprintf(more, sizeof more, "%s", exact);
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
        snprintf(msg, sizeof msg,
                 "%s: CU is not monotone: it falls from "
                 "%.4f at %.4g to %.4f at %.4g; each exact value is the least "
                 "from which every value evaluated reaches the threshold.",
                 b->name, from.cu, from.v, to.cu, to.v);
        note(f, msg);
    }
}

/* ---- bytes -------------------------------------------------------------- */

void html_bytes(FILE *f, int n, const char *const *names, const run_result *r) {
    static const char *const titles[] = {"method",
                                         "syncs",
                                         "bytes on the WAN, all workers",
                                         "per worker",
                                         "against the least",
                                         "wall time",
                                         "CU"};
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
        else snprintf(x, sizeof x, "-");
        snprintf(t, sizeof t, "%.6g s%s", r[i].wall_time_s,
                 r[i].finished ? "" : " (not finished)");
        snprintf(cu, sizeof cu, "%.4f", r[i].compute_utilization);
        snprintf(s, sizeof s, "%lld", (long long)r[i].syncs);
        fputs("<tr>", f);
        html__cell(f, "th", NULL, names[i]);
        html__cell(f, "td", "num", s);
        fprintf(f, "<td class=\"num\">");
        html_escape(f, b);
        fprintf(f, "<br><small>%llu bytes</small></td>",
                (unsigned long long)r[i].bytes_sent_total);
        html__cell(f, "td", "num", w);
        html__cell(f, "td", "num", x);
        html__cell(f, "td", "num", t);
        html__cell(f, "td", "num", cu);
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n", f);
}

/* ---- plan --------------------------------------------------------------- */

/* <tr><th>the method</th>: its label, its variant's name after it in
 * small text, a swatch of its colour (color NULL: none); a method
 * without a label by its name. */
static void method_head(FILE *f, const plan_method *m, const char *color) {
    fputs("<tr><th>", f);
    if (color)
        fprintf(f, "<span class=\"sw\" style=\"background:%s\"></span>", color);
    if (!m->label[0]) html_escape(f, m->name);
    else {
        html_escape(f, m->label);
        fputs(" <small>(", f);
        html_escape(f, m->name);
        fputs(")</small>", f);
    }
    fputs("</th>", f);
}

/* A row of method m: its head, n numeric cells, text (NULL: none). */
static void mrow(FILE *f, const plan_method *m, const char *color,
                 const char *const *num, int n, const char *text) {
    method_head(f, m, color);
    for (int i = 0; i < n; i++) html__cell(f, "td", "num", num[i]);
    if (text) html__cell(f, "td", NULL, text);
    fputs("</tr>\n", f);
}

static const char *color_of(const char *const *color, int i) {
    return color ? color[i] : NULL;
}

/* The costs' note: what each column is. */
static void plan_costs_note(FILE *f, const plan_result *p) {
    const plan_cost *c = &p->cost;
    const char *cur = c->currency[0] ? c->currency : "USD";
    char msg[900], eg[160] = "", wan[200], all[PLAN_CELL_MAX];
    const char *per = c->pricing == PLAN_PRICING_LINK
                          ? "link between two sites (each pair the "
                            "collective sends between, bought once)"
                          : "worker link";
    if (c->has_egress)
        snprintf(eg, sizeof eg, "; egress %g %s per GB (1e9 bytes) sent",
                 c->egress_usd_per_gb, cur);
    if (c->has_links)
        snprintf(wan, sizeof wan, "the WAN at the listed link's price per %s",
                 per);
    else
        snprintf(wan, sizeof wan, "the WAN at %g %s per Gbit/s per %s",
                 c->wan_usd_per_gbps_month, cur, per);
    plan_thousands(c->accelerators * c->accelerator_usd_per_hour *
                       PLAN_HOURS_PER_MONTH,
                   all, sizeof all);
    snprintf(msg, sizeof msg,
             "Monthly cost, %s: %s; compute %g accelerators x %g %s per "
             "hour x %g h = %s, busy CU of it and idle the rest%s. The "
             "total is WAN + busy + idle%s; a month of work (every "
             "accelerator busy) costs the total / CU, which the "
             "recommendation ranks.",
             cur, wan, c->accelerators, c->accelerator_usd_per_hour, cur,
             PLAN_HOURS_PER_MONTH, all, eg, c->has_egress ? " + egress" : "");
    note(f, msg);
}

static void plan_costs(FILE *f, const plan_result *p,
                       const char *const *color) {
    static const char *const all[] = {"method", "Gbit/s",       "CU",
                                      "WAN",    "busy compute", "idle compute",
                                      "egress", "total",        "month of work",
                                      ""};
    int egress = p->cost.has_egress, n = 0;
    const char *titles[10];
    for (int k = 0; k < 10; k++) /* the egress column only when priced */
        if (k != 6 || egress) titles[n++] = all[k];
    plan_costs_note(f, p);
    fputs("<table class=\"cost\">\n", f);
    head_row(f, titles, n);
    fputs("<tbody>\n", f);
    for (int i = 0; i < p->nmethods; i++) {
        const plan_method *m = &p->method[i];
        for (int k = 0; k < m->noptions; k++) {
            const plan_option *o = &m->option[k];
            char c[8][PLAN_CELL_MAX], mark[80];
            snprintf(c[0], PLAN_CELL_MAX, "%.4g", o->gbps);
            snprintf(c[1], PLAN_CELL_MAX, "%.4f", o->cu);
            const double v[] = {o->wan_usd,    o->busy_usd, o->idle_usd,
                                o->egress_usd, o->bill_usd, o->work_usd};
            for (int j = 0; j < 6; j++)
                plan_thousands(v[j], c[j + 2], PLAN_CELL_MAX);
            plan_option_note(o, mark, sizeof mark);
            if (p->rec.status == PLAN_REC_BUY && p->rec.method == i &&
                p->rec.option == k) {
                size_t len = strlen(mark);
                snprintf(mark + len, sizeof mark - len, "%sbuy",
                         len ? ", " : "");
            }
            const char *with[] = {c[0], c[1], c[2], c[3],
                                  c[4], c[5], c[6], c[7]};
            const char *without[] = {c[0], c[1], c[2], c[3], c[4], c[6], c[7]};
            mrow(f, m, color_of(color, i), egress ? with : without,
                 egress ? 8 : 7, mark);
        }
    }
    fputs("</tbody>\n</table>\n", f);
    if (p->best_method >= 0) {
        const plan_method *m = &p->method[p->best_method];
        const plan_option *o = &m->option[p->best_option];
        char msg[256 + PLAN_LABEL_MAX], x[64];
        plan_money_text(o->work_usd, p->cost.currency, x, sizeof x);
        snprintf(msg, sizeof msg,
                 "Cheapest that meets the target: %s at %.4g Gbit/s per %s, "
                 "%s per month of work.",
                 m->label[0] ? m->label : m->name, o->gbps, plan_link_word(p),
                 x);
        note(f, msg);
    }
}

/* Each candidate's energy per month and its emissions (a grid). */
static void plan_energy(FILE *f, const plan_result *p,
                        const char *const *color) {
    static const char *const titles[] = {"method",    "Gbit/s",
                                         "CU",        "accelerators",
                                         "kWh/month", "kg CO2/month"};
    char msg[320];
    snprintf(msg, sizeof msg,
             "Energy per month (%g h): CU x accelerators x busy W + (1 - CU) "
             "x accelerators x idle W (workers.power_w), plus the bytes sent "
             "per month x network.joules_per_gb; emissions at %g g CO2 per "
             "kWh.",
             PLAN_HOURS_PER_MONTH, p->grid_gco2_per_kwh);
    note(f, msg);
    fputs("<table class=\"cost\">\n", f);
    head_row(f, titles, 6);
    fputs("<tbody>\n", f);
    for (int i = 0; i < p->nmethods; i++) {
        const plan_method *m = &p->method[i];
        for (int k = 0; k < m->noptions; k++) {
            const plan_option *o = &m->option[k];
            char c[5][PLAN_CELL_MAX];
            snprintf(c[0], PLAN_CELL_MAX, "%.4g", o->gbps);
            snprintf(c[1], PLAN_CELL_MAX, "%.4f", o->cu);
            snprintf(c[2], PLAN_CELL_MAX, "%.6g", m->power.accelerators);
            snprintf(c[3], PLAN_CELL_MAX, "%.6g", o->energy_kwh_month);
            snprintf(c[4], PLAN_CELL_MAX, "%.6g", o->emissions_kg_co2_month);
            const char *num[] = {c[0], c[1], c[2], c[3], c[4]};
            mrow(f, m, color_of(color, i), num, 5, NULL);
        }
    }
    fputs("</tbody>\n</table>\n", f);
}

/* What the interval of a fit means (nothing without one). */
static void plan_interval_note(FILE *f, const plan_result *p) {
    if (!p->samples) return;
    char msg[512 + SETFILE_MAX_FIT * SETFILE_KEY_MAX];
    int n = snprintf(msg, sizeof msg,
                     "[5%%, 95%%]: the 5th and 95th percentiles of the least "
                     "bandwidth over %d draws of the fitted keys (",
                     p->samples);
    for (int k = 0; k < p->nfit; k++)
        n += snprintf(msg + n, sizeof msg - (size_t)n, "%s%s", k ? ", " : "",
                      p->fit_key[k]);
    snprintf(msg + n, sizeof msg - (size_t)n,
             ") from their normal (the fit's values and covariance), each "
             "draw a whole search (seed %llu; %lld draws outside a key's "
             "range drawn again; with random failures draw k runs with the "
             "scenario's seed + k). It is the fit's statistical error under "
             "the model, not the model's own error.",
             (unsigned long long)p->sample_seed, (long long)p->redraws);
    note(f, msg);
}

/* CU over the seeds at each option, and the least bandwidth of its 5th
 * percentile (nothing without seeds). */
static void plan_seeds(FILE *f, const plan_result *p,
                       const char *const *color) {
    static const char *const titles[] = {"method",  "Gbit/s",  "CU", "CU, 5%",
                                         "CU, 50%", "CU, 95%", ""};
    if (!p->seeds) return;
    char msg[512];
    snprintf(msg, sizeof msg,
             "CU over %d seeds (the scenario's seed + k): CU at its own "
             "seed, and the 5th, 50th and 95th percentiles over the seeds; "
             "a method without random failures or stragglers (a fault trace "
             "is fixed) has the same CU at every seed. Below, the least "
             "bandwidth from which the 5th percentile reaches %g, the target "
             "in 95%% of the seeds.",
             p->seeds, p->target_cu);
    note(f, msg);
    fputs("<table class=\"seeds\">\n", f);
    head_row(f, titles, 7);
    fputs("<tbody>\n", f);
    for (int i = 0; i < p->nmethods; i++) {
        const plan_method *m = &p->method[i];
        for (int k = 0; k < m->noptions; k++) {
            const plan_option *o = &m->option[k];
            char c[5][32];
            const double v[] = {o->cu, o->cu_p5, o->cu_p50, o->cu_p95};
            snprintf(c[0], sizeof c[0], "%.4g", o->gbps);
            for (int j = 0; j < 4; j++) snprintf(c[j + 1], 32, "%.4f", v[j]);
            const char *num[] = {c[0], c[1], c[2], c[3], c[4]};
            mrow(f, m, color_of(color, i), num, 5,
                 !m->random    ? "no randomness"
                 : o->is_least ? "least"
                               : "");
        }
    }
    fputs("</tbody>\n</table>\n", f);
    for (int i = 0; i < p->nmethods; i++) {
        const plan_method *m = &p->method[i];
        char least[PLAN_CELL_MAX], line[64 + PLAN_CELL_MAX + SCN_NAME_MAX];
        plan_least_text(&m->least_p5, least);
        snprintf(line, sizeof line,
                 "%s: %s Gbit/s for the 5th percentile of CU >= %g.", m->name,
                 least, p->target_cu);
        if (m->random) note(f, line);
    }
}

/* The least bandwidth again under each change (--sensitivity). */
static void plan_sensitivity(FILE *f, const plan_result *p,
                             const char *const *color) {
    char mtbf[48];
    snprintf(mtbf, sizeof mtbf, "MTBF %g h", p->mtbf_hours);
    const char *titles[] = {"method", "least Gbit/s", "latency x2",
                            "efficiency 0.6", mtbf};
    note(f, "Sensitivity: the least Gbit/s per worker link with one "
            "assumption changed (every one-way latency x2; network "
            "efficiency 0.6; random failures at the MTBF, the scenario's "
            "MTTR).");
    fputs("<table class=\"sens\">\n", f);
    head_row(f, titles, 5);
    fputs("<tbody>\n", f);
    for (int i = 0; i < p->nmethods; i++) {
        const plan_method *m = &p->method[i];
        char c[1 + PLAN_NSENS][PLAN_CELL_MAX];
        plan_least_text(&m->least, c[0]);
        for (int k = 0; k < PLAN_NSENS; k++)
            plan_least_text(&m->sens[k].least, c[k + 1]);
        const char *num[] = {c[0], c[1], c[2], c[3]};
        mrow(f, m, color_of(color, i), num, 4, NULL);
    }
    fputs("</tbody>\n</table>\n", f);
}

/* A whole training at each option (--train-hours, --tokens). */
static void plan_trainings(FILE *f, const plan_result *p,
                           const char *const *color) {
    const char *titles[] = {"method", "Gbit/s",       "steps",        "wall h",
                            "CU",     "busy compute", "idle compute", "WAN",
                            "egress", "total"};
    char msg[256];
    snprintf(msg, sizeof msg, "A whole training of %g %s at each option%s%s.",
             p->tokens > 0 ? p->tokens : p->train_hours,
             p->tokens > 0 ? "tokens" : "hours of compute",
             p->has_cost ? ", in " : "", p->has_cost ? p->cost.currency : "");
    note(f, msg);
    fputs("<table class=\"training\">\n", f);
    head_row(f, titles, p->has_cost ? 10 : 5);
    fputs("<tbody>\n", f);
    for (int i = 0; i < p->nmethods; i++) {
        const plan_method *m = &p->method[i];
        for (int k = 0; k < m->noptions; k++) {
            const plan_training *t = &m->option[k].train;
            char c[9][PLAN_CELL_MAX];
            snprintf(c[0], PLAN_CELL_MAX, "%.4g", m->option[k].gbps);
            snprintf(c[1], PLAN_CELL_MAX, "%lld", (long long)m->train_steps);
            snprintf(c[2], PLAN_CELL_MAX, "%.4g", t->wall_h);
            snprintf(c[3], PLAN_CELL_MAX, "%.4f", t->run.cu);
            const double v[] = {t->compute_usd - t->idle_usd, t->idle_usd,
                                t->wan_usd, t->egress_usd, t->total_usd};
            for (int j = 0; j < 5; j++)
                plan_thousands(v[j], c[j + 4], PLAN_CELL_MAX);
            const char *num[] = {c[0], c[1], c[2], c[3], c[4],
                                 c[5], c[6], c[7], c[8]};
            mrow(f, m, color_of(color, i), num, p->has_cost ? 9 : 4,
                 t->run.finished ? "" : "not finished");
        }
    }
    fputs("</tbody>\n</table>\n", f);
}

void html_plan(FILE *f, const plan_result *p) {
    html_plan_styled(f, p, NULL);
}

void html_plan_styled(FILE *f, const plan_result *p, const char *const *color) {
    static const char *const all[] = {
        "method",   "least Gbit/s",      "[5%, 95%]",
        "CU there", "latency limit, ms", "(at Gbit/s)"};
    const char *titles[6];
    int nt = 0;
    for (int k = 0; k < 6; k++) /* the interval only with a fit */
        if (k != 2 || p->samples) titles[nt++] = all[k];
    fputs("<table class=\"plan\">\n", f);
    head_row(f, titles, nt);
    fputs("<tbody>\n", f);
    for (int i = 0; i < p->nmethods; i++) {
        const plan_method *m = &p->method[i];
        char least[PLAN_CELL_MAX], cu[PLAN_CELL_MAX], lat[PLAN_CELL_MAX];
        char at[PLAN_CELL_MAX], lo[PLAN_CELL_MAX], hi[PLAN_CELL_MAX];
        char iv[2 * PLAN_CELL_MAX + 8];
        plan_method_text(m, least, cu, lat, at);
        plan_interval_text(&m->least_interval, lo, hi);
        snprintf(iv, sizeof iv, "[%s, %s]", lo, hi);
        const char *with[] = {least, iv, cu, lat, at};
        const char *without[] = {least, cu, lat, at};
        mrow(f, m, color_of(color, i), p->samples ? with : without, nt - 1,
             NULL);
    }
    fputs("</tbody>\n</table>\n", f);
    char msg[256];
    snprintf(msg, sizeof msg,
             "Least Gbit/s: per worker link, at the "
             "scenario's latency. Latency limit: the largest one-way latency "
             "up to which CU stays >= %g, at %g x the least bandwidth.",
             p->target_cu, PLAN_LATENCY_MARGIN);
    note(f, msg);
    for (int i = 0; i < p->nmethods; i++) {
        const plan_method *m = &p->method[i];
        char line[128 + SCN_NAME_MAX];
        if (m->bandwidth_dip) {
            snprintf(line, sizeof line,
                     "%s: CU falls somewhere as bandwidth "
                     "grows; the least bandwidth is the first crossing of "
                     "the scan.",
                     m->label[0] ? m->label : m->name);
            note(f, line);
        }
        if (m->latency_rise) {
            snprintf(line, sizeof line,
                     "%s: CU rises somewhere as latency "
                     "grows; the limit is the first crossing of the scan.",
                     m->label[0] ? m->label : m->name);
            note(f, line);
        }
    }
    plan_interval_note(f, p);
    if (p->has_cost) plan_costs(f, p, color);
    if (p->has_grid) plan_energy(f, p, color);
    plan_seeds(f, p, color);
    if (p->sensitivity) plan_sensitivity(f, p, color);
    if (p->train_hours > 0 || p->tokens > 0) plan_trainings(f, p, color);
}

/* ---- training ----------------------------------------------------------- */

void html_train(FILE *f, int n, const char *const *names,
                const cpl_summary *s) {
    static const char *const titles[] = {"method",
                                         "steps",
                                         "eval loss (outer), nats",
                                         "train loss, nats",
                                         "simulated time",
                                         "simulated CU",
                                         "WAN bytes (simulated model)",
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
        if (isnan(s[i].target_loss)) snprintf(tg, sizeof tg, "-");
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
