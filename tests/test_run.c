/*
 * test_run.c -- whole runs against closed forms.
 *
 * Each test states the formula it checks: wall time, bytes and compute
 * utilization of DP, DiLoCo and Streaming DiLoCo on small worlds where the
 * answer can be written down, plus the orderings the paper's curves show.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/cli/cli.h"
#include "sim/engine/collective.h"
#include "sim/engine/payload.h"
#include "sim/out/report.h"
#include "sim/engine/run.h"
#include "sim/base/version.h"
#include "sim/base/msg.h"

/* Loads a scenario from text plus overrides (NULL-terminated) and runs it.
 * The closed forms here reduce layer by layer: both bucket sizes are 0
 * before the case's own overrides. */
static run_result sim_cfg(scn_config *cfg, const char *json, ...) {
    const char *sets[32] = {"method.dp_bucket_mb=0", "method.bucket_mb=0"};
    int n = 2;
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

/* Loads a scenario (no overrides), lets `edit` change the config the way
 * no loader would allow, runs it and returns the code. */
static int run_edited(const char *json, void (*edit)(scn_config *),
                      run_result *r, char *err, size_t errlen) {
    scn_config cfg;
    int rc = scn_load_string(json, "test.json", NULL, 0, &cfg, err, errlen);
    ck_assert_msg(rc == 0, "load: %s", err);
    if (edit) edit(&cfg);
    memset(r, 0x5a, sizeof *r);
    return run_simulate(&cfg, NULL, r, err, errlen);
}

/* One layer of 1e6 parameters, 0.1 s steps, two workers. */
static const char *one_layer =
    "{\"model\": {\"params\": 1e6, \"layers\": 1, \"step_time_s\": 0.1},"
    " \"workers\": {\"count\": 2}, \"steps\": 100}";

static const char *one_b =
    "{\"model\": {\"params\": 1e9, \"layers\": 24, \"step_time_s\": 0.1},"
    " \"workers\": {\"count\": 2}, \"steps\": 400}";

static double ns_ceil(double s) {
    return ceil(s * 1e9) * 1e-9;
}

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
                           "network.bandwidth_gbps=8", "network.latency_ms=3");
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
            payload += payload_layer_bytes(&cfg, cfg.dp_codec, l);
        ck_assert_uint_eq(payload, 2000000000);
        ck_assert_uint_eq(dp.bytes_sent_total, 400 * f * payload);
        /* every worker's share, exactly: its ring chunks of every layer */
        for (int i = 0; i < M; i++) {
            uint64_t mine = 0;
            for (int l = 0; l < 24; l++) {
                uint64_t S = payload_layer_bytes(&cfg, cfg.dp_codec, l);
                mine += 2 * S - coll_chunk_bytes(S, M, (i + 1) % M) -
                        coll_chunk_bytes(S, M, (i + 2) % M);
            }
            ck_assert_uint_eq(dp.per_worker[i].bytes_sent, 400 * mine);
        }
        run_result dl = SIM(one_b, "method.name=diloco", count);
        ck_assert_uint_eq(dl.bytes_sent_total * 100, dp.bytes_sent_total);
        run_result st =
            SIM(one_b, "method.name=streaming", count, "method.fragments=8",
                "method.tau=1", "method.codec=\"e3m0\"");
        /* 24 layers of about 1e9/24 values: 4 bits each plus one 4-byte
         * scale per layer; every fragment syncs 400/H = 4 times. */
        uint64_t e3m0 = 0;
        for (int l = 0; l < 24; l++) {
            uint64_t n = (uint64_t)((l + 1) * 1000000000ull / 24 -
                                    l * 1000000000ull / 24);
            ck_assert_uint_eq(payload_layer_bytes(&cfg, cfg.codec, l),
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
                       "network.bandwidth_gbps=100", "network.tcp_window_mb=1");
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
    ck_assert_double_eq_tol(r.per_worker[1].compute_time_s, 10.05 + 9.0, 1e-9);
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
                                     sizeof err),
                     0);
    run_result r;
    ck_assert_int_eq(run_simulate(&cfg, NULL, &r, err, sizeof err), 0);
    ck_assert_int_eq(r.finished, 0);
    ck_assert_int_ge(r.failures, 100);
    ck_assert_double_eq(r.lost_compute_s, r.compute_time_s);
    ck_assert_ptr_nonnull(strstr(r.stop_reason, "rolled back 100 times"));
    ck_assert_int_eq(r.useful_ns, 0);
    ck_assert_double_eq(r.goodput, 0);
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

