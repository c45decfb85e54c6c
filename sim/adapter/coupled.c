/*
 * coupled.c -- the adapter of a coupled run (coupled.h): the engine's
 * observer makes the trainer calls and assembles the report rows.
 *
 * A row of step t waits in `pending` from the first replica that computes
 * step t until the row is complete (coupled.h); several can wait at once,
 * since replicas run at different speeds.  What each needs of the past is
 * kept as it happens: each replica's loss and gradient count at its step
 * t, the bytes of contributions taken after t (subtracted from the
 * trainer's total), the outer parameters' loss, evaluated at the latest
 * just before a sync applied after t changes them, and, for the replica
 * and average evaluations, a copy of each replica that starts step t + 1
 * before the row is complete, as it starts it (a TRAIN_OP_COPY deferred
 * with the step: only at report steps, only of the replicas evaluated,
 * only when a replica runs ahead).
 *
 * Inner steps and contributions are deferred: the engine's reports are
 * queued in order and given to the trainer as one batch (train_batch:
 * replicas in parallel) just before a call that needs their results (a
 * reduce, a rejoin, an evaluation) or at a report step.  Replicas share
 * no state, so that is the same arithmetic as each call at its instant;
 * it lets replicas that compute at nearby instants use the trainer's
 * threads, as the lockstep driver does.
 */
#include "sim/adapter/coupled.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "models/nn.h"
#include "models/tensor.h"
#include "models/train.h"

typedef struct { /* a row waiting for its step to complete */
    int64_t step;
    uint8_t *have;        /* per replica: it has computed `step` (and the
                           trainer too: its loss is known) */
    double *loss;         /*   its loss there */
    uint64_t *grads;      /*   the gradients it had computed (0: none) */
    uint64_t bytes_ahead; /* bytes of contributions taken after `step` */
    int outer_done;       /* the outer parameters' loss is in `outer` */
    double outer;
    float **copy; /* per replica: its parameters as it started step
                           + 1 (NULL: not copied, it is still there) */
    float **buf;  /*   the buffers of those copies, kept for reuse */
} pending;

typedef struct {
    const cpl_options *o;
    cpl_summary *out;
    train *tr;
    int M, tau, dp;
    int sparta; /* no outer parameters: the eval loss is the replicas'
                   average's (every replica evaluated, copied ahead) */
    int eager;  /* the outer values change at replica 0's syncs */
    int64_t T, every, ckpt_every;
    uint64_t batch_tokens; /* tokens of one step of a member (G gradients) */
    uint8_t *joined;       /* per replica: in the group */
    int64_t *ended;        /* per replica: the last step it finished */
    uint64_t *grads;       /* per replica: gradients computed */
    int64_t *open;         /* per fragment: take of its sync in flight, -1 */
    int64_t *synced;       /* per fragment: take of its last sync reduced */
    int held;              /* sites whose inner steps reduce inside: a worker's
                 arrival may come after its step's end, so a row waits
                 for the syncs the schedule applies by its step */
    const sched_spec *sched;
    int P;
    train_op *queue; /* calls deferred, in order */
    int64_t *qstep;  /*   the engine's step of each (steps) */
    int nqueue, qcap;
    pending *pend; /* rows waiting, by increasing step */
    int npend, cap;
    int64_t emitted;             /* step of the last row written */
    train_snapshot *ckpt, *cand; /* DP: committed and candidate state */
    int64_t ckpt_step, cand_step;
} cpl;

/* A trainer call failed with code rc: its message. */
static int trainer_failed(const cpl *c, int rc, char *err, size_t errlen) {
    return msg_set(err, errlen, rc, "%s", train_error(c->tr));
}

static int is_report(const cpl *c, int64_t t) {
    return t == c->T || (c->every > 0 && t % c->every == 0);
}

/* The pending row of step t, made when `make` (NULL when out of memory
 * or, without `make`, when there is none). */
