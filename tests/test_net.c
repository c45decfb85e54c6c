/*
 * test_net.c -- the flow-level network model against closed forms.
 *
 * Every test computes the expected instant or byte count by hand, next to
 * the simulated one.  Sizes and rates are chosen so the closed forms are
 * exact in double precision, hence most comparisons are exact.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/engine/net.h"
#include "sim/base/msg.h"

#define MAXLOG 1024

/* What the done callback saw, in call order. */
typedef struct {
    int count;
    int64_t t[MAXLOG];
    int flow[MAXLOG];
    uint64_t tag[MAXLOG];
    net *n;            /* for callbacks that act on the net */
    int64_t seen_next; /* net_next_time() seen inside a callback */
    int added;         /* flow added from a callback */
} flow_log;

static void record(void *ctx, int64_t now, int flow, uint64_t tag) {
    flow_log *lg = ctx;
    ck_assert_int_lt(lg->count, MAXLOG);
    lg->t[lg->count] = now;
    lg->flow[lg->count] = flow;
    lg->tag[lg->count] = tag;
    lg->count++;
}

/* Drives the net to quiescence the way the simulator does. */
static void run(net *n) {
    int64_t t;
    while ((t = net_next_time(n)) != INT64_MAX) net_advance(n, t);
}

/* Completion instant of the flow tagged `tag`, or -1. */
static int64_t done_at(const flow_log *lg, uint64_t tag) {
    for (int i = 0; i < lg->count; i++)
        if (lg->tag[i] == tag) return lg->t[i];
    return -1;
}

/* Time (ns, rounded up) to move `bytes` at `rate` bytes/s. */
static int64_t xfer_ns(double bytes, double rate) {
    return (int64_t)ceil(bytes * 1e9 / rate);
}

static const double B = 1e9;     /* 1 GB/s */
static const int64_t LAT = 5000; /* 5 us */

START_TEST(single_flow) {
    net *n = net_new(1);
    net_link_set(n, 0, B);
    flow_log lg = {0};
    double S = 3e6 + 7; /* not a whole number of ns: exercises the ceil */
    int id = net_flow_add(n, 100, LAT, 0, -1, S, INFINITY, record, &lg, 42);
    ck_assert_int_ge(id, 0);
    ck_assert_int_eq(net_next_time(n), 100 + LAT);
    ck_assert_int_eq(net_active_flows(n), 1);
    run(n);
    ck_assert_int_eq(lg.count, 1);
    ck_assert_int_eq(lg.flow[0], id);
    ck_assert_uint_eq(lg.tag[0], 42);
    ck_assert_int_eq(lg.t[0], 100 + LAT + xfer_ns(S, B));
    ck_assert_int_eq(lg.t[0], 100 + LAT + 3000007);
    ck_assert_uint_eq(net_link_bytes(n, 0), (uint64_t)(S));
    ck_assert_double_eq(net_link_peak(n, 0), B);
    ck_assert_int_eq(net_active_flows(n), 0);
    net_free(n);
}
END_TEST

START_TEST(equal_flows_share) {
    for (int N = 1; N <= 16; N++) {
        net *n = net_new(1);
        net_link_set(n, 0, B);
        flow_log lg = {0};
        double S = 1e6;
        for (int i = 0; i < N; i++)
            net_flow_add(n, 0, LAT, 0, -1, S, INFINITY, record, &lg,
                         (uint64_t)i);
        run(n);
        ck_assert_int_eq(lg.count, N);
        /* each gets B/N, so all end together at LAT + N*S/B */
        int64_t expect = LAT + xfer_ns(N * S, B);
        for (int i = 0; i < N; i++) {
            ck_assert_int_eq(lg.t[i], expect);
            if (i > 0) /* same instant: reported in id order */
                ck_assert_int_gt(lg.flow[i], lg.flow[i - 1]);
        }
        ck_assert_uint_eq(net_link_bytes(n, 0), (uint64_t)(N * S));
        ck_assert_double_le(net_link_peak(n, 0), B);
        ck_assert_double_eq_tol(net_link_peak(n, 0), B, 1e-9 * B);
        net_free(n);
    }
}
END_TEST

START_TEST(unequal_sizes_maxmin) {
    net *n = net_new(1);
    net_link_set(n, 0, B);
    flow_log lg = {0};
    double s1 = 1e6, s2 = 3e6;
    net_flow_add(n, 0, LAT, 0, -1, s1, INFINITY, record, &lg, 1);
    net_flow_add(n, 0, LAT, 0, -1, s2, INFINITY, record, &lg, 2);
    run(n);
    /* both at B/2 until the small one ends: t1 = LAT + 2*s1/B; then the big
     * one has s2 - s1 left at full rate: t2 = t1 + (s2 - s1)/B. */
    int64_t t1 = LAT + xfer_ns(2 * s1, B);
    int64_t t2 = t1 + xfer_ns(s2 - s1, B);
    ck_assert_int_eq(done_at(&lg, 1), t1);
    ck_assert_int_eq(done_at(&lg, 2), t2);
    ck_assert_int_eq(t2, LAT + xfer_ns(s1 + s2, B));
    net_free(n);
}
END_TEST

START_TEST(staggered_start) {
    /* A starts alone; B joins (after its longer latency) and they share. */
    net *n = net_new(1);
    net_link_set(n, 0, B);
    flow_log lg = {0};
    double S = 4e6;
    int64_t latb = LAT + 1000000; /* B activates when A has moved 1e6 */
    net_flow_add(n, 0, LAT, 0, -1, S, INFINITY, record, &lg, 1);
    net_flow_add(n, 0, latb, 0, -1, S, INFINITY, record, &lg, 2);
    run(n);
    /* A: 1e6 alone, then 3e6 at B/2 -> ends at latb + 6e6 ns; B then has
     * 1e6 left at full rate. */
    int64_t ta = latb + xfer_ns(2 * 3e6, B);
    int64_t tb = ta + xfer_ns(S - 3e6, B);
    ck_assert_int_eq(done_at(&lg, 1), ta);
    ck_assert_int_eq(done_at(&lg, 2), tb);
    net_free(n);
}
END_TEST

START_TEST(two_links_slowest_bounds) {
    net *n = net_new(2);
    net_link_set(n, 0, B);
    net_link_set(n, 1, B / 4);
    flow_log lg = {0};
    double S = 2e6;
    net_flow_add(n, 0, LAT, 0, 1, S, INFINITY, record, &lg, 7);
    run(n);
    ck_assert_int_eq(lg.t[0], LAT + xfer_ns(S, B / 4));
    ck_assert_uint_eq(net_link_bytes(n, 0), (uint64_t)(S));
    ck_assert_uint_eq(net_link_bytes(n, 1), (uint64_t)(S));
    ck_assert_double_eq(net_link_peak(n, 0), B / 4);
    ck_assert_double_eq(net_link_peak(n, 1), B / 4);
    net_free(n);
}
END_TEST

START_TEST(maxmin_textbook) {
    /* Link 0: 1 GB/s, link 1: 2 GB/s.  A crosses both, B only link 0, C
     * only link 1.  Progressive filling: link 0 saturates first at 0.5
     * each (A, B); C then takes what A leaves on link 1: 1.5 GB/s.  An
     * equal split per link would give C only 1 GB/s. */
    net *n = net_new(2);
    net_link_set(n, 0, B);
    net_link_set(n, 1, 2 * B);
    flow_log lg = {0};
    double S = 3e6;
    net_flow_add(n, 0, 0, 0, 1, S, INFINITY, record, &lg, 'A');
    net_flow_add(n, 0, 0, 0, -1, S, INFINITY, record, &lg, 'B');
    net_flow_add(n, 0, 0, 1, -1, S, INFINITY, record, &lg, 'C');
    run(n);
    int64_t tc = xfer_ns(S, 1.5 * B);
    ck_assert_int_eq(done_at(&lg, 'C'), tc);
    ck_assert_int_eq(tc, 2000000);
    ck_assert_int_ne(tc, xfer_ns(S, B)); /* what an equal split would say */
    /* A and B stay bottlenecked on link 0 after C ends. */
    ck_assert_int_eq(done_at(&lg, 'A'), xfer_ns(S, B / 2));
    ck_assert_int_eq(done_at(&lg, 'B'), xfer_ns(S, B / 2));
    ck_assert_double_eq(net_link_peak(n, 0), B);
    ck_assert_double_eq_tol(net_link_peak(n, 1), 2 * B, 1e-9 * B);
    ck_assert_uint_eq(net_link_bytes(n, 1), (uint64_t)(2 * S));
    net_free(n);
}
END_TEST

START_TEST(per_flow_cap) {
    net *n = net_new(1);
    net_link_set(n, 0, B);
    flow_log lg = {0};
    double cap = B / 10;
    net_flow_add(n, 0, LAT, 0, -1, 2e6, cap, record, &lg, 1); /* capped */
    net_flow_add(n, 0, LAT, 0, -1, 9e6, INFINITY, record, &lg,
                 2); /* gets the rest */
    run(n);
    ck_assert_int_eq(done_at(&lg, 2), LAT + xfer_ns(9e6, B - cap));
    ck_assert_int_eq(done_at(&lg, 1), LAT + xfer_ns(2e6, cap));
    ck_assert_double_eq_tol(net_link_peak(n, 0), B, 1e-9 * B);

    /* A cap alone on an unbounded flow sets its pace. */
    net *m = net_new(0);
    flow_log lm = {0};
    net_flow_add(m, 0, LAT, -1, -1, 1e6, 1e8, record, &lm, 3);
    run(m);
    ck_assert_int_eq(lm.t[0], LAT + xfer_ns(1e6, 1e8));
    net_free(m);
    net_free(n);
}
END_TEST

