/*
 * net_flows.c -- the net's bookkeeping of flows: the live set, flow ids,
 * the per-link lists of active flows, the heap of due instants, and the
 * per-flow arrays that grow with the load (net_int.h has the state).
 *
 * With many live flows (HEAP_ON, net_int.h), net.due is a heap of every live flow by
 * the instant it is next due at (activation, then completion), so the
 * next instant and the flows due at it are found without a scan; the
 * flows due are then finished, and activated, in the order a scan of
 * `live` would meet them, since that order is what the live order, and
 * with it every later sum, depends on.  With few, the scans are cheaper
 * and are done as such.  net_set_lazy(n, 0) turns lazy stepping off: the
 * tests compare the two.
 */
#include "sim/engine/net_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"

static int due_before(const due_entry *a, const due_entry *b) {
    return a->t < b->t || (a->t == b->t && a->id < b->id);
}

/* Puts entry e in the hole at i of the heap h[0..cnt) or below it (i's
 * subtrees are heaps); with flows, records where each entry moved to in
 * its flow's hpos. */
void net__heap_down(due_entry *h, int cnt, int i, due_entry e, flow *flows) {
    for (;;) {
        int c = 2 * i + 1;
        if (c >= cnt) break;
        if (c + 1 < cnt && due_before(&h[c + 1], &h[c])) c++;
        if (!due_before(&h[c], &e)) break;
        h[i] = h[c];
        if (flows) flows[h[i].id].hpos = i;
        i = c;
    }
    h[i] = e;
    if (flows) flows[e.id].hpos = i;
}

