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
 * net keeps one clock (`now`): step_to() moves bytes up to an instant,
 * share() recomputes the rates (progressive filling) and, from them, each
 * flow's completion instant; next_time is cached after every change.
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
 * Stepping.  The clock stops at ticks: each instant step_to() brings it to
 * (an instant processed, or an add or cancel later than the clock), kept
 * in `ticks`.  The results are defined by stepping every active flow at
 * every tick (remaining -= rate dt / 1e9, never below zero), recomputing
 * every completion instant at every share() from the stepped bytes
 * (t_done = now + ceil(g), g = x - (1e-6 + 1e-13 x), x = remaining 1e9 /
 * rate) and finishing, at each instant t, the flows with t_done <= t or
 * remaining <= tolerance.  Rounding makes a flow's bytes depend on the
 * ticks it went through, so it cannot simply be stepped once from where
 * its rate last changed; what is done instead gives the same bits:
 *  - A flow begins a segment at a share where its rate is new (R, r and
 *    t_done = now + K as above); every eager flow begins one at every
 *    later share, as the definition recomputes it.  From the second
 *    (flows that end at their next instant are not worth it),
 *    proven_ticks() checks
 *    that for the next k ticks (k from its margins, at least 64) the
 *    definition would recompute t_done = now + K at every share before
 *    that instant and never find the flow done by tolerance.  Such a flow
 *    is lazy: neither stepped nor recomputed.  When something needs its
 *    bytes (a byte count, a signature, a rate change, a cancel), R is
 *    replayed through the ticks since with step_to()'s own expression:
 *    the bits stepping would have.  After k ticks (net.ends: a heap by the
 *    tick each proof ends) or when the clock passes t_done unprocessed
 *    (an add or cancel later than an instant not processed), it is
 *    replayed and stepped at every tick again (eager) until a share
 *    proves a new segment.  Eager flows follow the definition as written.
 *  - The proof (u = 2^-53, X = R 1e9 / r exactly): after k ticks over
 *    n <= K - 1 ns the stepped bytes are within (k + 3) u R of
 *    R - r n / 1e9 (each step rounds r dt, / 1e9 and the subtraction, and
 *    never clamps while the bytes stay above zero), so the recomputed x is
 *    within (k + 5.1) u X of X - n and the recomputed g, plus n, within
 *    (k + 9.3) u X of g + n 1e-13 (g computed from y is within 1.01 u y +
 *    3e-22 of y - 1e-6 - 1e-13 y, and x within 2.1 u X of X).  The ceiling is
 *    therefore K - n, the same t_done, while lo = g - (K - 1) and
 *    hi = K - g - K 1e-13 both exceed (k + 9.3) u X; the bytes stay above
 *    tolerance while lo also exceeds that plus the tolerance in ns
 *    (tol 1e9 / r).  proven_ticks() takes k from the smaller room at
 *    1.01 u x per tick less 16 ticks, and wants K < 2^52 so that every
 *    difference of ticks is exact in a double.  A flow of more than about
 *    a second is never lazy: its tolerance, 1e-9 of its size, spans more
 *    than a ns.
 *  - Ticks are dropped once no lazy flow needs them; past TICKS_MAX kept,
 *    every lazy flow's replay restarts from the last tick (its proof still
 *    counts from where it began).
 * A link's byte count is what its finished and cancelled flows moved plus
 * the whole bytes its active flows have moved (from their replayed
 * bytes), which is what counting at every tick gives.
 *
 * With many live flows (HEAP_ON), net.due is a heap of every live flow by
 * the instant it is next due at (activation, then completion), so the
 * next instant and the flows due at it are found without a scan; the
 * flows due are then finished, and activated, in the order a scan of
 * `live` would meet them, since that order is what the live order, and
 * with it every later sum, depends on.  With few, the scans are cheaper
 * and are done as such.  net_set_lazy(n, 0) turns lazy stepping off: the
 * tests compare the two.
 *
 * TCP flows (the section "TCP windows") add round boundaries to the
 * instants: a flow is due at min(t_done, t_round) once active, and at an
 * instant the boundaries due are taken after the completions and the
 * activations, in live order, before the rates are recomputed, so each
 * boundary judges the round by the rate the round ran at.  A new cap seeds
 * the flow's component like any change (but for a cap that comes down to
 * the flow's rate, which changes no rate); after every filling each
 * refilled TCP flow's next boundary is found again.  Lazy stepping is untouched: a
 * cap that changes a rate ends the flow's segment as any rate change does.
 *
 * Choices the header leaves open (what a simulation user would expect):
 *  - net_link_set() on a busy net takes effect at the instant the net was
 *    last brought to (its last advance/add/cancel): rates are recomputed
 *    there.  Invalid capacities (NaN, <= 0) and bad link ids are ignored.
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
 *  - The done callback must not call net_advance() or net_free().  Ids of
 *    the flows completed at one instant are released only after all their
 *    callbacks ran, so a flow added from a callback never takes the id of
 *    a completion still being reported.  A flow added from a callback that
 *    completes at that same instant (latency 0 and nothing to move, or no
 *    bound on its rate) is reported after the callbacks already under way,
 *    so (time, id) order holds among the flows that existed before.
 */
#include "sim/engine/net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"

enum { FLOW_FREE, FLOW_WAITING, FLOW_ACTIVE, FLOW_DONE };

typedef struct {
    uint64_t bytes;    /* size of the flow */
    double remaining;  /* bytes still to move (fractional while moving); a
                          lazy flow: at the start of its segment */
    double rate;       /* bytes/s while active */
    double seg_rate;   /* the rate its segment began with (NaN: none) */
    int64_t k0;        /* the tick its segment began at; lazy: the tick
                          `remaining` refers to */
    int64_t kend;      /* lazy: the last tick its proof covers */
    double cap;        /* the flow's own max rate (may be INFINITY) */
    int64_t t_act;     /* instant it becomes active */
    int64_t t_done;    /* completion instant at the current rate */
    uint64_t tag;
    uint64_t seen;     /* share(): epoch of the pass that reached it */
    int link[2];       /* -1 for none; link[1] != link[0] */
    int lpos[2];       /* its index in links[link[k]].act while active */
    int state;         /* FLOW_* */
    int pos;           /* index in net.live while live */
    int tied;          /* its component's last filling was tied */
    int seeded;        /* in net.seeds */
    int count;         /* alike flows it stands for (net_flow_set_count) */
    int lazy;          /* stepped only when needed (see the file comment) */
    int epos;          /* its index in net.eager, -1 when not there */
    int hpos;          /* its index in net.due while live */
    int marked;        /* gathered by gather_due() */
    /* TCP (net_flow_set_tcp; see the TCP comment below); rtt 0: none */
    int64_t rtt;       /* round trip, ns */
    int64_t t_round;   /* the next round boundary that changes its window,
                          cap or wbind (INT64_MAX: none would) */
    double win;        /* window, bytes */
    double win_max;    /* the window's limit (may be INFINITY) */
    double cap0;       /* its own max rate, before the window's */
    int capbound;      /* its last filling froze it at its cap, below the
                          fair share of each of its links (CAP_MARGIN) */
    int wbind;         /* its cap is the window's, below cap0 */
} flow;

typedef struct {
    double cap;        /* bytes/s, 0 until set, may be INFINITY */
    uint64_t bytes;    /* whole bytes that crossed the link */
    double peak;       /* highest total rate carried */
    double load;       /* total rate at the last update_peaks() */
    int *act;          /* active flows crossing it, in no order */
    int nact;
    int nref;          /* live flows crossing it (act has room for them) */
    int cact;          /* allocated entries of act */
    int dirty;         /* in net.dirty */
    uint64_t seen;     /* share(): epoch of the pass that reached it */
    /* scratch for the filling, meaningful only for links in net.heap */
    double rem;        /* capacity not yet handed out */
    int nflows;        /* unfrozen flows crossing it */
    int first, nlist;  /* its flows: net.lflows[first .. first+nlist) */
    int hpos;          /* its index in the heap net.heap */
} link_state;

