/*
 * recovery.c -- failures and what follows them: a failed worker leaves
 * the group (its lost work taken off), is repaired, downloads the
 * parameters and rejoins (never ahead of the group); DP rolls every
 * worker back to the last checkpoint (taken here too) and resumes once
 * nobody is down; a group emptied by failures begins again from the outer
 * parameters.  The net's flow callback lives here while downloads are
 * told apart from the collective's flows by their tag.
 */
#include "sim/engine/world.h"

/* Any method: this many failures per worker in a row without any worker
 * finishing a step and the run stops unfinished (failures faster than a
 * recovery, or than a step). */
#define MAX_IDLE_FAILURES 100
/* DiLoCo and streaming: the group emptied (every worker failed, and one
 * came back from the outer parameters of the last completed sync) this
 * many times without a sync completing and the run stops unfinished: it
 * would start again forever (the analogue of run.c's MAX_ROLLBACKS). */
#define MAX_RESTARTS 100

/* ---- DP checkpoints ----------------------------------------------------- */

/* DP: the checkpoint of step ckpt_cand is taken once every worker has
 * computed that step and the step's all-reduces have completed (its
 * update happened): a failure in between rolls back further. */
void rec_dp_commit(world *W) {
    if (!W->ckpt_cand || W->dp_synced < W->ckpt_cand) return;
    W->ckpt_step = W->ckpt_cand;
    W->ckpt_cand = 0;
    W->rollbacks = 0;
    for (int i = 0; i < W->M; i++) {
        W->w[i].ckpt_busy = W->w[i].ckpt_cand_busy;
        W->w[i].ckpt_nom = W->w[i].ckpt_cand_nom;
    }
    observe(W, RUN_EV_CHECKPOINT, -1, -1, W->ckpt_step, -1, W->now);
}

void rec_dp_checkpoint(world *W, worker *w, int64_t step) {
    int64_t every = scn_checkpoint_every(W->cfg);
    if (step % every) return;
    w->ckpt_cand_busy = w->busy;
    w->ckpt_cand_nom = w->nom;
    if (++W->ckpt_count < mb_joined(W)) return; /* M without a membership */
    W->ckpt_count = 0;
    W->ckpt_cand = step;
    rec_dp_commit(W);
}

/* ---- failures and recovery -------------------------------------------- */

void rec_next_failure(world *W, int wi) {
    int64_t fail, repair;
    /* a failure after the last representable instant never matters */
    if (faults_next(W->faults, wi, &fail, &repair) && fail >= 0 &&
        fail <= RUN_TIME_MAX_NS)
        push(W, fail, CLS_FAULT, EV_FAIL, wi, 0, (uint64_t)repair);
}

static void on_download_flow(void *ctx, int64_t now, int flow, uint64_t tag);

/* The repaired worker wi downloads the parameters from the lowest live
 * peer, or from storage over its own down link when nobody is up. */
static void start_download(world *W, int wi, int64_t now) {
    if (W->dl_bytes == UINT64_MAX) {
        char b[MSG_NUM_MAX];
        stop(W,
             "worker %d: a recovery download of %s bytes does not fit in "
             "64 bits",
             wi,
             msg_number(W->cfg->params * W->cfg->recovery_bytes_per_param, b));
        return;
    }
    int src = -1;
    for (int i = 0; i < W->M && src < 0; i++) {
        int st = W->w[i].state;
        if (i != wi && st != W_DOWN && st != W_RECOVERING &&
            st != W_RESTARTING && (W->sch.method == SCHED_DP || W->w[i].joined))
            src = i;
    }
    int64_t lat = src >= 0 ? W->lat[src * W->M + wi] : W->lat[wi * W->M + wi];
    worker *w = &W->w[wi];
    worker_set_state(W, w, W_RECOVERING);
    w->dl_start = now;
    w->dl_flow = net_flow_add(W->net, now, lat, src >= 0 ? 2 * src : -1,
                              2 * wi + 1, W->dl_bytes, W->flow_cap,
                              on_download_flow, W, TAG_RECOVERY + (uint64_t)wi);
    fail_rc(W, w->dl_flow);
}

