/*
 * html_sum.c -- the summary box that opens the report page (html.h:
 * html_summary): the decision first, in the plan's own sentences
 * (plan_summary_text), and what the coupled small-model runs say about
 * quality, so that a reader who stops after one screen has the answer
 * and its caveats; and the CU figure's references to the plan
 * (html_cu_references: the target line, the option bought).
 */
#include "sim/study/html.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void item(FILE *f, const char *text) {
    if (!*text) return;
    fputs("<li>", f);
    html_escape(f, text);
    fputs("</li>\n", f);
}

/* Do the runs all end at one step? */
static int same_steps(const html_summary_part *p) {
    for (int t = 1; t < p->ntrain; t++)
        if (p->train[t].last.step != p->train[0].last.step) return 0;
    return 1;
}

/* What the coupled runs say about the loss, per method: at equal steps
 * (the last one, when all end there) and at equal simulated time. */
static void quality(FILE *f, const html_summary_part *p) {
    if (!p->ntrain) {
        item(f, "Quality: not assessed (the scenario has no train section, "
                "so no small model was trained; the plan is about time and "
                "money, not loss).");
        return;
    }
    char b[2048];
    int k, eq = same_steps(p);
    if (eq)
        k = snprintf(b, sizeof b,
                     "Quality, eval loss (nats) at equal steps "
                     "(%lld):",
                     (long long)p->train[0].last.step);
    else
        k = snprintf(b, sizeof b,
                     "Quality, eval loss (nats) at the last "
                     "step of each run:");
    for (int t = 0; t < p->ntrain && k > 0 && (size_t)k < sizeof b; t++) {
        k += snprintf(b + k, sizeof b - k, "%s %s %.4f", t ? ";" : "",
                      p->train_label[t], p->train[t].last.eval_loss);
        if (!eq && k > 0 && (size_t)k < sizeof b)
            k += snprintf(b + k, sizeof b - k, " (step %lld)",
                          (long long)p->train[t].last.step);
    }
    if (k > 0 && (size_t)k < sizeof b && isfinite(p->same_time_s))
        k += snprintf(b + k, sizeof b - k,
                      ". At equal simulated time (%.6g s, the shortest run's "
                      "end):",
                      p->same_time_s);
    for (int t = 0; isfinite(p->same_time_s) && t < p->ntrain && k > 0 &&
                    (size_t)k < sizeof b;
         t++)
        k += isnan(p->loss_at_time[t])
                 ? snprintf(b + k, sizeof b - k, "%s %s not evaluated yet",
                            t ? ";" : "", p->train_label[t])
                 : snprintf(b + k, sizeof b - k, "%s %s %.4f", t ? ";" : "",
                            p->train_label[t], p->loss_at_time[t]);
    if (k > 0 && (size_t)k < sizeof b)
        snprintf(b + k, sizeof b - k,
                 ". This is the loss of the small model of the train section "
                 "at the simulated instants, not of the planned model.");
    item(f, b);
}

int html_cu_references(const plan_result *p, double x0, double x1,
                       gnuplot_curve *g, gnuplot_style *st, double ref[6],
                       char *title, size_t n) {
    int k = 0;
    ref[0] = x0, ref[1] = x1;
    ref[2] = ref[3] = 100 * p->target_cu;
    snprintf(title, n, "target CU %g", p->target_cu);
    g[k++] = (gnuplot_curve){title, 2, ref, ref + 2, 1};
    const plan_rec *x = &p->rec;
    if ((x->status == PLAN_REC_BUY || x->status == PLAN_REC_LEAST) &&
        x->option >= 0) {
        const plan_option *o = &p->method[x->method].option[x->option];
        ref[4] = o->gbps, ref[5] = 100 * o->cu;
        size_t len = strlen(title) + 1;
        snprintf(title + len, n - len, "buy: %.4g Gbit/s", o->gbps);
        st[k] = (gnuplot_style){"#000000", 1};
        g[k++] = (gnuplot_curve){title + len, 1, ref + 4, ref + 5, 0};
    }
    return k;
}

void html_summary(FILE *f, int n, const html_summary_part *part) {
    fputs("<section id=\"summary\">\n<h2>Summary: what to buy</h2>\n", f);
    for (int k = 0; k < n; k++) {
        const html_summary_part *p = &part[k];
        plan_summary s;
        plan_summary_text(p->plan, &s);
        if (n > 1) {
            fputs("<h3>", f);
            html_escape(f, p->path);
            fputs("</h3>\n", f);
        }
        fputs("<p class=\"buy\">", f);
        html_escape(f, s.buy);
        fputs("</p>\n<ul>\n", f);
        item(f, s.runner);
        item(f, s.margin);
        item(f, s.headroom);
        item(f, s.training);
        quality(f, p);
        fputs("</ul>\n", f);
    }
    fputs("<p class=\"note\">How each figure was found, and what was "
          "assumed, follows; the assumptions are at the end of each "
          "scenario's part.</p>\n</section>\n",
          f);
}
