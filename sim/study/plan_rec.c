/*
 * plan_rec.c -- what to buy (plan.h: plan_recommend): the option a buyer
 * is told to purchase, the runner-up and why it lost, and the summary's
 * sentences that say so (plan_summary), which `dilosim plan` prints first
 * and `dilosim report` puts in its summary box; with the money as people
 * read it (plan_money_text: "USD 12,345").  No simulation here: the runs
 * at the option bought are plan.c's (plan__at_option).
 */
#include "sim/study/plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void plan_thousands(double x, char *buf, size_t n) {
    char d[64];
    if (!isfinite(x)) {
        snprintf(buf, n, "-");
        return;
    }
    snprintf(d, sizeof d, "%.0f", fabs(x));
    if (!strcmp(d, "0")) x = 0; /* no "-0" */
    size_t len = strlen(d), k = 0;
    char out[96];
    if (x < 0) out[k++] = '-';
    for (size_t i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0) out[k++] = ',';
        out[k++] = d[i];
    }
    out[k] = 0;
    snprintf(buf, n, "%s", out);
}

void plan_money_text(double x, const char *cur, char *buf, size_t n) {
    char t[96];
    plan_thousands(x, t, sizeof t);
    if (!isfinite(x)) snprintf(buf, n, "-");
    else snprintf(buf, n, "%s %s", cur && *cur ? cur : "USD", t);
}

/* ---- the recommendation -------------------------------------------------- */

/* What options compete on: the whole training's total when one is asked
 * (only finished runs compete), else the total of a month of work (the
 * monthly total / CU); INFINITY when it has no price. */
static double rank_of(const plan_result *r, const plan_option *o) {
    double x = r->rec.by_training
                   ? (o->train.run.finished ? o->train.total_usd : INFINITY)
                   : o->work_usd;
    return isnan(x) ? INFINITY : x;
}

/* A listed option bought at a bandwidth >= the method's least. */
static int sufficient(const plan_method *m, const plan_option *o) {
    return o->listed && m->least.status != TABLE_NOT_REACHED &&
           o->gbps >= m->least.v_hi;
}

/* The best sufficient option of the methods but `skip` (and but option
 * skip_k of method skip when skip_k >= 0: then only that method), the
 * least total first, then the lower bandwidth, then the earlier method.
 * Returns 0 when none. */
static int best_of(const plan_result *r, int skip, int skip_k, int *bm,
                   int *bk) {
    double best = INFINITY, bg = INFINITY;
    *bm = *bk = -1;
    for (int m = 0; m < r->nmethods; m++) {
        if (skip_k >= 0 ? m != skip : m == skip) continue;
        const plan_method *pm = &r->method[m];
        for (int k = 0; k < pm->noptions; k++) {
            const plan_option *o = &pm->option[k];
            double x = rank_of(r, o);
            if (k == skip_k || !sufficient(pm, o) || !isfinite(x)) continue;
            if (*bm < 0 || x < best || (x == best && o->gbps < bg)) {
                best = x, bg = o->gbps;
                *bm = m, *bk = k;
            }
        }
    }
    return *bm >= 0;
}

/* The index of a method's least sufficient option, or -1. */
static int least_option(const plan_method *m) {
    for (int k = 0; k < m->noptions; k++)
        if (m->option[k].is_least) return k;
    return -1;
}

/* The fastest listed option of a method, or -1. */
static int fastest_listed(const plan_method *m) {
    int f = -1;
    for (int k = 0; k < m->noptions; k++)
        if (m->option[k].listed) f = k;
    return f;
}

/* Of the methods but `skip`, the one that comes closest to the target:
 * the highest CU at any of its options (the earlier of equal; the first
 * other method when none has an option). */
static int closest_other(const plan_result *r, int skip) {
    int best = -1;
    double cu = -1;
    for (int m = 0; m < r->nmethods; m++) {
        if (m == skip) continue;
        if (best < 0) best = m;
        for (int k = 0; k < r->method[m].noptions; k++)
            if (r->method[m].option[k].cu > cu) {
                cu = r->method[m].option[k].cu;
                best = m;
            }
    }
    return best;
}

