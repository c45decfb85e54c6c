/*
 * test_run.c -- whole runs against closed forms.
 *
 * Each test states the formula it checks: wall time, bytes and compute
 * utilization of DP, DiLoCo and Streaming DiLoCo on small worlds where the
 * answer can be written down, plus the orderings the paper's curves show.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "../sim/collective.h"
#include "../sim/run.h"

/* Loads a scenario from text plus overrides (NULL-terminated) and runs it. */
static run_result sim_cfg(scn_config *cfg, const char *json, ...) {
    const char *sets[32];
    int n = 0;
    va_list ap;
    va_start(ap, json);
    for (const char *s; (s = va_arg(ap, const char *));) sets[n++] = s;
    va_end(ap);
    char err[512];
    int rc = scn_load_string(json, "test.json", sets, n, cfg, err, sizeof err);
    ck_assert_msg(rc == 0, "load: %s", err);
    run_result r;
    rc = run_simulate(cfg, NULL, &r, err, sizeof err);
    ck_assert_msg(rc == 0, "run: %s", err);
    ck_assert_int_eq(r.finished, 1);
    return r;
}

#define SIM(json, ...) sim_cfg(&cfg, json, __VA_ARGS__, (const char *)NULL)

/* One layer of 1e6 parameters, 0.1 s steps, two workers. */
static const char *one_layer =
    "{\"model\": {\"params\": 1e6, \"layers\": 1, \"step_time_s\": 0.1},"
    " \"workers\": {\"count\": 2}, \"steps\": 100}";

static const char *one_b =
    "{\"model\": {\"params\": 1e9, \"layers\": 24, \"step_time_s\": 0.1},"
    " \"workers\": {\"count\": 2}, \"steps\": 400}";

static double ns_ceil(double s) { return ceil(s * 1e9) * 1e-9; }

/* Ring all-reduce of S bytes among M at B bytes/s, one-way latency lat:
 * 2(M-1) steps of lat + (S/M)/B, each rounded up to whole ns. */
static double ring_s(double S, int M, double B, double lat) {
    return 2 * (M - 1) * (lat + ns_ceil(S / M / B));
}

START_TEST(unbounded_bandwidth_gives_full_utilization) {
    scn_config cfg;
    const char *methods[] = {"method.name=dp", "method.name=diloco",
                             "method.name=streaming"};
    for (int m = 0; m < 3; m++) {
        run_result r = SIM(one_b, methods[m], "network.bandwidth_gbps=\"inf\"",
                           "method.fragments=8", "method.tau=1");
        ck_assert_double_eq(r.compute_utilization, 1.0);
        ck_assert_double_eq_tol(r.wall_time_s, 400 * 0.1, 1e-12);
    }
}
END_TEST

/* DP, one layer: nothing to overlap, so each step is compute then a ring
 * all-reduce of the bf16 gradient: wall = T * (t_step + ring). */
START_TEST(dp_one_layer_wall_time_closed_form) {
    scn_config cfg;
    for (int M = 2; M <= 5; M++) {
        char count[64];
        snprintf(count, sizeof count, "workers.count=%d", M);
        run_result r = SIM(one_layer, "method.name=dp", count,
                           "network.bandwidth_gbps=8",
                           "network.latency_ms=3");
        double S = 2e6, B = 1e9;
        double step = 0.1 + ring_s(S, M, B, 3e-3);
        ck_assert_double_eq_tol(r.wall_time_s, 100 * step, 1e-9);
        ck_assert_double_eq_tol(r.compute_utilization, 0.1 / step, 1e-9);
        ck_assert_int_eq(r.syncs, 100);
    }
}
END_TEST

/* A binary Gbit is 2^30 bits: the same DP step with 8 "Gbit/s" links, and
 * rates reported in the same unit. */
START_TEST(binary_gbit) {
    scn_config cfg;
    run_result r = SIM(one_layer, "method.name=dp", "network.gbit=\"binary\"",
                       "network.bandwidth_gbps=8");
    double step = 0.1 + ring_s(2e6, 2, 8 * 1073741824.0 / 8, 0);
    ck_assert_double_eq_tol(r.wall_time_s, 100 * step, 1e-9);
    ck_assert_double_eq_tol(r.peak_link_gbps, 8, 1e-9);
}
END_TEST

