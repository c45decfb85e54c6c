/*
 * test_energy.c -- the energy of a run (workers.power_w,
 * network.joules_per_gb), by hand.
 *
 * Closed forms next to the simulated values: two workers of chips
 * accelerators each, one at half speed, DiLoCo over unbounded links, so
 * that each worker's compute time and the wall time are known by hand
 * (S steps of t: S t and S t / 0.5, the wall the slower one's); the
 * energy is then sum_i b_i A_i busy / 3.6e6, sum_i (T - b_i) A_i idle /
 * 3.6e6, and bytes / 1e9 x J/GB / 3.6e6 with the bytes of a 2-worker ring
 * of fp32 payloads counted by hand.  The accelerators of a worker
 * (scn_accelerators) with and without chips and sites; the keys' errors
 * with their exact messages; the run JSON's energy_kwh only with a key
 * set.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/engine/run.h"
#include "sim/out/report.h"

static scn_config cfg;

/* Loads json with the overrides (NULL-terminated) into cfg. */
static void load(const char *json, const char *const *sets) {
    int n = 0;
    while (sets[n]) n++;
    char err[512];
    ck_assert_msg(scn_load_string(json, "e.json", sets, n, &cfg, err,
                                  sizeof err) == 0,
                  "%s", err);
}

static run_result run(void) {
    run_result r;
    char err[512];
    ck_assert_msg(run_simulate(&cfg, NULL, &r, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_msg(r.finished, "%s", r.stop_reason);
    return r;
}

/* Step time 6 params tokens / (chips peak 1e12 mfu) = 6e12 / (4 x 1e12 x
 * 0.5) = 3 s; worker 1 at speed 0.5 takes 6 s a step. */
static const char *pair =
    "{\"model\": {\"params\": 1e6, \"layers\": 2, \"tokens_per_step\": 1e6,"
    " \"chips\": 4, \"peak_tflops\": 1, \"mfu\": 0.5},"
    " \"workers\": {\"count\": 2, \"speed\": [1, 0.5]},"
    " \"network\": {\"bandwidth_gbps\": \"inf\", \"latency_ms\": 0},"
    " \"method\": {\"name\": \"diloco\", \"H\": 4, \"codec\": \"fp32\"},"
    " \"steps\": 8}";

START_TEST(pair_by_hand) {
    const char *sets[] = {"workers.power_w={\"busy\": 700, \"idle\": 90}",
                          "network.joules_per_gb=250", NULL};
    load(pair, sets);
    run_result r = run();
    const double S = 8, t = 3, A = 4;
    double b0 = S * t, b1 = S * t / 0.5, T = b1;
    ck_assert_int_eq(r.per_worker[0].compute_ns, (int64_t)(b0 * 1e9));
    ck_assert_int_eq(r.per_worker[1].compute_ns, (int64_t)(b1 * 1e9));
    ck_assert_int_eq(r.wall_ns, (int64_t)(T * 1e9));
    /* 2 syncs of a ring of 2: each worker sends its whole fp32 payload
     * (2 (M - 1) / M = 1 of it) at each */
    ck_assert_uint_eq(r.bytes_sent_total, 2 * 2 * 4 * (uint64_t)1e6);
    run_energy e;
    run_energy_of(&cfg, &r, &e);
    double busy = (b0 + b1) * A * 700 / 3.6e6;
    double idle = ((T - b0) + (T - b1)) * A * 90 / 3.6e6;
    double net = 16e6 / 1e9 * 250 / 3.6e6;
    ck_assert_double_eq_tol(e.compute_busy, busy, 1e-15);
    ck_assert_double_eq_tol(e.compute_idle, idle, 1e-15);
    ck_assert_double_eq_tol(e.network, net, 1e-18);
    ck_assert_double_eq_tol(e.total, busy + idle + net, 1e-15);
    /* the numbers themselves: 72 s x 4 x 700 W = 201600 J = 0.056 kWh;
     * 24 s x 4 x 90 W = 8640 J = 0.0024 kWh; 4 J = 1/900000 kWh */
    ck_assert_double_eq_tol(e.compute_busy, 0.056, 1e-15);
    ck_assert_double_eq_tol(e.compute_idle, 0.0024, 1e-15);
    ck_assert_double_eq_tol(e.network, 4 / 3.6e6, 1e-18);
}
END_TEST

/* Only one key: the other part is 0. */
START_TEST(one_key_each) {
    const char *power[] = {"workers.power_w={\"busy\": 700, \"idle\": 90}",
                           NULL};
    load(pair, power);
    run_energy e;
    run_result r = run();
    run_energy_of(&cfg, &r, &e);
    ck_assert(e.network == 0);
    ck_assert(e.total == e.compute_busy + e.compute_idle);
    const char *net[] = {"network.joules_per_gb=250", NULL};
    load(pair, net);
    r = run();
    run_energy_of(&cfg, &r, &e);
    ck_assert(e.compute_busy == 0 && e.compute_idle == 0);
    ck_assert(e.total == e.network && e.network > 0);
}
END_TEST

START_TEST(accelerators) {
    const char *none[] = {NULL};
    load("{\"model\": {\"step_time_s\": 1}}", none);
    ck_assert(scn_accelerators(&cfg, 0) == 1);
    ck_assert(!cfg.has_power && !cfg.has_joules_per_gb);
    load(pair, none);
    ck_assert(scn_accelerators(&cfg, 1) == 4);
    /* sites: each worker a site of site_replicas replicas of chips */
    cfg.has_sites = 1;
    cfg.site_replicas[0] = 3;
    ck_assert(scn_accelerators(&cfg, 0) == 12);
    ck_assert(scn_accelerators(&cfg, 1) == 4);
}
END_TEST

static void load_fails(const char *body, const char *msg) {
    char json[256], err[512];
    snprintf(json, sizeof json,
             "{\n  \"workers\": {%s},\n  \"network\": {}\n}\n", body);
    int rc = scn_load_string(json, "s.json", NULL, 0, &cfg, err, sizeof err);
    ck_assert_int_eq(rc, MSG_EINPUT);
    ck_assert_str_eq(err, msg);
}

static void load_fails_net(const char *body, const char *msg) {
    char json[256], err[512];
    snprintf(json, sizeof json, "{\n  \"network\": {%s}\n}\n", body);
    int rc = scn_load_string(json, "s.json", NULL, 0, &cfg, err, sizeof err);
    ck_assert_int_eq(rc, MSG_EINPUT);
    ck_assert_str_eq(err, msg);
}

START_TEST(errors) {
    load_fails("\"power_w\": {\"busy\": 700}",
               "s.json:2:26: workers.power_w: idle is missing (expected "
               "both busy and idle, W per accelerator)");
    load_fails("\"power_w\": {\"idle\": 7}",
               "s.json:2:26: workers.power_w: busy is missing (expected "
               "both busy and idle, W per accelerator)");
    load_fails("\"power_w\": {\"busy\": -1, \"idle\": 0}",
               "s.json:2:35: workers.power_w.busy: -1 is out of range "
               "(expected a number in [0, 10000000])");
    load_fails("\"power_w\": {\"busy\": 1, \"idle\": 2e7}",
               "s.json:2:46: workers.power_w.idle: 20000000 is out of range "
               "(expected a number in [0, 10000000])");
    load_fails("\"power_w\": {\"busy\": 1, \"idle\": 2, \"peak\": 3}",
               "s.json:2:49: workers.power_w.peak: unknown key (expected "
               "one of: busy, idle)");
    load_fails("\"power_w\": 700",
               "s.json:2:26: workers.power_w: wrong type: number (expected "
               "an object)");
    load_fails_net("\"joules_per_gb\": -3",
                   "s.json:2:32: network.joules_per_gb: -3 is out of range "
                   "(expected a number in [0, 1000000000])");
    load_fails_net("\"joules_per_gb\": \"x\"",
                   "s.json:2:32: network.joules_per_gb: wrong type: string "
                   "(expected a number in [0, 1000000000])");
}
END_TEST

/* The run JSON of cfg's run, in buf. */
static void json_of(char *buf, size_t n) {
    run_result r = run();
    FILE *f = fmemopen(buf, n, "w");
    ck_assert_ptr_nonnull(f);
    report_run_json(f, &cfg, &r);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(json_only_when_set) {
    static char buf[1 << 16];
    const char *none[] = {NULL};
    load(pair, none);
    json_of(buf, sizeof buf);
    ck_assert_ptr_null(strstr(buf, "energy_kwh"));
    ck_assert_ptr_null(strstr(buf, "power_busy_w"));
    ck_assert_ptr_null(strstr(buf, "joules_per_gb"));
    const char *sets[] = {"workers.power_w={\"busy\": 700, \"idle\": 90}",
                          "network.joules_per_gb=225", NULL};
    load(pair, sets);
    json_of(buf, sizeof buf);
    /* 16e6 bytes x 225 J/GB = 3.6 J = 1e-6 kWh */
    ck_assert_ptr_nonnull(
        strstr(buf, "\"energy_kwh\": {\"compute_busy\": 0.056, "
                    "\"compute_idle\": 0.0024, \"network\": 1e-06, "
                    "\"total\": 0.058401}"));
    ck_assert_ptr_nonnull(strstr(buf, "\"power_busy_w\": 700,"));
    ck_assert_ptr_nonnull(strstr(buf, "\"power_idle_w\": 90,"));
    ck_assert_ptr_nonnull(strstr(buf, "\"joules_per_gb\": 225,"));
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("energy");
    TCase *tc = tcase_create("energy");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, pair_by_hand);
    tcase_add_test(tc, one_key_each);
    tcase_add_test(tc, accelerators);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, json_only_when_set);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
