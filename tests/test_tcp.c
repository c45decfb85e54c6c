/*
 * test_tcp.c -- TCP slow start, restart after idle, step overhead and ring
 * order, against the model worked out by hand.
 *
 * The closed forms: a flow alone on a link of B bytes/s, round trip R,
 * from window W0 sends W0 2^j in round j while W0 2^j / R < B (slow
 * start), W0 (2^j - 1) bytes by the start of round j, so it leaves slow
 * start after k = ceil(log2(B R / W0)) rounds, having sent W0 (2^k - 1),
 * and moves the rest at B.  ss_flow() below walks those rounds for any
 * start window; each collective test chains it through the steps.  The
 * restart rule is Linux's tcp_cwnd_restart() with RTO = R + rto_min.  Last,
 * a stream of periodic collectives run whole and with its repeating
 * periods skipped by signature (as the engine's fast-forward does) gives
 * the same instants and bytes.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/engine/collective.h"
#include "sim/base/msg.h"

#define MAXW 6
#define NLOG 512

static const double B = 1.25e9;    /* 10 Gbit/s, bytes/s */
static const int64_t L = 25000000; /* one way: 25 ms */
static const int64_t R = 50000000; /* round trip: 50 ms */
static const double W0 = 14480;    /* 10 segments of 1448 bytes */
static const coll_tcp LINUX = {14480, INFINITY, 0.2, 1};

/* ceil(x ns) with the net's slack (net.c: completion()). */
static int64_t ceil_ns(double x) {
    return (int64_t)ceil(x - (1e-6 + 1e-13 * x));
}

/* The model by hand: a flow of `bytes` alone at share `share` from
 * window w (no window limit): its time from activation and the window it
 * ends with. */
typedef struct {
    int64_t ns;
    double win;
} ss_result;

static ss_result ss_flow(double w, double share, int64_t rtt, double bytes) {
    double sent = 0;
    int64_t t = 0;
    for (;;) {
        double rate = w * 1e9 / (double)rtt;
        if (rate >= share) { /* the share binds: the rest at it */
            int64_t rest = ceil_ns((bytes - sent) * 1e9 / share);
            /* a boundary before the end sets w to what is in flight */
            return (ss_result){t + rest,
                               rest > rtt ? share * (double)rtt / 1e9 : w};
        }
        if (sent + w >= bytes) { /* its last round's bytes grow the window:
                                    rate x the time into the round, as the
                                    net computes them (about bytes - sent) */
            int64_t last = ceil_ns((bytes - sent) * 1e9 / rate);
            double acked = rate * (double)((last - 1) % rtt + 1) / 1e9;
            return (ss_result){t + last, w + (acked < w ? acked : w)};
        }
        sent += w;
        t += rtt;
        w *= 2;
    }
}

/* ---- one flow on the net ------------------------------------------------ */

typedef struct {
    net *n;
    int count;
    int64_t t[NLOG];
    double win[NLOG]; /* the window each flow ended with */
    uint64_t tag[NLOG];
} flows;

static void on_flow(void *ctx, int64_t now, int flow, uint64_t tag) {
    flows *f = ctx;
    ck_assert_int_lt(f->count, NLOG);
    f->t[f->count] = now;
    f->win[f->count] = net_flow_window(f->n, flow);
    f->tag[f->count++] = tag;
}

/* Steps the net through every instant up to `until` (INT64_MAX: all);
 * returns how many instants it stopped at. */
static int advance_all(net *n, int64_t until) {
    int stops = 0;
    for (int64_t t; (t = net_next_time(n)) <= until && t != INT64_MAX; stops++)
        net_advance(n, t);
    if (until != INT64_MAX) net_advance(n, until);
    return stops;
}

/* Slow start alone on a link: the rate and window of every round, the
 * bytes sent by any instant, k = ceil(log2(B R / W0)) rounds, the
 * completion instant of S bytes; the window settles at B R. */
START_TEST(slow_start_alone) {
    const double S = 1e9;
    int k = (int)ceil(log2(B * (double)R / 1e9 / W0));
    ck_assert_int_eq(k, 13);
    flows f = {.n = net_new(1)};
    net_link_set(f.n, 0, B);
    int id =
        net_flow_add(f.n, 0, L, 0, -1, (uint64_t)S, INFINITY, on_flow, &f, 7);
    ck_assert_int_eq(net_flow_set_tcp(f.n, id, R, W0, INFINITY), 0);
    ck_assert(net_flow_window(f.n, id) == W0);
    for (int j = 0; j < k; j++) {
        /* midway through round j: rate W0 2^j / R, W0 (2^j - 1) + half */
        int64_t t = L + j * R + R / 2;
        advance_all(f.n, t);
        double w = W0 * ldexp(1, j);
        ck_assert(net_flow_rate(f.n, id) == w * 1e9 / (double)R);
        ck_assert(net_flow_window(f.n, id) == w);
        ck_assert_uint_eq(net_flow_counted(f.n, id),
                          (uint64_t)(W0 * (ldexp(1, j) - 1) + w / 2));
    }
    advance_all(f.n, L + k * R + 1);
    ck_assert(net_flow_rate(f.n, id) == B); /* out of slow start */
    advance_all(f.n, L + (k + 1) * R + 1);
    ck_assert(net_flow_window(f.n, id) == B * (double)R / 1e9); /* in flight */
    /* no instant until the end: settled at its share */
    ck_assert_int_eq(advance_all(f.n, INT64_MAX), 1);
    ck_assert_int_eq(f.count, 1);
    double sent = W0 * (ldexp(1, k) - 1);
    ck_assert_int_eq(f.t[0], L + k * R + ceil_ns((S - sent) * 1e9 / B));
    ck_assert_int_eq(f.t[0], L + ss_flow(W0, B, R, S).ns);
    ck_assert_int_eq(f.t[0], 1380115456); /* 25 + 650 + 705.115456 ms */
    ck_assert(f.win[0] == 62500000);
    ck_assert_uint_eq(net_link_bytes(f.n, 0), (uint64_t)S);
    net_free(f.n);
}
END_TEST

/* Flows that end inside slow start: S between W0 (2^j - 1) and W0
 * (2^(j+1) - 1) ends in round j at rate W0 2^j / R, and leaves the window
 * W0 2^j plus what it sent in that round (S - W0 (2^j - 1)); at exactly
 * W0 (2^(j+1) - 1) it ends on the boundary, with W0 2^(j+1).  The instants are
 * activation, j boundaries and the completion. */