/* ---- defects and exactness -------------------------------------------- */

static const char *two_layers =
    "{\"model\": {\"params\": 1e6, \"layers\": 2, \"step_time_s\": 0.1},"
    " \"workers\": {\"count\": 2}, \"steps\": 50}";

static void bw_tiny(scn_config *c) {
    for (int i = 0; i < c->workers; i++) c->up_gbps[i] = 1e-300;
}
static void window_tiny(scn_config *c) {
    c->tcp_window_mb = 1e-300;
    for (int i = 0; i < c->workers; i++) c->latency_ms[i] = 10;
}
static void step_huge(scn_config *c) {
    c->step_time_s = 1e8;
}
static void speed_tiny(scn_config *c) {
    c->speed[1] = 1e-300;
}
static void step_tiny(scn_config *c) {
    c->step_time_s = 1e-10;
}
static void latency_huge(scn_config *c) {
    c->latency_ms[0] = 1e13;
}
static void speed_negative(scn_config *c) {
    c->speed[0] = -1;
}

/* The stop is clean: a reason, figures that are still figures. */
static void assert_stopped(const run_result *r, const char *why) {
    ck_assert_int_eq(r->finished, 0);
    ck_assert_msg(strstr(r->stop_reason, why) != NULL, "reason '%s' lacks '%s'",
                  r->stop_reason, why);
    ck_assert_int_ge(r->wall_ns, 0);
    ck_assert(r->compute_utilization >= 0 && r->compute_utilization <= 1);
    ck_assert(r->goodput >= 0 && r->goodput <= r->compute_utilization + 1e-12);
}

/* defect 5: absurd numbers gave garbage with exit 0 (transfers ending at
 * once with CU 1 from a NaN cast; time past 2^63 ns with CU -5e9; a step
 * shorter than 1 ns with wall 0; a 1e13 ms latency reported as "out of
 * memory").  Each now stops unfinished with a reason, and returns 0. */
START_TEST(defect5_unrepresentable_runs_stop_with_a_reason) {
    struct {
        void (*edit)(scn_config *);
        const char *why;
    } cases[] = {
        {bw_tiny, "can never complete"},
        {window_tiny, "can never complete"},
        {step_huge, "after 2^62 ns"},
        {speed_tiny, "does not fit in 2^62 ns"},
        {step_tiny, "shorter than 1 ns"},
        {latency_huge, "latency of 10000000000000 ms"},
        {speed_negative, "step of -0.1 s does not fit"},
    };
    const char *methods[] = {"dp", "diloco"};
    for (int m = 0; m < 2; m++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            char json[512], err[256];
            snprintf(json, sizeof json,
                     "{\"model\": {\"params\": 1e6, \"layers\": 2, "
                     "\"step_time_s\": 0.1}, \"method\": {\"name\": \"%s\", "
                     "\"H\": 5}, \"steps\": 50}",
                     methods[m]);
            run_result r;
            int rc = run_edited(json, cases[k].edit, &r, err, sizeof err);
            ck_assert_msg(rc == 0, "case %zu: %s", k, err);
            assert_stopped(&r, cases[k].why);
        }
}
END_TEST

/* defect 10: DiLoCo whose failures come faster than a recovery download
 * (4 MB at 0.01 Gbit/s takes 3.2 s, failures every 0.36 s) looped on
 * failure events forever.  It stops after 100 failures per worker in a
 * row without any worker finishing a step; DP the same way. */
START_TEST(defect10_failure_loop_stops) {
    scn_config cfg;
    char err[256];
    const char *methods[] = {"method.name=diloco", "method.name=streaming",
                             "method.name=dp"};
    for (int m = 0; m < 3; m++) {
        const char *sets[] = {methods[m], "network.bandwidth_gbps=0.01",
                              "faults.mtbf_hours=0.0001",
                              "faults.mttr_hours=0.0001", "method.fragments=1"};
        ck_assert_int_eq(scn_load_string(one_layer, "t.json", sets, 5, &cfg,
                                         err, sizeof err),
                         0);
        run_result r;
        ck_assert_int_eq(run_simulate(&cfg, NULL, &r, err, sizeof err), 0);
        assert_stopped(&r, "failures in a row");
        ck_assert_int_ge(r.failures, 200);
    }
}
END_TEST