/* The same, up past larger parents. */
void net__heap_up(due_entry *h, int i, due_entry e, flow *flows) {
    while (i > 0 && due_before(&e, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        if (flows) flows[h[i].id].hpos = i;
        i = (i - 1) / 2;
    }
    h[i] = e;
    if (flows) flows[e.id].hpos = i;
}

/* Puts entry e where the hole at i of net.due belongs. */
void net__due_sift(net *n, int i, due_entry e) {
    if (i > 0 && due_before(&e, &n->due[(i - 1) / 2]))
        net__heap_up(n->due, i, e, n->flows);
    else net__heap_down(n->due, n->nlive, i, e, n->flows);
}

/* Flow id joins the heap (n->nlive already counts it); past HEAP_ON live
 * flows the heap is built. */
void net__due_add(net *n, int id) {
    if (n->heaped) {
        net__due_sift(n, n->nlive - 1, (due_entry){due_at(&n->flows[id]), id});
    } else if (n->nlive >= HEAP_ON) {
        for (int i = 0; i < n->nlive; i++)
            n->due[i] = (due_entry){due_at(&n->flows[n->live[i]]), n->live[i]};
        for (int i = n->nlive / 2; i-- > 0;)
            net__heap_down(n->due, n->nlive, i, n->due[i], n->flows);
        for (int i = 0; i < n->nlive; i++) n->flows[n->due[i].id].hpos = i;
        n->heaped = 1;
    }
}

/* Flow id leaves the heap (n->nlive no longer counts it); below HEAP_OFF
 * live flows the heap is dropped. */
static inline void due_remove(net *n, int id) {
    if (!n->heaped) return;
    int i = n->flows[id].hpos;
    if (n->nlive < HEAP_OFF) n->heaped = 0;
    else if (i != n->nlive) net__due_sift(n, i, n->due[n->nlive]);
}

/* The live flows due at t into n->found (active: t_done <= t, or an eager
 * one at or under tolerance), n->found_act (waiting: t_act <= t) and
 * n->found_round (active, not done, at a round boundary: t_round <= t),
 * each marked; returns the three counts in *nf, *na and *nr.  The heap
 * must be on. */
void net__gather_due(net *n, int64_t t, int *nf, int *na, int *nr) {
    int *stack = n->comp, top = 0, cf = 0, ca = 0, cr = 0;
    if (n->nlive > 0 && n->due[0].t <= t) stack[top++] = 0;
    while (top > 0) {
        int i = stack[--top], id = n->due[i].id;
        flow *f = &n->flows[id];
        if (f->state == FLOW_WAITING) n->found_act[ca++] = id;
        else if (n->ntcp == 0 || done_due(f, t)) n->found[cf++] = id;
        else n->found_round[cr++] = id;
        f->marked = 1;
        for (int c = 2 * i + 1; c <= 2 * i + 2 && c < n->nlive; c++)
            if (n->due[c].t <= t) stack[top++] = c;
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

void net__live_remove(net *n, int id) {
    flow *f = &n->flows[id];
    n->ncount -= f->count;
    n->ntcp -= f->rtt != 0;
    for (int k = 0; k < 2; k++)
        if (f->link[k] >= 0) n->links[f->link[k]].nref--;
    int pos = f->pos;
    int last = n->live[--n->nlive];
    n->live[pos] = last;
    n->flows[last].pos = pos;
    due_remove(n, id);
    /* the order of summation on the moved flow's links changed */
    if (last != id && n->flows[last].state == FLOW_ACTIVE)
        mark_links_dirty(n, &n->flows[last]);
}

/* An active flow leaves the lists of its links; the flows left on its
 * bounded links seed net__share(). */
void net__links_leave(net *n, int id) {
    flow *f = &n->flows[id];
    n->ntied -= f->tied;
    f->tied = 0;
    for (int k = 0; k < 2; k++) {
        int l = f->link[k];
        if (l < 0) continue;
        link_state *L = &n->links[l];
        int last = L->act[--L->nact];
        L->act[f->lpos[k]] = last;
        flow *g = &n->flows[last];
        g->lpos[g->link[0] == l ? 0 : 1] = f->lpos[k];
        mark_dirty(n, l);
        if (isfinite(L->cap))
            for (int j = 0; j < L->nact; j++) seed(n, L->act[j]);
    }
}

/* Twice an allocated count (`first` when none yet), or -1 past INT32_MAX. */
int net__doubled(int count, int first) {
    return count > INT32_MAX / 2 ? -1 : count ? 2 * count : first;
}

/* Doubles every per-flow array.  On failure nothing the net relies on has
 * changed (arrays that did grow are simply larger than needed). */
int net__grow(net *n) {
    int cap = net__doubled(n->fcap, 16);
    if (cap < 0) return -1;
    flow *f = realloc(n->flows, (size_t)cap * sizeof *f);
    if (!f) return -1;
    n->flows = f;
    int **arrays[] = {&n->live,      &n->freeids,    &n->batch, &n->seeds,
                      &n->comp,      &n->order,      &n->eager, &n->found,
                      &n->found_act, &n->found_round};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        int *p = realloc(*arrays[i], (size_t)cap * sizeof *p);
        if (!p) return -1;
        *arrays[i] = p;
    }
    int *lf = realloc(n->lflows, 4 * (size_t)cap * sizeof *lf);
    if (!lf) return -1;
    n->lflows = lf;
    capped_flow *cf = realloc(n->capped, (size_t)cap * sizeof *cf);
    if (!cf) return -1;
    n->capped = cf;
    due_entry *de = realloc(n->due, (size_t)cap * sizeof *de);
    if (!de) return -1;
    n->due = de;
    n->fcap = cap;
    return 0;
}

static int by_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sorts a[0..cnt) ascending: in place for a few, else by qsort. */
void net__sort_ints(int *a, int cnt) {
    if (cnt > 8) {
        qsort(a, (size_t)cnt, sizeof *a, by_int);
        return;
    }
    for (int i = 1; i < cnt; i++) {
        int x = a[i], j = i;
        for (; j > 0 && a[j - 1] > x; j--) a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Sorts ids[0..cnt) (live flows) into live order. */
void net__sort_live(net *n, int *ids, int cnt) {
    if (cnt < 2) return;
    for (int i = 0; i < cnt; i++) n->order[i] = n->flows[ids[i]].pos;
    net__sort_ints(n->order, cnt);
    for (int i = 0; i < cnt; i++) ids[i] = n->live[n->order[i]];
}
