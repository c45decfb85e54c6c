/*
 * bench_sim.c -- events per second of the event queue alone and of the
 * whole simulator on the paper's 100B data-parallel scenario (108 layers,
 * 1000 steps), measured in the same process so the ratio is meaningful.
 * The simulator runs with `full` (every op and period simulated: the
 * engine's own rate); the fast-forward's gain on the same scenario is
 * printed after it, as a ratio of times.
 * usage: bench_sim [SCENARIO.json [VARIANT]]
 */
#include <stdio.h>
#include <time.h>

#include "../sim/eventq.h"
#include "../sim/run.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The classic "hold" model: a queue of `size` events, each pop followed by
 * a push a random delay later.  Returns events (pops) per second. */
static double queue_rate(uint32_t size, uint64_t ops) {
    eq_queue q;
    eq_init(&q, size);
    uint64_t s = 88172645463325252ull;
    for (uint32_t i = 0; i < size; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        eq_push(&q, (int64_t)(s % 1000000), (uint32_t)(s >> 60) % 3, 0, 0, 0, 0);
    }
    double t0 = now_s();
    eq_event ev;
    int64_t sum = 0;
    for (uint64_t k = 0; k < ops; k++) {
        eq_pop(&q, &ev);
        sum += ev.time;
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        eq_push(&q, ev.time + (int64_t)(s % 1000000), (uint32_t)(s >> 60) % 3,
                0, 0, 0, 0);
    }
    double dt = now_s() - t0;
    eq_free(&q);
    if (sum == 42) puts(""); /* keep the loop observable */
    return (double)ops / dt;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "scenarios/paper/100b.json";
    const char *variant = argc > 2 ? argv[2] : "data_parallel";
    char err[1024];
    scn_config cfg;
    if (scn_load_variant(path, variant, NULL, 0, &cfg, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    double q = queue_rate(256, 20000000);

    run_result r;
    double best = 0, best_fast = 1e300, best_full = 1e300;
    for (int rep = 0; rep < 6; rep++) {
        cfg.full = rep % 2 == 0;
        double t0 = now_s();
        if (run_simulate(&cfg, NULL, &r, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        double dt = now_s() - t0;
        if (cfg.full && (double)r.events / dt > best)
            best = (double)r.events / dt;
        double *b = cfg.full ? &best_full : &best_fast;
        if (dt < *b) *b = dt;
    }
    printf("bench_sim: event queue alone (hold model, 256 pending): "
           "%.2f M events/s\n", q * 1e-6);
    printf("bench_sim: whole simulator, %s --variant %s: %llu events, "
           "%.2f M events/s (best of 3), %.2fx the queue alone; "
           "goal >= 5 M events/s\n",
           path, variant, (unsigned long long)r.events, best * 1e-6, best / q);
    printf("bench_sim: the same with the fast-forward: %.4f s against %.4f s "
           "--full: %.1fx faster, the same result\n", best_fast, best_full,
           best_full / best_fast);
    return 0;
}
