/*
 * net_int.h -- the net's state, shared by its files and by nothing else.
 *
 * The flow-level model (net.h) is split along its seams:
 *   net.c        the public calls: adding, cancelling, advancing, reading;
 *                an instant's completions, activations and round
 *                boundaries, and the owners' done callbacks
 *   net_flows.c  the live set, flow ids, per-link lists, the heap of due
 *                instants, the arrays that grow
 *   net_step.c   moving bytes through time: ticks, lazy segments and
 *                their proofs, completion instants, the next instant
 *   net_share.c  max-min fair sharing (progressive filling) by component,
 *                ties, peaks
 *   net_tcp.c    TCP windows: slow start by round boundaries
 *   net_sig.c    signatures for the fast-forward, the time shift
 * Functions shared between the files carry the prefix net__; the small
 * ones every pass calls are inline here.  Only the net's own files
 * include this header.
 */
#ifndef DILOSIM_NET_INT_H
#define DILOSIM_NET_INT_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim/engine/net.h"

enum { FLOW_FREE, FLOW_WAITING, FLOW_ACTIVE, FLOW_DONE };

typedef struct {
    uint64_t bytes;   /* size of the flow */
    double remaining; /* bytes still to move (fractional while moving); a
                          lazy flow: at the start of its segment */
    double rate;      /* bytes/s while active */
    double seg_rate;  /* the rate its segment began with (NaN: none) */
    int64_t k0;       /* the tick its segment began at; lazy: the tick
                          `remaining` refers to */
    int64_t kend;     /* lazy: the last tick its proof covers */
    double cap;       /* the flow's own max rate (may be INFINITY) */
    int64_t t_act;    /* instant it becomes active */
    int64_t t_done;   /* completion instant at the current rate */
    net_done_fn done; /* its owner's callback (NULL: none), with ctx and tag */
    void *ctx;
    uint64_t tag;
    uint64_t seen; /* share(): epoch of the pass that reached it */
    int link[2];   /* -1 for none; link[1] != link[0] */
    int lpos[2];   /* its index in links[link[k]].act while active */
    int state;     /* FLOW_* */
    int pos;       /* index in net.live while live */
    int tied;      /* its component's last filling was tied */
    int seeded;    /* in net.seeds */
    int count;     /* alike flows it stands for (net_flow_set_count) */
    int lazy;      /* stepped only when needed (see the file comment) */
    int epos;      /* its index in net.eager, -1 when not there */
    int hpos;      /* its index in net.due while live */
    int marked;    /* gathered by gather_due() */
    /* TCP (net_flow_set_tcp; see the TCP comment below); rtt 0: none */
    int64_t rtt;     /* round trip, ns */
    int64_t t_round; /* the next round boundary that changes its window,
                          cap or wbind (INT64_MAX: none would) */
    double win;      /* window, bytes */
    double win_max;  /* the window's limit (may be INFINITY) */
    double cap0;     /* its own max rate, before the window's */
    int capbound;    /* its last filling froze it at its cap, below the
                          fair share of each of its links (CAP_MARGIN) */
    int wbind;       /* its cap is the window's, below cap0 */
} flow;

