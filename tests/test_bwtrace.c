/*
 * test_bwtrace.c -- bandwidth that changes over time
 * (network.bandwidth_trace, sim/config/bw_trace.h, sim/engine/bwstep.c).
 *
 * The closed forms of docs/network.md computed by hand next to the
 * simulated instants: one flow over a link that steps from r1 to r2 while
 * it moves (finish = t + (S - r1 (t - t0)) / r2), a step during the
 * latency (no bytes move yet: the whole flow at r2), a ring of two workers
 * whose worker 1's links step, `all` against one link; the diurnal slots;
 * every parse error with its exact message; then randomized worlds with
 * traces, with the fast-forward and --full, to the same bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#define TRACE_DIR_TEMPLATE "/tmp/dilosim-bwtrace-XXXXXX"
#include "trace_dir.h"
#include "random_world.h"
#include "sim/config/bw_trace.h"
#include "sim/engine/net.h"
#include "sim/engine/run.h"

/* ---- the net alone: net_link_set at an instant of a busy net ---------- */

static int64_t done_at;
static void on_done(void *ctx, int64_t now, int flow, uint64_t tag) {
    (void)ctx, (void)flow, (void)tag;
    done_at = now;
}

/* One flow of S bytes from t0 (after latency lat) over one link of r1
 * bytes/s that becomes r2 at t: its completion instant. */
static int64_t one_flow(double S, int64_t t0, int64_t lat, double r1, double r2,
                        int64_t t) {
    net *n = net_new(1);
    ck_assert_ptr_nonnull(n);
    net_link_set(n, 0, r1);
    net_advance(n, t0);
    ck_assert_int_ge(net_flow_add(n, t0, lat, 0, -1, (uint64_t)S, INFINITY,
                                  on_done, NULL, 0),
                     0);
    done_at = -1;
    net_advance(n, t);
    ck_assert_int_eq(done_at, -1); /* the step comes before its end */
    net_link_set(n, 0, r2);
    while (done_at < 0 && net_next_time(n) != INT64_MAX)
        net_advance(n, net_next_time(n));
    net_free(n);
    return done_at;
}

START_TEST(flow_spans_a_step) {
    /* 3e9 bytes at 1e9 B/s from 0.5 s, 0.5e9 B/s from 1.5 s: 1e9 bytes
     * move before the step, 2e9 after, at 0.5e9 B/s */
    double S = 3e9, r1 = 1e9, r2 = 0.5e9, t0 = 0.5, t = 1.5;
    double finish = t + (S - r1 * (t - t0)) / r2;
    ck_assert_double_eq(finish, 5.5);
    ck_assert_int_eq(one_flow(S, 500000000, 0, r1, r2, 1500000000),
                     llround(finish * 1e9));
    /* up: 2e9 bytes left at 4e9 B/s */
    finish = t + (S - r1 * (t - t0)) / 4e9;
    ck_assert_int_eq(one_flow(S, 500000000, 0, r1, 4e9, 1500000000),
                     llround(finish * 1e9));
}
END_TEST

START_TEST(step_during_latency) {
    /* active at 2 s, the step at 1 s: every byte at r2 */
    double S = 1e9, r2 = 0.25e9;
    double finish = 2 + S / r2;
    ck_assert_int_eq(one_flow(S, 0, 2000000000, 1e9, r2, 1000000000),
                     llround(finish * 1e9));
}
END_TEST

/* ---- the engine: a trace file in a run ---------------------------------- */

/* DP, one layer of 1e6 parameters (bf16: S = 2e6 bytes), one step of
 * 0.1 s, two workers at 8 Gbit/s = 1e9 B/s, one-way latency lat_ms: the
 * wall is 0.1 s then two ring steps of a 1e6-byte chunk. */
