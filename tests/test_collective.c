/*
 * test_collective.c -- all-reduce shapes against their closed forms.
 *
 * Each test builds a net of W workers (links 2i up, 2i+1 down), runs
 * collectives on it the way the simulator does, and compares completion
 * instants and per-worker bytes with the formulas computed by hand.
 * Bytes are whole: chunk i of S among M is floor((i+1)S/M) - floor(iS/M),
 * so every byte count below is exact.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/engine/collective.h"
#include "sim/base/msg.h"

#define MAXW 16
#define MAXLOG 64
#define TAG_BASE 1000

static const double B = 1.25e9;      /* 10 Gbit/s in bytes/s */
static const int64_t LAT = 10000000; /* 10 ms */
static const double S = 1.2e8;       /* 120 MB */

typedef struct {
    net *n;
    coll *c;
    coll *c2; /* an optional second stream on the same net */
    int W;
    int count; /* completions seen */
    int64_t t[MAXLOG];
    uint64_t tag[MAXLOG];
    int resubmit; /* on_coll submits tag 100 on the first completion */
} world;

static void on_coll(void *ctx, int64_t now, uint64_t tag) {
    world *w = ctx;
    ck_assert_int_lt(w->count, MAXLOG);
    w->t[w->count] = now;
    w->tag[w->count] = tag;
    w->count++;
    if (w->resubmit && w->count == 1)
        ck_assert_int_eq(coll_submit(w->c, now, S, NULL, 100), 0);
}

/* W workers, every link at B, every latency LAT (or lat when given). */
static void world_init(world *w, int W, coll_algo algo, const int64_t *lat) {
    *w = (world){.W = W};
    w->n = net_new(2 * W);
    ck_assert_ptr_nonnull(w->n);
    for (int l = 0; l < 2 * W; l++) net_link_set(w->n, l, B);
    int64_t uniform[MAXW * MAXW];
    for (int i = 0; i < W * W; i++) uniform[i] = LAT;
    w->c = coll_new(w->n, W, algo, lat ? lat : uniform, INFINITY, TAG_BASE,
                    on_coll, w);
    ck_assert_ptr_nonnull(w->c);
}

static void world_free(world *w) {
    coll_free(w->c);
    coll_free(w->c2);
    net_free(w->n);
}

static void drive(world *w) {
    int64_t t;
    while ((t = net_next_time(w->n)) != INT64_MAX) net_advance(w->n, t);
}

/* Runs everything due up to `until` and brings the net to it. */
static void drive_until(world *w, int64_t until) {
    int64_t t;
    while ((t = net_next_time(w->n)) <= until) net_advance(w->n, t);
    net_advance(w->n, until);
}

static uint64_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* Time (ns, rounded up) to move `bytes` at `rate` bytes/s. */
static int64_t xfer_ns(double bytes, double rate) {
    return (int64_t)ceil(bytes * 1e9 / rate);
}

/* The ring's closed form: 2(M-1) steps of lat + (S/M)/B. */
/* A ring step lasts as long as its largest chunk, ceil(S/M) bytes. */
static int64_t ring_ns(int M, double bytes, int64_t lat, double rate) {
    uint64_t S = (uint64_t)bytes, big = (S + (uint64_t)M - 1) / (uint64_t)M;
    return 2 * (M - 1) * (lat + xfer_ns((double)big, rate));
}

/* Bytes member k of M sends in a ring of S: every chunk twice but chunk
 * k+1 in the reduce-scatter and chunk k+2 in the all-gather. */
static uint64_t ring_member(double bytes, int M, int k) {
    uint64_t S = (uint64_t)bytes;
    return 2 * S - coll_chunk_bytes(S, M, (k + 1) % M) -
           coll_chunk_bytes(S, M, (k + 2) % M);
}

static uint64_t up_bytes(const world *w, int i) {
    return net_link_bytes(w->n, 2 * i);
}

static uint64_t down_bytes(const world *w, int i) {
    return net_link_bytes(w->n, 2 * i + 1);
}

START_TEST(ring_closed_form) {
    for (int M = 2; M <= MAXW; M++) {
        world w;
        world_init(&w, M, COLL_RING, NULL);
        ck_assert_int_eq(coll_submit(w.c, 0, S, NULL, 7), 0);
        ck_assert_int_eq(coll_pending(w.c), 1);
        drive(&w);
        ck_assert_int_eq(w.count, 1);
        ck_assert_uint_eq(w.tag[0], 7);
        ck_assert_int_eq(w.t[0], ring_ns(M, S, LAT, B));
        uint64_t total = 0;
        for (int i = 0; i < M; i++) {
            ck_assert_uint_eq(up_bytes(&w, i), ring_member(S, M, i));
            /* i receives what its predecessor sends */
            ck_assert_uint_eq(down_bytes(&w, i),
                              ring_member(S, M, (i + M - 1) % M));
            ck_assert_double_eq(net_link_peak(w.n, 2 * i), B);
            total += up_bytes(&w, i);
        }
        ck_assert_uint_eq(total, 2 * (uint64_t)(M - 1) * (uint64_t)S);
        ck_assert_int_eq(coll_pending(w.c), 0);
        ck_assert_int_eq(net_active_flows(w.n), 0);
        world_free(&w);
    }
}
END_TEST