typedef struct {
    double cap;     /* bytes/s, 0 until set, may be INFINITY */
    uint64_t bytes; /* whole bytes that crossed the link */
    double peak;    /* highest total rate carried */
    double load;    /* total rate at the last update_peaks() */
    int *act;       /* active flows crossing it, in no order */
    int nact;
    int nref;      /* live flows crossing it (act has room for them) */
    int cact;      /* allocated entries of act */
    int dirty;     /* in net.dirty */
    uint64_t seen; /* share(): epoch of the pass that reached it */
    /* scratch for the filling, meaningful only for links in net.heap */
    double rem;       /* capacity not yet handed out */
    int nflows;       /* unfrozen flows crossing it or loading it */
    int nrev;         /* of those, loading it by their ACKs */
    int first, nlist; /* its flows: net.lflows[first .. first+nlist) */
    int hpos;         /* its index in the heap net.heap */
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
    int64_t now;  /* instant the flows' remaining bytes refer to */
    int64_t next; /* cached net_next_time() */
    int nlinks;
    link_state *links;
    heap_entry *heap; /* filling: bounded links crossed by its flows */
    int *dirty;       /* links whose peak needs updating */
    int ndirty;

    flow *flows;
    int nflows; /* slots ever used: ids are < nflows */
    int fcap;   /* allocated slots in flows and the int arrays below */
    int *live;  /* ids of waiting and active flows, dense */
    int nlive;
    int ncount;    /* sum of the live flows' counts */
    int anonymous; /* net_set_anonymous() and no link shared since */
    int *freeids;  /* stack of reusable ids */
    int nfree;
    int *lflows;         /* filling: flows of each link (4 * fcap: two
                            links and, with ACKs, two reverse links) */
    capped_flow *capped; /* filling: flows with a finite cap, by cap */
    int *batch;          /* flows completed at the instant being processed */
    int nbatch;
    int *seeds; /* active flows whose component changed */
    int nseeds;
    int *comp;      /* share(): the flows of one component, or all */
    int *order;     /* share(): positions in live, to sort */
    int ntied;      /* active flows with tied set */
    uint64_t epoch; /* share() passes so far */

    /* lazy stepping (see the file comment) */
    int64_t *ticks; /* the instants the clock stopped at: tick k is
                          ticks[k - tick0]; the last one is now */
    int64_t tick0;
    int nticks, cticks;
    int trim_at; /* nticks at which old ticks are dropped */
    int *eager;  /* active flows stepped at every tick */
    int neager;
    due_entry *due;  /* min-heap of the live flows by due_at() */
    int heaped;      /* net.due is kept (see the heap of due instants) */
    int *found;      /* gather_due(): the flows due, to finish */
    int *found_act;  /* gather_due(): the flows due, to activate */
    due_entry *ends; /* min-heap of lazy segments by the tick their
                          proof ends; entries of ended segments linger */
    int nends, cends;
    int due_now;      /* share() gave some flow t_done <= now */
    int no_lazy;      /* net_set_lazy(n, 0) */
    int *found_round; /* gather_due(): the flows at a round boundary */
    int ntcp;         /* live TCP flows */
    int64_t shifted;  /* the sum of net_shift()'s dt */
    double ack;       /* net_set_ack(): the ACK coefficient, 0 for none */
    int *partner;     /* net_set_ack(): each link's reverse link, or -1 */
};

enum {
    HEAP_ON = 48,
    HEAP_OFF = 16
};                            /* live flows at which net.due turns on, off */
enum { TICKS_MAX = 1 << 16 }; /* ticks kept for lazy flows, at most */

/* Whether a cap frozen at lam binds below a share: by more than a relative
 * 1e-9 (CAP_MARGIN), so that a cap set to a share, which the next filling
 * may compute an ulp higher in another order, never looks binding. */
#define CAP_MARGIN (1 - 1e-9)

/* ---- shared between the files (the details at their definitions) ------ */

/* net_flows.c: the heap of due instants and the live set */
/* Puts e in the hole at i of the min-heap h[0..cnt) or below it / up past
 * larger parents; with flows, records each entry's place in its hpos. */
void net__heap_down(due_entry *h, int cnt, int i, due_entry e, flow *flows);
void net__heap_up(due_entry *h, int i, due_entry e, flow *flows);
/* Puts e where the hole at i of net.due belongs. */
void net__due_sift(net *n, int i, due_entry e);
/* Flow id (already counted in nlive) joins net.due; builds the heap past
 * HEAP_ON live flows. */
void net__due_add(net *n, int id);
/* The flows due at t (heap on): to finish into n->found, to activate into
 * n->found_act, at a round boundary into n->found_round; their counts. */
void net__gather_due(net *n, int64_t t, int *nf, int *na, int *nr);
/* Flow id leaves the live set (and net.due, and its links' counts). */
void net__live_remove(net *n, int id);
/* An active flow leaves its links' lists; the flows left on its bounded
 * links seed net__share(). */
