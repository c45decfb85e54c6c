/*
 * net_tcp.c -- TCP windows: a TCP flow's fluid slow start, by round
 * boundaries (net.h and docs/network.md have the model; net_int.h the
 * state).
 *
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
 * while window-limited adds what it sent in that round (net__tcp_last_round).  Only
 * boundaries that change win, cap or wbind are events (t_round): a flow settled at its share, or at
 * win_max, has none until a filling changes its rate or capbound, and then
 * its next boundary is found from t_act.
 */
#include "sim/engine/net_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"

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
    if (!(f->rate > 0)) return;
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
void net__tcp_reschedule(net *n, int id) {
    flow *f = &n->flows[id];
    double win, cap;
    int wbind;
    tcp_next(f, &win, &cap, &wbind);
    int64_t t = win != f->win || cap != f->cap || wbind != f->wbind
                    ? next_round(n, f)
                    : INT64_MAX;
    if (t != f->t_round) {
        f->t_round = t;
        due_update(n, id);
    }
}

/* Active flow id is at a round boundary: its new window and cap; a new
 * cap seeds net__share(), unless it is the flow's rate (a share-limited flow
 * whose cap comes down to its share: the filling is the same, and
 * refilling would only move other rates by rounding).  Returns 0
 * (visit_in_live_order: not removed). */
int net__round_due(net *n, int id) {
    flow *f = &n->flows[id];
    double cap;
    tcp_next(f, &f->win, &cap, &f->wbind);
    if (cap != f->cap) {
        f->cap = cap;
        if (cap != f->rate) seed(n, id);
    }
    f->t_round = INT64_MAX;
    due_update(n, id);
    net__tcp_reschedule(n, id);
    return 0;
}

/* A TCP flow that ends inside a round while its window bound it: the
 * acknowledgements of what it sent in that round come after its end and
 * grow the window by as much, as slow start does for every acknowledged
 * byte (Linux counts a flow sending at its window as cwnd-limited).  So a
 * flow shorter than a round still grows the window its connection keeps.
 * The bytes of the round are its rate times the time since the round
 * began (the rate is the one its last filling gave it). */
void net__tcp_last_round(net *n, flow *f) {
    if (f->rtt == 0 || !(f->capbound && f->wbind) || !(f->rate > 0)) return;
    int64_t since = n->now > f->t_act ? n->now - f->t_act : 0;
    /* in (0, rtt]: completions come before a boundary at the same ns */
    int64_t into = since > 0 ? (since - 1) % f->rtt + 1 : 0;
    double sent = f->rate * (double)into / 1e9;
    double w = f->win + (sent < f->win ? sent : f->win);
    f->win = w < f->win_max ? w : f->win_max;
}

int net_flow_set_tcp(net *n, int flow_id, int64_t rtt_ns, double window,
                     double max_window) {
    if (flow_id < 0 || flow_id >= n->nflows ||
        n->flows[flow_id].state != FLOW_WAITING || rtt_ns <= 0 ||
        !(window > 0) || !isfinite(window) || !(max_window > 0))
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
    if (flow_id < 0 || flow_id >= n->nflows) return 0;
    const flow *f = &n->flows[flow_id];
    return f->state == FLOW_FREE || f->rtt == 0 ? 0 : f->win;
}
