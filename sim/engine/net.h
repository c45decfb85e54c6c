/*
 * net.h -- a flow-level model of the WAN.
 *
 * Links have a capacity in bytes per second (INFINITY for unbounded).  A
 * flow crosses zero, one or two links (a worker's up link and another's
 * down link).  It first waits its latency, moving nothing, then becomes
 * active; active flows share links max-min fairly (progressive filling),
 * each also capped by its own max rate (a fixed window over the round
 * trip, or INFINITY).  Rates are recomputed whenever a flow becomes
 * active, ends or is cancelled (or a TCP round boundary changes a cap), so
 * a flow's rate never exceeds any link it crosses and the sum of rates on
 * a link never exceeds its capacity.
 *
 * The net does not own the clock: the caller asks net_next_time() for the
 * next instant something happens, schedules it, and calls net_advance()
 * at that instant.  Completion instants are rounded up to whole
 * nanoseconds; one that cannot be represented (later than INT64_MAX ns)
 * is INT64_MAX, never.  Bytes are whole numbers (uint64_t): a link counts
 * exactly the sizes of the flows that completed over it, plus the whole
 * bytes moved by flows still running or cancelled.
 *
 * TCP (net_flow_set_tcp; docs/network.md): a flow may carry a congestion
 * window w of round trip R, a fluid slow start with no packets.  Its rounds
 * begin at its activation t_act and every R after; during a round its cap
 * is min(its own cap, min(w, max_window) / R) and it gets at most its
 * max-min share as any flow.  At each round boundary, by the rate and the
 * binding limit its last filling gave it: if its window's cap bound it
 * (below the fair share of each of its links by more than a relative 1e-9
 * of rounding, and below its own cap) w doubles, at most to max_window
 * (slow start); otherwise w becomes what it had in flight, rate R, and its
 * cap that rate.  There is no congestion avoidance and no loss: slow start
 * ends where the share binds.  A flow that moves nothing (rate 0) keeps
 * its window.  Boundaries that change a window or cap are instants of
 * net_next_time(); a flow settled at its share has none until its rate
 * changes.  A flow that ends inside a round while its window bound it
 * ends with that window plus what it sent in the round (the round's
 * acknowledgements, which arrive after its end).
 *
 * ACKs (net_set_ack; docs/network.md): a flow may also load the reverse
 * links of its links (its acknowledgements' path) with a coefficient a of
 * its rate.  The filling is then weighted: every flow's rate rises
 * together, with coefficient 1 on the links it crosses and a on those its
 * ACKs load, and a link is full when the sum of coefficient x rate
 * reaches its capacity.  Byte counters and peaks stay payload: what the
 * flows crossing a link moved.
 *
 * Timing is the receiver's: a flow's bytes move (and count) from t_act to
 * its completion, the instant its last byte arrives; its sender sent them
 * over the same span less its latency (the one-way latency, the part of
 * the wait that is propagation).  The net keeps no idle clock: restart
 * after idle is the connection's (collective.h), and it counts a
 * connection's idle time from its last transmission, its last flow's end
 * less that one-way latency, as Linux counts it from lsndtime.
 */
#ifndef DILOSIM_NET_H
#define DILOSIM_NET_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/msg.h"
#include "sim/engine/sig.h"

typedef struct net net;

/* A flow's owner: called by net_advance() when the flow completes, with
 * the context and tag given to net_flow_add (the tag is the owner's own:
 * the net only passes it back and puts it in its signature).  The flows
 * completing at one instant are reported in order of flow id, the
 * instants in order of time.  The callback may add or cancel flows. */
typedef void (*net_done_fn)(void *ctx, int64_t now, int flow, uint64_t tag);

/* A network of nlinks links, all of capacity 0 until set. NULL on OOM. */
net *net_new(int nlinks);
void net_free(net *n);

/* Sets the capacity of a link in bytes/s (> 0, or INFINITY). */
void net_link_set(net *n, int link, double bytes_per_s);

/* Sets count links at once: link[k] gets bytes_per_s[k] (> 0, or
 * INFINITY; a bad id or capacity is skipped; a later entry for the same
 * link wins), then the rates are recomputed once, so that no link ever
 * counts, even for no time, a rate of a state between the old capacities
 * and the new (a bandwidth trace's step, sim/engine/bwstep.c). */
void net_links_set(net *n, int count, const int *link,
                   const double *bytes_per_s);

/* Starts a flow of `bytes` at `now` over links link_a and link_b (each -1
 * for none), active after latency_ns (>= 0), at most max_bytes_per_s
 * (> 0, INFINITY for no cap), owned by done(ctx, ..., tag) (done NULL:
 * nobody is told when it completes).  Returns the flow id (>= 0), MSG_EINPUT for
 * a bad link id, latency or cap, or MSG_ENOMEM.  A flow with no bounded
 * link and no cap completes as soon as it is active. */
int net_flow_add(net *n, int64_t now, int64_t latency_ns, int link_a,
                 int link_b, uint64_t bytes, double max_bytes_per_s,
                 net_done_fn done, void *ctx, uint64_t tag);

/* Makes a flow that waits out its latency (added, not yet advanced past
 * t_act) a TCP connection's flow (see the top of this file): round trip
 * rtt_ns (> 0), window `window` bytes (> 0, finite; at most max_window),
 * window limit max_window (> 0, INFINITY for none).  Its cap becomes
 * min(its cap, min(window, max_window) / rtt).  Returns 0, or MSG_EINPUT
 * for a flow that is not waiting, a bad argument or a window whose cap is
 * not a positive number (the flow then stays as it was). */
int net_flow_set_tcp(net *n, int flow, int64_t rtt_ns, double window,
                     double max_window);

