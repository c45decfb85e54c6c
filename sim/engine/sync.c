/*
 * sync.c -- the reductions of the layers and the syncs of the fragments:
 * arrivals and their gates, the communication stream that sends one
 * all-reduce at a time (reduce_order), the all-reduce's end (group or
 * member completion), the result charged to the joined workers that did
 * not take part, the fragment's sync completed or timed out, and whoever
 * waited woken.  Each layer's reduction and each fragment's sync is a
 * small state machine, changed only by reduction_set_state and
 * fsync_set_state with their tables.
 */
#include <string.h>

#include "sim/engine/world.h"

/* ---- the state machines ----------------------------------------------- */

#define TO(s) (1u << (s))

/* A layer's reduction (from -> to, on what):
 *   IDLE       -> COLLECTING  the first participant arrives (sync_arrive:
 *                             reduction_open)
 *   COLLECTING -> READY       every member has arrived (reduction_submit)
 *   READY      -> SENDING     the stream takes it (stream_kick)
 *   SENDING    -> IDLE        its all-reduce has its result
 *                             (reduction_over)
 *   COLLECTING -> IDLE        nobody is left to take part (reduction_void)
 *   any        -> IDLE        a restart or a rollback clears every layer,
 *                             idle ones too (sync_clear) */
static const unsigned reduction_moves[RED_NSTATES] = {
    [RED_IDLE] = TO(RED_COLLECTING) | TO(RED_IDLE),
    [RED_COLLECTING] = TO(RED_READY) | TO(RED_IDLE),
    [RED_READY] = TO(RED_SENDING) | TO(RED_IDLE),
    [RED_SENDING] = TO(RED_IDLE),
};

/* Moves layer l's reduction to `to`; a transition the table does not
 * allow ends the run with an internal error. */
static void reduction_set_state(world *W, int l, int to) {
    reduction *r = &W->red[l];
    if (!(reduction_moves[r->state] >> to & 1u)) fail_rc(W, MSG_EFAIL);
    r->state = to;
}

/* A fragment's sync: none in flight (take -1), open, frozen (its timeout
 * expired: the members are closed).  From -> to, on what:
 *   NONE   -> OPEN    the first arrival for one of its layers (fsync_open)
 *   OPEN   -> FROZEN  its timeout expires (sync_timeout)
 *   OPEN, FROZEN
 *          -> NONE    its last layer is over (fsync_layer_done), or a
 *                     restart or a rollback abandons it (sync_abandon)
 *   NONE   -> NONE    a rollback abandons every fragment's, none in
 *                     flight too */
enum { FS_NONE, FS_OPEN, FS_FROZEN, FS_NSTATES };
static const unsigned fsync_moves[FS_NSTATES] = {
    [FS_NONE] = TO(FS_OPEN) | TO(FS_NONE),
    [FS_OPEN] = TO(FS_FROZEN) | TO(FS_NONE),
    [FS_FROZEN] = TO(FS_NONE),
};

#undef TO

static int fsync_state(const fsync *fs) {
    return fs->take < 0 ? FS_NONE : fs->frozen ? FS_FROZEN : FS_OPEN;
}

/* Moves fragment f's sync to `to`: OPEN opens it at `take` (no arrivals
 * yet); FROZEN closes its members; NONE ends it (take -1).  Opening and
 * ending bump its epoch: a pending timeout is void.  A transition the
 * table does not allow ends the run with an internal error. */
static void fsync_set_state(world *W, int f, int to, int64_t take) {
    fsync *fs = &W->fs[f];
    if (!(fsync_moves[fsync_state(fs)] >> to & 1u)) fail_rc(W, MSG_EFAIL);
    if (to == FS_FROZEN) {
        fs->frozen = 1;
        return;
    }
    if (to == FS_OPEN) {
        fs->take = take;
        fs->done = 0;
        fs->frozen = 0;
        memset(fs->arrived, 0, (size_t)W->M);
    } else {
        fs->take = -1;
    }
    fs->epoch++;
}

void sync_abandon(world *W, int f) {
    fsync_set_state(W, f, FS_NONE, 0);
}

