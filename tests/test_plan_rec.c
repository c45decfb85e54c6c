/*
 * test_plan_rec.c -- what the plan recommends buying (plan_recommend and
 * the runs at the option bought), worked by hand on test_plan.c's
 * closed-form scenario, and the cost file's "links" and "currency" with
 * their exact messages.
 *
 * tests/data/table/one_layer_dp.json: one layer (no buckets to matter),
 * DP, two workers, 0.1 s steps, a ring all-reduce of S = 2e6 bytes that
 * nothing overlaps, so CU(b) = 0.1 / (0.1 + 0.016 / b) at b Gbit/s (and
 * 0.1 / (0.1 + 0.016 / (0.6 b)) at efficiency 0.6); the least bandwidth
 * for CU 0.95 is 3.04 Gbit/s.  Priced per worker link (2 links), 1024
 * accelerators at 2.5 per hour: C = 1024 x 2.5 x 730 = 1,868,800 a month
 * of compute, busy CU x C, idle (1 - CU) x C; the monthly total is WAN +
 * C and a month of work costs that / CU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/base/msg.h"
#include "sim/study/plan.h"

#define DATA "tests/data/table/"
#define C_MONTH (1024 * 2.5 * 730)

static void ck_rel(double got, double want, double tol) {
    ck_assert_msg(fabs(got - want) <= tol * fabs(want), "got %.10g, want %.10g",
                  got, want);
}

static double cu_of(double b) {
    return 0.1 / (0.1 + 0.016 / b);
}

static plan_cost cost_of(const char *text) {
    plan_cost c;
    char err[512];
    ck_assert_msg(!plan_cost_parse(text, "c.json", &c, err, sizeof err), "%s",
                  err);
    return c;
}

/* The plan of path at target with prices c (NULL: none) and x. */
static plan_result *plan_c(const char *path, double target, const plan_cost *c,
                           const plan_extra *x) {
    char err[1024];
    plan_spec spec = {path, NULL, 0, NULL, 0, target, c, 2, 0, NULL};
    plan_result *r = malloc(sizeof *r);
    ck_assert_ptr_nonnull(r);
    int rc = plan_compute_extra(&spec, x, NULL, NULL, r, err, sizeof err);
    ck_assert_msg(rc == 0, "plan: %s", err);
    return r;
}

#define ACC "\"accelerator_usd_per_hour\": 2.5, \"accelerators\": 1024"

/* 5 Gbit/s for 900 a link and 10 Gbit/s for 1000 both suffice (>= 3.04).
 *   5:  CU 0.968992; total 1,800 + C; a month of work 1,930,459.2
 *   10: CU 0.984252; total 2,000 + C; a month of work 1,900,732.8
 * The faster link is cheaper in total: it leaves 1.5% less compute idle,
 * worth more than its 200 a month.  The runner-up is 5 Gbit/s (cost). */
