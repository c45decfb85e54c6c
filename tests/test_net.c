/*
 * test_net.c -- the flow-level network model against closed forms.
 *
 * Every test computes the expected instant or byte count by hand, next to
 * the simulated one.  Sizes and rates are chosen so the closed forms are
 * exact in double precision, hence most comparisons are exact.
 */
#include <math.h>
#include <stdint.h>

#include "check_main.h"
#include "../sim/net.h"
#include "../models/msg.h"

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
static void run(net *n, net_done_fn cb, void *ctx) {
    int64_t t;
    while ((t = net_next_time(n)) != INT64_MAX)
        net_advance(n, t, cb, ctx);
}

/* Completion instant of the flow tagged `tag`, or -1. */
static int64_t done_at(const flow_log *lg, uint64_t tag) {
    for (int i = 0; i < lg->count; i++)
        if (lg->tag[i] == tag)
            return lg->t[i];
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
    int id = net_flow_add(n, 100, LAT, 0, -1, S, INFINITY, 42);
    ck_assert_int_ge(id, 0);
    ck_assert_int_eq(net_next_time(n), 100 + LAT);
    ck_assert_int_eq(net_active_flows(n), 1);
    run(n, record, &lg);
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
            net_flow_add(n, 0, LAT, 0, -1, S, INFINITY, (uint64_t)i);
        run(n, record, &lg);
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
    net_flow_add(n, 0, LAT, 0, -1, s1, INFINITY, 1);
    net_flow_add(n, 0, LAT, 0, -1, s2, INFINITY, 2);
    run(n, record, &lg);
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
    net_flow_add(n, 0, LAT, 0, -1, S, INFINITY, 1);
    net_flow_add(n, 0, latb, 0, -1, S, INFINITY, 2);
    run(n, record, &lg);
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
    net_flow_add(n, 0, LAT, 0, 1, S, INFINITY, 7);
    run(n, record, &lg);
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
    net_flow_add(n, 0, 0, 0, 1, S, INFINITY, 'A');
    net_flow_add(n, 0, 0, 0, -1, S, INFINITY, 'B');
    net_flow_add(n, 0, 0, 1, -1, S, INFINITY, 'C');
    run(n, record, &lg);
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
    net_flow_add(n, 0, LAT, 0, -1, 2e6, cap, 1);      /* capped */
    net_flow_add(n, 0, LAT, 0, -1, 9e6, INFINITY, 2); /* gets the rest */
    run(n, record, &lg);
    ck_assert_int_eq(done_at(&lg, 2), LAT + xfer_ns(9e6, B - cap));
    ck_assert_int_eq(done_at(&lg, 1), LAT + xfer_ns(2e6, cap));
    ck_assert_double_eq_tol(net_link_peak(n, 0), B, 1e-9 * B);

    /* A cap alone on an unbounded flow sets its pace. */
    net *m = net_new(0);
    flow_log lm = {0};
    net_flow_add(m, 0, LAT, -1, -1, 1e6, 1e8, 3);
    run(m, record, &lm);
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
    net_flow_add(n, 10, LAT, 0, 1, 5e9, INFINITY, 1);
    net_flow_add(n, 10, LAT, 0, -1, 1e6, 1e9, 2); /* capped: 1 ms */
    run(n, record, &lg);
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
    net_flow_add(n, 0, 0, 0, 1, 1e6, INFINITY, 1);
    run(n, record, &lg);
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
    int a = net_flow_add(n, 0, LAT, 0, -1, S, INFINITY, 1);
    int b = net_flow_add(n, 0, LAT, 0, -1, S, INFINITY, 2);
    /* both at B/2; cancel A after 2 ms of transfer: it moved 1e6. */
    int64_t tc = LAT + 2000000;
    net_advance(n, tc, record, &lg);
    ck_assert_int_eq(lg.count, 0);
    net_flow_cancel(n, tc, a);
    ck_assert_uint_eq(net_link_bytes(n, 0), (uint64_t)(2e6));
    ck_assert_int_eq(net_active_flows(n), 1);
    /* B has 3e6 left, now alone at full rate. */
    ck_assert_int_eq(net_next_time(n), tc + xfer_ns(3e6, B));
    run(n, record, &lg);
    ck_assert_int_eq(lg.count, 1);
    ck_assert_int_eq(lg.flow[0], b);
    ck_assert_uint_eq(net_link_bytes(n, 0), (uint64_t)(1e6 + S));

    /* Cancelled during its latency: moves nothing, nothing pending. */
    int c = net_flow_add(n, lg.t[0], LAT, 0, -1, S, INFINITY, 3);
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
    for (int l = 0; l < L; l++)
        net_link_set(n, l, cap[l]);
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
        ck_assert_int_ge(net_flow_add(n, now, lat, a, b, bytes, fcap,
                                      (uint64_t)i), 0);
        expect[a] += bytes;
        if (b >= 0 && b != a)
            expect[b] += bytes;
        /* advance a little between arrivals, so flows come and go */
        now += (int64_t)(lcg(&seed) % 200000);
        int64_t t;
        while ((t = net_next_time(n)) <= now) {
            net_advance(n, t, record, &lg);
            lg.count = 0;
        }
        net_advance(n, now, record, &lg);
        lg.count = 0;
    }
    run(n, NULL, NULL);
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
    for (int l = 0; l < 2 * W; l++)
        net_link_set(n, l, B);
    flow_log lg = {0};
    double S = 1.5e6;
    for (int i = 0; i < W; i++)
        for (int j = 0; j < W; j++)
            if (i != j)
                net_flow_add(n, 0, LAT, 2 * i, 2 * j + 1, S, INFINITY, 0);
    ck_assert_int_eq(net_active_flows(n), F);
    run(n, record, &lg);
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
        lg->added = net_flow_add(lg->n, now, 0, 0, -1, 2e6, INFINITY, 2);
        lg->seen_next = net_next_time(lg->n);
    }
}

