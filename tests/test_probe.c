/*
 * test_probe.c -- one transfer on a fresh network (sim/engine/probe.h)
 * against its closed forms, computed by hand next to the probe's answer.
 *
 * Ideal transport: S bytes over one link of B bytes/s (the Gbit/s rate x
 * 1e9 / 8 x efficiency), one-way latency L, take L + S / B; over s
 * streams the same (each moves S / s at B / s); the link is the slower of
 * worker 0's up and worker 1's down; a TCP window cap w over the round
 * trip 2L makes it L + S / min(B, w / 2L) (w / (2L + q) with a standing
 * queue q); ACKs of a bytes per byte on a reverse link of C bytes/s cap
 * the streams' sum at C / a; a pair's set-up is not paid.  TCP: a flow
 * alone at share B from window W0, round trip R = 2L (+ q), is in slow
 * start while W0 2^j / R < B: it leaves it after k = ceil(log2(B R / W0))
 * rounds, having sent W0 (2^k - 1), and moves the rest at B
 * (docs/network.md); s streams are s such flows at share B / s.
 * Completion instants are rounded up to whole ns, so the checks allow a
 * ns or two.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_main.h"
#include "sim/base/msg.h"
#include "sim/config/scenario.h"
#include "sim/engine/probe.h"

/* Two workers at 10 Gbit/s, 5 ms one way; NOLAT without the latency. */
#define WORLD(net)                                                             \
    "{\"model\": {\"params\": 1e6, \"layers\": 1, \"step_time_s\": 0.1},"      \
    " \"workers\": {\"count\": 2}, \"network\": {" net "},"                    \
    " \"method\": {\"name\": \"dp\"}, \"steps\": 1}"
static const char *const BASE =
    WORLD("\"bandwidth_gbps\": 10, \"latency_ms\": 5");
static const char *const NOLAT = WORLD("\"bandwidth_gbps\": 10");
#define MATRIX "network.latency_matrix_ms=[[0, 7, 2], [7, 0, 9], [2, 9, 0]]"

static scn_config *load(const char *text, const char *const *sets, int n) {
    scn_config *c = malloc(sizeof *c);
    char err[1024];
    ck_assert_ptr_nonnull(c);
    ck_assert_msg(!scn_load_string(text, "probe.json", sets, n, c, err,
                                   sizeof err),
                  "%s", err);
    return c;
}

static int64_t probe(const scn_config *c, uint64_t bytes, int streams) {
    int64_t ns = -1;
    char err[512];
    ck_assert_msg(!probe_stream(c, bytes, streams, &ns, err, sizeof err), "%s",
                  err);
    return ns;
}

#define ck_near_ns(got, want, slack)                                           \
    ck_assert_msg(llabs((got) - (want)) <= (slack),                            \
                  "got %lld ns, want %lld (by hand)", (long long)(got),        \
                  (long long)(want))

/* L + S / B, in ns rounded up. */
static int64_t ideal_ns(double lat_s, double S, double B) {
    return llround(lat_s * 1e9) + (int64_t)ceil(S / B * 1e9);
}

/* Ideal transport by hand: a base (NOLAT: without the latency), its
 * overrides, the probe; and lat + moved / rate.  DOWN_1: worker 1's down
 * link at 1 Gbit/s binds; UP_1: worker 0's up link. */
#define DOWN_1                                                                 \
    "network.up_gbps=[2, 10]", "network.down_gbps=[10, 1]",                    \
        "network.latency_ms=[4, 8]"
#define UP_1 "network.up_gbps=[1, 10]", "network.down_gbps=[10, 4]"
#define ACK_BOUND                                                              \
    "network.down_gbps=[0.01, 10]", "network.ack_bytes_per_kb=22.8"
static const struct {
    int nolat;
    const char *sets[3];
    double bytes;
    int streams;
    double lat_s, moved, rate;
} IDEAL[] = {
    /* one stream at B e */
    {0, {"network.efficiency=0.9"}, 1e8, 1, 5e-3, 1e8, 10e9 / 8 * 0.9},
    {0, {"network.efficiency=0.9"}, 1e3, 1, 5e-3, 1e3, 10e9 / 8 * 0.9},
    /* s streams share the link: the same time */
    {0, {NULL}, 1e8, 4, 5e-3, 1e8, 1.25e9},
    {0, {NULL}, 1e8, 100, 5e-3, 1e8, 1.25e9},
    /* the slower of up(0) and down(1) binds; per-worker latencies average */
    {0, {DOWN_1}, 5e7, 1, 6e-3, 5e7, 1.25e8},
    {0, {DOWN_1}, 5e7, 5, 6e-3, 5e7, 1.25e8},
    {0, {UP_1}, 4.8e7, 3, 5e-3, 4.8e7, 1.25e8},
    /* bytes not a multiple of the streams: each moves ceil(S / s) */
    {0, {UP_1}, 5e7, 3, 5e-3, 5e7 + 1, 1.25e8},
    /* a latency matrix: lat(0 -> 1) is its entry (0, 1) */
    {1, {"workers.count=3", MATRIX}, 1e6, 2, 7e-3, 1e6, 1.25e9},
    /* no collective: its step overhead is not paid */
    {0, {"network.collective_overhead_ms=40"}, 1e6, 1, 5e-3, 1e6, 1.25e9},
    /* a TCP window on ideal transport: at most 4 MB per round trip 2L,
       and with a standing queue q per round trip 2L + q */
    {0, {"network.tcp_window_mb=4"}, 1e8, 1, 5e-3, 1e8, 4e6 / 10e-3},
    {0,
     {"network.tcp_window_mb=4", "network.queue_ms=10"},
     1e8,
     1,
     5e-3,
     1e8,
     4e6 / 20e-3},
    /* no set-up: iperf3 times its test once connected */
    {0, {"network.startup_ms=200"}, 1e6, 1, 5e-3, 1e6, 1.25e9},
    {0, {"network.startup_ms=200"}, 1e6, 3, 5e-3, 1e6 + 2, 1.25e9},
    /* ACKs of 22.8 bytes per kB on worker 0's down link of 0.01 Gbit/s
       bind: a x rate <= 1.25e6 bytes/s, however many streams */
    {0, {ACK_BOUND}, 1e6, 1, 5e-3, 1e6, 1.25e6 / 0.0228},
    {0, {ACK_BOUND}, 1e6, 4, 5e-3, 1e6, 1.25e6 / 0.0228},
};
#define NIDEAL (int)(sizeof IDEAL / sizeof *IDEAL)