START_TEST(infinite_links) {
    net *n = net_new(2);
    net_link_set(n, 0, INFINITY);
    net_link_set(n, 1, INFINITY);
    flow_log lg = {0};
    net_flow_add(n, 10, LAT, 0, 1, 5e9, INFINITY, record, &lg, 1);
    net_flow_add(n, 10, LAT, 0, -1, 1e6, 1e9, record, &lg,
                 2); /* capped: 1 ms */
    run(n);
    ck_assert_int_eq(done_at(&lg, 1), 10 + LAT);
    ck_assert_int_eq(done_at(&lg, 2), 10 + LAT + xfer_ns(1e6, 1e9));
    ck_assert_uint_eq(net_link_bytes(n, 0), (uint64_t)(5e9 + 1e6));
    ck_assert_uint_eq(net_link_bytes(n, 1), (uint64_t)(5e9));
    /* the instantaneous flow has no finite rate; the capped one does */
    ck_assert_double_eq(net_link_peak(n, 0), 1e9);
    ck_assert_double_eq(net_link_peak(n, 1), 0);
    net_free(n);
}
END_TEST

START_TEST(infinite_link_bounded_by_other) {
    net *n = net_new(2);
    net_link_set(n, 0, INFINITY);
    net_link_set(n, 1, B);
    flow_log lg = {0};
    net_flow_add(n, 0, 0, 0, 1, 1e6, INFINITY, record, &lg, 1);
    run(n);
    ck_assert_int_eq(lg.t[0], xfer_ns(1e6, B));
    ck_assert_double_eq(net_link_peak(n, 0), B);
    net_free(n);
}
END_TEST

START_TEST(cancel_keeps_bytes) {
    net *n = net_new(1);
    net_link_set(n, 0, B);
    flow_log lg = {0};
    double S = 4e6;
    int a = net_flow_add(n, 0, LAT, 0, -1, S, INFINITY, record, &lg, 1);
    int b = net_flow_add(n, 0, LAT, 0, -1, S, INFINITY, record, &lg, 2);
    /* both at B/2; cancel A after 2 ms of transfer: it moved 1e6. */
    int64_t tc = LAT + 2000000;
    net_advance(n, tc);
    ck_assert_int_eq(lg.count, 0);
    net_flow_cancel(n, tc, a);
    ck_assert_uint_eq(net_link_bytes(n, 0), (uint64_t)(2e6));
    ck_assert_int_eq(net_active_flows(n), 1);
    /* B has 3e6 left, now alone at full rate. */
    ck_assert_int_eq(net_next_time(n), tc + xfer_ns(3e6, B));
    run(n);
    ck_assert_int_eq(lg.count, 1);
    ck_assert_int_eq(lg.flow[0], b);
    ck_assert_uint_eq(net_link_bytes(n, 0), (uint64_t)(1e6 + S));

    /* Cancelled during its latency: moves nothing, nothing pending. */
    int c = net_flow_add(n, lg.t[0], LAT, 0, -1, S, INFINITY, record, &lg, 3);
    net_flow_cancel(n, lg.t[0] + 1, c);
    ck_assert_int_eq(net_next_time(n), INT64_MAX);
    ck_assert_int_eq(net_active_flows(n), 0);
    ck_assert_uint_eq(net_link_bytes(n, 0), (uint64_t)(1e6 + S));
    /* cancelling again, or a completed flow, does nothing */
    net_flow_cancel(n, lg.t[0] + 2, c);
    net_flow_cancel(n, lg.t[0] + 2, b);
    ck_assert_int_eq(net_active_flows(n), 0);
    net_free(n);
}
END_TEST

/* A small deterministic generator for the randomised tests. */
static uint64_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

START_TEST(byte_counters_and_peaks) {
    enum { L = 6, F = 300 };
    double cap[L] = {1e9, 2.5e8, 7e8, INFINITY, 1e9, 3e7};
    net *n = net_new(L);
    for (int l = 0; l < L; l++) net_link_set(n, l, cap[l]);
    double expect[L] = {0};
    uint64_t seed = 12345;
    flow_log lg = {0};
    int64_t now = 0;
    for (int i = 0; i < F; i++) {
        int a = (int)(lcg(&seed) % L);
        int b = (int)(lcg(&seed) % (L + 1)) - 1;
        double bytes = (double)(lcg(&seed) % 1000000);
        double fcap = lcg(&seed) % 3 ? INFINITY : 1e6 + lcg(&seed) % 100000000;
        int64_t lat = (int64_t)(lcg(&seed) % 100000);
        ck_assert_int_ge(net_flow_add(n, now, lat, a, b, bytes, fcap, record,
                                      &lg, (uint64_t)i),
                         0);
        expect[a] += bytes;
        if (b >= 0 && b != a) expect[b] += bytes;
        /* advance a little between arrivals, so flows come and go */
        now += (int64_t)(lcg(&seed) % 200000);
        int64_t t;
        while ((t = net_next_time(n)) <= now) {
            net_advance(n, t);
            lg.count = 0;
        }
        net_advance(n, now);
        lg.count = 0;
    }
    run(n);
    ck_assert_int_eq(net_active_flows(n), 0);
    for (int l = 0; l < L; l++) {
        ck_assert_uint_eq(net_link_bytes(n, l), (uint64_t)expect[l]);
        ck_assert_double_le(net_link_peak(n, l), cap[l]);
        ck_assert_double_gt(net_link_peak(n, l), 0);
    }
    net_free(n);
}
END_TEST

START_TEST(many_flows_stay_consistent) {
    /* Hundreds of concurrent flows over 32 links: the answer must be exact
     * and the run must not take long (share() is not quadratic). */
    enum { W = 16, F = 240 };
    net *n = net_new(2 * W);
    for (int l = 0; l < 2 * W; l++) net_link_set(n, l, B);
    flow_log lg = {0};
    double S = 1.5e6;
    for (int i = 0; i < W; i++)
        for (int j = 0; j < W; j++)
            if (i != j)
                net_flow_add(n, 0, LAT, 2 * i, 2 * j + 1, S, INFINITY, record,
                             &lg, 0);
    ck_assert_int_eq(net_active_flows(n), F);
    run(n);
    ck_assert_int_eq(lg.count, F);
    /* every up/down link carries W-1 equal flows: B/(W-1) each */
    for (int i = 0; i < F; i++)
        ck_assert_int_eq(lg.t[i], LAT + xfer_ns((W - 1) * S, B));
    for (int l = 0; l < 2 * W; l++)
        ck_assert_uint_eq(net_link_bytes(n, l), (uint64_t)((W - 1) * S));
    net_free(n);
}
END_TEST

/* Adds a flow from inside the callback of the first completion. */
static void chain(void *ctx, int64_t now, int flow, uint64_t tag) {
    flow_log *lg = ctx;
    record(ctx, now, flow, tag);
    if (tag == 1) {
        lg->added =
            net_flow_add(lg->n, now, 0, 0, -1, 2e6, INFINITY, chain, ctx, 2);
        lg->seen_next = net_next_time(lg->n);
    }
}

START_TEST(add_from_callback) {
    net *n = net_new(1);
    net_link_set(n, 0, B);
    flow_log lg = {.n = n};
    int a = net_flow_add(n, 0, LAT, 0, -1, 1e6, INFINITY, chain, &lg, 1);
    run(n);
    ck_assert_int_eq(lg.count, 2);
    int64_t t1 = LAT + xfer_ns(1e6, B);
    ck_assert_int_eq(lg.t[0], t1);
    /* added with latency 0: due at once, and the net says so */
    ck_assert_int_eq(lg.seen_next, t1);
    ck_assert_int_ne(lg.added, a); /* a's id is not reused while reported */
    ck_assert_int_eq(lg.flow[1], lg.added);
    ck_assert_int_eq(lg.t[1], t1 + xfer_ns(2e6, B));
    /* after the callbacks, ids are reused */
    int c = net_flow_add(n, lg.t[1], 0, 0, -1, 1, INFINITY, chain, &lg, 3);
    ck_assert(c == a || c == lg.added);
    net_free(n);
}
END_TEST

/* Adds a zero-latency, zero-byte flow from a callback: it completes at
 * the same instant, reported after the batch that added it. */
static void chain_zero(void *ctx, int64_t now, int flow, uint64_t tag) {
    flow_log *lg = ctx;
    record(ctx, now, flow, tag);
    if (tag == 1)
        net_flow_add(lg->n, now, 0, -1, -1, 0, INFINITY, chain_zero, ctx, 9);
}

START_TEST(zero_byte_flows) {
    net *n = net_new(1);
    net_link_set(n, 0, B);
    flow_log lg = {.n = n};
    net_flow_add(n, 50, 0, -1, -1, 0, INFINITY, chain_zero, &lg, 1);
    /* never completes inside add */
    ck_assert_int_eq(net_next_time(n), 50);
    ck_assert_int_eq(net_active_flows(n), 1);
    run(n);
    ck_assert_int_eq(lg.count, 2);
    ck_assert_int_eq(lg.t[0], 50);
    ck_assert_int_eq(lg.t[1], 50);
    ck_assert_uint_eq(lg.tag[1], 9);
    /* a zero-byte flow over a link completes after its latency */
    net_flow_add(n, 60, LAT, 0, -1, 0, INFINITY, record, &lg, 3);
    run(n);
    ck_assert_int_eq(lg.t[2], 60 + LAT);
    ck_assert_uint_eq(net_link_bytes(n, 0), (uint64_t)(0));
    net_free(n);
}
END_TEST

