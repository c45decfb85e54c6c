/*
 * test_memory.c -- a worker's memory against its conventions (12 B per
 * parameter for DP, 20 B for DiLoCo and streaming), the offloaded
 * fragments in flight against closed forms and against a brute force over
 * the schedule's own take and apply steps, and the run JSON's
 * memory_per_worker object.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/engine/memory.h"
#include "sim/out/report.h"
#include "sim/engine/run.h"

static scn_config load(const char *json) {
    scn_config c;
    char err[512];
    ck_assert_msg(!scn_load_string(json, "m.json", NULL, 0, &c, err,
                                   sizeof err),
                  "%s", err);
    return c;
}

static mem_worker memory(const char *json) {
    scn_config c = load(json);
    mem_worker m;
    char err[256];
    ck_assert_msg(!mem_worker_of(&c, &m, err, sizeof err), "%s", err);
    return m;
}

/* The parts of m for N parameters: 2 + 2 + 8 B each, and `outer` B of
 * outer parameters and momentum (half each). */
static void ck_parts(const mem_worker *m, uint64_t N, uint64_t outer) {
    ck_assert_uint_eq(m->params, N);
    ck_assert_uint_eq(m->parameters_bytes, 2 * N);
    ck_assert_uint_eq(m->gradients_bytes, 2 * N);
    ck_assert_uint_eq(m->inner_optimizer_bytes, 8 * N);
    ck_assert_uint_eq(m->outer_parameters_bytes, outer / 2 * N);
    ck_assert_uint_eq(m->outer_momentum_bytes, outer / 2 * N);
    ck_assert_uint_eq(m->accelerator_bytes, (12 + outer) * N);
    ck_assert_double_eq(mem_bytes_per_param(m), 12.0 + (double)outer);
}

/* 2 + 2 + 8 B per parameter for DP; + 4 + 4 for DiLoCo and streaming.
 * model.params is rounded to whole parameters (1000.4 -> 1000). */
START_TEST(bytes_per_parameter) {
    mem_worker m = memory("{\"model\": {\"params\": 1e9}, \"method\": "
                          "{\"name\": \"dp\", \"offload_outer\": true}}");
    ck_parts(&m, 1000000000, 0);
    ck_assert_int_eq(m.offload, 0); /* DP has no outer state to move */
    m = memory("{\"model\": {\"params\": 1e9}, \"method\": {\"name\": "
               "\"diloco\"}}");
    ck_parts(&m, 1000000000, 8);
    ck_assert_uint_eq(m.host_bytes, 0);
    ck_assert_uint_eq(m.fragment_params, 1000000000);
    m = memory("{\"model\": {\"params\": 1000.4, \"layers\": 3}, \"method\": "
               "{\"fragments\": 3}}");
    ck_parts(&m, 1000, 8);
    ck_assert_uint_eq(m.fragment_params, 334); /* layers of 333, 333, 334 */
}
END_TEST

/* The Streaming DiLoCo paper's 100B setup: 108 layers, 3 per fragment
 * (36, strided), H 100, tau 1.  Fragments sync after 2, 5, 8, 11, 13, ...
 * (never two steps apart by less than 2), each on the accelerator for the
 * 2 steps [sync - 1, sync]: one at a time.  N = 1e11 is 108 x 925925925
 * + 100, so 100 layers hold 925925926 and the largest fragment 3 x that.
 * The extra outer state is 8 B x 2777777778, 1.85% of DP's 12 B x N:
 * "about 2%". */
START_TEST(paper_100b_offload) {
    mem_worker m = memory("{\"model\": {\"params\": 1e11, \"layers\": 108}, "
                          "\"method\": {\"H\": 100, \"fragments\": 36, "
                          "\"tau\": 1, \"offload_outer\": true}}");
    ck_assert_int_eq(m.offload, 1);
    ck_assert_int_eq(m.in_flight, 1);
    ck_assert_int_eq(m.fragments, 36);
    ck_assert_uint_eq(m.fragment_params, 3 * 925925926ull);
    ck_assert_uint_eq(m.outer_parameters_bytes, 4 * 2777777778ull);
    ck_assert_uint_eq(m.outer_momentum_bytes, 4 * 2777777778ull);
    ck_assert_uint_eq(m.host_bytes, 8 * 100000000000ull);
    double extra = (double)(m.accelerator_bytes - 12 * m.params) /
                   (12.0 * (double)m.params);
    ck_assert_double_eq_tol(extra, 8 * 2777777778.0 / 1.2e12, 1e-15);
    ck_assert(extra > 0.015 && extra < 0.025);
}
END_TEST