START_TEST(ring_slowest_link_bounds) {
    enum { M = 8 };
    world w;
    world_init(&w, M, COLL_RING, NULL);
    net_link_set(w.n, 2 * 3, B / 4);     /* worker 3 sends slowly */
    net_link_set(w.n, 2 * 5 + 1, B / 2); /* worker 5 receives at half */
    coll_submit(w.c, 0, S, NULL, 1);
    drive(&w);
    /* every step waits for its slowest flow, 3 -> 4 at B/4 */
    ck_assert_int_eq(w.t[0], ring_ns(M, S, LAT, B / 4));
    ck_assert_uint_eq(up_bytes(&w, 3), ring_member(S, M, 3));
    world_free(&w);
}
END_TEST

START_TEST(ring_slowest_latency_bounds) {
    enum { M = 4 };
    int64_t lat[M * M];
    for (int i = 0; i < M * M; i++) lat[i] = LAT;
    lat[2 * M + 3] = 3 * LAT; /* 2 -> 3 is far away */
    world w;
    world_init(&w, M, COLL_RING, lat);
    coll_submit(w.c, 0, S, NULL, 1);
    drive(&w);
    ck_assert_int_eq(w.t[0], ring_ns(M, S, 3 * LAT, B));
    world_free(&w);
}
END_TEST

START_TEST(all_to_all_closed_form) {
    for (int M = 2; M <= MAXW; M++) {
        world w;
        world_init(&w, M, COLL_ALL_TO_ALL, NULL);
        coll_submit(w.c, 0, S, NULL, 3);
        drive(&w);
        ck_assert_int_eq(w.count, 1);
        /* two phases; in each, M-1 flows share every up and down link,
         * and the most loaded link bounds the phase: (M-1) times the
         * largest chunk, or S minus the smallest:
         * lat + max load / B.  B/(M-1) is inexact: allow 1 ns a phase. */
        uint64_t lo = UINT64_MAX, hi = 0;
        for (int i = 0; i < M; i++) {
            uint64_t c = coll_chunk_bytes((uint64_t)S, M, i);
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
        }
        uint64_t load = (uint64_t)(M - 1) * hi;
        if ((uint64_t)S - lo > load) load = (uint64_t)S - lo;
        double phase = LAT + (double)load / B * 1e9;
        int64_t expect = 2 * (int64_t)ceil(phase);
        ck_assert_msg(llabs(w.t[0] - expect) <= 2, "M=%d: %lld vs %lld", M,
                      (long long)w.t[0], (long long)expect);
        uint64_t total = 0;
        for (int i = 0; i < M; i++) {
            /* S - chunk(i) scattered, chunk(i) to each of M-1 gathered */
            uint64_t ci = coll_chunk_bytes((uint64_t)S, M, i);
            ck_assert_uint_eq(up_bytes(&w, i),
                              (uint64_t)S - ci + (uint64_t)(M - 1) * ci);
            total += down_bytes(&w, i);
            ck_assert_double_le(net_link_peak(w.n, 2 * i), B);
        }
        ck_assert_uint_eq(total, 2 * (uint64_t)(M - 1) * (uint64_t)S);
        world_free(&w);
    }
}
END_TEST

START_TEST(star_closed_form) {
    for (int M = 2; M <= 8; M++) {
        world w;
        world_init(&w, M, COLL_STAR, NULL);
        coll_submit(w.c, 0, S, NULL, 4);
        drive(&w);
        /* gather: M-1 flows of S into worker 0's down link; broadcast: M-1
         * flows of S out of its up link. */
        double phase = LAT + (M - 1) * S / B * 1e9;
        int64_t expect = 2 * (int64_t)ceil(phase);
        ck_assert_msg(llabs(w.t[0] - expect) <= 2, "M=%d: %lld vs %lld", M,
                      (long long)w.t[0], (long long)expect);
        ck_assert_uint_eq(up_bytes(&w, 0), (uint64_t)((M - 1) * S));
        ck_assert_uint_eq(down_bytes(&w, 0), (uint64_t)((M - 1) * S));
        for (int i = 1; i < M; i++) {
            ck_assert_uint_eq(up_bytes(&w, i), (uint64_t)S);
            ck_assert_uint_eq(down_bytes(&w, i), (uint64_t)S);
        }
        world_free(&w);
    }
}
END_TEST

/* Member completion: when each member has its result, by hand, for three
 * workers on unbounded links (so every flow lasts its latency) with
 * latencies lat(0,1) = 1 ms, lat(0,2) = 5 ms, lat(1,2) = 3 ms (both ways).
 *   star (hub 0): gather ends at 5 (the hub has it); broadcast 0->1 ends at
 *     6, 0->2 at 10.
 *   ring 0 -> 1 -> 2 -> 0: every step lasts its slowest flow, 5 ms, so the
 *     last step starts at 15 and member 1 (from 0) has it at 16, member 2
 *     (from 1) at 18, member 0 (from 2) at 20.
 *   all_to_all: the all-gather starts at 5; member 0's incoming flows end
 *     at 6 and 10, member 1's at 6 and 8, member 2's at 8 and 10.
 * Each report comes before the collective's completion (at the last). */