START_TEST(ends_in_slow_start) {
    const double sizes[] = {1, 14480, 14481, 5e6, 14480.0 * 255, 3e7};
    const int rounds[] = {0, 0, 1, 8, 7, 11};
    for (int i = 0; i < 6; i++) {
        flows f = {.n = net_new(2)};
        net_link_set(f.n, 0, B);
        net_link_set(f.n, 1, 2 * B);
        int id = net_flow_add(f.n, 100, L, 1, 0, (uint64_t)sizes[i], INFINITY,
                              on_flow, &f, 1);
        ck_assert_int_eq(net_flow_set_tcp(f.n, id, R, W0, INFINITY), 0);
        int stops = advance_all(f.n, INT64_MAX);
        int j = rounds[i];
        double w = W0 * ldexp(1, j), before = W0 * (ldexp(1, j) - 1);
        int64_t expect = 100 + L + j * R +
                         ceil_ns((sizes[i] - before) * 1e9 / (w * 1e9 / R));
        ck_assert_int_eq(f.t[0], expect);
        ck_assert_int_eq(f.t[0], 100 + L + ss_flow(W0, B, R, sizes[i]).ns);
        /* the acknowledgements of its last round grow the window, by
         * about S - before (rate x the ns into the round, which rounds the
         * completion up) */
        ck_assert(f.win[0] == ss_flow(W0, B, R, sizes[i]).win);
        ck_assert_msg(fabs(f.win[0] - (w + (sizes[i] - before))) <= 1e-3 * w,
                      "size %g: window %.17g", sizes[i], f.win[0]);
        ck_assert_int_eq(stops, 2 + j);
        net_free(f.n);
    }
}
END_TEST

/* Two flows on one link, one TCP: its share is B/2 while both run, so it
 * leaves slow start after ceil(log2(B R / 2 W0)) rounds; when the other
 * ends, its window grows again from what it had in flight (B/2 R). */
START_TEST(shared_link_and_rising_share) {
    flows f = {.n = net_new(1)};
    net_link_set(f.n, 0, B);
    int a =
        net_flow_add(f.n, 0, 0, 0, -1, 4000000000u, INFINITY, on_flow, &f, 1);
    int b =
        net_flow_add(f.n, 0, 0, 0, -1, 1250000000u, INFINITY, on_flow, &f, 2);
    ck_assert_int_eq(net_flow_set_tcp(f.n, a, R, W0, INFINITY), 0);
    int k = (int)ceil(log2(B / 2 * (double)R / 1e9 / W0));
    ck_assert_int_eq(k, 12);
    advance_all(f.n, (k - 1) * R + 1);
    ck_assert(net_flow_rate(f.n, a) == W0 * ldexp(1, k - 1) * 1e9 / R);
    ck_assert(net_flow_rate(f.n, b) == B - net_flow_rate(f.n, a));
    advance_all(f.n, (k + 1) * R + 1);
    ck_assert(net_flow_rate(f.n, a) == B / 2);
    ck_assert(net_flow_window(f.n, a) == B / 2 * (double)R / 1e9);
    /* b ends: a alone, window-limited at B/2, doubles at its next round */
    advance_all(f.n, INT64_MAX);
    ck_assert_int_eq(net_active_flows(f.n), 0);
    ck_assert_uint_eq(net_link_bytes(f.n, 0), 5250000000u);
    net_free(f.n);

    /* the same, step by step past b's end */
    f = (flows){.n = net_new(1)};
    net_link_set(f.n, 0, B);
    a = net_flow_add(f.n, 0, 0, 0, -1, 4000000000u, INFINITY, on_flow, &f, 1);
    net_flow_add(f.n, 0, 0, 0, -1, 1000000000u, INFINITY, on_flow, &f, 2);
    net_flow_set_tcp(f.n, a, R, W0, INFINITY);
    while (f.count == 0) advance_all(f.n, net_next_time(f.n));
    int64_t tb = f.t[0], next = tb - tb % R + R; /* a's next boundary */
    ck_assert(net_flow_rate(f.n, a) == B / 2);   /* its cap: in flight */
    ck_assert_int_eq(net_next_time(f.n), next);
    advance_all(f.n, next);
    ck_assert(net_flow_rate(f.n, a) == B);
    ck_assert(net_flow_window(f.n, a) == B * (double)R / 1e9);
    net_free(f.n);
}
END_TEST

/* A window limit (socket buffers) below B R: the window grows to it and
 * the flow runs at max_window / R for good; so does a flow cap below the
 * window's. */
START_TEST(window_limit) {
    const double S = 1e9, wmax = 1e7;
    flows f = {.n = net_new(1)};
    net_link_set(f.n, 0, B);
    int id =
        net_flow_add(f.n, 0, L, 0, -1, (uint64_t)S, INFINITY, on_flow, &f, 1);
    ck_assert_int_eq(net_flow_set_tcp(f.n, id, R, W0, wmax), 0);
    int j = (int)ceil(log2(wmax / W0)); /* rounds before the limit */
    ck_assert_int_eq(j, 10);
    advance_all(f.n, L + j * R + 1);
    ck_assert(net_flow_rate(f.n, id) == wmax * 1e9 / R);
    ck_assert(net_flow_window(f.n, id) == wmax);
    ck_assert_int_eq(advance_all(f.n, INT64_MAX), 1);
    double before = W0 * (ldexp(1, j) - 1);
    ck_assert_int_eq(f.t[0],
                     L + j * R +
                         ceil_ns((S - before) * 1e9 / (wmax * 1e9 / R)));
    net_free(f.n);

    f = (flows){.n = net_new(1)};
    net_link_set(f.n, 0, B);
    id = net_flow_add(f.n, 0, 0, 0, -1, (uint64_t)S, 1e8, on_flow, &f, 1);
    net_flow_set_tcp(f.n, id, R, W0, INFINITY);
    advance_all(f.n, 20 * R);
    ck_assert(net_flow_rate(f.n, id) == 1e8);
    ck_assert(net_flow_window(f.n, id) == 1e8 * (double)R / 1e9);
    net_free(f.n);
}
END_TEST

