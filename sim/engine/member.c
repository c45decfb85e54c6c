/*
 * member.c -- members that come and go (faults.membership_trace): the
 * trace file's events (sim/config/member_trace.h), each an EV_MEMBER at
 * its instant; a leave is handled as a failure is, a join as a repair
 * (recovery.c: rec_leave, rec_join).
 *
 * A worker whose first event is a join is absent from time 0: it starts
 * down, out of the group, and computes nothing until its join; the
 * observer hears it leave at step 0, instant 0.  Only one
 * EV_MEMBER is pending at a time, the next event's; the events of one
 * instant apply in file order.
 *
 * Exactness of the fast-forward: a membership trace turns the fast paths
 * off (world.c), as a fault trace does: joins and leaves read the
 * failure-only fields (contribution baselines, recovery state) that the
 * world's signature leaves out.
 */
#include "sim/engine/world.h"

/* One EV_MEMBER at the next event, if it comes before the clock's limit. */
static void schedule(world *W) {
    size_t n;
    const mbt_event *e = mbt_events(W->mbt, &n);
    if (W->mb_next < n && e[W->mb_next].t <= RUN_TIME_MAX_NS)
        push(W, e[W->mb_next].t, CLS_FAULT, EV_MEMBER, 0, 0, 0);
}

int mb_init(world *W, char *err, size_t errlen) {
    const scn_config *c = W->cfg;
    W->quorum = c->quorum > 1 ? c->quorum : 1;
    if (!c->member_trace_path[0]) return 0;
    int rc = mbt_load(c->member_trace_path, W->M, &W->mbt, err, errlen);
    if (rc) return rc == MSG_ENOMEM ? rc : MSG_EINPUT;
    for (int i = 0; i < W->M; i++) {
        worker *w = &W->w[i];
        if (!mbt_absent_at_start(W->mbt, i)) continue;
        w->absent = 1;
        w->joined = 0;
        worker_set_state(W, w, W_DOWN);
        observe(W, RUN_EV_LEFT, i, -1, 0, -1, 0); /* not in the group */
    }
    schedule(W);
    return 0;
}

void mb_event(world *W, int64_t now) {
    size_t n;
    const mbt_event *e = mbt_events(W->mbt, &n);
    for (; W->mb_next < n && e[W->mb_next].t <= now && !W->stopped;
         W->mb_next++) {
        if (e[W->mb_next].join) rec_join(W, e[W->mb_next].worker, now);
        else rec_leave(W, e[W->mb_next].worker, now);
    }
    schedule(W);
}

int mb_joins_later(const world *W, int wi) {
    size_t n;
    const mbt_event *e = W->mbt ? mbt_events(W->mbt, &n) : NULL;
    for (size_t k = W->mb_next; e && k < n; k++)
        if (e[k].worker == wi && e[k].join) return 1;
    return 0;
}

int mb_joined(const world *W) {
    int n = 0;
    for (int i = 0; i < W->M; i++) n += W->w[i].joined;
    return n;
}
