/*
 * net_sig.c -- the net's part of the fast-forward: its signature (what
 * decides its future, instants relative to now) and the shift of every
 * instant by a skipped stretch (net_int.h has the state).
 */
#include "sim/engine/net_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"

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
    g.remaining = net__remaining_now(n, f);
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
    return memcmp((const char *)x + off, (const char *)y + off,
                  sizeof *x - off);
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
    sig_put(s, &n->ack, sizeof n->ack);
    if (n->ack > 0)
        sig_put(s, n->partner, (size_t)n->nlinks * sizeof *n->partner);
}

void net_shift(net *n, int64_t dt) {
    n->now += dt;
    n->shifted += dt;
    for (int i = 0; i < n->nticks; i++) n->ticks[i] += dt;
    if (n->next != INT64_MAX) n->next += dt;
    for (int i = 0; i < n->nlive; i++) {
        flow *f = &n->flows[n->live[i]];
        if (f->t_act != INT64_MAX) f->t_act += dt;
        if (f->t_done != INT64_MAX) f->t_done += dt;
        if (f->t_round != INT64_MAX) f->t_round += dt;
        if (n->heaped && n->due[i].t != INT64_MAX)
            n->due[i].t += dt; /* the heap's order stays */
    }
}

void net_link_bytes_add(net *n, int link, uint64_t bytes) {
    if (link >= 0 && link < n->nlinks) n->links[link].bytes += bytes;
}