/* DiLoCo, one layer, H 10: only every 10th step waits for the ring. */
START_TEST(diloco_one_layer_wall_time_closed_form) {
    scn_config cfg;
    run_result r = SIM(one_layer, "method.name=diloco", "method.H=10",
                       "method.codec=\"fp32\"", "network.bandwidth_gbps=0.8");
    double ring = ring_s(4e6, 2, 1e8, 0);
    ck_assert_double_eq_tol(r.wall_time_s, 100 * 0.1 + 10 * ring, 1e-9);
    ck_assert_int_eq(r.syncs, 10);
}
END_TEST

/* Streaming with overlap: the sync taken after step t is awaited by the
 * forward of step t+1+tau, so tau steps of compute hide the transfer:
 * wall = T t_step + syncs * max(0, ring - tau t_step). */
START_TEST(overlap_hides_tau_steps) {
    scn_config cfg;
    for (int tau = 0; tau <= 3; tau++) {
        char t[32];
        snprintf(t, sizeof t, "method.tau=%d", tau);
        run_result r = SIM(one_layer, "method.name=streaming", "method.H=10",
                           "method.fragments=1", t, "method.codec=\"fp32\"",
                           "network.bandwidth_gbps=0.16");
        double ring = ring_s(4e6, 2, 2e7, 0); /* 0.2 s */
        double stall = fmax(0, ring - tau * 0.1);
        ck_assert_double_eq_tol(r.wall_time_s, 10.0 + 10 * stall, 1e-9);
    }
}
END_TEST

/* Bytes: DP sends T * 2(M-1)/M * payload per worker, DiLoCo 1/H of that,
 * streaming E3M0 1/(4H) of DP's bf16 up to the per-tensor scales: the
 * paper's 400x at H = 100. */
START_TEST(bytes_closed_forms) {
    scn_config cfg;
    for (int M = 2; M <= 4; M++) {
        char count[64];
        snprintf(count, sizeof count, "workers.count=%d", M);
        uint64_t f = 2 * (uint64_t)(M - 1); /* the group sends 2(M-1) S */
        run_result dp = SIM(one_b, "method.name=dp", count);
        uint64_t payload = 0;
        for (int l = 0; l < 24; l++)
            payload += run_layer_bytes(&cfg, cfg.dp_codec, l);
        ck_assert_uint_eq(payload, 2000000000);
        ck_assert_uint_eq(dp.bytes_sent_total, 400 * f * payload);
        /* every worker's share, exactly: its ring chunks of every layer */
        for (int i = 0; i < M; i++) {
            uint64_t mine = 0;
            for (int l = 0; l < 24; l++) {
                uint64_t S = run_layer_bytes(&cfg, cfg.dp_codec, l);
                mine += 2 * S - coll_chunk_bytes(S, M, (i + 1) % M) -
                        coll_chunk_bytes(S, M, (i + 2) % M);
            }
            ck_assert_uint_eq(dp.per_worker[i].bytes_sent, 400 * mine);
        }
        run_result dl = SIM(one_b, "method.name=diloco", count);
        ck_assert_uint_eq(dl.bytes_sent_total * 100, dp.bytes_sent_total);
        run_result st = SIM(one_b, "method.name=streaming", count,
                            "method.fragments=8", "method.tau=1",
                            "method.codec=\"e3m0\"");
        /* 24 layers of about 1e9/24 values: 4 bits each plus one 4-byte
         * scale per layer; every fragment syncs 400/H = 4 times. */
        uint64_t e3m0 = 0;
        for (int l = 0; l < 24; l++) {
            uint64_t n = (uint64_t)((l + 1) * 1000000000ull / 24 -
                                    l * 1000000000ull / 24);
            ck_assert_uint_eq(run_layer_bytes(&cfg, cfg.codec, l),
                              (n + 1) / 2 + 4);
            e3m0 += (n + 1) / 2 + 4;
        }
        ck_assert_uint_eq(st.bytes_sent_total, 4 * f * e3m0);
        double ratio =
            (double)dp.bytes_sent_total / (double)st.bytes_sent_total;
        ck_assert_double_eq_tol(ratio, 400 * 2e9 / (4 * e3m0), 1e-9 * ratio);
        ck_assert(fabs(ratio / 400 - 1) < 1e-6);
    }
}
END_TEST

