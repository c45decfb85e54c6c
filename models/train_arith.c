/*
 * train_arith.c -- the arithmetic of the trainer (train_int.h): the
 * pool's jobs, the checks of a call's arguments, merges, inner steps,
 * the encoding of payloads, a batch's arithmetic and the reduce of a
 * sync (average, outer step, DP update).  Every number a method computes
 * is computed here; the calls that drive it are train_calls.c and
 * train_lockstep.c.
 */
#include "models/train_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the worker pool (sim/base/pool.h) ----------------------------------- */

typedef struct {
    train__job_fn fn;
    void *ctx;
} job_batch;

static int run_job(void *ctx, int64_t i, char *err, size_t errlen) {
    (void)err, (void)errlen;
    const job_batch *b = ctx;
    b->fn(b->ctx, (int)i);
    return 0;
}

void train__run_jobs(pool *p, int njobs, train__job_fn fn, void *ctx) {
    if (pool_threads(p) == 1 || njobs <= 1) {
        for (int j = 0; j < njobs; j++) fn(ctx, j);
        return;
    }
    job_batch b = {fn, ctx};
    pool_run(p, njobs, run_job, &b, NULL, 0);
}

int train__jobs_failed(train *tr) {
    for (int r = 0; r < tr->M; r++)
        if (tr->rep[r].rc)
            return train__fail(tr, tr->rep[r].rc, "%s", tr->rep[r].err);
    return 0;
}

/* ---- checks -------------------------------------------------------------- */

int train__check_replica(train *tr, int r) {
    if (r < 0 || r >= tr->M)
        return train__fail(tr, MSG_EINVAL, "train: replica %d (expected 0..%d)",
                           r, tr->M - 1);
    return 0;
}

int train__check_fragment_id(train *tr, int f) {
    if (f < 0 || f >= tr->P)
        return train__fail(tr, MSG_EINVAL,
                           "train: fragment %d (expected "
                           "0..%d)",
                           f, tr->P - 1);
    return 0;
}

int train__check_fragment(train *tr, int f, uint64_t mask) {
    int rc = train__check_fragment_id(tr, f);
    if (rc) return rc;
    uint64_t all = tr->M == 64 ? ~0ull : (1ull << tr->M) - 1;
    if (mask == 0 || (mask & ~all))
        return train__fail(tr, MSG_EINVAL,
                           "train: participants 0x%llx "
                           "(expected a non-empty subset of 0x%llx)",
                           (unsigned long long)mask, (unsigned long long)all);
    return 0;
}

int train__check_members(train *tr, int f, uint64_t members) {
    const fragment *fr = &tr->frag[f];
    if (fr->take < 0)
        return train__fail(tr, MSG_ESTATE,
                           "train: fragment %d has no sync in "
                           "flight",
                           f);
    if (members & ~fr->contrib)
        return train__fail(tr, MSG_EINVAL,
                           "train: participants 0x%llx were "
                           "not all prepared (0x%llx)",
                           (unsigned long long)members,
                           (unsigned long long)fr->contrib);
    return 0;
}

int train__step_refused(train *tr, int r, int64_t next, int wait) {
    for (int f = 0; f < tr->P; f++) {
        const fragment *fr = &tr->frag[f];
        if (fr->take < 0) continue;
        if (tr->dp && (fr->contrib >> r & 1))
            return train__fail(tr, MSG_ESTATE,
                               "train: dp: replica %d would "
                               "compute a gradient while its gradient of step "
                               "%lld is in flight",
                               r, (long long)fr->take);
        if (!tr->dp && wait && train__own_merge_step(tr, fr->take, r) <= next)
            return train__fail(tr, MSG_ESTATE,
                               "train: replica %d would "
                               "compute step %lld before fragment %d's sync "
                               "taken after step %lld is reduced",
                               r, (long long)next, f, (long long)fr->take);
    }
    return 0;
}

/* ---- merges -------------------------------------------------------------- */

/* theta = alpha * local + (1 - alpha) * outer on n values. */
static void merge(double alpha, float *local, const float *outer, size_t n) {
    if (alpha == 1.0) return;
    if (alpha == 0.0) {
        memcpy(local, outer, n * sizeof *local);
        return;
    }
    const float a = (float)alpha, b = (float)(1.0 - alpha);
    for (size_t k = 0; k < n; k++) local[k] = a * local[k] + b * outer[k];
}