/* The window (bytes) of a TCP flow that is live, or that has completed and
 * whose done callback is under way (its window at completion); 0 for a
 * flow that is not TCP or an id not live. */
double net_flow_window(const net *n, int flow);

/* The net's clock: the instant of its last advance, add or cancel (moved
 * by net_shift).  net_signature() puts it relative to its now, so an
 * owner's instants relative to it are relative to that now too. */
int64_t net_now(const net *n);

/* The sum of every dt net_shift() has moved the net by.  An owner that
 * records an instant t of the net's time as t - net_shift_total() reads
 * it back, shifted as the net is, by adding net_shift_total() again. */
int64_t net_shift_total(const net *n);

/* Removes a flow that has not completed; the bytes it already moved stay
 * counted on its links. */
void net_flow_cancel(net *n, int64_t now, int flow);

/* The next instant (ns) at which a flow activates or completes, or a TCP
 * flow's round boundary changes its window, or INT64_MAX when nothing is
 * pending. */
int64_t net_next_time(const net *n);

/* Brings the net to `now` (>= every earlier call's now): activates and
 * completes what is due, calling each completed flow's done callback. */
void net_advance(net *n, int64_t now);

/* The ns a flow of `bytes` (> its tolerance) moving alone at `rate`
 * bytes/s takes from its activation to its completion, rounded as the
 * net rounds every completion (up, with a slack far below 1 ns): 0 for an
 * infinite rate, INT64_MAX when it never ends.  The closed forms of the
 * engine that stand for flows (a site's inside collectives) use it. */
int64_t net_transfer_ns(double bytes, double rate);

/* Whole bytes that have crossed a link so far (up to the last
 * advance/add/cancel). */
uint64_t net_link_bytes(const net *n, int link);

/* The highest total rate (bytes/s) a link has carried at any instant. */
double net_link_peak(const net *n, int link);

/* The current rate (bytes/s) of a live flow: 0 while it waits out its
 * latency, INFINITY when nothing bounds it; 0 for an id not live. */
double net_flow_rate(const net *n, int flow);

/* Number of flows not yet completed or cancelled (a flow given a count
 * by net_flow_set_count counts that many times). */
int net_active_flows(const net *n);

/* Makes a live flow stand for `count` (>= 1) alike flows whose bytes its
 * owner accounts for: net_active_flows() counts it count times; nothing
 * else changes.  Ignored for an id not live or a count < 1. */
void net_flow_set_count(net *n, int flow, int count);

/* Whole bytes a live flow has moved (up to the last advance/add/cancel);
 * 0 for an id not live. */
uint64_t net_flow_counted(const net *n, int flow);

/* A link's capacity in bytes/s (INFINITY for unbounded); 0 for a link
 * never set or a bad id. */
double net_link_capacity(const net *n, int link);

/* Whether a flow whose rate stays the same may go unstepped between the
 * instants that need its bytes (on by default).  Off, every active flow is
 * stepped at every instant the net stops at; the results are the same bit
 * for bit either way (tests compare the two). */
void net_set_lazy(net *n, int on);

/* Declares that flow ids cannot steer the future: the caller guarantees
 * that no two live flows will cross one link at the same time and that
 * what its done callbacks do at one instant does not depend on the order
 * in which they come.  Two such nets whose flows differ only in their
 * ids have the same future up to a renaming, so net_signature() leaves
 * ids out.  Should a link ever be crossed by two live flows, the net goes
 * back to signatures with ids for good.  Ignored with ACKs (net_set_ack:
 * their loads share links). */
void net_set_anonymous(net *n);

/* Acknowledgements: every flow over links (a, b) also loads the links
 * partner[b] and partner[a] (partner: nlinks entries, each a link id or
 * -1 for none; copied) with coef x its rate, as its ACKs do on the
 * reverse path (a flow from worker i to j: up(j) and down(i)).  coef 0
 * turns them off (partner may then be NULL).  Call while no flow is live;
 * the net's signatures then keep flow ids (net_set_anonymous is
 * ignored).  Returns 0, MSG_EINPUT (live flows, coef not >= 0 or not
 * finite, a bad partner) or MSG_ENOMEM, the net unchanged on failure. */
int net_set_ack(net *n, double coef, const int *partner);

/* The ACK coefficient net_set_ack() set (0: none). */
double net_ack(const net *n);

/* Appends to b (sig.h) a byte string that is equal for two nets exactly
 * when their futures are the same up to a shift of time: every live flow
 * in live order with its id, state, links, count, bytes, counted, the
 * bits of remaining, rate and cap, its tag, t_act - now and t_done - now
 * (INT64_MAX stays INT64_MAX), and for a TCP flow its round trip, window,
 * window limit, own cap, binding limit and t_round - now (its next round
 * boundary that changes something); the free-id stack; nflows; net->next - now;
 * and the rest of what steers the future (link capacities, which flows are
 * in a component that must be refilled globally, the ACK coefficient and
 * partners).  After
 * net_set_anonymous() (and while no link has been shared), up to a
 * renaming of flow ids too: the live flows without their ids, in an order
 * of their own, and no free-id stack or nflows.  Link byte counters and
 * peaks are left out: they add up. */
void net_signature(const net *n, int64_t now, sig_buf *b);

/* Moves every instant of the net (its now, next, every live flow's t_act,
 * t_done and round boundary that are not INT64_MAX) forward by dt ns
 * (dt >= 0; the caller guarantees no overflow). */
void net_shift(net *n, int64_t dt);

/* Adds `bytes` to link's byte counter (a skipped stretch's traffic); a
 * bad link id is ignored. */
void net_link_bytes_add(net *n, int link, uint64_t bytes);

#endif
