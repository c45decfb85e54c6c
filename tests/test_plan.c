/*
 * test_plan.c -- least bandwidth, latency limit and costs against closed
 * forms and hand-computed prices.
 *
 * The scenario is test_table.c's (tests/data/table/one_layer_dp.json):
 * one layer, DP, two workers, t = 0.1 s steps, a ring all-reduce of
 * S = 2e6 bytes after each step.  With one-way latency l and B bytes/s the
 * ring takes 2 (l + S/2/B), so
 *
 *     CU = t / (t + 2 l + S*8 / (b*1e9))      (b in Gbit/s)
 *
 * the least bandwidth for CU c is b* = S*8*c / (t*(1-c)*1e9) (3.04 Gbit/s
 * for 0.95) and at b1 = 1.05 b* the latency limit is
 *
 *     l* = (t*(1-c)/c - S*8/(b1*1e9)) / 2.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "fifo_feeder.h"
#include "fork_runner.h"
#include "../models/msg.h"
#include "../sim/plan.h"

#define DATA "tests/data/table/"

/* plan_compute through runner (NULL: threads). */
static plan_result *plan_on(const char *path, double target, const char *cost,
                            const table_runner *runner) {
    plan_cost c;
    char err[1024];
    if (cost)
        ck_assert_msg(!plan_cost_load(cost, &c, err, sizeof err), "%s", err);
    plan_spec spec = {path, NULL, 0, NULL, 0, target, cost ? &c : NULL, 2, 0,
                      runner};
    plan_result *r = malloc(sizeof *r);
    ck_assert_ptr_nonnull(r);
    int rc = plan_compute(&spec, r, err, sizeof err);
    ck_assert_msg(rc == 0, "plan: %s", err);
    return r;
}

static plan_result *plan(const char *path, double target, const char *cost) {
    return plan_on(path, target, cost, NULL);
}

static void ck_rel(double got, double want, double tol) {
    ck_assert_msg(fabs(got / want - 1) <= tol, "%.10g, expected %.10g", got,
                  want);
}

START_TEST(least_bandwidth_closed_form) {
    plan_result *r = plan(DATA "one_layer_dp.json", 0.95, NULL);
    ck_assert_int_eq(r->nmethods, 1);
    const plan_method *m = &r->method[0];
    ck_assert_str_eq(m->name, "dp");
    ck_assert_int_eq(m->workers, 2);
    ck_assert_int_eq(m->least.status, TABLE_FOUND);
    ck_rel(m->least.v_hi, 2e6 * 8 * 0.95 / (0.1 * 0.05 * 1e9), 1e-5);
    ck_assert(m->least.cu_hi >= 0.95);
    ck_assert_int_eq(r->best_method, -1);
    free(r);
}
END_TEST

START_TEST(latency_limit_closed_form) {
    plan_result *r = plan(DATA "one_layer_dp.json", 0.95, NULL);
    const plan_method *m = &r->method[0];
    double b1 = m->latency_gbps, t = 0.1, c = 0.95;
    ck_rel(b1, 1.05 * 3.04, 1e-5);
    double l_ms = 1e3 * (t * (1 - c) / c - 2e6 * 8 / (b1 * 1e9)) / 2;
    ck_assert_int_eq(m->latency.status, TABLE_FOUND);
    ck_rel(m->latency.v_hi, l_ms, 1e-4); /* about 0.1253 ms */
    ck_assert(m->latency.cu_hi >= c);
    free(r);
}
END_TEST

/* A low target: 0.01 Gbit/s already reaches it (CU 0.1/1.7), so the
 * latency limit is taken at 0.0105 Gbit/s: l* = (t/c - t - S*8/b1) / 2 =
 * 438 ms for c = 0.04; for c = 0.02 even 1000 ms is fine. */
