/*
 * net_share.c -- max-min fair sharing: the rates of the active flows by
 * progressive filling, one connected component at a time, and the links'
 * peaks (net_int.h has the state).
 *
 * Rates are recomputed per connected component: the active flows joined
 * through the bounded links they share.  Each link lists its active flows,
 * and an event seeds share() with the flows whose component it changed (a
 * flow that activates, the flows left on the links of one that ends); the
 * other components keep their rates.  The result is bit for bit the one a
 * filling of all flows at once gives: a component's levels come from its
 * own caps and links only, and its events are taken in order of level,
 * caps before links on a tie, in both.  What the global filling leaves to
 * its heap's layout -- which of two links of a component saturating at
 * the same level goes first, or a fair share that rounding lowered -- can
 * change rounding, so a filling that meets it marks its component `tied`;
 * while any active flow is tied, share() refills every flow globally, as
 * the global filling would.  Ring flows on disjoint links, and equal
 * links saturating together with one flow each, are never tied.  A flow
 * alone on its bounded links (every flow of a ring) is its own component,
 * and its filling is the least of its cap and their capacities: it is
 * taken without the walk and the heap.
 * Peaks are updated on the links whose load or order of summation may
 * have changed (two rates sum alike in either order, so only links of
 * three or more are sorted).
 *
 * ACKs (net_set_ack).  A flow then also loads the reverse links of its
 * links with ack x its rate: the filling is weighted, every flow
 * coefficient 1 on the links it crosses and ack on those its
 * acknowledgements load, and a link is full when the sum of coefficient x
 * rate reaches its capacity.  The links' lists hold the flows that cross
 * them only (peaks and bytes are payload), so the components they join
 * miss what the ACKs join: with ACKs, share() refills every flow at once,
 * in live order, and the tie marks are not needed.  Without ACKs the
 * weights are the counts of flows, exactly as before.
 */
#include "sim/engine/net_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"

/* ---- progressive filling ---------------------------------------------- *
 *
 * All unfrozen flows rise together to a common level; a flow freezes when
 * the level reaches its cap or saturates a link it crosses.  The next level
 * is the smaller of the least unfrozen cap (a sorted list) and the least
 * fair share rem/nflows over the links (a min-heap; with ACKs rem over the
 * weight, link_weight()).  Freezing a flow of coefficient c at level lam
 * takes c lam from its links and never lowers their fair share
 * ((rem - c lam) / (w - c) >= lam when rem / w >= lam), so the heap only
 * needs sifting down.  A filling costs O((flows + links) log), whatever
 * the number of distinct levels. */

static void heap_sift_down(net *n, int nt, int i) {
    heap_entry *h = n->heap, e = h[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= nt) break;
        if (c + 1 < nt && h[c + 1].fair < h[c].fair) c++;
        if (h[c].fair >= e.fair) break;
        h[i] = h[c];
        n->links[h[i].link].hpos = i;
        i = c;
    }
    h[i] = e;
    n->links[e.link].hpos = i;
}

/* The filling's passes take `acked` (n->ack > 0) as a constant: each is
 * compiled into the two fillings, with it 1 and with it 0, the latter
 * the plain filling, which pays nothing for ACKs. */
#define FILL_INLINE static inline __attribute__((always_inline))

/* The bounded links f loads into ls[]: those it crosses first (*nf of
 * them, coefficient 1), then with `acked` those its ACKs load; returns
 * how many in all. */
FILL_INLINE int loaded_links(const net *n, const flow *f, int ls[4], int *nf,
                             int acked) {
    *nf = bounded_links(n, f, ls);
    return acked ? ack_links(n, f, ls, *nf) : *nf;
}

/* A link's weight in the filling (link_weight), its unfrozen flows
 * without ACKs. */
FILL_INLINE double weight(const net *n, const link_state *L, int acked) {
    return acked ? link_weight(n, L) : L->nflows;
}