static int64_t got_at[MAXW];
static int got_order;

static void on_member(void *ctx, int64_t now, uint64_t tag, int worker) {
    world *w = ctx;
    ck_assert_int_eq((int)tag, 7);
    ck_assert_int_eq(w->count, 0); /* before the collective's end */
    got_at[worker] = now;
    got_order++;
}

START_TEST(member_completion) {
    const int64_t ms = 1000000;
    int64_t lat[9] = {0, 1 * ms, 5 * ms, 1 * ms, 0, 3 * ms, 5 * ms, 3 * ms, 0};
    const struct {
        coll_algo algo;
        int64_t at[3], done;
    } cases[] = {{COLL_STAR, {5 * ms, 6 * ms, 10 * ms}, 10 * ms},
                 {COLL_RING, {20 * ms, 16 * ms, 18 * ms}, 20 * ms},
                 {COLL_ALL_TO_ALL, {10 * ms, 8 * ms, 10 * ms}, 10 * ms}};
    for (int k = 0; k < 3; k++) {
        world w = {.W = 3};
        w.n = net_new(6);
        for (int l = 0; l < 6; l++) net_link_set(w.n, l, INFINITY);
        w.c = coll_new(w.n, 3, cases[k].algo, lat, INFINITY, TAG_BASE, on_coll,
                       &w);
        ck_assert_int_eq(coll_set_member_done(w.c, on_member), 0);
        got_order = 0;
        ck_assert_int_eq(coll_submit(w.c, 0, 3000, NULL, 7), 0);
        drive(&w);
        ck_assert_int_eq(got_order, 3);
        ck_assert_int_eq(w.count, 1);
        for (int i = 0; i < 3; i++)
            ck_assert_msg(got_at[i] == cases[k].at[i], "%s member %d at %lld",
                          coll_algo_name(cases[k].algo), i,
                          (long long)got_at[i]);
        ck_assert_int_eq(w.t[0], cases[k].done);
        world_free(&w);
    }
}
END_TEST

START_TEST(fifo_order) {
    enum { M = 4 };
    world w;
    world_init(&w, M, COLL_RING, NULL);
    coll_submit(w.c, 0, S, NULL, 1);
    coll_submit(w.c, 0, S / 2, NULL, 2);
    ck_assert_int_eq(coll_pending(w.c), 2);
    int64_t ta = ring_ns(M, S, LAT, B);
    drive_until(&w, ta);
    ck_assert_int_eq(w.count, 1);
    ck_assert_int_eq(coll_pending(w.c), 1);
    drive(&w);
    ck_assert_int_eq(w.count, 2);
    ck_assert_uint_eq(w.tag[0], 1);
    ck_assert_uint_eq(w.tag[1], 2);
    ck_assert_int_eq(w.t[0], ta);
    ck_assert_int_eq(w.t[1], ta + ring_ns(M, S / 2, LAT, B));
    ck_assert_uint_eq(up_bytes(&w, 0), (uint64_t)(1.5 * 1.5 * S));
    world_free(&w);
}
END_TEST

START_TEST(submit_from_callback) {
    enum { M = 3 };
    world w;
    world_init(&w, M, COLL_RING, NULL);
    w.resubmit = 1;
    coll_submit(w.c, 0, S, NULL, 1);
    drive(&w);
    ck_assert_int_eq(w.count, 2);
    ck_assert_uint_eq(w.tag[1], 100);
    ck_assert_int_eq(w.t[1], 2 * ring_ns(M, S, LAT, B));
    world_free(&w);
}
END_TEST

START_TEST(member_subset) {
    enum { W = 8 };
    uint8_t mask[W] = {0, 1, 0, 1, 1, 0, 1, 0};
    world w;
    world_init(&w, W, COLL_RING, NULL);
    coll_submit(w.c, 0, S, mask, 5);
    drive(&w);
    ck_assert_int_eq(w.t[0], ring_ns(4, S, LAT, B));
    for (int i = 0; i < W; i++) {
        uint64_t expect = mask[i] ? (uint64_t)(2.0 * 3 / 4 * S) : 0;
        ck_assert_uint_eq(up_bytes(&w, i), expect);
        ck_assert_uint_eq(down_bytes(&w, i), expect);
    }
    world_free(&w);
}
END_TEST

