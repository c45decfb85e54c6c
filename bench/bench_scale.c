/*
 * bench_scale.c -- how the simulator's CPU time grows with the number of
 * workers: data-parallel 1B (24 layers, 20 steps) at M = 16 and M = 128,
 * once on equal 10 Gbit/s links and once on heterogeneous links (worker i
 * at 50 + i Gbit/s up and down), measured in the same process.  Linear
 * growth is a ratio of 8; the goal is at most 16 for both.
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

/* Best of 3 CPU seconds of one run with m workers; exits on error. */
static double run_cpu(int m, int het, uint64_t *events) {
    static char text[8192];
    char err[512];
    scn_config cfg;
    scenario(text, sizeof text, m, het);
    if (scn_load_string(text, "bench_scale.json", NULL, 0, &cfg, err,
                        sizeof err)) {
        fprintf(stderr, "bench_scale: %s\n", err);
        exit(2);
    }
    double best = -1;
    for (int rep = 0; rep < 3; rep++) {
        run_result r;
        double t0 = cpu_s();
        if (run_simulate(&cfg, NULL, &r, err, sizeof err)) {
            fprintf(stderr, "bench_scale: %s\n", err);
            exit(1);
        }
        double dt = cpu_s() - t0;
        if (best < 0 || dt < best) best = dt;
        *events = r.events;
    }
    return best;
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
    return 0;
}