static void huge_download(scn_config *c) {
    c->recovery_bytes_per_param = 1e300;
}

/* defect 5, recovery: a download of 1e306 bytes was an inf flow size,
 * refused by the net and reported as "out of memory" (exit 1).  A run
 * without failures never downloads and finishes; one whose worker is
 * repaired stops with the reason. */
START_TEST(defect5_unrepresentable_download) {
    run_result r;
    char err[256];
    ck_assert_int_eq(run_edited(one_layer, huge_download, &r, err, sizeof err),
                     0);
    ck_assert_int_eq(r.finished, 1);
    FILE *f = fopen("test_run_trace6.txt", "w");
    fputs("1.05 1 down\n2 1 up\n", f);
    fclose(f);
    scn_config cfg;
    const char *sets[] = {"faults.trace=\"test_run_trace6.txt\""};
    ck_assert_int_eq(scn_load_string(one_layer, "t.json", sets, 1, &cfg, err,
                                     sizeof err),
                     0);
    huge_download(&cfg);
    ck_assert_int_eq(run_simulate(&cfg, NULL, &r, err, sizeof err), 0);
    remove("test_run_trace6.txt");
    assert_stopped(&r, "worker 1: a recovery download of 1e+306 bytes");
}
END_TEST

static void bad_schedule(scn_config *c) {
    c->sched.P = 5;
} /* > layers */
static void missing_trace(scn_config *c) {
    snprintf(c->trace_path, sizeof c->trace_path, "no/such/trace.txt");
}

/* defect 7: run_simulate turned every error into -1, so a schedule the
 * config cannot run came out as a runtime failure (exit 1).  Input
 * problems are MSG_EINPUT (exit 2), passed through unchanged. */
START_TEST(defect7_input_errors_are_einput) {
    run_result r;
    char err[256] = "";
    ck_assert_int_eq(run_edited(two_layers, bad_schedule, &r, err, sizeof err),
                     MSG_EINPUT);
    ck_assert(strlen(err) > 0);
    ck_assert_int_eq(msg_exit_status(MSG_EINPUT), 2);
    err[0] = 0;
    ck_assert_int_eq(run_edited(two_layers, missing_trace, &r, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "no/such/trace.txt"));
}
END_TEST

/* Times are exact integers of ns: DP, one layer, 3 workers, 3 ms, 8 Gbit/s:
 * a step is 1e8 + 4 (3e6 + 666667) ns (chunks of 2e6 / 3 bytes round up to
 * 666667), 100 of them; the JSON prints that count's exact decimal. */
START_TEST(times_exact) {
    scn_config cfg;
    run_result r = SIM(one_layer, "method.name=dp", "workers.count=3",
                       "network.bandwidth_gbps=8", "network.latency_ms=3");
    int64_t step = 100000000 + 4 * (3000000 + 666667);
    ck_assert_int_eq(r.wall_ns, 100 * step);
    ck_assert_int_eq(r.compute_ns, 3 * 100 * 100000000ll);
    ck_assert_int_eq(r.step_ns, 100000000);
    char buf[REPORT_SECONDS_MAX];
    ck_assert_str_eq(report_seconds(125000000001, buf), "125.000000001");
    ck_assert_str_eq(report_seconds(40000000000, buf), "40");
    ck_assert_str_eq(report_seconds(1, buf), "0.000000001");
    ck_assert_str_eq(report_seconds(-1500000000, buf), "-1.5");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    report_run_json(f, &cfg, &r);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "\"wall_time_s\": 11.4666668,\n"));
    ck_assert_ptr_nonnull(strstr(text, "\"compute_time_s\": 30,\n"));
    ck_assert_ptr_nonnull(strstr(text, "\"step_time_s\": 0.1,\n"));
    char want[64];
    snprintf(want, sizeof want, "\"bytes_sent_total\": %llu,\n",
             (unsigned long long)r.bytes_sent_total);
    ck_assert_ptr_nonnull(strstr(text, want));
    ck_assert_uint_eq(r.bytes_sent_total, 100 * 2 * 2 * 2000000ull);
    /* self-describing: version, digest, resolved inputs */
    ck_assert_ptr_nonnull(strstr(text, "\"version\": \"" DILOSIM_VERSION));
    snprintf(want, sizeof want, "\"scenario_digest\": \"%016llx\"",
             (unsigned long long)cfg.digest);
    ck_assert_ptr_nonnull(strstr(text, want));
    ck_assert_ptr_nonnull(strstr(text, "\"up_gbps\": 8,\n"));
    ck_assert_ptr_nonnull(strstr(text, "\"latency_ms\": 3,\n"));
    ck_assert_ptr_nonnull(strstr(text, "\"collective\": \"ring\""));
    ck_assert_ptr_nonnull(strstr(text, "\"codec\": \"bf16\""));
    ck_assert_ptr_nonnull(strstr(text, "\"stop_reason\": \"\""));
    cJSON *j = cJSON_Parse(text);
    ck_assert_ptr_nonnull(j);
    cJSON_Delete(j);
    free(text);
    /* per-worker links that differ are listed */
    r = SIM(one_layer, "method.name=dp", "network.bandwidth_gbps=[8, 4]");
    f = open_memstream(&text, &len);
    report_run_json(f, &cfg, &r);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "\"up_gbps\": [8, 4],\n"));
    free(text);
}
END_TEST