START_TEST(set_tcp_arguments) {
    net *n = net_new(1);
    net_link_set(n, 0, B);
    int id = net_flow_add(n, 0, 0, 0, -1, 1000, INFINITY, NULL, NULL, 1);
    ck_assert_int_eq(net_flow_set_tcp(n, id, 0, W0, INFINITY), MSG_EINPUT);
    ck_assert_int_eq(net_flow_set_tcp(n, id, R, 0, INFINITY), MSG_EINPUT);
    ck_assert_int_eq(net_flow_set_tcp(n, id, R, NAN, INFINITY), MSG_EINPUT);
    ck_assert_int_eq(net_flow_set_tcp(n, id, R, W0, 0), MSG_EINPUT);
    ck_assert_int_eq(net_flow_set_tcp(n, id + 1, R, W0, INFINITY), MSG_EINPUT);
    ck_assert(net_flow_window(n, id) == 0); /* not TCP */
    net_advance(n, 0);                      /* active: too late */
    ck_assert_int_eq(net_flow_set_tcp(n, id, R, W0, INFINITY), MSG_EINPUT);
    net_free(n);
}
END_TEST

/* Signatures see a TCP flow's window and round, and net_shift moves its
 * boundary: a shifted net goes on exactly as one started later. */
START_TEST(tcp_signature_and_shift) {
    const int64_t D = 987654321012;
    net *n[3];
    flows f[3] = {{0}};
    sig_buf s[3] = {{0}};
    for (int k = 0; k < 3; k++) {
        int64_t t0 = k == 1 ? D : 0;
        f[k].n = n[k] = net_new(2);
        net_link_set(n[k], 0, B);
        net_link_set(n[k], 1, B / 3);
        int a = net_flow_add(n[k], t0, L, 0, -1, 300000000, INFINITY, on_flow,
                             &f[k], 1);
        net_flow_set_tcp(n[k], a, R, k == 2 ? 2 * W0 : W0, INFINITY);
        int b = net_flow_add(n[k], t0, 3 * L, 0, 1, 200000000, INFINITY,
                             on_flow, &f[k], 2);
        net_flow_set_tcp(n[k], b, 3 * R, W0, 1e6);
        advance_all(n[k], t0 + 7 * R + 3);
        net_signature(n[k], t0 + 7 * R + 3, &s[k]);
    }
    ck_assert(s[0].len == s[1].len && memcmp(s[0].p, s[1].p, s[0].len) == 0);
    ck_assert(s[0].len != s[2].len || memcmp(s[0].p, s[2].p, s[0].len) != 0);
    net_shift(n[0], D);
    s[0].len = 0;
    net_signature(n[0], D + 7 * R + 3, &s[0]);
    ck_assert(s[0].len == s[1].len && memcmp(s[0].p, s[1].p, s[0].len) == 0);
    ck_assert_int_eq(net_next_time(n[0]), net_next_time(n[1]));
    ck_assert_int_eq(net_shift_total(n[0]), D);
    ck_assert_int_eq(net_now(n[0]), net_now(n[1]));
    for (int k = 0; k < 2; k++) advance_all(n[k], INT64_MAX);
    ck_assert_int_eq(f[0].count, 2);
    ck_assert_int_eq(f[1].count, 2);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(f[0].t[i], f[1].t[i]);
        ck_assert(f[0].win[i] == f[1].win[i]);
    }
    for (int k = 0; k < 3; k++) {
        free(s[k].p);
        net_free(n[k]);
    }
}
END_TEST

/* ---- restart after idle -------------------------------------------------- */

/* Idle at most one RTO keeps the window; idle of exactly n RTOs halves it
 * n - 1 times, a ns more n times (Linux's loop: while ((delta -= RTO) >
 * 0 ...)), never below min(init, w); restart off keeps it. */
START_TEST(restart_rule) {
    const int64_t rto = R + 200000000;
    const double w = W0 * 1024;
    ck_assert(coll_tcp_restart(&LINUX, R, w, 0) == w);
    ck_assert(coll_tcp_restart(&LINUX, R, w, rto) == w);
    ck_assert(coll_tcp_restart(&LINUX, R, w, rto + 1) == w / 2);
    for (int n = 2; n <= 10; n++) {
        ck_assert(coll_tcp_restart(&LINUX, R, w, n * rto) ==
                  w / ldexp(1, n - 1));
        ck_assert(coll_tcp_restart(&LINUX, R, w, n * rto + 1) ==
                  w / ldexp(1, n));
    }
    ck_assert(coll_tcp_restart(&LINUX, R, w, 11 * rto + 1) == W0); /* floor */
    ck_assert(coll_tcp_restart(&LINUX, R, w, INT64_MAX / 2) == W0);
    ck_assert(coll_tcp_restart(&LINUX, R, 3 * W0, 5 * rto) ==
              W0); /* 0.75 W0 -> W0 */
    ck_assert(coll_tcp_restart(&LINUX, R, W0 / 4, 50 * rto) ==
              W0 / 4); /* below init */
    coll_tcp off = LINUX;
    off.restart_after_idle = 0;
    ck_assert(coll_tcp_restart(&off, R, w, 100 * rto) == w);
    coll_tcp zero = {W0, INFINITY, 0, 1}; /* RTO 0: any idle restarts */
    ck_assert(coll_tcp_restart(&zero, 0, w, 1) == W0);
    ck_assert(coll_tcp_restart(&zero, 0, w, 0) == w);
}
END_TEST

/* ---- collectives over TCP ------------------------------------------------ */

typedef struct {
    net *n;
    coll *c;
    int count;
    int64_t t[NLOG];
    uint64_t tag[NLOG];
} stream;

static void on_coll_done(void *ctx, int64_t now, uint64_t tag) {
    stream *s = ctx;
    ck_assert_int_lt(s->count, NLOG);
    s->t[s->count] = now;
    s->tag[s->count++] = tag;
}

/* W workers, every link at B and every latency L unless given, the
 * algorithm, TCP when tcp is not NULL. */
static void stream_new(stream *s, int W, coll_algo algo, const int64_t *lat,
                       const coll_tcp *tcp) {
    int64_t same[MAXW * MAXW];
    for (int i = 0; i < W * W; i++) same[i] = L;
    *s = (stream){.n = net_new(2 * W)};
    for (int l = 0; l < 2 * W; l++) net_link_set(s->n, l, B);
    s->c = coll_new(s->n, W, algo, lat ? lat : same, INFINITY, 100,
                    on_coll_done, s);
    ck_assert_ptr_nonnull(s->c);
    if (tcp) coll_set_tcp(s->c, tcp);
}

static void stream_free(stream *s) {
    coll_free(s->c);
    net_free(s->n);
}

/* Submits `bytes` at `at` (after running everything before it) and runs
 * it to the end; returns how long it took. */