/* A worker enters the group at `step` (rejoin_due), holding the outer
 * parameters of the syncs completed so far. */
static void rejoin(world *W, int wi, int64_t step, int64_t now) {
    worker *w = &W->w[wi];
    int src = -1;
    for (int i = 0; i < W->M && src < 0; i++)
        if (i != wi && W->w[i].joined) src = i;
    observe(W, RUN_EV_REJOINED, wi, -1, step, src, now);
    w->step = step;
    w->op = 0;
    w->joined = 1;
    w->ckpt_done = step - 1; /* it has just loaded that state */
    for (int p = 0; p < W->P; p++) {
        w->contrib[p] = w->busy;
        w->nom_contrib[p] = w->nom;
    }
    /* DP: nothing of it lies between the checkpoints and now */
    w->ckpt_busy = w->ckpt_cand_busy = w->busy;
    w->ckpt_nom = w->ckpt_cand_nom = w->nom;
    if (W->quorum > 1) sync_admit(W, wi, step);
    if (w->state == W_REJOINING) idle_span(W, wi, "rejoin_wait", now);
    worker_set_state(W, w, W_READY);
    w->rejoin_at = 0;
    worker_begin_step(W, w, wi, now);
    worker_advance(W, wi, now);
}

/* The group emptied and begins again from the outer parameters: what was
 * under way is void, as nobody holds its payloads.  Each fragment sync
 * in flight is abandoned (the observer hears it without members) and its
 * layers may be taken again at the same step; the communication stream is
 * cleared. */
static void group_restart(world *W, int64_t now) {
    for (int f = 0; f < W->P; f++) {
        fsync *fs = &W->fs[f];
        if (fs->take < 0) continue;
        for (int l = 0; l < W->L; l++)
            if (W->frag[l] == f && W->last_take[l] == fs->take)
                W->last_take[l] = fs->take - 1;
        int64_t take = fs->take;
        sync_abandon(W, f); /* its timeout, if pending, is void */
        for (int i = 0; i < W->M; i++) {
            W->member[i] = 0;
            W->merge_step[i] = -1;
            W->w[i].pend_layers[f] = 0;
        }
        observe(W, RUN_EV_SYNCED, -1, f, take, -1, now);
    }
    sync_clear(W, now);
}

/* method.quorum, with fewer members than it: the group's next syncs wait
 * for more, so the waiting workers rejoin at once, behind the group, at
 * the step after the newest completed sync's apply step (or sooner: at
 * the oldest take still collecting), from the outer parameters, and take
 * part in the syncs still collecting (rejoin: sync_admit). */
static void quorum_rejoin(world *W, int64_t now) {
    int64_t step = W->resume_step;
    for (int l = 0; l < W->L; l++)
        if (W->red[l].state == RED_COLLECTING && W->red[l].take < step)
            step = W->red[l].take;
    for (int i = 0; i < W->M; i++)
        if (W->w[i].state == W_REJOINING) rejoin(W, i, step, now);
}

/* Rejoins the repaired workers that are due, never ahead of the group: a
 * waiting worker rejoins at step rejoin_at (the step after the apply step
 * of a completed sync) once a joined worker has finished the step before
 * (at once if one has: blocking syncs, or late: continue, where the
 * others may be further).  With nobody left in the group they rejoin at
 * once, at the step after the group's last finished step (or the newest
 * sync's resume step, if that is sooner): nobody is ahead to wait for. */
static void rejoin_due(world *W, int64_t now) {
    int anyone = 0, waiting = 0;
    for (int i = 0; i < W->M; i++) {
        anyone |= W->w[i].joined;
        waiting |= W->w[i].state == W_REJOINING;
    }
    if (!waiting) return;
    if (!anyone) { /* the group begins again from the outer parameters */
        if (++W->restarts >= MAX_RESTARTS) {
            stop(W,
                 "the group emptied %d times without a sync completing "
                 "(failures come faster than syncs)",
                 W->restarts);
            return;
        }
        group_restart(W, now);
        int64_t step =
            W->frontier + 1 < W->resume_step ? W->frontier + 1 : W->resume_step;
        W->frontier = step - 1; /* the steps after it are to be done again */
        for (int i = 0; i < W->M; i++)
            if (W->w[i].state == W_REJOINING) rejoin(W, i, step, now);
        return;
    }
    if (W->quorum > 1 && mb_joined(W) < W->quorum) {
        quorum_rejoin(W, now);
        return;
    }
    for (int i = 0; i < W->M; i++) {
        const worker *w = &W->w[i];
        if (w->state == W_REJOINING && w->rejoin_at &&
            W->frontier >= w->rejoin_at - 1)
            rejoin(W, i, w->rejoin_at, now);
    }
}