START_TEST(faster_link_cheaper_in_total) {
    plan_cost c = cost_of("{\"links\": [{\"gbps\": 1, \"usd_month\": 100}, "
                          "{\"gbps\": 5, \"usd_month\": 900}, {\"gbps\": 10, "
                          "\"usd_month\": 1000}], " ACC "}");
    ck_assert(c.has_links);
    ck_assert_str_eq(c.currency, "USD");
    plan_result *r = plan_c(DATA "one_layer_dp.json", 0.95, &c, NULL);
    const plan_method *m = &r->method[0];
    ck_assert_int_eq(m->noptions, 4); /* 1, 3.04 (least), 5, 10 */
    const double gbps[] = {1, 3.04, 5, 10}, usd[] = {100, NAN, 900, 1000};
    for (int k = 0; k < 4; k++) {
        const plan_option *o = &m->option[k];
        double cu = cu_of(gbps[k]);
        ck_rel(o->gbps, gbps[k], 1e-5);
        ck_rel(o->cu, cu, 1e-5);
        ck_assert_int_eq(o->listed, k != 1);
        ck_rel(o->busy_usd, cu * C_MONTH, 1e-5);
        ck_rel(o->idle_usd, (1 - cu) * C_MONTH, 1e-4);
        if (k == 1) { /* not for sale: no WAN price */
            ck_assert(isnan(o->wan_usd) && isnan(o->bill_usd));
            continue;
        }
        ck_assert_double_eq(o->wan_usd, 2 * usd[k]);
        ck_rel(o->bill_usd, 2 * usd[k] + C_MONTH, 1e-12);
        ck_rel(o->bill_usd, o->wan_usd + o->busy_usd + o->idle_usd, 1e-12);
        ck_rel(o->work_usd, (2 * usd[k] + C_MONTH) / cu, 1e-5);
    }
    ck_rel(m->option[2].work_usd, 1930459.2, 1e-6);
    ck_rel(m->option[3].work_usd, 1900732.8, 1e-6);
    const plan_rec *x = &r->rec;
    ck_assert_int_eq(x->status, PLAN_REC_BUY);
    ck_assert_int_eq(x->method, 0);
    ck_assert_double_eq(m->option[x->option].gbps, 10);
    ck_assert_int_eq(x->runner_method, 0);
    ck_assert_double_eq(m->option[x->runner_option].gbps, 5);
    ck_assert_int_eq(x->lost, PLAN_LOST_COST);
    /* at the option: no latency, so x2 changes nothing; efficiency 0.6 */
    ck_assert(x->has_at[PLAN_AT_BASE] && x->has_at[PLAN_AT_LATENCY] &&
              x->has_at[PLAN_AT_EFFICIENCY] && !x->has_at[PLAN_AT_MTBF]);
    ck_rel(x->at[PLAN_AT_BASE].cu, cu_of(10), 1e-6);
    ck_rel(x->at[PLAN_AT_LATENCY].cu, cu_of(10), 1e-6);
    ck_rel(x->at[PLAN_AT_EFFICIENCY].cu, cu_of(6), 1e-6);
    /* headroom: a ring of two sends S = 2e6 bytes per worker and step
     * (2 steps of S/2), 20 steps over the wall 20 (0.1 + 0.0016) s:
     * 2e6 x 8 / 0.1016 / 1e9 Gbit/s; the peak is the line rate */
    ck_rel(x->at[PLAN_AT_BASE].avg_link_gbps, 2e6 * 8 / 0.1016 / 1e9, 1e-6);
    ck_rel(x->at[PLAN_AT_BASE].peak_link_gbps, 10, 1e-9);
    plan_summary s;
    plan_summary_text(r, &s);
    ck_assert_msg(strstr(s.buy, "Buy 10 Gbit/s per worker link (USD "
                                "1,000/month per link): Data-parallel"),
                  "%s", s.buy);
    ck_assert_msg(strstr(s.buy, "total USD 1,870,800/month"), "%s", s.buy);
    ck_assert_msg(strstr(s.runner, "at 5 Gbit/s, which costs USD 29,726 more"),
                  "%s", s.runner);
    free(r);
}
END_TEST

/* When the faster link costs far more (100,000 a link), the slower
 * sufficient one wins: 5 Gbit/s. */
START_TEST(slower_link_cheaper) {
    plan_cost c = cost_of("{\"links\": [{\"gbps\": 5, \"usd_month\": 900}, "
                          "{\"gbps\": 10, \"usd_month\": 100000}], "
                          "\"currency\": \"EUR\", " ACC "}");
    plan_result *r = plan_c(DATA "one_layer_dp.json", 0.95, &c, NULL);
    const plan_rec *x = &r->rec;
    ck_assert_int_eq(x->status, PLAN_REC_BUY);
    ck_assert_double_eq(r->method[0].option[x->option].gbps, 5);
    plan_summary s;
    plan_summary_text(r, &s);
    ck_assert_msg(strstr(s.buy, "(EUR 900/month per link)"), "%s", s.buy);
    free(r);
}
END_TEST

