/*
 * train_calls.c -- the calls of a coupled run (train.h): batches of
 * steps, contributions and copies; reduces whose merges land lazily, at
 * each replica's merge step; a failed replica's rejoin; snapshots to
 * roll back to; the state of the syncs in flight.
 */
#include "models/train_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- batches --------------------------------------------------------------
 * Every coupled call is a batch: first each op, in order, is checked
 * against the state the ops before it left and takes its effect on the
 * shared state (a step is counted; a payload is opened); then the
 * arithmetic runs, each replica's ops in order, replicas in parallel
 * (they share no state: the same bits as one op at a time). */

/* MSG_ESTATE (with the message) when replica r may not contribute to
 * fragment f's sync taken after `take` now. */
static int contribute_refused(train *tr, int r, int f, int64_t take) {
    const replica *rp = &tr->rep[r];
    const fragment *fr = &tr->frag[f];
    if (tr->dp && !rp->grad_ready)
        return train__fail(tr, MSG_ESTATE,
                           "train: dp: replica %d has no "
                           "gradient to send",
                           r);
    if (rp->steps + tr->dp != take)
        return train__fail(tr, MSG_ESTATE,
                           "train: replica %d has done %lld "
                           "steps, not the %lld of fragment %d's sync",
                           r, (long long)rp->steps, (long long)(take - tr->dp),
                           f);
    if (fr->take >= 0 && fr->take != take)
        return train__fail(tr, MSG_ESTATE,
                           "train: fragment %d's sync in "
                           "flight was taken after step %lld, not %lld",
                           f, (long long)fr->take, (long long)take);
    if (fr->contrib >> r & 1)
        return train__fail(tr, MSG_ESTATE,
                           "train: replica %d has already "
                           "contributed to fragment %d's sync",
                           r, f);
    return 0;
}

/* Checks op o against the state so far and takes its shared effect; a
 * step's take becomes its step number. */
static int batch_accept(train *tr, train_op *o) {
    int r = o->replica, rc = train__check_replica(tr, r);
    if (rc) return rc;
    replica *rp = &tr->rep[r];
    if (o->fragment == TRAIN_OP_COPY) {
        if (!o->copy)
            return train__fail(tr, MSG_EINVAL,
                               "train: a copy of replica %d to "
                               "nowhere",
                               r);
        o->take = rp->steps + 1;
        return 0;
    }
    if (o->fragment < 0) {
        int64_t t = rp->steps + 1;
        rc = train__step_refused(tr, r, t, tr->cfg.late == TRAIN_LATE_WAIT);
        if (rc) return rc;
        o->take = t;
        if (tr->dp) rp->grad_ready = 1;
        else rp->steps++;
        return 0;
    }
    if ((rc = train__check_fragment_id(tr, o->fragment)) ||
        (rc = contribute_refused(tr, r, o->fragment, o->take)))
        return rc;
    uint8_t *buf = malloc(tr->frag[o->fragment].wire);
    if (!buf) return train__fail(tr, MSG_ENOMEM, "train: out of memory");
    return train__payload_open(tr, r, o->fragment, o->take, buf);
}

int train_batch(train *tr, train_op *ops, int n) {
    if (n <= 0)
        return n ? train__fail(tr, MSG_EINVAL, "train: a batch of %d ops", n)
                 : 0;
    int done = 0, rc = 0;
    while (done < n && !(rc = batch_accept(tr, &ops[done]))) done++;
    /* the ops before a refused one are done; its message stays unless
     * their arithmetic fails */
    int arc = train__batch_arith(tr, ops, done);
    return arc ? arc : rc;
}

int train_inner_step(train *tr, int r) {
    train_op o = {r, -1, 0, 0, NULL};
    return train_batch(tr, &o, 1);
}

int train_contribute(train *tr, int r, int f, int64_t take, uint64_t *bytes) {
    train_op o = {r, f, take, 0, NULL};
    int rc = train_batch(tr, &o, 1);
    if (!rc && bytes) *bytes = tr->frag[f].wire;
    return rc;
}

int train_land(train *tr, int r) {
    int rc = train__check_replica(tr, r);
    if (rc) return rc;
    train__land_due(tr, r, tr->rep[r].steps + 1);
    return 0;
}

/* ---- reduce -------------------------------------------------------------- */

/* The step before which replica r merges the reduce of fragment fr's
 * sync in flight (negative: no merge). */