/* ---- the stream ------------------------------------------------------- */
/* Payload bytes of layer l's reduction for fragment frag[l]. */
static uint64_t layer_bytes(const world *W, int l) {
    return W
        ->bytes[W->sliced ? (size_t)l * W->P + (size_t)W->frag[l] : (size_t)l];
}

/* forward_first: does ready layer a go before ready layer b?  The lower
 * gate step first (the forward that waits soonest), then the lower layer. */
static int needed_sooner(const world *W, int a, int b) {
    return W->gate[a] != W->gate[b] ? W->gate[a] < W->gate[b] : a < b;
}

/* Adds ready layer l: at the tail (fifo) or into the heap. */
static void ready_push(world *W, int l) {
    if (W->nready == W->L && W->head > 0) { /* fifo: slide to the front */
        memmove(W->ready, W->ready + W->head,
                (size_t)(W->nready - W->head) * sizeof *W->ready);
        W->nready -= W->head;
        W->head = 0;
    }
    int i = W->nready++;
    if (W->forward_first)
        for (; i > 0 && needed_sooner(W, l, W->ready[(i - 1) / 2]);
             i = (i - 1) / 2)
            W->ready[i] = W->ready[(i - 1) / 2];
    W->ready[i] = l;
}

/* Takes the next ready layer: the oldest (fifo) or the one the next
 * forward needs first (forward_first, the heap's top). */
static int ready_pop(world *W) {
    if (!W->forward_first) {
        int l = W->ready[W->head++];
        if (W->head == W->nready) W->head = W->nready = 0;
        return l;
    }
    int top = W->ready[0], last = W->ready[--W->nready], i = 0;
    for (int c; (c = 2 * i + 1) < W->nready; i = c) {
        if (c + 1 < W->nready && needed_sooner(W, W->ready[c + 1], W->ready[c]))
            c++;
        if (!needed_sooner(W, W->ready[c], last)) break;
        W->ready[i] = W->ready[c];
    }
    W->ready[i] = last;
    return top;
}

/* Starts the next ready reduction when the stream is free. */
static void stream_kick(world *W, int64_t now) {
    if (W->stream_busy || W->nready == W->head) return;
    int l = ready_pop(W);
    W->stream_busy = 1;
    reduction_set_state(W, l, RED_SENDING);
    W->red[l].started = now;
    if (W->book) expl__coll_start(W, l, layer_bytes(W, l), now);
    fail_rc(W, coll_submit(W->coll, now, layer_bytes(W, l), W->red[l].came,
                           (uint64_t)l));
}

/* Every participant has arrived: the reduction is ready to send. */
static void reduction_submit(world *W, int l, int64_t now) {
    reduction_set_state(W, l, RED_READY);
    ready_push(W, l);
    stream_kick(W, now);
}

/* Participants of a new reduction: the joined workers (once the
 * fragment's sync has timed out, only those that arrived for it). */
static void reduction_open(world *W, int l, int64_t take) {
    reduction *r = &W->red[l];
    const fsync *fs = &W->fs[W->frag[l]];
    reduction_set_state(W, l, RED_COLLECTING);
    r->take = take;
    r->need = r->arrived = 0;
    for (int i = 0; i < W->M; i++) {
        int in = W->w[i].joined && (!fs->frozen || fs->arrived[i]);
        r->member[i] = (uint8_t)in;
        r->came[i] = 0;
        r->need += in;
    }
    W->gate[l] = take + 1 + W->delay;
}

/* ---- fragment syncs --------------------------------------------------- */

/* Offload: fragment f's sync is over; worker i merges its result at the
 * start of merge_step[i] and then its outer state goes back to the host
 * (now if i has begun that step or is not in the group; else
 * worker_begin_step does it when i gets there). */
static void offload_after_sync(world *W, int i, int f, int64_t now) {
    int64_t m = W->merge_step[i];
    if (m < 0 || W->w[i].step >= m) off_copy_out(W->off, i, f, now);
    else W->out_step[i * W->P + f] = m;
}