/* At the step after its apply step (W->resume_step). */
void rec_sync_completed(world *W, int64_t now) {
    for (int i = 0; i < W->M; i++)
        if (W->w[i].state == W_REJOINING && !W->w[i].rejoin_at)
            W->w[i].rejoin_at = W->resume_step;
    rejoin_due(W, now);
}

void rec_frontier_moved(world *W, int64_t now) {
    /* only a failure (or a join) makes a worker wait to rejoin */
    if ((W->failures && W->sch.method != SCHED_DP) || W->joins)
        rejoin_due(W, now);
}

/* DP: a failure stops everybody and rolls back to the last checkpoint. */
static void dp_outage(world *W, int64_t now) {
    W->outage = 1;
    W->rollbacks++;
    for (int i = 0; i < W->M; i++) {
        worker *w = &W->w[i];
        if (w->absent && w->state == W_DOWN) continue; /* not in the job */
        worker_cancel_op(W, w, now);
        w->lost += w->busy - w->ckpt_busy;
        w->ckpt_busy = w->busy;
        w->nom_lost += w->nom - w->ckpt_nom;
        w->ckpt_nom = w->nom;
        for (int p = 0; p < W->P; p++) /* charged: a leave must not again */
            w->contrib[p] = w->busy, w->nom_contrib[p] = w->nom;
        w->step = W->ckpt_step + 1;
        w->op = 0;
        w->ckpt_done = W->ckpt_step; /* the checkpoint it goes back to */
        if (w->state != W_DOWN && w->state != W_RECOVERING &&
            w->state != W_RESTARTING) {
            worker_set_state(W, w, W_STALLED);
            w->idle_start = now;
        }
    }
    W->ckpt_count = 0;
    W->ckpt_cand = 0;
    W->dp_synced = W->ckpt_step;
    /* a joiner (membership trace) rejoins at the group's step: the
     * checkpoint's next one now */
    W->resume_step = W->ckpt_step + 1;
    W->frontier = W->ckpt_step;
    for (int l = 0; l < W->L; l++) W->last_take[l] = W->ckpt_step;
    for (int l = 0; l < W->L + W->P; l++) W->waiters[l] = -1;
    for (int p = 0; p < W->P; p++) {
        sync_abandon(W, p);
        for (int i = 0; i < W->M; i++) W->w[i].pend_layers[p] = 0;
    }
    sync_clear(W, now);
    observe(W, RUN_EV_ROLLBACK, -1, -1, W->ckpt_step, -1, now);
}

/* DP: training resumes once nobody is down or downloading. */
static void dp_resume(world *W, int64_t now) {
    for (int i = 0; i < W->M; i++) {
        int st = W->w[i].state;
        if (W->w[i].absent && st == W_DOWN) continue; /* not in the job */
        if (st == W_DOWN || st == W_RECOVERING || st == W_RESTARTING) return;
    }
    W->outage = 0;
    for (int i = 0; i < W->M; i++) {
        if (W->w[i].state != W_STALLED) continue; /* absent */
        idle_span(W, i, "stalled", now);
        W->w[i].joined = 1; /* a joiner that waited to rejoin, too */
        worker_set_state(W, &W->w[i], W_READY);
        worker_begin_step(W, &W->w[i], i, now);
    }
    for (int i = 0; i < W->M; i++) worker_advance(W, i, now);
}

/* A joined worker fails (DiLoCo, streaming): it leaves the group.  It
 * loses what it computed since its last contribution to each fragment
 * (1/P per fragment), its arrivals count for nothing (also if it comes
 * back to the take), and the reductions still collecting go on without
 * it; it is down from here on. */