static sched_spec spec(int L, int H, int P, int tau, sched_overlap ov) {
    sched_spec s = {SCHED_STREAMING,
                    L,
                    H,
                    P,
                    tau,
                    0.5,
                    SCHED_STRIDED,
                    SCHED_ASCENDING,
                    ov,
                    SCHED_RULE_PAPER,
                    SCHED_SUBSET_DEFAULT};
    char err[128];
    ck_assert_msg(!sched_normalize(&s, err, sizeof err), "%s", err);
    return s;
}

static int in_flight(const sched_spec *s, int extra, int64_t steps) {
    int n;
    char err[128];
    ck_assert(!mem_in_flight(s, extra, steps, &n, err, sizeof err));
    return n;
}

/* P fragments g = H/P steps apart, each in flight for tau + 1 steps: at
 * most min(P, floor(tau/g) + 1) at once.  With outer overlap a fragment
 * is in flight from one sync to the next: all P.  P > H (H 2, P 8):
 * offsets 2, 2, 2, 1, 1, 1, 1, 2, so 4 at a step with tau 0 and all 8
 * with tau 1. */
START_TEST(in_flight_closed_forms) {
    const int taus[] = {0, 10, 24, 25, 30, 49, 50, 60, 75, 99};
    for (size_t i = 0; i < sizeof taus / sizeof *taus; i++) {
        sched_spec s = spec(4, 100, 4, taus[i], SCHED_INNER);
        int want = taus[i] / 25 + 1 < 4 ? taus[i] / 25 + 1 : 4;
        ck_assert_int_eq(in_flight(&s, 0, 2000), want);
        if (taus[i] <= 49) /* a worker whose tau is 50 steps more */
            ck_assert_int_eq(in_flight(&s, 50, 2000),
                             (taus[i] + 50) / 25 + 1 < 4
                                 ? (taus[i] + 50) / 25 + 1
                                 : 4);
    }
    sched_spec s = spec(4, 100, 4, 0, SCHED_OUTER);
    ck_assert_int_eq(in_flight(&s, 0, 2000), 4);
    s = spec(8, 2, 8, 0, SCHED_INNER);
    ck_assert_int_eq(in_flight(&s, 0, 100), 4);
    s = spec(8, 2, 8, 1, SCHED_INNER);
    ck_assert_int_eq(in_flight(&s, 0, 100), 8);
}
END_TEST

/* A run shorter than a period syncs nothing: nothing in flight, no outer
 * state on the accelerator; one period: DiLoCo's one fragment. */
START_TEST(short_runs) {
    const char *fmt = "{\"method\": {\"name\": \"diloco\", \"H\": 100, "
                      "\"offload_outer\": true}, \"steps\": %d}";
    char json[256];
    snprintf(json, sizeof json, fmt, 99);
    mem_worker m = memory(json);
    ck_assert_int_eq(m.in_flight, 0);
    ck_assert_uint_eq(m.outer_parameters_bytes, 0);
    ck_assert_uint_eq(m.accelerator_bytes, 12 * m.params);
    snprintf(json, sizeof json, fmt, 100);
    m = memory(json);
    ck_assert_int_eq(m.in_flight, 1);
    ck_assert_uint_eq(m.accelerator_bytes, 20 * m.params);
}
END_TEST

/* Sliced (every fragment 1/P of every layer): four layers of 501, slices
 * of 125, 125, 125, 126: the largest fragment holds 4 x 126. */
START_TEST(sliced_fragment) {
    scn_config c = load("{\"model\": {\"params\": 2004, \"layers\": 4}, "
                        "\"method\": {\"H\": 8, \"fragments\": 4, "
                        "\"layout\": \"sliced\"}}");
    sched_spec s = c.sched;
    s.layers = c.layers;
    char err[128];
    ck_assert(!sched_normalize(&s, err, sizeof err));
    uint64_t n;
    ck_assert(!mem_largest_fragment(&c, &s, &n, err, sizeof err));
    ck_assert_uint_eq(n, 504);
}
END_TEST