/* Goodput = useful compute at speed 1 / (M * wall).  Stragglers (every
 * step 3x slower) keep CU at 1 but goodput at 1/3; a half-speed worker
 * is busy all the time at half the goodput; work redone after a DP
 * rollback counts once. */
/* ---- measure: the syncs past the last step ----------------------------- */

/* The syncs of fragment position q (offset o_q = floor((q+1)H/P), H where
 * that is 0) are applied after o_q + kH and taken `delay` steps earlier
 * (tau, or H with outer or eager overlap).  A run of T steps takes those
 * with 1 <= take and apply <= T; the ones with take <= T < apply are not
 * waited for (measure run), or taken and waited for (measure steady). */
static void sync_counts(int H, int P, int delay, int64_t T, int64_t *taken,
                        int64_t *trailing) {
    *taken = *trailing = 0;
    for (int q = 0; q < P; q++) {
        int64_t o = (int64_t)(q + 1) * H / P;
        if (!o) o = H;
        for (int64_t apply = o; apply - delay <= T; apply += H) {
            if (apply - delay < 1) continue;
            if (apply <= T) ++*taken;
            else ++*trailing;
        }
    }
}

START_TEST(syncs_not_waited_closed_form) {
    static const char *const overlaps[] = {"inner", "outer", "eager"};
    int cases = 0, trailing_cases = 0;
    for (int ov = 0; ov < 3; ov++)
        for (int H = 2; H <= 6; H++)
            for (int P = 1; P <= 4; P++)
                for (int tau = 0; tau < (ov ? 1 : H); tau++)
                    for (int64_t T = 3 * H - 1; T <= 3 * H + 1; T++) {
                        char sets[5][64];
                        snprintf(sets[0], 64, "method.overlap=\"%s\"",
                                 overlaps[ov]);
                        snprintf(sets[1], 64, "method.H=%d", H);
                        snprintf(sets[2], 64, "method.fragments=%d", P);
                        snprintf(sets[3], 64, "method.tau=%d", tau);
                        snprintf(sets[4], 64, "steps=%lld", (long long)T);
                        const char *doc =
                            "{\"model\": {\"params\": 4e6, \"layers\": 4,"
                            " \"step_time_s\": 0.1},"
                            " \"workers\": {\"count\": 2},"
                            " \"network\": {\"bandwidth_gbps\": 10},"
                            " \"method\": {\"name\": \"streaming\"}}";
                        scn_config cfg;
                        run_result run = SIM(doc, sets[0], sets[1], sets[2],
                                             sets[3], sets[4]);
                        run_result steady =
                            SIM(doc, sets[0], sets[1], sets[2], sets[3],
                                sets[4], "measure=\"steady\"");
                        int64_t taken, trailing;
                        sync_counts(H, P, ov ? H : tau, T, &taken, &trailing);
                        ck_assert_msg(run.syncs == taken &&
                                          run.syncs_not_waited == trailing &&
                                          steady.syncs == taken + trailing &&
                                          steady.syncs_not_waited == 0,
                                      "%s H %d P %d tau %d T %lld: syncs %lld"
                                      " + %lld not waited, steady %lld + %lld"
                                      " (expected %lld + %lld)",
                                      overlaps[ov], H, P, tau, (long long)T,
                                      (long long)run.syncs,
                                      (long long)run.syncs_not_waited,
                                      (long long)steady.syncs,
                                      (long long)steady.syncs_not_waited,
                                      (long long)taken, (long long)trailing);
                        ck_assert(steady.wall_ns >= run.wall_ns);
                        cases++;
                        trailing_cases += trailing > 0;
                    }
    ck_assert_int_gt(trailing_cases, cases / 4);
}
END_TEST