void train__land_fragment(train *tr, int r, int f) {
    const fragment *fr = &tr->frag[f];
    if (tr->sparta) train__sparta_land(tr, r, f);
    for (int i = 0; !tr->sparta && i < fr->ntens; i++) {
        const tensor_info *t = &tr->tens[fr->tens[i]];
        merge(tr->sp.alpha, tr->rep[r].p + t->off,
              train__outer_of(tr, r) + t->off, t->n);
    }
    *train__due_of(tr, r, f) = -1;
}

void train__land_due(train *tr, int r, int64_t t) {
    for (int f = 0; f < tr->P; f++) {
        int64_t d = *train__due_of(tr, r, f);
        if (d >= 0 && d <= t) train__land_fragment(tr, r, f);
    }
}

/* ---- inner steps --------------------------------------------------------- */

int train__turn_fragment(const train *tr, int64_t t) {
    for (int64_t s = t; s < t + tr->sp.H; s++) {
        int r = sched_take_phase(&tr->sp, s, INT64_MAX);
        for (int q = 0; r && q < tr->P; q++) {
            int f = sched_fragment_at(&tr->sp, q);
            if (sched_offset(&tr->sp, f) == r) return f;
        }
    }
    return 0; /* unreachable: every fragment is taken once per H steps */
}

/* Formats replica rp's message of a failed job and returns code. */
static int replica_fail(replica *rp, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rp->err, sizeof rp->err, fmt, ap);
    va_end(ap);
    return code;
}

/* One gradient of replica k of site r (k 0 without sites) from stream st
 * into rp->g, its loss into *loss.  Without sites the messages name the
 * replica and its gradient count, with them the site, the replica and
 * the step. */
static int one_grad(train *tr, int r, int k, data_stream *st, float *loss) {
    replica *rp = &tr->rep[r];
    char who[48];
    if (tr->G > 1) snprintf(who, sizeof who, "site %d replica %d", r, k);
    else snprintf(who, sizeof who, "replica %d", r);
    int rc = tr->data
                 ? data_next_batch(st, tr->cfg.batch, tr->cfg.seq, rp->x, rp->y)
                 : 0;
    if (rc)
        return replica_fail(rp, rc,
                            "train: %s: the data cannot fill "
                            "a batch of sequences of %d",
                            who, tr->cfg.seq + 1);
    *loss = tr->ops->grad(rp->model, rp->x, rp->y);
    rp->ngrads++;
    if (!isfinite(*loss))
        return replica_fail(rp, MSG_ENUM, "train: %s step %lld: loss %g", who,
                            (long long)(tr->G > 1 ? rp->steps + 1 : rp->ngrads),
                            *loss);
    return 0;
}

/* Site r's G gradients, one after the other in replica order on its one
 * parameter copy, each from its own shard, averaged in FP32 as DP
 * averages its replicas' (the first copied, the others added in order,
 * then divided by G) into rp->g; rp->loss the mean of their losses. */
static int site_grad(train *tr, int r) {
    replica *rp = &tr->rep[r];
    const size_t N = tr->N;
    double sum = 0;
    for (int k = 0; k < tr->G; k++) {
        int rc =
            one_grad(tr, r, k, k ? rp->more[k - 1] : rp->data, &rp->losses[k]);
        if (rc) return rc;
        sum += rp->losses[k];
        if (k == 0) memcpy(rp->gsum, rp->g, N * sizeof *rp->g);
        else
            for (size_t i = 0; i < N; i++) rp->gsum[i] += rp->g[i];
    }
    const float c = (float)tr->G;
    for (size_t i = 0; i < N; i++) rp->g[i] = rp->gsum[i] / c;
    rp->loss = (float)(sum / tr->G);
    return 0;
}

int train__replica_step(train *tr, int r, int64_t t) {
    replica *rp = &tr->rep[r];
    int rc =
        tr->G > 1 ? site_grad(tr, r) : one_grad(tr, r, 0, rp->data, &rp->loss);
    if (rc) return rc;
    if (tr->dp) {
        rp->grad_ready = 1;
        return 0;
    }
    const int *sel = NULL;
    int nsel = 0;
    if (tr->cfg.fedpart) {
        const fragment *fr = &tr->frag[train__turn_fragment(tr, t)];
        sel = fr->tens;
        nsel = fr->ntens;
    }
    optim_step(rp->opt, rp->p, rp->g, sel, nsel, t);
    return 0;
}

/* ---- encoding ------------------------------------------------------------ */