START_TEST(ideal_by_hand) {
    int n = 0;
    while (n < 3 && IDEAL[_i].sets[n]) n++;
    scn_config *c = load(IDEAL[_i].nolat ? NOLAT : BASE, IDEAL[_i].sets, n);
    ck_near_ns(probe(c, (uint64_t)IDEAL[_i].bytes, IDEAL[_i].streams),
               ideal_ns(IDEAL[_i].lat_s, IDEAL[_i].moved, IDEAL[_i].rate), 2);
    free(c);
}
END_TEST

/* Slow start by hand: a flow of S at share B from W0, round trip R; its
 * time from activation, in ns (S past slow start). */
static double slow_start_s(double S, double B, double R, double W0) {
    int k = (int)ceil(log2(B * R / W0));
    double sent = W0 * (pow(2, k) - 1);
    ck_assert(S > sent);
    return k * R + (S - sent) / B;
}

START_TEST(tcp_slow_start) {
    const char *sets[] = {"network.transport=tcp", "network.latency_ms=25"};
    scn_config *c = load(BASE, sets, 2);
    double B = 1.25e9, R = 0.05, W0 = 14480;
    /* docs/network.md: 1 GB at 10 Gbit/s, RTT 50 ms: 1.380 s */
    double want = 0.025 + slow_start_s(1e9, B, R, W0);
    ck_near_ns(probe(c, 1000000000, 1), llround(want * 1e9), 2);
    ck_assert(fabs(want - 1.380115456) < 1e-9);
    /* four streams: four such flows of 250 MB at B / 4 */
    want = 0.025 + slow_start_s(2.5e8, B / 4, R, W0);
    ck_near_ns(probe(c, 1000000000, 4), llround(want * 1e9), 2);
    free(c);
    /* a standing queue of 50 ms: the rounds last 2L + 50 ms, the first
       byte still waits L */
    const char *q[] = {"network.transport=tcp", "network.latency_ms=25",
                       "network.queue_ms=50"};
    c = load(BASE, q, 3);
    want = 0.025 + slow_start_s(1e9, B, 0.1, W0);
    ck_near_ns(probe(c, 1000000000, 1), llround(want * 1e9), 2);
    free(c);
}
END_TEST

/* A transfer that ends inside slow start: j rounds, then the rest of
 * round j at its window's rate. */
START_TEST(tcp_inside_slow_start) {
    const char *sets[] = {"network.transport=tcp", "network.latency_ms=25",
                          "network.tcp_init_window_kb=100"};
    scn_config *c = load(BASE, sets, 3);
    double R = 0.05, W0 = 1e5, S = 1e6; /* W0 (2^3 - 1) = 7e5 < S < 1.5e6 */
    int j = 3;
    double want = 0.025 + j * R + (S - W0 * 7) * R / (W0 * 8);
    ck_near_ns(probe(c, 1000000, 1), llround(want * 1e9), 2);
    free(c);
}
END_TEST

START_TEST(bad_probes) {
    scn_config *c = load(BASE, NULL, 0);
    int64_t ns;
    char err[256];
    ck_assert_int_eq(probe_stream(c, 0, 1, &ns, err, sizeof err), MSG_EINPUT);
    ck_assert_int_eq(probe_stream(c, 10, 0, &ns, err, sizeof err), MSG_EINPUT);
    ck_assert_int_eq(probe_stream(c, 10, PROBE_MAX_STREAMS + 1, &ns, err,
                                  sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "a stream of 10 bytes over 256 connections "
                          "(expected bytes >= 1 and 1..255 connections)");
    free(c);
    const char *one[] = {"workers.count=1"};
    c = load(BASE, one, 1);
    ck_assert_int_eq(probe_stream(c, 10, 1, &ns, err, sizeof err), MSG_EINPUT);
    ck_assert_str_eq(err, "a stream needs two workers (workers.count is 1)");
    free(c);
    const char *mat[] = {"workers.count=3", MATRIX};
    c = load(NOLAT, mat, 2);
    ck_assert_int_eq(probe_stream(c, 10, 64, &ns, err, sizeof err), MSG_EINPUT);
    ck_assert_int_eq(probe_stream(c, 10, 63, &ns, err, sizeof err), 0);
    free(c);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("probe");
    TCase *tc = tcase_create("probe");
    tcase_add_loop_test(tc, ideal_by_hand, 0, NIDEAL);
    tcase_add_test(tc, tcp_slow_start);
    tcase_add_test(tc, tcp_inside_slow_start);
    tcase_add_test(tc, bad_probes);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
