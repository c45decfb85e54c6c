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
#include "net.h"

#include <math.h>
#include <stdlib.h>

#include "../models/msg.h"

enum { FLOW_FREE, FLOW_WAITING, FLOW_ACTIVE, FLOW_DONE };

typedef struct {
    uint64_t bytes;    /* size of the flow */
    uint64_t counted;  /* whole bytes already counted on its links */
    double remaining;  /* bytes still to move (fractional while moving) */
    double rate;       /* bytes/s while active */
    double cap;        /* the flow's own max rate (may be INFINITY) */
    int64_t t_act;     /* instant it becomes active */
    int64_t t_done;    /* completion instant at the current rate */
    uint64_t tag;
    int link[2];       /* -1 for none; link[1] != link[0] */
    int state;         /* FLOW_* */
    int pos;           /* index in net.live while live */
} flow;

typedef struct {
    double cap;        /* bytes/s, 0 until set, may be INFINITY */
    uint64_t bytes;    /* whole bytes that crossed the link */
    double peak;       /* highest total rate carried */
    double load;       /* total rate at the last share() */
    /* scratch for share(), meaningful only for links in net.heap */
    double rem;        /* capacity not yet handed out */
    int nflows;        /* unfrozen flows crossing it */
    int first, nlist;  /* its flows: net.lflows[first .. first+nlist) */
    int hpos;          /* its index in the heap net.heap */
} link_state;

/* A bounded link in share()'s heap, keyed by its fair share rem/nflows:
 * the fill level at which it saturates (INFINITY once it has no flows). */
typedef struct {
    double fair;
    int link;
} heap_entry;

typedef struct {
    double cap;
    int id;
} capped_flow;

struct net {
    int64_t now;       /* instant the flows' remaining bytes refer to */
    int64_t next;      /* cached net_next_time() */
    int nlinks;
    link_state *links;
    heap_entry *heap;  /* share(): bounded links crossed by active flows */

