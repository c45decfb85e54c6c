/*
 * net.c -- the flow-level WAN model: links, flows, max-min fair sharing.
 *
 * State lives in flat arrays.  Flows are slots in `flows`, addressed by
 * their id; the ids of live flows (waiting out their latency, or active)
 * are kept densely in `live` so every pass touches only what is alive.
 * Freed ids go on a stack and are reused, so ids stay small and arrays
 * stop growing once the load is steady.
 *
 * Between two events every active flow moves at a constant rate, so the
 * net keeps one clock (`now`): net__step_to() moves bytes up to an instant
 * (net_step.c), net__share() recomputes the rates (progressive filling,
 * net_share.c) and, from them, each flow's completion instant; next_time
 * is cached after every change.  The other files: net_int.h.
 *
 * A flow carries its owner's done callback (function, context, tag), given
 * at net_flow_add: process_instant() calls it directly for each flow that
 * completes, so the net needs no demultiplexer above it.
 *
 * TCP flows (net_tcp.c) add round boundaries to the
 * instants: a flow is due at min(t_done, t_round) once active, and at an
 * instant the boundaries due are taken after the completions and the
 * activations, in live order, before the rates are recomputed, so each
 * boundary judges the round by the rate the round ran at.  A new cap seeds
 * the flow's component like any change (but for a cap that comes down to
 * the flow's rate, which changes no rate); after every filling each
 * refilled TCP flow's next boundary is found again.  Lazy stepping is
 * untouched: a cap that changes a rate ends the flow's segment as any rate
 * change does.
 *
 * Choices the header leaves open (what a simulation user would expect):
 *  - net_link_set() on a busy net takes effect at the instant the net was
 *    last brought to (its last advance/add/cancel): rates are recomputed
 *    there.  Invalid capacities (NaN, <= 0) and bad link ids are ignored.
 *    net_links_set() changes several links at that instant with one
 *    filling, as if they had changed together.
 *  - net_flow_add() returns MSG_EINPUT for invalid arguments (bad link
 *    id, negative latency, NaN or <= 0 cap) and MSG_ENOMEM when out of
 *    memory.  A flow whose two links are the same link crosses it once.
 *  - Bytes are whole: a flow moves an integer number of bytes, and a
 *    link's count is the sum, over its flows, of the whole bytes each has
 *    moved (the fractional part of what a flow moved so far is counted
 *    when the next byte completes, so a completed flow counts exactly its
 *    size and a cancelled one the whole bytes it moved).
 *  - Completion instants never overflow: a completion that would come
 *    later than INT64_MAX ns (a rate so low that bytes/rate is not even a
 *    finite number) is INT64_MAX, "never"; the caller decides what a run
 *    that waits forever means.
 *  - A `now` earlier than the net's clock is taken as the net's clock.
 *    Callers should bring the net to `now` with net_advance() before adding
 *    or cancelling at `now`, as the simulator does.
 *  - A flow that moves its bytes in no time (no bounded link and no cap,
 *    or nothing to move) has no finite rate: its bytes count on its links
 *    but not towards their peak rate.
 *  - A flow over a link of capacity 0 (never set) gets rate 0 and never
 *    completes; it still counts as live.
 *  - A done callback must not call net_advance() or net_free().  Ids of
 *    the flows completed at one instant are released only after all their
 *    callbacks ran, so a flow added from a callback never takes the id of
 *    a completion still being reported.  A flow added from a callback that
 *    completes at that same instant (latency 0 and nothing to move, or no
 *    bound on its rate) is reported after the callbacks already under way,
 *    so (time, id) order holds among the flows that existed before.
 */
#include "sim/engine/net_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"

static int valid_link(const net *n, int l) {
    return l >= -1 && l < n->nlinks;
}

static void count_bytes(net *n, const flow *f, uint64_t b) {
    for (int k = 0; k < 2; k++)
        if (f->link[k] >= 0) n->links[f->link[k]].bytes += b;
}

static int any_flow(const net *n, const flow *f) {
    (void)n, (void)f;
    return 1;
}

static int done_by_now(const net *n, const flow *f) {
    return f->t_done <= n->now;
}

/* Ends flow id at the current instant: whatever residue it had left counts
 * as moved, it leaves the live set and joins the batch to report. */
static void finish(net *n, int id) {
    flow *f = &n->flows[id];
    if (f->rtt != 0) net__tcp_last_round(n, f);
    count_bytes(n, f, f->bytes);
    eager_remove(n, id);
    f->lazy = 0;
    f->remaining = 0;
    f->state = FLOW_DONE;
    net__live_remove(n, id);
    n->batch[n->nbatch++] = id;
}