/* Nothing listed: the method of the least bandwidth (the earlier of
 * equal ones) and its least; the runner-up the next. */
static void recommend_least(plan_result *r) {
    plan_rec *x = &r->rec;
    for (int pass = 0; pass < 2; pass++)
        for (int m = 0; m < r->nmethods; m++) {
            const plan_method *pm = &r->method[m];
            if (pm->least.status == TABLE_NOT_REACHED ||
                (pass && m == x->method))
                continue;
            int *dm = pass ? &x->runner_method : &x->method;
            if (*dm < 0 || pm->least.v_hi < r->method[*dm].least.v_hi) *dm = m;
        }
    if (x->method < 0) return;
    x->status = PLAN_REC_LEAST;
    x->option = least_option(&r->method[x->method]);
    if (x->runner_method >= 0) {
        x->runner_option = least_option(&r->method[x->runner_method]);
        x->lost = PLAN_LOST_BANDWIDTH;
    } else if (r->nmethods > 1) {
        x->runner_method = closest_other(r, x->method);
        x->lost = PLAN_LOST_TARGET;
    }
}

/* Listed options, none sufficient: the method whose fastest listed
 * option comes closest (the highest CU there, the earlier of equal). */
static void recommend_short(plan_result *r) {
    plan_rec *x = &r->rec;
    for (int m = 0; m < r->nmethods; m++) {
        int k = fastest_listed(&r->method[m]);
        if (k >= 0 &&
            (x->method < 0 || r->method[m].option[k].cu >
                                  r->method[x->method].option[x->option].cu)) {
            x->method = m;
            x->option = k;
        }
    }
    x->status = x->method >= 0 ? PLAN_REC_SHORT : PLAN_REC_NONE;
}

/* The runner-up of a purchase: another method's best, else (one method)
 * the method's next option; a method with no sufficient option loses on
 * the target. */
static void runner_up(plan_result *r) {
    plan_rec *x = &r->rec;
    const plan_method *rm = &r->method[x->method];
    if (r->nmethods == 1) {
        if (best_of(r, x->method, x->option, &x->runner_method,
                    &x->runner_option)) {
            x->lost = PLAN_LOST_COST;
        } else {
            /* the fastest listed option below the least, if any */
            for (int k = 0; k < rm->noptions; k++)
                if (rm->option[k].listed && !sufficient(rm, &rm->option[k]))
                    x->runner_option = k;
            x->runner_method = x->runner_option >= 0 ? 0 : -1;
            x->lost = x->runner_option >= 0 ? PLAN_LOST_TARGET : PLAN_LOST_NONE;
        }
        return;
    }
    if (!best_of(r, x->method, -1, &x->runner_method, &x->runner_option)) {
        x->runner_method = closest_other(r, x->method);
        x->runner_option = -1;
        x->lost = PLAN_LOST_TARGET;
        return;
    }
    const plan_method *om = &r->method[x->runner_method];
    x->lost =
        om->least.v_hi > rm->least.v_hi ? PLAN_LOST_BANDWIDTH : PLAN_LOST_COST;
}

void plan_recommend(plan_result *r) {
    plan_rec *x = &r->rec;
    memset(x, 0, sizeof *x);
    x->method = x->option = x->runner_method = x->runner_option = -1;
    x->by_training = r->has_cost && (r->train_hours > 0 || r->tokens > 0);
    int listed = 0;
    for (int m = 0; m < r->nmethods; m++)
        listed |= fastest_listed(&r->method[m]) >= 0;
    if (!listed) {
        recommend_least(r);
        return;
    }
    if (!best_of(r, -1, -1, &x->method, &x->option)) {
        recommend_short(r);
        return;
    }
    x->status = PLAN_REC_BUY;
    runner_up(r);
}

/* A share in % as people read it: two digits below 10 % (0.48), whole
 * from there (26, 100). */
static const char *pct_text(double share, char b[16]) {
    double p = 100 * share;
    snprintf(b, 16, p < 10 ? "%.2g" : "%.0f", p);
    return b;
}

/* ---- the summary ----------------------------------------------------------- */

const char *plan_link_word(const plan_result *r) {
    return r->has_cost && r->cost.pricing == PLAN_PRICING_LINK
               ? "site-to-site link"
               : "worker link";
}