static int64_t merge_step_of(const train *tr, const fragment *fr,
                             const int64_t *merge_step, int r) {
    return merge_step ? merge_step[r] : train__own_merge_step(tr, fr->take, r);
}

int train_reduce(train *tr, int f, uint64_t members,
                 const int64_t *merge_step) {
    int rc = train__check_fragment_id(tr, f);
    if (!rc) rc = train__check_members(tr, f, members);
    if (rc) return rc;
    fragment *fr = &tr->frag[f];
    for (int r = 0; !tr->dp && members && r < tr->M; r++) {
        int64_t m = merge_step_of(tr, fr, merge_step, r);
        if (m >= 0 && tr->rep[r].steps >= m)
            return train__fail(tr, MSG_ESTATE,
                               "train: replica %d has computed "
                               "step %lld, past the merge step %lld of "
                               "fragment %d's sync",
                               r, (long long)tr->rep[r].steps, (long long)m, f);
    }
    if (!members) {
        train__close_sync(tr, fr);
        return 0;
    }
    int64_t m[TRAIN_MAX_REPLICAS];
    for (int r = 0; r < tr->M; r++) m[r] = merge_step_of(tr, fr, merge_step, r);
    train__reduce_sync(tr, f, members);
    for (int r = 0; !tr->dp && tr->sp.overlap == SCHED_INNER && r < tr->M;
         r++) {
        int64_t *d = train__due_of(tr, r, f);
        if (m[r] >= 0 && (*d < 0 || m[r] < *d)) *d = m[r];
    }
    return 0;
}

int64_t train_sync_take(const train *tr, int f) {
    return f >= 0 && f < tr->P ? tr->frag[f].take : -1;
}

uint64_t train_sync_contributors(const train *tr, int f) {
    return f >= 0 && f < tr->P ? tr->frag[f].contrib : 0;
}

/* ---- healing and snapshots ----------------------------------------------- */

/* What a snapshot keeps of a replica. */
typedef struct {
    float *p, *g; /* one block; g: DP only (a gradient may await
                          its reduce) */
    optim_state *opt;
    data_stream *data;  /* NULL with DATA_NONE */
    data_stream **more; /* a site's other G - 1 streams (NULL: none) */
    int64_t steps;
    int grad_ready;
    float loss;
} replica_snap;

struct train_snapshot {
    const train *owner;
    int M, G;
    int taken;          /* holds a state */
    replica_snap *rep;  /* [M] */
    float *outer, *mom; /* one block, as the trainer's (NULL where those
                           are) */
};

int train_rejoin(train *tr, int r, int src, int64_t steps) {
    int rc = train__check_replica(tr, r);
    if (rc) return rc;
    if (tr->dp)
        return train__fail(tr, MSG_EINVAL,
                           "train: dp: no outer parameters to "
                           "rejoin from");
    if (src >= tr->M || steps < 0)
        return train__fail(tr, MSG_EINVAL,
                           "train: rejoin source %d, steps "
                           "%lld (expected < %d, >= 0)",
                           src, (long long)steps, tr->M);
    replica *rp = &tr->rep[r];
    if (src >= 0 && src != r && optim_copy(rp->opt, tr->rep[src].opt))
        return train__fail(tr, MSG_EINVAL, "train: inner optimizers differ");
    if (tr->eager && src >= 0 && src != r) { /* src's outer copy */
        memcpy(train__outer_of(tr, r), train__outer_of(tr, src),
               tr->N * sizeof *tr->outer);
        if (tr->mom)
            memcpy(train__mom_of(tr, r), train__mom_of(tr, src),
                   tr->N * sizeof *tr->mom);
    }
    if (!tr->sparta)
        memcpy(rp->p, train__outer_of(tr, r), tr->N * sizeof *rp->p);
    else if (src >= 0 && src != r) /* no outer parameters: src's */
        memcpy(rp->p, tr->rep[src].p, tr->N * sizeof *rp->p);
    rp->steps = steps;
    for (int f = 0; f < tr->P; f++) *train__due_of(tr, r, f) = -1;
    return 0;
}

int train_withdraw(train *tr, int r) {
    int rc = train__check_replica(tr, r);
    if (rc) return rc;
    for (int f = 0; f < tr->P; f++)
        if (tr->frag[f].take >= 0) train__drop_payload(&tr->frag[f], r);
    return 0;
}

