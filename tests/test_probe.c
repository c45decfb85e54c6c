/*
 * test_probe.c -- one transfer on a fresh network (sim/engine/probe.h)
 * against its closed forms, computed by hand next to the probe's answer.
 *
 * Ideal transport: S bytes over one link of B bytes/s (the Gbit/s rate x
 * 1e9 / 8 x efficiency), one-way latency L, take L + S / B; over s
 * streams the same (each moves S / s at B / s); the link is the slower of
 * worker 0's up and worker 1's down; a TCP window cap w over the round
 * trip 2L makes it L + S / min(B, w / 2L).  TCP: a flow alone at share B
 * from window W0, round trip R = 2L, is in slow start while W0 2^j / R <
 * B: it leaves it after k = ceil(log2(B R / W0)) rounds, having sent
 * W0 (2^k - 1), and moves the rest at B (docs/network.md); s streams are
 * s such flows at share B / s.  Completion instants are rounded up to
 * whole ns, so the checks allow a ns or two.
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

START_TEST(ideal_one_stream) {
    const char *sets[] = {"network.efficiency=0.9"};
    scn_config *c = load(BASE, sets, 1);
    double B = 10e9 / 8 * 0.9;
    ck_near_ns(probe(c, 100000000, 1), ideal_ns(5e-3, 1e8, B), 1);
    ck_near_ns(probe(c, 1000, 1), ideal_ns(5e-3, 1e3, B), 1);
    free(c);
}
END_TEST

START_TEST(ideal_streams_share_the_link) {
    scn_config *c = load(BASE, NULL, 0);
    double B = 10e9 / 8;
    int64_t want = ideal_ns(5e-3, 1e8, B);
    ck_near_ns(probe(c, 100000000, 4), want, 2);
    ck_near_ns(probe(c, 100000000, 100), want, 2);
    free(c);
}
END_TEST

/* The slower of up(0) and down(1) binds; per-worker latencies average. */
START_TEST(ideal_asymmetric_links) {
    const char *sets[] = {"network.up_gbps=[2, 10]",
                          "network.down_gbps=[10, 1]",
                          "network.latency_ms=[4, 8]"};
    scn_config *c = load(BASE, sets, 3);
    ck_near_ns(probe(c, 50000000, 1), ideal_ns(6e-3, 5e7, 1e9 / 8), 1);
    ck_near_ns(probe(c, 50000000, 5), ideal_ns(6e-3, 5e7, 1e9 / 8), 2);
    free(c);
    const char *up[] = {"network.up_gbps=[1, 10]", "network.down_gbps=[10, 4]"};
    c = load(BASE, up, 2);
    ck_near_ns(probe(c, 48000000, 3), ideal_ns(5e-3, 4.8e7, 1e9 / 8), 2);
    /* bytes not a multiple of the streams: each moves ceil(S / s) */
    ck_near_ns(probe(c, 50000000, 3), ideal_ns(5e-3, 5e7 + 1, 1e9 / 8), 2);
    free(c);
}
END_TEST

/* A latency matrix: lat(0 -> 1) is its entry (0, 1). */
START_TEST(ideal_latency_matrix) {
    const char *sets[] = {"workers.count=3", MATRIX};
    scn_config *c = load(NOLAT, sets, 2);
    ck_near_ns(probe(c, 1000000, 2), ideal_ns(7e-3, 1e6, 10e9 / 8), 2);
    free(c);
}
END_TEST

/* No collective: its step overhead is not paid. */
START_TEST(no_collective_overhead) {
    const char *sets[] = {"network.collective_overhead_ms=40"};
    scn_config *c = load(BASE, sets, 1);
    ck_near_ns(probe(c, 1000000, 1), ideal_ns(5e-3, 1e6, 10e9 / 8), 1);
    free(c);
}
END_TEST

/* Ideal transport under a TCP window: at most w per round trip 2L. */
START_TEST(ideal_window_cap) {
    const char *sets[] = {"network.tcp_window_mb=4"};
    scn_config *c = load(BASE, sets, 1);
    double cap = 4e6 / 10e-3; /* 4e8 bytes/s < 1.25e9 */
    ck_near_ns(probe(c, 100000000, 1), ideal_ns(5e-3, 1e8, cap), 1);
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
    tcase_add_test(tc, ideal_one_stream);
    tcase_add_test(tc, ideal_streams_share_the_link);
    tcase_add_test(tc, ideal_asymmetric_links);
    tcase_add_test(tc, ideal_latency_matrix);
    tcase_add_test(tc, no_collective_overhead);
    tcase_add_test(tc, ideal_window_cap);
    tcase_add_test(tc, tcp_slow_start);
    tcase_add_test(tc, tcp_inside_slow_start);
    tcase_add_test(tc, bad_probes);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