/* Utilization falls monotonically with bandwidth, and at every bandwidth
 * DP <= DiLoCo <= streaming (tau 1), all with bf16 payloads. */
START_TEST(utilization_monotone_and_ordered) {
    scn_config cfg;
    double prev[3] = {2, 2, 2};
    for (double bw = 1000; bw >= 0.1; bw /= 1.7) {
        char b[64];
        snprintf(b, sizeof b, "network.bandwidth_gbps=%.17g", bw);
        run_result dp = SIM(one_b, "method.name=dp", b);
        run_result dl = SIM(one_b, "method.name=diloco", b);
        run_result st = SIM(one_b, "method.name=streaming", b,
                            "method.fragments=8", "method.tau=1");
        double cu[3] = {dp.compute_utilization, dl.compute_utilization,
                        st.compute_utilization};
        for (int k = 0; k < 3; k++) {
            ck_assert_msg(cu[k] <= prev[k] + 1e-12,
                          "method %d: CU rose from %g to %g at %g Gbit/s", k,
                          prev[k], cu[k], bw);
            prev[k] = cu[k];
        }
        ck_assert_msg(cu[0] <= cu[1] + 1e-12 && cu[1] <= cu[2] + 1e-12,
                      "order broken at %g Gbit/s: %g %g %g", bw, cu[0], cu[1],
                      cu[2]);
    }
    ck_assert(prev[0] < 0.05); /* DP at 0.1 Gbit/s is hopeless */
}
END_TEST

/* Reduce order, by hand: 3 layers, ops of 0.1 s, each layer's all-reduce
 * 0.5 s.  Step 1: R2 runs 0.5-1.0; at 1.0 layers 1 and 0 wait.  fifo sends
 * R1 then R0, so step 2's forward starts at 2.0 and step 2 ends its
 * reductions at 4.0.  forward_first sends R0 first: forward of layer 0 at
 * 1.5, layer 1 waits for R1 until 2.0, and the last reduction ends at 3.9. */
START_TEST(reduce_order_by_hand) {
    scn_config cfg;
    const char *s = "{\"model\": {\"params\": 3e6, \"layers\": 3, "
                    "\"step_time_s\": 0.9}, \"method\": {\"name\": \"dp\"}, "
                    "\"network\": {\"bandwidth_gbps\": 0.032}, \"steps\": 2}";
    run_result fifo = SIM(s, "network.reduce_order=\"fifo\"");
    run_result ff = SIM(s, "network.reduce_order=\"forward_first\"");
    ck_assert_double_eq_tol(fifo.wall_time_s, 4.0, 1e-9);
    ck_assert_double_eq_tol(ff.wall_time_s, 3.9, 1e-9);
    ck_assert_double_eq(fifo.bytes_sent_total, ff.bytes_sent_total);
}
END_TEST

/* The slowest up link bounds every ring step. */
START_TEST(heterogeneous_links_slowest_bounds_ring) {
    scn_config cfg;
    run_result r = SIM(one_layer, "method.name=dp", "workers.count=4",
                       "network.bandwidth_gbps=[80, 80, 80, 8]");
    double step = 0.1 + ring_s(2e6, 4, 1e9, 0);
    ck_assert_double_eq_tol(r.wall_time_s, 100 * step, 1e-9);
    /* A slow down link bounds it the same way. */
    r = SIM(one_layer, "method.name=dp", "workers.count=4",
            "network.bandwidth_gbps=80", "network.down_gbps=[80, 8, 80, 80]");
    ck_assert_double_eq_tol(r.wall_time_s, 100 * step, 1e-9);
}
END_TEST

