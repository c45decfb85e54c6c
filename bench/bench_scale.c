/*
 * bench_scale.c -- how the simulator's CPU time grows with the number of
 * workers: data-parallel 1B (24 layers, 20 steps) at M = 16 and M = 128,
 * once on equal 10 Gbit/s links and once on heterogeneous links (worker i
 * at 50 + i Gbit/s up and down), measured in the same process.  Linear
 * growth is a ratio of 8; the goal is at most 16 for both.  Then sites of
 * many accelerators: 1,000 steps of Streaming DiLoCo over 8 sites of 2,048
 * accelerators (scenarios/examples/sites.json: hierarchical, one ring,
 * and hierarchical with --full) against the same 8 workers without sites,
 * in the same process; the goal is well under 2 s of CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/engine/run.h"

static double cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The scenario text for m workers; heterogeneous links when `het`. */
static void scenario(char *buf, size_t len, int m, int het) {
    int k = snprintf(
        buf, len,
        "{\"model\": {\"params\": 1e9, \"layers\": 24, \"step_time_s\": 0.1},"
        " \"workers\": {\"count\": %d}, \"method\": {\"name\": \"dp\"},"
        " \"network\": {\"bandwidth_gbps\": 10",
        m);
    for (int d = 0; het && d < 2; d++) {
        k += snprintf(buf + k, len - (size_t)k, ", \"%s_gbps\": [",
                      d ? "down" : "up");
        for (int i = 0; i < m; i++)
            k += snprintf(buf + k, len - (size_t)k, "%s%d", i ? ", " : "",
                          50 + i);
        k += snprintf(buf + k, len - (size_t)k, "]");
    }
    snprintf(buf + k, len - (size_t)k,
             "}, \"faults\": {\"mtbf_hours\": 0},"
             " \"steps\": 20, \"seed\": 1}");
}

/* Best of 3 CPU seconds of one run of the scenario text (full: --full),
 * its result in *r; exits on error. */
static double best_cpu(const char *text, int full, run_result *r) {
    char err[512];
    scn_config cfg;
    if (scn_load_string(text, "bench_scale.json", NULL, 0, &cfg, err,
                        sizeof err)) {
        fprintf(stderr, "bench_scale: %s\n", err);
        exit(2);
    }
    cfg.full = full;
    double best = -1;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = cpu_s();
        if (run_simulate(&cfg, NULL, r, err, sizeof err)) {
            fprintf(stderr, "bench_scale: %s\n", err);
            exit(1);
        }
        double dt = cpu_s() - t0;
        if (best < 0 || dt < best) best = dt;
    }
    return best;
}

/* Best of 3 CPU seconds of one run with m workers. */
static double run_cpu(int m, int het, uint64_t *events) {
    static char text[8192];
    run_result r;
    scenario(text, sizeof text, m, het);
    double t = best_cpu(text, 0, &r);
    *events = r.events;
    return t;
}

/* scenarios/examples/sites.json's world: 8 sites of `n` accelerators
 * (n 0: no sites), site_allreduce `how`. */
static void sites_scenario(char *buf, size_t len, int n, const char *how) {
    int k = snprintf(
        buf, len,
        "{\"model\": {\"params\": 1e10, \"layers\": 48, \"step_time_s\": 2},"
        " \"workers\": {\"count\": 8");
    for (int i = 0; n && i < 8; i++)
        k += snprintf(buf + k, len - (size_t)k,
                      "%s{\"replicas\": %d, \"intra_gbps\": 400, "
                      "\"intra_latency_us\": 1}%s",
                      i ? ", " : ", \"sites\": [", n, i == 7 ? "]" : "");
    k += snprintf(buf + k, len - (size_t)k,
                  "}, \"network\": {\"bandwidth_gbps\": 10, "
                  "\"latency_ms\": 10");
    if (n)
        k += snprintf(buf + k, len - (size_t)k, ", \"site_allreduce\": \"%s\"",
                      how);
    snprintf(buf + k, len - (size_t)k,
             "}, \"method\": {\"name\": \"streaming\", \"H\": 100, "
             "\"fragments\": 8, \"tau\": 2, \"codec\": \"e3m0\", "
             "\"dp_bucket_mb\": 500}, \"steps\": 1000, \"seed\": 1}");
}

/* Best of 3 CPU seconds of one run of the sites world. */
static double sites_cpu(int n, const char *how, int full, double *cu) {
    static char text[4096];
    run_result r;
    sites_scenario(text, sizeof text, n, how);
    double t = best_cpu(text, full, &r);
    *cu = r.compute_utilization;
    return t;
}

static void sites_bench(void) {
    double cu0, cu1, cu2, cu3;
    double base = sites_cpu(0, NULL, 0, &cu0);
    double hier = sites_cpu(2048, "hierarchical", 0, &cu1);
    double ring = sites_cpu(2048, "ring", 0, &cu2);
    double full = sites_cpu(2048, "hierarchical", 1, &cu3);
    printf("bench_scale: Streaming DiLoCo, 8 sites x 2048 accelerators, 1000 "
           "steps: CPU without sites %.4f s (CU %.3f); hierarchical %.4f s "
           "(CU %.3f, ratio %.1f), one ring %.4f s (CU %.3f, ratio %.1f), "
           "hierarchical --full %.4f s (ratio %.1f); goal well under 2 s\n",
           base, cu0, hier, cu1, hier / base, ring, cu2, ring / base, full,
           full / base);
}

int main(void) {
    static const char *const names[] = {"equal links (10 Gbit/s)",
                                        "heterogeneous links (50 + i Gbit/s)"};
    for (int het = 0; het < 2; het++) {
        uint64_t e16, e128;
        double c16 = run_cpu(16, het, &e16), c128 = run_cpu(128, het, &e128);
        printf("bench_scale: DP 1B, 24 layers, 20 steps, %s: CPU M=16 %.4f s "
               "(%llu events), M=128 %.4f s (%llu events), ratio %.1f; "
               "goal <= 16 (8 is linear)\n",
               names[het], c16, (unsigned long long)e16, c128,
               (unsigned long long)e128, c128 / c16);
    }
    sites_bench();
    return 0;
}