static const char *cur_of(const plan_result *r) {
    return r->has_cost ? r->cost.currency : "USD";
}

static void summary_buy(const plan_result *r, char *b, size_t n) {
    const plan_rec *x = &r->rec;
    const plan_method *m = &r->method[x->method];
    const plan_option *o = &m->option[x->option];
    char least[PLAN_CELL_MAX], per[64], tot[64];
    plan_least_text(&m->least, least);
    if (x->status == PLAN_REC_LEAST && !r->has_cost) {
        snprintf(b, n,
                 "Buy at least %.4g Gbit/s per %s: %s reaches CU %.4f >= %g "
                 "there (no prices: --cost lists what one can buy).",
                 o->gbps, plan_link_word(r), m->label, o->cu, r->target_cu);
        return;
    }
    plan_money_text(o->wan_usd / m->links, cur_of(r), per, sizeof per);
    plan_money_text(o->bill_usd, cur_of(r), tot, sizeof tot);
    char work[64];
    plan_money_text(o->work_usd, cur_of(r), work, sizeof work);
    int k =
        snprintf(b, n, "Buy %.4g Gbit/s per %s (%s/month per link): ", o->gbps,
                 plan_link_word(r), per);
    if (k < 0 || (size_t)k >= n) return;
    if (x->status == PLAN_REC_LEAST)
        k += snprintf(b + k, n - k,
                      "%s reaches CU %.4f >= %g there, the least that meets "
                      "the target (no listed bandwidth)",
                      m->label, o->cu, r->target_cu);
    else
        k += snprintf(b + k, n - k,
                      "%s reaches CU %.4f >= %g (the least that meets the "
                      "target: %s Gbit/s)",
                      m->label, o->cu, r->target_cu, least);
    if (k < 0 || (size_t)k >= n) return;
    snprintf(b + k, n - k, "; total %s/month (%s per month of work)", tot,
             work);
}

static void summary_short(const plan_result *r, char *b, size_t n) {
    const plan_rec *x = &r->rec;
    if (x->status == PLAN_REC_NONE) {
        snprintf(b, n,
                 "No method reaches CU >= %g at any bandwidth up to %g "
                 "Gbit/s: buy nothing for this target.",
                 r->target_cu, PLAN_MAX_GBPS);
        return;
    }
    const plan_method *m = &r->method[x->method];
    const plan_option *o = &m->option[x->option];
    char least[PLAN_CELL_MAX];
    plan_least_text(&m->least, least);
    snprintf(b, n,
             "No listed option is enough: the fastest on the list, %.4g "
             "Gbit/s per %s, gives %s CU %.4f, short of the target %g by "
             "%.4f; it needs %s Gbit/s.",
             o->gbps, plan_link_word(r), m->label, o->cu, r->target_cu,
             r->target_cu - o->cu, least);
}

static void summary_runner(const plan_result *r, char *b, size_t n) {
    const plan_rec *x = &r->rec;
    b[0] = 0;
    if (x->runner_method < 0) {
        snprintf(b, n, "runner-up: none (one method, no other listed option)");
        return;
    }
    const plan_method *m = &r->method[x->runner_method];
    char least[PLAN_CELL_MAX], more[64];
    plan_least_text(&m->least, least);
    if (x->lost == PLAN_LOST_TARGET && x->runner_option >= 0 &&
        x->runner_method == x->method) {
        const plan_option *o = &m->option[x->runner_option];
        snprintf(b, n,
                 "runner-up: %.4g Gbit/s per %s, which does not reach the "
                 "target (CU %.4f there)",
                 o->gbps, plan_link_word(r), o->cu);
        return;
    }
    if (x->lost == PLAN_LOST_TARGET || x->runner_option < 0) {
        snprintf(b, n,
                 "runner-up: %s, which does not reach the target%s (it needs "
                 "%s Gbit/s)",
                 m->label, r->has_cost ? " on the list" : "", least);
        return;
    }
    const plan_option *o = &m->option[x->runner_option];
    const plan_option *w = &r->method[x->method].option[x->option];
    double d = x->by_training ? o->train.total_usd - w->train.total_usd
                              : o->work_usd - w->work_usd;
    plan_money_text(d, cur_of(r), more, sizeof more);
    if (fabs(d) < 0.5) /* not a whole unit: say so, not "0" */
        snprintf(more, sizeof more, "under %s 1", cur_of(r));
    if (!r->has_cost)
        snprintf(b, n, "runner-up: %s, which needs more bandwidth (%s Gbit/s)",
                 m->label, least);
    else if (x->lost == PLAN_LOST_BANDWIDTH)
        snprintf(b, n,
                 "runner-up: %s at %.4g Gbit/s, which needs more bandwidth "
                 "(%s Gbit/s) and costs %s more %s",
                 m->label, o->gbps, least, more,
                 x->by_training ? "for the training" : "per month of work");
    else
        snprintf(b, n, "runner-up: %s at %.4g Gbit/s, which costs %s more %s",
                 m->label, o->gbps, more,
                 x->by_training ? "for the training" : "per month of work");
}