/* A TCP window caps each flow at window / round trip. */
START_TEST(tcp_window_caps_flows) {
    scn_config cfg;
    run_result r = SIM(one_layer, "method.name=dp", "network.latency_ms=10",
                       "network.bandwidth_gbps=100",
                       "network.tcp_window_mb=1");
    double rate = 1e6 / 0.02; /* bytes/s */
    double step = 0.1 + ring_s(2e6, 2, rate, 0.01);
    ck_assert_double_eq_tol(r.wall_time_s, 100 * step, 1e-9);
    ck_assert_double_eq_tol(r.peak_link_gbps, rate * 8e-9, 1e-9);
}
END_TEST

/* Speeds and stragglers: the slowest worker sets the pace of DP. */
START_TEST(speed_and_stragglers) {
    scn_config cfg;
    run_result r = SIM(one_b, "method.name=dp", "workers.speed=[1, 0.5]",
                       "network.bandwidth_gbps=\"inf\"");
    ck_assert_double_eq_tol(r.wall_time_s, 400 * 0.2, 1e-9);
    ck_assert_double_eq_tol(r.per_worker[0].utilization, 0.5, 1e-9);
    ck_assert_double_eq_tol(r.per_worker[1].utilization, 1.0, 1e-9);
    r = SIM(one_b, "method.name=diloco", "network.bandwidth_gbps=\"inf\"",
            "workers.stragglers.probability=1",
            "workers.stragglers.slowdown=3");
    ck_assert_double_eq_tol(r.wall_time_s, 400 * 0.3, 1e-9);
    /* Random stragglers: everyone waits at syncs, CU < 1, and the same
     * seed gives the same run. */
    run_result a = SIM(one_b, "method.name=diloco", "workers.count=3",
                       "workers.stragglers.probability=0.1", "seed=9");
    run_result b = SIM(one_b, "method.name=diloco", "workers.count=3",
                       "workers.stragglers.probability=0.1", "seed=9");
    ck_assert(a.compute_utilization < 0.99);
    ck_assert_mem_eq(&a, &b, sizeof a);
}
END_TEST

/* DP failure from a trace: both workers lose the work since the step-100
 * checkpoint (0.05 s each), stall until the repair at 20 s, and redo it. */
START_TEST(dp_failure_rolls_back_to_checkpoint) {
    FILE *f = fopen("test_run_trace.txt", "w");
    fputs("# worker 1 fails mid step 101\n10.05 1 down\n20 1 up\n", f);
    fclose(f);
    scn_config cfg;
    run_result r = SIM(one_layer, "method.name=dp", "steps=200",
                       "network.bandwidth_gbps=\"inf\"",
                       "faults.trace=\"test_run_trace.txt\"",
                       "faults.checkpoint_steps=50");
    ck_assert_int_eq(r.failures, 1);
    ck_assert_double_eq_tol(r.wall_time_s, 20 + 100 * 0.1, 1e-9);
    ck_assert_double_eq_tol(r.lost_compute_s, 2 * 0.05, 1e-9);
    ck_assert_double_eq_tol(r.compute_time_s, 2 * (200 * 0.1 + 0.05), 1e-9);
    ck_assert_uint_eq(r.recovery_bytes, 4000000);
    remove("test_run_trace.txt");
}
END_TEST

/* DiLoCo failure: worker 0 goes on alone; worker 1 loses 0.05 s since
 * its last sync (step 100), downloads the parameters at its repair
 * (20.05 s, instantly at unbounded bandwidth) and rejoins after the next
 * sync (after step 210, at 21 s), for the last 90 steps. */
START_TEST(diloco_failure_others_go_on) {
    FILE *f = fopen("test_run_trace2.txt", "w");
    fputs("10.05 1 down\n20.05 1 up\n", f);
    fclose(f);
    scn_config cfg;
    run_result r = SIM(one_layer, "method.name=diloco", "method.H=10",
                       "steps=300", "network.bandwidth_gbps=\"inf\"",
                       "faults.trace=\"test_run_trace2.txt\"");
    ck_assert_double_eq_tol(r.wall_time_s, 30.0, 1e-9);
    ck_assert_double_eq_tol(r.per_worker[0].compute_time_s, 30.0, 1e-9);
    ck_assert_double_eq_tol(r.per_worker[1].compute_time_s, 10.05 + 9.0,
                            1e-9);
    ck_assert_double_eq_tol(r.per_worker[1].lost_compute_s, 0.05, 1e-9);
    ck_assert_int_eq(r.per_worker[1].failures, 1);
    ck_assert_int_eq(r.syncs, 30);
    remove("test_run_trace2.txt");
}
END_TEST