/* DiLoCo, one layer of 1e6 parameters (bf16: S = 2e6 bytes), 0.1 s steps,
 * H 5, T = 5k, 2 workers at 0.016 Gbit/s (2e6 B/s): the ring takes
 * C = 2 x (S/2)/B = 1 s, against H t = 0.5 s of compute.
 *
 * Blocking, inner overlap: each outer step is H t of compute, then C:
 * the steady-state bound H t / (H t + C) is every run's, and the sync
 * after the last step applies after it too: nothing is left out.
 *
 * Outer overlap: the sync taken after step jH runs while steps
 * jH+1..(j+1)H compute, and the arrival for the next one waits for it: a
 * period lasts max(H t, C) = C, and the steady-state bound is H t / C =
 * 0.5.  The sync taken after step T would apply after T + H: measure run
 * does not take it (1 not waited), so the run ends with the sync taken
 * after T - H: wall = H t + (k-1) C, utilization k H t / (H t + (k-1) C),
 * above the bound (4/7 = 0.571 for k 4).  Measure steady waits for it:
 * wall = H t + k C, utilization k H t / (H t + k C), below the bound
 * by the first period, which overlaps no sync (4/9 = 0.444 for k 4); both
 * tend to the bound as k grows. */
START_TEST(measure_steady_closed_forms) {
    scn_config cfg;
    const char *doc =
        "{\"model\": {\"params\": 1e6, \"layers\": 1, \"step_time_s\": 0.1},"
        " \"workers\": {\"count\": 2},"
        " \"network\": {\"bandwidth_gbps\": 0.016},"
        " \"method\": {\"name\": \"diloco\", \"H\": 5}}";
    double Ht = 0.5, C = ring_s(2e6, 2, 2e6, 0);
    ck_assert_double_eq_tol(C, 1.0, 1e-12);
    for (int k = 2; k <= 6; k++) {
        char steps[32];
        snprintf(steps, sizeof steps, "steps=%d", 5 * k);
        double T = 5 * k * 0.1;
        run_result b = SIM(doc, steps);
        run_result bs = SIM(doc, steps, "measure=\"steady\"");
        ck_assert_int_eq(b.syncs_not_waited, 0);
        ck_assert_double_eq_tol(b.compute_utilization, Ht / (Ht + C), 1e-9);
        ck_assert_double_eq_tol(bs.compute_utilization, Ht / (Ht + C), 1e-9);
        ck_assert_int_eq(bs.wall_ns, b.wall_ns);

        run_result o = SIM(doc, steps, "method.overlap=\"outer\"");
        run_result os =
            SIM(doc, steps, "method.overlap=\"outer\"", "measure=\"steady\"");
        ck_assert_int_eq(o.syncs, k - 1);
        ck_assert_int_eq(o.syncs_not_waited, 1);
        ck_assert_int_eq(os.syncs, k);
        ck_assert_int_eq(os.syncs_not_waited, 0);
        ck_assert_double_eq_tol(o.wall_time_s, Ht + (k - 1) * C, 1e-9);
        ck_assert_double_eq_tol(os.wall_time_s, Ht + k * C, 1e-9);
        ck_assert_double_eq_tol(o.compute_utilization, T / (Ht + (k - 1) * C),
                                1e-9);
        ck_assert_double_eq_tol(os.compute_utilization, T / (Ht + k * C), 1e-9);
        ck_assert(o.compute_utilization > Ht / C);  /* beats the bound */
        ck_assert(os.compute_utilization < Ht / C); /* does not */
    }
}
END_TEST

