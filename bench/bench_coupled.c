/*
 * bench_coupled.c -- what the event engine costs a training run: the same
 * training (Streaming DiLoCo and DP, two replicas of a transformer d 128,
 * 4 blocks, batch 8 x 64 tokens, 60 steps, 2 threads) driven by a coupled
 * run (sim/adapter/coupled.h: the timing world of a 1B model at 10 Gbit/s, with
 * and without stragglers) and by the lockstep trainer, in the same
 * process, alternately, best of 3 each.  Prints the coupled run's
 * overhead over lockstep as a ratio; goal: at most 5%.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/adapter/coupled.h"

#define REPS 3

static const char scenario[] =
    "{\"model\": {\"params\": 1e9, \"layers\": 24, \"step_time_s\": 0.5},"
    " \"workers\": {\"count\": 2},"
    " \"network\": {\"bandwidth_gbps\": 10},"
    " \"method\": {\"name\": \"streaming\", \"H\": 20, \"fragments\": 4,"
    "   \"tau\": 1, \"alpha\": 0.5, \"codec\": \"e3m0\"},"
    " \"steps\": 60, \"seed\": 1,"
    " \"train\": {\"model\": {\"kind\": \"transformer\", \"vocab\": 256,"
    "   \"d\": 128, \"heads\": 4, \"layers\": 4, \"ctx\": 64},"
    "   \"data\": {\"kind\": \"markov\", \"successors\": 4},"
    "   \"batch\": 8, \"seq\": 64, \"inner\": {\"lr\": 1e-3},"
    "   \"eval_interval\": 20, \"eval_batches\": 2, \"threads\": 2}}";

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Seconds of one run (coupled or lockstep); exits on an error. */
static double time_one(const scn_config *cfg, const scn_train *sec,
                       int coupled) {
    static cpl_summary s;
    cpl_options o = {cfg, sec, NULL, NULL, NULL, NULL};
    char err[512];
    double t0 = now_s();
    int rc = coupled ? cpl_run(&o, &s, err, sizeof err)
                     : cpl_lockstep(&o, &s, err, sizeof err);
    double dt = now_s() - t0;
    if (rc) {
        fprintf(stderr, "bench_coupled: %s\n", err);
        exit(1);
    }
    return dt;
}

static void bench(const char *method, double stragglers) {
    static scn_config cfg;
    static scn_train sec;
    char set[64], prob[64], err[512];
    snprintf(set, sizeof set, "method.name=\"%s\"", method);
    snprintf(prob, sizeof prob, "workers.stragglers.probability=%g",
             stragglers);
    const char *sets[] = {set, prob};
    if (scn_load_string_train(scenario, "bench_coupled.json", sets, 2, &cfg,
                              &sec, err, sizeof err)) {
        fprintf(stderr, "bench_coupled: %s\n", err);
        exit(1);
    }
    double best[2] = {1e300, 1e300};
    for (int k = 0; k < REPS; k++)
        for (int coupled = 0; coupled < 2; coupled++) {
            double t = time_one(&cfg, &sec, coupled);
            if (t < best[coupled]) best[coupled] = t;
        }
    printf("bench_coupled: %s, stragglers %g: lockstep %.3f s, coupled "
           "%.3f s for %lld steps: coupled/lockstep %.3f, overhead %+.1f%% "
           "(goal <= 5%%)\n",
           method, stragglers, best[0], best[1], (long long)cfg.steps,
           best[1] / best[0], 100 * (best[1] / best[0] - 1));
}

int main(void) {
    bench("streaming", 0);
    bench("streaming", 0.1);
    bench("dp", 0);
    bench("dp", 0.1);
    return 0;
}