/* The positions of the cnt marked flows ids[] into n->order, ascending. */
static void found_positions(net *n, const int *ids, int cnt) {
    for (int i = 0; i < cnt; i++) n->order[i] = n->flows[ids[i]].pos;
    net__sort_ints(n->order, cnt);
}

/* Visits the marked flows at the positions n->order[0..cnt) as a scan of
 * live from position 0 would: visit(n, id) returns 1 when it removed the
 * flow (the last live flow then moves into its place, and the scan looks
 * at that place again: if the moved flow is marked, it is visited next).
 * Unmarks them. */
static void visit_in_live_order(net *n, int cnt, int (*visit)(net *, int)) {
    int lo = 0, hi = cnt - 1;
    while (lo <= hi) {
        int p = n->order[lo], id = n->live[p];
        n->flows[id].marked = 0;
        if (!visit(n, id)) {
            lo++;
            continue;
        }
        int from = n->nlive; /* where the flow now at p came from */
        if (from != p && hi > lo && n->order[hi] == from)
            hi--; /* a marked flow moved into p: visited next */
        else lo++;
    }
}

static int finish_due(net *n, int id) {
    net__links_leave(n, id);
    finish(n, id);
    return 1;
}

/* A waiting flow becomes active; one with nothing to move, or no bound on
 * its rate, finishes at once (returns 1). */
static int activate(net *n, int id) {
    flow *f = &n->flows[id];
    f->state = FLOW_ACTIVE;
    f->rate = 0;
    f->seg_rate = NAN; /* its first filling begins a segment */
    f->t_done = INT64_MAX;
    int ls[4];
    if (f->remaining <= tolerance(f) ||
        (isinf(f->cap) && ack_links(n, f, ls, bounded_links(n, f, ls)) == 0)) {
        finish(n, id);
        return 1;
    }
    due_update(n, id);
    links_join(n, id);
    return 0;
}

/* Finishes the active flows due at t (t_done <= t, or at or under
 * tolerance), then activates the waiting flows due at t, then takes the
 * round boundaries due at t, each in the order a scan of the live flows
 * meets them (that order is the live order the rest depends on).  Returns
 * how many changed (a boundary counts when it changed a cap). */
static int process_due(net *n, int64_t t) {
    int count = 0, seeds = n->nseeds;
    if (!n->heaped) { /* the scans themselves */
        for (int i = 0; i < n->nlive;) {
            int id = n->live[i];
            if (n->flows[id].state == FLOW_ACTIVE &&
                done_due(&n->flows[id], t)) {
                finish_due(n, id); /* moves the last live flow into slot i */
                count++;
            } else {
                i++;
            }
        }
        for (int i = 0; i < n->nlive;) {
            int id = n->live[i];
            const flow *f = &n->flows[id];
            if (f->state != FLOW_WAITING || f->t_act > t) {
                i++;
                continue;
            }
            count++;
            if (!activate(n, id)) i++;
        }
        for (int i = 0; i < n->nlive && n->ntcp > 0; i++) {
            const flow *f = &n->flows[n->live[i]];
            if (f->state == FLOW_ACTIVE && f->t_round <= t)
                net__round_due(n, n->live[i]);
        }
        return count + (n->nseeds > seeds);
    }
    int nf, na, nr;
    net__gather_due(n, t, &nf, &na, &nr);
    found_positions(n, n->found, nf);
    visit_in_live_order(n, nf, finish_due);
    found_positions(n, n->found_act, na);
    visit_in_live_order(n, na, activate);
    found_positions(n, n->found_round, nr);
    visit_in_live_order(n, nr, net__round_due);
    return nf + na + (n->nseeds > seeds);
}

/* Processes one instant t (the cached next instant): completes what is
 * due, activates what is due, recomputes the rates, then reports the
 * completions in id order and releases their ids.  The cached next instant
 * is the exact least t_act, t_done or t_round of a live flow, so at least
 * one flow changes here (a round boundary that changes no cap moves its
 * t_round on) and net_advance() always makes progress. */