START_TEST(goodput_closed_forms) {
    scn_config cfg;
    run_result r =
        SIM(one_b, "method.name=diloco", "network.bandwidth_gbps=\"inf\"",
            "workers.stragglers.probability=1",
            "workers.stragglers.slowdown=3");
    ck_assert_double_eq(r.compute_utilization, 1.0);
    ck_assert_int_eq(r.useful_ns, 2 * 400 * 100000000ll);
    ck_assert_int_eq(r.wall_ns, 400 * 300000000ll);
    ck_assert_double_eq(r.goodput, (double)r.useful_ns / (2.0 * r.wall_ns));
    ck_assert_double_eq_tol(r.goodput, 1.0 / 3, 1e-15);
    for (int i = 0; i < 2; i++)
        ck_assert_double_eq_tol(r.per_worker[i].goodput, 1.0 / 3, 1e-15);
    r = SIM(one_b, "method.name=dp", "workers.speed=[1, 0.5]",
            "network.bandwidth_gbps=\"inf\"");
    ck_assert_double_eq_tol(r.per_worker[1].utilization, 1.0, 1e-12);
    ck_assert_double_eq_tol(r.per_worker[1].goodput, 0.5, 1e-12);
    ck_assert_double_eq_tol(r.per_worker[0].goodput, 0.5, 1e-12);
    ck_assert_double_eq_tol(r.goodput, 0.5, 1e-12);
    FILE *f = fopen("test_run_trace3.txt", "w");
    fputs("10.05 1 down\n20 1 up\n", f);
    fclose(f);
    r = SIM(one_layer, "method.name=dp", "steps=200",
            "network.bandwidth_gbps=\"inf\"",
            "faults.trace=\"test_run_trace3.txt\"",
            "faults.checkpoint_steps=50");
    remove("test_run_trace3.txt");
    ck_assert_int_eq(r.useful_ns, 2 * 200 * 100000000ll);
    ck_assert_int_eq(r.wall_ns, 30000000000ll);
    ck_assert_double_eq(r.goodput, 20.0 / 30.0);
    ck_assert(r.goodput < r.compute_utilization);
}
END_TEST

/* ---- the timeline --------------------------------------------------------- */

#define MAXSPANS 200000

typedef struct {
    report_trace tw;
    run_result r;
    int n;
    run_span s[MAXSPANS];
} capture;

static void capture_span(void *ctx, const run_span *s) {
    capture *c = ctx;
    if (c->n < MAXSPANS) c->s[c->n++] = *s;
    report_trace_span(&c->tw, s);
}