START_TEST(remove_member_restarts) {
    enum { M = 4 };
    world w;
    world_init(&w, M, COLL_RING, NULL);
    coll_submit(w.c, 0, S, NULL, 9);
    /* fail worker 2 halfway through the transfer of step 3 (0-based 2) */
    int64_t step = LAT + xfer_ns(S / M, B);
    int64_t tr = 2 * step + LAT + xfer_ns(S / M, B) / 2;
    drive_until(&w, tr);
    ck_assert_int_eq(w.count, 0);
    coll_remove_member(w.c, tr, 2);
    drive(&w);
    ck_assert_int_eq(w.count, 1);
    /* restarts from the first step among 3 members: 4 steps of S/3 */
    ck_assert_int_eq(w.t[0], tr + ring_ns(3, S, LAT, B));
    /* bytes before the failure stay counted: 2.5 steps of S/4 */
    uint64_t before = (uint64_t)(2.5 * S / M);
    ck_assert_uint_eq(up_bytes(&w, 2), before);
    ck_assert_uint_eq(up_bytes(&w, 0), before + (uint64_t)(4 * S / 3));
    ck_assert_uint_eq(down_bytes(&w, 2), before);
    world_free(&w);
}
END_TEST

START_TEST(remove_member_queued_only) {
    enum { W = 4 };
    uint8_t first[W] = {1, 1, 1, 0};
    world w;
    world_init(&w, W, COLL_RING, NULL);
    coll_submit(w.c, 0, S, first, 1);
    coll_submit(w.c, 0, S, NULL, 2);
    drive_until(&w, LAT + 5);
    coll_remove_member(w.c, LAT + 5, 3); /* not in the running one */
    drive(&w);
    int64_t ta = ring_ns(3, S, LAT, B);
    ck_assert_int_eq(w.t[0], ta);
    ck_assert_int_eq(w.t[1], ta + ring_ns(3, S, LAT, B)); /* 3 dropped */
    ck_assert_uint_eq(up_bytes(&w, 3), 0);
    world_free(&w);
}
END_TEST

START_TEST(remove_down_to_one) {
    enum { W = 2 };
    world w;
    world_init(&w, W, COLL_RING, NULL);
    coll_submit(w.c, 0, S, NULL, 1);
    drive_until(&w, LAT / 2);
    coll_remove_member(w.c, LAT / 2, 0);
    drive(&w);
    /* one member left: done at once, nothing moved (still in latency) */
    ck_assert_int_eq(w.count, 1);
    ck_assert_int_eq(w.t[0], LAT / 2);
    ck_assert_uint_eq(up_bytes(&w, 1), 0);
    world_free(&w);
}
END_TEST

START_TEST(clear_cancels_silently) {
    enum { M = 4 };
    world w;
    world_init(&w, M, COLL_ALL_TO_ALL, NULL);
    coll_submit(w.c, 0, S, NULL, 1);
    coll_submit(w.c, 0, S, NULL, 2);
    int64_t tc = LAT + 1000000;
    drive_until(&w, tc);
    coll_clear(w.c, tc);
    ck_assert_int_eq(coll_pending(w.c), 0);
    ck_assert_int_eq(net_active_flows(w.n), 0);
    ck_assert_int_eq(net_next_time(w.n), INT64_MAX);
    drive(&w);
    ck_assert_int_eq(w.count, 0);
    /* 1 ms at B on each up link stays counted: the whole bytes of each
     * of its M-1 flows, B/(M-1) * 1 ms = 416666.67 -> 416666 each */
    ck_assert_uint_eq(up_bytes(&w, 0), 3 * (uint64_t)(B * 1e-3 / 3));
    /* the stream is usable again */
    coll_submit(w.c, tc, S, NULL, 3);
    drive(&w);
    ck_assert_int_eq(w.count, 1);
    ck_assert_uint_eq(w.tag[0], 3);
    world_free(&w);
}
END_TEST

START_TEST(single_member) {
    enum { W = 4 };
    uint8_t one[W] = {0, 0, 1, 0};
    uint8_t none[W] = {0};
    world w;
    world_init(&w, W, COLL_RING, NULL);
    ck_assert_int_eq(coll_submit(w.c, 5, S, one, 1), 0);
    ck_assert_int_eq(w.count, 0); /* never from inside coll_submit */
    ck_assert_int_eq(net_next_time(w.n), 5);
    coll_submit(w.c, 5, S, none, 2); /* no member at all: same */
    drive(&w);
    ck_assert_int_eq(w.count, 2);
    ck_assert_int_eq(w.t[0], 5);
    ck_assert_int_eq(w.t[1], 5);
    ck_assert_uint_eq(w.tag[1], 2);
    for (int l = 0; l < 2 * W; l++)
        ck_assert_uint_eq(net_link_bytes(w.n, l), 0);
    world_free(&w);
}
END_TEST

START_TEST(two_streams_share_a_net) {
    /* Disjoint groups {0,1} and {2,3} run concurrently, each as if alone;
     * completions are routed by tag. */
    enum { W = 4 };
    uint8_t g1[W] = {1, 1, 0, 0}, g2[W] = {0, 0, 1, 1};
    world w;
    world_init(&w, W, COLL_RING, NULL);
    int64_t lat[W * W];
    for (int i = 0; i < W * W; i++) lat[i] = LAT;
    w.c2 =
        coll_new(w.n, W, COLL_STAR, lat, INFINITY, 2 * TAG_BASE, on_coll, &w);
    coll_submit(w.c, 0, S, g1, 1);
    coll_submit(w.c2, 0, S, g2, 2);
    drive(&w);
    ck_assert_int_eq(w.count, 2);
    int64_t tring = ring_ns(2, S, LAT, B);
    int64_t tstar = 2 * (LAT + xfer_ns(S, B));
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq(w.t[k], w.tag[k] == 1 ? tring : tstar);
    world_free(&w);
}
END_TEST