static int by_cap(const void *a, const void *b) {
    const capped_flow *x = a, *y = b;
    if (x->cap != y->cap) return x->cap < y->cap ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Marks the active flows ids[0..cnt) (in live order) unfrozen (rate -1),
 * lists the bounded links they cross in n->heap (heapified on fair share)
 * with each link's flows in n->lflows, and the capped flows, sorted, in
 * n->capped.  Returns the number of links; *ncapped gets the number of
 * capped flows. */
FILL_INLINE int fill_setup(net *n, const int *ids, int cnt, int *ncapped,
                           int acked) {
    int nt = 0, nc = 0, nf, ls[4];
    for (int i = 0; i < cnt; i++) {
        flow *f = &n->flows[ids[i]];
        f->rate = -1;
        f->capbound = 0;
        if (isfinite(f->cap)) n->capped[nc++] = (capped_flow){f->cap, ids[i]};
        for (int k = loaded_links(n, f, ls, &nf, acked); k-- > 0;) {
            link_state *L = &n->links[ls[k]];
            if (L->nflows++ == 0) n->heap[nt++].link = ls[k];
            if (acked && k >= nf) L->nrev++; /* loaded by its ACKs */
        }
    }
    int off = 0;
    for (int i = 0; i < nt; i++) {
        link_state *L = &n->links[n->heap[i].link];
        L->rem = L->cap;
        n->heap[i].fair = L->cap / weight(n, L, acked);
        L->first = off;
        L->nlist = 0;
        off += L->nflows;
    }
    for (int i = 0; i < cnt; i++) {
        const flow *f = &n->flows[ids[i]];
        for (int k = loaded_links(n, f, ls, &nf, acked); k-- > 0;) {
            link_state *L = &n->links[ls[k]];
            n->lflows[L->first + L->nlist++] = ids[i];
        }
    }
    for (int i = nt / 2 - 1; i >= 0; i--) heap_sift_down(n, nt, i);
    for (int i = 0; i < nt; i++) n->links[n->heap[i].link].hpos = i;
    if (nc > 1) qsort(n->capped, (size_t)nc, sizeof *n->capped, by_cap);
    *ncapped = nc;
    return nt;
}

/* Freezes flow f at rate lam and updates its links' fair shares.  Returns
 * 1 if rounding lowered a fair share (the heap may then be out of order),
 * else 0. */
FILL_INLINE int fill_freeze(net *n, int nt, flow *f, double lam, int acked) {
    int nf, ls[4], lowered = 0;
    f->rate = lam;
    for (int k = loaded_links(n, f, ls, &nf, acked); k-- > 0;) {
        link_state *L = &n->links[ls[k]];
        if (!acked || k < nf) {
            L->rem -= lam;
        } else { /* its ACKs: ack x its rate */
            L->rem -= n->ack * lam;
            L->nrev--;
        }
        L->nflows--;
        /* never below the level just reached (rounding could say so) */
        double fair = L->nflows > 0 ? L->rem / weight(n, L, acked) : INFINITY;
        fair = fair > lam ? fair : lam;
        lowered |= fair < n->heap[L->hpos].fair;
        n->heap[L->hpos].fair = fair;
        heap_sift_down(n, nt, L->hpos);
    }
    return lowered;
}

/* Whether level lam binds below the fair share of every bounded link f
 * crosses or loads by its ACKs (CAP_MARGIN). */
FILL_INLINE int below_links(const net *n, const flow *f, double lam,
                            int acked) {
    int nf, ls[4];
    for (int k = loaded_links(n, f, ls, &nf, acked); k-- > 0;)
        if (!(lam < n->heap[n->links[ls[k]].hpos].fair * CAP_MARGIN)) return 0;
    return 1;
}

/* The one unfrozen flow of a link in the filling (nflows == 1). */
static int unfrozen(const net *n, const link_state *L) {
    for (int j = L->first; j < L->first + L->nlist; j++)
        if (n->flows[n->lflows[j]].rate < 0) return n->lflows[j];
    return -1;
}

/* Whether another link of the heap ties with the root at its level, in a
 * way whose order could matter: anything but two links whose only
 * unfrozen flow is the same flow.  Ties form a subtree at the root. */
static int root_tied(const net *n, int nt) {
    const heap_entry *h = n->heap;
    int c = 0, ties = 0;
    for (int i = 1; i <= 2 && i < nt; i++)
        if (h[i].fair == h[0].fair) {
            ties++;
            c = i;
        }
    if (ties != 1) return ties > 1;
    for (int i = 2 * c + 1; i <= 2 * c + 2 && i < nt; i++)
        if (h[i].fair == h[0].fair) return 1;
    const link_state *R = &n->links[h[0].link], *T = &n->links[h[c].link];
    return R->nflows != 1 || T->nflows != 1 || unfrozen(n, R) != unfrozen(n, T);
}

/* Sets the rates of the active flows ids[0..cnt) (in live order, no
 * bounded link shared with a flow outside them): max-min fair with
 * per-flow caps, weighted by the ACKs with `acked`.  With `watch`,
 * returns 1 if the filling met something whose outcome the order of
 * equal levels could change (see the file comment), else 0. */
FILL_INLINE int fill_rates_by(net *n, const int *ids, int cnt, int watch,
                              int acked) {
    int nc, ci = 0, tied = 0, linked = 0;
    double last = 0;
    int nt = fill_setup(n, ids, cnt, &nc, acked);
    for (;;) {
        while (ci < nc && n->flows[n->capped[ci].id].rate >= 0)
            ci++; /* already frozen by a link */
        double lc = ci < nc ? n->capped[ci].cap : INFINITY;
        double ll = nt > 0 ? n->heap[0].fair : INFINITY;
        if (isinf(lc) && isinf(ll)) break;
        if (lc <= ll) {
            flow *f = &n->flows[n->capped[ci++].id];
            f->capbound = below_links(n, f, lc, acked);
            tied |= fill_freeze(n, nt, f, lc, acked);
            continue;
        }
        if (watch && !tied) tied = (linked && ll == last) || root_tied(n, nt);
        linked = 1;
        last = ll;
        const link_state *L = &n->links[n->heap[0].link];
        for (int j = L->first; j < L->first + L->nlist; j++) {
            flow *f = &n->flows[n->lflows[j]];
            if (f->rate < 0) tied |= fill_freeze(n, nt, f, ll, acked);
        }
    }
    /* what is left has no bounded link and no cap */
    for (int i = 0; i < cnt; i++) {
        flow *f = &n->flows[ids[i]];
        if (f->rate < 0) f->rate = INFINITY;
    }
    return watch && tied;
}

/* fill_rates_by(), with ACKs when the net has them. */
static int fill_rates(net *n, const int *ids, int cnt, int watch) {
    return n->ack > 0 ? fill_rates_by(n, ids, cnt, watch, 1)
                      : fill_rates_by(n, ids, cnt, watch, 0);
}

/* Gathers the component of active flow id into n->comp, in live order;
 * returns its size. */
static int component(net *n, int id) {
    int c = 0, ls[2];
    n->comp[c++] = id;
    n->flows[id].seen = n->epoch;
    for (int i = 0; i < c; i++) {
        for (int k = bounded_links(n, &n->flows[n->comp[i]], ls); k-- > 0;) {
            link_state *L = &n->links[ls[k]];
            if (L->seen == n->epoch) continue;
            L->seen = n->epoch;
            for (int j = 0; j < L->nact; j++) {
                flow *g = &n->flows[L->act[j]];
                if (g->seen != n->epoch) {
                    g->seen = n->epoch;
                    n->comp[c++] = L->act[j];
                }
            }
        }
    }
    net__sort_live(n, n->comp, c);
    return c;
}

/* The rate the filling gives active flow f when no other active flow
 * shares a bounded link with it: the least of its cap and its links'
 * capacities (each link's first fair share is its capacity over 1, exact),
 * and such a filling is never tied; *capbound: the cap is below both.
 * -1 when another flow shares one. */
static double lone_rate(const net *n, const flow *f, int *capbound) {
    double links = INFINITY;
    for (int k = 0; k < 2; k++) {
        if (f->link[k] < 0) continue;
        const link_state *L = &n->links[f->link[k]];
        if (L->nact > 1 && isfinite(L->cap)) return -1;
        if (L->cap < links) links = L->cap;
    }
    *capbound = f->cap < links * CAP_MARGIN;
    return f->cap < links ? f->cap : links;
}

/* Refills the component of active flow id. */
static void fill_component(net *n, int id) {
    int c = 1, tied = 0;
    flow *f = &n->flows[id];
    int capbound;
    double r = lone_rate(n, f, &capbound);
    if (r >= 0) {
        f->rate = r;
        f->capbound = capbound;
        f->seen = n->epoch;
        n->comp[0] = id;
    } else {
        c = component(n, id);
        tied = fill_rates(n, n->comp, c, 1);
    }
    for (int i = 0; i < c; i++) {
        flow *g = &n->flows[n->comp[i]];
        n->ntied += tied - g->tied;
        g->tied = tied;
        mark_links_dirty(n, g);
        rate_set(n, n->comp[i]);
        tcp_schedule(n, n->comp[i]);
    }
}

/* Refills every active flow at once. */
static void fill_all(net *n) {
    int c = 0;
    for (int i = 0; i < n->nlive; i++)
        if (n->flows[n->live[i]].state == FLOW_ACTIVE)
            n->comp[c++] = n->live[i];
    fill_rates(n, n->comp, c, 0);
    for (int i = 0; i < c; i++) {
        rate_set(n, n->comp[i]);
        tcp_schedule(n, n->comp[i]);
    }
}

/* Records the total rate of each dirty link (its active flows' finite
 * rates summed in live order) into its peak.  Clamped to the capacity:
 * progressive filling never exceeds it, only rounding could.  A link no
 * active flow crosses keeps its peak. */
static void update_peaks(net *n) {
    for (int d = 0; d < n->ndirty; d++) {
        link_state *L = &n->links[n->dirty[d]];
        L->dirty = 0;
        if (L->nact == 0) continue;
        const int *ids = L->act;
        if (L->nact > 2) {
            memcpy(n->comp, L->act, (size_t)L->nact * sizeof *L->act);
            net__sort_live(n, n->comp, L->nact);
            ids = n->comp;
        }
        L->load = 0;
        for (int j = 0; j < L->nact; j++) {
            double r = n->flows[ids[j]].rate;
            if (isfinite(r)) L->load += r;
        }
        double load = L->load < L->cap ? L->load : L->cap;
        if (load > L->peak) L->peak = load;
    }
    n->ndirty = 0;
}

/* Refills the components of the seeded flows (every flow while one is
 * tied, or with ACKs), then brings completion instants, peaks and the
 * cached next instant up to date: a flow whose rate changed, and every
 * eager one, begins a new segment; a lazy one keeps its instant (it is
 * proven). */
void net__share(net *n) {
    n->epoch++;
    n->due_now = 0;
    int global = n->ack > 0; /* ACKs join what the links' lists do not */
    for (int s = 0; s < n->nseeds; s++) {
        flow *f = &n->flows[n->seeds[s]];
        f->seeded = 0;
        if (f->state == FLOW_ACTIVE && f->seen != n->epoch && !global)
            fill_component(n, n->seeds[s]);
    }
    n->nseeds = 0;
    if (n->ntied > 0 || global) {
        fill_all(n);
        for (int i = 0; i < n->nlive; i++)
            if (n->flows[n->live[i]].state == FLOW_ACTIVE)
                mark_links_dirty(n, &n->flows[n->live[i]]);
    }
    /* backwards: net__begin_segment() may move the last eager flow into i.  A
     * segment begun at this tick has its instant already. */
    for (int i = n->neager - 1; i >= 0; i--)
        if (n->flows[n->eager[i]].k0 != tick_now(n))
            net__begin_segment(n, n->eager[i], 1);
    update_peaks(n);
    net__update_next(n);
}