START_TEST(advance_jumps_in_order) {
    /* One net_advance over several instants reports each at its own time,
     * in (time, id) order. */
    net *n = net_new(3);
    for (int l = 0; l < 3; l++) net_link_set(n, l, B);
    flow_log lg = {0};
    net_flow_add(n, 0, 0, 0, -1, 3e6, INFINITY, record, &lg, 1); /* ends 3 ms */
    net_flow_add(n, 0, 0, 1, -1, 1e6, INFINITY, record, &lg, 2); /* ends 1 ms */
    net_flow_add(n, 0, 0, 2, -1, 1e6, INFINITY, record, &lg, 3); /* ends 1 ms */
    net_advance(n, 10000000);
    ck_assert_int_eq(lg.count, 3);
    ck_assert_uint_eq(lg.tag[0], 2);
    ck_assert_uint_eq(lg.tag[1], 3);
    ck_assert_uint_eq(lg.tag[2], 1);
    ck_assert_int_eq(lg.t[0], 1000000);
    ck_assert_int_eq(lg.t[1], 1000000);
    ck_assert_int_eq(lg.t[2], 3000000);
    ck_assert_int_eq(net_next_time(n), INT64_MAX);
    net_free(n);
}
END_TEST

START_TEST(fractional_rates_complete_on_time) {
    /* Three flows sharing 1 GB/s: rate B/3 is not exact in binary.  Each
     * completes within a ns of the closed form and none lingers. */
    net *n = net_new(1);
    net_link_set(n, 0, B);
    flow_log lg = {0};
    double s[3] = {1e6, 2e6, 3.5e6};
    for (int i = 0; i < 3; i++)
        net_flow_add(n, 0, 0, 0, -1, s[i], INFINITY, record, &lg, (uint64_t)i);
    run(n);
    /* t0 = 3*s0/B; t1 = t0 + 2*(s1 - s0)/B; t2 = t1 + (s2 - s1)/B */
    double t0 = 3 * s[0] / B * 1e9;
    double t1 = t0 + 2 * (s[1] - s[0]) / B * 1e9;
    double t2 = t1 + (s[2] - s[1]) / B * 1e9;
    ck_assert_int_eq(lg.count, 3);
    ck_assert(llabs(done_at(&lg, 0) - (int64_t)ceil(t0)) <= 1);
    ck_assert(llabs(done_at(&lg, 1) - (int64_t)ceil(t1)) <= 1);
    ck_assert(llabs(done_at(&lg, 2) - (int64_t)ceil(t2)) <= 2);
    ck_assert_uint_eq(net_link_bytes(n, 0), (uint64_t)(6.5e6));
    ck_assert_double_le(net_link_peak(n, 0), B);
    net_free(n);
}
END_TEST

START_TEST(invalid_arguments) {
    net *n = net_new(2);
    ck_assert_int_eq(net_flow_add(n, 0, 0, 2, -1, 1, INFINITY, NULL, NULL, 0),
                     MSG_EINPUT);
    ck_assert_int_eq(net_flow_add(n, 0, 0, -2, -1, 1, INFINITY, NULL, NULL, 0),
                     MSG_EINPUT);
    ck_assert_int_eq(net_flow_add(n, 0, -1, 0, -1, 1, INFINITY, NULL, NULL, 0),
                     MSG_EINPUT);
    ck_assert_int_eq(net_flow_add(n, 0, 0, 0, -1, 1, 0, NULL, NULL, 0),
                     MSG_EINPUT);
    ck_assert_int_eq(net_flow_add(n, 0, 0, 0, -1, 1, NAN, NULL, NULL, 0),
                     MSG_EINPUT);
    ck_assert_int_eq(net_active_flows(n), 0);
    net_link_set(n, 5, B);  /* ignored */
    net_link_set(n, 0, -1); /* ignored */
    ck_assert_uint_eq(net_link_bytes(n, 7), (uint64_t)(0));
    /* a link never set has capacity 0: the flow never completes */
    net_flow_add(n, 0, 0, 1, -1, 1, INFINITY, NULL, NULL, 0);
    net_advance(n, 0);
    ck_assert_int_eq(net_next_time(n), INT64_MAX);
    ck_assert_int_eq(net_active_flows(n), 1);
    /* ...until it is given one */
    net_link_set(n, 1, 1e9);
    ck_assert_int_eq(net_next_time(n), 1);
    net_free(n);
}
END_TEST

START_TEST(activation_at_completion_instant) {
    /* B activates exactly when A completes: A is not delayed by B's
     * arrival, B then runs alone. */
    net *n = net_new(1);
    net_link_set(n, 0, B);
    flow_log lg = {0};
    net_flow_add(n, 0, 0, 0, -1, 1e6, INFINITY, record, &lg, 1);
    net_flow_add(n, 0, xfer_ns(1e6, B), 0, -1, 1e6, INFINITY, record, &lg, 2);
    run(n);
    ck_assert_int_eq(done_at(&lg, 1), xfer_ns(1e6, B));
    ck_assert_int_eq(done_at(&lg, 2), 2 * xfer_ns(1e6, B));
    ck_assert_double_eq(net_link_peak(n, 0), B);
    net_free(n);
}
END_TEST

START_TEST(link_set_mid_run) {
    /* Halving the link after 1 ms: the 1e6 bytes left take 2 ms more. */
    net *n = net_new(1);
    net_link_set(n, 0, B);
    flow_log lg = {0};
    net_flow_add(n, 0, 0, 0, -1, 2e6, INFINITY, record, &lg, 1);
    net_advance(n, 1000000);
    net_link_set(n, 0, B / 2);
    ck_assert_int_eq(net_next_time(n), 1000000 + xfer_ns(1e6, B / 2));
    run(n);
    ck_assert_int_eq(lg.t[0], 3000000);
    ck_assert_double_eq(net_link_peak(n, 0), B);
    net_free(n);
}
END_TEST

/* A flow alone on its bounded links runs at the least of its cap and their
 * capacities, whatever shares its unbounded links, and follows their
 * changes; a second flow on one of them shares it fairly. */
START_TEST(lone_flow_rates) {
    net *n = net_new(4);
    net_link_set(n, 0, B);
    net_link_set(n, 1, 4e8);
    net_link_set(n, 2, INFINITY); /* link 3 stays at capacity 0 */
    flow_log lg = {0};
    int a = net_flow_add(n, 0, 0, 0, 1, 1e9, INFINITY, record, &lg, 1);
    int b = net_flow_add(n, 0, 0, 2, -1, 1e9, 3e8, record, &lg, 2);
    int c = net_flow_add(n, 0, 0, 2, 3, 1e9, INFINITY, record, &lg, 3);
    net_advance(n, 0);
    ck_assert_double_eq(net_flow_rate(n, a), 4e8);
    ck_assert_double_eq(net_flow_rate(n, b), 3e8);
    ck_assert_double_eq(net_flow_rate(n, c), 0);
    net_link_set(n, 1, INFINITY);
    ck_assert_double_eq(net_flow_rate(n, a), B);
    net_link_set(n, 3, 2e8);
    ck_assert_double_eq(net_flow_rate(n, c), 2e8);
    int d = net_flow_add(n, 0, 0, 0, -1, 1e9, INFINITY, record, &lg, 4);
    net_advance(n, 0);
    ck_assert_double_eq(net_flow_rate(n, a), B / 2);
    ck_assert_double_eq(net_flow_rate(n, d), B / 2);
    net_flow_cancel(n, 0, d);
    ck_assert_double_eq(net_flow_rate(n, a), B);
    /* nothing bounds c any more: it completes at once */
    net_link_set(n, 3, INFINITY);
    ck_assert(isinf(net_flow_rate(n, c)));
    net_advance(n, 0);
    ck_assert_int_eq(lg.count, 1);
    ck_assert_uint_eq(lg.tag[0], 3);
    ck_assert_double_eq(net_link_peak(n, 0), B);
    ck_assert_double_eq(net_link_peak(n, 2), 5e8);
    net_free(n);
}
END_TEST

/* Churn: callbacks add and cancel flows at random; the test keeps its own
 * view of which ids are live and checks the net's promises against it. */
typedef struct {
    net *n;
    uint64_t seed;
    int live[4096]; /* live[id]: 1 while the test believes it live */
    int64_t added_at[4096];
    int64_t last_t;
    int last_id;
    int added, completed, cancelled;
    double bytes_added, bytes_done;
} churn;

static uint64_t lcg(uint64_t *s);
static void churn_done(void *ctx, int64_t now, int flow, uint64_t tag);

static void churn_add(churn *ch, int64_t now) {
    int a = (int)(lcg(&ch->seed) % 8), b = (int)(lcg(&ch->seed) % 9) - 1;
    double bytes = (double)(lcg(&ch->seed) % 3000000);
    int64_t lat = lcg(&ch->seed) % 4 ? (int64_t)(lcg(&ch->seed) % 50000) : 0;
    double cap =
        lcg(&ch->seed) % 4 ? INFINITY : 1e7 * (1 + lcg(&ch->seed) % 50);
    int id = net_flow_add(ch->n, now, lat, a, b, bytes, cap, churn_done, ch,
                          (uint64_t)bytes);
    ck_assert_int_ge(id, 0);
    ck_assert_int_lt(id, 4096);
    ck_assert_int_eq(ch->live[id], 0); /* never reused while live */
    ch->live[id] = 1;
    ch->added_at[id] = now;
    ch->added++;
    ch->bytes_added += bytes;
}