/* Nothing listed reaches 3.04 Gbit/s: the fastest on the list (2 Gbit/s,
 * CU 0.1 / 0.108 = 0.925926), short by 0.024074. */
START_TEST(none_sufficient) {
    plan_cost c = cost_of("{\"links\": [{\"gbps\": 1, \"usd_month\": 100}, "
                          "{\"gbps\": 2, \"usd_month\": 150}], " ACC "}");
    plan_result *r = plan_c(DATA "one_layer_dp.json", 0.95, &c, NULL);
    const plan_rec *x = &r->rec;
    ck_assert_int_eq(x->status, PLAN_REC_SHORT);
    const plan_option *o = &r->method[0].option[x->option];
    ck_assert_double_eq(o->gbps, 2);
    ck_rel(o->cu, 0.1 / 0.108, 1e-6);
    ck_assert(!x->has_at[PLAN_AT_BASE]);
    plan_summary s;
    plan_summary_text(r, &s);
    ck_assert_msg(strstr(s.buy, "No listed option is enough: the fastest on "
                                "the list, 2 Gbit/s per worker link, gives "
                                "Data-parallel, bf16 gradients CU 0.9259, "
                                "short of the target 0.95 by 0.0241; it "
                                "needs 3.04 Gbit/s."),
                  "%s", s.buy);
    free(r);
}
END_TEST

/* Without links the priced bandwidths_gbps compete, and the least (3.04,
 * a computed speed nobody sells) never wins: of 1 and 10 Gbit/s only 10
 * suffices.  Without prices the least is the answer. */
START_TEST(listed_bandwidth_not_the_least) {
    plan_cost c = cost_of("{\"wan_usd_per_gbps_month\": 200, " ACC
                          ", \"bandwidths_gbps\": [1, 4, 10]}");
    plan_result *r = plan_c(DATA "one_layer_dp.json", 0.95, &c, NULL);
    const plan_rec *x = &r->rec;
    const plan_method *m = &r->method[0];
    ck_assert_int_eq(x->status, PLAN_REC_BUY);
    ck_assert(m->option[x->option].listed);
    /* 4: (1,600 + C) / 0.961538 = 1,945,216; 10: (4,000 + C) / 0.984252
     * = 1,902,764.8: 10 */
    ck_assert_double_eq(m->option[x->option].gbps, 10);
    ck_rel(m->option[x->option].work_usd, (4000 + C_MONTH) / cu_of(10), 1e-9);
    for (int k = 0; k < m->noptions; k++) /* the marks: listed ones only */
        ck_assert(!m->option[k].cheapest_method || m->option[k].listed);
    free(r);
    r = plan_c(DATA "one_layer_dp.json", 0.95, NULL,
               &(plan_extra){.explain = 1});
    ck_assert_int_eq(r->rec.status, PLAN_REC_LEAST);
    ck_rel(r->method[0].option[r->rec.option].gbps, 3.04, 1e-5);
    free(r);
}
END_TEST

/* Two methods: the slow variant (0.2 s steps) needs 1.52 Gbit/s, the fast
 * one 3.04.  Of 1, 2 and 10 Gbit/s a month of work costs
 *   slow at 2:  (800 + C) / (0.2 / 0.208)     = 1,944,384
 *   slow at 10: (4,000 + C) / (0.2 / 0.2016)  = 1,887,782.4
 *   fast at 10: (4,000 + C) / (0.1 / 0.1016)  = 1,902,764.8
 * so slow at 10 wins; the runner-up, fast at 10, needs more bandwidth.
 * Their labels are equal, so each carries its variant's name. */