/* Eager overlap: the outer step replica r takes on its own copy of
 * fragment fr at a sync, its fresh pseudo-gradient delta_r in rp->g.  Our
 * reading of the eager-updates paper's Algorithm 3 ("locally computed
 * outer gradients as a proxy"): the step uses the average of the
 * fragment's previous sync, over its n members, with r's own term
 * replaced by its fresh one,
 *
 *     proxy_r = (delta_r + sum of the other members' decoded terms) / n,
 *
 * summed in replica order (a replica that was no member takes the plain
 * average); the first sync, with no previous average, takes delta_r
 * alone: a plain local step.  The proxy overwrites rp->g. */
static void eager_step(train *tr, int r, const fragment *fr) {
    float *d = tr->rep[r].g, *o = train__outer_of(tr, r);
    float *m = train__mom_of(tr, r);
    const int n = __builtin_popcountll(fr->prev);
    for (int i = 0; i < fr->ntens; i++) {
        const tensor_info *t = &tr->tens[fr->tens[i]];
        for (size_t k = t->off; fr->prev && k < t->off + t->n; k++) {
            float sum = 0;
            for (int q = 0; q < tr->M; q++)
                if (fr->prev >> q & 1)
                    sum += q == r ? d[k] : tr->own[(size_t)q * tr->N + k];
            d[k] = sum / (float)n;
        }
        optim_nesterov(tr->cfg.outer_lr, tr->cfg.outer_momentum, o + t->off,
                       m ? m + t->off : NULL, d + t->off, t->n);
    }
}

/* Encodes replica r's payload of fragment f's sync in flight, after
 * landing r's pending merge of f: 0, or MSG_EFAIL with r's message when
 * the codec wrote another size than the payload's. */
static int encode_payload(train *tr, int r, int f) {
    const fragment *fr = &tr->frag[f];
    replica *rp = &tr->rep[r];
    if (*train__due_of(tr, r, f) >= 0) train__land_fragment(tr, r, f);
    uint64_t written = tr->sparta ? train__sparta_encode(tr, r, fr) : 0;
    for (int i = 0; !tr->sparta && i < fr->ntens; i++) {
        const tensor_info *t = &tr->tens[fr->tens[i]];
        const float *src;
        if (tr->dp) {
            src = rp->g + t->off;
        } else if (tr->averaging) {
            src = rp->p + t->off;
        } else { /* the gradient buffer is free between steps */
            float *d = rp->g + t->off;
            const float *o =
                (tr->ref ? tr->ref : train__outer_of(tr, r)) + t->off;
            const float *p = rp->p + t->off;
            for (size_t k = 0; k < t->n; k++) d[k] = o[k] - p[k];
            src = d;
        }
        uint8_t *out = fr->buf[r] + fr->boff[i];
        written += tr->cmp ? cmp_encode(tr->cmp, r, fr->tens[i], src, out)
                           : codec_encode(tr->codec, src, t->n, t->row, out);
    }
    int rc = written == fr->wire ? 0
                                 : replica_fail(rp, MSG_EFAIL,
                                                "train: codec wrote an "
                                                "unexpected size");
    if (tr->dp || tr->sp.overlap == SCHED_INNER) return rc;
    /* a 1-outer-step overlap merges what the outer parameters are once
     * the previous sync is applied, before the next step */
    if (tr->eager) eager_step(tr, r, fr);
    *train__due_of(tr, r, f) = fr->take + 1;
    return rc;
}

int train__payload_open(train *tr, int r, int f, int64_t take, uint8_t *buf) {
    fragment *fr = &tr->frag[f];
    int rc = tr->sparta ? train__sparta_draw(tr, fr, take) : 0;
    if (rc) {
        free(buf);
        return rc;
    }
    fr->buf[r] = buf;
    fr->contrib |= 1ull << r;
    fr->take = take;
    tr->bytes += fr->wire;
    return 0;
}

/* ---- a batch's arithmetic ------------------------------------------------ */

typedef struct {
    train *tr;
    train_op *ops; /* accepted; a step's take is its step number */
    int n;
} batch_job;

/* Replica r's arithmetic of the batch (a pool job). */
static void batch_run(void *ctx, int r) {
    const batch_job *j = ctx;
    train *tr = j->tr;
    int rc = 0;
    for (int i = 0; i < j->n && !rc; i++) {
        train_op *o = &j->ops[i];
        if (o->replica != r) continue;
        if (o->fragment == TRAIN_OP_COPY) {
            train__land_due(tr, r, o->take);
            memcpy(o->copy, tr->rep[r].p, tr->N * sizeof *o->copy);
        } else if (o->fragment < 0) {
            train__land_due(tr, r, o->take);
            rc = train__replica_step(tr, r, o->take);
            o->loss = tr->rep[r].loss;
        } else {
            rc = encode_payload(tr, r, o->fragment);
        }
    }
    tr->rep[r].rc = rc;
}