train_snapshot *train_snapshot_new(train *tr) {
    train_snapshot *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->owner = tr;
    s->M = tr->M;
    s->G = tr->G;
    s->rep = calloc((size_t)tr->M, sizeof *s->rep);
    int bad = !s->rep;
    const size_t N = tr->N;
    for (int r = 0; !bad && r < tr->M; r++) {
        replica_snap *q = &s->rep[r];
        char e[200];
        q->p = malloc((size_t)(1 + tr->dp) * N * sizeof *q->p);
        q->g = q->p && tr->dp ? q->p + N : NULL;
        q->opt = train__inner_optimizer(tr, e, sizeof e);
        q->data = tr->data ? data_stream_new(tr->data, r * tr->G) : NULL;
        bad = !q->p || !q->opt || (tr->data && !q->data);
        if (!bad && tr->data && tr->G > 1)
            bad = !(q->more = calloc((size_t)tr->G - 1, sizeof *q->more));
        for (int k = 1; !bad && q->more && k < tr->G; k++)
            bad = !(q->more[k - 1] = data_stream_new(tr->data, r * tr->G + k));
    }
    if (!bad && tr->outer) {
        size_t n = tr->nouter + (tr->ref ? N : 0);
        s->outer = malloc((size_t)(1 + !!tr->mom) * n * sizeof *s->outer);
        s->mom = s->outer && tr->mom ? s->outer + n : NULL;
        bad = !s->outer;
    }
    if (bad) {
        train_snapshot_free(s);
        return NULL;
    }
    return s;
}

void train_snapshot_free(train_snapshot *s) {
    if (!s) return;
    for (int r = 0; s->rep && r < s->M; r++) {
        free(s->rep[r].p);
        optim_free(s->rep[r].opt);
        data_stream_free(s->rep[r].data);
        for (int k = 0; s->rep[r].more && k < s->G - 1; k++)
            data_stream_free(s->rep[r].more[k]);
        free(s->rep[r].more);
    }
    free(s->rep);
    free(s->outer);
    free(s);
}

/* n floats from the live buffer to the kept one, or back (restore). */
static void transfer(int restore, float *live, float *kept, size_t n) {
    if (!live) return;
    if (restore) memcpy(live, kept, n * sizeof *live);
    else memcpy(kept, live, n * sizeof *live);
}

/* Copies the state a snapshot keeps into s, or back. */
static void snapshot_transfer(train *tr, train_snapshot *s, int restore) {
    for (int r = 0; r < tr->M; r++) {
        replica *rp = &tr->rep[r];
        replica_snap *q = &s->rep[r];
        transfer(restore, rp->p, q->p, tr->N);
        transfer(restore, q->g ? rp->g : NULL, q->g, tr->N);
        optim_copy(restore ? rp->opt : q->opt, restore ? q->opt : rp->opt);
        if (q->data)
            data_stream_copy(restore ? rp->data : q->data,
                             restore ? q->data : rp->data);
        for (int k = 0; q->more && k < tr->G - 1; k++)
            data_stream_copy(restore ? rp->more[k] : q->more[k],
                             restore ? q->more[k] : rp->more[k]);
        if (restore) {
            rp->steps = q->steps;
            rp->grad_ready = q->grad_ready;
            rp->loss = q->loss;
        } else {
            q->steps = rp->steps;
            q->grad_ready = rp->grad_ready;
            q->loss = rp->loss;
        }
    }
    transfer(restore, tr->outer, s->outer, tr->nouter);
    transfer(restore, tr->mom, s->mom, tr->nouter);
    transfer(restore, tr->ref, s->outer + tr->nouter, tr->N);
}

static int check_snapshot(train *tr, const train_snapshot *s) {
    if (!s || s->owner != tr)
        return train__fail(tr, MSG_EINVAL,
                           "train: a snapshot of another "
                           "trainer");
    return 0;
}

int train_snapshot_take(train *tr, train_snapshot *s) {
    int rc = check_snapshot(tr, s);
    if (rc) return rc;
    snapshot_transfer(tr, s, 0);
    s->taken = 1;
    return 0;
}

int train_snapshot_restore(train *tr, train_snapshot *s) {
    int rc = check_snapshot(tr, s);
    if (rc) return rc;
    if (!s->taken)
        return train__fail(tr, MSG_ESTATE,
                           "train: restore of a snapshot never "
                           "taken");
    snapshot_transfer(tr, s, 1);
    for (int f = 0; f < tr->P; f++) train__close_sync(tr, &tr->frag[f]);
    for (int i = 0; i < tr->M * tr->P; i++) tr->due[i] = -1;
    return 0;
}
