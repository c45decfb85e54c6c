/*
 * bench_sim.c -- events per second of the event queue alone and of the
 * whole simulator on the paper's 100B data-parallel scenario (108 layers,
 * 1000 steps), measured in the same process so the ratio is meaningful.
 * The simulator runs with `full` (every op and period simulated: the
 * engine's own rate); the fast-forward's gain on the same scenario is
 * printed after it, as a ratio of times.  Last, the network model alone:
 * a ring of 1 GB among 4 workers at 10 Gbit/s and 50 ms round trip, cold,
 * warm and after idle gaps, with TCP slow start and without, and what TCP
 * costs the net in instants and time.
 * usage: bench_sim [SCENARIO.json [VARIANT]]
 */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "sim/engine/collective.h"
#include "sim/engine/eventq.h"
#include "sim/engine/run.h"

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
        eq_push(&q, (int64_t)(s % 1000000), (uint32_t)(s >> 60) % 3, 0, 0, 0,
                0);
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

/* A stream on its own net, driven to the end of each collective. */
typedef struct {
    net *n;
    coll *c;
    int64_t end;    /* instant the last collective completed */
    uint64_t stops; /* instants the net stopped at */
} ring_bench;

static void ring_done(void *ctx, int64_t now, uint64_t tag) {
    (void)tag;
    ((ring_bench *)ctx)->end = now;
}

/* Submits S bytes at `at` and runs it to its end; returns its seconds. */
static double ring_once(ring_bench *b, int64_t at, uint64_t S) {
    for (int64_t t; (t = net_next_time(b->n)) <= at; b->stops++)
        net_advance(b->n, t);
    net_advance(b->n, at);
    coll_submit(b->c, at, S, NULL, 0);
    for (int64_t t; (t = net_next_time(b->n)) != INT64_MAX; b->stops++)
        net_advance(b->n, t);
    return 1e-9 * (double)(b->end - at);
}

/* The ring of the file comment: prints the collective's seconds cold,
 * warm, after 0.3 s and 10 s idle (restart after idle at RTO 0.25 s), and
 * the wall time per collective over `reps` collectives. */
static void ring_tcp(int tcp, int reps) {
    enum { M = 4 };
    int64_t lat[M * M];
    for (int i = 0; i < M * M; i++) lat[i] = 25000000;
    ring_bench b = {net_new(2 * M), NULL, 0, 0};
    for (int l = 0; l < 2 * M; l++) net_link_set(b.n, l, 1.25e9);
    b.c = coll_new(b.n, M, COLL_RING, lat, INFINITY, 10, ring_done, &b);
    const coll_tcp linux_tcp = {14480, INFINITY, 0.2, 1};
    if (tcp) coll_set_tcp(b.c, &linux_tcp);
    const uint64_t S = 1000000000;
    double t0 = now_s();
    double cold = ring_once(&b, 0, S), warm = ring_once(&b, b.end, S);
    double gap = ring_once(&b, b.end + 300000000, S);
    double idle = ring_once(&b, b.end + 10000000000, S);
    for (int k = 4; k < reps; k++)
        ring_once(&b, b.end + (k % 2 ? 0 : 10000000000), S);
    double dt = now_s() - t0;
    printf("bench_sim: ring of 1 GB, 4 workers, 10 Gbit/s, RTT 50 ms, %s: cold "
           "%.4f s, "
           "warm %.4f s, after 0.3 s idle %.4f s, after 10 s idle %.4f s; "
           "%.1f net instants and %.1f us per collective\n",
           tcp ? "TCP slow start" : "no TCP", cold, warm, gap, idle,
           (double)b.stops / reps, dt / reps * 1e6);
    coll_free(b.c);
    net_free(b.n);
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
           "%.2f M events/s\n",
           q * 1e-6);
    printf("bench_sim: whole simulator, %s --variant %s: %llu events, "
           "%.2f M events/s (best of 3), %.2fx the queue alone; "
           "goal >= 5 M events/s\n",
           path, variant, (unsigned long long)r.events, best * 1e-6, best / q);
    printf("bench_sim: the same with the fast-forward: %.4f s against %.4f s "
           "--full: %.1fx faster, the same result\n",
           best_fast, best_full, best_full / best_fast);
    ring_tcp(0, 2000);
    ring_tcp(1, 2000);
    return 0;
}