START_TEST(flow_cap_applies) {
    enum { M = 4 };
    world w;
    world_init(&w, M, COLL_RING, NULL);
    coll_free(w.c);
    int64_t lat[M * M] = {0};
    w.c = coll_new(w.n, M, COLL_RING, lat, B / 10, TAG_BASE, on_coll, &w);
    coll_submit(w.c, 0, S, NULL, 1);
    drive(&w);
    ck_assert_int_eq(w.t[0], ring_ns(M, S, 0, B / 10));
    world_free(&w);
}
END_TEST

START_TEST(algo_names) {
    coll_algo a;
    const coll_algo all[] = {COLL_RING, COLL_ALL_TO_ALL, COLL_STAR};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(coll_parse_algo(coll_algo_name(all[i]), &a), 0);
        ck_assert_int_eq(a, all[i]);
    }
    ck_assert_str_eq(coll_algo_name(COLL_ALL_TO_ALL), "all_to_all");
    ck_assert_int_eq(coll_parse_algo("tree", &a), -1);
    ck_assert_int_eq(coll_parse_algo("", &a), -1);
}
END_TEST

START_TEST(invalid_arguments) {
    net *n = net_new(4);
    ck_assert_ptr_null(
        coll_new(n, 0, COLL_RING, NULL, INFINITY, 0, NULL, NULL));
    coll *c = coll_new(n, 2, COLL_RING, NULL, INFINITY, 0, NULL, NULL);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(coll_pending(c), 0);
    coll_remove_member(c, 0, 7); /* ignored */
    coll_free(c);
    net_free(n);
}
END_TEST

/* Whole-byte chunks: floor((i+1)S/M) - floor(iS/M) sum to S exactly and
 * differ by at most one byte, also where (i+1)S would overflow 64 bits;
 * a ring of S = 10 among 3 sends chunks 3, 3, 4 (before: 3.33 bytes each,
 * 20.000000000000004 in all). */
START_TEST(chunks_sum_exactly) {
    uint64_t sizes[] = {
        0, 1, 10, 2000000002ull, 20000004160ull, UINT64_MAX / 2 + 12345};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (int M = 1; M <= MAXW; M++) {
            uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
            for (int i = 0; i < M; i++) {
                uint64_t c = coll_chunk_bytes(sizes[k], M, i);
                sum += c;
                lo = c < lo ? c : lo;
                hi = c > hi ? c : hi;
            }
            ck_assert_uint_eq(sum, sizes[k]);
            ck_assert_uint_le(hi - lo, 1);
        }
    ck_assert_uint_eq(coll_chunk_bytes(10, 3, 0), 3);
    ck_assert_uint_eq(coll_chunk_bytes(10, 3, 1), 3);
    ck_assert_uint_eq(coll_chunk_bytes(10, 3, 2), 4);
    world w;
    world_init(&w, 3, COLL_RING, NULL);
    coll_submit(w.c, 0, 10, NULL, 1);
    drive(&w);
    uint64_t total = 0;
    for (int i = 0; i < 3; i++) total += up_bytes(&w, i);
    ck_assert_uint_eq(total, 40);
    world_free(&w);
}
END_TEST

/* ---- the exclusive stream's shortcut ----------------------------------- */

/* Live flows on a net: the first field of its signature. */
static int64_t live_flows(const net *n) {
    sig_buf b = {0};
    net_signature(n, 0, &b);
    int64_t v = 0;
    memcpy(&v, b.p, sizeof v);
    free(b.p);
    return v;
}

/* A twin pair: world 0 plain, world 1 exclusive, same links, latencies
 * and flow cap. */
static void twins_init(world *w, int W, const double *up, const double *down,
                       const int64_t *lat, double cap) {
    for (int k = 0; k < 2; k++) {
        w[k] = (world){.W = W};
        w[k].n = net_new(2 * W);
        for (int i = 0; i < W; i++) {
            net_link_set(w[k].n, 2 * i, up[i]);
            net_link_set(w[k].n, 2 * i + 1, down[i]);
        }
        w[k].c =
            coll_new(w[k].n, W, COLL_RING, lat, cap, TAG_BASE, on_coll, &w[k]);
    }
    coll_set_exclusive(w[1].c);
}

/* Both nets' link counters (after the shortcut's bytes are flushed) and
 * peaks, next instants and completions agree. */
static void twins_check(world *w) {
    coll_flush_bytes(w[1].c);
    ck_assert_int_eq(net_next_time(w[0].n), net_next_time(w[1].n));
    ck_assert_int_eq(net_active_flows(w[0].n), net_active_flows(w[1].n));
    ck_assert_int_eq(w[0].count, w[1].count);
    for (int i = 0; i < w[0].count; i++) {
        ck_assert_int_eq(w[0].t[i], w[1].t[i]);
        ck_assert_uint_eq(w[0].tag[i], w[1].tag[i]);
    }
    for (int l = 0; l < 2 * w[0].W; l++) {
        ck_assert_uint_eq(net_link_bytes(w[0].n, l), net_link_bytes(w[1].n, l));
        ck_assert(net_link_peak(w[0].n, l) == net_link_peak(w[1].n, l));
    }
}