void net__links_leave(net *n, int id);
/* Twice count (first when 0), or -1 past INT32_MAX. */
int net__doubled(int count, int first);
/* Doubles every per-flow array; 0, or -1 with nothing relied on changed. */
int net__grow(net *n);
/* Sorts a[0..cnt) ascending. */
void net__sort_ints(int *a, int cnt);
/* Sorts the live flows ids[0..cnt) into live order. */
void net__sort_live(net *n, int *ids, int cnt);

/* net_step.c: time */
/* f's remaining bytes at n->now (a lazy flow's replayed exactly). */
double net__remaining_now(const net *n, const flow *f);
/* Makes every active lazy flow for which pred holds eager. */
void net__make_eager_if(net *n, int (*pred)(const net *, const flow *));
/* Moves every active flow's bytes from n->now to t (a new tick). */
void net__step_to(net *n, int64_t t);
/* A new segment of active flow id at now: its completion instant, then
 * with `prove` lazy if that can be proven, else eager. */
void net__begin_segment(net *n, int id, int prove);
/* Recomputes the cached next instant (n->next). */
void net__update_next(net *n);

/* net_tcp.c */
/* Sets active TCP flow id's next round boundary that changes something. */
void net__tcp_reschedule(net *n, int id);
/* Active flow id is at a round boundary: its new window and cap; returns 0
 * (it stays live). */
int net__round_due(net *n, int id);
/* A TCP flow ending inside a window-bound round adds what it sent in it. */
void net__tcp_last_round(net *n, flow *f);

/* net_share.c */
/* Refills the seeded components (or every flow while one is tied), then
 * brings completion instants, peaks and the next instant up to date. */
void net__share(net *n);

/* ---- small helpers, inline ---------------------------------------------- */

/* How close to zero `remaining` must be for a flow to count as done:
 * absorbs floating-point residue, never a visible amount of data. */
static inline double tolerance(const flow *f) {
    return 1e-9 * (double)f->bytes + 1e-6;
}

static inline int64_t add_sat(int64_t t, int64_t d) {
    return d > INT64_MAX - t ? INT64_MAX : t + d;
}

/* The bounded (finite capacity) link ids crossed by f, into out[];
 * returns how many. */
static inline int bounded_links(const net *n, const flow *f, int out[2]) {
    int k = 0;
    for (int i = 0; i < 2; i++)
        if (f->link[i] >= 0 && isfinite(n->links[f->link[i]].cap))
            out[k++] = f->link[i];
    return k;
}

/* With ACKs (net_set_ack), appends to out[k..] the bounded reverse links
 * f's acknowledgements load (the partners of link[1] and link[0]); returns
 * the new count, k without ACKs.  out[] has room for 4 links. */
static inline int ack_links(const net *n, const flow *f, int *out, int k) {
    if (!(n->ack > 0)) return k;
    for (int i = 2; i-- > 0;) {
        int l = f->link[i] >= 0 ? n->partner[f->link[i]] : -1;
        if (l >= 0 && isfinite(n->links[l].cap)) out[k++] = l;
    }
    return k;
}

/* The weight of a link in the filling: its unfrozen flows crossing it
 * (coefficient 1) plus ack times those loading it by their ACKs; without
 * ACKs exactly nflows. */
static inline double link_weight(const net *n, const link_state *L) {
    return (double)(L->nflows - L->nrev) + n->ack * L->nrev;
}

/* The whole bytes f has moved when `remaining` bytes are left: its size
 * minus the remaining bytes rounded up.  Remaining bytes only shrink, so
 * this only grows: a live flow's links count exactly this much of it. */
static inline uint64_t moved_bytes(const flow *f, double remaining) {
    double r = ceil(remaining);
    uint64_t left = r <= 0 ? 0 : r >= (double)f->bytes ? f->bytes : (uint64_t)r;
    return f->bytes - left;
}