    flow *flows;
    int nflows;        /* slots ever used: ids are < nflows */
    int fcap;          /* allocated slots in flows and the int arrays below */
    int *live;         /* ids of waiting and active flows, dense */
    int nlive;
    int *freeids;      /* stack of reusable ids */
    int nfree;
    int *lflows;       /* share(): flows of each link (2 * fcap) */
    capped_flow *capped; /* share(): flows with a finite cap, by cap */
    int *batch;        /* flows completed at the instant being processed */
    int nbatch;
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

/* Counts on f's links the whole bytes f has moved since the last count:
 * its size minus the remaining bytes rounded up. */
static void count_moved(net *n, flow *f) {
    double r = ceil(f->remaining);
    uint64_t left = r <= 0 ? 0 : r >= (double)f->bytes ? f->bytes : (uint64_t)r;
    if (left > f->bytes)
        left = f->bytes;
    uint64_t moved = f->bytes - left;
    if (moved > f->counted) {
        count_bytes(n, f, moved - f->counted);
        f->counted = moved;
    }
}

static void live_remove(net *n, int id) {
    int pos = n->flows[id].pos;
    int last = n->live[--n->nlive];
    n->live[pos] = last;
    n->flows[last].pos = pos;
}

static void release_id(net *n, int id) {
    n->flows[id].state = FLOW_FREE;
    n->freeids[n->nfree++] = id;
}

/* Doubles every per-flow array.  On failure nothing the net relies on has
 * changed (arrays that did grow are simply larger than needed). */
static int grow(net *n) {
    if (n->fcap > INT32_MAX / 2)
        return -1;
    int cap = n->fcap ? 2 * n->fcap : 16;
    flow *f = realloc(n->flows, (size_t)cap * sizeof *f);
    if (!f)
        return -1;
    n->flows = f;
    int **arrays[] = {&n->live, &n->freeids, &n->batch};
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
    n->fcap = cap;
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

/* ---- time and rates ---------------------------------------------------- */

/* Moves every active flow's bytes from n->now to t at its current rate.
 * A flow never moves more than it has left (its completion instant is
 * rounded up, so it may reach zero a fraction of a ns early). */
static void step_to(net *n, int64_t t) {
    if (t <= n->now)
        return;
    double dt_ns = (double)(t - n->now);
    for (int i = 0; i < n->nlive; i++) {
        flow *f = &n->flows[n->live[i]];
        if (f->state != FLOW_ACTIVE || f->rate <= 0)
            continue;
        double mv = isinf(f->rate) ? f->remaining : f->rate * dt_ns / 1e9;
        if (mv > f->remaining)
            mv = f->remaining;
        f->remaining -= mv;
        count_moved(n, f);
    }
    n->now = t;
}

/* The instant (from n->now) at which f, at its current rate, has moved
 * everything.  Rounded up to whole ns; a slack far above floating-point
 * noise and far below 1 ns keeps an exact instant from being pushed to the
 * next ns by rounding. */
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

static void update_next(net *n) {
    int64_t next = INT64_MAX;
    for (int i = 0; i < n->nlive; i++) {
        const flow *f = &n->flows[n->live[i]];
        int64_t t = f->state == FLOW_WAITING ? f->t_act : f->t_done;
        if (t < next)
            next = t;
    }
    n->next = next;
}

/* ---- progressive filling ---------------------------------------------- *
 *
 * All unfrozen flows rise together to a common level; a flow freezes when
 * the level reaches its cap or saturates a link it crosses.  The next level
 * is the smaller of the least unfrozen cap (a sorted list) and the least
 * fair share rem/nflows over the links (a min-heap).  Freezing a
 * flow at level lam takes lam from its links and never lowers their fair
 * share, so the heap only needs sifting down.  A recompute costs
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

/* Marks every active flow unfrozen (rate -1), lists the bounded links they
 * cross in n->heap (heapified on fair share) with each link's flows in
 * n->lflows, and the capped flows, sorted, in n->capped.  Returns the
 * number of links; *ncapped gets the number of capped flows. */
static int fill_setup(net *n, int *ncapped) {
    int nt = 0, nc = 0, ls[2];
    for (int i = 0; i < n->nlive; i++) {
        flow *f = &n->flows[n->live[i]];
        if (f->state != FLOW_ACTIVE)
            continue;
        f->rate = -1;
        if (isfinite(f->cap))
            n->capped[nc++] = (capped_flow){f->cap, n->live[i]};
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
    for (int i = 0; i < n->nlive; i++) {
        const flow *f = &n->flows[n->live[i]];
        if (f->state != FLOW_ACTIVE)
            continue;
        for (int k = bounded_links(n, f, ls); k-- > 0;) {
            link_state *L = &n->links[ls[k]];
            n->lflows[L->first + L->nlist++] = n->live[i];
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

/* Freezes flow f at rate lam and updates its links' fair shares. */
static void fill_freeze(net *n, int nt, flow *f, double lam) {
    int ls[2];
    f->rate = lam;
    for (int k = bounded_links(n, f, ls); k-- > 0;) {
        link_state *L = &n->links[ls[k]];
        L->rem -= lam;
        L->nflows--;
        /* never below the level just reached (rounding could say so) */
        double fair = L->nflows > 0 ? L->rem / L->nflows : INFINITY;
        n->heap[L->hpos].fair = fair > lam ? fair : lam;
        heap_sift_down(n, nt, L->hpos);
    }
}

/* Sets every active flow's rate: max-min fair with per-flow caps. */
static void fill_rates(net *n) {
    int nc, ci = 0;
    int nt = fill_setup(n, &nc);
    for (;;) {
        while (ci < nc && n->flows[n->capped[ci].id].rate >= 0)
            ci++; /* already frozen by a link */
        double lc = ci < nc ? n->capped[ci].cap : INFINITY;
        double ll = nt > 0 ? n->heap[0].fair : INFINITY;
        if (isinf(lc) && isinf(ll))
            break;
        if (lc <= ll) {
            fill_freeze(n, nt, &n->flows[n->capped[ci++].id], lc);
            continue;
        }
        const link_state *L = &n->links[n->heap[0].link];
        for (int j = L->first; j < L->first + L->nlist; j++) {
            flow *f = &n->flows[n->lflows[j]];
            if (f->rate < 0)
                fill_freeze(n, nt, f, ll);
        }
    }
    /* what is left has no bounded link and no cap */
    for (int i = 0; i < n->nlive; i++) {
        flow *f = &n->flows[n->live[i]];
        if (f->state == FLOW_ACTIVE && f->rate < 0)
            f->rate = INFINITY;
    }
}

/* Adds `delta` to the load of f's links, or sets it when `reset`. */
static void add_load(net *n, const flow *f, double delta, int reset) {
    for (int k = 0; k < 2; k++) {
        if (f->link[k] < 0)
            continue;
        link_state *L = &n->links[f->link[k]];
        L->load = reset ? 0 : L->load + delta;
    }
}

/* Records each link's total rate into its peak.  Clamped to the capacity:
 * progressive filling never exceeds it, only rounding could. */
static void update_peaks(net *n) {
    for (int i = 0; i < n->nlive; i++)
        add_load(n, &n->flows[n->live[i]], 0, 1);
    for (int i = 0; i < n->nlive; i++) {
        const flow *f = &n->flows[n->live[i]];
        if (f->state == FLOW_ACTIVE && isfinite(f->rate))
            add_load(n, f, f->rate, 0);
    }
    for (int i = 0; i < n->nlive; i++) {
        const flow *f = &n->flows[n->live[i]];
        for (int k = 0; k < 2; k++) {
            if (f->state != FLOW_ACTIVE || f->link[k] < 0)
                continue;
            link_state *L = &n->links[f->link[k]];
            double load = L->load < L->cap ? L->load : L->cap;
            if (load > L->peak)
                L->peak = load;
        }
    }
}

/* Recomputes every active flow's rate, then completion instants, peaks
 * and the cached next instant. */
static void share(net *n) {
    fill_rates(n);
    for (int i = 0; i < n->nlive; i++) {
        flow *f = &n->flows[n->live[i]];
        if (f->state == FLOW_ACTIVE)
            f->t_done = completion(n, f);
    }
    update_peaks(n);
    update_next(n);
}

/* ---- completing and activating ----------------------------------------- */

/* Ends flow id at the current instant: whatever residue it had left counts
 * as moved, it leaves the live set and joins the batch to report. */
static void finish(net *n, int id) {
    flow *f = &n->flows[id];
    count_bytes(n, f, f->bytes - f->counted);
    f->counted = f->bytes;
    f->remaining = 0;
    f->state = FLOW_DONE;
    live_remove(n, id);
    n->batch[n->nbatch++] = id;
}

/* Finishes the active flows due at t.  Returns how many. */
static int collect_due(net *n, int64_t t) {
    int count = 0;
    for (int i = 0; i < n->nlive;) {
        int id = n->live[i];
        const flow *f = &n->flows[id];
        if (f->state == FLOW_ACTIVE &&
            (f->t_done <= t || f->remaining <= tolerance(f))) {
            finish(n, id);  /* moves the last live flow into slot i */
            count++;
        } else {
            i++;
        }
    }
    return count;
}

/* Activates the waiting flows due at t; those with nothing to move, or no
 * bound on their rate, finish at once.  Returns how many changed. */
static int activate_due(net *n, int64_t t) {
    int count = 0;
    for (int i = 0; i < n->nlive;) {
        int id = n->live[i];
        flow *f = &n->flows[id];
        if (f->state != FLOW_WAITING || f->t_act > t) {
            i++;
            continue;
        }
        count++;
        f->state = FLOW_ACTIVE;
        f->rate = 0;
        f->t_done = INT64_MAX;
        int ls[2];
        if (f->remaining <= tolerance(f) ||
            (isinf(f->cap) && bounded_links(n, f, ls) == 0))
            finish(n, id);
        else
            i++;
    }
    return count;
}

static int by_id(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Processes one instant t (the cached next instant): completes what is
 * due, activates what is due, recomputes the rates, then reports the
 * completions in id order and releases their ids.  The cached next instant
 * is the exact least t_act or t_done of a live flow, so at least one flow
 * changes here and net_advance() always makes progress. */
static void process_instant(net *n, int64_t t, net_done_fn done, void *ctx) {
    step_to(n, t);
    n->nbatch = 0;
    int changed = collect_due(n, t);
    changed += activate_due(n, t);
    while (changed) {
        share(n);
        changed = collect_due(n, t);
    }
    int nb = n->nbatch;
    if (nb > 1)
        qsort(n->batch, (size_t)nb, sizeof *n->batch, by_id);
    /* Callbacks may add flows, which may reallocate the arrays: index them
     * afresh every time. */
    if (done)
        for (int i = 0; i < nb; i++)
            done(ctx, t, n->batch[i], n->flows[n->batch[i]].tag);
    for (int i = 0; i < nb; i++)
        release_id(n, n->batch[i]);
    n->nbatch = 0;
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
    if (!n->links || !n->heap || grow(n) < 0) {
        net_free(n);
        return NULL;
    }
    n->nlinks = nlinks;
    n->next = INT64_MAX;
    return n;
}

void net_free(net *n) {
    if (!n)
        return;
    free(n->links);
    free(n->heap);
    free(n->flows);
    free(n->live);
    free(n->freeids);
    free(n->lflows);
    free(n->capped);
    free(n->batch);
    free(n);
}

void net_link_set(net *n, int link, double bytes_per_s) {
    if (link < 0 || link >= n->nlinks || !(bytes_per_s > 0))
        return;
    n->links[link].cap = bytes_per_s;
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
    int id = new_id(n);
    if (id < 0)
        return MSG_ENOMEM;
    step_to(n, now);
    flow *f = &n->flows[id];
    *f = (flow){.bytes = bytes, .remaining = (double)bytes,
                .cap = max_bytes_per_s,
                .t_act = add_sat(n->now, latency_ns), .t_done = INT64_MAX,
                .tag = tag, .link = {link_a, link_b}, .state = FLOW_WAITING,
                .pos = n->nlive};
    n->live[n->nlive++] = id;
    if (f->t_act < n->next)
        n->next = f->t_act;
    return id;
}

void net_flow_cancel(net *n, int64_t now, int flow_id) {
    if (flow_id < 0 || flow_id >= n->nflows)
        return;
    int state = n->flows[flow_id].state;
    if (state != FLOW_WAITING && state != FLOW_ACTIVE)
        return;
    step_to(n, now);
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
    return link >= 0 && link < n->nlinks ? n->links[link].bytes : 0;
}

double net_link_peak(const net *n, int link) {
    return link >= 0 && link < n->nlinks ? n->links[link].peak : 0;
}

int net_active_flows(const net *n) {
    return n->nlive;
}

/* ---- fast-forward -------------------------------------------------------- */

void net_signature(const net *n, int64_t now, sig_buf *b) {
    sig_i64(b, now - n->now);
    sig_i64(b, n->next == INT64_MAX ? INT64_MIN : n->next - now);
    sig_i64(b, n->nflows);
    sig_i64(b, n->nlive);
    for (int i = 0; i < n->nlive; i++) {
        const flow *f = &n->flows[n->live[i]];
        int64_t v[9] = {n->live[i], f->state, f->link[0], f->link[1],
                        (int64_t)f->bytes, (int64_t)f->counted,
                        (int64_t)f->tag,
                        f->t_act == INT64_MAX ? INT64_MIN : f->t_act - now,
                        f->t_done == INT64_MAX ? INT64_MIN : f->t_done - now};
        sig_put(b, v, sizeof v);
        double d[3] = {f->remaining, f->rate, f->cap};
        sig_put(b, d, sizeof d);
    }
    sig_i64(b, n->nfree);
    sig_put(b, n->freeids, (size_t)n->nfree * sizeof *n->freeids);
}

void net_shift(net *n, int64_t dt) {
    n->now += dt;
    if (n->next != INT64_MAX) n->next += dt;
    for (int i = 0; i < n->nlive; i++) {
        flow *f = &n->flows[n->live[i]];
        if (f->t_act != INT64_MAX) f->t_act += dt;
        if (f->t_done != INT64_MAX) f->t_done += dt;
    }
}

void net_link_bytes_add(net *n, int link, uint64_t bytes) {
    n->links[link].bytes += bytes;
}
