/*
 * collective.h -- all-reduce of one worker group, as flows on the net.
 *
 * Worker i owns net links 2*i (up: what it sends) and 2*i+1 (down: what it
 * receives); a flow from i to j crosses up(i) and down(j) after the
 * latency lat_ns[i*nworkers + j].
 *
 * Algorithms, for S bytes among M members (in ring order: increasing
 * worker id unless coll_set_order says otherwise):
 *   ring        2(M-1) steps; in each step every member sends one chunk
 *               (about S/M bytes) to its successor; a step ends when all
 *               its flows end.  Bytes sent by each member: about
 *               2(M-1)/M * S; by the group exactly 2(M-1) S.
 *   all_to_all  reduce-scatter as an all-to-all (every member sends a
 *               chunk to every other at once), then all-gather the same
 *               way.  Same bytes as the ring, latency paid twice.
 *   star        gather: every member but the first sends S to the first
 *               (the hub); then broadcast: the first sends S to every other.
 * A group of one member completes at once, sending nothing.
 * Bytes are whole: chunk i of S is coll_chunk_bytes(S, M, i) =
 * floor((i+1)S/M) - floor(iS/M), so the chunks sum to S exactly (which
 * member sends which chunk when is in collective.c).
 *
 * The collectives of one group run one at a time in FIFO order (one
 * communication stream).  Completion is reported through the callback
 * given to coll_new, always from inside net_advance() (never from
 * coll_submit), so the caller never sees re-entrant completions.
 *
 * TCP (coll_set_tcp; docs/network.md).  Every flow from i to j is then a
 * flow of the connection (i, j), with round trip RTT = lat(i -> j) +
 * lat(j -> i) + the standing queue (coll_set_queue; 0 unless set), whose
 * window the net grows by slow
 * start (net.h).  Connections persist between flows, steps and
 * collectives: each keeps the window its last flow ended with and the
 * instant its sender last sent data, Linux's lsndtime: the flow's end
 * (completion or cancel, when the net has its last byte at the receiver)
 * less the one-way latency lat(i -> j).  A flow cancelled before it was
 * active sent nothing and leaves its connection as it was.  A flow starts
 * with the window of its connection: the initial window if the connection
 * never carried a flow; else, with restart_after_idle, Linux's
 * tcp_cwnd_restart() (net/ipv4/tcp_output.c, called by
 * tcp_slow_start_after_idle_check() when the idle time exceeds the RTO)
 * on the idle time delta since that last transmission, taken at the
 * instant the flow's sender starts (its step's start plus the step
 * overhead), so delta = start - (end of the last flow - lat(i -> j)):
 * if delta > RTO, restart = min(init, w); halve w once per RTO while
 * (delta -= RTO) > 0 and w > restart; w = max(w, restart)
 * (coll_tcp_restart).  Linux's RTO is srtt + rttvar (__tcp_set_rto,
 * include/net/tcp.h) with rttvar kept at or above TCP_RTO_MIN
 * (tcp_rtt_estimator, net/ipv4/tcp_input.c); with a constant RTT the
 * variance is nil and the floor binds, so RTO = RTT + rto_min here: the
 * simplification is that the estimator's warm-up is left out.  Linux
 * halves a whole number of segments; here bytes, exactly.  A pair whose
 * RTT is 0 runs as without TCP (no slow start).
 *
 * Step overhead (coll_set_step_overhead): every step's flows wait the
 * overhead before their latency (a single-member collective has no steps
 * to pay it: it still completes at once).
 *
 * Connection set-up (coll_set_startup): the first flow over each ordered
 * pair (i, j) waits the set-up after the step overhead and before its
 * latency; later flows over the pair do not.  The pair counts as set up
 * from that flow's start; should the flow be cancelled before its set-up
 * is over, the pair is as never set up.  A member removed
 * (coll_remove_member: it failed) loses every pair it is part of, both
 * ways: a repaired worker's process opens new connections, and the
 * survivors' ring around it uses a new pair.  Under TCP the set-up delays
 * the sender's start, at which the restart after idle is taken.
 *
 * The life of a reduction, the functions it goes through in order (the
 * static ones are collective.c's; the engine's side is in worker.c and
 * sync.c: an op completes, worker_op_done -> arrive_next -> sync_arrive; the last
 * member's arrival, reduction_submit -> stream_kick -> coll_submit):
 *   coll_submit        queues the job (its bytes, tag and member mask);
 *   start_next         if the stream is idle, the head job starts:
 *   restart_head       its members in ring order, its steps, whether an
 *                      exclusive ring takes the shortcut (alike_ring);
 *   launch_step        the flows of the current step, by algorithm:
 *   add_flow, start_flow  net_flow_add with the stream's own callback
 *                      (flow_done, context the stream, tag tag_base + k),
 *                      and under TCP net_flow_set_tcp with the window of
 *                      its connection (conn_window: restart after idle).
 * Then the net runs (the engine's event loop calls net_advance at the
 * instants net_next_time gives); when a flow ends,
 *   net_advance -> process_instant (net.c) calls flow_done directly:
 *   flow_done          flow k of the step is over: under TCP, conn_close
 *                      (the connection keeps its window and last send);
 *                      with coll_set_member_done, members_done ->
 *                      member_has_it -> the member-done callback (the
 *                      engine's sync_member_done) for each member that now
 *                      has all of its result; once the step's last flow
 *                      is over, launch_step for the next step, or after
 *                      the last one
 *   finish_head        end_alike (the shortcut's bytes onto the net's
 *                      counters), the job leaves the queue, the done
 *                      callback given to coll_new (the engine's
 *                      sync_coll_done -> reduction_done, stream_kick: the
 *                      next reduction may be submitted from inside it),
 *                      then start_next for the next queued job.
 * A member removed on the way (coll_remove_member) cancels the step
 * (cancel_step) and goes back to restart_head; coll_clear cancels it
 * without callbacks.
 */