static int64_t one_collective(stream *s, int64_t at, uint64_t bytes,
                              uint64_t tag) {
    advance_all(s->n, at);
    int before = s->count;
    ck_assert_int_eq(coll_submit(s->c, at, bytes, NULL, tag), 0);
    advance_all(s->n, INT64_MAX);
    ck_assert_int_eq(s->count, before + 1);
    return s->t[before] - at;
}

/* A ring of M members over TCP, every connection's flows at most at
 * `share`, round trip rtt, all starting from window w: each of its 2(M-1)
 * steps is L plus ss_flow of a chunk from the window the step before
 * left.  Returns the duration; *w gets the windows the connections end
 * with. */
static int64_t ring_at(int M, double bytes, double *w, int64_t rtt,
                       double share) {
    int64_t t = 0;
    for (int s = 0; s < 2 * (M - 1); s++) {
        ss_result r = ss_flow(*w, share, rtt, bytes / M);
        t += L + r.ns;
        *w = r.win;
    }
    return t;
}

/* ring_at() with every connection alone on its links, round trip R. */
static int64_t ring_by_hand(int M, double bytes, double *w) {
    return ring_at(M, bytes, w, R, B);
}

/* A 2- and a 3-member ring: the first collective runs slow start at
 * every connection; the second, right after, reuses warm windows and is
 * faster; after an idle of 10 s (13 halvings bring B R to below W0) the
 * third is exactly as slow as the first; after one RTO and a ns, one
 * halving: in between. */
START_TEST(ring_warm_and_cold) {
    const int64_t rto = R + 200000000;
    for (int M = 2; M <= 3; M++) {
        double S = 1e8 * M;
        stream s;
        stream_new(&s, M, COLL_RING, NULL, &LINUX);
        double w = W0;
        int64_t cold = ring_by_hand(M, S, &w);
        ck_assert_int_eq(one_collective(&s, 0, (uint64_t)S, 1), cold);
        ck_assert(coll_conn_window(s.c, 0, 1) == w);
        ck_assert(coll_conn_window(s.c, M - 1, 0) == w);
        if (M == 3)
            ck_assert(coll_conn_window(s.c, 1, 0) == W0); /* never used */
        int64_t warm = ring_by_hand(M, S, &w);
        ck_assert_int_eq(one_collective(&s, s.t[0], (uint64_t)S, 2), warm);
        ck_assert_int_lt(warm, cold);
        /* without TCP the same ring takes 2(M-1)(L + chunk / B) */
        int64_t plain = 2 * (M - 1) * (L + ceil_ns(1e8 * 1e9 / B));
        ck_assert_int_ge(warm, plain);
        ck_assert_int_lt(warm, plain + 2 * (M - 1) * R);
        ck_assert(w == B * (double)R / 1e9);
        ck_assert_int_eq(one_collective(&s, s.t[1] + 10000000000, (uint64_t)S,
                                        3),
                         cold);
        double half = coll_conn_window(s.c, 0, 1) / 2;
        int64_t mid = ring_by_hand(M, S, &half);
        ck_assert_int_eq(one_collective(&s, s.t[2] + rto + 1, (uint64_t)S, 4),
                         mid);
        ck_assert_int_lt(s.t[3] - s.t[2] - rto - 1, cold);
        ck_assert_int_gt(s.t[3] - s.t[2] - rto - 1, warm);
        stream_free(&s);

        /* restart off: the idle gap changes nothing */
        coll_tcp keep = LINUX;
        keep.restart_after_idle = 0;
        stream_new(&s, M, COLL_RING, NULL, &keep);
        one_collective(&s, 0, (uint64_t)S, 1);
        w = coll_conn_window(s.c, 0, 1);
        int64_t again = ring_by_hand(M, S, &w);
        ck_assert_int_eq(one_collective(&s, s.t[0] + 10000000000, (uint64_t)S,
                                        2),
                         again);
        stream_free(&s);
    }
}
END_TEST

/* A 2-member ring of 2 x 100 MB over TCP, run cold and then warm: every
 * window ends at B R = 62.5 MB (the existing test above proves it);
 * returns the instant the connections last sent data, the warm
 * collective's end (both of its last flows end there) less L. */
static int64_t warm_ring(stream *s) {
    stream_new(s, 2, COLL_RING, NULL, &LINUX);
    one_collective(s, 0, 200000000, 1);
    one_collective(s, s->t[0], 200000000, 2);
    ck_assert(coll_conn_window(s->c, 0, 1) == B * (double)R / 1e9);
    ck_assert(coll_conn_window(s->c, 1, 0) == B * (double)R / 1e9);
    return s->t[1] - L;
}

/* The warm ring's next collective by hand, from windows B R / 2^h: a step
 * is L plus its 100 MB chunk.  h = 0: 80 ms at B (210 ms in all).  h = 1:
 * 31.25 MB in the first round (50 ms), the rest, 68.75 MB, at B (55 ms);
 * the window is B R again, so the second step is 80 ms: 235 ms.  h = 2:
 * 15.625 + 31.25 MB in two rounds (100 ms), the rest, 53.125 MB, at B
 * (42.5 ms), then 80 ms: 272.5 ms.  Checked against ring_by_hand too. */
static int64_t warm_ring_by_hand(int h) {
    const int64_t ms = 1000000, by_hand[3] = {210 * ms, 235 * ms, 272500000};
    double w = B * (double)R / 1e9 / ldexp(1, h);
    ck_assert_int_eq(ring_by_hand(2, 2e8, &w), by_hand[h]);
    return by_hand[h];
}

/* The idle time of a restart is counted from the connection's last
 * transmission (Linux's lsndtime): its last flow's end less the one-way
 * latency, not the end.  Idle g from there: g = RTO keeps the windows,
 * RTO + 1 ns halves them once, 2 RTO once, 2 RTO + 1 ns twice.  Counted
 * from the last flow's end (L = 25 ms less), RTO + 1 and 2 RTO + 1 would
 * halve once less: 210 and 235 ms instead of 235 and 272.5. */
START_TEST(restart_from_last_send) {
    const int64_t rto = R + 200000000;
    const int64_t gap[4] = {rto, rto + 1, 2 * rto, 2 * rto + 1};
    const int halvings[4] = {0, 1, 1, 2};
    for (int k = 0; k < 4; k++) {
        stream s;
        int64_t sent = warm_ring(&s);
        ck_assert_int_eq(one_collective(&s, sent + gap[k], 200000000, 3),
                         warm_ring_by_hand(halvings[k]));
        stream_free(&s);
    }
}
END_TEST

