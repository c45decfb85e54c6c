/*
 * html.h -- the page of `dilosim report`: one self-contained HTML file
 * (inline style sheet, inline SVG figures, no script, nothing fetched),
 * and the tables of a scenario's assumptions and results.
 *
 * Writers only: every function writes to the caller's stream (a file
 * opened through outfile.h) and simulates nothing.  All text from
 * outside (file names, variant names, descriptions, messages) goes
 * through html_escape; numbers are formatted here.
 */
#ifndef DILOSIM_HTML_H
#define DILOSIM_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "sim/adapter/coupled.h"
#include "sim/out/gnuplot.h"
#include "sim/study/plan.h"
#include "sim/engine/run.h"
#include "sim/config/scenario.h"
#include "sim/study/table.h"

/* Writes s as HTML text, safe in element content and in quoted attribute
 * values: & < > " ' become entities; bytes that are not valid UTF-8, and
 * control characters other than tab, line feed and carriage return (C0,
 * DEL, C1), become U+FFFD (&#xFFFD;).  s NULL writes nothing. */
void html_escape(FILE *f, const char *s);

/* An SVG document (gnuplot's) made ready to sit inline in the page:
 * whatever comes before the <svg element (the XML declaration, a
 * DOCTYPE) is dropped, and every id, href="#..." and url(#...) gets
 * `prefix` in front, so that several figures in one page keep distinct
 * ids.  *out is malloc'ed.  Returns 0, or MSG_EFAIL with a message when
 * the text holds no <svg element or holds a <script> (a page without
 * scripts is promised), MSG_ENOMEM. */
int html_svg_inline(const char *svg, const char *prefix, char **out, char *err,
                    size_t errlen);

/* The page up to <body> (doctype, charset, title, the style sheet), and
 * its end. */
void html_begin(FILE *f, const char *title);
void html_end(FILE *f);

/* A <figure>: svg (from html_svg_inline, written as is) and a caption
 * (escaped). */
void html_figure(FILE *f, const char *svg, const char *caption);

/* The assumptions of n variants (names[i], their loaded configs cfg[i]):
 * one row per assumption, one column per variant; a row on which every
 * variant agrees is one cell across them.  The rows say what the run
 * uses: the model and step time; workers, speeds, stragglers; the links,
 * the latency (per worker, or the matrix: whole up to 8 workers, else
 * its least and largest value), the Gbit, the all-reduce and stream
 * order, completion, transport (with TCP's initial window and restart),
 * window, efficiency and step overhead; the method's parameters as the
 * run normalises them; faults; steps, seed and the train section.  The
 * ring order shows only when a variant sets one, DP's buckets when a
 * variant is DP, the outer state's offload when a variant offloads it.
 * train[i] is variant i's train section (train NULL: none has one). */
void html_assumptions(FILE *f, int n, const char *const *names,
                      const scn_config *cfg, const scn_train *train);

/* The bandwidth each variant needs per CU threshold (table_compute's
 * result over grid[0..npoints-1]): one row per variant, one column per
 * threshold, the first grid value reaching it (the paper's convention)
 * above the exact crossing.  A row whose name is names[i] (i < n) is
 * headed humans[i], the name people read; names may be NULL. */
void html_thresholds(FILE *f, const table_result *t, const double *grid,
                     int npoints, int n, const char *const *names,
                     const char *const *humans);

/* The bytes of n runs (names[i], r[i]): syncs, bytes on the WAN (all
 * workers, per worker, against the least of the runs), wall time, CU. */
void html_bytes(FILE *f, int n, const char *const *names, const run_result *r);

/* A plan (plan_compute's result): the least bandwidth, CU there, the
 * latency limit; with a fit, the least bandwidth's [5%, 95%] and what it
 * means; with prices, the cost table and the cheapest choice; with
 * seeds, CU over them at each option and the least bandwidth of its 5th
 * percentile. */
void html_plan(FILE *f, const plan_result *p);

/* html_plan with each method's colour (color[i] "#rrggbb" of method i, a
 * swatch beside its name in every table; NULL: none); with
 * --sensitivity the least bandwidth under each change, with a training
 * its table. */
void html_plan_styled(FILE *f, const plan_result *p, const char *const *color);

/* One scenario of the summary box (html_summary). */
typedef struct {
    const char *path;
    const plan_result *plan;
    int ntrain; /* coupled small-model runs (the train section) */
    const char *const *train_label;
    const cpl_summary *train;   /* ntrain */
    double same_time_s;         /* the simulated time every run reached */
    const double *loss_at_time; /* ntrain: eval loss at same_time_s */
} html_summary_part;

/* The summary box that opens the page (<section id="summary">), for n
 * scenarios: what to buy and why (plan_summary_text), the runner-up, the
 * margin to the target at the option with every latency x2 and at
 * efficiency 0.6, the links' load there, the training, and what the
 * coupled small-model runs say about the loss at equal steps and at equal
 * simulated time (of a small model, not of the planned one), or that
 * quality is not assessed. */
void html_summary(FILE *f, int n, const html_summary_part *part);

/* The coupled runs of n variants (names[i], s[i]): steps, losses, the
 * simulated time and utilization, bytes, the target. */
void html_train(FILE *f, int n, const char *const *names, const cpl_summary *s);

/* The CU figure's references to plan p, into g[] and st[] (room for 2):
 * the target as a dashed line from x0 to x1 Gbit/s, and a black point at
 * the bandwidth bought and its CU (none without a recommendation), CU in
 * percent; ref[6] holds their points, title (n bytes) their legends.
 * Returns how many curves were written. */
int html_cu_references(const plan_result *p, double x0, double x1,
                       gnuplot_curve *g, gnuplot_style *st, double ref[6],
                       char *title, size_t n);

/* A number as people read it: "%.4g" without the exponent's "+" and
 * leading zeros ("1e9", "2.5e-05" -> "2.5e-5"), "unbounded" for
 * infinity.  Returns buf. */
#define HTML_NUM_MAX 40
const char *html_number(double x, char buf[HTML_NUM_MAX]);

/* Bytes as "4.00 TB" (SI: kB, MB, GB, TB, PB, 3 significant digits;
 * "812 B" below 1000).  Returns buf. */
const char *html_bytes_text(double bytes, char buf[HTML_NUM_MAX]);

#endif