START_TEST(two_methods) {
    plan_cost c = cost_of("{\"wan_usd_per_gbps_month\": 200, " ACC
                          ", \"bandwidths_gbps\": [1, 2, 10]}");
    plan_result *r = plan_c(DATA "variants.json", 0.95, &c, NULL);
    const plan_rec *x = &r->rec;
    ck_assert_str_eq(r->method[0].label,
                     "Data-parallel, bf16 gradients (fast)");
    ck_assert_str_eq(r->method[1].label,
                     "Data-parallel, bf16 gradients (slow)");
    ck_assert_int_eq(x->status, PLAN_REC_BUY);
    ck_assert_int_eq(x->method, 1);
    const plan_option *o = &r->method[1].option[x->option];
    ck_assert_double_eq(o->gbps, 10);
    ck_rel(o->work_usd, 1887782.4, 1e-9);
    ck_assert_int_eq(x->runner_method, 0);
    ck_assert_double_eq(r->method[0].option[x->runner_option].gbps, 10);
    ck_rel(r->method[0].option[x->runner_option].work_usd, 1902764.8, 1e-9);
    ck_assert_int_eq(x->lost, PLAN_LOST_BANDWIDTH);
    plan_summary s;
    plan_summary_text(r, &s);
    ck_assert_msg(strstr(s.runner, "runner-up: Data-parallel, bf16 gradients "
                                   "(fast) at 10 Gbit/s, which needs more "
                                   "bandwidth (3.04 Gbit/s) and costs USD "
                                   "14,982 more per month of work"),
                  "%s", s.runner);
    free(r);
}
END_TEST

/* A training ranks by its whole total: compute over the wall time, so at
 * 10 Gbit/s (shorter) it costs less than at 5. */
START_TEST(training_ranks_by_its_total) {
    plan_cost c = cost_of("{\"links\": [{\"gbps\": 5, \"usd_month\": 900}, "
                          "{\"gbps\": 10, \"usd_month\": 1000}], " ACC "}");
    plan_extra x = {.train_hours = 0.01};
    plan_result *r = plan_c(DATA "one_layer_dp.json", 0.95, &c, &x);
    const plan_rec *rec = &r->rec;
    ck_assert(rec->by_training);
    const plan_method *m = &r->method[0];
    const plan_option *o = &m->option[rec->option];
    ck_assert_double_eq(o->gbps, 10);
    double wall_h = 360 * (0.1 + 0.0016) / 3600;
    ck_rel(o->train.total_usd, 1024 * 2.5 * wall_h + 2000 * wall_h / 730, 1e-7);
    free(r);
}
END_TEST

