/*
 * train_lockstep.c -- the lockstep calls (train.h): prepare and apply of
 * a sync for every participant at once, and the driver that runs every
 * replica's step t together, then the syncs the schedule takes and
 * applies after it (train_step, train_run).
 */
#include "models/train_int.h"

#include <stdlib.h>

/* ---- prepare and apply --------------------------------------------------- */

int train_prepare(train *tr, int f, uint64_t participants, uint64_t *bytes) {
    int rc = train__check_fragment(tr, f, participants);
    if (rc) return rc;
    fragment *fr = &tr->frag[f];
    if (fr->take >= 0)
        return train__fail(tr, MSG_ESTATE,
                           "train: fragment %d already has a "
                           "sync in flight",
                           f);
    int64_t take = INT64_MAX; /* the least step among the participants */
    train_op ops[TRAIN_MAX_REPLICAS];
    uint8_t *buf[TRAIN_MAX_REPLICAS] = {0};
    int n = 0;
    for (int r = 0; r < tr->M; r++) {
        if (!(participants >> r & 1)) continue;
        if (tr->dp && !tr->rep[r].grad_ready)
            return train__fail(tr, MSG_ESTATE,
                               "train: dp: replica %d has no "
                               "gradient to send",
                               r);
        if (tr->rep[r].steps + tr->dp < take) take = tr->rep[r].steps + tr->dp;
        ops[n++] = (train_op){r, f, 0, 0, NULL};
    }
    for (int i = 0; i < n; i++)
        if (!(buf[i] = malloc(fr->wire))) {
            for (int k = 0; k < i; k++) free(buf[k]);
            return train__fail(tr, MSG_ENOMEM, "train: out of memory");
        }
    for (int i = 0; i < n; i++) {
        ops[i].take = take;
        if ((rc = train__payload_open(tr, ops[i].replica, f, take, buf[i]))) {
            for (int k = i + 1; k < n; k++) free(buf[k]);
            return rc;
        }
    }
    if ((rc = train__batch_arith(tr, ops, n))) return rc;
    for (int r = 0; bytes && r < tr->M; r++)
        bytes[r] = participants >> r & 1 ? fr->wire : 0;
    return 0;
}

int train_apply(train *tr, int f, uint64_t participants) {
    int rc = train__check_fragment(tr, f, participants);
    if (!rc) rc = train__check_members(tr, f, participants);
    if (rc) return rc;
    int64_t merge[TRAIN_MAX_REPLICAS];
    for (int r = 0; r < tr->M; r++)
        merge[r] = train__own_merge_step(tr, tr->frag[f].take, r);
    train__reduce_sync(tr, f, participants);
    for (int r = 0; !tr->dp && tr->sp.overlap == SCHED_INNER && r < tr->M;
         r++) {
        int64_t *d = train__due_of(tr, r, f);
        if (tr->cfg.tau_extra[r] == 0) train__land_fragment(tr, r, f);
        else if (*d < 0) /* a larger tau: the merge lands later */
            *d = merge[r];
    }
    return 0;
}

/* ---- the lockstep driver ------------------------------------------------- */

/* Lockstep: the merges due, then the step, counted (a pool job). */
static void inner_job(void *ctx, int r) {
    train *tr = ctx;
    replica *rp = &tr->rep[r];
    int64_t t = rp->steps + 1;
    train__land_due(tr, r, t);
    rp->rc = train__replica_step(tr, r, t);
    if (!rp->rc && !tr->dp) rp->steps++;
}

/* Lockstep: the syncs applied after step t that were taken before it. */
static int apply_before(train *tr, int64_t t, uint64_t all) {
    int rc = 0, n = sched_applied_after(&tr->sp, t, tr->flist);
    for (int i = 0; i < n && !rc; i++) {
        int f = tr->flist[i];
        int64_t take = tr->frag[f].take;
        if (take >= 0 && take < t) rc = train_apply(tr, f, all);
    }
    return rc;
}

/* Lockstep: the syncs taken after step t, and those of them applied at
 * once (delay 0). */
static int take_after(train *tr, int64_t t, uint64_t all) {
    int rc = 0, n = sched_taken_after(&tr->sp, t, tr->cfg.steps, tr->flist);
    for (int i = 0; i < n && !rc; i++)
        rc = train_prepare(tr, tr->flist[i], all, NULL);
    for (int i = 0; sched_delay(&tr->sp) == 0 && i < n && !rc; i++)
        rc = train_apply(tr, tr->flist[i], all);
    return rc;
}

int train_step(train *tr) {
    int64_t t = train_steps_done(tr) + 1;
    uint64_t all = tr->M == 64 ? ~0ull : (1ull << tr->M) - 1;
    int rc = 0;
    for (int r = 0; r < tr->M && !rc; r++)
        rc = train__step_refused(tr, r, tr->rep[r].steps + 1, 0);
    if (rc) return rc;
    train__run_jobs(tr->pool, tr->M, inner_job, tr);
    if ((rc = train__jobs_failed(tr))) return rc;
    if (tr->dp) {
        rc = train_prepare(tr, 0, all, NULL);
        return rc ? rc : train_apply(tr, 0, all);
    }
    /* The syncs applied after t that were taken before it, then those
     * taken after t, then the ones of those applied at once (delay 0).
     * Sparta takes first: a subset is read as its replica sends it, at
     * the end of step t, before what merges at the start of step t + 1
     * (its subsets overlap, a fragment's layers do not). */
    if (tr->sparta) rc = take_after(tr, t, all);
    if (!rc) rc = apply_before(tr, t, all);
    if (!rc && !tr->sparta) rc = take_after(tr, t, all);
    return rc;
}

static uint64_t tokens_done(const train *tr) {
    uint64_t n = 0, bt = (uint64_t)tr->cfg.batch * (uint64_t)tr->cfg.seq;
    for (int r = 0; r < tr->M; r++) n += (uint64_t)tr->rep[r].ngrads * bt;
    return n;
}

static int report(train *tr, int64_t t, train_report_fn fn, void *ctx) {
    train_report rep = {t, tokens_done(tr), 0, 0, tr->bytes};
    /* every replica's loss, a site's G each, summed in order */
    for (int r = 0; r < tr->M; r++)
        for (int k = 0; k < tr->G; k++)
            rep.train_loss +=
                tr->G > 1 ? tr->rep[r].losses[k] : tr->rep[r].loss;
    rep.train_loss /= tr->M * tr->G;
    int rc = train_eval_outer(tr, &rep.eval_loss);
    if (rc) return rc;
    return fn && fn(&rep, ctx) ? TRAIN_STOPPED : 0;
}

void train_on_step(train *tr, void (*fn)(void *ctx, int64_t t, int64_t steps),
                   void *ctx) {
    tr->step_fn = fn;
    tr->step_ctx = ctx;
}

int train_run(train *tr, train_report_fn fn, void *ctx) {
    if (tokens_done(tr) != 0)
        return train__fail(tr, MSG_ESTATE, "train: run needs a fresh trainer");
    const int64_t T = tr->cfg.steps, every = tr->cfg.eval_interval;
    for (int64_t t = 1; t <= T; t++) {
        int rc = train_step(tr);
        if (rc) return rc;
        if (tr->step_fn) tr->step_fn(tr->step_ctx, t, T);
        if (t == T || (every > 0 && t % every == 0)) {
            rc = report(tr, t, fn, ctx);
            if (rc) return rc;
        }
    }
    return 0;
}