static void churn_done(void *ctx, int64_t now, int flow, uint64_t tag) {
    churn *ch = ctx;
    ck_assert_int_eq(ch->live[flow], 1);
    /* in (time, id) order; a flow added at this very instant by a callback
     * can only be reported after the completions already reported */
    ck_assert(now > ch->last_t || (now == ch->last_t && flow > ch->last_id) ||
              (now == ch->last_t && ch->added_at[flow] == now));
    ch->last_t = now;
    ch->last_id = flow;
    ch->live[flow] = 0;
    ch->completed++;
    ch->bytes_done += (double)tag;
    if (ch->added < 3000) {
        int k = 1 + (int)(lcg(&ch->seed) % 2);
        for (int i = 0; i < k; i++) churn_add(ch, now);
    }
    if (lcg(&ch->seed) % 5 == 0) { /* cancel some live flow */
        for (int id = 0; id < 4096; id++) {
            if (ch->live[id] && id != flow && lcg(&ch->seed) % 3 == 0) {
                net_flow_cancel(ch->n, now, id);
                ch->live[id] = 0;
                ch->cancelled++;
                break;
            }
        }
    }
    ck_assert_int_ge(net_next_time(ch->n), now);
}

START_TEST(random_churn) {
    static churn ch; /* large: keep it off the stack */
    ch = (churn){.seed = 99, .last_t = -1};
    net *n = net_new(8);
    ch.n = n;
    double caps[8] = {1e9, 5e8, 2e9, INFINITY, 1e8, 1e9, 7.5e8, 3e9};
    for (int l = 0; l < 8; l++) net_link_set(n, l, caps[l]);
    for (int i = 0; i < 50; i++) churn_add(&ch, 0);
    int64_t t;
    while ((t = net_next_time(n)) != INT64_MAX) {
        ck_assert_int_ge(t, ch.last_t);
        net_advance(n, t);
    }
    ck_assert_int_eq(net_active_flows(n), 0);
    ck_assert_int_eq(ch.added, ch.completed + ch.cancelled);
    ck_assert_int_gt(ch.cancelled, 0);
    double total = 0;
    for (int l = 0; l < 8; l++) {
        ck_assert_double_le(net_link_peak(n, l), caps[l]);
        total += net_link_bytes(n, l);
    }
    /* every completed flow crossed 1 or 2 links; cancelled ones part */
    ck_assert_double_ge(total, ch.bytes_done * (1 - 1e-12));
    ck_assert_double_le(total, 2 * ch.bytes_added * (1 + 1e-12));
    net_free(n);
}
END_TEST

/* defect 5: a rate so low that bytes/rate is not finite (bandwidth or TCP
 * window 1e-300) made the completion instant a NaN cast to int64: the
 * flow "completed" at once (or at a negative instant).  It must be never
 * (INT64_MAX), and so must a cap that small. */
START_TEST(defect5_subnormal_rate_never_completes) {
    net *n = net_new(2);
    net_link_set(n, 0, 1e-300 * 1e9 / 8);
    net_link_set(n, 1, 1e9);
    flow_log lg = {0};
    ck_assert_int_ge(net_flow_add(n, 0, 10, 0, -1, 1000, INFINITY, record, &lg,
                                  1),
                     0);
    ck_assert_int_ge(net_flow_add(n, 0, 10, 1, -1, 1000, 1e-292, record, &lg,
                                  2),
                     0);
    net_advance(n, 10);
    ck_assert_int_eq(lg.count, 0);
    ck_assert_int_eq(net_next_time(n), INT64_MAX);
    ck_assert_int_eq(net_active_flows(n), 2);
    ck_assert_uint_eq(net_link_bytes(n, 0), 0);
    net_free(n);
}
END_TEST

/* Bytes are whole: a cancelled flow counts the whole bytes it moved
 * (3.5 ms at 1000 bytes/s: 3 bytes), a completed one exactly its size,
 * whatever the fractions moved in between. */
START_TEST(whole_bytes_on_cancel_and_completion) {
    net *n = net_new(1);
    net_link_set(n, 0, 1000);
    int a = net_flow_add(n, 0, 0, 0, -1, 10, INFINITY, NULL, NULL, 1);
    net_advance(n, 0);
    net_advance(n, 3500000); /* 3.5 bytes moved */
    ck_assert_uint_eq(net_link_bytes(n, 0), 3);
    net_flow_cancel(n, 3500000, a);
    ck_assert_uint_eq(net_link_bytes(n, 0), 3);
    net_flow_add(n, 3500000, 0, 0, -1, 7, INFINITY, NULL, NULL, 2);
    for (int64_t t = 3500000; t < 20000000; t += 333333) net_advance(n, t);
    run(n);
    ck_assert_uint_eq(net_link_bytes(n, 0), 10);
    net_free(n);
}
END_TEST

/* ---- incremental filling against a from-scratch reference --------------- */

enum { RL = 8, RF = 64 };

/* A world the reference keeps next to the net: links and live flows. */
typedef struct {
    net *n;
    int nl;
    double lcap[RL];
    int live[RF]; /* flow ids are < RF here */
    int link[RF][2];
    double fcap[RF], rem[RF], rate[RF];
    uint64_t size[RF];
    int64_t now, last_done;
    int last_flow, done;
    uint64_t seed;
} ref_world;

static int ref_bounded(const ref_world *w, int l) {
    return l >= 0 && isfinite(w->lcap[l]);
}

/* Lowers link l's share after a flow froze at lam, as max-min filling
 * does: what is left over the flows left, never below lam. */
static void ref_take(const ref_world *w, int l, double lam, double *rem,
                     int *cnt, double *fair) {
    if (!ref_bounded(w, l)) return;
    rem[l] -= lam;
    cnt[l]--;
    double f = cnt[l] > 0 ? rem[l] / cnt[l] : INFINITY;
    fair[l] = f > lam ? f : lam;
}

/* Max-min rates of every live flow from scratch, by rising levels (a cap
 * before a link on a tie, flows and links by index): w->rate. */
static void ref_fill(ref_world *w) {
    double rem[RL], fair[RL];
    int cnt[RL] = {0}, frozen[RF] = {0};
    for (int id = 0; id < RF; id++)
        for (int k = 0; k < 2 && w->live[id]; k++)
            cnt[w->link[id][k] < 0 ? 0 : w->link[id][k]] +=
                ref_bounded(w, w->link[id][k]);
    for (int l = 0; l < w->nl; l++) {
        rem[l] = w->lcap[l];
        fair[l] = cnt[l] > 0 ? rem[l] / cnt[l] : INFINITY;
    }
    for (;;) {
        int fc = -1, lmin = -1;
        for (int id = 0; id < RF; id++)
            if (w->live[id] && !frozen[id] && isfinite(w->fcap[id]) &&
                (fc < 0 || w->fcap[id] < w->fcap[fc]))
                fc = id;
        for (int l = 0; l < w->nl; l++)
            if (isfinite(fair[l]) && (lmin < 0 || fair[l] < fair[lmin]))
                lmin = l;
        double lc = fc >= 0 ? w->fcap[fc] : INFINITY;
        double ll = lmin >= 0 ? fair[lmin] : INFINITY;
        if (isinf(lc) && isinf(ll)) break;
        for (int id = 0; id < RF; id++) {
            int on = lc <= ll
                         ? id == fc
                         : w->link[id][0] == lmin || w->link[id][1] == lmin;
            if (!w->live[id] || frozen[id] || !on) continue;
            double lam = lc <= ll ? lc : ll;
            frozen[id] = 1;
            w->rate[id] = lam;
            for (int k = 0; k < 2; k++)
                ref_take(w, w->link[id][k], lam, rem, cnt, fair);
        }
    }
    for (int id = 0; id < RF; id++)
        if (w->live[id] && !frozen[id]) w->rate[id] = INFINITY;
}

/* Moves the reference's bytes to t at the rates it computed. */
static void ref_step(ref_world *w, int64_t t) {
    for (int id = 0; id < RF; id++) {
        if (!w->live[id] || t <= w->now) continue;
        double mv = isinf(w->rate[id])
                        ? w->rem[id]
                        : w->rate[id] * (double)(t - w->now) / 1e9;
        w->rem[id] -= mv < w->rem[id] ? mv : w->rem[id];
    }
    if (t > w->now) w->now = t;
}

/* The next completion instant from the reference: remaining over rate in
 * ns, rounded up past a slack of 1e-6 + 1e-13 x ns. */
static int64_t ref_next(const ref_world *w) {
    int64_t next = INT64_MAX;
    for (int id = 0; id < RF; id++) {
        if (!w->live[id] || w->rate[id] <= 0) continue;
        double x = w->rem[id] * 1e9 / w->rate[id];
        int64_t t = w->now;
        if (w->rem[id] > 1e-9 * (double)w->size[id] + 1e-6 &&
            isfinite(w->rate[id]))
            t += (int64_t)fmax(0, ceil(x - (1e-6 + 1e-13 * x)));
        next = t < next ? t : next;
    }
    return next;
}

/* Every live flow's rate, bit for bit, and the next instant. */
static void ref_check(ref_world *w) {
    ref_fill(w);
    for (int id = 0; id < RF; id++)
        if (w->live[id])
            ck_assert_msg(net_flow_rate(w->n, id) == w->rate[id],
                          "flow %d: rate %.17g, reference %.17g", id,
                          net_flow_rate(w->n, id), w->rate[id]);
    ck_assert_int_eq(net_next_time(w->n), ref_next(w));
}

static void ref_done(void *ctx, int64_t now, int flow, uint64_t tag) {
    ref_world *w = ctx;
    (void)tag;
    ck_assert_int_eq(w->live[flow], 1);
    /* within one net_advance(): (time, id) order */
    ck_assert(now > w->last_done ||
              (now == w->last_done && flow > w->last_flow));
    w->last_done = now;
    w->last_flow = flow;
    w->live[flow] = 0;
    w->done++;
}

