/*
 * probe.c -- one transfer on a fresh network (probe.h), moved by the very
 * net and collective stream a run would build: world_wire_net wires them
 * (world.c), so every key a run's network honours is honoured here too.
 *
 * A transfer from worker 0 to worker 1 is not a collective, but one step
 * of a star is: its gather sends S bytes from every member to the hub.
 * So the probe wires a world of s + 1 workers for s streams: senders
 * 0..s-1, each with worker 0's latency and 1/s of its links, and the
 * receiver s, the star's hub (first in the ring order), with worker 1's
 * links and latency; it submits one star all-reduce of ceil(bytes / s)
 * bytes and stops when the hub has the gather (coll_set_member_done: a
 * star's hub, once its gather ends).  Each sender's flow is then one
 * stream, with its own TCP connection (sender, hub) of round trip
 * lat(0 -> 1) + lat(1 -> 0) (and the queue).  The s streams of the test
 * share up(0) and down(1), their ACKs up(1) and down(0); here they share
 * down(hub) and up(hub), and each has up(0) / s and down(0) / s to
 * itself.  Max-min gives the same rates: the streams are alike (same
 * bytes, same start, same windows), so each gets the same share of each
 * link in both worlds, at every instant.  The step overhead is set to 0
 * (no collective's software cost in an iperf3 test), and so is the set-up
 * of a pair's first transfer (iperf3 starts its clock once its
 * connections are up).
 */
#include "sim/engine/probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/engine/world.h"

typedef struct {
    world W;         /* first: the stream's callbacks get &W */
    int hub;         /* the receiver's worker id */
    int64_t done_at; /* when the hub had the gather; -1 not yet */
} probe_world;

/* The stream's member-done callback: the hub has every stream's bytes. */
static void hub_done(void *ctx, int64_t now, uint64_t tag, int worker) {
    probe_world *P = ctx;
    (void)tag;
    if (worker == P->hub && P->done_at < 0) P->done_at = now;
}

/* The probe's world of s senders and a hub from workers 0 and 1 of c. */
static void probe_config(const scn_config *c, int s, scn_config *p) {
    *p = *c;
    int M = s + 1;
    p->workers = M;
    for (int i = 0; i < M; i++) {
        int from = i < s ? 0 : 1; /* the worker of c it stands for */
        p->up_gbps[i] = i < s ? c->up_gbps[0] / s : c->up_gbps[1];
        p->down_gbps[i] = i < s ? c->down_gbps[0] / s : c->down_gbps[1];
        p->latency_ms[i] = c->latency_ms[from];
        p->ring_order[i] = i ? i - 1 : s; /* the hub first */
        for (int j = 0; p->has_latency_matrix && j < M; j++)
            p->latency_matrix_ms[i * M + j] =
                c->latency_matrix_ms[from * c->workers + (j < s ? 0 : 1)];
    }
    p->has_ring_order = 1;
    p->collective = COLL_STAR;
    p->collective_overhead_ms = 0;
    p->startup_ms = 0; /* iperf3 times its test once its connections are up */
}

/* Moves the probe's one star gather; *ns its duration. */
static int probe_run(probe_world *P, uint64_t S, int64_t *ns, char *err,
                     size_t errlen) {
    world *W = &P->W;
    int rc = world_wire_net(W);
    if (!rc) rc = coll_set_member_done(W->coll, hub_done);
    if (!rc) rc = coll_submit(W->coll, 0, S, NULL, 0);
    if (rc) return msg_set(err, errlen, rc, "out of memory");
    while (P->done_at < 0) {
        int64_t t = net_next_time(W->net);
        if (t == INT64_MAX || t > RUN_TIME_MAX_NS)
            return msg_set(err, errlen, MSG_EINPUT, "the transfer %s",
                           t == INT64_MAX ? "never ends" : "ends past 2^62 ns");
        net_advance(W->net, t);
    }
    *ns = P->done_at;
    return 0;
}

int probe_stream(const scn_config *c, uint64_t bytes, int streams, int64_t *ns,
                 char *err, size_t errlen) {
    if (c->workers < 2)
        return msg_set(err, errlen, MSG_EINPUT,
                       "a stream needs two workers (workers.count is %d)",
                       c->workers);
    if (bytes == 0 || streams < 1 || streams > PROBE_MAX_STREAMS)
        return msg_set(err, errlen, MSG_EINPUT,
                       "a stream of %llu bytes over %d connections (expected "
                       "bytes >= 1 and 1..%d connections)",
                       (unsigned long long)bytes, streams, PROBE_MAX_STREAMS);
    if (c->has_latency_matrix && streams + 1 > SCN_MAX_MATRIX)
        return msg_set(err, errlen, MSG_EINPUT,
                       "%d connections with a latency matrix (expected at "
                       "most %d)",
                       streams, SCN_MAX_MATRIX - 1);
    scn_config *p = malloc(sizeof *p);
    probe_world *P = calloc(1, sizeof *P);
    int M = streams + 1, rc = MSG_ENOMEM;
    if (p && P) {
        probe_config(c, streams, p);
        P->W.cfg = p;
        P->W.M = M;
        P->hub = streams;
        P->done_at = -1;
        P->W.lat = calloc((size_t)M * M, sizeof *P->W.lat);
        /* the stream's callbacks into the engine may read the reduction
         * its tag names (0): one, idle */
        P->W.red = calloc(1, sizeof *P->W.red);
        uint64_t S = bytes / (uint64_t)streams +
                     (bytes % (uint64_t)streams != 0); /* rounded up */
        rc = P->W.lat && P->W.red ? probe_run(P, S, ns, err, errlen)
                                  : MSG_ENOMEM;
    }
    if (rc == MSG_ENOMEM) msg_set(err, errlen, rc, "out of memory");
    if (P) {
        if (P->W.coll) coll_free(P->W.coll);
        if (P->W.net) net_free(P->W.net);
        free(P->W.lat);
        free(P->W.red);
    }
    free(P);
    free(p);
    return rc;
}