/* A flow cancelled before it is active has sent nothing: its connection
 * keeps the window and the last transmission it had.  One cancelled while
 * active last sent at the cancel less L.  Either way the next collective,
 * RTO + 1 ns after that last transmission, halves the windows once (235
 * ms); counting from the cancel would halve nothing (210 ms). */
START_TEST(restart_after_cancel) {
    const int64_t rto = R + 200000000, ms = 1000000;
    for (int active = 0; active < 2; active++) {
        stream s;
        int64_t sent = warm_ring(&s);
        /* 200 ms after: below the RTO, so the flows start at B R */
        ck_assert_int_eq(coll_submit(s.c, sent + 200 * ms, 200000000, NULL, 3),
                         0);
        int64_t cancel = sent + 200 * ms + (active ? L : 0) + 10 * ms;
        advance_all(s.n, cancel);
        coll_clear(s.c, cancel);
        ck_assert_int_eq(s.count, 2);
        if (active) sent = cancel - L; /* 12.5 MB moved, at B: window B R */
        ck_assert_int_eq(one_collective(&s, sent + rto + 1, 200000000, 4),
                         warm_ring_by_hand(1));
        stream_free(&s);
    }
}
END_TEST

/* Star and all-to-all over TCP open every pair they use; the hub's
 * connections are the ones that grow. */
START_TEST(star_and_all_to_all_connections) {
    stream s;
    stream_new(&s, 3, COLL_STAR, NULL, &LINUX);
    one_collective(&s, 0, 1000000, 1);
    for (int i = 1; i < 3; i++) {
        ck_assert(coll_conn_window(s.c, i, 0) > W0); /* gather */
        ck_assert(coll_conn_window(s.c, 0, i) > W0); /* broadcast */
    }
    ck_assert(coll_conn_window(s.c, 1, 2) == W0);
    ck_assert(coll_conn_window(s.c, 1, 1) == W0);
    ck_assert(coll_conn_window(s.c, 3, 0) == 0); /* no such pair */
    stream_free(&s);
    stream_new(&s, 3, COLL_ALL_TO_ALL, NULL, &LINUX);
    ck_assert(coll_conn_window(s.c, 1, 2) == W0);
    one_collective(&s, 0, 3000000, 1);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            ck_assert(i == j || coll_conn_window(s.c, i, j) > W0);
    stream_free(&s);
    stream_new(&s, 3, COLL_RING, NULL, NULL);
    ck_assert(coll_conn_window(s.c, 0, 1) == 0); /* TCP off */
    coll_tcp bad = LINUX;
    bad.init_window_bytes = 0;
    coll_set_tcp(s.c, &bad); /* ignored */
    ck_assert(coll_conn_window(s.c, 0, 1) == 0);
    stream_free(&s);
}
END_TEST

/* ---- step overhead ------------------------------------------------------- */

/* A ring of 2(M-1) steps takes 2(M-1) overheads longer, exactly, with or
 * without TCP (the overhead is far below an RTO, so no restart); star and
 * all-to-all, 2 steps, two overheads; a single member pays none; an
 * exclusive ring's shortcut pays them as the plain ring does. */
START_TEST(step_overhead) {
    const int64_t ov = 1234567;
    const coll_algo algos[] = {COLL_RING, COLL_STAR, COLL_ALL_TO_ALL};
    for (int a = 0; a < 3; a++)
        for (int M = 1; M <= MAXW; M++)
            for (int tcp = 0; tcp < 2; tcp++) {
                if (tcp && M > 3) continue;
                int64_t d[2];
                for (int k = 0; k < 2; k++) {
                    stream s;
                    stream_new(&s, M, algos[a], NULL, tcp ? &LINUX : NULL);
                    coll_set_step_overhead(s.c, k ? ov : 0);
                    d[k] = one_collective(&s, 1000, 30000001, 1);
                    stream_free(&s);
                }
                int steps = M == 1                  ? 0
                            : algos[a] == COLL_RING ? 2 * (M - 1)
                                                    : 2;
                ck_assert_int_eq(d[1], d[0] + steps * ov);
            }
    /* an exclusive ring's shortcut (one flow per chunk size) waits the
     * overhead too: the same instants and bytes */
    for (int M = 2; M <= MAXW; M++) {
        stream x[2];
        for (int k = 0; k < 2; k++) {
            stream_new(&x[k], M, COLL_RING, NULL, NULL);
            coll_set_step_overhead(x[k].c, ov);
            if (k) coll_set_exclusive(x[k].c);
            one_collective(&x[k], 0, 30000001, 1);
            one_collective(&x[k], x[k].t[0] + 5, 7, 2);
            coll_flush_bytes(x[k].c);
        }
        ck_assert_int_eq(x[0].t[1], x[1].t[1]);
        for (int l = 0; l < 2 * M; l++)
            ck_assert_uint_eq(net_link_bytes(x[0].n, l),
                              net_link_bytes(x[1].n, l));
        stream_free(&x[0]);
        stream_free(&x[1]);
    }
    stream s;
    stream_new(&s, 2, COLL_RING, NULL, NULL);
    coll_set_step_overhead(s.c, -5); /* ignored */
    ck_assert_int_eq(one_collective(&s, 0, 2000000, 1),
                     2 * (L + ceil_ns(1e6 * 1e9 / B)));
    stream_free(&s);
}
END_TEST

/* ---- ring order ----------------------------------------------------------- */

/* A 3-site ring in the order 2, 0, 1: 2 sends to 0, 0 to 1, 1 to 2.  With
 * S = 10 the chunks are 3, 3, 4 and the member at ring position 2 (worker
 * 1 here, worker 2 in id order) sends 14 bytes, the others 13; each
 * worker's down link gets what its predecessor sent.  A slow pair 0 -> 1
 * costs the id-ordered ring 4 s and not the ring 0, 2, 1.  Star's hub is
 * the first in the order. */