static void leave_group(world *W, worker *w, int wi, int64_t now) {
    int64_t lost = 0;
    int64_t nlost = 0;
    for (int p = 0; p < W->P; p++) {
        lost += w->busy - w->contrib[p];
        nlost += w->nom - w->nom_contrib[p];
    }
    w->lost += lost / W->P;
    w->nom_lost += nlost / W->P;
    w->joined = 0;
    for (int p = 0; p < W->P; p++) {
        W->fs[p].arrived[wi] = 0;
        w->pend_layers[p] = 0;
    }
    for (int l = 0; l < W->L; l++)
        if (W->red[l].state == RED_READY || W->red[l].state == RED_SENDING)
            W->red[l].came[wi] = 0;
    coll_remove_member(W->coll, now, wi);
    worker_set_state(W, w, W_DOWN);
    sync_drop(W, wi, now);
    W->check_done = 1;
}

/* Worker wi stops now (a failure or a leave): the download, restart or
 * wait it was in is cut short, and its site's fabric dropped. */
static void cut_short(world *W, worker *w, int wi, int64_t now) {
    if (w->state == W_RECOVERING) net_flow_cancel(W->net, now, w->dl_flow);
    if (w->state == W_RECOVERING) {
        span(W, wi, 1, "recovery_interrupted", -1, w->step, w->dl_start, now,
             0);
        w->dl_flow = -1;
    }
    if (w->state == W_STALLED || w->state == W_REJOINING)
        idle_span(W, wi, w->state == W_STALLED ? "stalled" : "rejoin_wait",
                  now);
    if (w->state == W_RESTARTING) { /* cut short: its time is spent */
        w->restart_ns += now - w->idle_start;
        idle_span(W, wi, "restart", now);
    }
    site_reset(W, wi, now); /* what its site's fabric had pending */
}

/* Worker wi leaves the group where it is (DiLoCo, streaming: a failure;
 * DP: a leave), the others go on without it; it is down from here on. */
static void depart(world *W, worker *w, int wi, int64_t now) {
    worker_cancel_op(W, w, now);
    worker_unwait(W, wi);
    sync_member_gone(W, wi);
    if (w->joined) leave_group(W, w, wi, now);
    else worker_set_state(W, w, W_DOWN);
    rejoin_due(W, now); /* the last one in the group: nobody to wait for */
}

void rec_fail(world *W, int wi, int64_t now, int64_t repair) {
    worker *w = &W->w[wi];
    if (w->state == W_DONE) return; /* its part of the run is over */
    int due = repair >= now && repair <= RUN_TIME_MAX_NS;
    w->broken = 1;
    if (w->absent) { /* not in the job: only its machine is down (and its
                        failures end once it will never join again) */
        if (due && mb_joins_later(W, wi))
            push(W, repair, CLS_FAULT, EV_REPAIR, wi, 0, 0);
        return;
    }
    W->failures++;
    w->failures++;
    observe(W, RUN_EV_FAILED, wi, -1, w->step, -1, now);
    if (++W->idle_failures >= (int64_t)MAX_IDLE_FAILURES * W->M)
        stop(W,
             "%lld failures in a row without any worker finishing a step "
             "(failures come faster than recovery or a step)",
             (long long)W->idle_failures);
    cut_short(W, w, wi, now);
    if (W->sch.method == SCHED_DP) {
        if (!W->outage) dp_outage(W, now);
        worker_set_state(W, w, W_DOWN);
    } else {
        depart(W, w, wi, now);
    }
    w->idle_start = now;
    if (due) push(W, repair, CLS_FAULT, EV_REPAIR, wi, 0, 0);
}

/* A leave is announced: DP's others go on without it, no rollback (in an
 * outage they resume from the checkpoint without it); DiLoCo and
 * streaming as a failure.  A worker that is down (failed) just stays
 * down, one that has done every step is no longer needed. */