START_TEST(ends_of_the_ranges) {
    plan_result *r = plan(DATA "one_layer_dp.json", 0.04, NULL);
    const plan_method *m = &r->method[0];
    ck_assert_int_eq(m->least.status, TABLE_AT_START);
    ck_assert_double_eq(m->least.v_hi, PLAN_MIN_GBPS);
    ck_rel(m->least.cu_hi, 0.1 / 1.7, 1e-6);
    ck_assert_int_eq(m->latency.status, TABLE_FOUND);
    double b1 = 1.05 * PLAN_MIN_GBPS;
    ck_rel(m->latency.v_hi, 1e3 * (0.1 / 0.04 - 0.1 - 1.6e7 / (b1 * 1e9)) / 2,
           1e-5);
    free(r);
    r = plan(DATA "one_layer_dp.json", 0.02, NULL);
    ck_assert_int_eq(r->method[0].latency.status, TABLE_AT_START);
    ck_assert_double_eq(r->method[0].latency.v_hi, PLAN_MAX_LATENCY_MS);
    free(r);
}
END_TEST

START_TEST(unreachable_target) {
    plan_result *r = plan(DATA "one_layer_dp.json", 1.0, DATA "cost.json");
    const plan_method *m = &r->method[0];
    ck_assert_int_eq(m->least.status, TABLE_NOT_REACHED);
    ck_assert_int_eq(m->latency.status, TABLE_NOT_REACHED);
    ck_assert(isnan(m->latency_gbps));
    ck_assert_int_eq(m->noptions, 2); /* only the listed bandwidths */
    ck_assert(!m->option[0].is_least && !m->option[1].is_least);
    free(r);
}
END_TEST

/* cost.json: 200 USD per Gbit/s per worker link, 1024 accelerators at
 * 2.5 USD/h; 1024 * 2.5 * 730 = 1,868,800 USD per month of compute.
 *   1 Gbit/s:    CU = 0.1/0.116  = 0.862069; WAN 1*2*200 = 400;
 *                idle 0.016/0.116 * 1,868,800 = 257,765.52; total 258,165.52
 *   3.04 (least): CU = 0.95;                  WAN 3.04*2*200 = 1,216;
 *                idle 0.05 * 1,868,800 = 93,440;           total  94,656
 *   10 Gbit/s:   CU = 0.1/0.1016 = 0.984252;  WAN 10*2*200 = 4,000;
 *                idle 0.0016/0.1016 * 1,868,800 = 29,429.92; total 33,429.92
 * so 10 Gbit/s is the cheapest. */
START_TEST(cheapest_option_by_hand) {
    plan_result *r = plan(DATA "one_layer_dp.json", 0.95, DATA "cost.json");
    const plan_method *m = &r->method[0];
    ck_assert_int_eq(m->noptions, 3);
    const double gbps[] = {1, 3.04, 10}, wan[] = {400, 1216, 4000},
                 idle[] = {257765.52, 93440, 29429.92},
                 total[] = {258165.52, 94656, 33429.92};
    for (int k = 0; k < 3; k++) {
        const plan_option *o = &m->option[k];
        ck_rel(o->gbps, gbps[k], 1e-5);
        ck_rel(o->wan_usd, wan[k], 1e-5);
        ck_rel(o->idle_usd, idle[k], 1e-5);
        ck_rel(o->total_usd, total[k], 1e-5);
        ck_assert_int_eq(o->is_least, k == 1);
        ck_assert_int_eq(o->cheapest_method, k == 2);
        ck_assert_int_eq(o->cheapest_overall, k == 2);
    }
    ck_assert_int_eq(r->best_method, 0);
    ck_assert_int_eq(r->best_option, 2);
    free(r);
}
END_TEST

/* With a 0.2 s step (variant "slow") 10 Gbit/s idles 0.0016/0.2016 of the
 * compute: 14,831.75 + 4,000 = 18,831.75 USD, cheaper than the fast
 * variant's 33,429.92: the overall choice. */
START_TEST(cheapest_method_by_hand) {
    plan_result *r = plan(DATA "variants.json", 0.95, DATA "cost.json");
    ck_assert_int_eq(r->nmethods, 2);
    ck_assert_str_eq(r->method[1].name, "slow");
    ck_assert_int_eq(r->best_method, 1);
    const plan_option *o = &r->method[1].option[r->best_option];
    ck_assert_double_eq(o->gbps, 10);
    ck_rel(o->total_usd, 18831.75, 1e-5);
    ck_assert(o->cheapest_overall && o->cheapest_method);
    ck_assert(!r->method[0].option[2].cheapest_overall);
    ck_assert(r->method[0].option[2].cheapest_method);
    ck_rel(r->method[1].least.v_hi, 1.52, 1e-5);
    free(r);
}
END_TEST