/* Opens fragment f's sync taken after t at its first arrival, and its
 * timeout. */
static void fsync_open(world *W, int f, int64_t t, int64_t now) {
    fsync *fs = &W->fs[f];
    fsync_set_state(W, f, FS_OPEN, t);
    if (W->timeout_ns > 0) {
        int64_t at = now + W->timeout_ns; /* both below 2^62 */
        if (at <= RUN_TIME_MAX_NS)
            push(W, at, CLS_FAULT, EV_TIMEOUT, f, fs->epoch, 0);
    }
}

/* The first step of worker i that sees the result of a sync taken after
 * `take` that completes now; -1 when i is not in the group.  Blocking:
 * take + tau + 1, where its forward waits.  Continue: its first step
 * boundary from now on (the step it has not started yet), but never
 * before take + tau + 1. */
static int64_t merge_step_of(const world *W, int i, int64_t take, int64_t now) {
    const worker *w = &W->w[i];
    if (!w->joined) return -1;
    int64_t first = take + W->delay + 1 + W->cfg->tau_extra[i];
    if (W->blocking) return first;
    int fresh = w->op == 0 && (w->state != W_BUSY || w->op_start >= now);
    int64_t m = fresh ? w->step : w->step + 1;
    return m > first ? m : first;
}

static void count_delay(run_delays *d, int64_t steps) {
    d->count++;
    d->sum += steps;
    if (steps > d->max) d->max = steps;
    d->hist[steps < RUN_DELAY_BINS - 1 ? steps : RUN_DELAY_BINS - 1]++;
}

/* A layer of fragment f is over (reduced, or dropped with nobody left).
 * When it was the fragment's last: the sync is complete (members: the
 * workers that took part in every layer; none: abandoned), the observer
 * hears it, and 1 is returned (*synced: it had members). */
static int fsync_layer_done(world *W, int f, int64_t now, int *synced) {
    fsync *fs = &W->fs[f];
    *synced = 0;
    if (++fs->done < W->frag_size[f]) return 0;
    int64_t take = fs->take;
    fsync_set_state(W, f, FS_NONE, 0); /* its timeout, if pending, is void */
    for (int i = 0; i < W->M; i++) {
        worker *w = &W->w[i];
        W->member[i] = w->pend_layers[f] == W->frag_size[f];
        *synced |= W->member[i];
        w->pend_layers[f] = 0;
        W->merge_step[i] = -1;
    }
    if (*synced) {
        W->syncs++;
        W->restarts = 0;
        W->resume_step = take + W->delay + 1;
        /* what reached the outer parameters: the work of the members */
        for (int i = 0; i < W->M; i++) {
            worker *w = &W->w[i];
            if (W->member[i]) {
                w->contrib[f] = w->pend[f];
                w->nom_contrib[f] = w->nom_pend[f];
            }
            W->merge_step[i] = merge_step_of(W, i, take, now);
            if (W->merge_step[i] >= 0)
                count_delay(&W->delays, W->merge_step[i] - 1 - take);
        }
    }
    for (int i = 0; W->off && i < W->M; i++) offload_after_sync(W, i, f, now);
    observe(W, RUN_EV_SYNCED, -1, f, take, -1, now);
    if (*synced && W->sch.method == SCHED_DP) {
        W->dp_synced = take;
        rec_dp_commit(W);
    }
    return 1;
}

/* Layer l's reduction is over (its state and gate already reset): the
 * fragment's bookkeeping, then whoever waited on it. */
static void layer_closed(world *W, int l, int64_t now) {
    int f = W->frag[l], synced;
    int closed = fsync_layer_done(W, f, now, &synced);
    worker_wake(W, l, now);
    if (!closed) return;
    worker_wake(W, W->L + f, now);
    if (synced) rec_sync_completed(W, now);
}

/* Layer l's all-reduce has its result: the joined workers that did not
 * take part (left out by the sync's timeout, or in the group since the
 * reduction opened) merge it too, so they receive it, from the lowest
 * member: its payload bytes are charged to that member's up link and to
 * each such worker's down link (the copy takes no simulated time: a
 * worker left out is late for the sync anyway). */