static void bad_cost(const char *text, const char *want) {
    plan_cost c;
    char err[512];
    ck_assert_int_eq(plan_cost_parse(text, "c.json", &c, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_msg(!strcmp(err, want), "got '%s', want '%s'", err, want);
}

START_TEST(links_and_currency_errors) {
    bad_cost("{\"links\": 5, " ACC "}",
             "c.json:1:11: links: must be an array of 1 to 64 links "
             "(expected [{\"gbps\": G, \"usd_month\": P}, ...])");
    bad_cost("{\"links\": [], " ACC "}",
             "c.json:1:11: links: must be an array of 1 to 64 links "
             "(expected [{\"gbps\": G, \"usd_month\": P}, ...])");
    bad_cost("{\"links\": [3], " ACC "}",
             "c.json:1:12: links[0]: must be an object (expected the keys "
             "gbps, usd_month)");
    bad_cost("{\"links\": [{\"gbps\": 1, \"usd\": 3}], " ACC "}",
             "c.json:1:24: links[0].usd: unknown key (expected one of: gbps, "
             "usd_month)");
    bad_cost("{\"links\": [{\"gbps\": \"1\", \"usd_month\": 3}], " ACC "}",
             "c.json:1:21: links[0].gbps: must be a number (expected a number "
             "in [1e-06, 1000000000])");
    bad_cost("{\"links\": [{\"gbps\": 1, \"usd_month\": -3}], " ACC "}",
             "c.json:1:37: links[0].usd_month: must be a number >= 0, at "
             "most 1e+15 (got -3)");
    bad_cost("{\"links\": [{\"gbps\": 1}], " ACC "}",
             "c.json:1:12: links[0].usd_month: missing (expected gbps, "
             "usd_month)");
    bad_cost("{\"links\": [{\"gbps\": 1, \"gbps\": 2, \"usd_month\": 1}], " ACC
             "}",
             "c.json:1:24: links[0].gbps: duplicate key");
    bad_cost("{\"links\": [{\"gbps\": 10, \"usd_month\": 1}, {\"gbps\": 5, "
             "\"usd_month\": 1}], " ACC "}",
             "c.json:1:51: links[1].gbps: must be more than links[0].gbps "
             "(got 5 after 10: expected the links by increasing speed, each "
             "once)");
    bad_cost("{\"links\": [{\"gbps\": 10, \"usd_month\": 1}, {\"gbps\": 10, "
             "\"usd_month\": 2}], " ACC "}",
             "c.json:1:51: links[1].gbps: must be more than links[0].gbps "
             "(got 10 after 10: expected the links by increasing speed, each "
             "once)");
    bad_cost("{\"links\": [{\"gbps\": 1, \"usd_month\": 1}], "
             "\"bandwidths_gbps\": [1], " ACC "}",
             "c.json:1:42: bandwidths_gbps: not with links (expected either "
             "links, each speed with its price, or wan_usd_per_gbps_month "
             "with bandwidths_gbps)");
    bad_cost("{\"links\": [{\"gbps\": 1, \"usd_month\": 1}], "
             "\"wan_usd_per_gbps_month\": 1, " ACC "}",
             "c.json:1:42: wan_usd_per_gbps_month: not with links (expected "
             "either links, each speed with its price, or "
             "wan_usd_per_gbps_month with bandwidths_gbps)");
    bad_cost("{\"links\": [{\"gbps\": 1, \"usd_month\": 1}], \"currency\": "
             "\"usd\", " ACC "}",
             "c.json:1:54: currency: must be a 3-letter currency code in "
             "capitals (expected e.g. \"USD\", \"EUR\")");
    bad_cost(
        "{\"links\": [{\"gbps\": 1, \"usd_month\": 1}], \"currency\": 3, " ACC
        "}",
        "c.json:1:54: currency: must be a 3-letter currency code in "
        "capitals (expected e.g. \"USD\", \"EUR\")");
    plan_cost c = cost_of("{\"links\": [{\"gbps\": 1, \"usd_month\": 7}, "
                          "{\"gbps\": 2.5, \"usd_month\": 9}], \"currency\": "
                          "\"CHF\", " ACC "}");
    ck_assert_int_eq(c.nbandwidths, 2);
    ck_assert_double_eq(c.bandwidths_gbps[1], 2.5);
    ck_assert_double_eq(c.link_usd_month[1], 9);
    ck_assert_str_eq(c.currency, "CHF");
}
END_TEST

START_TEST(money_as_people_read_it) {
    char b[64];
    const struct {
        double x;
        const char *want;
    } cases[] = {{0, "0"},
                 {-0.2, "0"},
                 {999, "999"},
                 {1000, "1,000"},
                 {12345678, "12,345,678"},
                 {-1234.6, "-1,235"},
                 {999999.5, "1,000,000"},
                 {1e15, "1,000,000,000,000,000"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        plan_thousands(cases[i].x, b, sizeof b);
        ck_assert_str_eq(b, cases[i].want);
    }
    plan_money_text(12345.4, "EUR", b, sizeof b);
    ck_assert_str_eq(b, "EUR 12,345");
    plan_money_text(NAN, "EUR", b, sizeof b);
    ck_assert_str_eq(b, "-");
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("plan_rec");
    TCase *tc = tcase_create("plan_rec");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, faster_link_cheaper_in_total);
    tcase_add_test(tc, slower_link_cheaper);
    tcase_add_test(tc, none_sufficient);
    tcase_add_test(tc, listed_bandwidth_not_the_least);
    tcase_add_test(tc, two_methods);
    tcase_add_test(tc, training_ranks_by_its_total);
    tcase_add_test(tc, links_and_currency_errors);
    tcase_add_test(tc, money_as_people_read_it);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