#ifndef DILOSIM_COLLECTIVE_H
#define DILOSIM_COLLECTIVE_H

#include <stdint.h>
#include "sim/config/kinds.h" /* coll_algo and its names */
#include "sim/engine/fabric.h"
#include "sim/engine/net.h"
#include "sim/engine/sig.h"

/* TCP parameters of a stream's connections (coll_set_tcp). */
typedef struct {
    double init_window_bytes; /* window of a new or restarted connection, > 0
                                 (Linux: 10 segments of 1448 bytes = 14480) */
    double
        max_window_bytes; /* the window limit (socket buffers), INFINITY none */
    double rto_min_s;     /* Linux's TCP_RTO_MIN, 0.2 */
    int restart_after_idle; /* 1: tcp_slow_start_after_idle */
} coll_tcp;

/* The largest step overhead (ns) coll_set_step_overhead() keeps: 2^60
 * (also the largest set-up and queue). */
#define COLL_OVERHEAD_MAX ((int64_t)1 << 60)

typedef struct coll coll;

/* Called when a member of the running collective has all of its result
 * (coll_set_member_done), with the collective's tag and the worker. */
typedef void (*coll_member_fn)(void *ctx, int64_t now, uint64_t tag,
                               int worker);

/* Called when a collective completes, with the tag it was submitted with. */
typedef void (*coll_done_fn)(void *ctx, int64_t now, uint64_t tag);

/* Called with coll_new's context once a flow that paid the set-up of pair
 * (src, dst) ends: the set-up wait ran over [t0, t1) (t1 earlier than the
 * full set-up for a flow cancelled during it), for the collective of that
 * tag.  Once per sender and step: the first of its flows that ends (a
 * star's hub sets up all of its broadcast's pairs over the same span). */
typedef void (*coll_startup_fn)(void *ctx, uint64_t tag, int src, int dst,
                                int64_t t0, int64_t t1);

/* A stream over net n for nworkers workers.  lat_ns (nworkers^2 entries)
 * is copied; max_flow_bytes_per_s caps every flow (INFINITY: no cap).
 * The stream owns its flows on the net (net_flow_add's callback: the net
 * reports their completions to the stream itself); they carry the tags
 * tag_base + k, k < nworkers^2, which the net's signature includes: the
 * other owners of flows on the same net (streams, downloads) keep their
 * tags out of that range. */