static void result_to_others(world *W, int l) {
    const reduction *r = &W->red[l];
    int src = 0;
    while (src < W->M && !r->came[src]) src++;
    if (src == W->M) return;
    uint64_t bytes = layer_bytes(W, l);
    for (int i = 0; i < W->M; i++)
        if (W->w[i].joined && !r->came[i]) {
            net_link_bytes_add(W->net, 2 * src, bytes);
            net_link_bytes_add(W->net, 2 * i + 1, bytes);
        }
}

/* Layer l's all-reduce has its result (group: at its end; member: at its
 * first member's completion): the reduction is over, the fragment's
 * bookkeeping follows. */
static void reduction_over(world *W, int l, int64_t now) {
    reduction *r = &W->red[l];
    reduction_set_state(W, l, RED_IDLE);
    W->gate[l] = NO_GATE;
    int f = W->frag[l];
    for (int i = 0; i < W->M; i++)
        if (r->came[i]) W->w[i].pend_layers[f]++;
    result_to_others(W, l);
    if (now > W->end) W->end = now;
    W->check_done = 1;
    layer_closed(W, l, now);
}

/* Group completion: layer l's all-reduce is over for every member. */
static void reduction_done(world *W, int l, int64_t now) {
    reduction *r = &W->red[l];
    for (int i = 0; i < W->M; i++)
        if (r->came[i])
            span(W, i, 1, "allreduce", l, r->take, r->started, now,
                 layer_bytes(W, l));
    W->stream_busy = 0;
    reduction_over(W, l, now);
}

/* Member completion: worker wi has the result of layer l's all-reduce.
 * The first member's completion ends the reduction (the average exists:
 * the fragment's sync may complete, the numerics reduce); each member
 * passes its own gate at its own completion. */
static void member_got(world *W, int l, int wi, int64_t now) {
    reduction *r = &W->red[l];
    release *g = &W->rel[l];
    if (r->state == RED_SENDING) {
        g->take = r->take;
        g->started = r->started;
        g->pending = 0;
        for (int i = 0; i < W->M; i++) {
            g->got[i] = 0;
            g->pending += r->came[i];
        }
    }
    if (g->got[wi] || !g->pending) return; /* again, after a restart */
    g->got[wi] = 1;
    g->pending--;
    span(W, wi, 1, "allreduce", l, g->take, g->started, now, layer_bytes(W, l));
    if (now > W->end) W->end = now;
    if (r->state == RED_SENDING) {
        reduction_over(W, l, now); /* wakes everybody on l: they look again */
        return;
    }
    worker_got_result(W, wi, l, now);
}

void sync_member_gone(world *W, int wi) {
    if (!W->member_mode) return;
    for (int l = 0; l < W->L; l++)
        if (W->rel[l].pending && !W->rel[l].got[wi]) {
            W->rel[l].got[wi] = 1;
            W->rel[l].pending--;
        }
}

/* Layer l's reduction has nobody left to take part: it is over. */
static void reduction_void(world *W, int l, int64_t now) {
    reduction_set_state(W, l, RED_IDLE);
    W->gate[l] = NO_GATE;
    layer_closed(W, l, now);
}

void sync_arrive(world *W, int wi, int l, int64_t t, int64_t now) {
    reduction *r = &W->red[l];
    if (r->state == RED_IDLE && t > W->last_take[l])
        W->frag[l] = worker_taken_fragment(W, &W->w[wi], l); /* sliced */
    int f = W->frag[l];
    if (r->state == RED_IDLE) {
        if (t <= W->last_take[l]) return; /* that sync is already done */
        if (W->fs[f].take != t) fsync_open(W, f, t, now);
        reduction_open(W, l, t);
        W->last_take[l] = t;
        if (!r->need) { /* its sync timed out before any member came */
            reduction_void(W, l, now);
            return;
        }
    }
    if (r->state != RED_COLLECTING || r->take != t || !r->member[wi] ||
        r->came[wi])
        return; /* a catching-up or late worker: not part of this sync */
    r->came[wi] = 1;
    r->arrived++;
    W->w[wi].pend[f] = W->w[wi].busy;
    W->w[wi].nom_pend[f] = W->w[wi].nom;
    if (!W->fs[f].arrived[wi]) {
        W->fs[f].arrived[wi] = 1;
        observe(W, RUN_EV_CONTRIBUTE, wi, f, t, -1, now);
    }
    if (r->arrived == r->need && r->need >= W->quorum)
        reduction_submit(W, l, now);
}