/* Adds a flow at w->now over random links with a random cap; latency 0. */
static void ref_add(ref_world *w) {
    int a = (int)(lcg(&w->seed) % (unsigned)(w->nl + 1)) - 1;
    int b = (int)(lcg(&w->seed) % (unsigned)(w->nl + 1)) - 1;
    double cap = lcg(&w->seed) % 4
                     ? INFINITY
                     : 1e8 * (1 + (double)(lcg(&w->seed) % 1000) / 77);
    uint64_t size = 1 + lcg(&w->seed) % 50000000;
    int id = net_flow_add(w->n, w->now, 0, a, b, size, cap, ref_done, w, 0);
    ck_assert_int_ge(id, 0);
    ck_assert_int_lt(id, RF);
    w->live[id] = 1;
    w->link[id][0] = a;
    w->link[id][1] = b == a ? -1 : b;
    w->fcap[id] = cap;
    w->rem[id] = (double)size;
    w->size[id] = size;
}

/* Random adds, cancels and completions on random topologies (capacities
 * random, so no two levels tie): after every change each flow's rate is
 * the from-scratch max-min rate bit for bit, the next instant the one its
 * remaining bytes give, completions come in (time, id) order. */
/* w's net of w->nl links at random capacities (one in seven unbounded). */
static void ref_links(ref_world *w) {
    w->n = net_new(w->nl);
    for (int l = 0; l < w->nl; l++) {
        w->lcap[l] = lcg(&w->seed) % 7
                         ? 1e8 * (1 + (double)(lcg(&w->seed) % 100003) / 997)
                         : INFINITY;
        net_link_set(w->n, l, w->lcap[l]);
    }
}

/* One random change of w: adds (activated at once), a cancel, or the net
 * (and the reference's bytes) to its next instant. */
static void ref_event(ref_world *w) {
    int r = (int)(lcg(&w->seed) % 10), nlive = net_active_flows(w->n);
    if ((r < 4 && nlive < RF - 8) || nlive == 0) {
        for (int k = 1 + (int)(lcg(&w->seed) % 3); k-- > 0;) ref_add(w);
        w->last_flow = -1;
        net_advance(w->n, w->now); /* activates them */
    } else if (r < 5) {
        for (int id = (int)(lcg(&w->seed) % RF), k = 0; k < RF;
             k++, id = (id + 1) % RF)
            if (w->live[id]) {
                net_flow_cancel(w->n, w->now, id);
                w->live[id] = 0;
                break;
            }
    } else if (net_next_time(w->n) != INT64_MAX) {
        int64_t t = net_next_time(w->n);
        ref_step(w, t);
        w->last_flow = -1;
        net_advance(w->n, t);
    }
}

START_TEST(incremental_matches_reference) {
    for (int round = 0; round < 40; round++) {
        static ref_world w;
        w = (ref_world){.seed = 1234 + (uint64_t)round, .last_done = -1};
        w.nl = 2 + (int)(lcg(&w.seed) % (RL - 1));
        ref_links(&w);
        for (int ev = 0; ev < 300; ev++) {
            ref_event(&w);
            ref_check(&w);
        }
        ck_assert_int_gt(w.done, 0);
        net_free(w.n);
    }
}
END_TEST

/* The same on a ring of equal links (the ties the incremental filling
 * meets most): every step's flows share the rate of one link. */
START_TEST(incremental_ring_equal_links) {
    static ref_world w;
    w = (ref_world){.seed = 5, .last_done = -1, .nl = RL};
    w.n = net_new(RL);
    for (int l = 0; l < RL; l++) {
        w.lcap[l] = 1.25e9;
        net_link_set(w.n, l, w.lcap[l]);
    }
    for (int step = 0; step < 20; step++) {
        for (int k = 0; k < RL / 2; k++) {
            int id =
                net_flow_add(w.n, w.now, 0, 2 * k, 2 * ((k + 1) % (RL / 2)) + 1,
                             1000003 + (uint64_t)(k % 2), INFINITY, ref_done,
                             &w, 0);
            w.live[id] = 1;
            w.link[id][0] = 2 * k;
            w.link[id][1] = 2 * ((k + 1) % (RL / 2)) + 1;
            w.fcap[id] = INFINITY;
            w.rem[id] = (double)(1000003 + k % 2);
            w.size[id] = 1000003 + (uint64_t)(k % 2);
        }
        w.last_flow = -1;
        net_advance(w.n, w.now);
        ref_check(&w);
        while (net_next_time(w.n) != INT64_MAX) {
            int64_t t = net_next_time(w.n);
            ref_step(&w, t);
            w.last_flow = -1;
            net_advance(w.n, t);
            ref_check(&w);
        }
    }
    ck_assert_int_eq(w.done, 20 * RL / 2);
    net_free(w.n);
}
END_TEST

/* ---- signature and time shift ------------------------------------------ */

/* Drives a net through a fixed sequence starting at t0; records
 * completions (times relative to t0) into lg. */
static net *sig_net(int64_t t0, flow_log *lg) {
    net *n = net_new(4);
    double caps[4] = {1e9, 7e8, 1.3e9, INFINITY};
    for (int l = 0; l < 4; l++) net_link_set(n, l, caps[l]);
    net_flow_add(n, t0, 1000, 0, 1, 3000001, INFINITY, record, lg, 1);
    net_flow_add(n, t0, 0, 0, 2, 2000003, 4e8, record, lg, 2);
    net_flow_add(n, t0, 7, 1, 3, 5000000, INFINITY, record, lg, 3);
    int c = net_flow_add(n, t0, 0, 2, -1, 9000000, INFINITY, record, lg, 4);
    net_advance(n, t0 + 500000);
    net_flow_cancel(n, t0 + 500000, c);
    net_flow_add(n, t0 + 500000, 30, 2, 1, 4000000, INFINITY, record, lg, 5);
    net_advance(n, t0 + 1700001);
    return n;
}

static void sig_of(const net *n, int64_t now, uint8_t **buf, size_t *len,
                   size_t *cap) {
    sig_buf b = {*buf, 0, *cap, 0};
    net_signature(n, now, &b);
    ck_assert(!b.oom);
    *buf = b.p, *len = b.len, *cap = b.cap;
    ck_assert_uint_gt(*len, 0);
}

/* Two nets driven through the same sequence, one later in time, have equal
 * signatures; after net_shift() the earlier one continues exactly as the
 * later one (same rates, same completions, same bytes). */
START_TEST(signature_equal_under_shift) {
    const int64_t D = 123456789012;
    flow_log la = {0}, lb = {0};
    net *a = sig_net(0, &la), *b = sig_net(D, &lb);
    uint8_t *sa = NULL, *sb = NULL;
    size_t na, ca = 0, nb, cb = 0;
    sig_of(a, 1700001, &sa, &na, &ca);
    sig_of(b, D + 1700001, &sb, &nb, &cb);
    ck_assert_uint_eq(na, nb);
    ck_assert(memcmp(sa, sb, na) == 0);
    ck_assert_int_eq(la.count, lb.count);
    /* a differently timed net differs */
    sig_of(b, D + 1700000, &sb, &nb, &cb);
    ck_assert(na != nb || memcmp(sa, sb, na) != 0);

    net_shift(a, D);
    sig_of(a, D + 1700001, &sa, &na, &ca);
    sig_of(b, D + 1700001, &sb, &nb, &cb);
    ck_assert(na == nb && memcmp(sa, sb, na) == 0);
    int before = la.count;
    for (int k = 0; k < 5; k++)
        ck_assert(net_flow_rate(a, k) == net_flow_rate(b, k));
    run(a);
    run(b);
    ck_assert_int_eq(la.count, lb.count);
    ck_assert_int_gt(la.count, before);
    for (int i = before; i < la.count; i++) {
        ck_assert_int_eq(la.t[i], lb.t[i]);
        ck_assert_int_eq(la.flow[i], lb.flow[i]);
    }
    for (int l = 0; l < 4; l++) {
        ck_assert_uint_eq(net_link_bytes(a, l), net_link_bytes(b, l));
        ck_assert(net_link_peak(a, l) == net_link_peak(b, l));
    }
    net_link_bytes_add(a, 2, 77);
    ck_assert_uint_eq(net_link_bytes(a, 2), net_link_bytes(b, 2) + 77);
    free(sa);
    free(sb);
    net_free(a);
    net_free(b);
}
END_TEST

/* One ulp of one flow's remaining bytes changes the signature: a flow
 * stepped to t2 through t1 and one stepped there at once differ by
 * rounding only (t1 is searched for where that is one ulp). */
START_TEST(signature_sees_one_ulp) {
    const double rate = 7e8;
    const uint64_t S = 987654321;
    int64_t t1 = 1, t2 = 1000003;
    for (; t1 < t2; t1++) {
        double direct = (double)S - rate * (double)t2 / 1e9;
        double two = (double)S - rate * (double)t1 / 1e9;
        two -= rate * (double)(t2 - t1) / 1e9;
        if (two != direct && nextafter(two, direct) == direct &&
            ceil(two) == ceil(direct))
            break;
    }
    ck_assert_int_lt(t1, t2);
    net *a = net_new(1), *b = net_new(1);
    uint8_t *sa = NULL, *sb = NULL;
    size_t na, ca = 0, nb, cb = 0;
    for (int k = 0; k < 2; k++) {
        net *n = k ? b : a;
        net_link_set(n, 0, rate);
        net_flow_add(n, 0, 0, 0, -1, S, INFINITY, NULL, NULL, 9);
        net_advance(n, 0);
    }
    sig_of(a, 0, &sa, &na, &ca);
    sig_of(b, 0, &sb, &nb, &cb);
    ck_assert(na == nb && memcmp(sa, sb, na) == 0);
    net_advance(a, t1);
    net_advance(a, t2);
    net_advance(b, t2);
    ck_assert_uint_eq(net_link_bytes(a, 0), net_link_bytes(b, 0));
    sig_of(a, t2, &sa, &na, &ca);
    sig_of(b, t2, &sb, &nb, &cb);
    ck_assert(na != nb || memcmp(sa, sb, na) != 0);
    free(sa);
    free(sb);
    net_free(a);
    net_free(b);
}
END_TEST