/* Drives both to the end in step, checking at every instant and at
 * points in between; returns at how many instants the exclusive net had
 * fewer live flows than the plain one. */
static int twins_drive(world *w, uint64_t *seed) {
    int64_t t, last = 0;
    int fewer = 0;
    while ((t = net_next_time(w[0].n)) != INT64_MAX) {
        if (t > last + 2 && lcg(seed) % 3 == 0) { /* somewhere before it */
            int64_t mid =
                last + 1 + (int64_t)(lcg(seed) % (uint64_t)(t - last - 1));
            for (int k = 0; k < 2; k++) net_advance(w[k].n, mid);
            twins_check(w);
        }
        for (int k = 0; k < 2; k++) net_advance(w[k].n, t);
        twins_check(w);
        fewer += live_flows(w[1].n) < live_flows(w[0].n);
        last = t;
    }
    return fewer;
}

/* Rings whose flows are alike (equal links, one latency) take the
 * shortcut: from their second step on, fewer flows on the net (one per
 * chunk size), yet the same instants, bytes and peaks as M flows, at
 * every instant and between.  Sizes with no remainder, with
 * chunks of 0 and 1 byte, a member subset, a flow cap, latency 0; and
 * rings that are not alike (a slower link, uneven latencies) run as
 * before. */
START_TEST(exclusive_ring_matches) {
    static const uint64_t sizes[] = {120000000, 120000007, 5, 0,
                                     999999999989ull};
    uint64_t seed = 31;
    for (int M = 2; M <= MAXW; M += 3) {
        for (int kind = 0; kind < 4; kind++) {
            double up[MAXW], down[MAXW];
            int64_t lat[MAXW * MAXW];
            for (int i = 0; i < M; i++) up[i] = down[i] = B;
            for (int i = 0; i < M * M; i++) lat[i] = kind == 1 ? 0 : LAT;
            if (kind == 2) down[1] = B / 3;  /* one slower link: not alike */
            if (kind == 3) lat[1] = 2 * LAT; /* uneven latencies: not alike */
            world w[2];
            twins_init(w, M, up, down, lat, kind == 1 ? B / 7 : INFINITY);
            uint8_t some[MAXW] = {0};
            for (int i = 0; i < M; i += 2) some[i] = 1;
            some[1] = 1;
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
                for (int j = 0; j < 2; j++) {
                    ck_assert_int_eq(coll_submit(w[j].c, 0, sizes[k], NULL, k),
                                     0);
                    ck_assert_int_eq(coll_submit(w[j].c, 0, sizes[k] + 3, some,
                                                 50 + k),
                                     0);
                }
            int fewer = twins_drive(w, &seed);
            ck_assert_int_eq(w[0].count,
                             2 * (int)(sizeof sizes / sizeof sizes[0]));
            if (M > 2) ck_assert_int_eq(fewer > 0, kind < 2);
            for (int k = 0; k < 2; k++) world_free(&w[k]);
        }
    }
}
END_TEST

/* The bytes each member moved so far in a shortcut ring, flushed at any
 * instant, are the plain ring's: whole steps by the closed form, the step
 * under way as far as its flows have come. */
START_TEST(exclusive_ring_bytes_midway) {
    enum { M = 7 };
    double up[M], down[M];
    int64_t lat[M * M];
    for (int i = 0; i < M; i++) up[i] = down[i] = 3e8;
    for (int i = 0; i < M * M; i++) lat[i] = 1000;
    world w[2];
    twins_init(w, M, up, down, lat, INFINITY);
    for (int j = 0; j < 2; j++) coll_submit(w[j].c, 0, 70000005, NULL, 1);
    for (int64_t t = 0; t < 3000000; t += 7777) {
        for (int k = 0; k < 2; k++) drive_until(&w[k], t);
        twins_check(w);
    }
    for (int k = 0; k < 2; k++) drive(&w[k]);
    twins_check(w);
    for (int i = 0; i < M; i++)
        ck_assert_uint_eq(up_bytes(&w[1], i), ring_member(70000005, M, i));
    for (int k = 0; k < 2; k++) world_free(&w[k]);
}
END_TEST

/* ---- connection set-up (coll_set_startup) -------------------------------- */

/* The set-up waits reported, in order. */
static struct {
    int n;
    uint64_t tag[MAXLOG];
    int src[MAXLOG], dst[MAXLOG];
    int64_t t0[MAXLOG], t1[MAXLOG];
} setups;

static void on_setup(void *ctx, uint64_t tag, int src, int dst, int64_t t0,
                     int64_t t1) {
    (void)ctx;
    ck_assert_int_lt(setups.n, MAXLOG);
    setups.tag[setups.n] = tag;
    setups.src[setups.n] = src;
    setups.dst[setups.n] = dst;
    setups.t0[setups.n] = t0;
    setups.t1[setups.n++] = t1;
}