/* Worker wi leaves layer l's reduction still collecting: it goes on
 * without it; one left with nobody is over at once. */
static void reduction_leave(world *W, int l, int wi, int64_t now) {
    reduction *r = &W->red[l];
    r->member[wi] = 0;
    r->need--;
    if (r->came[wi]) r->came[wi] = 0, r->arrived--;
    if (r->need == 0) reduction_void(W, l, now);
    else if (r->arrived == r->need && r->need >= W->quorum) {
        reduction_submit(W, l, now);
    }
}

/* method.quorum: a reduction with every member's arrival and fewer members
 * than the quorum stays collecting; a worker that rejoins takes part in
 * it (sync_admit), and its arrival submits it. */
int sync_held(const world *W) {
    for (int l = 0; l < W->L; l++) {
        const reduction *r = &W->red[l];
        if (r->state == RED_COLLECTING && r->arrived == r->need &&
            r->need < W->quorum)
            return 1;
    }
    return 0;
}

void sync_admit(world *W, int wi, int64_t step) {
    for (int l = 0; l < W->L; l++) {
        reduction *r = &W->red[l];
        if (r->state != RED_COLLECTING || r->take < step || r->member[wi] ||
            W->fs[W->frag[l]].frozen)
            continue;
        r->member[wi] = 1;
        r->need++;
    }
}

void sync_drop(world *W, int wi, int64_t now) {
    for (int l = 0; l < W->L; l++)
        if (W->red[l].state == RED_COLLECTING && W->red[l].member[wi])
            reduction_leave(W, l, wi, now);
}

/* Fragment f's sync timed out: the workers that have not arrived for
 * any of its layers are left out of it (they merge its result). */
void sync_timeout(world *W, int f, uint32_t epoch, int64_t now) {
    fsync *fs = &W->fs[f];
    if (fs->take < 0 || fs->epoch != epoch) return;
    fsync_set_state(W, f, FS_FROZEN, 0);
    int left = 0;
    for (int i = 0; i < W->M; i++) left |= W->w[i].joined && !fs->arrived[i];
    if (left) W->timeouts++;
    int64_t take = fs->take;
    for (int l = 0; l < W->L && fs->epoch == epoch; l++) {
        reduction *r = &W->red[l];
        if (W->frag[l] != f) continue;
        for (int i = 0; i < W->M; i++)
            if (r->state == RED_COLLECTING && r->take == take && r->member[i] &&
                !fs->arrived[i])
                reduction_leave(W, l, i, now);
    }
}

void sync_clear(world *W, int64_t now) {
    for (int l = 0; l < W->L; l++) {
        reduction_set_state(W, l, RED_IDLE);
        W->rel[l].pending = 0;
        W->gate[l] = NO_GATE;
    }
    W->nready = W->head = 0;
    if (W->book && W->stream_busy) expl__coll_end(W, now);
    W->stream_busy = 0;
    coll_clear(W->coll, now);
}

/* ---- the collective's callbacks --------------------------------------- */

void sync_coll_done(void *ctx, int64_t now, uint64_t tag) {
    world *W = ctx;
    if (W->book) expl__coll_end(W, now);
    if (W->member_mode) {
        W->rel[tag].pending = 0; /* whoever is left (failed) has nothing */
        W->stream_busy = 0;
        W->check_done = 1; /* the stream may have been all that was left */
    } else {
        reduction_done(W, (int)tag, now);
    }
    stream_kick(W, now);
}

void sync_member_done(void *ctx, int64_t now, uint64_t tag, int worker) {
    member_got(ctx, (int)tag, worker, now);
}