/* Random failures: deterministic per seed, and counted. */
START_TEST(random_failures_deterministic) {
    scn_config cfg;
    const char *s = "{\"model\": {\"params\": 1e8, \"layers\": 4, "
                    "\"step_time_s\": 1}, \"workers\": {\"count\": 3}, "
                    "\"method\": {\"name\": \"diloco\", \"H\": 20}, "
                    "\"faults\": {\"mtbf_hours\": 0.5, \"mttr_hours\": 0.1}, "
                    "\"steps\": 20000, \"seed\": 5}";
    run_result a = SIM(s, "seed=5");
    run_result b = SIM(s, "seed=5");
    ck_assert_mem_eq(&a, &b, sizeof a);
    ck_assert_int_gt(a.failures, 10);
    ck_assert(a.lost_compute_s > 0);
    ck_assert(a.recovery_bytes > 0);
    ck_assert(a.compute_utilization < 1.0);
    run_result dp = SIM(s, "method.name=dp");
    ck_assert(dp.compute_utilization < a.compute_utilization);
}
END_TEST

/* DP whose failures come faster than its checkpoints would roll back
 * forever: the run stops, unfinished, after 100 outages. */
START_TEST(dp_rollback_livelock_stops) {
    scn_config cfg;
    char err[512];
    const char *s = "{\"model\": {\"params\": 1e6, \"layers\": 2, "
                    "\"step_time_s\": 10}, \"method\": {\"name\": \"dp\"}, "
                    "\"faults\": {\"mtbf_hours\": 0.1, \"mttr_hours\": 0.01, "
                    "\"checkpoint_steps\": 1000}, \"steps\": 2000}";
    ck_assert_int_eq(scn_load_string(s, "t.json", NULL, 0, &cfg, err,
                                     sizeof err), 0);
    run_result r;
    ck_assert_int_eq(run_simulate(&cfg, NULL, &r, err, sizeof err), 0);
    ck_assert_int_eq(r.finished, 0);
    ck_assert_int_ge(r.failures, 100);
    ck_assert_double_eq(r.lost_compute_s, r.compute_time_s);
}
END_TEST

/* The FLOP rule: 6 N tokens / (chips * peak * MFU). */
START_TEST(step_time_from_flops) {
    scn_config cfg;
    run_result r = SIM("{\"model\": {\"params\": 1e10, \"layers\": 4, "
                       "\"tokens_per_step\": 1e6, \"chips\": 1000, "
                       "\"peak_tflops\": 1000, \"mfu\": 0.6}, \"steps\": 10}",
                       "network.bandwidth_gbps=\"inf\"");
    ck_assert_double_eq_tol(r.step_time_s, 6e16 / (1000 * 1e15 * 0.6), 1e-9);
    ck_assert_double_eq_tol(r.wall_time_s, 10 * r.step_time_s, 1e-8);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("run");
    TCase *tc = tcase_create("closed_forms");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, unbounded_bandwidth_gives_full_utilization);
    tcase_add_test(tc, dp_one_layer_wall_time_closed_form);
    tcase_add_test(tc, diloco_one_layer_wall_time_closed_form);
    tcase_add_test(tc, binary_gbit);
    tcase_add_test(tc, overlap_hides_tau_steps);
    tcase_add_test(tc, bytes_closed_forms);
    tcase_add_test(tc, utilization_monotone_and_ordered);
    tcase_add_test(tc, heterogeneous_links_slowest_bounds_ring);
    tcase_add_test(tc, reduce_order_by_hand);
    tcase_add_test(tc, tcp_window_caps_flows);
    tcase_add_test(tc, speed_and_stragglers);
    tcase_add_test(tc, dp_failure_rolls_back_to_checkpoint);
    tcase_add_test(tc, diloco_failure_others_go_on);
    tcase_add_test(tc, random_failures_deterministic);
    tcase_add_test(tc, step_time_from_flops);
    tcase_add_test(tc, dp_rollback_livelock_stops);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