/* How long a collective of S among `members` (NULL: all) submitted at
 * `at` takes, run to its end. */
static int64_t timed(world *w, int64_t at, const uint8_t *members) {
    drive_until(w, at);
    int before = w->count;
    ck_assert_int_eq(coll_submit(w->c, at, S, members, 1), 0);
    drive(w);
    ck_assert_int_eq(w->count, before + 1);
    return w->t[before] - at;
}

/* A set-up of SU (and a step overhead OV) is paid by the first flow of
 * each ordered pair, after the overhead: a ring's first step sets up
 * every pair it uses (one SU longer), later steps and collectives pay
 * nothing; a star pays in both steps (the broadcast's pairs are new): 2
 * SU; an all-to-all in its first step only (its all-gather reuses the
 * pairs).  Each sender's wait is reported once a step, [start + OV, +
 * SU). */
START_TEST(startup_once_per_pair) {
    const int64_t SU = 7000000, OV = 123457;
    const coll_algo algos[] = {COLL_RING, COLL_STAR, COLL_ALL_TO_ALL};
    const int paid[] = {1, 2, 1};
    for (int a = 0; a < 3; a++)
        for (int M = 2; M <= 6; M++) {
            world w, plain;
            world_init(&w, M, algos[a], NULL);
            world_init(&plain, M, algos[a], NULL);
            coll_set_step_overhead(w.c, OV);
            coll_set_step_overhead(plain.c, OV);
            ck_assert_int_eq(coll_set_startup(w.c, SU, on_setup), 0);
            setups.n = 0;
            int64_t base = timed(&plain, 0, NULL);
            ck_assert_int_eq(timed(&w, 0, NULL), base + paid[a] * SU);
            /* each sender once a step: a ring's M, a star's M - 1 in its
             * gather and the hub in its broadcast, an all-to-all's M */
            ck_assert_int_eq(setups.n, M);
            for (int k = 0; k < setups.n; k++) {
                ck_assert_int_eq(setups.t1[k] - setups.t0[k], SU);
                ck_assert_uint_eq(setups.tag[k], 1);
                ck_assert_int_ne(setups.src[k], setups.dst[k]);
                if (algos[a] != COLL_STAR || setups.dst[k] == 0)
                    ck_assert_int_eq(setups.t0[k], OV); /* the first step */
            }
            int64_t at = w.t[0];
            ck_assert_int_eq(timed(&w, at, NULL), base);
            ck_assert_int_eq(setups.n, M);
            world_free(&w);
            world_free(&plain);
        }
}
END_TEST

/* New pairs pay again: a ring order that uses other pairs (0 2 1 after
 * 0 1 2), not a rotation of the same ring; a removed (failed) member's
 * pairs, both ways, so that the ring of the survivors (0 -> 1 -> 3 -> 0)
 * sets up 1 -> 3, and the repaired member's return sets up 1 -> 2 and
 * 2 -> 3 again. */
START_TEST(startup_new_pairs) {
    const int64_t SU = 5000000;
    world w, plain;
    world_init(&w, 3, COLL_RING, NULL);
    world_init(&plain, 3, COLL_RING, NULL);
    coll_set_startup(w.c, SU, NULL);
    int64_t base = timed(&plain, 0, NULL);
    ck_assert_int_eq(timed(&w, 0, NULL), base + SU);
    const int rot[3] = {1, 2, 0}, other[3] = {0, 2, 1};
    ck_assert_int_eq(coll_set_order(w.c, rot), 0);
    ck_assert_int_eq(timed(&w, w.t[0], NULL), base);
    ck_assert_int_eq(coll_set_order(w.c, other), 0);
    ck_assert_int_eq(timed(&w, w.t[1], NULL), base + SU);
    ck_assert_int_eq(timed(&w, w.t[2], NULL), base);
    world_free(&w);
    world_free(&plain);

    world_init(&w, 4, COLL_RING, NULL);
    world_init(&plain, 4, COLL_RING, NULL);
    coll_set_startup(w.c, SU, NULL);
    const uint8_t all[4] = {1, 1, 1, 1}, three[4] = {1, 1, 0, 1};
    int64_t base4 = timed(&plain, 0, all), base3 = timed(&plain, base4, three);
    ck_assert_int_eq(timed(&w, 0, all), base4 + SU);
    coll_remove_member(w.c, w.t[0], 2); /* idle: only its pairs go */
    ck_assert_int_eq(timed(&w, w.t[0], three), base3 + SU);
    ck_assert_int_eq(timed(&w, w.t[1], three), base3);
    ck_assert_int_eq(timed(&w, w.t[2], all), base4 + SU);
    ck_assert_int_eq(timed(&w, w.t[3], all), base4);
    world_free(&w);
    world_free(&plain);
}
END_TEST

/* A collective cancelled during the set-up leaves its pairs as never set
 * up (the wait is reported up to the cancel); cancelled after it, during
 * the latency, the pairs are set up. */