/* ---- lazy stepping against stepping every flow ------------------------- */

enum { TL = 40, TF = 4096 };

/* Two nets driven alike: net 0 lazy (the default), net 1 stepping every
 * active flow at every instant.  Everything they show must be the same
 * bits: completions, next instants, rates, byte counts, peaks and
 * signatures. */
typedef struct {
    net *n[2];
    uint64_t sum[2]; /* hash of the completions each reported, in order */
    int count[2];
    int live[TF];
    int ids; /* flow ids seen are below this */
    int64_t now;
    int nl;
    uint64_t seed;
    uint8_t *sig[2];
    size_t cap[2];
    int tcp; /* some flows added get a TCP window */
} twin;

static void twin_done(twin *w, int k, int64_t now, int flow, uint64_t tag) {
    w->sum[k] =
        w->sum[k] * 1000003u + (uint64_t)now * 31u + (uint64_t)flow * 7u + tag;
    w->count[k]++;
    if (k == 0) w->live[flow] = 0;
}

/* The done callbacks of net 0's and net 1's flows. */
static void twin_done0(void *ctx, int64_t now, int flow, uint64_t tag) {
    twin_done(ctx, 0, now, flow, tag);
}

static void twin_done1(void *ctx, int64_t now, int flow, uint64_t tag) {
    twin_done(ctx, 1, now, flow, tag);
}

static const net_done_fn twin_dones[2] = {twin_done0, twin_done1};

static void twin_advance(twin *w, int64_t t) {
    for (int k = 0; k < 2; k++) net_advance(w->n[k], t);
    w->now = t;
}

/* A rate, size or latency drawn to hit what lazy stepping must get right:
 * exact instants (1e9 bytes/s: x ns per x bytes), instants a hair past a
 * whole ns, ties, nothing to move, plain random values. */
static double twin_cap(twin *w) {
    switch (lcg(&w->seed) % 6) {
    case 0: return 1e9;
    case 1: return 1e9 * (1 - 1e-12); /* a hair slow: just past whole ns */
    case 2: return 1.25e9;
    case 3: return INFINITY;
    default: return 1e8 * (1 + (double)(lcg(&w->seed) % 100003) / 997);
    }
}

static uint64_t twin_size(twin *w) {
    switch (lcg(&w->seed) % 6) {
    case 0: return 0;
    case 1: return 1 + lcg(&w->seed) % 3;
    case 2: return 10000000;
    case 3: return 1000 * (1 + lcg(&w->seed) % 20000);
    default: return 1 + lcg(&w->seed) % 50000000;
    }
}

static void twin_add(twin *w, int lone) {
    int a, b;
    if (lone) { /* a link of its own when one is free: no sharing */
        a = (int)(lcg(&w->seed) % (unsigned)w->nl);
        b = -1;
    } else {
        a = (int)(lcg(&w->seed) % (unsigned)(w->nl + 1)) - 1;
        b = (int)(lcg(&w->seed) % (unsigned)(w->nl + 1)) - 1;
    }
    double cap = lcg(&w->seed) % 4 ? INFINITY : twin_cap(w);
    if (!(cap > 0)) cap = INFINITY;
    int64_t lat = lcg(&w->seed) % 3 ? 0 : (int64_t)(lcg(&w->seed) % 100000);
    uint64_t size = twin_size(w), tag = lcg(&w->seed);
    int id = -1;
    for (int k = 0; k < 2; k++) {
        int got = net_flow_add(w->n[k], w->now, lat, a, b, size, cap,
                               twin_dones[k], w, tag);
        ck_assert_int_ge(got, 0);
        ck_assert(k == 0 || got == id);
        id = got;
    }
    ck_assert_int_lt(id, TF);
    if (w->tcp && lcg(&w->seed) % 3 == 0) { /* round trips of 0.1 to 60 ms */
        int64_t rtt = 100000 + (int64_t)(lcg(&w->seed) % 60000000);
        double win = 1448.0 * (double)(1 + lcg(&w->seed) % 20);
        double max = lcg(&w->seed) % 3
                         ? INFINITY
                         : win * (double)(1 + lcg(&w->seed) % 300);
        for (int k = 0; k < 2; k++)
            ck_assert_int_eq(net_flow_set_tcp(w->n[k], id, rtt, win, max), 0);
    }
    w->live[id] = 1;
    if (id >= w->ids) w->ids = id + 1;
}

/* Both nets' signatures at now are the same bytes. */
static void twin_sigs(twin *w) {
    size_t len[2];
    for (int k = 0; k < 2; k++) {
        sig_buf b = {w->sig[k], 0, w->cap[k], 0};
        net_signature(w->n[k], w->now, &b);
        ck_assert(!b.oom);
        w->sig[k] = b.p;
        w->cap[k] = b.cap;
        len[k] = b.len;
    }
    ck_assert(len[0] == len[1] && memcmp(w->sig[0], w->sig[1], len[0]) == 0);
}

static void twin_check(twin *w) {
    net *a = w->n[0], *b = w->n[1];
    ck_assert_int_eq(w->count[0], w->count[1]);
    ck_assert(w->sum[0] == w->sum[1]);
    ck_assert_int_eq(net_next_time(a), net_next_time(b));
    ck_assert_int_eq(net_active_flows(a), net_active_flows(b));
    for (int l = 0; l < w->nl; l++) {
        ck_assert_uint_eq(net_link_bytes(a, l), net_link_bytes(b, l));
        ck_assert(net_link_peak(a, l) == net_link_peak(b, l));
    }
    for (int id = 0; id < w->ids; id++)
        if (w->live[id]) {
            ck_assert(net_flow_rate(a, id) == net_flow_rate(b, id));
            ck_assert_uint_eq(net_flow_counted(a, id), net_flow_counted(b, id));
        }
    twin_sigs(w);
}

/* Random adds (lone and shared, exact and a hair past whole ns, many at
 * once so the heap of due instants turns on, a third of them TCP flows
 * in slow start in half the rounds), cancels, capacity changes, shifts, and advances to
 * the next instant, to one ns before it (where a flow may be done by
 * tolerance) or anywhere: the lazy net and the one that steps every flow
 * agree at every point. */
START_TEST(lazy_matches_stepping_every_flow) {
    for (int round = 0; round < 16; round++) {
        static twin w;
        free(w.sig[0]);
        free(w.sig[1]);
        w = (twin){.seed = 777 + (uint64_t)round, .tcp = round % 4 >= 2};
        w.nl = 2 + (int)(lcg(&w.seed) % (TL - 1));
        for (int k = 0; k < 2; k++) w.n[k] = net_new(w.nl);
        net_set_lazy(w.n[1], 0);
        for (int l = 0; l < w.nl; l++) {
            double c = twin_cap(&w);
            for (int k = 0; k < 2 && l != 1; k++) /* link 1: capacity 0 */
                net_link_set(w.n[k], l, c);
        }
        int lone = round % 3 == 0, burst = round % 4 == 1;
        for (int ev = 0; ev < 1200; ev++) {
            int r = (int)(lcg(&w.seed) % 100), nlive = net_active_flows(w.n[0]);
            int64_t next = net_next_time(w.n[0]);
            if ((r < 12 && nlive < TF / 2 - 64) || nlive == 0) {
                int many = burst && lcg(&w.seed) % 4 == 0
                               ? 60
                               : 1 + (int)(lcg(&w.seed) % 3);
                for (int i = 0; i < many; i++) twin_add(&w, lone);
            } else if (r < 16) {
                for (int id = (int)(lcg(&w.seed) % TF), k = 0; k < TF;
                     k++, id = (id + 1) % TF)
                    if (w.live[id]) {
                        net_flow_cancel(w.n[0], w.now, id);
                        net_flow_cancel(w.n[1], w.now, id);
                        w.live[id] = 0;
                        break;
                    }
            } else if (r < 18) {
                int l = (int)(lcg(&w.seed) % (unsigned)w.nl);
                double c = twin_cap(&w);
                net_link_set(w.n[0], l, c);
                net_link_set(w.n[1], l, c);
            } else if (r < 20) {
                int64_t dt = (int64_t)(lcg(&w.seed) % 1000000000);
                net_shift(w.n[0], dt);
                net_shift(w.n[1], dt);
                w.now += dt;
            } else if (r < 22) { /* later, without advancing the net first */
                w.now += 1 + (int64_t)(lcg(&w.seed) % 200000);
                twin_add(&w, lone);
            } else if (r < 50) {
                twin_advance(&w, w.now + 1 + (int64_t)(lcg(&w.seed) % 20000));
            } else if (r < 60 && next != INT64_MAX && next - 1 > w.now) {
                twin_advance(&w, next - 1);
            } else if (next != INT64_MAX) {
                twin_advance(&w, next > w.now ? next : w.now);
            }
            if (ev % 8 == 0) {
                twin_check(&w);
            } else { /* the cheap part at every point */
                ck_assert(w.sum[0] == w.sum[1]);
                ck_assert_int_eq(net_next_time(w.n[0]), net_next_time(w.n[1]));
            }
        }
        twin_check(&w);
        ck_assert_int_gt(w.count[0], 0);
        for (int k = 0; k < 2; k++) net_free(w.n[k]);
    }
}
END_TEST

/* One long flow (0.2 s, not a hair from a whole ns) through far more
 * instants than the net keeps (other flows come and go around it), a flow
 * that is exact to the ns (its proof runs out and is renewed), and the
 * same with stepping every flow. */