static void process_instant(net *n, int64_t t) {
    net__step_to(n, t);
    n->nbatch = 0;
    int changed = process_due(n, t);
    if (!changed) /* round boundaries only, that changed no cap */
        net__update_next(n);
    while (changed) {
        net__share(n);
        /* after net__share() only a flow it gave t_done <= t can be due: lazy
         * ones are proven, eager ones at or under tolerance got now, and
         * nothing waits for t any more */
        changed = n->due_now ? process_due(n, t) : 0;
    }
    int nb = n->nbatch;
    net__sort_ints(n->batch, nb);
    /* Callbacks may add flows, which may reallocate the arrays: index them
     * afresh every time. */
    for (int i = 0; i < nb; i++) {
        const flow *f = &n->flows[n->batch[i]];
        if (f->done) f->done(f->ctx, t, n->batch[i], f->tag);
    }
    for (int i = 0; i < nb; i++) release_id(n, n->batch[i]);
    n->nbatch = 0;
}

/* Brings the clock to now for an add or a cancel.  Should that pass
 * instants not processed yet (a caller that did not advance first), a
 * lazy flow due by then is brought up to date: proofs cover only instants
 * before a flow's t_done.  (So every lazy flow's t_done is after now
 * whenever a public call returns.) */
static void catch_up(net *n, int64_t now) {
    int64_t was = n->now;
    net__step_to(n, now);
    if (n->now > was && n->next <= n->now) net__make_eager_if(n, done_by_now);
}

net *net_new(int nlinks) {
    if (nlinks < 0) return NULL;
    net *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    size_t nl = nlinks > 0 ? (size_t)nlinks : 1;
    n->links = calloc(nl, sizeof *n->links);
    n->heap = calloc(nl, sizeof *n->heap);
    n->dirty = calloc(nl, sizeof *n->dirty);
    n->ticks = calloc(64, sizeof *n->ticks); /* tick 0: instant 0 */
    if (!n->links || !n->heap || !n->dirty || !n->ticks || net__grow(n) < 0) {
        net_free(n);
        return NULL;
    }
    n->cticks = 64;
    n->nticks = 1;
    n->trim_at = 64;
    n->nlinks = nlinks;
    n->next = INT64_MAX;
    return n;
}

void net_free(net *n) {
    if (!n) return;
    for (int l = 0; l < n->nlinks; l++) free(n->links[l].act);
    free(n->links);
    free(n->heap);
    free(n->dirty);
    free(n->flows);
    free(n->live);
    free(n->freeids);
    free(n->lflows);
    free(n->capped);
    free(n->batch);
    free(n->seeds);
    free(n->comp);
    free(n->order);
    free(n->ticks);
    free(n->eager);
    free(n->ends);
    free(n->due);
    free(n->found);
    free(n->found_act);
    free(n->found_round);
    free(n->partner);
    free(n);
}

void net_link_set(net *n, int link, double bytes_per_s) {
    if (link < 0 || link >= n->nlinks || !(bytes_per_s > 0)) return;
    net_links_set(n, 1, &link, &bytes_per_s);
}

void net_links_set(net *n, int count, const int *link,
                   const double *bytes_per_s) {
    for (int k = 0; k < count; k++) {
        if (link[k] < 0 || link[k] >= n->nlinks || !(bytes_per_s[k] > 0))
            continue;
        link_state *L = &n->links[link[k]];
        L->cap = bytes_per_s[k];
        for (int j = 0; j < L->nact; j++) seed(n, L->act[j]);
        mark_dirty(n, link[k]);
    }
    net__share(n); /* once: no filling sees some links changed, others not */
}

int net_flow_add(net *n, int64_t now, int64_t latency_ns, int link_a,
                 int link_b, uint64_t bytes, double max_bytes_per_s,
                 net_done_fn done, void *ctx, uint64_t tag) {
    if (!valid_link(n, link_a) || !valid_link(n, link_b) || latency_ns < 0 ||
        !(max_bytes_per_s > 0))
        return MSG_EINPUT;
    if (link_a == link_b) link_b = -1;
    if ((link_a >= 0 && reserve_link(n, link_a) < 0) ||
        (link_b >= 0 && reserve_link(n, link_b) < 0))
        return MSG_ENOMEM;
    int id = new_id(n);
    if (id < 0) return MSG_ENOMEM;
    catch_up(n, now);
    flow *f = &n->flows[id];
    *f = (flow){.bytes = bytes,
                .remaining = (double)bytes,
                .cap = max_bytes_per_s,
                .t_act = add_sat(n->now, latency_ns),
                .t_done = INT64_MAX,
                .done = done,
                .ctx = ctx,
                .tag = tag,
                .link = {link_a, link_b},
                .state = FLOW_WAITING,
                .pos = n->nlive,
                .count = 1,
                .seg_rate = NAN,
                .epos = -1,
                .t_round = INT64_MAX};
    for (int k = 0; k < 2; k++)
        if (f->link[k] >= 0 && ++n->links[f->link[k]].nref > 1)
            n->anonymous = 0; /* a shared link: ids may matter from now on */
    n->live[n->nlive++] = id;
    n->ncount++;
    net__due_add(n, id);
    if (f->t_act < n->next) n->next = f->t_act;
    return id;
}