/* Queues link l for update_peaks(). */
static inline void mark_dirty(net *n, int l) {
    if (l >= 0 && !n->links[l].dirty) {
        n->links[l].dirty = 1;
        n->dirty[n->ndirty++] = l;
    }
}

static inline void mark_links_dirty(net *n, const flow *f) {
    mark_dirty(n, f->link[0]);
    mark_dirty(n, f->link[1]);
}

/* Queues active flow id for net__share(): its component changed. */
static inline void seed(net *n, int id) {
    flow *f = &n->flows[id];
    if (!f->seeded) {
        f->seeded = 1;
        n->seeds[n->nseeds++] = id;
    }
}

/* The instant a live flow is next due at: its activation while it waits,
 * then its completion or its next round boundary, whichever comes first. */
static inline int64_t due_at(const flow *f) {
    if (f->state == FLOW_WAITING) return f->t_act;
    return f->t_round < f->t_done ? f->t_round : f->t_done;
}

/* A live flow's due_at() may have changed. */
static inline void due_update(net *n, int id) {
    if (!n->heaped) return;
    const flow *f = &n->flows[id];
    due_entry e = {due_at(f), id};
    if (n->due[f->hpos].t != e.t) net__due_sift(n, f->hpos, e);
}

/* Whether active flow f is due at t: complete by its instant, or an eager
 * one at or under tolerance (a lazy one is proven above it). */
static inline int done_due(const flow *f, int64_t t) {
    return f->t_done <= t || (!f->lazy && f->remaining <= tolerance(f));
}

static inline int64_t tick_now(const net *n) {
    return n->tick0 + n->nticks - 1;
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
    if (f->epos < 0) return;
    int last = n->eager[--n->neager];
    n->eager[f->epos] = last;
    n->flows[last].epos = f->epos;
    f->epos = -1;
}

/* Finds active flow id's next round boundary again (net__tcp_reschedule);
 * nothing for a flow that is not TCP. */
static inline void tcp_schedule(net *n, int id) {
    if (n->flows[id].rtt != 0) net__tcp_reschedule(n, id);
}

static inline void release_id(net *n, int id) {
    n->flows[id].state = FLOW_FREE;
    n->freeids[n->nfree++] = id;
}

/* A free flow id, or -1 when out of memory. */
static inline int new_id(net *n) {
    if (n->nfree > 0) return n->freeids[--n->nfree];
    if (n->nflows == n->fcap && net__grow(n) < 0) return -1;
    return n->nflows++;
}

/* Makes room in link l's list for one more live flow.  Returns 0 or -1. */
static inline int reserve_link(net *n, int l) {
    link_state *L = &n->links[l];
    int cap = L->nref < L->cact ? 0 : net__doubled(L->cact, 4);
    if (cap <= 0) return cap;
    int *p = realloc(L->act, (size_t)cap * sizeof *p);
    if (!p) return -1;
    L->act = p;
    L->cact = cap;
    return 0;
}

/* An active flow joins the lists of its links and seeds net__share(). */
static inline void links_join(net *n, int id) {
    flow *f = &n->flows[id];
    for (int k = 0; k < 2; k++) {
        if (f->link[k] < 0) continue;
        link_state *L = &n->links[f->link[k]];
        f->lpos[k] = L->nact;
        L->act[L->nact++] = id;
    }
    f->tied = 0;
    seed(n, id);
}

/* Brings a lazy flow's bytes to now; it is lazy no more. */
static inline void make_current(net *n, flow *f) {
    if (f->lazy) {
        f->remaining = net__remaining_now(n, f);
        f->lazy = 0;
    }
}

/* After a filling gave active flow id its rate: a new segment if the rate
 * is not the one its segment began with. */
static inline void rate_set(net *n, int id) {
    flow *f = &n->flows[id];
    if (f->rate == f->seg_rate) return;
    make_current(n, f);
    net__begin_segment(n, id, 0); /* proven at a later share, if it lives on */
}

#endif