/* The most fragments in flight at one step, from the schedule's own
 * sched_taken_after: a fragment taken after step t is on the accelerator
 * over steps t..t + delay + extra (cut at the last step). */
static int brute_in_flight(const sched_spec *s, int extra, int64_t T) {
    static unsigned char occ[512][64];
    memset(occ, 0, sizeof occ);
    int f[64], dw = sched_delay(s) + extra, peak = 0;
    for (int64_t t = 1; t <= T; t++) {
        int n = sched_taken_after(s, t, T, f);
        for (int i = 0; i < n; i++)
            for (int64_t u = t; u <= t + dw && u <= T; u++) occ[u][f[i]] = 1;
    }
    for (int64_t u = 1; u <= T; u++) {
        int c = 0;
        for (int j = 0; j < s->P; j++) c += occ[u][j];
        if (c > peak) peak = c;
    }
    return peak;
}

START_TEST(in_flight_matches_the_schedule) {
    uint64_t x = 12345;
    int checked = 0;
    for (int trial = 0; trial < 3000; trial++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t r = x >> 11;
        sched_spec s = {SCHED_STREAMING,
                        1 + (int)(r % 12),
                        1 + (int)(r / 12 % 12),
                        0,
                        0,
                        0.5,
                        (sched_layout)(r / 144 % 3),
                        (sched_order)(r / 432 % 2),
                        SCHED_INNER,
                        (sched_rule)(r / 864 % 2),
                        SCHED_SUBSET_DEFAULT};
        s.P = 1 + (int)(r / 1728 % (uint64_t)s.layers);
        if (r / 20736 % 4 == 0) s.overlap = SCHED_OUTER;
        int cap = sched_narrow(&s) ? s.H / s.P : s.H;
        if (cap < 1) continue;
        s.tau = s.overlap == SCHED_INNER ? (int)(r / 82944 % (uint64_t)cap) : 0;
        char err[128];
        if (sched_normalize(&s, err, sizeof err)) continue;
        int room = s.overlap == SCHED_INNER ? cap - 1 - s.tau : 0;
        int extra = room > 0 ? (int)(r / 995328 % (uint64_t)(room + 1)) : 0;
        int64_t T = 1 + (int64_t)(r / 7962624 % (uint64_t)(15 * s.H + 10));
        ck_assert_msg(in_flight(&s, extra, T) == brute_in_flight(&s, extra, T),
                      "L %d H %d P %d tau %d layout %d order %d overlap %d "
                      "extra %d steps %lld: %d, brute force %d",
                      s.layers, s.H, s.P, s.tau, s.layout, s.order, s.overlap,
                      extra, (long long)T, in_flight(&s, extra, T),
                      brute_in_flight(&s, extra, T));
        checked++;
    }
    ck_assert_int_gt(checked, 1000);
}
END_TEST

/* The run JSON's memory_per_worker: the same figures, and the offload
 * fields only when the outer state is offloaded. */
