/*
 * train_int.h -- the trainer's internals, shared by its files (train.c:
 * building, freeing, evaluation, inspection; train_arith.c: the
 * replicas' and the outer state's arithmetic; train_calls.c: the calls of
 * a coupled run; train_lockstep.c: prepare / apply and the lockstep
 * driver; train_models.c, the built-in models, needs none of it).  Not
 * for the rest of the program: use train.h.
 *
 * Layout of the work:
 *   - a tensor table built once from the model's units: every tensor's
 *     global offset, size, row length and decay flag; it is also the list
 *     of the inner optimizers' ranges;
 *   - fragments: their units (from the schedule and the unit mapping),
 *     their tensors, and each tensor's byte offset in the payload;
 *   - the worker pool (pool.h) runs one job per replica (inner steps,
 *     encoding, DP updates) or per model (evaluation); everything that
 *     combines replicas runs afterwards on the calling thread, in replica
 *     order, which is what makes results independent of the thread count;
 *   - one sync in flight per fragment (its take step, its contributors and
 *     their payloads) and, per replica and fragment, the step before which
 *     the last reduce of the fragment merges into the replica.
 * Every path to the numbers is one of: encode a replica's payload (in a
 * batch's arithmetic, train__batch_arith), reduce a sync
 * (train__reduce_sync: average, outer step or DP update), merge a
 * fragment into a replica (train__land_fragment).  The lockstep calls,
 * prepare / apply, are these with every merge landing at once.  Payloads
 * are allocated when encoded and freed when reduced (or dropped), so only
 * syncs in flight hold wire buffers.
 *
 * Errors: a function that fails writes the trainer's message (train__fail)
 * and returns a msg.h code; a pool job, which may not write the shared
 * message, writes its replica's and the caller picks the first in replica
 * order (train__jobs_failed).
 */
#ifndef DILOSIM_TRAIN_INT_H
#define DILOSIM_TRAIN_INT_H

#include <stddef.h>
#include <stdint.h>

#include "models/compress.h"
#include "models/train.h"
#include "sim/base/pool.h"

#define TRAIN__ERR_MAX 256 /* bytes of a message */

typedef struct {
    size_t off, n, row; /* global offset, values, row length (columns) */
    int decay, unit;
} tensor_info;

typedef struct {
    int nunits, ntens;
    int *units;       /* increasing */
    int *tens;        /* indices into the tensor table, in order */
    uint64_t *boff;   /* byte offset of each tensor in a payload */
    uint64_t wire;    /* payload bytes per replica */
    int64_t take;     /* take step of the sync in flight; -1: none */
    uint64_t contrib; /* replicas whose payload the sync holds */
    uint8_t **buf;    /* [M] payloads of the sync in flight */
    uint64_t prev;    /* eager: members of its last reduced sync (0:
                          none yet) */
    /* sparta (train_sparta.c): the slot's subset, per tensor i the
     * values koff[i] .. koff[i+1]-1 of the arrays below */
    uint64_t *koff;
    uint32_t *idx;  /* the indices of the sync in flight (or last drawn) */
    int64_t drawn;  /*   the take step they were drawn for; -1: none */
    uint32_t *midx; /* the indices of the last reduced sync */
    float *mean;    /*   and their average, merged into the replicas */
} fragment;

typedef struct {
    void *model;
    float *p, *g;
    optim_state *opt;
    data_stream *data;  /* its shard's (a site's: its first replica's) */
    data_stream **more; /* a site (G > 1): replicas 1..G-1's [G - 1] */
    float *gsum;        /* a site: the sum of its G gradients [N] */
    float *losses;      /* a site: each replica's last loss [G] */
    int32_t *x, *y;
    int64_t steps;  /* completed inner updates */
    int64_t ngrads; /* gradients computed */
    int grad_ready; /* DP: a gradient awaits its apply */
    float loss;
    int rc;                   /* of the last job run for this replica */
    char err[TRAIN__ERR_MAX]; /* its message (a job may not write tr->err) */
} replica;