/* A bounded link in the filling's heap, keyed by its fair share
 * rem/nflows: the fill level at which it saturates (INFINITY once it has
 * no flows). */
typedef struct {
    double fair;
    int link;
} heap_entry;

typedef struct {
    double cap;
    int id;
} capped_flow;

/* A flow in a heap keyed by t: net.due (the instant it is next due at)
 * and net.ends (the last tick its proof covers). */
typedef struct {
    int64_t t;
    int id;
} due_entry;

struct net {
    int64_t now;       /* instant the flows' remaining bytes refer to */
    int64_t next;      /* cached net_next_time() */
    int nlinks;
    link_state *links;
    heap_entry *heap;  /* filling: bounded links crossed by its flows */
    int *dirty;        /* links whose peak needs updating */
    int ndirty;

    flow *flows;
    int nflows;        /* slots ever used: ids are < nflows */
    int fcap;          /* allocated slots in flows and the int arrays below */
    int *live;         /* ids of waiting and active flows, dense */
    int nlive;
    int ncount;        /* sum of the live flows' counts */
    int anonymous;     /* net_set_anonymous() and no link shared since */
    int *freeids;      /* stack of reusable ids */
    int nfree;
    int *lflows;       /* filling: flows of each link (2 * fcap) */
    capped_flow *capped; /* filling: flows with a finite cap, by cap */
    int *batch;        /* flows completed at the instant being processed */
    int nbatch;
    int *seeds;        /* active flows whose component changed */
    int nseeds;
    int *comp;         /* share(): the flows of one component, or all */
    int *order;        /* share(): positions in live, to sort */
    int ntied;         /* active flows with tied set */
    uint64_t epoch;    /* share() passes so far */

    /* lazy stepping (see the file comment) */
    int64_t *ticks;    /* the instants the clock stopped at: tick k is
                          ticks[k - tick0]; the last one is now */
    int64_t tick0;
    int nticks, cticks;
    int trim_at;       /* nticks at which old ticks are dropped */
    int *eager;        /* active flows stepped at every tick */
    int neager;
    due_entry *due;    /* min-heap of the live flows by due_at() */
    int heaped;        /* net.due is kept (see the heap of due instants) */
    int *found;        /* gather_due(): the flows due, to finish */
    int *found_act;    /* gather_due(): the flows due, to activate */
    due_entry *ends;   /* min-heap of lazy segments by the tick their
                          proof ends; entries of ended segments linger */
    int nends, cends;
    int due_now;       /* share() gave some flow t_done <= now */
    int no_lazy;       /* net_set_lazy(n, 0) */
    int *found_round;  /* gather_due(): the flows at a round boundary */
    int ntcp;          /* live TCP flows */
    int64_t shifted;   /* the sum of net_shift()'s dt */
};

/* ---- small helpers ----------------------------------------------------- */

/* How close to zero `remaining` must be for a flow to count as done:
 * absorbs floating-point residue, never a visible amount of data. */
static double tolerance(const flow *f) {
    return 1e-9 * (double)f->bytes + 1e-6;
}

static int valid_link(const net *n, int l) {
    return l >= -1 && l < n->nlinks;
}

static int64_t add_sat(int64_t t, int64_t d) {
    return d > INT64_MAX - t ? INT64_MAX : t + d;
}

/* The bounded (finite capacity) link ids crossed by f, into out[];
 * returns how many. */
static int bounded_links(const net *n, const flow *f, int out[2]) {
    int k = 0;
    for (int i = 0; i < 2; i++)
        if (f->link[i] >= 0 && isfinite(n->links[f->link[i]].cap))
            out[k++] = f->link[i];
    return k;
}

static void count_bytes(net *n, const flow *f, uint64_t b) {
    for (int k = 0; k < 2; k++)
        if (f->link[k] >= 0)
            n->links[f->link[k]].bytes += b;
}

/* The whole bytes f has moved when `remaining` bytes are left: its size
 * minus the remaining bytes rounded up.  Remaining bytes only shrink, so
 * this only grows: a live flow's links count exactly this much of it. */
static uint64_t moved_bytes(const flow *f, double remaining) {
    double r = ceil(remaining);
    uint64_t left = r <= 0 ? 0 : r >= (double)f->bytes ? f->bytes : (uint64_t)r;
    return f->bytes - left;
}

/* Queues link l for update_peaks(). */
static void mark_dirty(net *n, int l) {
    if (l >= 0 && !n->links[l].dirty) {
        n->links[l].dirty = 1;
        n->dirty[n->ndirty++] = l;
    }
}

static void mark_links_dirty(net *n, const flow *f) {
    mark_dirty(n, f->link[0]);
    mark_dirty(n, f->link[1]);
}

/* Queues active flow id for share(): its component changed. */
static void seed(net *n, int id) {
    flow *f = &n->flows[id];
    if (!f->seeded) {
        f->seeded = 1;
        n->seeds[n->nseeds++] = id;
    }
}

/* ---- the heap of due instants ------------------------------------------ *
 * With many live flows, net.due holds every one keyed by due_at(), least
 * first (ties by id), so the next instant is its root and the flows due at
 * an instant are found without looking at the others.  With few, a scan of
 * the live flows is cheaper and the heap is off. */

enum { HEAP_ON = 48, HEAP_OFF = 16 }; /* live flows at which it turns on, off */

/* The instant a live flow is next due at: its activation while it waits,
 * then its completion or its next round boundary, whichever comes first. */
static int64_t due_at(const flow *f) {
    if (f->state == FLOW_WAITING)
        return f->t_act;
    return f->t_round < f->t_done ? f->t_round : f->t_done;
}

static int due_before(const due_entry *a, const due_entry *b) {
    return a->t < b->t || (a->t == b->t && a->id < b->id);
}

/* Puts entry e in the hole at i of the heap h[0..cnt) or below it (i's
 * subtrees are heaps); with flows, records where each entry moved to in
 * its flow's hpos. */
static void heap_down(due_entry *h, int cnt, int i, due_entry e, flow *flows) {
    for (;;) {
        int c = 2 * i + 1;
        if (c >= cnt)
            break;
        if (c + 1 < cnt && due_before(&h[c + 1], &h[c]))
            c++;
        if (!due_before(&h[c], &e))
            break;
        h[i] = h[c];
        if (flows)
            flows[h[i].id].hpos = i;
        i = c;
    }
    h[i] = e;
    if (flows)
        flows[e.id].hpos = i;
}