START_TEST(add_from_callback) {
    net *n = net_new(1);
    net_link_set(n, 0, B);
    flow_log lg = {.n = n};
    int a = net_flow_add(n, 0, LAT, 0, -1, 1e6, INFINITY, 1);
    run(n, chain, &lg);
    ck_assert_int_eq(lg.count, 2);
    int64_t t1 = LAT + xfer_ns(1e6, B);
    ck_assert_int_eq(lg.t[0], t1);
    /* added with latency 0: due at once, and the net says so */
    ck_assert_int_eq(lg.seen_next, t1);
    ck_assert_int_ne(lg.added, a); /* a's id is not reused while reported */
    ck_assert_int_eq(lg.flow[1], lg.added);
    ck_assert_int_eq(lg.t[1], t1 + xfer_ns(2e6, B));
    /* after the callbacks, ids are reused */
    int c = net_flow_add(n, lg.t[1], 0, 0, -1, 1, INFINITY, 3);
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
        net_flow_add(lg->n, now, 0, -1, -1, 0, INFINITY, 9);
}

START_TEST(zero_byte_flows) {
    net *n = net_new(1);
    net_link_set(n, 0, B);
    flow_log lg = {.n = n};
    net_flow_add(n, 50, 0, -1, -1, 0, INFINITY, 1);
    /* never completes inside add */
    ck_assert_int_eq(net_next_time(n), 50);
    ck_assert_int_eq(net_active_flows(n), 1);
    run(n, chain_zero, &lg);
    ck_assert_int_eq(lg.count, 2);
    ck_assert_int_eq(lg.t[0], 50);
    ck_assert_int_eq(lg.t[1], 50);
    ck_assert_uint_eq(lg.tag[1], 9);
    /* a zero-byte flow over a link completes after its latency */
    net_flow_add(n, 60, LAT, 0, -1, 0, INFINITY, 3);
    run(n, record, &lg);
    ck_assert_int_eq(lg.t[2], 60 + LAT);
    ck_assert_uint_eq(net_link_bytes(n, 0), (uint64_t)(0));
    net_free(n);
}
END_TEST