static pending *pending_at(cpl *c, int64_t t, int make) {
    for (int i = 0; i < c->npend; i++)
        if (c->pend[i].step == t) return &c->pend[i];
    if (!make) return NULL;
    if (c->npend == c->cap) {
        int cap = c->cap ? 2 * c->cap : 4;
        pending *p = realloc(c->pend, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        memset(p + c->cap, 0, (size_t)(cap - c->cap) * sizeof *p);
        c->pend = p;
        c->cap = cap;
    }
    pending *p = &c->pend[c->npend];
    size_t M = (size_t)c->M;
    if (!p->have) {
        p->have = calloc(M, 1);
        p->loss = calloc(M, sizeof *p->loss);
        p->grads = calloc(M, sizeof *p->grads);
        p->copy = calloc(M, sizeof *p->copy);
        p->buf = calloc(M, sizeof *p->buf);
        if (!p->have || !p->loss || !p->grads || !p->copy || !p->buf) {
            free(p->have), free(p->loss), free(p->grads);
            free(p->copy), free(p->buf);
            p->have = NULL, p->loss = NULL, p->grads = NULL;
            p->copy = NULL, p->buf = NULL;
            return NULL;
        }
    }
    p->step = t;
    memset(p->have, 0, M);
    memset(p->grads, 0, M * sizeof *p->grads);
    memset(p->copy, 0, M * sizeof *p->copy);
    p->bytes_ahead = 0;
    p->outer_done = 0;
    /* in step order (a rejoined replica may run ahead of the others) */
    int at = c->npend;
    while (at > 0 && c->pend[at - 1].step > t) at--;
    pending made = *p;
    memmove(c->pend + at + 1, c->pend + at,
            (size_t)(c->npend - at) * sizeof made);
    c->pend[at] = made;
    c->npend++;
    return &c->pend[at];
}

/* Drops the first pending row, keeping its buffers for reuse. */
static void pending_pop(cpl *c) {
    pending first = c->pend[0];
    memmove(c->pend, c->pend + 1, (size_t)(c->npend - 1) * sizeof first);
    c->pend[--c->npend] = first;
}

/* Defers a trainer call (copy: of a TRAIN_OP_COPY). */
static int enqueue(cpl *c, int r, int f, int64_t take, float *copy, char *err,
                   size_t errlen) {
    if (c->nqueue == c->qcap) {
        int cap = c->qcap ? 2 * c->qcap : 64;
        train_op *q = realloc(c->queue, (size_t)cap * sizeof *q);
        if (q) c->queue = q;
        int64_t *t = q ? realloc(c->qstep, (size_t)cap * sizeof *t) : NULL;
        if (!t) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
        c->qstep = t;
        c->qcap = cap;
    }
    c->qstep[c->nqueue] = take;
    c->queue[c->nqueue++] = (train_op){r, f, take, 0, copy};
    return 0;
}

static pending *pending_at(cpl *c, int64_t t, int make);

/* Makes the first n deferred calls; the others stay queued.  The losses
 * of report steps go to their rows. */
static int flush_first(cpl *c, int n, char *err, size_t errlen) {
    int rc = train_batch(c->tr, c->queue, n);
    for (int i = 0; i < n && !rc; i++) {
        const train_op *o = &c->queue[i];
        pending *p = o->fragment == -1 ? pending_at(c, c->qstep[i], 0) : NULL;
        if (p && p->grads[o->replica]) {
            p->have[o->replica] = 1;
            p->loss[o->replica] = o->loss;
        }
    }
    c->nqueue -= n;
    memmove(c->queue, c->queue + n, (size_t)c->nqueue * sizeof *c->queue);
    memmove(c->qstep, c->qstep + n, (size_t)c->nqueue * sizeof *c->qstep);
    return rc ? trainer_failed(c, rc, err, errlen) : 0;
}

/* Makes every deferred call. */
static int flush(cpl *c, char *err, size_t errlen) {
    return flush_first(c, c->nqueue, err, errlen);
}

/* Replica r is evaluated in a row: replica 0 for SCN_EVAL_REPLICA,
 * every one for SCN_EVAL_AVERAGE. */
static int evaluated(const cpl *c, int r) {
    return c->sparta || (c->o->train->train_eval & SCN_EVAL_AVERAGE) ||
           ((c->o->train->train_eval & SCN_EVAL_REPLICA) && r == 0);
}

/* The loss of the replica or average evaluations a row asks for: of the
 * copies in `copy` (NULL, or a NULL entry: the replica as it is now, its
 * merges due landed first). */
static int extra_evals(cpl *c, cpl_row *r, float *const *copy) {
    int rc = 0;
    r->replica_loss = r->average_loss = NAN;
    for (int i = 0; i < c->M && !rc; i++)
        if (evaluated(c, i) && !(copy && copy[i])) rc = train_land(c->tr, i);
    if (!rc && (c->o->train->train_eval & SCN_EVAL_REPLICA))
        rc = copy && copy[0]
                 ? train_eval_params(c->tr, copy[0], &r->replica_loss)
                 : train_eval_replica(c->tr, 0, &r->replica_loss);
    if (!rc && (c->o->train->train_eval & SCN_EVAL_AVERAGE))
        rc = train_eval_mean(c->tr, (const float *const *)copy,
                             &r->average_loss);
    if (!rc && c->sparta) { /* its eval loss: of the average */
        r->eval_loss = r->average_loss;
        if (!(c->o->train->train_eval & SCN_EVAL_AVERAGE))
            rc = train_eval_mean(c->tr, (const float *const *)copy,
                                 &r->eval_loss);
    }
    return rc;
}

/* Records a finished row: the target, the summary, the callback. */
static int deliver(cpl *c, const cpl_row *r, char *err, size_t errlen) {
    cpl_summary *out = c->out;
    if (out->target_step < 0 && r->eval_loss <= out->target_loss) {
        out->target_step = r->step;
        out->target_time_s = r->sim_time_s;
    }
    out->last = *r;
    c->emitted = r->step;
    if (c->o->row && c->o->row(r, c->o->row_ctx))
        return msg_set(err, errlen, MSG_EIO, "write error: %s",
                       strerror(errno ? errno : EIO));
    return 0;
}

/* Complete: every replica in the group has finished the step and every
 * sync applied by then has been reduced. */
static int complete(const cpl *c, const pending *p) {
    for (int r = 0; r < c->M; r++)
        if (c->joined[r] && c->ended[r] < p->step) return 0;
    for (int f = 0; f < c->P; f++) {
        if (c->open[f] >= 0 && c->open[f] + c->tau <= p->step) return 0;
        int64_t off = sched_offset(c->sched, f);
        if (!c->held || p->step < off) continue;
        int64_t take =
            sched_apply_step(c->sched, f, (p->step - off) / c->sched->H) -
            c->tau; /* the last sync of f applied by the step */
        if (take >= 1 && c->synced[f] < take) return 0;
    }
    return 1;
}

/* Writes the rows that are complete, oldest first. */
static int rows_due(cpl *c, const run_event *e, char *err, size_t errlen) {
    while (c->npend > 0 && complete(c, &c->pend[0])) {
        /* the losses at the row's step, and the replicas as they are */
        int n = 0, rc = flush(c, err, errlen);
        if (rc) return rc;
        pending *p = &c->pend[0];
        cpl_row r = {.step = p->step};
        for (int i = 0; i < c->M; i++) {
            r.tokens +=
                (p->grads[i] ? p->grads[i] : c->grads[i]) * c->batch_tokens;
            if (p->have[i]) r.train_loss += p->loss[i], n++;
        }
        r.train_loss = n ? r.train_loss / n : NAN;
        if (!p->outer_done && !c->sparta)
            rc = train_eval_outer(c->tr, &p->outer);
        if (!rc) rc = extra_evals(c, &r, p->copy);
        if (rc) return trainer_failed(c, rc, err, errlen);
        if (!c->sparta) r.eval_loss = p->outer;
        r.bytes_sent = train_bytes(c->tr) - p->bytes_ahead;
        r.entropy_floor = c->out->entropy_floor;
        r.sim_time_s = (double)e->now * 1e-9;
        r.sim_utilization =
            e->now > 0 ? (double)e->compute_ns / ((double)e->now * c->M) : 0;
        r.delay_mean_steps =
            e->delays->count ? (double)e->delays->sum / (double)e->delays->count
                             : 0;
        r.delay_max_steps = e->delays->max;
        r.wan_bytes = e->wan_bytes;
        pending_pop(c);
        if ((rc = deliver(c, &r, err, errlen))) return rc;
    }
    return 0;
}

/* Replica r starts step t + 1 while the row of step t waits: a copy of it
 * as it starts, for the row's evaluations. */
static int copy_ahead(cpl *c, int r, int64_t t, char *err, size_t errlen) {
    pending *p = evaluated(c, r) ? pending_at(c, t, 0) : NULL;
    if (!p) return 0;
    if (!p->buf[r] && !(p->buf[r] = malloc(c->out->params * sizeof *p->buf[r])))
        return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    p->copy[r] = p->buf[r];
    return enqueue(c, r, TRAIN_OP_COPY, t, p->copy[r], err, errlen);
}

static int on_step(cpl *c, int r, int64_t t, char *err, size_t errlen) {
    int rc = t > 1 && is_report(c, t - 1) && t - 1 > c->emitted
                 ? copy_ahead(c, r, t - 1, err, errlen)
                 : 0;
    if (!rc) rc = enqueue(c, r, -1, t, NULL, err, errlen);
    if (rc) return rc;
    c->grads[r]++;
    if (!is_report(c, t) || t <= c->emitted) return 0;
    pending *p = pending_at(c, t, 1); /* its loss comes with the flush */
    if (!p) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    p->grads[r] = c->grads[r];
    return 0;
}

/* The first report step after t. */
static int64_t next_report(const cpl *c, int64_t t) {
    int64_t n = c->every > 0 ? (t / c->every + 1) * c->every : c->T;
    return n < c->T ? n : c->T;
}

/* The rows before step `limit` see the outer parameters as they are now,
 * also those no replica has reached yet: they are evaluated before a call
 * that changes them. */
static int eval_rows_before(cpl *c, int64_t limit, char *err, size_t errlen) {
    int rc = 0;
    for (int64_t t = next_report(c, c->emitted); t < limit && !rc;) {
        pending *p = pending_at(c, t, 1);
        if (!p) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
        if (!p->outer_done) rc = train_eval_outer(c->tr, &p->outer);
        p->outer_done = 1;
        if (t == c->T) break;
        t = next_report(c, t);
    }
    return rc ? trainer_failed(c, rc, err, errlen) : 0;
}

/* Eager overlap: the outer values evaluated are replica 0's copy, which
 * its own contributions and its rejoin change (at step `step`). */
static int eager_change(cpl *c, int r, int64_t step, char *err, size_t errlen) {
    if (!c->eager || r != 0) return 0;
    int rc = flush(c, err, errlen);
    return rc ? rc : eval_rows_before(c, step, err, errlen);
}

static int on_contribute(cpl *c, const run_event *e, char *err, size_t errlen) {
    int rc = eager_change(c, e->worker, e->step, err, errlen);
    if (!rc)
        rc = enqueue(c, e->worker, e->fragment, e->step, NULL, err, errlen);
    if (rc) return rc;
    c->open[e->fragment] = e->step;
    uint64_t bytes = train_fragment_wire_bytes(c->tr, e->fragment);
    for (int i = 0; i < c->npend; i++)
        if (c->pend[i].step < e->step) c->pend[i].bytes_ahead += bytes;
    return 0;
}

/* The deferred calls a reduce of fragment f needs: DP, all (its update
 * reaches every replica at once); otherwise up to the last contribution
 * to f.  The steps after it stay queued: they come before the steps the
 * result merges into (the engine's merge steps), so they may run later. */
static int needed_by_reduce(const cpl *c, int f) {
    if (c->dp) return c->nqueue;
    int n = 0;
    for (int i = 0; i < c->nqueue; i++)
        if (c->queue[i].fragment == f) n = i + 1;
    return n;
}

static int on_synced(cpl *c, const run_event *e, char *err, size_t errlen) {
    int rc = flush_first(c, needed_by_reduce(c, e->fragment), err, errlen);
    if (rc) return rc;
    /* the reduce changes the outer values seen from its apply step on */
    if (!c->eager && !c->sparta)
        rc = eval_rows_before(c, e->step + c->tau, err, errlen);
    if (rc) return rc;
    uint64_t members = 0;
    for (int i = 0; i < c->M; i++)
        if (e->member[i]) members |= 1ull << i;
    if (!rc) rc = train_reduce(c->tr, e->fragment, members, e->merge_step);
    c->open[e->fragment] = -1;
    c->synced[e->fragment] = e->step;
    if (!rc && c->dp && members && e->step % c->ckpt_every == 0) {
        rc = train_snapshot_take(c->tr, c->cand);
        c->cand_step = e->step;
    }
    return rc ? trainer_failed(c, rc, err, errlen) : 0;
}

/* DP: back to the committed checkpoint of step `step`. */
static int on_rollback(cpl *c, int64_t step, char *err, size_t errlen) {
    if (step != c->ckpt_step)
        return msg_set(err, errlen, MSG_EFAIL,
                       "internal error: a rollback "
                       "to step %lld, but the checkpoint is of step %lld",
                       (long long)step, (long long)c->ckpt_step);
    c->nqueue = 0; /* the deferred calls would be undone anyway */
    for (int f = 0; f < c->P; f++) c->open[f] = -1;
    int rc = train_snapshot_restore(c->tr, c->ckpt);
    if (rc) return trainer_failed(c, rc, err, errlen);
    c->npend = 0;
    c->cand_step = -1;
    if (c->emitted > step) c->emitted = step;
    for (int r = 0; r < c->M; r++) c->ended[r] = step;
    return 0;
}

/* Replica e->worker rejoins at e->step: it heals from the outer
 * parameters (train_rejoin; under a quorum its payloads in flight are
 * dropped: it sends them again).  DP (a join): every reduce has stepped
 * every replica, so it holds the group's parameters and optimizer state
 * already; its step count says so. */
static int rejoined(cpl *c, const run_event *e, char *err, size_t errlen) {
    int rc, w = e->worker;
    if (c->dp) {
        int64_t s = train_replica_steps(c->tr, w);
        return s == e->step - 1 ? 0
                                : msg_set(err, errlen, MSG_EFAIL,
                                          "internal error: dp replica %d "
                                          "rejoins at step %lld after %lld",
                                          w, (long long)e->step, (long long)s);
    }
    if ((rc = eager_change(c, w, e->step, err, errlen))) return rc;
    if ((rc = train_rejoin(c->tr, w, e->src, e->step - 1)) ||
        (c->o->cfg->quorum > 1 && (rc = train_withdraw(c->tr, w))))
        return trainer_failed(c, rc, err, errlen);
    return 0;
}

static int on_event(void *ctx, const run_event *e, char *err, size_t errlen) {
    cpl *c = ctx;
    int rc = 0, w = e->worker;
    switch (e->kind) {
    case RUN_EV_STEP: rc = on_step(c, w, e->step, err, errlen); break;
    case RUN_EV_STEP_END: c->ended[w] = e->step; break;
    case RUN_EV_CONTRIBUTE: rc = on_contribute(c, e, err, errlen); break;
    case RUN_EV_SYNCED: rc = on_synced(c, e, err, errlen); break;
    case RUN_EV_FAILED:
        if (!c->dp) c->joined[w] = 0; /* DP: everybody waits for it */
        break;
    case RUN_EV_LEFT: c->joined[w] = 0; break;
    case RUN_EV_REJOINED:
        if ((rc = flush(c, err, errlen)) || (rc = rejoined(c, e, err, errlen)))
            return rc;
        c->joined[w] = 1;
        c->ended[w] = e->step - 1;
        for (int f = 0; c->held && f < c->P; f++) /* syncs before it: moot */
            if (c->synced[f] < e->step - 1) c->synced[f] = e->step - 1;
        break;
    case RUN_EV_CHECKPOINT: {
        if (e->step != c->cand_step)
            return msg_set(err, errlen, MSG_EFAIL,
                           "internal error: the "
                           "checkpoint of step %lld was not taken",
                           (long long)e->step);
        train_snapshot *t = c->ckpt;
        c->ckpt = c->cand, c->cand = t;
        c->ckpt_step = e->step;
        c->cand_step = -1;
        break;
    }
    case RUN_EV_ROLLBACK: rc = on_rollback(c, e->step, err, errlen); break;
    }
    return rc ? rc : rows_due(c, e, err, errlen);
}

/* ---- life cycle ---------------------------------------------------------- */

static void summary_init(cpl_summary *out, const scn_train *tr) {
    memset(out, 0, sizeof *out);
    out->target_loss = tr->target_loss;
    out->target_step = -1;
    out->target_time_s = NAN;
    out->entropy_floor = NAN;
    cpl_row *r = &out->last; /* no row yet: no losses */
    r->train_loss = r->eval_loss = r->replica_loss = r->average_loss = NAN;
    r->entropy_floor = r->sim_time_s = NAN;
}

/* A scenario of sites (cfg->has_sites): every site's replicas into
 * t->site_replicas, which the trainer takes only when they are equal and
 * within TRAIN_MAX_SITE_REPLICAS (MSG_EINPUT otherwise). */
static int trainer_sites(const scn_config *cfg, train_config *t, char *err,
                         size_t errlen) {
    if (!cfg->has_sites) return 0;
    int G = cfg->site_replicas[0];
    for (int i = 1; i < cfg->workers; i++)
        if (cfg->site_replicas[i] != G)
            return msg_set(err, errlen, MSG_EINPUT,
                           "train: site %d has %d replicas and site 0 has %d "
                           "(expected every site of the same number in a "
                           "coupled run)",
                           i, cfg->site_replicas[i], G);
    if (G > TRAIN_MAX_SITE_REPLICAS)
        return msg_set(err, errlen, MSG_EINPUT,
                       "train: sites of %d replicas (expected at most %d in "
                       "a coupled run)",
                       G, TRAIN_MAX_SITE_REPLICAS);
    t->site_replicas = G;
    return 0;
}

/* The trainer of a scenario's train section (late follows the method's,
 * which DP ignores; a scenario of sites gives each member its site's
 * replicas).  train_new runs the trainer's own checks (nn_check,
 * optim_check, ...): the loader covers what they test, so a refusal here
 * is a section the loader let through. */
static int trainer_new(const scn_config *cfg, const scn_train *sec, train **tr,
                       char *err, size_t errlen) {
    train_config t = sec->train;
    int rc = trainer_sites(cfg, &t, err, errlen);
    if (rc) return rc;
    if (sec->train_data_path[0]) t.data.path = sec->train_data_path;
    t.late = scn_late_continues(cfg) ? TRAIN_LATE_CONTINUE : TRAIN_LATE_WAIT;
    return train_new(&t, tr, err, errlen);
}

static void cpl_free(cpl *c) {
    for (int i = 0; i < c->cap; i++) {
        pending *p = &c->pend[i];
        for (int r = 0; p->buf && r < c->M; r++) free(p->buf[r]);
        free(p->have);
        free(p->loss);
        free(p->grads);
        free(p->copy);
        free(p->buf);
    }
    free(c->pend);
    free(c->joined);
    free(c->ended);
    free(c->grads);
    free(c->queue);
    free(c->qstep);
    free(c->open);
    free(c->synced);
    train_snapshot_free(c->ckpt);
    train_snapshot_free(c->cand);
    train_free(c->tr);
}

static int cpl_init(cpl *c, const cpl_options *o, cpl_summary *out, char *err,
                    size_t errlen) {
    const scn_config *cfg = o->cfg;
    memset(c, 0, sizeof *c);
    c->o = o;
    c->out = out;
    int rc = trainer_new(cfg, o->train, &c->tr, err, errlen);
    if (rc) return rc;
    const sched_spec *s = train_schedule(c->tr);
    c->M = train_replicas(c->tr);
    c->tau = sched_delay(s);
    c->eager = s->overlap == SCHED_EAGER;
    c->P = s->P;
    c->dp = s->method == SCHED_DP;
    c->sparta = s->method == SCHED_SPARTA;
    c->sched = s;
    c->held = cfg->has_sites && !c->dp && train_site_replicas(c->tr) > 1;
    c->T = cfg->steps;
    c->every = o->train->train.eval_interval;
    c->ckpt_every = scn_checkpoint_every(cfg);
    c->batch_tokens = (uint64_t)o->train->train.batch *
                      (uint64_t)o->train->train.seq *
                      (uint64_t)train_site_replicas(c->tr);
    c->cand_step = -1;
    size_t M = (size_t)c->M;
    c->joined = malloc(M);
    c->ended = calloc(M, sizeof *c->ended);
    c->grads = calloc(M, sizeof *c->grads);
    c->open = malloc((size_t)c->P * sizeof *c->open);
    c->synced = calloc((size_t)c->P, sizeof *c->synced);
    if (!c->joined || !c->ended || !c->grads || !c->open || !c->synced)
        return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    memset(c->joined, 1, M);
    for (int f = 0; f < c->P; f++) c->open[f] = -1;
    if (c->dp) { /* a rollback before the first checkpoint goes to 0 */
        c->ckpt = train_snapshot_new(c->tr);
        c->cand = train_snapshot_new(c->tr);
        if (!c->ckpt || !c->cand || train_snapshot_take(c->tr, c->ckpt))
            return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    }
    out->params = train_num_params(c->tr);
    out->entropy_floor = train_entropy_floor(c->tr);
    return 0;
}

int cpl_run(const cpl_options *o, cpl_summary *out, char *err, size_t errlen) {
    cpl c;
    summary_init(out, o->train);
    int rc = cpl_init(&c, o, out, err, errlen);
    if (!rc) {
        run_hooks h = {0};
        h.observe = on_event;
        h.observe_ctx = &c;
        h.progress = o->progress;
        h.progress_ctx = o->progress_ctx;
        rc = run_simulate(o->cfg, &h, &out->sim, err, errlen);
    }
    cpl_free(&c);
    return rc;
}

/* ---- the lockstep reference ---------------------------------------------- */

typedef struct {
    cpl *c;
    char *err;
    size_t errlen;
    int rc; /* why the report callback stopped the run */
} lockstep_ctx;

static int lockstep_report(const train_report *tr, void *ctx) {
    lockstep_ctx *l = ctx;
    cpl_row r = {tr->step,
                 tr->tokens,
                 tr->train_loss,
                 tr->eval_loss,
                 NAN,
                 NAN,
                 tr->bytes,
                 l->c->out->entropy_floor,
                 NAN,
                 NAN,
                 NAN,
                 0,
                 0};
    int rc = extra_evals(l->c, &r, NULL);
    if (rc) {
        l->rc = trainer_failed(l->c, rc, l->err, l->errlen);
        return 1;
    }
    return (l->rc = deliver(l->c, &r, l->err, l->errlen)) != 0;
}

static void lockstep_progress(void *ctx, int64_t t, int64_t steps) {
    const cpl_options *o = ctx;
    o->progress(o->progress_ctx, (double)t / (double)steps);
}

int cpl_lockstep(const cpl_options *o, cpl_summary *out, char *err,
                 size_t errlen) {
    cpl c;
    summary_init(out, o->train);
    int rc = cpl_init(&c, o, out, err, errlen);
    if (!rc) {
        lockstep_ctx l = {&c, err, errlen, 0};
        if (o->progress) train_on_step(c.tr, lockstep_progress, (void *)o);
        rc = train_run(c.tr, lockstep_report, &l);
        if (rc == TRAIN_STOPPED) rc = l.rc;
        else if (rc) rc = trainer_failed(&c, rc, err, errlen);
    }
    cpl_free(&c);
    return rc;
}

double cpl_flops_per_step(const train_config *t) {
    nn_model *m = nn_new(&t->nn, t->batch, t->seq);
    double f = m ? nn_flops_per_step(m) : 0;
    nn_free(m);
    return f;
}

void cpl_blas_start(void) {
    tn_blas_start();
}