int train__batch_arith(train *tr, train_op *ops, int n) {
    batch_job j = {tr, ops, n};
    int one = 1;
    for (int i = 1; i < n; i++) one &= ops[i].replica == ops[0].replica;
    if (n == 0) return 0;
    if (one) {
        for (int r = 0; r < tr->M; r++) tr->rep[r].rc = 0;
        batch_run(&j, ops[0].replica);
    } else {
        train__run_jobs(tr->pool, tr->M, batch_run, &j);
    }
    return train__jobs_failed(tr);
}

/* ---- reduce -------------------------------------------------------------- */

void train__drop_payload(fragment *fr, int r) {
    free(fr->buf[r]);
    fr->buf[r] = NULL;
    fr->contrib &= ~(1ull << r);
}

void train__close_sync(train *tr, fragment *fr) {
    for (int r = 0; r < tr->M; r++) train__drop_payload(fr, r);
    fr->take = -1;
}

/* acc = FP32 mean of the participants' decoded tensor i, summed in
 * replica order. */
static void average_tensor(train *tr, const fragment *fr, int i,
                           uint64_t mask) {
    const tensor_info *t = &tr->tens[fr->tens[i]];
    int count = 0;
    if (tr->cmp && cmp_reduces(tr->cmp)) { /* powersgd: one decoding */
        uint8_t *in[64];
        for (int r = 0; r < tr->M; r++)
            in[r] = fr->buf[r] ? fr->buf[r] + fr->boff[i] : NULL;
        cmp_reduce(tr->cmp, fr->tens[i], in, mask, tr->acc);
        for (int r = 0; tr->eager && r < tr->M; r++)
            if (mask >> r & 1)
                memcpy(tr->own + (size_t)r * tr->N + t->off, tr->acc,
                       t->n * sizeof *tr->acc);
        return;
    }
    for (int r = 0; r < tr->M; r++) {
        if (!(mask >> r & 1)) continue;
        const uint8_t *in = fr->buf[r] + fr->boff[i];
        /* eager: each term is kept, as its replica's own */
        float *dst = tr->eager    ? tr->own + (size_t)r * tr->N + t->off
                     : count == 0 ? tr->acc
                                  : tr->scratch;
        codec_decode(tr->codec, in, t->n, t->row, dst);
        if (count++ == 0) {
            if (dst != tr->acc) memcpy(tr->acc, dst, t->n * sizeof *dst);
            continue;
        }
        for (size_t k = 0; k < t->n; k++) tr->acc[k] += dst[k];
    }
    if (count > 1) {
        const float c = (float)count;
        for (size_t k = 0; k < t->n; k++) tr->acc[k] /= c;
    }
}

/* DP: one inner step of replica r with the averaged gradient (a pool
 * job). */
static void dp_update_job(void *ctx, int r) {
    train *tr = ctx;
    replica *rp = &tr->rep[r];
    optim_step(rp->opt, rp->p, rp->g, NULL, 0, rp->steps + 1);
    rp->steps++;
    rp->grad_ready = 0;
}

void train__reduce_sync(train *tr, int f, uint64_t members) {
    fragment *fr = &tr->frag[f];
    if (tr->sparta) {
        train__sparta_reduce(tr, f, members);
        return;
    }
    for (int r = 0; tr->ref && r < tr->M; r++) { /* outer overlap */
        int64_t d = *train__due_of(tr, r, f);
        if (d >= 0 && tr->rep[r].steps >= d - 1) train__land_fragment(tr, r, f);
    }
    for (int i = 0; i < fr->ntens; i++) {
        const tensor_info *t = &tr->tens[fr->tens[i]];
        average_tensor(tr, fr, i, members);
        size_t bytes = t->n * sizeof(float);
        if (tr->dp) {
            for (int r = 0; r < tr->M; r++)
                memcpy(tr->rep[r].g + t->off, tr->acc, bytes);
            continue;
        }
        if (tr->eager) continue; /* the replicas step at their next sync */
        float *o = tr->outer + t->off;
        if (tr->ref) memcpy(tr->ref + t->off, o, bytes);
        if (tr->averaging) memcpy(o, tr->acc, bytes);
        else
            optim_nesterov(tr->cfg.outer_lr, tr->cfg.outer_momentum, o,
                           tr->mom ? tr->mom + t->off : NULL, tr->acc, t->n);
    }
    if (tr->eager) fr->prev = members;
    train__close_sync(tr, fr);
    if (tr->dp) train__run_jobs(tr->pool, tr->M, dp_update_job, tr);
}