int64_t net_now(const net *n) {
    return n->now;
}

int64_t net_shift_total(const net *n) {
    return n->shifted;
}

void net_flow_cancel(net *n, int64_t now, int flow_id) {
    if (flow_id < 0 || flow_id >= n->nflows) return;
    int state = n->flows[flow_id].state;
    if (state != FLOW_WAITING && state != FLOW_ACTIVE) return;
    catch_up(n, now);
    if (state == FLOW_ACTIVE) {
        flow *f = &n->flows[flow_id];
        count_bytes(n, f, moved_bytes(f, net__remaining_now(n, f)));
        eager_remove(n, flow_id);
        f->lazy = 0;
        net__links_leave(n, flow_id);
    }
    net__live_remove(n, flow_id);
    release_id(n, flow_id);
    if (state == FLOW_ACTIVE) net__share(n);
    else net__update_next(n);
}

int64_t net_next_time(const net *n) {
    return n->next;
}

void net_advance(net *n, int64_t now) {
    while (n->next <= now) process_instant(n, n->next);
    net__step_to(n, now);
}

uint64_t net_link_bytes(const net *n, int link) {
    if (link < 0 || link >= n->nlinks) return 0;
    const link_state *L = &n->links[link];
    uint64_t b = L->bytes;
    for (int j = 0; j < L->nact; j++) {
        const flow *f = &n->flows[L->act[j]];
        b += moved_bytes(f, net__remaining_now(n, f));
    }
    return b;
}

double net_link_peak(const net *n, int link) {
    return link >= 0 && link < n->nlinks ? n->links[link].peak : 0;
}

double net_flow_rate(const net *n, int flow_id) {
    if (flow_id < 0 || flow_id >= n->nflows ||
        n->flows[flow_id].state != FLOW_ACTIVE)
        return 0;
    return n->flows[flow_id].rate;
}

int net_active_flows(const net *n) {
    return n->ncount;
}

void net_flow_set_count(net *n, int flow_id, int count) {
    if (flow_id < 0 || flow_id >= n->nflows || count < 1) return;
    flow *f = &n->flows[flow_id];
    if (f->state != FLOW_WAITING && f->state != FLOW_ACTIVE) return;
    n->ncount += count - f->count;
    f->count = count;
}

uint64_t net_flow_counted(const net *n, int flow_id) {
    if (flow_id < 0 || flow_id >= n->nflows) return 0;
    const flow *f = &n->flows[flow_id];
    if (f->state != FLOW_WAITING && f->state != FLOW_ACTIVE) return 0;
    return moved_bytes(f, net__remaining_now(n, f));
}

double net_link_capacity(const net *n, int link) {
    return link >= 0 && link < n->nlinks ? n->links[link].cap : 0;
}

void net_set_lazy(net *n, int on) {
    n->no_lazy = !on;
    if (!on) net__make_eager_if(n, any_flow);
}

int net_set_ack(net *n, double coef, const int *partner) {
    if (n->nlive > 0 || !(coef >= 0) || !isfinite(coef) ||
        (coef > 0 && !partner))
        return MSG_EINPUT;
    for (int l = 0; coef > 0 && l < n->nlinks; l++)
        if (partner[l] < -1 || partner[l] >= n->nlinks) return MSG_EINPUT;
    if (coef > 0 && !n->partner) {
        n->partner = malloc((size_t)(n->nlinks > 0 ? n->nlinks : 1) *
                            sizeof *n->partner);
        if (!n->partner) return MSG_ENOMEM;
    }
    if (coef > 0)
        memcpy(n->partner, partner, (size_t)n->nlinks * sizeof *partner);
    n->ack = coef;
    if (coef > 0) n->anonymous = 0; /* ACKs share links: ids may matter */
    return 0;
}

double net_ack(const net *n) {
    return n->ack;
}

void net_set_anonymous(net *n) {
    if (n->ack > 0) return; /* every flow's ACKs share another's links */
    n->anonymous = 1;
    for (int l = 0; l < n->nlinks; l++)
        if (n->links[l].nref > 1) n->anonymous = 0;
}