START_TEST(ring_order) {
    int64_t lat[9];
    for (int i = 0; i < 9; i++) lat[i] = 1000000;
    stream s;
    stream_new(&s, 3, COLL_RING, lat, NULL);
    ck_assert_int_eq(coll_set_order(s.c, (const int[]){2, 0, 1}), 0);
    one_collective(&s, 0, 10, 1);
    const uint64_t up[3] = {13, 14, 13}, down[3] = {13, 13, 14};
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(net_link_bytes(s.n, 2 * i), up[i]);
        ck_assert_uint_eq(net_link_bytes(s.n, 2 * i + 1), down[i]);
    }
    ck_assert_int_eq(coll_set_order(s.c, NULL), 0); /* back to 0, 1, 2 */
    one_collective(&s, s.t[0], 10, 2);
    ck_assert_uint_eq(net_link_bytes(s.n, 4),
                      13 + 14); /* worker 2: position 2 */
    ck_assert_uint_eq(net_link_bytes(s.n, 1), 13 + 14); /* its successor 0 */
    ck_assert_int_eq(coll_set_order(s.c, (const int[]){0, 0, 1}), MSG_EINPUT);
    ck_assert_int_eq(coll_set_order(s.c, (const int[]){0, 1, 3}), MSG_EINPUT);
    ck_assert_int_eq(coll_set_order(s.c, (const int[]){-1, 1, 2}), MSG_EINPUT);
    stream_free(&s);

    lat[0 * 3 + 1] = 1000000000; /* 0 -> 1: a second away */
    for (int k = 0; k < 2; k++) {
        stream_new(&s, 3, COLL_RING, lat, NULL);
        if (k) coll_set_order(s.c, (const int[]){0, 2, 1});
        int64_t d = one_collective(&s, 0, 3000000, 1);
        int64_t step = ceil_ns(1e6 * 1e9 / B);
        ck_assert_int_eq(d, 4 * ((k ? 1000000 : 1000000000) + step));
        stream_free(&s);
    }

    stream_new(&s, 3, COLL_STAR, NULL, NULL);
    coll_set_order(s.c, (const int[]){2, 0, 1});
    one_collective(&s, 0, 1000, 1);
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(net_link_bytes(s.n, 2 * i), i == 2 ? 2000 : 1000);
        ck_assert_uint_eq(net_link_bytes(s.n, 2 * i + 1), i == 2 ? 2000 : 1000);
    }
    stream_free(&s);
}
END_TEST

/* ACKs of coefficient a on a net of 2 M links (partner l ^ 1). */
static void acks_on(net *n, int M, double a) {
    int partner[2 * MAXW];
    for (int l = 0; l < 2 * M; l++) partner[l] = l ^ 1;
    ck_assert_int_eq(net_set_ack(n, a, partner), 0);
}

/* ---- fast-forward over TCP ---------------------------------------------- */