START_TEST(lazy_long_flow_many_instants) {
    static twin w;
    free(w.sig[0]);
    free(w.sig[1]);
    w = (twin){.seed = 4242, .nl = 3};
    for (int k = 0; k < 2; k++) {
        w.n[k] = net_new(3);
        net_link_set(w.n[k], 0, 7.3e8);
        net_link_set(w.n[k], 1, 1e9);
        net_link_set(w.n[k], 2, 3e9);
        ck_assert_int_eq(net_flow_add(w.n[k], 0, 0, 0, -1, 146000027, INFINITY,
                                      twin_dones[k], &w, 1),
                         0);
        ck_assert_int_eq(net_flow_add(w.n[k], 0, 0, 1, -1, 10000000, INFINITY,
                                      twin_dones[k], &w, 2),
                         1);
    }
    net_set_lazy(w.n[1], 0);
    w.live[0] = w.live[1] = 1;
    w.ids = TF;
    for (int i = 0; i < 150000; i++) {
        twin_advance(&w, w.now + 1 + (int64_t)(lcg(&w.seed) % 3000));
        if (i == 40000 || i == 40500) /* off a while: every flow stepped */
            net_set_lazy(w.n[0], i == 40500);
        if (i % 500 == 0) {
            uint64_t size = 1 + lcg(&w.seed) % 99999;
            for (int k = 0; k < 2; k++)
                w.live[net_flow_add(w.n[k], w.now, 0, 2, -1, size, INFINITY,
                                    twin_dones[k], &w, 3)] = 1;
        }
        if (i % 997 == 0) twin_check(&w);
    }
    twin_check(&w);
    ck_assert_int_gt(w.count[0], 100);
    ck_assert_uint_gt(net_link_bytes(w.n[0], 0), 0);
    for (int k = 0; k < 2; k++) net_free(w.n[k]);
}
END_TEST

/* The heap of due instants: many flows due at one instant (equal sizes on
 * equal links, ties everywhere) complete in (time, id) order, and as a
 * scan of every flow completes them. */
START_TEST(heap_ties_in_id_order) {
    flow_log lg[2] = {{0}, {0}};
    net *n[2];
    for (int k = 0; k < 2; k++) {
        n[k] = net_new(200);
        for (int l = 0; l < 200; l++) net_link_set(n[k], l, 1e9);
        /* 150 flows: 3 per link pair, sizes 1000, 2000, 1000 */
        for (int i = 0; i < 150; i++)
            net_flow_add(n[k], 0, i % 7 ? 0 : 10, i % 100, 100 + i % 50,
                         i % 3 == 1 ? 2000 : 1000, INFINITY, record, &lg[k],
                         (uint64_t)i);
        if (k) net_set_lazy(n[k], 0);
        run(n[k]);
    }
    ck_assert_int_eq(lg[0].count, 150);
    ck_assert_int_eq(lg[1].count, 150);
    for (int i = 1; i < 150; i++) {
        ck_assert(lg[0].t[i] > lg[0].t[i - 1] ||
                  (lg[0].t[i] == lg[0].t[i - 1] &&
                   lg[0].flow[i] > lg[0].flow[i - 1]));
        ck_assert_int_eq(lg[0].t[i], lg[1].t[i]);
        ck_assert_int_eq(lg[0].flow[i], lg[1].flow[i]);
    }
    for (int l = 0; l < 200; l++)
        ck_assert_uint_eq(net_link_bytes(n[0], l), net_link_bytes(n[1], l));
    net_free(n[0]);
    net_free(n[1]);
}
END_TEST

/* A count makes a flow stand for several in net_active_flows() and
 * nowhere else. */
START_TEST(flow_counts) {
    net *n = net_new(1);
    net_link_set(n, 0, 1e9);
    int a = net_flow_add(n, 0, 0, 0, -1, 1000, INFINITY, NULL, NULL, 1);
    int b = net_flow_add(n, 0, 0, -1, -1, 1000, 1e9, NULL, NULL, 2);
    net_flow_set_count(n, b, 5);
    net_flow_set_count(n, b, 0);  /* ignored */
    net_flow_set_count(n, 99, 3); /* not live: ignored */
    ck_assert_int_eq(net_active_flows(n), 6);
    run(n);
    ck_assert_int_eq(net_active_flows(n), 0);
    ck_assert_uint_eq(net_link_bytes(n, 0), 1000);
    ck_assert_uint_eq(net_flow_counted(n, a), 0);
    ck_assert(net_link_capacity(n, 0) == 1e9);
    ck_assert(net_link_capacity(n, 1) == 0);
    net_free(n);
}
END_TEST

/* After net_set_anonymous() two nets whose flows differ only in their ids
 * have equal signatures; without it, or once a link is shared, they
 * differ. */
START_TEST(anonymous_signatures) {
    uint8_t *s[2] = {NULL, NULL};
    size_t len[2], cap[2] = {0, 0};
    for (int anon = 0; anon < 2; anon++) {
        net *n[2];
        for (int k = 0; k < 2; k++) {
            n[k] = net_new(4);
            for (int l = 0; l < 4; l++) net_link_set(n[k], l, 1e9 + l);
            if (anon) net_set_anonymous(n[k]);
            /* the same two flows, added in the other order */
            for (int i = 0; i < 2; i++) {
                int j = k ? 1 - i : i;
                net_flow_add(n[k], 0, 0, 2 * j, 2 * j + 1, 5000 + (uint64_t)j,
                             INFINITY, NULL, NULL, (uint64_t)j);
            }
            net_advance(n[k], 100);
            sig_of(n[k], 100, &s[k], &len[k], &cap[k]);
        }
        int same = len[0] == len[1] && memcmp(s[0], s[1], len[0]) == 0;
        ck_assert_int_eq(same, anon);
        if (anon) { /* a shared link: ids count again */
            for (int k = 0; k < 2; k++) {
                net_flow_add(n[k], 100, 0, 0, -1, 77, INFINITY, NULL, NULL, 9);
                sig_of(n[k], 100, &s[k], &len[k], &cap[k]);
            }
            ck_assert(len[0] != len[1] || memcmp(s[0], s[1], len[0]) != 0);
        }
        net_free(n[0]);
        net_free(n[1]);
    }
    free(s[0]);
    free(s[1]);
}
END_TEST

/* ---- acknowledgements (net_set_ack) -------------------------------------- */

/* Links 2i (up) and 2i + 1 (down) of worker i, each the other's partner:
 * a flow from i to j loads up(j) and down(i) with its ACKs. */
static const int PARTNER[RL] = {1, 0, 3, 2, 5, 4, 7, 6};

/* A net of 2 * workers links at B with ACKs of coefficient a. */
static net *ack_net(int workers, double a) {
    net *n = net_new(2 * workers);
    for (int l = 0; l < 2 * workers; l++) net_link_set(n, l, B);
    ck_assert_int_eq(net_set_ack(n, a, PARTNER), 0);
    ck_assert(net_ack(n) == a);
    return n;
}

/* A flow from worker i to worker j (links up(i), down(j)). */
static int ack_flow(net *n, int i, int j, uint64_t bytes, double cap,
                    flow_log *lg, uint64_t tag) {
    int id =
        net_flow_add(n, 0, LAT, 2 * i, 2 * j + 1, bytes, cap, record, lg, tag);
    ck_assert_int_ge(id, 0);
    return id;
}

/* The closed forms of the weighted filling, a = 0.25 (exact in binary),
 * links of C = B:
 *  - one flow alone: C (its ACKs load a C < C on the reverse links);
 *  - 0 -> 1 and 1 -> 0: each link carries one flow and the other's ACKs,
 *    (1 + a) r = C: r = C / (1 + a), also for Linux's 22.8 bytes per KB;
 *  - a gather 1 -> 0, 2 -> 0: the hub's down link binds, C / 2 each (its
 *    up link carries 2 a C / 2 = a C); with the hub's up link at U = C /
 *    100 the ACKs bind first: 2 a r = U, r = U / (2 a);
 *  - 0 -> 1 against 1 -> 0 capped at b = C / 8: the cap binds first, then
 *    up(0) carries r + a b = C: r = C - a b.
 * Completions at LAT + S / r; bytes and peaks are payload only. */
START_TEST(ack_closed_forms) {
    const double a = 0.25, S = 4e6;
    flow_log lg = {0};
    net *n = ack_net(2, a);
    int f = ack_flow(n, 0, 1, (uint64_t)S, INFINITY, &lg, 1);
    net_advance(n, LAT);
    ck_assert(net_flow_rate(n, f) == B);
    run(n);
    ck_assert_int_eq(done_at(&lg, 1), LAT + xfer_ns(S, B));
    net_free(n);

    const double acks[2] = {a, 22.8 / 1000};
    for (int k = 0; k < 2; k++) {
        lg = (flow_log){0};
        n = ack_net(2, acks[k]);
        int f01 = ack_flow(n, 0, 1, (uint64_t)S, INFINITY, &lg, 1);
        int f10 = ack_flow(n, 1, 0, (uint64_t)S, INFINITY, &lg, 2);
        net_advance(n, LAT);
        ck_assert(net_flow_rate(n, f01) == B / (1 + acks[k]));
        ck_assert(net_flow_rate(n, f10) == B / (1 + acks[k]));
        run(n);
        if (k == 0) ck_assert_int_eq(done_at(&lg, 1), LAT + 5000000);
        ck_assert_int_eq(done_at(&lg, 2), done_at(&lg, 1));
        for (int l = 0; l < 4; l++) { /* payload only */
            ck_assert_uint_eq(net_link_bytes(n, l), (uint64_t)S);
            ck_assert(net_link_peak(n, l) == B / (1 + acks[k]));
        }
        net_free(n);
    }

    for (int slow = 0; slow < 2; slow++) {
        lg = (flow_log){0};
        n = ack_net(3, a);
        if (slow) net_link_set(n, 0, B / 100); /* the hub's up link */
        int g1 = ack_flow(n, 1, 0, (uint64_t)S, INFINITY, &lg, 1);
        int g2 = ack_flow(n, 2, 0, (uint64_t)S, INFINITY, &lg, 2);
        net_advance(n, LAT);
        double r = slow ? B / 100 / (2 * a) : B / 2;
        ck_assert(net_flow_rate(n, g1) == r);
        ck_assert(net_flow_rate(n, g2) == r);
        run(n);
        ck_assert_int_eq(done_at(&lg, 2), LAT + (slow ? 200000000 : 8000000));
        ck_assert_uint_eq(net_link_bytes(n, 0), 0); /* ACKs only */
        ck_assert(net_link_peak(n, 0) == 0);
        net_free(n);
    }

    lg = (flow_log){0};
    n = ack_net(2, a);
    const double b = B / 8, Sa = 9.6875e6;
    int fa = ack_flow(n, 0, 1, (uint64_t)Sa, INFINITY, &lg, 1);
    int fb = ack_flow(n, 1, 0, 100000000, b, &lg, 2);
    net_advance(n, LAT);
    ck_assert(net_flow_rate(n, fb) == b);
    ck_assert(net_flow_rate(n, fa) == B - a * b);
    run(n);
    ck_assert_int_eq(done_at(&lg, 1), LAT + 10000000);
    net_free(n);
}
END_TEST