coll *coll_new(net *n, int nworkers, coll_algo algo, const int64_t *lat_ns,
               double max_flow_bytes_per_s, uint64_t tag_base,
               coll_done_fn done, void *ctx);
void coll_free(coll *c);

/* Queues an all-reduce of `bytes` among the members (a bitmask array of
 * nworkers bytes, nonzero = member, copied).  Returns 0, or MSG_ENOMEM
 * (sim/base/msg.h). */
int coll_submit(coll *c, int64_t now, uint64_t bytes, const uint8_t *members,
                uint64_t tag);

/* Bytes of chunk i (0 <= i < m) when S bytes are split m ways (m >= 1):
 * floor((i+1)S/m) - floor(iS/m); the m chunks sum to S. */
uint64_t coll_chunk_bytes(uint64_t S, int m, int i);

/* A member has failed: queued collectives drop it; the running one, if it
 * includes the worker, restarts from its first step among the remaining
 * members (bytes already moved stay counted). */
void coll_remove_member(coll *c, int64_t now, int worker);

/* Cancels the running collective and drops every queued one, without
 * completion callbacks. */
void coll_clear(coll *c, int64_t now);

/* Collectives queued or running. */
int coll_pending(const coll *c);

/* The caller guarantees that, from now on, the stream is the only user of
 * its net (no other stream, no other flow, no net_link_set) and that it
 * never calls coll_remove_member() or coll_clear().  A ring whose flows
 * all get the same rate and latency then runs every step after its first
 * as one flow per chunk size (at most two), with the same instants, bytes
 * and peaks as M flows; the bytes of those steps reach the net's link
 * counters at the end of the collective or at coll_flush_bytes().  A ring
 * stream also makes the net's signatures leave flow ids out
 * (net_set_anonymous). */
void coll_set_exclusive(coll *c);

/* Sites of many accelerators (workers.sites; docs/network.md): worker i
 * is a site of sites[i].n accelerators on the fabric sites[i] (nw
 * entries, copied; NULL: none, the default).  Each job of S bytes then
 * runs, among its members in ring order:
 *   hierarchical (ring 0)  a first step standing for the reduce-scatter
 *       inside every member site, the job's algorithm among the sites,
 *       and a last step for the all-gather inside: each inside step is
 *       one flow on no link, of no bytes, whose latency is the largest
 *       member's fabric_half_ns(S) (none when that is 0: every member a
 *       site of one);
 *   ring (ring 1)  one ring over the T accelerators of the members, site
 *       after site: 2(T-1) steps; in step s the last accelerator of each
 *       member site (ring position p) sends chunk (p - s) mod T (all-
 *       gather: (p + 1 - s) mod T) of coll_chunk_bytes(S, T, .) over the
 *       WAN to the next site, and the step lasts at least the largest
 *       member's fabric_step_ns(ceil(S / T)) (one more flow on no link),
 *       the steps inside the sites (the ring algorithm only).
 * With sites the exclusive shortcut is not taken, and member completion
 * (coll_set_member_done) is not supported.
 * closed (ring): the caller guarantees that each ring step's WAN flows
 * are alone on their links for the whole job (no other flow on the net,
 * no capacity change, no member removed, no coll_clear) and the stream
 * has no TCP and the net no ACKs.  Each flow k of a step then moves at
 * its lone rate r_k (its cap and its two links) after its latency L_k,
 * so a step lasts max_k (L_k + net_transfer_ns(chunk_k, r_k)), at least
 * the floor: the steps after the first (which runs as flows: the links'
 * peaks, the set-ups) run as one flow on no link of their summed
 * durations, and their bytes reach the link counters when the job ends.
 * Returns 0 or MSG_ENOMEM. */
int coll_set_sites(coll *c, const fabric *sites, int ring, int closed);

/* Brings the net's link counters up to every byte the stream has moved
 * so far (call it before reading them while a collective runs). */
void coll_flush_bytes(coll *c);