static run_result dp_step(const char *trace, double lat_ms) {
    char json[1024], err[1024];
    snprintf(json, sizeof json,
             "{\"model\": {\"params\": 1e6, \"layers\": 1, \"step_time_s\": "
             "0.1}, \"workers\": {\"count\": 2}, \"method\": {\"name\": "
             "\"dp\"}, \"network\": {\"bandwidth_gbps\": 8, \"latency_ms\": "
             "%g%s%s%s}, \"steps\": 1}",
             lat_ms, trace ? ", \"bandwidth_trace\": \"" : "",
             trace ? trace : "", trace ? "\"" : "");
    static scn_config cfg;
    ck_assert_msg(scn_load_string(json, "t.json", NULL, 0, &cfg, err,
                                  sizeof err) == 0,
                  "%s", err);
    run_result r, full;
    ck_assert_msg(run_simulate(&cfg, NULL, &r, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(r.finished, 1);
    cfg.full = 1;
    ck_assert_int_eq(run_simulate(&cfg, NULL, &full, err, sizeof err), 0);
    ck_assert_int_eq(memcmp(&r, &full, sizeof r), 0);
    return r;
}

START_TEST(ring_of_two_worker_one_steps) {
    ck_assert_int_eq(dp_step(NULL, 0).wall_ns, 102000000); /* 0.1 + 2 ms */
    /* every flow of the ring crosses a link of worker 1 (1 -> 0 its up,
     * 0 -> 1 its down): at 0.1005 s it halves, the first chunk has 5e5
     * bytes left, at 5e8 B/s; the second chunk all at 5e8 B/s */
    double r1 = 1e9, r2 = 5e8, t = 0.1005, chunk = 1e6;
    double first = t + (chunk - r1 * (t - 0.1)) / r2;
    double wall = first + chunk / r2;
    ck_assert_double_eq_tol(wall, 0.1035, 1e-15);
    run_result one = dp_step(trace_file("one.txt", "0.1005 1 4\n"), 0);
    ck_assert_int_eq(one.wall_ns, llround(wall * 1e9));
    /* all links: the same (each flow is bound by worker 1's link) */
    run_result all = dp_step(trace_file("all.txt", "0.1005 all 4\n"), 0);
    ck_assert_int_eq(all.wall_ns, one.wall_ns);
    ck_assert_double_eq(all.peak_link_gbps, 8);
    /* two lines at one instant: the later wins, and the links never carry
     * the earlier one's rate, not even for no time (the peak) */
    run_result two =
        dp_step(trace_file("two.txt", "0.1005 all 80\n0.1005 all 4\n"), 0);
    ck_assert_int_eq(two.wall_ns, one.wall_ns);
    ck_assert_double_eq(two.peak_link_gbps, 8);
    ck_assert_int_eq(all.per_worker[0].bytes_sent, 2000000);
    /* worker 1 faster alone changes nothing: worker 0's links bind */
    run_result up = dp_step(trace_file("up.txt", "0.1005 1 80\n"), 0);
    ck_assert_int_eq(up.wall_ns, 102000000);
    /* all faster: 5e5 bytes left at 1e10 B/s, then a chunk at 1e10 */
    run_result fast = dp_step(trace_file("fast.txt", "0.1005 all 80\n"), 0);
    ck_assert_int_eq(
        fast.wall_ns,
        llround((t + (chunk - r1 * (t - 0.1)) / 1e10 + chunk / 1e10) * 1e9));
    /* inf: the rest of the ring in no time */
    run_result inf = dp_step(trace_file("inf.txt", "0.1005 all inf\n"), 0);
    ck_assert_int_eq(inf.wall_ns, 100500000);
}
END_TEST

/* Latency 3 ms: the first ring step is active at 0.103 s; a step at
 * 0.101 s comes during the latency, so every byte moves at r2. */
START_TEST(ring_step_during_latency) {
    double r2 = 5e8, chunk = 1e6, lat = 3e-3;
    run_result r = dp_step(trace_file("lat.txt", "0.101 all 4\n"), 3);
    ck_assert_int_eq(r.wall_ns, llround((0.1 + 2 * (lat + chunk / r2)) * 1e9));
    /* a later line at the same instant wins; before the first line of a
     * link its own bandwidth holds */
    r = dp_step(trace_file("same.txt", "# comment\n\n0.101 all 1 # x\n"
                                       "0.101 all 4\n"),
                3);
    ck_assert_int_eq(r.wall_ns, llround((0.1 + 2 * (lat + chunk / r2)) * 1e9));
    r = dp_step(trace_file("late.txt", "5 all 1\n"), 3);
    ck_assert_int_eq(r.wall_ns, llround((0.1 + 2 * (lat + chunk / 1e9)) * 1e9));
}
END_TEST

/* ---- the diurnal form --------------------------------------------------- */

START_TEST(diurnal_slots) {
    bwt_diurnal d = {.low_gbps = 1,
                     .high_gbps = 9,
                     .period_h = 24,
                     .phase_h = 0,
                     .steps = 4};
    /* slots of 6 h: cos at 0, pi/2, pi, 3pi/2 */
    ck_assert_int_eq(bwt_diurnal_start(&d, 1), 6 * 3600 * 1000000000LL);
    ck_assert_double_eq(bwt_diurnal_gbps(&d, 0), 9);
    ck_assert_double_eq_tol(bwt_diurnal_gbps(&d, 1), 5, 1e-12);
    ck_assert_double_eq(bwt_diurnal_gbps(&d, 2), 1);
    ck_assert_double_eq_tol(bwt_diurnal_gbps(&d, 3), 5, 1e-12);
    ck_assert_double_eq(bwt_diurnal_gbps(&d, 4), 9);
    d.phase_h = 12; /* the low at midnight */
    ck_assert_double_eq(bwt_diurnal_gbps(&d, 0), 1);
    /* in a run: a period of 3.6 s in 2 slots, low 4 (5e8 B/s) first;
     * the ring (0.1 .. ) at 5e8 B/s: 2 chunks, 4 ms */
    char err[512];
    static scn_config cfg;
    const char *json =
        "{\"model\": {\"params\": 1e6, \"layers\": 1, \"step_time_s\": 0.1},"
        " \"workers\": {\"count\": 2}, \"method\": {\"name\": \"dp\"},"
        " \"network\": {\"bandwidth_gbps\": 8, \"bandwidth_trace\": "
        "{\"diurnal\": {\"low_gbps\": 4, \"high_gbps\": 16, \"period_h\": "
        "0.001, \"phase_h\": 0.0005, \"steps_per_period\": 2}}},"
        " \"steps\": 1}";
    ck_assert_msg(scn_load_string(json, "t.json", NULL, 0, &cfg, err,
                                  sizeof err) == 0,
                  "%s", err);
    run_result r;
    ck_assert_int_eq(run_simulate(&cfg, NULL, &r, err, sizeof err), 0);
    ck_assert_int_eq(r.wall_ns, 104000000);
}
END_TEST

/* ---- parse errors, exactly ------------------------------------------------ */

/* text's n bytes (0: up to its NUL) give msg. */
static void bad_n(const char *text, size_t n, const char *msg) {
    bwt_trace *t = (bwt_trace *)1;
    char err[512];
    ck_assert_int_eq(bwt_parse(text, n ? n : strlen(text), "b.txt", 3, &t, err,
                               sizeof err),
                     MSG_EINPUT);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(err, msg);
}

static void bad(const char *text, const char *msg) {
    bad_n(text, 0, msg);
}

START_TEST(parse_errors) {
    bad("1x 0 1\n", "b.txt:1:1: bad time '1x' (expected a finite number of "
                    "seconds)");
    bad("\n -1 0 1\n", "b.txt:2:2: negative time '-1' (expected seconds >= 0)");
    bad("1e10 0 1", "b.txt:1:1: time '1e10' too large (expected at most "
                    "9.2e+09 s)");
    bad("1 3 1", "b.txt:1:3: link 3 out of range (expected a worker 0..2 or "
                 "all)");
    bad("1 -1 1", "b.txt:1:3: bad link '-1' (expected a worker 0..2 or all)");
    bad("1 All 1", "b.txt:1:3: bad link 'All' (expected a worker 0..2 or all)");
    bad("1 0 0", "b.txt:1:5: rate 0 is out of range (expected a number of "
                 "Gbit/s in [1e-06, 1e+09] or inf)");
    bad("1 0 fast", "b.txt:1:5: bad rate 'fast' (expected a number of Gbit/s "
                    "in [1e-06, 1e+09] or inf)");
    bad("1 0 nan", "b.txt:1:5: bad rate 'nan' (expected a number of Gbit/s "
                   "in [1e-06, 1e+09] or inf)");
    bad("1 0 2 3", "b.txt:1:7: trailing '3' after the rate (expected 't_s "
                   "link gbps' and nothing more)");
    bad("1 0", "b.txt:1:4: missing rate (expected 't_s link gbps')");
    bad("1   # c", "b.txt:1:2: missing link and rate (expected 't_s link "
                   "gbps')");
    bad("2 0 1\n3 1 1\n1 0 1\n", "b.txt:3:1: time 1 s is before 3 s of line 2 "
                                 "(expected non-decreasing times)");
    bad_n("1 0\0 1\n", 7, "b.txt:1:4: NUL byte (expected a text line)");
}
END_TEST

/* Through the loader: the scenario's position, the key, the file's. */
START_TEST(loader_message) {
    const char *path = trace_file("bad.txt", "0 all 1\n1 0 1 junk\n");
    char json[512], err[1024], want[1024];
    snprintf(json, sizeof json, "{\"network\": {\"bandwidth_trace\": \"%s\"}}",
             path);
    static scn_config cfg;
    ck_assert_int_eq(scn_load_string(json, "t.json", NULL, 0, &cfg, err,
                                     sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want,
             "t.json:1:33: network.bandwidth_trace: %s:2:7: trailing 'junk' "
             "after the rate (expected 't_s link gbps' and nothing more)",
             path);
    ck_assert_str_eq(err, want);
}
END_TEST

/* ---- random worlds with traces: --full gives the same bytes ------------- */

/* DiLoCo every 5 of 400 steps: without a trace its periods repeat from
 * the first and are skipped; with a step late in the run (or the diurnal
 * slots) no period may be skipped across it, and the run after the last
 * step may skip again: --full's bytes either way. */
START_TEST(late_step_after_repeating_periods) {
    static const char *const traces[] = {
        "\"%s\"", "{\"diurnal\": {\"low_gbps\": 0.5, \"high_gbps\": 4, "
                  "\"period_h\": 0.01, \"steps_per_period\": 3}}"};
    for (int k = 0; k < 2; k++) {
        char json[1024], tr[512], err[1024];
        snprintf(tr, sizeof tr, traces[k],
                 trace_file("late.txt", "30 all 0.5\n"));
        snprintf(json, sizeof json,
                 "{\"model\": {\"params\": 1e8, \"layers\": 1, "
                 "\"step_time_s\": 0.1}, \"workers\": {\"count\": 2}, "
                 "\"method\": {\"name\": \"diloco\", \"H\": 5}, "
                 "\"network\": {\"bandwidth_gbps\": 2, \"bandwidth_trace\": "
                 "%s}, \"steps\": 400}",
                 tr);
        static scn_config cfg;
        ck_assert_msg(scn_load_string(json, "t.json", NULL, 0, &cfg, err,
                                      sizeof err) == 0,
                      "%s", err);
        run_result r, full;
        ck_assert_int_eq(run_simulate(&cfg, NULL, &r, err, sizeof err), 0);
        cfg.full = 1;
        ck_assert_int_eq(run_simulate(&cfg, NULL, &full, err, sizeof err), 0);
        ck_assert_int_eq(r.wall_ns, full.wall_ns);
        ck_assert_int_eq(memcmp(&r, &full, sizeof r), 0);
    }
}
END_TEST

static run_result fast_r, full_r;

START_TEST(random_worlds_full_equal) {
    static scn_config cfg;
    char err[512];
    for (int k = 0; k < 40; k++) {
        random_world(&cfg, k);
        cfg.full = 1;
        ck_assert_msg(run_simulate(&cfg, NULL, &full_r, err, sizeof err) == 0,
                      "%s", err);
        double wall = full_r.wall_time_s > 0 ? full_r.wall_time_s : 1;
        if (pick(3) == 0) {
            cfg.bw_diurnal = 1;
            cfg.diurnal = (bwt_diurnal){.low_gbps = 0.5 + pick(5),
                                        .high_gbps = 10 + pick(50),
                                        .period_h = wall / 3600 / (1 + pick(3)),
                                        .phase_h = pick(7) * 0.1 * wall / 3600,
                                        .steps = 2 + pick(10)};
        } else {
            char text[4096], name[32];
            int len = 0, steps = 1 + pick(8);
            double t = 0;
            for (int s = 0; s < steps; s++) {
                t += wall / steps * (pick(4) ? 0.5 + pick(100) / 100.0 : 0);
                static const char *const rates[] = {"0.5", "3", "25", "inf",
                                                    "100"};
                int w = pick(cfg.workers + 1);
                char link[16];
                snprintf(link, sizeof link, "%d", w);
                len +=
                    snprintf(text + len, sizeof text - (size_t)len,
                             "%.9f %s %s\n", t, w == cfg.workers ? "all" : link,
                             rates[pick(5)]);
            }
            snprintf(name, sizeof name, "r%d.txt", k);
            snprintf(cfg.bw_trace_path, sizeof cfg.bw_trace_path, "%s",
                     trace_file(name, text));
        }
        cfg.full = 0;
        ck_assert_msg(run_simulate(&cfg, NULL, &fast_r, err, sizeof err) == 0,
                      "case %d: %s", k, err);
        cfg.full = 1;
        ck_assert_msg(run_simulate(&cfg, NULL, &full_r, err, sizeof err) == 0,
                      "case %d: %s", k, err);
        ck_assert_msg(memcmp(&fast_r, &full_r, sizeof fast_r) == 0,
                      "case %d: fast-forward and --full differ (wall %lld vs "
                      "%lld ns)",
                      k, (long long)fast_r.wall_ns, (long long)full_r.wall_ns);
        cfg.bw_diurnal = 0;
        cfg.bw_trace_path[0] = 0;
    }
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("bwtrace");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, trace_dir_setup, trace_dir_teardown);
    tcase_add_test(tc, flow_spans_a_step);
    tcase_add_test(tc, step_during_latency);
    tcase_add_test(tc, ring_of_two_worker_one_steps);
    tcase_add_test(tc, ring_step_during_latency);
    tcase_add_test(tc, diurnal_slots);
    tcase_add_test(tc, parse_errors);
    tcase_add_test(tc, loader_message);
    tcase_add_test(tc, late_step_after_repeating_periods);
    tcase_add_test(tc, random_worlds_full_equal);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