/* Runs json with the trace written to a memory buffer (steps a..b). */
static char *traced(const char *json, const char *set, capture *c, int64_t a,
                    int64_t b) {
    scn_config cfg;
    char err[256];
    const char *sets[] = {set};
    ck_assert_int_eq(scn_load_string(json, "t.json", sets, set ? 1 : 0, &cfg,
                                     err, sizeof err),
                     0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    c->n = 0;
    report_trace_begin(&c->tw, f, cfg.workers, a, b);
    run_hooks h = {.span = capture_span, .span_ctx = c};
    ck_assert_int_eq(run_simulate(&cfg, &h, &c->r, err, sizeof err), 0);
    report_trace_end(&c->tw);
    fclose(f);
    return text;
}

static const char *eight_layers =
    "{\"model\": {\"params\": 1e9, \"layers\": 8, \"step_time_s\": 0.7},"
    " \"workers\": {\"count\": 2, \"speed\": [1, 0.93]},"
    " \"method\": {\"name\": \"streaming\", \"H\": 10, \"fragments\": 4,"
    " \"tau\": 1}, \"network\": {\"bandwidth_gbps\": 3.3,"
    " \"latency_ms\": 7.77}, \"steps\": 60}";

/* Trace nesting: a viewer reads ts and dur as doubles and nests a slice
 * whose ts is below the previous slice's ts + dur.  Before, ts and dur
 * were the exact decimals of their ns in microseconds, and the double sum
 * missed the next ts for many back-to-back compute slices, which viewers
 * drew nested.  Now, for every pair of slices where one ends exactly when
 * the next starts, double(ts) + double(dur) == double(next ts). */
START_TEST(trace_back_to_back_slices_do_not_nest) {
    static capture c;
    char *text = traced(eight_layers, NULL, &c, 1, INT64_MAX);
    cJSON *j = cJSON_Parse(text);
    ck_assert_ptr_nonnull(j);
    cJSON *evs = cJSON_GetObjectItem(j, "traceEvents");
    int nx = 0, pairs = 0, old_misses = 0;
    double prev_end[2][2] = {{-1, -1}, {-1, -1}};
    int64_t prev_end_ns[2][2] = {{-1, -1}, {-1, -1}};
    cJSON *e;
    cJSON_ArrayForEach(e, evs) {
        if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "X")) continue;
        ck_assert_int_lt(nx, c.n);
        const run_span *s = &c.s[nx++];
        int pid = cJSON_GetObjectItem(e, "pid")->valueint;
        int tid = cJSON_GetObjectItem(e, "tid")->valueint;
        ck_assert_int_eq(pid, s->worker);
        double ts = cJSON_GetObjectItem(e, "ts")->valuedouble;
        double dur = cJSON_GetObjectItem(e, "dur")->valuedouble;
        /* ts is exact; dur lands exactly on the end */
        ck_assert(ts == (double)s->start_ns / 1000.0);
        ck_assert(ts + dur == (double)s->end_ns / 1000.0);
        if (tid == 0 && prev_end_ns[pid][0] == s->start_ns) {
            pairs++;
            ck_assert(prev_end[pid][0] == ts);
            /* what the old exact-decimal dur gave */
            char old[64];
            int64_t d = s->end_ns - s->start_ns;
            snprintf(old, sizeof old, "%lld.%03lld", (long long)(d / 1000),
                     (long long)(d % 1000));
            if (ts + strtod(old, NULL) != (double)s->end_ns / 1000.0)
                old_misses++;
        }
        if (tid == 0) {
            prev_end[pid][0] = ts + dur;
            prev_end_ns[pid][0] = s->end_ns;
        }
    }
    ck_assert_int_eq(nx, c.n);
    ck_assert_int_gt(pairs, 1000);
    ck_assert_int_gt(old_misses, 0); /* the test catches the old format */
    cJSON_Delete(j);
    free(text);
}
END_TEST

/* Communication spans carry fragment and bytes; failures show as down,
 * recovery and rejoin_wait spans (the DiLoCo failure above: down 10.05 to
 * 20.05 s, rejoin_wait until the sync after step 210 at 21 s). */
START_TEST(trace_args_and_failure_spans) {
    static capture c;
    FILE *f = fopen("test_run_trace4.txt", "w");
    fputs("10.05 1 down\n20.05 1 up\n", f);
    fclose(f);
    const char *s =
        "{\"model\": {\"params\": 1e6, \"layers\": 1, \"step_time_s\": 0.1},"
        " \"workers\": {\"count\": 2}, \"steps\": 300,"
        " \"method\": {\"name\": \"diloco\", \"H\": 10},"
        " \"network\": {\"bandwidth_gbps\": \"inf\"},"
        " \"faults\": {\"trace\": \"test_run_trace4.txt\"}}";
    char *text = traced(s, NULL, &c, 1, INT64_MAX);
    remove("test_run_trace4.txt");
    int down = 0, rec = 0, rejoin = 0, ar = 0;
    for (int i = 0; i < c.n; i++) {
        const run_span *p = &c.s[i];
        if (!strcmp(p->name, "down")) {
            down++;
            ck_assert_int_eq(p->worker, 1);
            ck_assert_int_eq(p->start_ns, 10050000000ll);
            ck_assert_int_eq(p->end_ns, 20050000000ll);
        } else if (!strcmp(p->name, "recovery")) {
            rec++;
            ck_assert_uint_eq(p->bytes, 4000000);
        } else if (!strcmp(p->name, "rejoin_wait")) {
            rejoin++;
            ck_assert_int_eq(p->end_ns, 21000000000ll);
        } else if (!strcmp(p->name, "allreduce")) {
            ar++;
            ck_assert_int_eq(p->fragment, 0);
            ck_assert_uint_eq(p->bytes, 2000000); /* bf16 */
        }
    }
    ck_assert_int_eq(down, 1);
    ck_assert_int_eq(rec, 1);
    ck_assert_int_eq(rejoin, 1);
    ck_assert_int_gt(ar, 0);
    /* the op cut short at 10.05 s has a span too (before, none), so the
     * compute slices add up to the compute time */
    int cut = 0;
    int64_t busy[2] = {0, 0};
    for (int i = 0; i < c.n; i++) {
        const run_span *p = &c.s[i];
        if (p->track != 0 || !strcmp(p->name, "down") ||
            !strcmp(p->name, "rejoin_wait"))
            continue;
        busy[p->worker] += p->end_ns - p->start_ns;
        if (strstr(p->name, "_interrupted")) {
            cut++;
            ck_assert_int_eq(p->worker, 1);
            ck_assert_int_eq(p->end_ns, 10050000000ll);
        }
    }
    ck_assert_int_eq(cut, 1);
    for (int w = 0; w < 2; w++)
        ck_assert_int_eq(busy[w], c.r.per_worker[w].compute_ns);
    ck_assert_ptr_nonnull(strstr(text, "\"name\": \"down\""));
    ck_assert_ptr_nonnull(strstr(text, "\"fragment\": 0, \"bytes\": 2000000"));
    free(text);
}
END_TEST