/* splitmix64: the next draw of the stream s. */
static uint64_t draw(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

enum { PERIODS = 40, MARKS = 4 };

/* A world of periodic collectives drawn from a seed. */
typedef struct {
    int M, exclusive, lazy, nsub;
    coll_algo algo;
    double up[MAXW], down[MAXW];
    int64_t lat[MAXW * MAXW], overhead, period;
    int order[MAXW];
    coll_tcp tcp;
    uint64_t size[2];
    int64_t startup, queue; /* coll_set_startup, coll_set_queue; 0: none */
    double ack;             /* net_set_ack's coefficient; 0: none */
} ff_case;

static ff_case ff_draw(uint64_t seed) {
    ff_case k = {.M = 2 + (int)(draw(&seed) % 4)};
    static const double rates[] = {1.25e9, 1.25e9, 2.5e8, 6e8};
    k.algo = (coll_algo)(draw(&seed) % 3);
    k.exclusive = draw(&seed) % 2;
    k.lazy = draw(&seed) % 4 != 0;
    k.nsub = 1 + (int)(draw(&seed) % 2);
    int uniform = draw(&seed) % 2;
    for (int i = 0; i < k.M; i++) {
        k.up[i] = rates[uniform ? 0 : draw(&seed) % 4];
        k.down[i] = rates[uniform ? 0 : draw(&seed) % 4];
        k.order[i] = i;
    }
    for (int i = k.M - 1; i > 0; i--) { /* a random ring order */
        int j = (int)(draw(&seed) % (uint64_t)(i + 1)), t = k.order[i];
        k.order[i] = k.order[j];
        k.order[j] = t;
    }
    for (int i = 0; i < k.M * k.M; i++)
        k.lat[i] = uniform ? 20000000
                           : 1000000 * (1 + (int64_t)(draw(&seed) % 40)) +
                                 (int64_t)(draw(&seed) % 1000);
    k.tcp = LINUX;
    k.tcp.restart_after_idle = draw(&seed) % 3 != 0;
    if (draw(&seed) % 3 == 0)
        k.tcp.max_window_bytes = 1e6 * (double)(1 + draw(&seed) % 50);
    k.overhead = draw(&seed) % 2 ? 0 : 1000000;
    static const int64_t periods[] = {300000000, 1000000000, 5000000000};
    k.period = periods[draw(&seed) % 3];
    for (int i = 0; i < 2; i++) k.size[i] = 1000000 + draw(&seed) % 100000000;
    return k;
}

typedef struct {
    stream s;
    int64_t t[PERIODS * 2]; /* every completion instant, skipped ones too */
    int count;              /* completions, skipped ones too */
    int jumps;
} ff_run;

static void ff_done(void *ctx, int64_t now, uint64_t tag) {
    ff_run *r = ctx;
    (void)tag;
    ck_assert_int_lt(r->count, PERIODS * 2);
    r->t[r->count++] = now;
}

/* The state of a period start: the net's and the stream's signatures. */
static void ff_sig(ff_run *r, int64_t now, sig_buf *b) {
    b->len = 0;
    net_signature(r->s.n, now, b);
    coll_signature(r->s.c, b);
    ck_assert(!b->oom);
}

typedef struct {
    sig_buf sig;
    int period, count;
    uint64_t bytes[2 * MAXW];
} ff_mark;

/* Runs the case's PERIODS periods; with `fast`, a period start whose
 * state equals one of the last MARKS period starts' skips the repeats
 * that fit, as the engine's fast-forward does. */
static void ff_simulate(const ff_case *k, int fast, ff_run *r) {
    memset(r, 0, sizeof *r);
    r->s.n = net_new(2 * k->M);
    for (int i = 0; i < k->M; i++) {
        net_link_set(r->s.n, 2 * i, k->up[i]);
        net_link_set(r->s.n, 2 * i + 1, k->down[i]);
    }
    if (!k->lazy) net_set_lazy(r->s.n, 0);
    if (k->ack > 0) acks_on(r->s.n, k->M, k->ack);
    r->s.c = coll_new(r->s.n, k->M, k->algo, k->lat, INFINITY, 100, ff_done, r);
    coll_set_tcp(r->s.c, &k->tcp);
    if (k->startup > 0) coll_set_startup(r->s.c, k->startup, NULL);
    coll_set_queue(r->s.c, k->queue);
    coll_set_step_overhead(r->s.c, k->overhead);
    ck_assert_int_eq(coll_set_order(r->s.c, k->order), 0);
    if (k->exclusive) coll_set_exclusive(r->s.c);
    ff_mark marks[MARKS];
    memset(marks, 0, sizeof marks);
    int nmarks = 0;
    for (int p = 0; p < PERIODS; p++) {
        int64_t now = p * k->period;
        advance_all(r->s.n, now);
        if (fast) {
            if (nmarks == MARKS) { /* drop the oldest */
                ff_mark old = marks[0];
                memmove(marks, marks + 1, (MARKS - 1) * sizeof old);
                marks[--nmarks] = old;
            }
            coll_flush_bytes(r->s.c);
            ff_mark *m = &marks[nmarks];
            ff_sig(r, now, &m->sig);
            m->period = p;
            m->count = r->count;
            for (int l = 0; l < 2 * k->M; l++)
                m->bytes[l] = net_link_bytes(r->s.n, l);
            nmarks++;
            for (int j = nmarks - 2; j >= 0; j--) {
                const ff_mark *o = &marks[j];
                int d = p - o->period, n = (PERIODS - p) / d,
                    per = r->count - o->count;
                if (n == 0 || o->sig.len != m->sig.len ||
                    memcmp(o->sig.p, m->sig.p, m->sig.len))
                    continue;
                /* n repeats of the d periods since mark o: their
                 * completions, bytes and time */
                for (int x = 0; x < n * per; x++)
                    r->t[r->count + x] = r->t[o->count + x % per] +
                                         (x / per + 1) * (int64_t)d * k->period;
                r->count += n * per;
                for (int l = 0; l < 2 * k->M; l++)
                    net_link_bytes_add(r->s.n, l,
                                       (uint64_t)n *
                                           (m->bytes[l] - o->bytes[l]));
                net_shift(r->s.n, (int64_t)n * d * k->period);
                p += n * d;
                now = p * k->period;
                r->jumps++;
                nmarks = 0;
                break;
            }
            if (p >= PERIODS) break;
        }
        for (int i = 0; i < k->nsub; i++)
            ck_assert_int_eq(coll_submit(r->s.c, now, k->size[i], NULL,
                                         (uint64_t)i),
                             0);
    }
    advance_all(r->s.n, INT64_MAX);
    coll_flush_bytes(r->s.c);
    for (int i = 0; i < MARKS; i++) free(marks[i].sig.p);
}

/* Random worlds (sizes of links and latencies, algorithms, ring orders,
 * window limits, restart on and off, step overheads, periods shorter and
 * longer than the collectives, lazy stepping on and off, exclusive
 * streams): skipping repeated periods changes no instant, byte or peak. */
/* Runs case k (drawn from seed) whole and skipping repeats: the same
 * completions, bytes and peaks.  Returns whether it skipped any. */
static int ff_both_ways(const ff_case *k, uint64_t seed) {
    static ff_run a, b;
    ff_simulate(k, 0, &a);
    ff_simulate(k, 1, &b);
    ck_assert_int_eq(a.count, PERIODS * k->nsub);
    ck_assert_int_eq(b.count, a.count);
    for (int i = 0; i < a.count; i++)
        ck_assert_msg(a.t[i] == b.t[i],
                      "seed %d: completion %d at %lld, fast %lld", (int)seed, i,
                      (long long)a.t[i], (long long)b.t[i]);
    for (int l = 0; l < 2 * k->M; l++) {
        ck_assert_uint_eq(net_link_bytes(a.s.n, l), net_link_bytes(b.s.n, l));
        ck_assert(net_link_peak(a.s.n, l) == net_link_peak(b.s.n, l));
    }
    stream_free(&a.s);
    stream_free(&b.s);
    return b.jumps > 0;
}

START_TEST(fast_forward_is_exact) {
    int jumped = 0, jumped_tcp[2] = {0, 0};
    for (uint64_t seed = 1; seed <= 60; seed++) {
        ff_case k = ff_draw(seed);
        int j = ff_both_ways(&k, seed);
        jumped += j;
        jumped_tcp[k.tcp.restart_after_idle] += j;
    }
    ck_assert_int_ge(jumped, 20); /* the comparison is not empty */
    ck_assert_int_gt(jumped_tcp[0], 0);
    ck_assert_int_gt(jumped_tcp[1], 0);
}
END_TEST

/* The signature of a 2-member ring over TCP idle `idle` ns after one
 * collective of `bytes`. */
static void idle_signature(uint64_t bytes, int64_t idle, sig_buf *b) {
    stream s;
    stream_new(&s, 2, COLL_RING, NULL, &LINUX);
    one_collective(&s, 0, bytes, 1);
    advance_all(s.n, s.t[0] + idle);
    b->len = 0;
    coll_signature(s.c, b);
    ck_assert(!b->oom);
    stream_free(&s);
}

/* A connection's window and idle time are in the stream's signature, the
 * idle time only while it can still change a restart: 30 s and 60 s
 * after, both restart at W0. */
START_TEST(connection_signature) {
    const struct {
        uint64_t bytes[2];
        int64_t idle[2];
        int same;
    } cases[] = {{{1000000, 2000000}, {1000, 1000}, 0},
                 {{1000000, 1000000}, {1000, 2000}, 0},
                 {{1000000, 1000000}, {1000, 1000}, 1},
                 {{1000000, 1000000}, {30000000000, 60000000000}, 1},
                 {{1000000, 1000000}, {300000000, 600000000}, 0}};
    sig_buf b[2] = {{0}};
    for (int c = 0; c < 5; c++) {
        for (int k = 0; k < 2; k++)
            idle_signature(cases[c].bytes[k], cases[c].idle[k], &b[k]);
        int same = b[0].len == b[1].len && !memcmp(b[0].p, b[1].p, b[0].len);
        ck_assert_int_eq(same, cases[c].same);
    }
    free(b[0].p);
    free(b[1].p);
}
END_TEST

/* ---- a standing queue, ACKs and a set-up under TCP ----------------------- */

/* A standing queue Q adds to the round trip, not to the one-way wait: a
 * 2-member ring whose windows start at their limit W = 1 MB moves each
 * 100 MB chunk at W / (R + Q) (12.5 MB/s with Q = 30 ms, 20 MB/s without)
 * after a wait of L: 2 (L + 8 s) against 2 (L + 5 s). */
START_TEST(queue_window_limited) {
    const coll_tcp capped = {1e6, 1e6, 0.2, 1};
    const int64_t Q = 30000000;
    for (int q = 0; q < 2; q++) {
        stream s;
        stream_new(&s, 2, COLL_RING, NULL, &capped);
        coll_set_queue(s.c, q ? Q : 0);
        double rate = 1e6 * 1e9 / (double)(R + (q ? Q : 0));
        ck_assert(rate == (q ? 1.25e7 : 2e7));
        int64_t d = one_collective(&s, 0, 200000000, 1);
        ck_assert_int_eq(d, 2 * (L + ceil_ns(1e8 * 1e9 / rate)));
        ck_assert_int_eq(d, 2 * L + (q ? 16000000000 : 10000000000));
        stream_free(&s);
    }
}
END_TEST

/* Slow start's rounds are the longer round trip R + Q: a cold 2- and
 * 3-member ring as ring_at() with R + Q, its windows ending at B (R + Q);
 * and the RTO is R + Q + rto_min: a warm ring idle R + 200 ms + 1 ns
 * (past the RTO without the queue) keeps its windows, idle R + Q + 200 ms
 * + 1 ns halves them once. */
START_TEST(queue_slow_start_and_rto) {
    const int64_t Q = 20000000, rq = R + Q;
    for (int M = 2; M <= 3; M++) {
        stream s;
        stream_new(&s, M, COLL_RING, NULL, &LINUX);
        coll_set_queue(s.c, Q);
        double w = W0, S = 1e8 * M;
        int64_t cold = ring_at(M, S, &w, rq, B);
        ck_assert_int_eq(one_collective(&s, 0, (uint64_t)S, 1), cold);
        double w0 = W0;
        ck_assert_int_gt(cold, ring_by_hand(M, S, &w0)); /* longer rounds */
        int64_t warm = ring_at(M, S, &w, rq, B);
        ck_assert_int_eq(one_collective(&s, s.t[0], (uint64_t)S, 2), warm);
        ck_assert(coll_conn_window(s.c, 0, 1) == B * (double)rq / 1e9);
        int64_t sent = s.t[1] - L;
        w = B * (double)rq / 1e9;
        ck_assert_int_eq(one_collective(&s, sent + R + 200000001, (uint64_t)S,
                                        3),
                         ring_at(M, S, &w, rq, B));
        sent = s.t[2] - L;
        double half = coll_conn_window(s.c, 0, 1) / 2;
        int64_t halved = ring_at(M, S, &half, rq, B);
        ck_assert_int_gt(halved, warm);
        ck_assert_int_eq(one_collective(&s, sent + rq + 200000001, (uint64_t)S,
                                        4),
                         halved);
        stream_free(&s);
    }
}
END_TEST

/* ACKs under TCP: a 2-member ring's flows share every link with the
 * other's ACKs, so slow start ends at B / (1 + a) (a = 0.25: 1e9 bytes/s)
 * instead of B: ring_at() at that share, cold and warm, its windows ending
 * at B / (1 + a) R.  A set-up SU before slow start: the cold ring takes SU
 * longer, exactly (its first flows start at the initial window either
 * way), the warm one nothing. */
START_TEST(tcp_with_acks_and_startup) {
    const double a = 0.25, share = B / (1 + a);
    const int64_t SU = 3000000;
    for (int M = 2; M <= 3; M++) {
        stream s;
        stream_new(&s, M, COLL_RING, NULL, &LINUX);
        acks_on(s.n, M, a);
        double w = W0, S = 1e8 * M;
        ck_assert_int_eq(one_collective(&s, 0, (uint64_t)S, 1),
                         ring_at(M, S, &w, R, share));
        ck_assert(coll_conn_window(s.c, 0, 1) == share * (double)R / 1e9);
        ck_assert_int_eq(one_collective(&s, s.t[0], (uint64_t)S, 2),
                         ring_at(M, S, &w, R, share));
        stream_free(&s);

        int64_t d[2];
        for (int k = 0; k < 2; k++) {
            stream_new(&s, M, COLL_RING, NULL, &LINUX);
            coll_set_startup(s.c, k ? SU : 0, NULL);
            d[k] = one_collective(&s, 0, (uint64_t)S, 1);
            if (k) {
                w = coll_conn_window(s.c, 0, 1);
                ck_assert_int_eq(one_collective(&s, s.t[0], (uint64_t)S, 2),
                                 ring_by_hand(M, S, &w));
            }
            stream_free(&s);
        }
        ck_assert_int_eq(d[1], d[0] + SU);
    }
}
END_TEST

/* The fast-forward over a standing queue, ACKs and a set-up: random
 * worlds as fast_forward_is_exact, each with one, two or all three. */
START_TEST(fast_forward_new_keys) {
    int jumped = 0;
    for (uint64_t seed = 1; seed <= 36; seed++) {
        ff_case k = ff_draw(seed);
        int which = (int)(seed % 7) + 1; /* a non-empty set of the three */
        if (which & 1) k.startup = 4000000;
        if (which & 2) k.queue = 15000000;
        if (which & 4) k.ack = 0.0228;
        jumped += ff_both_ways(&k, seed);
    }
    ck_assert_int_ge(jumped, 10); /* the comparison is not empty */
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("tcp");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, slow_start_alone);
    tcase_add_test(tc, ends_in_slow_start);
    tcase_add_test(tc, shared_link_and_rising_share);
    tcase_add_test(tc, window_limit);
    tcase_add_test(tc, set_tcp_arguments);
    tcase_add_test(tc, tcp_signature_and_shift);
    tcase_add_test(tc, restart_rule);
    tcase_add_test(tc, ring_warm_and_cold);
    tcase_add_test(tc, restart_from_last_send);
    tcase_add_test(tc, restart_after_cancel);
    tcase_add_test(tc, star_and_all_to_all_connections);
    tcase_add_test(tc, step_overhead);
    tcase_add_test(tc, ring_order);
    tcase_add_test(tc, fast_forward_is_exact);
    tcase_add_test(tc, connection_signature);
    suite_add_tcase(s, tc);
    TCase *tk = tcase_create("queue_acks_startup");
    tcase_set_timeout(tk, 60);
    tcase_add_test(tk, queue_window_limited);
    tcase_add_test(tk, queue_slow_start_and_rto);
    tcase_add_test(tk, tcp_with_acks_and_startup);
    tcase_add_test(tk, fast_forward_new_keys);
    suite_add_tcase(s, tk);
    return s;
}

CHECK_MAIN(make_suite)