START_TEST(startup_cut_short) {
    const int64_t SU = 5000000;
    for (int after = 0; after < 2; after++) {
        world w, plain;
        world_init(&w, 2, COLL_RING, NULL);
        world_init(&plain, 2, COLL_RING, NULL);
        coll_set_startup(w.c, SU, on_setup);
        setups.n = 0;
        int64_t base = timed(&plain, 0, NULL);
        coll_submit(w.c, 0, S, NULL, 1);
        int64_t cut = after ? SU + LAT / 2 : SU / 2;
        drive_until(&w, cut);
        coll_clear(w.c, cut);
        ck_assert_int_eq(setups.n, 2);
        ck_assert_int_eq(setups.t1[0], after ? SU : cut);
        ck_assert_int_eq(timed(&w, cut, NULL), base + (after ? 0 : SU));
        world_free(&w);
        world_free(&plain);
    }
}
END_TEST

/* ---- acknowledgements on the reverse links ------------------------------- */

/* Each link's partner is the other link of its worker (l ^ 1). */
static void acks_on(world *w, double a) {
    int partner[2 * MAXW];
    for (int l = 0; l < 2 * w->W; l++) partner[l] = l ^ 1;
    ck_assert_int_eq(net_set_ack(w->n, a, partner), 0);
}

/* With ACKs of a = 0.25: a ring's every link carries one flow and the
 * ACKs of another (its predecessor's on the up link, its successor's on
 * the down link), so every flow runs at B / (1 + a) = 1e9 bytes/s: the
 * ring's closed form at that rate, also with the exclusive stream (whose
 * shortcut is then off); a star's hub carries the ACKs of M - 1 flows of
 * B / (M - 1), a B <= B, so the star is as fast as without ACKs.  Bytes
 * are payload only. */
START_TEST(acks_ring_and_star) {
    const double a = 0.25;
    for (int M = 2; M <= 6; M++) {
        world w;
        world_init(&w, M, COLL_RING, NULL);
        acks_on(&w, a);
        ck_assert_int_eq(timed(&w, 0, NULL), ring_ns(M, S, LAT, B / (1 + a)));
        ck_assert_int_eq(w.t[0], ring_ns(M, S, LAT, 1e9));
        for (int i = 0; i < M; i++)
            ck_assert_uint_eq(up_bytes(&w, i), ring_member(S, M, i));
        world_free(&w);

        double up[MAXW], down[MAXW];
        int64_t lat[MAXW * MAXW];
        for (int i = 0; i < M; i++) up[i] = down[i] = B;
        for (int i = 0; i < M * M; i++) lat[i] = LAT;
        world tw[2];
        twins_init(tw, M, up, down, lat, INFINITY);
        for (int k = 0; k < 2; k++) {
            acks_on(&tw[k], a);
            coll_submit(tw[k].c, 0, S, NULL, 1);
        }
        uint64_t seed = 7;
        ck_assert_int_eq(twins_drive(tw, &seed), 0); /* no shortcut */
        ck_assert_int_eq(tw[1].t[0], ring_ns(M, S, LAT, 1e9));
        for (int k = 0; k < 2; k++) world_free(&tw[k]);

        world star, plain;
        world_init(&star, M, COLL_STAR, NULL);
        world_init(&plain, M, COLL_STAR, NULL);
        acks_on(&star, a);
        ck_assert_int_eq(timed(&star, 0, NULL), timed(&plain, 0, NULL));
        world_free(&star);
        world_free(&plain);
    }
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("collective");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, ring_closed_form);
    tcase_add_test(tc, ring_slowest_link_bounds);
    tcase_add_test(tc, ring_slowest_latency_bounds);
    tcase_add_test(tc, all_to_all_closed_form);
    tcase_add_test(tc, star_closed_form);
    tcase_add_test(tc, member_completion);
    tcase_add_test(tc, fifo_order);
    tcase_add_test(tc, submit_from_callback);
    tcase_add_test(tc, member_subset);
    tcase_add_test(tc, remove_member_restarts);
    tcase_add_test(tc, remove_member_queued_only);
    tcase_add_test(tc, remove_down_to_one);
    tcase_add_test(tc, clear_cancels_silently);
    tcase_add_test(tc, single_member);
    tcase_add_test(tc, two_streams_share_a_net);
    tcase_add_test(tc, flow_cap_applies);
    tcase_add_test(tc, algo_names);
    tcase_add_test(tc, invalid_arguments);
    tcase_add_test(tc, chunks_sum_exactly);
    tcase_add_test(tc, exclusive_ring_matches);
    tcase_add_test(tc, exclusive_ring_bytes_midway);
    suite_add_tcase(s, tc);
    TCase *tk = tcase_create("startup_acks");
    tcase_set_timeout(tk, 60);
    tcase_add_test(tk, startup_once_per_pair);
    tcase_add_test(tk, startup_new_pairs);
    tcase_add_test(tk, startup_cut_short);
    tcase_add_test(tk, acks_ring_and_star);
    suite_add_tcase(s, tk);
    return s;
}

CHECK_MAIN(make_suite)