void rec_leave(world *W, int wi, int64_t now) {
    worker *w = &W->w[wi];
    w->absent = 1;
    w->absent_start = now;
    w->leaves++;
    W->leaves++;
    if (w->state == W_DONE) return;
    if (w->state == W_DOWN) { /* failed: it stays down */
        idle_span(W, wi, "down", now);
        w->idle_start = now;
        if (W->outage) dp_resume(W, now); /* nobody else to wait for? */
        return;
    }
    observe(W, RUN_EV_LEFT, wi, -1, w->step, -1, now);
    cut_short(W, w, wi, now);
    if (W->outage) { /* DP: stalled, nothing under way */
        w->joined = 0;
        worker_set_state(W, w, W_DOWN);
        dp_resume(W, now);
    } else {
        depart(W, w, wi, now);
    }
    w->idle_start = now;
    /* what it lost is charged: a DP rollback after its join must not
     * charge it again */
    w->ckpt_busy = w->ckpt_cand_busy = w->busy;
    w->ckpt_nom = w->ckpt_cand_nom = w->nom;
}

/* faults.restart_s: the repaired worker's process starts and loads for
 * restart_ns before it can download (EV_RESTART, of a new epoch: a
 * failure in between makes it stale). */
static void recover(world *W, int wi, int64_t now) {
    worker *w = &W->w[wi];
    if (W->restart_ns > 0) {
        int64_t t = later(W, now, W->restart_ns, "a restart");
        worker_set_state(W, w, W_RESTARTING);
        w->idle_start = now;
        w->epoch++;
        if (!W->stopped) push(W, t, CLS_FAULT, EV_RESTART, wi, w->epoch, 0);
    } else {
        start_download(W, wi, now);
    }
}

void rec_repair(world *W, int wi, int64_t now) {
    worker *w = &W->w[wi];
    w->broken = 0;
    if (!w->absent) { /* an absent worker waits for its join */
        idle_span(W, wi, "down", now);
        recover(W, wi, now);
    }
    rec_next_failure(W, wi);
}

/* A join: recovered as a repaired worker is (restart, download, rejoin);
 * a broken machine only once it is repaired. */
void rec_join(world *W, int wi, int64_t now) {
    worker *w = &W->w[wi];
    w->absent = 0;
    w->absent_ns += now - w->absent_start;
    w->joins++;
    W->joins++;
    if (w->state == W_DONE) return;
    if (now > w->absent_start)
        span(W, wi, 0, "absent", -1, w->step, w->absent_start, now, 0);
    w->idle_start = now;
    if (!w->broken) recover(W, wi, now);
}

void rec_restart_done(world *W, int wi, uint32_t epoch, int64_t now) {
    worker *w = &W->w[wi];
    if (w->state != W_RESTARTING || w->epoch != epoch) return;
    w->restart_ns += now - w->idle_start;
    idle_span(W, wi, "restart", now);
    start_download(W, wi, now);
}

static void on_download_done(world *W, int wi, int64_t now) {
    worker *w = &W->w[wi];
    w->dl_flow = -1;
    W->recovery_bytes += W->dl_bytes;
    span(W, wi, 1, "recovery", -1, w->step, w->dl_start, now, W->dl_bytes);
    w->idle_start = now;
    if (W->sch.method == SCHED_DP && W->outage) {
        if (!w->joined) { /* a joiner: it resumes from the checkpoint */
            w->step = W->ckpt_step + 1;
            w->op = 0;
            w->ckpt_done = W->ckpt_step;
            w->ckpt_busy = w->ckpt_cand_busy = w->busy;
            w->ckpt_nom = w->ckpt_cand_nom = w->nom;
        }
        worker_set_state(W, w, W_STALLED);
        dp_resume(W, now);
        return;
    }
    /* it waits for the apply point of the newest completed sync if the
     * group has not reached it yet, else of the next one */
    worker_set_state(W, w, W_REJOINING);
    w->rejoin_at = W->resume_step > W->frontier + 1 ? W->resume_step : 0;
    rejoin_due(W, now);
}

/* ---- net callbacks ------------------------------------------------------ */

/* The net's done callback of a recovery download's flow (start_download):
 * ctx the world, tag TAG_RECOVERY + the worker. */
static void on_download_flow(void *ctx, int64_t now, int flow, uint64_t tag) {
    (void)flow;
    on_download_done(ctx, (int)(tag - TAG_RECOVERY), now);
}