/* Through a runner whose tasks run in child processes, last first
 * (fork_runner.h, as on other MPI ranks): the same plan as on threads;
 * every search's batches went through it (the bandwidth scan and its
 * solve, the latency scan and its solves, the priced bandwidths). */
START_TEST(a_runner_gives_the_same_plan) {
    int batches = 0;
    table_runner fork = {fork_table_run, &batches};
    plan_result *a = plan(DATA "variants.json", 0.95, DATA "cost.json");
    plan_result *b = plan_on(DATA "variants.json", 0.95, DATA "cost.json",
                             &fork);
    ck_assert_int_eq(batches, 5);
    ck_assert_int_eq(a->nmethods, b->nmethods);
    ck_assert_int_eq(a->best_method, b->best_method);
    ck_assert_int_eq(a->best_option, b->best_option);
    for (int m = 0; m < a->nmethods; m++) {
        const plan_method *x = &a->method[m], *y = &b->method[m];
        ck_assert_int_eq(x->least.status, y->least.status);
        ck_assert_double_eq(x->least.v_hi, y->least.v_hi);
        ck_assert_double_eq(x->least.cu_hi, y->least.cu_hi);
        ck_assert_int_eq(x->latency.status, y->latency.status);
        ck_assert_double_eq(x->latency.v_hi, y->latency.v_hi);
        ck_assert_int_eq(x->latency_rise, y->latency_rise);
        ck_assert_int_eq(x->bandwidth_dip, y->bandwidth_dip);
        ck_assert_int_eq(x->noptions, y->noptions);
        for (int k = 0; k < x->noptions; k++) {
            ck_assert_double_eq(x->option[k].cu, y->option[k].cu);
            ck_assert_double_eq(x->option[k].total_usd, y->option[k].total_usd);
        }
    }
    free(a);
    free(b);
}
END_TEST