/* net_set_ack: only while no flow is live, a coefficient >= 0 and
 * finite, partners in range; 0 turns it off (the plain filling); the
 * coefficient is in the signature. */
START_TEST(ack_arguments_and_signature) {
    net *n = net_new(4);
    int bad[4] = {1, 0, 3, 4};
    ck_assert_int_eq(net_set_ack(n, -1, PARTNER), MSG_EINPUT);
    ck_assert_int_eq(net_set_ack(n, NAN, PARTNER), MSG_EINPUT);
    ck_assert_int_eq(net_set_ack(n, INFINITY, PARTNER), MSG_EINPUT);
    ck_assert_int_eq(net_set_ack(n, 0.5, NULL), MSG_EINPUT);
    ck_assert_int_eq(net_set_ack(n, 0.5, bad), MSG_EINPUT);
    ck_assert(net_ack(n) == 0);
    ck_assert_int_eq(net_set_ack(n, 0, NULL), 0);
    for (int l = 0; l < 4; l++) net_link_set(n, l, B);
    int f = net_flow_add(n, 0, 0, 0, 3, 1000, INFINITY, NULL, NULL, 1);
    ck_assert_int_eq(net_set_ack(n, 0.5, PARTNER), MSG_EINPUT); /* live */
    net_flow_add(n, 0, 0, 2, 1, 1000, INFINITY, NULL, NULL, 2);
    net_advance(n, 0);
    ck_assert(net_flow_rate(n, f) == B); /* no ACKs */
    net_free(n);

    uint8_t *sg[3] = {NULL, NULL, NULL};
    size_t len[3], cap[3] = {0, 0, 0};
    const double coef[3] = {0.25, 0.25, 0.5};
    for (int k = 0; k < 3; k++) {
        n = ack_net(2, coef[k]);
        net_flow_add(n, 0, 0, 0, 3, 1000000, INFINITY, NULL, NULL, 1);
        net_flow_add(n, 0, 0, 2, 1, 1000000, INFINITY, NULL, NULL, 2);
        net_advance(n, 100);
        sig_of(n, 100, &sg[k], &len[k], &cap[k]);
        net_free(n);
    }
    ck_assert(len[0] == len[1] && memcmp(sg[0], sg[1], len[0]) == 0);
    ck_assert(len[0] != len[2] || memcmp(sg[0], sg[2], len[0]) != 0);
    for (int k = 0; k < 3; k++) free(sg[k]);
}
END_TEST

/* The coefficient of flow id on link l: 1 for each of its links that is
 * l, a for each partner of its links that is l. */
static double ref_coef(const ref_world *w, int id, int l, double a) {
    double c = 0;
    for (int k = 0; k < 2; k++) {
        int m = w->link[id][k];
        c += (m == l) + (m >= 0 && PARTNER[m] == l ? a : 0);
    }
    return c;
}

/* Weighted max-min rates from scratch: at every round each bounded link's
 * level is (capacity - what the frozen flows load) / the unfrozen flows'
 * coefficients; the least level (or cap, first on a tie) freezes the
 * flows that load that link (or that flow): rates into w->rate. */
static void ref_fill_acked(ref_world *w, double a) {
    int frozen[RF] = {0};
    for (;;) {
        int fc = -1, lmin = -1;
        double lc = INFINITY, ll = INFINITY;
        for (int id = 0; id < RF; id++)
            if (w->live[id] && !frozen[id] && w->fcap[id] < lc)
                lc = w->fcap[id], fc = id;
        for (int l = 0; l < w->nl; l++) {
            double used = 0, wt = 0;
            for (int id = 0; ref_bounded(w, l) && id < RF; id++) {
                double c = w->live[id] ? ref_coef(w, id, l, a) : 0;
                if (frozen[id]) used += c * w->rate[id];
                else wt += c;
            }
            if (wt > 0 && (w->lcap[l] - used) / wt < ll)
                ll = (w->lcap[l] - used) / wt, lmin = l;
        }
        if (fc < 0 && lmin < 0) break;
        for (int id = 0; id < RF; id++) {
            int on = lc <= ll ? id == fc : ref_coef(w, id, lmin, a) > 0;
            if (w->live[id] && !frozen[id] && on) {
                frozen[id] = 1;
                w->rate[id] = lc <= ll ? lc : ll;
            }
        }
    }
    for (int id = 0; id < RF; id++)
        if (w->live[id] && !frozen[id]) w->rate[id] = INFINITY;
}

/* Random adds, cancels and completions with ACKs (a = 0.3, links paired
 * as PARTNER): after every change each flow's rate is the weighted
 * max-min rate from scratch, up to rounding (the two sum in other
 * orders); and every link carries at most its capacity, ACKs counted. */
START_TEST(acks_match_reference) {
    const double a = 0.3;
    for (int round = 0; round < 30; round++) {
        static ref_world w;
        w = (ref_world){.seed = 777 + (uint64_t)round, .last_done = -1};
        w.nl = RL;
        ref_links(&w);
        ck_assert_int_eq(net_set_ack(w.n, a, PARTNER), 0);
        for (int ev = 0; ev < 200; ev++) {
            ref_event(&w);
            ref_fill_acked(&w, a);
            for (int id = 0; id < RF; id++) {
                double got = net_flow_rate(w.n, id), want = w.rate[id];
                ck_assert_msg(!w.live[id] || got == want ||
                                  fabs(got - want) <= 1e-9 * want,
                              "round %d flow %d: rate %.17g, reference %.17g",
                              round, id, got, want);
            }
            for (int l = 0; l < w.nl; l++) {
                double load = 0;
                for (int id = 0; id < RF; id++)
                    if (w.live[id] && ref_coef(&w, id, l, a) > 0)
                        load += ref_coef(&w, id, l, a) * w.rate[id];
                ck_assert(!ref_bounded(&w, l) ||
                          load <= w.lcap[l] * (1 + 1e-12));
            }
        }
        ck_assert_int_gt(w.done, 0);
        net_free(w.n);
    }
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("net");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, single_flow);
    tcase_add_test(tc, equal_flows_share);
    tcase_add_test(tc, unequal_sizes_maxmin);
    tcase_add_test(tc, staggered_start);
    tcase_add_test(tc, two_links_slowest_bounds);
    tcase_add_test(tc, maxmin_textbook);
    tcase_add_test(tc, per_flow_cap);
    tcase_add_test(tc, infinite_links);
    tcase_add_test(tc, infinite_link_bounded_by_other);
    tcase_add_test(tc, cancel_keeps_bytes);
    tcase_add_test(tc, byte_counters_and_peaks);
    tcase_add_test(tc, many_flows_stay_consistent);
    tcase_add_test(tc, add_from_callback);
    tcase_add_test(tc, zero_byte_flows);
    tcase_add_test(tc, advance_jumps_in_order);
    tcase_add_test(tc, fractional_rates_complete_on_time);
    tcase_add_test(tc, invalid_arguments);
    tcase_add_test(tc, activation_at_completion_instant);
    tcase_add_test(tc, link_set_mid_run);
    tcase_add_test(tc, lone_flow_rates);
    tcase_add_test(tc, random_churn);
    tcase_add_test(tc, defect5_subnormal_rate_never_completes);
    tcase_add_test(tc, whole_bytes_on_cancel_and_completion);
    tcase_add_test(tc, incremental_matches_reference);
    tcase_add_test(tc, incremental_ring_equal_links);
    tcase_add_test(tc, signature_equal_under_shift);
    tcase_add_test(tc, signature_sees_one_ulp);
    tcase_add_test(tc, lazy_matches_stepping_every_flow);
    tcase_add_test(tc, lazy_long_flow_many_instants);
    tcase_add_test(tc, heap_ties_in_id_order);
    tcase_add_test(tc, flow_counts);
    tcase_add_test(tc, anonymous_signatures);
    suite_add_tcase(s, tc);
    TCase *ta = tcase_create("acks"); /* the reference refills from scratch */
    tcase_set_timeout(ta, 60);
    tcase_add_test(ta, ack_closed_forms);
    tcase_add_test(ta, ack_arguments_and_signature);
    tcase_add_test(ta, acks_match_reference);
    suite_add_tcase(s, ta);
    return s;
}

CHECK_MAIN(make_suite)