struct train {
    train_config cfg;
    sched_spec sp;
    const train_model_ops *ops;
    const void *mcfg;
    codec_spec codec; /* the payload codec in use */
    cmp_state *cmp;   /* its state (powersgd, demo), else NULL */
    int M, U, P, dp, averaging;
    int G;          /* replicas per site (cfg.site_replicas) */
    int sparta;     /* method sparta: no outer state (train_sparta.c) */
    uint32_t *perm; /* sparta: [maxt] scratch of the subset draws */
    size_t N, maxt;
    int ntens;
    tensor_info *tens;
    int *unit_frag;
    fragment *frag;
    replica *rep;
    int *flist;         /* [P]: scratch of the lockstep driver */
    int64_t *due;       /* [M * P]: replica r merges fragment f's last
                           reduce just before its step due[r * P + f];
                           -1: no merge pending */
    float *outer, *mom; /* NULL for DP; mom NULL when mu == 0; eager: one
                           copy per replica, replica r's at r * N */
    size_t nouter;      /* floats of outer (N, or M * N) */
    int eager;          /* overlap eager */
    float *ref;         /* outer overlap: the outer values the syncs being
                           taken are measured against [N] */
    float *own;         /* eager: every replica's decoded term of each
                           fragment's last reduced sync [M * N] */
    float *acc, *scratch;
    data_source *data;
    int neval;
    int32_t *ex, *ey; /* eval set: neval batches */
    float *eloss;     /* per eval batch */
    pool *pool;
    void (*step_fn)(void *ctx, int64_t t, int64_t steps); /* or NULL */
    void *step_ctx;
    uint64_t bytes;
    char err[TRAIN__ERR_MAX];
};

/* ---- errors and the pool ------------------------------------------------- */