static void bad_cost(const char *text, const char *want) {
    plan_cost c;
    char err[512];
    ck_assert_int_eq(plan_cost_parse(text, "c.json", &c, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_msg(strstr(err, want), "'%s' not in '%s'", want, err);
}

/* The scenario is read and parsed once per method (it used to be read at
 * every one of the plan's ~140 simulations): from a FIFO, which can be
 * read once, the plan is the plan of the file and its writer saw one
 * reader. */
START_TEST(scenario_read_once) {
    static char text[65536];
    feeder_read_text(DATA "one_layer_dp.json", text, sizeof text);
    const char *texts[] = {text};
    feeder f;
    feeder_start(&f, "one_layer_dp.json", texts, 1);
    plan_result *from_fifo = plan(f.path, 0.95, NULL);
    ck_assert_int_eq(feeder_stop(&f), 1);
    plan_result *from_file = plan(DATA "one_layer_dp.json", 0.95, NULL);
    ck_assert_int_eq(from_fifo->method[0].least.status, TABLE_FOUND);
    ck_assert_double_eq(from_fifo->method[0].least.v_hi,
                        from_file->method[0].least.v_hi);
    ck_assert_double_eq(from_fifo->method[0].latency.v_hi,
                        from_file->method[0].latency.v_hi);
    free(from_fifo);
    free(from_file);
}
END_TEST

/* Defect (error codes): the plan's simulations turned every run_simulate
 * error into -1 (exit 1); a fault trace valid when the method loaded and
 * garbage when a run reads it is the user's input, MSG_EINPUT (exit 2). */
START_TEST(run_input_error_is_an_input_error) {
    const char *texts[] = {"30 1 down\n90 1 up\n", "30 1 down\n90 1 up\n",
                           "1.5x up\n"};
    feeder f;
    feeder_start(&f, "trace.txt", texts, 3);
    char scenario[160], err[1024];
    snprintf(scenario, sizeof scenario, "%s/s.json", f.dir);
    FILE *sf = fopen(scenario, "w");
    ck_assert_ptr_nonnull(sf);
    fputs("{\"model\": {\"params\": 1e6, \"layers\": 1, \"step_time_s\": "
          "0.1}, \"workers\": {\"count\": 2}, \"method\": {\"name\": "
          "\"dp\"}, \"faults\": {\"trace\": \"trace.txt\"}, \"steps\": 20}",
          sf);
    fclose(sf);
    plan_spec spec = {scenario, NULL, 0, NULL, 0, 0.9, NULL, 1, 0, NULL};
    plan_result *r = malloc(sizeof *r);
    ck_assert_ptr_nonnull(r);
    int rc = plan_compute(&spec, r, err, sizeof err);
    int served = feeder_stop(&f);
    unlink(scenario);
    rmdir(f.dir);
    free(r);
    ck_assert_int_eq(served, 3); /* the method's check, a point, its run */
    ck_assert_msg(rc == MSG_EINPUT, "rc %d: %s", rc, err);
    ck_assert_msg(strstr(err, "bad time '1.5x'") &&
                  !strstr(err, "faults.trace:"), "%s", err);
}
END_TEST

START_TEST(cost_file_schema) {
    plan_cost c;
    char err[512];
    ck_assert(!plan_cost_parse("{\"wan_usd_per_gbps_month\": 200, "
                               "\"accelerator_usd_per_hour\": 2.5, "
                               "\"accelerators\": 1024}", "c.json", &c, err,
                               sizeof err));
    ck_assert_int_eq(c.nbandwidths, 0);
    ck_assert_double_eq(c.accelerators, 1024);
    const char *ok = "\"accelerator_usd_per_hour\": 2.5, \"accelerators\": 8";
    char doc[512];
    snprintf(doc, sizeof doc, "{\"wan_usd_per_gbps\": 1, %s}", ok);
    bad_cost(doc, "c.json:1:2: wan_usd_per_gbps: unknown key");
    snprintf(doc, sizeof doc, "{\"wan_usd_per_gbps_month\": -1, %s}", ok);
    bad_cost(doc, "c.json:1:28: wan_usd_per_gbps_month: must be a number >= 0");
    snprintf(doc, sizeof doc, "{\"wan_usd_per_gbps_month\": \"1\", %s}", ok);
    bad_cost(doc, "wan_usd_per_gbps_month: must be a number");
    snprintf(doc, sizeof doc, "{%s}", ok);
    bad_cost(doc, "c.json:1:1: wan_usd_per_gbps_month: missing");
    snprintf(doc, sizeof doc, "{\"wan_usd_per_gbps_month\": 1, %s, "
             "\"accelerators\": 8}", ok);
    bad_cost(doc, "accelerators: duplicate key");
    bad_cost("{\"wan_usd_per_gbps_month\": 1, \"accelerator_usd_per_hour\": "
             "2.5, \"accelerators\": 8.5}", "accelerators: must be an integer");
    snprintf(doc, sizeof doc, "{\"wan_usd_per_gbps_month\": 1, %s, "
             "\"bandwidths_gbps\": []}", ok);
    bad_cost(doc, "bandwidths_gbps: must be an array");
    snprintf(doc, sizeof doc, "{\"wan_usd_per_gbps_month\": 1, %s, "
             "\"bandwidths_gbps\": [1, 0]}", ok);
    bad_cost(doc, "bandwidths_gbps[1]: must be a number > 0");
    bad_cost("[1]", "c.json:1:1: (root): must be a JSON object");
    bad_cost("{\"accelerators\": ", "c.json:1:18: syntax error");
}
END_TEST

/* Fuzz finding cost-1: a key with a control character ("\n") was quoted
 * as it is, so the message was two lines. */
START_TEST(cost_message_is_one_line) {
    bad_cost("{\"\\n\": 1}", "c.json:1:2: ?: unknown key");
    bad_cost("{\"a\\tb\": 1}", "c.json:1:2: a?b: unknown key");
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("plan");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, least_bandwidth_closed_form);
    tcase_add_test(tc, latency_limit_closed_form);
    tcase_add_test(tc, ends_of_the_ranges);
    tcase_add_test(tc, unreachable_target);
    tcase_add_test(tc, cheapest_option_by_hand);
    tcase_add_test(tc, cheapest_method_by_hand);
    tcase_add_test(tc, cost_file_schema);
    tcase_add_test(tc, cost_message_is_one_line);
    tcase_add_test(tc, scenario_read_once);
    tcase_add_test(tc, a_runner_gives_the_same_plan);
    tcase_add_test(tc, run_input_error_is_an_input_error);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