/* CU at the option under a change, and its margin to the target (sep
 * before it). */
static int margin_part(const plan_result *r, int at, const char *sep,
                       const char *what, char *b, size_t n) {
    if (!r->rec.has_at[at]) return 0;
    double cu = r->rec.at[at].cu;
    int k = snprintf(b, n, "%s%s CU %.4f (%+.4f)", sep, what, cu,
                     cu - r->target_cu);
    return k < 0 || (size_t)k >= n ? 0 : k;
}

void plan_summary_text(const plan_result *r, plan_summary *s) {
    const plan_rec *x = &r->rec;
    memset(s, 0, sizeof *s);
    int buy = x->status == PLAN_REC_BUY || x->status == PLAN_REC_LEAST;
    if (buy) summary_buy(r, s->buy, sizeof s->buy);
    else summary_short(r, s->buy, sizeof s->buy);
    if (x->status != PLAN_REC_SHORT && x->status != PLAN_REC_NONE)
        summary_runner(r, s->runner, sizeof s->runner);
    if (!buy || x->option < 0 || !x->has_at[PLAN_AT_BASE]) return;
    const plan_option *o = &r->method[x->method].option[x->option];
    char mtbf[48];
    snprintf(mtbf, sizeof mtbf, "failures at MTBF %g h", r->mtbf_hours);
    int k = snprintf(s->margin, sizeof s->margin,
                     "margin to the target at %.4g Gbit/s", o->gbps);
    k += margin_part(r, PLAN_AT_LATENCY, ": ", "every latency x2",
                     s->margin + k, sizeof s->margin - k);
    k += margin_part(r, PLAN_AT_EFFICIENCY, "; ", "efficiency 0.6",
                     s->margin + k, sizeof s->margin - k);
    margin_part(r, PLAN_AT_MTBF, "; ", mtbf, s->margin + k,
                sizeof s->margin - k);
    const plan_run *b = &r->rec.at[PLAN_AT_BASE];
    char p1[16], p2[16];
    if (b->peak_link_gbps == 0) /* one worker, or no sync in the run */
        snprintf(s->headroom, sizeof s->headroom,
                 "link load: nothing crosses the WAN in this run (any "
                 "bandwidth does)");
    else
        snprintf(s->headroom, sizeof s->headroom,
                 "link load at %.4g Gbit/s: average %.4g Gbit/s (%s%%), "
                 "peak %.4g Gbit/s (%s%%)",
                 o->gbps, b->avg_link_gbps,
                 pct_text(b->avg_link_gbps / o->gbps, p1), b->peak_link_gbps,
                 pct_text(b->peak_link_gbps / o->gbps, p2));
    if (r->train_hours > 0 || r->tokens > 0) {
        char tot[64] = "";
        if (r->has_cost)
            plan_money_text(o->train.total_usd, cur_of(r), tot, sizeof tot);
        snprintf(s->training, sizeof s->training,
                 "whole training at %.4g Gbit/s: %.4g h wall, CU %.4f%s%s%s",
                 o->gbps, o->train.wall_h, o->train.run.cu,
                 *tot ? ", total " : "", tot,
                 o->train.run.finished ? "" : " (not finished)");
    }
}