/* Formats the trainer's message (train_error) and returns code. */
int train__fail(train *tr, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The first failure of the replicas' last jobs (replica.rc), in replica
 * order, with its replica's message as the trainer's; 0 when none
 * failed. */
int train__jobs_failed(train *tr);

typedef void (*train__job_fn)(void *ctx, int job);

/* Runs fn(ctx, j) for j = 0..njobs-1 on the pool and the caller; returns
 * when all are done. */
void train__run_jobs(pool *p, int njobs, train__job_fn fn, void *ctx);

/* A fresh inner optimizer over the tensor table (the one every replica
 * has); NULL with a reason in e. */
optim_state *train__inner_optimizer(const train *tr, char *e, size_t elen);

/* ---- checks of a call's arguments ---------------------------------------- */

/* 0, or MSG_EINVAL with the message: r not a replica; f not a fragment;
 * f not a fragment or mask not a non-empty set of replicas. */
int train__check_replica(train *tr, int r);
int train__check_fragment_id(train *tr, int f);
int train__check_fragment(train *tr, int f, uint64_t mask);

/* MSG_ESTATE when fragment f has no sync in flight, MSG_EINVAL when
 * `members` are not all contributors of it; else 0. */
int train__check_members(train *tr, int f, uint64_t members);

/* MSG_ESTATE (with the message) when replica r may not compute its
 * step `next` now: DP, while r's gradient is in fragment 0's sync in
 * flight; with `wait`, while a sync in flight was taken tau + 1 or more
 * steps before that step.  Else 0. */
int train__step_refused(train *tr, int r, int64_t next, int wait);

/* ---- the state of replicas and fragments --------------------------------- */

/* Replica r's outer parameters and momentum (its own copy under eager
 * overlap, else the shared one; momentum NULL when mu == 0). */
static inline float *train__outer_of(const train *tr, int r) {
    return tr->outer + (tr->eager ? (size_t)r * tr->N : 0);
}

static inline float *train__mom_of(const train *tr, int r) {
    return tr->mom ? tr->mom + (tr->eager ? (size_t)r * tr->N : 0) : NULL;
}

/* The step before which replica r merges a sync taken after `take`, on the
 * schedule (its own tau). */
static inline int64_t train__own_merge_step(const train *tr, int64_t take,
                                            int r) {
    return take + sched_delay(&tr->sp) + tr->cfg.tau_extra[r] + 1;
}

/* Replica r's pending merge of fragment f: the step it lands before, or
 * -1. */
static inline int64_t *train__due_of(const train *tr, int r, int f) {
    return &tr->due[(size_t)r * (size_t)tr->P + (size_t)f];
}

/* Merges fragment f's current outer values into replica r (not DP) and
 * drops r's pending merge of f.  Touches replica r only: a pool job may
 * call it. */
void train__land_fragment(train *tr, int r, int f);

/* Lands replica r's pending merges due at or before its step t. */
void train__land_due(train *tr, int r, int64_t t);

/* The fragment whose pseudo-gradient is taken first at or after step t
 * (the first in sync order of those taken after one step): FedPart's
 * turn. */
int train__turn_fragment(const train *tr, int64_t t);

/* One inner step t of replica r (touches replica r only: a pool job may
 * run it): 0, or with r's message data_next_batch's code when the data
 * cannot fill a batch, MSG_ENUM on a non-finite loss. */
int train__replica_step(train *tr, int r, int64_t t);

/* Replica r's payload of fragment f's sync taken after `take`, in buf
 * (wire bytes, owned by the sync from now on): the sync opened when none
 * is in flight, r a contributor, its bytes counted (sparta: its subset
 * drawn).  The encoding comes later (train__batch_arith).  0, or
 * MSG_ENOMEM (with the message; buf freed) when the subset cannot be
 * drawn. */
int train__payload_open(train *tr, int r, int f, int64_t take, uint8_t *buf);

/* The arithmetic of n accepted ops (train_op; a step's take is its step
 * number, a contribution's payload is open): each replica's ops in
 * order, replicas in parallel.  Returns the first failure in replica
 * order (train__jobs_failed). */
int train__batch_arith(train *tr, train_op *ops, int n);

/* Ends fragment fr's sync in flight (if any): every payload freed. */
void train__close_sync(train *tr, fragment *fr);
/* Frees replica r's payload of fragment fr's sync and clears its bit. */
void train__drop_payload(fragment *fr, int r);

/* Completes fragment f's sync in flight with the payloads of `members`
 * (a non-empty subset of its contributors): their average, then the
 * outer step or the model-averaging copy (DP: one inner step of every
 * replica with the average).  The sync is closed; merges are the
 * caller's. */
void train__reduce_sync(train *tr, int f, uint64_t members);

/* ---- sparta (train_sparta.c) -------------------------------------------- */

/* Every fragment (slot) holds every tensor: the subset's offsets, index
 * and mean buffers, the payload layout (tensor i: k_i values as one row)
 * and its wire bytes; the draws' scratch.  0 or MSG_ENOMEM. */
int train__sparta_build(train *tr);

/* Frees what train__sparta_build gave fragment fr. */
void train__sparta_free(fragment *fr);

/* Draws fragment fr's subset of the sync taken after `take` into fr->idx
 * (nothing when it is drawn already).  0 or MSG_ENOMEM. */
int train__sparta_draw(train *tr, fragment *fr, int64_t take);

/* Encodes replica r's values at fr's drawn subset into its payload;
 * returns the bytes written.  Touches replica r and its payload only. */
uint64_t train__sparta_encode(train *tr, int r, const fragment *fr);

/* Completes fragment f's sync in flight: the pending merges of f's last
 * sync landed first, then the members' decoded values averaged in FP32,
 * in replica order, into fr->mean at fr->midx; the sync closed. */
void train__sparta_reduce(train *tr, int f, uint64_t members);

/* theta[S] = alpha * theta[S] + (1 - alpha) * mean of fragment f's last
 * reduced sync, into replica r (train__land_fragment's sparta half). */
void train__sparta_land(train *tr, int r, int f);

#endif