START_TEST(advance_jumps_in_order) {
    /* One net_advance over several instants reports each at its own time,
     * in (time, id) order. */
    net *n = net_new(3);
    for (int l = 0; l < 3; l++)
        net_link_set(n, l, B);
    flow_log lg = {0};
    net_flow_add(n, 0, 0, 0, -1, 3e6, INFINITY, 1); /* ends 3 ms */
    net_flow_add(n, 0, 0, 1, -1, 1e6, INFINITY, 2); /* ends 1 ms */
    net_flow_add(n, 0, 0, 2, -1, 1e6, INFINITY, 3); /* ends 1 ms */
    net_advance(n, 10000000, record, &lg);
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
        net_flow_add(n, 0, 0, 0, -1, s[i], INFINITY, (uint64_t)i);
    run(n, record, &lg);
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
    ck_assert_int_eq(net_flow_add(n, 0, 0, 2, -1, 1, INFINITY, 0), MSG_EINPUT);
    ck_assert_int_eq(net_flow_add(n, 0, 0, -2, -1, 1, INFINITY, 0),
                     MSG_EINPUT);
    ck_assert_int_eq(net_flow_add(n, 0, -1, 0, -1, 1, INFINITY, 0),
                     MSG_EINPUT);
    ck_assert_int_eq(net_flow_add(n, 0, 0, 0, -1, 1, 0, 0), MSG_EINPUT);
    ck_assert_int_eq(net_flow_add(n, 0, 0, 0, -1, 1, NAN, 0), MSG_EINPUT);
    ck_assert_int_eq(net_active_flows(n), 0);
    net_link_set(n, 5, B);  /* ignored */
    net_link_set(n, 0, -1); /* ignored */
    ck_assert_uint_eq(net_link_bytes(n, 7), (uint64_t)(0));
    /* a link never set has capacity 0: the flow never completes */
    net_flow_add(n, 0, 0, 1, -1, 1, INFINITY, 0);
    net_advance(n, 0, NULL, NULL);
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
    net_flow_add(n, 0, 0, 0, -1, 1e6, INFINITY, 1);
    net_flow_add(n, 0, xfer_ns(1e6, B), 0, -1, 1e6, INFINITY, 2);
    run(n, record, &lg);
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
    net_flow_add(n, 0, 0, 0, -1, 2e6, INFINITY, 1);
    net_advance(n, 1000000, record, &lg);
    net_link_set(n, 0, B / 2);
    ck_assert_int_eq(net_next_time(n), 1000000 + xfer_ns(1e6, B / 2));
    run(n, record, &lg);
    ck_assert_int_eq(lg.t[0], 3000000);
    ck_assert_double_eq(net_link_peak(n, 0), B);
    net_free(n);
}
END_TEST

/* Churn: callbacks add and cancel flows at random; the test keeps its own
 * view of which ids are live and checks the net's promises against it. */
typedef struct {
    net *n;
    uint64_t seed;
    int live[4096];    /* live[id]: 1 while the test believes it live */
    int64_t added_at[4096];
    int64_t last_t;
    int last_id;
    int added, completed, cancelled;
    double bytes_added, bytes_done;
} churn;

static uint64_t lcg(uint64_t *s);

static void churn_add(churn *ch, int64_t now) {
    int a = (int)(lcg(&ch->seed) % 8), b = (int)(lcg(&ch->seed) % 9) - 1;
    double bytes = (double)(lcg(&ch->seed) % 3000000);
    int64_t lat = lcg(&ch->seed) % 4 ? (int64_t)(lcg(&ch->seed) % 50000) : 0;
    double cap = lcg(&ch->seed) % 4 ? INFINITY : 1e7 * (1 + lcg(&ch->seed) % 50);
    int id = net_flow_add(ch->n, now, lat, a, b, bytes, cap, (uint64_t)bytes);
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
        for (int i = 0; i < k; i++)
            churn_add(ch, now);
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
    for (int l = 0; l < 8; l++)
        net_link_set(n, l, caps[l]);
    for (int i = 0; i < 50; i++)
        churn_add(&ch, 0);
    int64_t t;
    while ((t = net_next_time(n)) != INT64_MAX) {
        ck_assert_int_ge(t, ch.last_t);
        net_advance(n, t, churn_done, &ch);
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
    ck_assert_int_ge(net_flow_add(n, 0, 10, 0, -1, 1000, INFINITY, 1), 0);
    ck_assert_int_ge(net_flow_add(n, 0, 10, 1, -1, 1000, 1e-292, 2), 0);
    net_advance(n, 10, record, &lg);
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
    int a = net_flow_add(n, 0, 0, 0, -1, 10, INFINITY, 1);
    net_advance(n, 0, NULL, NULL);
    net_advance(n, 3500000, NULL, NULL); /* 3.5 bytes moved */
    ck_assert_uint_eq(net_link_bytes(n, 0), 3);
    net_flow_cancel(n, 3500000, a);
    ck_assert_uint_eq(net_link_bytes(n, 0), 3);
    net_flow_add(n, 3500000, 0, 0, -1, 7, INFINITY, 2);
    for (int64_t t = 3500000; t < 20000000; t += 333333)
        net_advance(n, t, NULL, NULL);
    run(n, NULL, NULL);
    ck_assert_uint_eq(net_link_bytes(n, 0), 10);
    net_free(n);
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
    tcase_add_test(tc, random_churn);
    tcase_add_test(tc, defect5_subnormal_rate_never_completes);
    tcase_add_test(tc, whole_bytes_on_cancel_and_completion);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