START_TEST(run_json_memory) {
    const char *texts[] = {
        "{\"model\": {\"params\": 1e6, \"layers\": 4}, \"method\": "
        "{\"fragments\": 4, \"H\": 8, \"tau\": 3, \"offload_outer\": true}, "
        "\"steps\": 40}",
        "{\"model\": {\"params\": 1e6, \"layers\": 4}, \"method\": "
        "{\"name\": \"dp\"}, \"steps\": 4}"};
    for (int k = 0; k < 2; k++) {
        scn_config c = load(texts[k]);
        run_result r;
        char err[256], *text = NULL;
        size_t len = 0;
        ck_assert_msg(!run_simulate(&c, NULL, &r, err, sizeof err), "%s", err);
        FILE *f = open_memstream(&text, &len);
        report_run_json(f, &c, &r);
        fclose(f);
        cJSON *j = cJSON_Parse(text);
        ck_assert_ptr_nonnull(j);
        const cJSON *m = cJSON_GetObjectItem(j, "memory_per_worker");
        ck_assert_ptr_nonnull(m);
        mem_worker want;
        ck_assert(!mem_worker_of(&c, &want, err, sizeof err));
        ck_assert_double_eq(
            cJSON_GetObjectItem(m, "accelerator_bytes")->valuedouble,
            (double)want.accelerator_bytes);
        ck_assert_double_eq(
            cJSON_GetObjectItem(m, "inner_optimizer_bytes")->valuedouble, 8e6);
        ck_assert_int_eq(cJSON_IsTrue(cJSON_GetObjectItem(m, "offload_outer")),
                         k == 0);
        const cJSON *fl = cJSON_GetObjectItem(m, "fragments_in_flight");
        if (k == 0) { /* 4 fragments 2 steps apart, 4 steps in flight: 2 */
            ck_assert_int_eq(fl->valueint, 2);
            ck_assert_double_eq(
                cJSON_GetObjectItem(m, "outer_parameters_bytes")->valuedouble,
                4 * 2 * 250000.0);
            ck_assert_double_eq(
                cJSON_GetObjectItem(m, "host_bytes")->valuedouble, 8e6);
        } else {
            ck_assert_ptr_null(fl);
            ck_assert_double_eq(
                cJSON_GetObjectItem(m, "bytes_per_param")->valuedouble, 12);
        }
        cJSON_Delete(j);
        free(text);
    }
}
END_TEST

/* The run measures the outer state on each accelerator from the host
 * copies it simulates (sim/engine/offload.h); with copies that take no time it
 * is the closed form (a fragment stays from the start of its take step
 * until its merge after the apply step): 36 fragments 2 or 3 steps apart
 * in flight for 2 steps (one at a time), outer overlap (every fragment
 * always), DiLoCo (its one fragment), and P 4 at H 8 with tau 3 (each
 * fragment 4 steps on the accelerator, a new one every 2: two at once). */
START_TEST(run_peak_is_the_closed_form) {
    const char *texts[] = {
        "{\"model\": {\"params\": 1e6, \"layers\": 36, \"host_gbps\": 1e9}, "
        "\"method\": {\"H\": 100, \"fragments\": 36, \"tau\": 1, "
        "\"offload_outer\": true}, \"steps\": 300}",
        "{\"model\": {\"params\": 1e6, \"layers\": 4, \"host_gbps\": 1e9}, "
        "\"network\": {\"bandwidth_gbps\": 0.01}, \"method\": {\"fragments\": "
        "4, \"H\": 8, \"overlap\": \"outer\", \"offload_outer\": true}, "
        "\"steps\": 40}",
        "{\"model\": {\"params\": 1e6, \"layers\": 2, \"host_gbps\": 1e9}, "
        "\"method\": {\"name\": \"diloco\", \"H\": 5, \"offload_outer\": "
        "true}, \"steps\": 40}",
        "{\"model\": {\"params\": 1e6, \"layers\": 4, \"host_gbps\": 1e9}, "
        "\"method\": {\"fragments\": 4, \"H\": 8, \"tau\": 3, "
        "\"offload_outer\": true}, \"steps\": 40}"};
    const int flight[] = {1, 4, 1, 2};
    for (int k = 0; k < 4; k++) {
        scn_config c = load(texts[k]);
        run_result r;
        mem_worker m;
        char err[256];
        ck_assert_msg(!run_simulate(&c, NULL, &r, err, sizeof err), "%s", err);
        ck_assert(!mem_worker_of(&c, &m, err, sizeof err));
        ck_assert_int_eq(m.in_flight, flight[k]);
        for (int w = 0; w < c.workers; w++)
            ck_assert_uint_eq(r.per_worker[w].outer_device_peak_bytes,
                              m.outer_parameters_bytes +
                                  m.outer_momentum_bytes);
    }
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("memory");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bytes_per_parameter);
    tcase_add_test(tc, paper_100b_offload);
    tcase_add_test(tc, in_flight_closed_forms);
    tcase_add_test(tc, short_runs);
    tcase_add_test(tc, sliced_fragment);
    tcase_add_test(tc, in_flight_matches_the_schedule);
    tcase_add_test(tc, run_json_memory);
    tcase_add_test(tc, run_peak_is_the_closed_form);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
