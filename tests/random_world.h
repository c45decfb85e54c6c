/*
 * random_world.h -- the randomized worlds of the engine's tests: methods,
 * tau, fragments, layouts, orders, codecs, collectives, latencies,
 * heterogeneous links and speeds, late: continue, sync timeouts, TCP
 * windows and transport, stragglers, failures, offload, member
 * completion, step overheads, reversed rings.  The same sequence on every
 * machine (a fixed xorshift): test_fastforward.c and test_explain.c each
 * draw their own cases from it.
 */
#ifndef DILOSIM_TESTS_RANDOM_WORLD_H
#define DILOSIM_TESTS_RANDOM_WORLD_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sim/config/scenario.h"

/* A small xorshift: the randomized set is the same on every machine. */
static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void) {
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}
static int pick(int n) {
    return (int)(rnd() % (uint64_t)n);
}

/* A per-worker array of M values chosen from v[n]. */
static void workers_array(char *buf, size_t len, const char *key, int M,
                          const double *v, int n) {
    int k = snprintf(buf, len, "%s=[", key);
    for (int i = 0; i < M; i++)
        k += snprintf(buf + k, len - (size_t)k, "%s%g", i ? ", " : "",
                      v[pick(n)]);
    snprintf(buf + k, len - (size_t)k, "]");
}

/* The next random world into *cfg (case k, for the messages). */
static void random_world(scn_config *cfg, int k) {
    static const char *const methods[] = {"dp", "diloco", "streaming"};
    static const char *const colls[] = {"ring", "all_to_all", "star"};
    static const char *const codecs[] = {"fp32", "bf16", "e3m0", "fp8_e4m3"};
    static const double gbps[] = {0.3, 1, 10, 50, 100, 1e9};
    static const double lat[] = {0, 1, 5, 30};
    static const double speed[] = {1, 1, 2, 0.5, 1.3};
    char s[20][256];
    int n = 0, M = 2 + pick(6), L = 1 + pick(8), H = 2 + pick(18);
    int P = 1 + pick(4);
    if (P > L) P = L;
    if (P > H && pick(3)) P = H; /* else several fragments a step */
    int tau = pick(3) ? pick(H / P > 0 ? H / P : 1) : pick(H);
    static const char *const overlaps[] = {"inner", "inner", "outer", "eager"};
    const char *overlap = overlaps[pick(4)];
    if (strcmp(overlap, "inner")) tau = 0;
    snprintf(s[n++], 256, "method.overlap=\"%s\"", overlap);
    snprintf(s[n++], 256, "method.name=\"%s\"", methods[pick(3)]);
    snprintf(s[n++], 256, "workers.count=%d", M);
    snprintf(s[n++], 256, "model.layers=%d", L);
    snprintf(s[n++], 256, "method.H=%d", H);
    snprintf(s[n++], 256, "method.fragments=%d", P);
    snprintf(s[n++], 256, "method.tau=%d", tau);
    snprintf(s[n++], 256, "steps=%d", 10 + pick(80));
    int sliceable = P <= H && tau < H / P && !strcmp(overlap, "inner");
    snprintf(s[n++], 256, "method.layout=\"%s\"",
             sliceable && pick(4) == 0 ? "sliced"
             : pick(2)                 ? "strided"
                                       : "sequential");
    workers_array(s[n++], 256, "network.up_gbps", M, gbps, 6);
    workers_array(s[n++], 256, "workers.speed", M, speed, pick(3) ? 2 : 5);
    if (pick(2)) workers_array(s[n++], 256, "network.latency_ms", M, lat, 4);
    snprintf(s[n++], 256, "network.collective=\"%s\"", colls[pick(3)]);
    snprintf(s[n++], 256, "method.codec=\"%s\"", codecs[pick(4)]);
    if (pick(4) == 0) snprintf(s[n++], 256, "method.late=\"continue\"");
    if (pick(5) == 0) snprintf(s[n++], 256, "method.sync_timeout_s=0.05");
    if (pick(4) == 0)
        snprintf(s[n++], 256, "network.reduce_order=\"forward_first\"");
    const char *sets[20];
    for (int i = 0; i < n; i++) sets[i] = s[i];
    char err[512];
    int rc = scn_load_string("{\"model\": {\"params\": 1e8, "
                             "\"step_time_s\": 0.3}}",
                             "random.json", sets, n, cfg, err, sizeof err);
    ck_assert_msg(rc == 0, "case %d: %s", k, err);
    if (pick(5) == 0) cfg->straggler_prob = 0.2;
    if (pick(6) == 0) cfg->faults.mtbf_s = 20, cfg->faults.mttr_s = 3;
    if (pick(5) == 0) cfg->tcp_window_mb = 4;
    if (pick(4) == 0) cfg->dp_bucket_mb = 30;
    if (pick(5) == 0) cfg->efficiency = 0.7;
    if (pick(6) == 0) cfg->offload_outer = 1, cfg->host_gbps = 8;
    if (pick(3) == 0) cfg->transport = SCN_TRANSPORT_TCP;
    if (pick(3) == 0 && !scn_late_continues(cfg))
        cfg->completion = SCN_COMPLETION_MEMBER;
    if (pick(5) == 0) cfg->collective_overhead_ms = 2;
    if (pick(4) == 0) /* the ring backwards */
        for (int i = 0; i < M; i++)
            cfg->ring_order[i] = M - 1 - i, cfg->has_ring_order = 1;
}

#endif