/* Appends the stream's state (sig.h): with TCP, every connection's window
 * and the time since it last sent data, relative to the net's clock
 * (net_now: net_signature puts that relative to its now), left out once
 * more idle time can no longer change its restart (restart off, or
 * coll_tcp_restart already at its floor min(init, window)); the queued
 * jobs with their members, the running collective's members, step,
 * whether it takes the shortcut, and which flows of its step are still
 * running (their ids, instants and windows are in the net's signature:
 * flow k carries tag tag_base + k); with a set-up, which pairs are set up
 * and which flows of the step pay it. */
void coll_signature(const coll *c, sig_buf *b);

/* Makes every flow of the stream a TCP connection of the ordered pair
 * (src, dst) with the given parameters (copied; see the top of this file);
 * call before the first coll_submit.  Connections persist between
 * collectives of the stream (a ring reuses its neighbour's connection).
 * Every connection starts as never used.  NULL turns TCP off; parameters
 * out of range (init_window_bytes not > 0 or not finite, max_window_bytes
 * not > 0, rto_min_s not in [0, 1e9]) leave the stream as it was.  An
 * exclusive ring (coll_set_exclusive) does not take its shortcut under
 * TCP: its steps run as M flows. */
void coll_set_tcp(coll *c, const coll_tcp *t);

/* A fixed software cost per collective step (kernel launches, handshakes):
 * every step's flows start `ns` after the step begins (>= 0; 0 = today;
 * negative is ignored, more than COLL_OVERHEAD_MAX is that). */
void coll_set_step_overhead(coll *c, int64_t ns);

/* A one-time cost of each ordered pair's first flow (communicator set-up,
 * connection establishment; see the top of this file): `ns` (>= 0; 0 =
 * none; negative is ignored, more than COLL_OVERHEAD_MAX is that), each
 * wait reported to fn (NULL: nobody).  Every pair starts as never set up.
 * Returns 0 or MSG_ENOMEM (nothing changes). */
int coll_set_startup(coll *c, int64_t ns, coll_startup_fn fn);

/* A standing queue at the bottleneck: `ns` (>= 0; negative is ignored,
 * more than COLL_OVERHEAD_MAX is that) added to every TCP round trip,
 * and so to slow start's rounds, the window's cap and the RTO; a flow
 * still waits only its one-way latency before its first byte.  Without
 * TCP it changes nothing.  Call before the first coll_submit. */
void coll_set_queue(coll *c, int64_t ns);

/* The ring order: a permutation of 0..nworkers-1 (copied); a ring's member
 * k sends to the next member in this order (default: increasing worker
 * id); star's hub is the first member in this order.  Takes effect at the
 * next collective that starts (or restarts).  NULL is the default order.
 * Returns 0, MSG_EINPUT for a non-permutation (nothing changes), or
 * MSG_ENOMEM. */
int coll_set_order(coll *c, const int *order);

/* The window a connection of round trip rtt_ns whose last flow ended with
 * `window` bytes starts its next flow with, idle_ns after it last sent
 * data (see the top of this file): Linux's
 * tcp_cwnd_restart() with RTO = rtt + rto_min when t->restart_after_idle
 * and idle_ns > RTO (see the top of this file), else `window`. */
double coll_tcp_restart(const coll_tcp *t, int64_t rtt_ns, double window,
                        int64_t idle_ns);

/* The window connection (i, j) keeps: the one its last flow ended with,
 * the initial window if it never carried one; 0 without TCP or for a bad
 * pair. */
double coll_conn_window(const coll *c, int i, int j);

/* Reports to fn (NULL: off, the default) each member of a collective at
 * the instant it has all of its result, before the collective's done
 * callback: a ring's member when its last incoming flow (of the last
 * all-gather step) ends; a star's hub when its gather ends, every other
 * member when the hub's broadcast to it ends; an all-to-all's member when
 * the last of its incoming all-gather flows ends; a single member at
 * once.  A collective restarted by coll_remove_member reports its members
 * again.  A stream with fn does not take the exclusive ring's shortcut.
 * Returns 0 or MSG_ENOMEM. */
int coll_set_member_done(coll *c, coll_member_fn fn);

#endif