/* --trace-steps A:B: only spans of steps A..B are written. */
START_TEST(trace_steps_window) {
    static capture c;
    char *text = traced(eight_layers, NULL, &c, 3, 4);
    cJSON *j = cJSON_Parse(text);
    ck_assert_ptr_nonnull(j);
    int n = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents")) {
        cJSON *args = cJSON_GetObjectItem(e, "args");
        cJSON *st = args ? cJSON_GetObjectItem(args, "step") : NULL;
        if (!st) continue;
        ck_assert(st->valueint == 3 || st->valueint == 4);
        n++;
    }
    int want = 0;
    for (int i = 0; i < c.n; i++) want += c.s[i].step >= 3 && c.s[i].step <= 4;
    ck_assert_int_eq(n, want);
    ck_assert_int_ge(n, 2 * 2 * 24); /* both workers' 3L ops, both steps */
    cJSON_Delete(j);
    free(text);
    /* the command line: a bad window is a usage error, a good one works */
    FILE *f = fopen("test_run_cli.json", "w");
    fputs(eight_layers, f);
    fclose(f);
    const char *bad[] = {"0:3", "4:3", "x", "3:", "2:3x"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char *argv[] = {"test_run_cli.json",  "--out",
                        "test_run_cli.out",   "--trace",
                        "test_run_cli.trace", "--trace-steps",
                        (char *)bad[k]};
        ck_assert_int_eq(cli_run(7, argv), CLI_EXIT_INPUT);
    }
    char *alone[] = {"test_run_cli.json", "--trace-steps", "2:3"};
    ck_assert_int_eq(cli_run(3, alone), CLI_EXIT_INPUT);
    char *good[] = {"test_run_cli.json",
                    "--out",
                    "test_run_cli.out",
                    "--trace",
                    "test_run_cli.trace",
                    "--trace-steps",
                    "2:3"};
    ck_assert_int_eq(cli_run(7, good), CLI_EXIT_OK);
    f = fopen("test_run_cli.trace", "r");
    ck_assert_ptr_nonnull(f);
    static char buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    j = cJSON_Parse(buf);
    ck_assert_ptr_nonnull(j);
    n = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents")) {
        cJSON *args = cJSON_GetObjectItem(e, "args");
        cJSON *st = args ? cJSON_GetObjectItem(args, "step") : NULL;
        if (!st) continue;
        ck_assert(st->valueint == 2 || st->valueint == 3);
        n++;
    }
    ck_assert_int_ge(n, 2 * 2 * 24);
    cJSON_Delete(j);
    remove("test_run_cli.json");
    remove("test_run_cli.out");
    remove("test_run_cli.trace");
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
    tcase_add_test(tc, defect5_unrepresentable_runs_stop_with_a_reason);
    tcase_add_test(tc, defect5_unrepresentable_download);
    tcase_add_test(tc, defect10_failure_loop_stops);
    tcase_add_test(tc, defect7_input_errors_are_einput);
    tcase_add_test(tc, times_exact);
    tcase_add_test(tc, goodput_closed_forms);
    tcase_add_test(tc, syncs_not_waited_closed_form);
    tcase_add_test(tc, measure_steady_closed_forms);
    tcase_add_test(tc, trace_back_to_back_slices_do_not_nest);
    tcase_add_test(tc, trace_args_and_failure_spans);
    tcase_add_test(tc, trace_steps_window);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