/* The same, up past larger parents. */
static void heap_up(due_entry *h, int i, due_entry e, flow *flows) {
    while (i > 0 && due_before(&e, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        if (flows)
            flows[h[i].id].hpos = i;
        i = (i - 1) / 2;
    }
    h[i] = e;
    if (flows)
        flows[e.id].hpos = i;
}

/* Puts entry e where the hole at i of net.due belongs. */
static void due_sift(net *n, int i, due_entry e) {
    if (i > 0 && due_before(&e, &n->due[(i - 1) / 2]))
        heap_up(n->due, i, e, n->flows);
    else
        heap_down(n->due, n->nlive, i, e, n->flows);
}

/* A live flow's due_at() may have changed. */
static inline void due_update(net *n, int id) {
    if (!n->heaped)
        return;
    const flow *f = &n->flows[id];
    due_entry e = {due_at(f), id};
    if (n->due[f->hpos].t != e.t)
        due_sift(n, f->hpos, e);
}

/* Flow id joins the heap (n->nlive already counts it); past HEAP_ON live
 * flows the heap is built. */
static inline void due_add(net *n, int id) {
    if (n->heaped) {
        due_sift(n, n->nlive - 1, (due_entry){due_at(&n->flows[id]), id});
    } else if (n->nlive >= HEAP_ON) {
        for (int i = 0; i < n->nlive; i++)
            n->due[i] = (due_entry){due_at(&n->flows[n->live[i]]), n->live[i]};
        for (int i = n->nlive / 2; i-- > 0;)
            heap_down(n->due, n->nlive, i, n->due[i], n->flows);
        for (int i = 0; i < n->nlive; i++)
            n->flows[n->due[i].id].hpos = i;
        n->heaped = 1;
    }
}

/* Flow id leaves the heap (n->nlive no longer counts it); below HEAP_OFF
 * live flows the heap is dropped. */
static inline void due_remove(net *n, int id) {
    if (!n->heaped)
        return;
    int i = n->flows[id].hpos;
    if (n->nlive < HEAP_OFF)
        n->heaped = 0;
    else if (i != n->nlive)
        due_sift(n, i, n->due[n->nlive]);
}

/* Whether active flow f is due at t: complete by its instant, or an eager
 * one at or under tolerance (a lazy one is proven above it). */
static int done_due(const flow *f, int64_t t) {
    return f->t_done <= t || (!f->lazy && f->remaining <= tolerance(f));
}

/* The live flows due at t into n->found (active: t_done <= t, or an eager
 * one at or under tolerance), n->found_act (waiting: t_act <= t) and
 * n->found_round (active, not done, at a round boundary: t_round <= t),
 * each marked; returns the three counts in *nf, *na and *nr.  The heap
 * must be on. */
static void gather_due(net *n, int64_t t, int *nf, int *na, int *nr) {
    int *stack = n->comp, top = 0, cf = 0, ca = 0, cr = 0;
    if (n->nlive > 0 && n->due[0].t <= t)
        stack[top++] = 0;
    while (top > 0) {
        int i = stack[--top], id = n->due[i].id;
        flow *f = &n->flows[id];
        if (f->state == FLOW_WAITING)
            n->found_act[ca++] = id;
        else if (n->ntcp == 0 || done_due(f, t))
            n->found[cf++] = id;
        else
            n->found_round[cr++] = id;
        f->marked = 1;
        for (int c = 2 * i + 1; c <= 2 * i + 2 && c < n->nlive; c++)
            if (n->due[c].t <= t)
                stack[top++] = c;
    }
    for (int i = 0; i < n->neager; i++) {
        flow *f = &n->flows[n->eager[i]];
        if (!f->marked && f->remaining <= tolerance(f)) {
            f->marked = 1;
            n->found[cf++] = n->eager[i];
        }
    }
    *nf = cf;
    *na = ca;
    *nr = cr;
}

static void live_remove(net *n, int id) {
    flow *f = &n->flows[id];
    n->ncount -= f->count;
    n->ntcp -= f->rtt != 0;
    for (int k = 0; k < 2; k++)
        if (f->link[k] >= 0)
            n->links[f->link[k]].nref--;
    int pos = f->pos;
    int last = n->live[--n->nlive];
    n->live[pos] = last;
    n->flows[last].pos = pos;
    due_remove(n, id);
    /* the order of summation on the moved flow's links changed */
    if (last != id && n->flows[last].state == FLOW_ACTIVE)
        mark_links_dirty(n, &n->flows[last]);
}

static void release_id(net *n, int id) {
    n->flows[id].state = FLOW_FREE;
    n->freeids[n->nfree++] = id;
}

/* An active flow joins the lists of its links and seeds share(). */
static void links_join(net *n, int id) {
    flow *f = &n->flows[id];
    for (int k = 0; k < 2; k++) {
        if (f->link[k] < 0)
            continue;
        link_state *L = &n->links[f->link[k]];
        f->lpos[k] = L->nact;
        L->act[L->nact++] = id;
    }
    f->tied = 0;
    seed(n, id);
}

/* An active flow leaves the lists of its links; the flows left on its
 * bounded links seed share(). */
static void links_leave(net *n, int id) {
    flow *f = &n->flows[id];
    n->ntied -= f->tied;
    f->tied = 0;
    for (int k = 0; k < 2; k++) {
        int l = f->link[k];
        if (l < 0)
            continue;
        link_state *L = &n->links[l];
        int last = L->act[--L->nact];
        L->act[f->lpos[k]] = last;
        flow *g = &n->flows[last];
        g->lpos[g->link[0] == l ? 0 : 1] = f->lpos[k];
        mark_dirty(n, l);
        if (isfinite(L->cap))
            for (int j = 0; j < L->nact; j++)
                seed(n, L->act[j]);
    }
}

/* Twice an allocated count (`first` when none yet), or -1 past INT32_MAX. */
static int doubled(int count, int first) {
    return count > INT32_MAX / 2 ? -1 : count ? 2 * count : first;
}

/* Doubles every per-flow array.  On failure nothing the net relies on has
 * changed (arrays that did grow are simply larger than needed). */
static int grow(net *n) {
    int cap = doubled(n->fcap, 16);
    if (cap < 0)
        return -1;
    flow *f = realloc(n->flows, (size_t)cap * sizeof *f);
    if (!f)
        return -1;
    n->flows = f;
    int **arrays[] = {&n->live,  &n->freeids, &n->batch, &n->seeds,     &n->comp,
                      &n->order, &n->eager,   &n->found, &n->found_act, &n->found_round};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        int *p = realloc(*arrays[i], (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        *arrays[i] = p;
    }
    int *lf = realloc(n->lflows, 2 * (size_t)cap * sizeof *lf);
    if (!lf)
        return -1;
    n->lflows = lf;
    capped_flow *cf = realloc(n->capped, (size_t)cap * sizeof *cf);
    if (!cf)
        return -1;
    n->capped = cf;
    due_entry *de = realloc(n->due, (size_t)cap * sizeof *de);
    if (!de)
        return -1;
    n->due = de;
    n->fcap = cap;
    return 0;
}

/* Makes room in link l's list for one more live flow.  Returns 0 or -1. */
static int reserve_link(net *n, int l) {
    link_state *L = &n->links[l];
    int cap = L->nref < L->cact ? 0 : doubled(L->cact, 4);
    if (cap <= 0)
        return cap;
    int *p = realloc(L->act, (size_t)cap * sizeof *p);
    if (!p)
        return -1;
    L->act = p;
    L->cact = cap;
    return 0;
}

/* A free flow id, or -1 when out of memory. */
static int new_id(net *n) {
    if (n->nfree > 0)
        return n->freeids[--n->nfree];
    if (n->nflows == n->fcap && grow(n) < 0)
        return -1;
    return n->nflows++;
}

static int by_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sorts a[0..cnt) ascending: in place for a few, else by qsort. */
static void sort_ints(int *a, int cnt) {
    if (cnt > 8) {
        qsort(a, (size_t)cnt, sizeof *a, by_int);
        return;
    }
    for (int i = 1; i < cnt; i++) {
        int x = a[i], j = i;
        for (; j > 0 && a[j - 1] > x; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Sorts ids[0..cnt) (live flows) into live order. */
static void sort_live(net *n, int *ids, int cnt) {
    if (cnt < 2)
        return;
    for (int i = 0; i < cnt; i++)
        n->order[i] = n->flows[ids[i]].pos;
    sort_ints(n->order, cnt);
    for (int i = 0; i < cnt; i++)
        ids[i] = n->live[n->order[i]];
}

/* ---- time and rates ---------------------------------------------------- */

/* One step of a flow's bytes: what is left of `remaining` after dt_ns
 * (whole ns, as a double) at `rate`.  Never below zero (a completion
 * instant is rounded up, so a flow may reach zero a fraction of a ns
 * early).  step_to() and remaining_now() both step with it: a lazy flow's
 * replayed bytes are the bits stepping at every tick gives. */
static double step_bytes(double remaining, double rate, double dt_ns) {
    double mv = isinf(rate) ? remaining : rate * dt_ns / 1e9;
    if (mv > remaining)
        mv = remaining;
    return remaining - mv;
}

enum { TICKS_MAX = 1 << 16 }; /* ticks kept for lazy flows, at most */

static inline int64_t tick_now(const net *n) {
    return n->tick0 + n->nticks - 1;
}

static int64_t tick_at(const net *n, int64_t k) {
    return n->ticks[k - n->tick0];
}

/* f's remaining bytes at n->now: a lazy flow's segment start stepped
 * through every tick since, exactly as stepping at each would have. */
static double remaining_now(const net *n, const flow *f) {
    double r = f->remaining;
    if (!f->lazy || f->seg_rate == 0)
        return r;
    for (int64_t k = f->k0 + 1; k <= tick_now(n); k++)
        r = step_bytes(r, f->seg_rate, (double)(tick_at(n, k) - tick_at(n, k - 1)));
    return r;
}

static inline void eager_add(net *n, int id) {
    flow *f = &n->flows[id];
    if (f->epos < 0) {
        f->epos = n->neager;
        n->eager[n->neager++] = id;
    }
}

static inline void eager_remove(net *n, int id) {
    flow *f = &n->flows[id];
    if (f->epos < 0)
        return;
    int last = n->eager[--n->neager];
    n->eager[f->epos] = last;
    n->flows[last].epos = f->epos;
    f->epos = -1;
}

/* Brings a lazy flow's bytes to now; it is lazy no more. */
static void make_current(net *n, flow *f) {
    if (f->lazy) {
        f->remaining = remaining_now(n, f);
        f->lazy = 0;
    }
}

/* ... and from here it is stepped every tick. */
static void make_eager(net *n, int id) {
    make_current(n, &n->flows[id]);
    eager_add(n, id);
}

/* Makes every active lazy flow for which pred(n, f) holds eager. */
static void make_eager_if(net *n, int (*pred)(const net *, const flow *)) {
    for (int i = 0; i < n->nlive; i++) {
        flow *f = &n->flows[n->live[i]];
        if (f->state == FLOW_ACTIVE && f->lazy && pred(n, f))
            make_eager(n, n->live[i]);
    }
}

static int any_flow(const net *n, const flow *f) {
    (void)n, (void)f;
    return 1;
}

static int done_by_now(const net *n, const flow *f) {
    return f->t_done <= n->now;
}

/* ---- the heap of proof ends ---------------------------------------------
 * net.ends holds (kend, id) for every lazy segment (ties by id).  An entry
 * is current while its flow is active, lazy and proven through kend;
 * others are dropped when they surface (one left by an earlier segment
 * with the same kend ends it at the same tick, as it should). */

static int end_current(const net *n, const due_entry *e) {
    const flow *f = &n->flows[e->id];
    return f->state == FLOW_ACTIVE && f->lazy && f->kend == e->t;
}

/* Keeps only the current entries (when stale ones pile up). */
static void ends_rebuild(net *n) {
    int k = 0;
    for (int i = 0; i < n->nends; i++)
        if (end_current(n, &n->ends[i]))
            n->ends[k++] = n->ends[i];
    n->nends = k;
    for (int i = k / 2 - 1; i >= 0; i--)
        heap_down(n->ends, k, i, n->ends[i], NULL);
}

/* Records lazy flow id's proof end; out of memory, the flow goes eager. */
static int ends_push(net *n, int id) {
    const flow *f = &n->flows[id];
    if (n->nends >= 2 * n->nlive + 64)
        ends_rebuild(n);
    if (n->nends == n->cends) {
        int cap = doubled(n->cends, 64);
        due_entry *p = cap > 0 ? realloc(n->ends, (size_t)cap * sizeof *p) : NULL;
        if (!p)
            return -1;
        n->ends = p;
        n->cends = cap;
    }
    heap_up(n->ends, n->nends++, (due_entry){f->kend, id}, NULL);
    return 0;
}

/* Makes eager every lazy flow whose proof ends before the current tick. */
static void expire_proofs(net *n) {
    while (n->nends > 0 && n->ends[0].t < tick_now(n)) {
        due_entry e = n->ends[0];
        n->nends--;
        heap_down(n->ends, n->nends, 0, n->ends[n->nends], NULL);
        if (end_current(n, &e))
            make_eager(n, e.id);
    }
}

/* Drops the ticks no lazy flow needs (those before the oldest segment
 * start). */
static void trim_ticks(net *n) {
    int64_t keep = tick_now(n);
    for (int i = 0; i < n->nlive; i++) {
        const flow *f = &n->flows[n->live[i]];
        if (f->state == FLOW_ACTIVE && f->lazy && f->seg_rate != 0 && f->k0 < keep)
            keep = f->k0;
    }
    int drop = (int)(keep - n->tick0);
    memmove(n->ticks, n->ticks + drop, (size_t)(n->nticks - drop) * sizeof *n->ticks);
    n->tick0 = keep;
    n->nticks -= drop;
    int64_t at = 2 * (int64_t)n->nticks + 2 * (int64_t)n->nlive + 64;
    n->trim_at = at > INT32_MAX / 2 ? INT32_MAX / 2 : (int)at;
}

/* Room for one more tick: old ticks dropped, or the array doubled.  Past
 * TICKS_MAX ticks kept (a flow lazy for that long) or out of memory, every
 * lazy flow's segment restarts at the last tick with its replayed bytes
 * (its proof, counted from where it began, stays), and all but that tick
 * go. */
static void reserve_tick(net *n) {
    if (n->nticks >= n->trim_at)
        trim_ticks(n);
    if (n->nticks < n->cticks)
        return;
    int cap = n->nticks < TICKS_MAX ? doubled(n->cticks, 64) : -1;
    int64_t *p = cap > 0 ? realloc(n->ticks, (size_t)cap * sizeof *p) : NULL;
    if (p) {
        n->ticks = p;
        n->cticks = cap;
        return;
    }
    for (int i = 0; i < n->nlive; i++) {
        flow *f = &n->flows[n->live[i]];
        if (f->state == FLOW_ACTIVE && f->lazy && f->seg_rate != 0) {
            f->remaining = remaining_now(n, f);
            f->k0 = tick_now(n);
        }
    }
    trim_ticks(n); /* keeps one tick: cticks >= 64 */
}

/* Moves every active flow's bytes from n->now to t at its current rate:
 * the eager ones now, the lazy ones when asked (remaining_now), through
 * the tick t adds. */
static void step_to(net *n, int64_t t) {
    if (t <= n->now)
        return;
    if (n->nticks >= n->trim_at || n->nticks == n->cticks)
        reserve_tick(n);
    double dt_ns = (double)(t - n->now);
    for (int i = 0; i < n->neager; i++) {
        flow *f = &n->flows[n->eager[i]];
        if (f->rate > 0)
            f->remaining = step_bytes(f->remaining, f->rate, dt_ns);
    }
    n->ticks[n->nticks++] = t;
    n->now = t;
    expire_proofs(n);
}

/* The instant (from n->now) at which f, at its current rate, has moved
 * everything.  Rounded up to whole ns; a slack far above floating-point
 * noise and far below 1 ns keeps an exact instant from being pushed to the
 * next ns by rounding.  f's bytes must be current (not lazy). */
static int64_t completion(const net *n, const flow *f) {
    if (f->remaining <= tolerance(f) || isinf(f->rate))
        return n->now;
    if (f->rate <= 0)
        return INT64_MAX;
    double x = f->remaining * 1e9 / f->rate;
    if (!(x < 9e18)) /* also inf and NaN (a subnormal rate): never */
        return INT64_MAX;
    double ns = ceil(x - (1e-6 + 1e-13 * x));
    if (ns <= 0)
        return n->now;
    return add_sat(n->now, (int64_t)ns);
}

/* How many ticks after now f may go unstepped: for that many, stepping it
 * at each tick and recomputing its completion instant would give t_done
 * again and never find it done by tolerance (the proof is in the file
 * comment).  -1 when that cannot be shown.  f's bytes, rate and t_done =
 * completion() are current. */
static int64_t proven_ticks(const net *n, const flow *f) {
    double r = f->rate, R = f->remaining, tol = tolerance(f);
    if (r == 0)
        return R > tol ? INT64_MAX : -1; /* it never moves */
    int64_t K = f->t_done == INT64_MAX ? 0 : f->t_done - n->now;
    if (!(r >= 1e-200) || isinf(r) || !(R > tol) || K < 1 || K >= (int64_t)1 << 52)
        return -1;
    double x = R * 1e9 / r, g = x - (1e-6 + 1e-13 * x); /* as completion() */
    if (ceil(g) != (double)K)
        return -1;
    double e = x * 0x1p-53 * 1.01;            /* u x0, with room */
    double tau = tol * 1e9 / r * 1.0000001;   /* the tolerance, in ns */
    double lo = g - (double)(K - 1);          /* exact (Sterbenz) */
    double hi = (double)K - g - 0x1p-52;
    double room = lo - tau;
    if (hi - 1.0000001e-13 * (double)K < room)
        room = hi - 1.0000001e-13 * (double)K;
    double k = (room - 1e-20) / e * (1 - 1e-9) - 16;
    if (!(k >= 64))
        return -1;
    return k > 1e15 ? (int64_t)1e15 : (int64_t)k;
}

/* Starts a new segment of active flow id at now: its completion instant
 * from its current bytes and rate; then, with `prove`, lazy if
 * proven_ticks() allows, else eager.  Its bytes must be current. */
static void begin_segment(net *n, int id, int prove) {
    flow *f = &n->flows[id];
    f->t_done = completion(n, f);
    due_update(n, id);
    if (f->t_done <= n->now)
        n->due_now = 1;
    f->seg_rate = f->rate;
    f->k0 = tick_now(n);
    int64_t k = prove && !n->no_lazy ? proven_ticks(n, f) : -1;
    if (k < 0) {
        f->lazy = 0;
        eager_add(n, id);
        return;
    }
    f->kend = k > INT64_MAX - f->k0 ? INT64_MAX : f->k0 + k;
    if (f->kend != INT64_MAX && ends_push(n, id) < 0) {
        eager_add(n, id);
        return;
    }
    eager_remove(n, id);
    f->lazy = 1;
}

/* After a filling gave active flow id its rate: a new segment if the rate
 * is not the one its segment began with. */
static void rate_set(net *n, int id) {
    flow *f = &n->flows[id];
    if (f->rate == f->seg_rate)
        return;
    make_current(n, f);
    begin_segment(n, id, 0); /* proven at a later share, if it lives on */
}

static void update_next(net *n) {
    if (n->heaped) {
        n->next = n->due[0].t;
        return;
    }
    int64_t next = INT64_MAX;
    for (int i = 0; i < n->nlive; i++) {
        int64_t t = due_at(&n->flows[n->live[i]]);
        if (t < next)
            next = t;
    }
    n->next = next;
}

/* ---- TCP windows ------------------------------------------------------ *
 * A TCP flow's cap is min(cap0, min(win, win_max) / rtt), and wbind says
 * whether the window's part is the lower (strictly).  Its rounds begin at
 * t_act + k rtt; at the end of each, from the rate and capbound its last
 * filling gave it (capbound: its cap bound it, below its links' shares by
 * more than a relative 1e-9, CAP_MARGIN, which rounding cannot fake):
 * window-limited (capbound and wbind), win doubles up to
 * win_max (slow start); else (its share, or cap0, bound it) win becomes
 * what it has in flight, rate rtt, and its cap the rate itself (not
 * recomputed from win: the bits of the share, so that a share-limited flow
 * keeps exactly its rate and stops changing), the window's while the rate
 * is below cap0.  A flow that moves nothing (rate 0) gets no
 * acknowledgement and keeps its window.  A flow that ends inside a round
 * while window-limited adds what it sent in that round (tcp_last_round).
 * Only boundaries that change win,
 * cap or wbind are events (t_round): a flow settled at its share, or at
 * win_max, has none until a filling changes its rate or capbound, and then
 * its next boundary is found from t_act. */

/* The cap the window allows f: min(win, win_max) / rtt, bytes/s. */
static double window_cap(const flow *f) {
    double w = f->win < f->win_max ? f->win : f->win_max;
    return w * 1e9 / (double)f->rtt;
}

/* What a round boundary now makes of TCP flow f's window, cap and wbind. */
static void tcp_next(const flow *f, double *win, double *cap, int *wbind) {
    *win = f->win;
    *cap = f->cap;
    *wbind = f->wbind;
    if (!(f->rate > 0))
        return;
    if (f->capbound && f->wbind) {
        *win = 2 * f->win < f->win_max ? 2 * f->win : f->win_max;
        double c = *win * 1e9 / (double)f->rtt;
        *cap = c < f->cap0 ? c : f->cap0;
        *wbind = c < f->cap0;
    } else {
        double w = f->rate * (double)f->rtt / 1e9;
        *win = w < f->win_max ? w : f->win_max;
        *cap = f->rate;
        *wbind = f->rate < f->cap0;
    }
}

/* The first round boundary of active TCP flow f after now. */
static int64_t next_round(const net *n, const flow *f) {
    int64_t since = n->now > f->t_act ? n->now - f->t_act : 0;
    return add_sat(add_sat(f->t_act, since - since % f->rtt), f->rtt);
}

/* Sets t_round of active TCP flow id: its next boundary if that changes
 * its window, cap or wbind at the current rate and capbound, else never. */
static void tcp_reschedule(net *n, int id) {
    flow *f = &n->flows[id];
    double win, cap;
    int wbind;
    tcp_next(f, &win, &cap, &wbind);
    int64_t t = win != f->win || cap != f->cap || wbind != f->wbind ? next_round(n, f)
                                                                   : INT64_MAX;
    if (t != f->t_round) {
        f->t_round = t;
        due_update(n, id);
    }
}

/* The same for any active flow (nothing for one that is not TCP). */
static inline void tcp_schedule(net *n, int id) {
    if (n->flows[id].rtt != 0)
        tcp_reschedule(n, id);
}

/* Active flow id is at a round boundary: its new window and cap; a new
 * cap seeds share(), unless it is the flow's rate (a share-limited flow
 * whose cap comes down to its share: the filling is the same, and
 * refilling would only move other rates by rounding).  Returns 0
 * (visit_in_live_order: not removed). */
static int round_due(net *n, int id) {
    flow *f = &n->flows[id];
    double cap;
    tcp_next(f, &f->win, &cap, &f->wbind);
    if (cap != f->cap) {
        f->cap = cap;
        if (cap != f->rate)
            seed(n, id);
    }
    f->t_round = INT64_MAX;
    due_update(n, id);
    tcp_reschedule(n, id);
    return 0;
}

/* ---- progressive filling ---------------------------------------------- *
 *
 * All unfrozen flows rise together to a common level; a flow freezes when
 * the level reaches its cap or saturates a link it crosses.  The next level
 * is the smaller of the least unfrozen cap (a sorted list) and the least
 * fair share rem/nflows over the links (a min-heap).  Freezing a
 * flow at level lam takes lam from its links and never lowers their fair
 * share, so the heap only needs sifting down.  A filling costs
 * O((flows + links) log), whatever the number of distinct levels. */

static void heap_sift_down(net *n, int nt, int i) {
    heap_entry *h = n->heap, e = h[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= nt)
            break;
        if (c + 1 < nt && h[c + 1].fair < h[c].fair)
            c++;
        if (h[c].fair >= e.fair)
            break;
        h[i] = h[c];
        n->links[h[i].link].hpos = i;
        i = c;
    }
    h[i] = e;
    n->links[e.link].hpos = i;
}

static int by_cap(const void *a, const void *b) {
    const capped_flow *x = a, *y = b;
    if (x->cap != y->cap)
        return x->cap < y->cap ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Marks the active flows ids[0..cnt) (in live order) unfrozen (rate -1),
 * lists the bounded links they cross in n->heap (heapified on fair share)
 * with each link's flows in n->lflows, and the capped flows, sorted, in
 * n->capped.  Returns the number of links; *ncapped gets the number of
 * capped flows. */
static int fill_setup(net *n, const int *ids, int cnt, int *ncapped) {
    int nt = 0, nc = 0, ls[2];
    for (int i = 0; i < cnt; i++) {
        flow *f = &n->flows[ids[i]];
        f->rate = -1;
        f->capbound = 0;
        if (isfinite(f->cap))
            n->capped[nc++] = (capped_flow){f->cap, ids[i]};
        for (int k = bounded_links(n, f, ls); k-- > 0;) {
            link_state *L = &n->links[ls[k]];
            if (L->nflows++ == 0)
                n->heap[nt++].link = ls[k];
        }
    }
    int off = 0;
    for (int i = 0; i < nt; i++) {
        link_state *L = &n->links[n->heap[i].link];
        L->rem = L->cap;
        n->heap[i].fair = L->cap / L->nflows;
        L->first = off;
        L->nlist = 0;
        off += L->nflows;
    }
    for (int i = 0; i < cnt; i++) {
        const flow *f = &n->flows[ids[i]];
        for (int k = bounded_links(n, f, ls); k-- > 0;) {
            link_state *L = &n->links[ls[k]];
            n->lflows[L->first + L->nlist++] = ids[i];
        }
    }
    for (int i = nt / 2 - 1; i >= 0; i--)
        heap_sift_down(n, nt, i);
    for (int i = 0; i < nt; i++)
        n->links[n->heap[i].link].hpos = i;
    if (nc > 1)
        qsort(n->capped, (size_t)nc, sizeof *n->capped, by_cap);
    *ncapped = nc;
    return nt;
}

/* Freezes flow f at rate lam and updates its links' fair shares.  Returns
 * 1 if rounding lowered a fair share (the heap may then be out of order),
 * else 0. */
static int fill_freeze(net *n, int nt, flow *f, double lam) {
    int ls[2], lowered = 0;
    f->rate = lam;
    for (int k = bounded_links(n, f, ls); k-- > 0;) {
        link_state *L = &n->links[ls[k]];
        L->rem -= lam;
        L->nflows--;
        /* never below the level just reached (rounding could say so) */
        double fair = L->nflows > 0 ? L->rem / L->nflows : INFINITY;
        fair = fair > lam ? fair : lam;
        lowered |= fair < n->heap[L->hpos].fair;
        n->heap[L->hpos].fair = fair;
        heap_sift_down(n, nt, L->hpos);
    }
    return lowered;
}

/* Whether a cap frozen at lam binds below a share: by more than a relative
 * 1e-9 (CAP_MARGIN), so that a cap set to a share, which the next filling
 * may compute an ulp higher in another order, never looks binding. */
#define CAP_MARGIN (1 - 1e-9)

/* Whether level lam binds below the fair share of every bounded link f
 * crosses (CAP_MARGIN). */
static int below_links(const net *n, const flow *f, double lam) {
    int ls[2];
    for (int k = bounded_links(n, f, ls); k-- > 0;)
        if (!(lam < n->heap[n->links[ls[k]].hpos].fair * CAP_MARGIN))
            return 0;
    return 1;
}

/* The one unfrozen flow of a link in the filling (nflows == 1). */
static int unfrozen(const net *n, const link_state *L) {
    for (int j = L->first; j < L->first + L->nlist; j++)
        if (n->flows[n->lflows[j]].rate < 0)
            return n->lflows[j];
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
    if (ties != 1)
        return ties > 1;
    for (int i = 2 * c + 1; i <= 2 * c + 2 && i < nt; i++)
        if (h[i].fair == h[0].fair)
            return 1;
    const link_state *R = &n->links[h[0].link], *T = &n->links[h[c].link];
    return R->nflows != 1 || T->nflows != 1 || unfrozen(n, R) != unfrozen(n, T);
}

/* Sets the rates of the active flows ids[0..cnt) (in live order, no
 * bounded link shared with a flow outside them): max-min fair with
 * per-flow caps.  With `watch`, returns 1 if the filling met something
 * whose outcome the order of equal levels could change (see the file
 * comment), else 0. */
static int fill_rates(net *n, const int *ids, int cnt, int watch) {
    int nc, ci = 0, tied = 0, linked = 0;
    double last = 0;
    int nt = fill_setup(n, ids, cnt, &nc);
    for (;;) {
        while (ci < nc && n->flows[n->capped[ci].id].rate >= 0)
            ci++; /* already frozen by a link */
        double lc = ci < nc ? n->capped[ci].cap : INFINITY;
        double ll = nt > 0 ? n->heap[0].fair : INFINITY;
        if (isinf(lc) && isinf(ll))
            break;
        if (lc <= ll) {
            flow *f = &n->flows[n->capped[ci++].id];
            f->capbound = below_links(n, f, lc);
            tied |= fill_freeze(n, nt, f, lc);
            continue;
        }
        if (watch && !tied)
            tied = (linked && ll == last) || root_tied(n, nt);
        linked = 1;
        last = ll;
        const link_state *L = &n->links[n->heap[0].link];
        for (int j = L->first; j < L->first + L->nlist; j++) {
            flow *f = &n->flows[n->lflows[j]];
            if (f->rate < 0)
                tied |= fill_freeze(n, nt, f, ll);
        }
    }
    /* what is left has no bounded link and no cap */
    for (int i = 0; i < cnt; i++) {
        flow *f = &n->flows[ids[i]];
        if (f->rate < 0)
            f->rate = INFINITY;
    }
    return watch && tied;
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
            if (L->seen == n->epoch)
                continue;
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
    sort_live(n, n->comp, c);
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
        if (f->link[k] < 0)
            continue;
        const link_state *L = &n->links[f->link[k]];
        if (L->nact > 1 && isfinite(L->cap))
            return -1;
        if (L->cap < links)
            links = L->cap;
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
        if (L->nact == 0)
            continue;
        const int *ids = L->act;
        if (L->nact > 2) {
            memcpy(n->comp, L->act, (size_t)L->nact * sizeof *L->act);
            sort_live(n, n->comp, L->nact);
            ids = n->comp;
        }
        L->load = 0;
        for (int j = 0; j < L->nact; j++) {
            double r = n->flows[ids[j]].rate;
            if (isfinite(r))
                L->load += r;
        }
        double load = L->load < L->cap ? L->load : L->cap;
        if (load > L->peak)
            L->peak = load;
    }
    n->ndirty = 0;
}

/* Refills the components of the seeded flows (every flow while one is
 * tied), then brings completion instants, peaks and the cached next
 * instant up to date: a flow whose rate changed, and every eager one,
 * begins a new segment; a lazy one keeps its instant (it is proven). */
static void share(net *n) {
    n->epoch++;
    n->due_now = 0;
    for (int s = 0; s < n->nseeds; s++) {
        flow *f = &n->flows[n->seeds[s]];
        f->seeded = 0;
        if (f->state == FLOW_ACTIVE && f->seen != n->epoch)
            fill_component(n, n->seeds[s]);
    }
    n->nseeds = 0;
    if (n->ntied > 0) {
        fill_all(n);
        for (int i = 0; i < n->nlive; i++)
            if (n->flows[n->live[i]].state == FLOW_ACTIVE)
                mark_links_dirty(n, &n->flows[n->live[i]]);
    }
    /* backwards: begin_segment() may move the last eager flow into i.  A
     * segment begun at this tick has its instant already. */
    for (int i = n->neager - 1; i >= 0; i--)
        if (n->flows[n->eager[i]].k0 != tick_now(n))
            begin_segment(n, n->eager[i], 1);
    update_peaks(n);
    update_next(n);
}

/* ---- completing and activating ----------------------------------------- */

/* Ends flow id at the current instant: whatever residue it had left counts
 * as moved, it leaves the live set and joins the batch to report. */
/* A TCP flow that ends inside a round while its window bound it: the
 * acknowledgements of what it sent in that round come after its end and
 * grow the window by as much, as slow start does for every acknowledged
 * byte (Linux counts a flow sending at its window as cwnd-limited).  So a
 * flow shorter than a round still grows the window its connection keeps.
 * The bytes of the round are its rate times the time since the round
 * began (the rate is the one its last filling gave it). */
static void tcp_last_round(net *n, flow *f) {
    if (f->rtt == 0 || !(f->capbound && f->wbind) || !(f->rate > 0)) return;
    int64_t since = n->now > f->t_act ? n->now - f->t_act : 0;
    /* in (0, rtt]: completions come before a boundary at the same ns */
    int64_t into = since > 0 ? (since - 1) % f->rtt + 1 : 0;
    double sent = f->rate * (double)into / 1e9;
    double w = f->win + (sent < f->win ? sent : f->win);
    f->win = w < f->win_max ? w : f->win_max;
}

static void finish(net *n, int id) {
    flow *f = &n->flows[id];
    tcp_last_round(n, f);
    count_bytes(n, f, f->bytes);
    eager_remove(n, id);
    f->lazy = 0;
    f->remaining = 0;
    f->state = FLOW_DONE;
    live_remove(n, id);
    n->batch[n->nbatch++] = id;
}

/* Finishes the active flows due at t.  Returns how many. */
/* The positions of the cnt marked flows ids[] into n->order, ascending. */
static void found_positions(net *n, const int *ids, int cnt) {
    for (int i = 0; i < cnt; i++)
        n->order[i] = n->flows[ids[i]].pos;
    sort_ints(n->order, cnt);
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
        else
            lo++;
    }
}

static int finish_due(net *n, int id) {
    links_leave(n, id);
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
    int ls[2];
    if (f->remaining <= tolerance(f) || (isinf(f->cap) && bounded_links(n, f, ls) == 0)) {
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
            if (n->flows[id].state == FLOW_ACTIVE && done_due(&n->flows[id], t)) {
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
            if (!activate(n, id))
                i++;
        }
        for (int i = 0; i < n->nlive && n->ntcp > 0; i++) {
            const flow *f = &n->flows[n->live[i]];
            if (f->state == FLOW_ACTIVE && f->t_round <= t)
                round_due(n, n->live[i]);
        }
        return count + (n->nseeds > seeds);
    }
    int nf, na, nr;
    gather_due(n, t, &nf, &na, &nr);
    found_positions(n, n->found, nf);
    visit_in_live_order(n, nf, finish_due);
    found_positions(n, n->found_act, na);
    visit_in_live_order(n, na, activate);
    found_positions(n, n->found_round, nr);
    visit_in_live_order(n, nr, round_due);
    return nf + na + (n->nseeds > seeds);
}

/* Processes one instant t (the cached next instant): completes what is
 * due, activates what is due, recomputes the rates, then reports the
 * completions in id order and releases their ids.  The cached next instant
 * is the exact least t_act, t_done or t_round of a live flow, so at least
 * one flow changes here (a round boundary that changes no cap moves its
 * t_round on) and net_advance() always makes progress. */
static void process_instant(net *n, int64_t t, net_done_fn done, void *ctx) {
    step_to(n, t);
    n->nbatch = 0;
    int changed = process_due(n, t);
    if (!changed) /* round boundaries only, that changed no cap */
        update_next(n);
    while (changed) {
        share(n);
        /* after share() only a flow it gave t_done <= t can be due: lazy
         * ones are proven, eager ones at or under tolerance got now, and
         * nothing waits for t any more */
        changed = n->due_now ? process_due(n, t) : 0;
    }
    int nb = n->nbatch;
    sort_ints(n->batch, nb);
    /* Callbacks may add flows, which may reallocate the arrays: index them
     * afresh every time. */
    if (done)
        for (int i = 0; i < nb; i++)
            done(ctx, t, n->batch[i], n->flows[n->batch[i]].tag);
    for (int i = 0; i < nb; i++)
        release_id(n, n->batch[i]);
    n->nbatch = 0;
}

/* Brings the clock to now for an add or a cancel.  Should that pass
 * instants not processed yet (a caller that did not advance first), a
 * lazy flow due by then is brought up to date: proofs cover only instants
 * before a flow's t_done.  (So every lazy flow's t_done is after now
 * whenever a public call returns.) */
static void catch_up(net *n, int64_t now) {
    int64_t was = n->now;
    step_to(n, now);
    if (n->now > was && n->next <= n->now)
        make_eager_if(n, done_by_now);
}

/* ---- public interface -------------------------------------------------- */

net *net_new(int nlinks) {
    if (nlinks < 0)
        return NULL;
    net *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    size_t nl = nlinks > 0 ? (size_t)nlinks : 1;
    n->links = calloc(nl, sizeof *n->links);
    n->heap = calloc(nl, sizeof *n->heap);
    n->dirty = calloc(nl, sizeof *n->dirty);
    n->ticks = calloc(64, sizeof *n->ticks); /* tick 0: instant 0 */
    if (!n->links || !n->heap || !n->dirty || !n->ticks || grow(n) < 0) {
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
    if (!n)
        return;
    for (int l = 0; l < n->nlinks; l++)
        free(n->links[l].act);
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
    free(n);
}

void net_link_set(net *n, int link, double bytes_per_s) {
    if (link < 0 || link >= n->nlinks || !(bytes_per_s > 0))
        return;
    link_state *L = &n->links[link];
    L->cap = bytes_per_s;
    for (int j = 0; j < L->nact; j++)
        seed(n, L->act[j]);
    mark_dirty(n, link);
    share(n);
}

int net_flow_add(net *n, int64_t now, int64_t latency_ns, int link_a,
                 int link_b, uint64_t bytes, double max_bytes_per_s,
                 uint64_t tag) {
    if (!valid_link(n, link_a) || !valid_link(n, link_b) || latency_ns < 0 ||
        !(max_bytes_per_s > 0))
        return MSG_EINPUT;
    if (link_a == link_b)
        link_b = -1;
    if ((link_a >= 0 && reserve_link(n, link_a) < 0) ||
        (link_b >= 0 && reserve_link(n, link_b) < 0))
        return MSG_ENOMEM;
    int id = new_id(n);
    if (id < 0)
        return MSG_ENOMEM;
    catch_up(n, now);
    flow *f = &n->flows[id];
    *f = (flow){.bytes = bytes, .remaining = (double)bytes,
                .cap = max_bytes_per_s,
                .t_act = add_sat(n->now, latency_ns), .t_done = INT64_MAX,
                .tag = tag, .link = {link_a, link_b}, .state = FLOW_WAITING,
                .pos = n->nlive, .count = 1, .seg_rate = NAN, .epos = -1,
                .t_round = INT64_MAX};
    for (int k = 0; k < 2; k++)
        if (f->link[k] >= 0 && ++n->links[f->link[k]].nref > 1)
            n->anonymous = 0; /* a shared link: ids may matter from now on */
    n->live[n->nlive++] = id;
    n->ncount++;
    due_add(n, id);
    if (f->t_act < n->next)
        n->next = f->t_act;
    return id;
}

int net_flow_set_tcp(net *n, int flow_id, int64_t rtt_ns, double window,
                     double max_window) {
    if (flow_id < 0 || flow_id >= n->nflows || n->flows[flow_id].state != FLOW_WAITING ||
        rtt_ns <= 0 || !(window > 0) || !isfinite(window) || !(max_window > 0))
        return MSG_EINPUT;
    flow *f = &n->flows[flow_id];
    if (f->rtt == 0) {
        f->cap0 = f->cap;
        n->ntcp++;
    }
    f->rtt = rtt_ns;
    f->win = window < max_window ? window : max_window;
    f->win_max = max_window;
    double wc = window_cap(f);
    f->cap = wc < f->cap0 ? wc : f->cap0;
    f->wbind = wc < f->cap0;
    if (!(f->cap > 0)) { /* a window too small for a rate: none at all */
        f->cap = f->cap0;
        f->rtt = 0;
        n->ntcp--;
        return MSG_EINPUT;
    }
    return 0;
}

double net_flow_window(const net *n, int flow_id) {
    if (flow_id < 0 || flow_id >= n->nflows)
        return 0;
    const flow *f = &n->flows[flow_id];
    return f->state == FLOW_FREE || f->rtt == 0 ? 0 : f->win;
}

int64_t net_now(const net *n) {
    return n->now;
}

int64_t net_shift_total(const net *n) {
    return n->shifted;
}

void net_flow_cancel(net *n, int64_t now, int flow_id) {
    if (flow_id < 0 || flow_id >= n->nflows)
        return;
    int state = n->flows[flow_id].state;
    if (state != FLOW_WAITING && state != FLOW_ACTIVE)
        return;
    catch_up(n, now);
    if (state == FLOW_ACTIVE) {
        flow *f = &n->flows[flow_id];
        count_bytes(n, f, moved_bytes(f, remaining_now(n, f)));
        eager_remove(n, flow_id);
        f->lazy = 0;
        links_leave(n, flow_id);
    }
    live_remove(n, flow_id);
    release_id(n, flow_id);
    if (state == FLOW_ACTIVE)
        share(n);
    else
        update_next(n);
}

int64_t net_next_time(const net *n) {
    return n->next;
}

void net_advance(net *n, int64_t now, net_done_fn done, void *ctx) {
    while (n->next <= now)
        process_instant(n, n->next, done, ctx);
    step_to(n, now);
}

uint64_t net_link_bytes(const net *n, int link) {
    if (link < 0 || link >= n->nlinks)
        return 0;
    const link_state *L = &n->links[link];
    uint64_t b = L->bytes;
    for (int j = 0; j < L->nact; j++) {
        const flow *f = &n->flows[L->act[j]];
        b += moved_bytes(f, remaining_now(n, f));
    }
    return b;
}

double net_link_peak(const net *n, int link) {
    return link >= 0 && link < n->nlinks ? n->links[link].peak : 0;
}

double net_flow_rate(const net *n, int flow_id) {
    if (flow_id < 0 || flow_id >= n->nflows || n->flows[flow_id].state != FLOW_ACTIVE)
        return 0;
    return n->flows[flow_id].rate;
}

int net_active_flows(const net *n) {
    return n->ncount;
}

void net_flow_set_count(net *n, int flow_id, int count) {
    if (flow_id < 0 || flow_id >= n->nflows || count < 1)
        return;
    flow *f = &n->flows[flow_id];
    if (f->state != FLOW_WAITING && f->state != FLOW_ACTIVE)
        return;
    n->ncount += count - f->count;
    f->count = count;
}

uint64_t net_flow_counted(const net *n, int flow_id) {
    if (flow_id < 0 || flow_id >= n->nflows)
        return 0;
    const flow *f = &n->flows[flow_id];
    if (f->state != FLOW_WAITING && f->state != FLOW_ACTIVE)
        return 0;
    return moved_bytes(f, remaining_now(n, f));
}

double net_link_capacity(const net *n, int link) {
    return link >= 0 && link < n->nlinks ? n->links[link].cap : 0;
}

void net_set_lazy(net *n, int on) {
    n->no_lazy = !on;
    if (!on)
        make_eager_if(n, any_flow);
}

void net_set_anonymous(net *n) {
    n->anonymous = 1;
    for (int l = 0; l < n->nlinks; l++)
        if (n->links[l].nref > 1)
            n->anonymous = 0;
}

/* ---- signature and time shift ------------------------------------------ */

/* An instant relative to now; INT64_MAX (never) stays itself. */
static void sig_instant(sig_buf *s, int64_t t, int64_t now) {
    sig_i64(s, t == INT64_MAX ? INT64_MAX : t - now);
}

/* What decides flow id's future (sig_flow bytes), instants relative to now;
 * its id is the first field. */
typedef struct {
    int32_t id, state, link[2], tied, count, capbound, wbind;
    uint64_t bytes, counted, tag;
    double remaining, rate, cap, win, win_max, cap0;
    int64_t t_act, t_done, rtt, t_round;
} sig_flow;

static sig_flow flow_sig(const net *n, int id, int64_t now) {
    const flow *f = &n->flows[id];
    sig_flow g;
    memset(&g, 0, sizeof g); /* padding too: the bytes are compared */
    g.id = id;
    g.state = f->state;
    g.link[0] = f->link[0];
    g.link[1] = f->link[1];
    g.tied = f->tied;
    g.count = f->count;
    g.bytes = f->bytes;
    g.remaining = remaining_now(n, f);
    g.counted = moved_bytes(f, g.remaining);
    g.tag = f->tag;
    g.rate = f->rate;
    g.cap = f->cap;
    g.t_act = f->t_act == INT64_MAX ? INT64_MAX : f->t_act - now;
    g.t_done = f->t_done == INT64_MAX ? INT64_MAX : f->t_done - now;
    if (f->rtt) { /* the rest is zero for a flow that is not TCP */
        g.capbound = f->capbound;
        g.wbind = f->wbind;
        g.win = f->win;
        g.win_max = f->win_max;
        g.cap0 = f->cap0;
        g.rtt = f->rtt;
        g.t_round = f->t_round == INT64_MAX ? INT64_MAX : f->t_round - now;
    }
    return g;
}

/* Orders sig_flows by their bytes after the id: a canonical order that
 * does not depend on ids. */
static int by_sig(const void *a, const void *b) {
    const sig_flow *x = a, *y = b;
    size_t off = sizeof x->id;
    return memcmp((const char *)x + off, (const char *)y + off, sizeof *x - off);
}

void net_signature(const net *n, int64_t now, sig_buf *s) {
    sig_i64(s, n->nlive);
    sig_i64(s, n->anonymous);
    if (n->anonymous) {
        /* ids and live order cannot matter: the live flows as a set */
        sig_flow *v = malloc((size_t)n->nlive * sizeof *v + 1);
        if (!v) {
            s->oom = 1;
            return;
        }
        for (int i = 0; i < n->nlive; i++) {
            v[i] = flow_sig(n, n->live[i], now);
            v[i].id = 0;
        }
        qsort(v, (size_t)n->nlive, sizeof *v, by_sig);
        sig_put(s, v, (size_t)n->nlive * sizeof *v);
        free(v);
    } else {
        for (int i = 0; i < n->nlive; i++) {
            sig_flow g = flow_sig(n, n->live[i], now);
            sig_put(s, &g, sizeof g);
        }
        sig_i64(s, n->nfree);
        sig_put(s, n->freeids, (size_t)n->nfree * sizeof *n->freeids);
        sig_i64(s, n->nflows);
    }
    sig_instant(s, n->next, now);
    sig_instant(s, n->now, now);
    sig_i64(s, n->nlinks);
    for (int l = 0; l < n->nlinks; l++)
        sig_put(s, &n->links[l].cap, sizeof n->links[l].cap);
}

void net_shift(net *n, int64_t dt) {
    n->now += dt;
    n->shifted += dt;
    for (int i = 0; i < n->nticks; i++)
        n->ticks[i] += dt;
    if (n->next != INT64_MAX)
        n->next += dt;
    for (int i = 0; i < n->nlive; i++) {
        flow *f = &n->flows[n->live[i]];
        if (f->t_act != INT64_MAX)
            f->t_act += dt;
        if (f->t_done != INT64_MAX)
            f->t_done += dt;
        if (f->t_round != INT64_MAX)
            f->t_round += dt;
        if (n->heaped && n->due[i].t != INT64_MAX)
            n->due[i].t += dt; /* the heap's order stays */
    }
}

void net_link_bytes_add(net *n, int link, uint64_t bytes) {
    if (link >= 0 && link < n->nlinks)
        n->links[link].bytes += bytes;
}
