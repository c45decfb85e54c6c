/*
 * train.c -- DP, DiLoCo and Streaming DiLoCo on M replicas (train.h).
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
 * Every path to the numbers is one of: encode a replica's payload
 * (encode_job), reduce a sync (reduce_sync: average, outer step or DP
 * update), merge a fragment into a replica (land_fragment).  The lockstep
 * calls, prepare / apply, are these with every merge landing at once.
 * Payloads are allocated when encoded and freed when reduced (or
 * dropped), so only syncs in flight hold wire buffers.
 */
#include "models/train.h"
#include "sim/base/pool.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the worker pool (models/pool.h) ------------------------------------- */

typedef void (*job_fn)(void *ctx, int job);

typedef struct {
    job_fn fn;
    void *ctx;
} job_batch;

static int run_job(void *ctx, int64_t i, char *err, size_t errlen) {
    (void)err, (void)errlen;
    const job_batch *b = ctx;
    b->fn(b->ctx, (int)i);
    return 0;
}

/* Runs fn(ctx, j) for j = 0..njobs-1 on the pool and the caller; returns
 * when all are done. */
static void run_jobs(pool *p, int njobs, job_fn fn, void *ctx) {
    if (pool_threads(p) == 1 || njobs <= 1) {
        for (int j = 0; j < njobs; j++) fn(ctx, j);
        return;
    }
    job_batch b = {fn, ctx};
    pool_run(p, njobs, run_job, &b, NULL, 0);
}

/* ---- the two built-in models --------------------------------------------- */

static int nn_check_fn(const void *cfg, int batch, int seq, char *err,
                       size_t errlen) {
    return nn_check(cfg, batch, seq, err, errlen);
}

static void *nn_create(const void *cfg, int batch, int seq, uint64_t seed,
                       char *err, size_t errlen) {
    if (nn_check(cfg, batch, seq, err, errlen)) return NULL;
    nn_model *m = nn_new(cfg, batch, seq);
    if (!m) {
        snprintf(err, errlen, "nn: out of memory");
        return NULL;
    }
    nn_init(m, seed);
    return m;
}

static void nn_destroy(void *m) { nn_free(m); }
static float *nn_params_fn(void *m) { return nn_params(m); }
static float *nn_grads_fn(void *m) { return nn_grads(m); }
static size_t nn_nparams_fn(const void *m) { return nn_num_params(m); }
static int nn_nunits_fn(const void *m) { return nn_num_units(m); }
static size_t nn_uoff_fn(const void *m, int u) { return nn_unit_offset(m, u); }
static int nn_tensors_fn(const void *m, int u, const nn_tensor **t) {
    return nn_unit_tensors(m, u, t);
}
static int nn_vocab_fn(const void *m) { return nn_get_config(m)->vocab; }

static float nn_grad_fn(void *m, const int32_t *x, const int32_t *y) {
    float loss = nn_forward(m, x, y);
    if (isnan(loss) || nn_backward(m) != NN_OK) return NAN;
    return loss;
}

static float nn_eval_fn(void *m, const float *params, const int32_t *x,
                        const int32_t *y) {
    return nn_eval_loss(m, params, x, y);
}

const train_model_ops train_nn_ops = {
    "nn", nn_create, nn_destroy, nn_params_fn, nn_grads_fn, nn_nparams_fn,
    nn_nunits_fn, nn_uoff_fn, nn_tensors_fn, nn_vocab_fn, nn_grad_fn,
    nn_eval_fn, nn_check_fn};

typedef struct {
    int units;
    float grad;
    float *p, *g;
} toy_model;

static const nn_tensor toy_tensor = {"p", 0, 1, 1, 0};

static void toy_destroy(void *m) {
    toy_model *t = m;
    if (!t) return;
    free(t->p);
    free(t->g);
    free(t);
}

static int toy_check(const void *cfg, int batch, int seq, char *err,
                     size_t errlen) {
    const train_toy_config *c = cfg;
    (void)batch, (void)seq;
    if (c->units >= 1 && isfinite(c->grad) && isfinite(c->init)) return 0;
    snprintf(err, errlen, "toy: units %d, grad %g, init %g (expected units "
             ">= 1, finite values)", c->units, c->grad, c->init);
    return -1;
}

static void *toy_create(const void *cfg, int batch, int seq, uint64_t seed,
                        char *err, size_t errlen) {
    const train_toy_config *c = cfg;
    (void)seed;
    if (toy_check(cfg, batch, seq, err, errlen)) return NULL;
    toy_model *t = calloc(1, sizeof *t);
    if (t) {
        t->units = c->units;
        t->grad = c->grad;
        t->p = malloc((size_t)c->units * sizeof *t->p);
        t->g = calloc((size_t)c->units, sizeof *t->g);
    }
    if (!t || !t->p || !t->g) {
        toy_destroy(t);
        snprintf(err, errlen, "toy: out of memory");
        return NULL;
    }
    for (int i = 0; i < c->units; i++) t->p[i] = c->init;
    return t;
}

static float *toy_params(void *m) { return ((toy_model *)m)->p; }
static float *toy_grads(void *m) { return ((toy_model *)m)->g; }
static size_t toy_nparams(const void *m) {
    return (size_t)((const toy_model *)m)->units;
}
static int toy_nunits(const void *m) { return ((const toy_model *)m)->units; }
static size_t toy_uoff(const void *m, int u) { (void)m; return (size_t)u; }
static int toy_tensors(const void *m, int u, const nn_tensor **t) {
    (void)m, (void)u;
    *t = &toy_tensor;
    return 1;
}
static int toy_vocab(const void *m) { (void)m; return 0; }

static float toy_eval(void *m, const float *params, const int32_t *x,
                      const int32_t *y) {
    const toy_model *t = m;
    (void)x, (void)y;
    double s = 0;
    for (int i = 0; i < t->units; i++) s += params[i];
    return (float)(t->grad * s);
}

static float toy_grad(void *m, const int32_t *x, const int32_t *y) {
    toy_model *t = m;
    for (int i = 0; i < t->units; i++) t->g[i] = t->grad;
    return toy_eval(m, t->p, x, y);
}

const train_model_ops train_toy_ops = {
    "toy", toy_create, toy_destroy, toy_params, toy_grads, toy_nparams,
    toy_nunits, toy_uoff, toy_tensors, toy_vocab, toy_grad, toy_eval,
    toy_check};

/* ---- the trainer --------------------------------------------------------- */

typedef struct {
    size_t off, n, row; /* global offset, values, row length (columns) */
    int decay, unit;
} tensor_info;

typedef struct {
    int nunits, ntens;
    int *units;        /* increasing */
    int *tens;         /* indices into the tensor table, in order */
    uint64_t *boff;    /* byte offset of each tensor in a payload */
    uint64_t wire;     /* payload bytes per replica */
    int64_t take;      /* take step of the sync in flight; -1: none */
    uint64_t contrib;  /* replicas whose payload the sync holds */
    uint8_t **buf;     /* [M] payloads of the sync in flight */
    uint64_t prev;     /* eager: members of its last reduced sync (0:
                          none yet) */
} fragment;

typedef struct {
    void *model;
    float *p, *g;
    optim_state *opt;
    data_stream *data;
    int32_t *x, *y;
    int64_t steps;    /* completed inner updates */
    int64_t ngrads;   /* gradients computed */
    int grad_ready;   /* DP: a gradient awaits its apply */
    float loss;
    int rc;           /* of the last job run for this replica */
} replica;

/* What a snapshot keeps of a replica. */
typedef struct {
    float *p, *g;      /* one block; g: DP only (a gradient may await
                          its reduce) */
    optim_state *opt;
    data_stream *data; /* NULL with DATA_NONE */
    int64_t steps;
    int grad_ready;
    float loss;
} replica_snap;

struct train_snapshot {
    const train *owner;
    int M;
    int taken;          /* holds a state */
    replica_snap *rep;  /* [M] */
    float *outer, *mom; /* one block, as the trainer's (NULL where those
                           are) */
};

struct train {
    train_config cfg;
    sched_spec sp;
    const train_model_ops *ops;
    const void *mcfg;
    codec_spec codec;   /* the payload codec in use */
    int M, U, P, dp, averaging;
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
    int32_t *ex, *ey;   /* eval set: neval batches */
    float *eloss;       /* per eval batch */
    pool *pool;
    void (*step_fn)(void *ctx, int64_t t, int64_t steps); /* or NULL */
    void *step_ctx;
    uint64_t bytes;
    char err[256];
};

static int fail(train *tr, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tr->err, sizeof tr->err, fmt, ap);
    va_end(ap);
    return code;
}

const char *train_error(const train *tr) { return tr->err; }

void train_config_default(train_config *c) {
    memset(c, 0, sizeof *c); /* the padding too: configs compare whole */
    *c = (train_config)TRAIN_CONFIG_DEFAULT;
}

/* ---- building ------------------------------------------------------------ */

static int check_config(train *tr) {
    const train_config *c = &tr->cfg;
    if (c->replicas < 1 || c->replicas > TRAIN_MAX_REPLICAS)
        return fail(tr, TRAIN_EINVAL, "train: replicas %d (expected 1..%d)",
                    c->replicas, TRAIN_MAX_REPLICAS);
    if (c->threads < 1)
        return fail(tr, TRAIN_EINVAL, "train: threads %d (expected >= 1)",
                    c->threads);
    if (c->steps < 1)
        return fail(tr, TRAIN_EINVAL, "train: steps %lld (expected >= 1)",
                    (long long)c->steps);
    if (c->batch < 1 || c->seq < 1)
        return fail(tr, TRAIN_EINVAL, "train: batch %d, seq %d (expected "
                    ">= 1)", c->batch, c->seq);
    if (c->map != TRAIN_MAP_JOIN && c->map != TRAIN_MAP_OWN)
        return fail(tr, TRAIN_EINVAL, "train: map %d (expected join or own)",
                    (int)c->map);
    if (c->fedpart != 0 && c->fedpart != 1)
        return fail(tr, TRAIN_EINVAL, "train: fedpart %d (expected 0 or 1)",
                    c->fedpart);
    if ((unsigned)c->codec.kind >= CODEC_COUNT ||
        (unsigned)c->dp_codec.kind >= CODEC_COUNT)
        return fail(tr, TRAIN_EINVAL, "train: unknown codec (expected one "
                    "of %s)", codec_names());
    if (!(c->outer_lr >= 0) || !isfinite(c->outer_lr))
        return fail(tr, TRAIN_EINVAL, "train: outer_lr %g (expected finite "
                    ">= 0)", c->outer_lr);
    if (!(c->outer_momentum >= 0 && c->outer_momentum < 1))
        return fail(tr, TRAIN_EINVAL, "train: outer_momentum %g (expected "
                    "[0, 1))", c->outer_momentum);
    if (c->late != TRAIN_LATE_WAIT && c->late != TRAIN_LATE_CONTINUE)
        return fail(tr, TRAIN_EINVAL, "train: late %d (expected wait or "
                    "continue)", (int)c->late);
    if (c->eval_interval < 0 || c->eval_batches < 1)
        return fail(tr, TRAIN_EINVAL, "train: eval_interval %lld, "
                    "eval_batches %d (expected >= 0, >= 1)",
                    (long long)c->eval_interval, c->eval_batches);
    return TRAIN_OK;
}

static int pick_model(train *tr) {
    const train_config *c = &tr->cfg;
    switch (c->model) {
    case TRAIN_MODEL_NN:
        tr->ops = &train_nn_ops;
        tr->mcfg = &tr->cfg.nn;
        return TRAIN_OK;
    case TRAIN_MODEL_TOY:
        tr->ops = &train_toy_ops;
        tr->mcfg = &tr->cfg.toy;
        return TRAIN_OK;
    case TRAIN_MODEL_CUSTOM: {
        const train_model_ops *o = c->custom_ops;
        if (!o || !o->create || !o->destroy || !o->params || !o->grads ||
            !o->num_params || !o->num_units || !o->unit_offset ||
            !o->unit_tensors || !o->vocab || !o->grad || !o->eval)
            return fail(tr, TRAIN_EINVAL, "train: custom model without "
                        "every operation");
        tr->ops = o;
        tr->mcfg = c->custom_cfg;
        return TRAIN_OK;
    }
    }
    return fail(tr, TRAIN_EINVAL, "train: model %d (expected nn, toy or "
                "custom)", (int)c->model);
}

/* The tensor table from replica 0's model; checks that the tensors tile
 * the parameter vector in order. */
static int build_tensors(train *tr) {
    void *m = tr->rep[0].model;
    tr->N = tr->ops->num_params(m);
    tr->U = tr->ops->num_units(m);
    if (tr->U < 1 || tr->N < 1)
        return fail(tr, TRAIN_EINVAL, "train: model has no parameters");
    int n = 0;
    for (int u = 0; u < tr->U; u++) {
        const nn_tensor *t;
        n += tr->ops->unit_tensors(m, u, &t);
    }
    tr->tens = calloc((size_t)n, sizeof *tr->tens);
    if (!tr->tens) return fail(tr, TRAIN_ENOMEM, "train: out of memory");
    size_t next = 0;
    for (int u = 0; u < tr->U; u++) {
        const nn_tensor *t;
        int k = tr->ops->unit_tensors(m, u, &t);
        size_t base = tr->ops->unit_offset(m, u);
        for (int i = 0; i < k; i++) {
            tensor_info *ti = &tr->tens[tr->ntens++];
            ti->off = base + t[i].offset;
            ti->n = (size_t)t[i].rows * (size_t)t[i].cols;
            ti->row = (size_t)t[i].cols;
            ti->decay = t[i].decay;
            ti->unit = u;
            if (ti->off != next || ti->n == 0)
                return fail(tr, TRAIN_EINVAL, "train: model tensors do not "
                            "tile the parameters (unit %d, %s)", u,
                            t[i].name);
            next += ti->n;
            if (ti->n > tr->maxt) tr->maxt = ti->n;
        }
    }
    if (next != tr->N)
        return fail(tr, TRAIN_EINVAL, "train: model tensors cover %zu of "
                    "%zu parameters", next, tr->N);
    return TRAIN_OK;
}

/* The schedule over units (own) or blocks (join), normalised. */
static int build_schedule(train *tr) {
    tr->sp = tr->cfg.sched;
    if (tr->cfg.map == TRAIN_MAP_JOIN) {
        if (tr->U < 3)
            return fail(tr, TRAIN_EINVAL, "train: map join needs an "
                        "embedding, a block and a head (model has %d units)",
                        tr->U);
        tr->sp.layers = tr->U - 2;
    } else {
        tr->sp.layers = tr->U;
    }
    char e[200];
    if (sched_normalize(&tr->sp, e, sizeof e))
        return fail(tr, TRAIN_EINVAL, "train: schedule: %s", e);
    tr->dp = tr->sp.method == SCHED_DP;
    tr->P = tr->sp.P;
    if (tr->sp.layout == SCHED_SLICED)
        return fail(tr, TRAIN_EINVAL, "train: layout sliced is timing only "
                    "(expected sequential or strided)");
    int cap = sched_tau_cap(&tr->sp);
    int taus = tr->sp.method == SCHED_STREAMING && tr->sp.overlap == SCHED_INNER;
    for (int r = 0; r < tr->cfg.replicas; r++) {
        int x = tr->cfg.tau_extra[r];
        if (x < 0 || (!taus && x) || tr->sp.tau + x >= cap)
            return fail(tr, TRAIN_EINVAL, "train: replica %d's tau %d + %d "
                        "(expected below %d, and no extra without streaming "
                        "and inner overlap)", r, tr->sp.tau, x, cap);
    }
    if (tr->dp && tr->cfg.fedpart)
        return fail(tr, TRAIN_EINVAL, "train: fedpart needs diloco or "
                    "streaming (not dp)");
    return TRAIN_OK;
}

static int unit_fragment(const train *tr, int u) {
    if (tr->cfg.map == TRAIN_MAP_OWN) return sched_layer_fragment(&tr->sp, u);
    int L = tr->U - 2;
    int block = u == 0 ? 0 : u == tr->U - 1 ? L - 1 : u - 1;
    return sched_layer_fragment(&tr->sp, block);
}

static int build_fragments(train *tr) {
    tr->codec = tr->dp ? tr->cfg.dp_codec : tr->cfg.codec;
    tr->unit_frag = calloc((size_t)tr->U, sizeof *tr->unit_frag);
    tr->frag = calloc((size_t)tr->P, sizeof *tr->frag);
    tr->due = malloc((size_t)tr->M * (size_t)tr->P * sizeof *tr->due);
    tr->flist = malloc((size_t)tr->P * sizeof *tr->flist);
    if (!tr->unit_frag || !tr->frag || !tr->due || !tr->flist)
        return fail(tr, TRAIN_ENOMEM, "train: out of memory");
    for (int i = 0; i < tr->M * tr->P; i++) tr->due[i] = -1;
    for (int u = 0; u < tr->U; u++) tr->unit_frag[u] = unit_fragment(tr, u);
    for (int f = 0; f < tr->P; f++) {
        fragment *fr = &tr->frag[f];
        fr->take = -1;
        fr->units = calloc((size_t)tr->U, sizeof *fr->units);
        fr->tens = calloc((size_t)tr->ntens, sizeof *fr->tens);
        fr->boff = calloc((size_t)tr->ntens, sizeof *fr->boff);
        fr->buf = calloc((size_t)tr->M, sizeof *fr->buf);
        if (!fr->units || !fr->tens || !fr->boff || !fr->buf)
            return fail(tr, TRAIN_ENOMEM, "train: out of memory");
        for (int u = 0; u < tr->U; u++)
            if (tr->unit_frag[u] == f) fr->units[fr->nunits++] = u;
        for (int k = 0; k < tr->ntens; k++) {
            const tensor_info *t = &tr->tens[k];
            if (tr->unit_frag[t->unit] != f) continue;
            fr->boff[fr->ntens] = fr->wire;
            fr->tens[fr->ntens++] = k;
            fr->wire += codec_wire_bytes(tr->codec, t->n, t->row);
        }
    }
    return TRAIN_OK;
}

/* The replicas' models.  A model whose configuration its `check`
 * accepted and that cannot be created is out of memory. */
static int build_replicas(train *tr) {
    const train_config *c = &tr->cfg;
    char e[200] = "";
    const train_model_ops *o = tr->ops;
    if (o->check && o->check(tr->mcfg, c->batch, c->seq, e, sizeof e))
        return fail(tr, TRAIN_EINVAL, "train: %s", e);
    tr->rep = calloc((size_t)tr->M, sizeof *tr->rep);
    if (!tr->rep) return fail(tr, TRAIN_ENOMEM, "train: out of memory");
    for (int r = 0; r < tr->M; r++) {
        replica *rp = &tr->rep[r];
        rp->loss = NAN;
        rp->model = o->create(tr->mcfg, c->batch, c->seq, c->seed, e,
                              sizeof e);
        if (!rp->model)
            return fail(tr, o->check ? TRAIN_ENOMEM : TRAIN_EINVAL,
                        "train: %s", e);
        rp->p = tr->ops->params(rp->model);
        rp->g = tr->ops->grads(rp->model);
    }
    return TRAIN_OK;
}

/* A fresh inner optimizer over the tensor table (the one every replica
 * has); NULL with a reason in e. */
static optim_state *inner_optimizer(const train *tr, char *e, size_t elen) {
    optim_config oc = tr->cfg.inner;
    if (oc.total == 0) oc.total = tr->cfg.steps;
    optim_range *rg = calloc((size_t)tr->ntens, sizeof *rg);
    if (!rg) {
        snprintf(e, elen, "optim: out of memory");
        return NULL;
    }
    for (int k = 0; k < tr->ntens; k++) {
        rg[k].offset = tr->tens[k].off;
        rg[k].len = tr->tens[k].n;
        rg[k].decay = tr->tens[k].decay;
    }
    optim_state *o = optim_new(&oc, rg, tr->ntens, e, elen);
    free(rg);
    return o;
}

/* The inner optimizers: a configuration optim_check accepts that cannot
 * be built is out of memory. */
static int build_optimizers(train *tr) {
    char e[200] = "";
    if (optim_check(&tr->cfg.inner, e, sizeof e))
        return fail(tr, TRAIN_EINVAL, "train: inner %s", e);
    for (int r = 0; r < tr->M; r++) {
        tr->rep[r].opt = inner_optimizer(tr, e, sizeof e);
        if (!tr->rep[r].opt)
            return fail(tr, TRAIN_ENOMEM, "train: inner %s", e);
    }
    return TRAIN_OK;
}

/* Data streams, batch buffers and the fixed eval set. */
static int build_data(train *tr) {
    const train_config *c = &tr->cfg;
    char e[200] = "";
    int mv = tr->ops->vocab(tr->rep[0].model);
    if (c->data.kind == DATA_NONE) {
        if (mv != 0)
            return fail(tr, TRAIN_EINVAL, "train: the model needs tokens "
                        "(data kind none)");
        tr->neval = 1;
        tr->eloss = calloc(1, sizeof *tr->eloss);
        return tr->eloss ? TRAIN_OK
                         : fail(tr, TRAIN_ENOMEM, "train: out of memory");
    }
    int drc = data_source_new(&c->data, tr->M, &tr->data, e, sizeof e);
    if (drc)
        return fail(tr, drc == DATA_ENOMEM ? TRAIN_ENOMEM : TRAIN_EINVAL,
                    "train: %s", e);
    if (mv != 0 && data_vocab(tr->data) > mv)
        return fail(tr, TRAIN_EINVAL, "train: data vocab %d exceeds the "
                    "model's %d", data_vocab(tr->data), mv);
    size_t bt = (size_t)c->batch * (size_t)c->seq;
    for (int r = 0; r < tr->M; r++) {
        replica *rp = &tr->rep[r];
        rp->data = data_stream_new(tr->data, r);
        rp->x = malloc(bt * sizeof *rp->x);
        rp->y = malloc(bt * sizeof *rp->y);
        if (!rp->data || !rp->x || !rp->y)
            return fail(tr, TRAIN_ENOMEM, "train: out of memory");
        /* a probe stream (the replica's own is left untouched) finds text
         * shards too short for one sequence now rather than mid-run */
        data_stream *probe = data_stream_new(tr->data, r);
        int bad = !probe || data_next_batch(probe, c->batch, c->seq, rp->x,
                                            rp->y);
        data_stream_free(probe);
        if (bad)
            return fail(tr, TRAIN_EINVAL, "train: replica %d's data shard "
                        "cannot fill sequences of %d tokens", r, c->seq + 1);
    }
    tr->neval = c->eval_batches;
    tr->ex = malloc((size_t)tr->neval * bt * sizeof *tr->ex);
    tr->ey = malloc((size_t)tr->neval * bt * sizeof *tr->ey);
    tr->eloss = calloc((size_t)tr->neval, sizeof *tr->eloss);
    data_stream *es = data_stream_new(tr->data, -1);
    int rc = !tr->ex || !tr->ey || !tr->eloss || !es ? TRAIN_ENOMEM : 0;
    for (int i = 0; i < tr->neval && !rc; i++)
        if (data_next_batch(es, c->batch, c->seq, tr->ex + i * bt,
                            tr->ey + i * bt))
            rc = TRAIN_EINVAL;
    data_stream_free(es);
    if (rc == TRAIN_ENOMEM) return fail(tr, rc, "train: out of memory");
    if (rc)
        return fail(tr, rc, "train: the eval data has too few tokens for "
                    "sequences of %d", c->seq + 1);
    return TRAIN_OK;
}

/* Outer parameters and momentum (not DP), and the reduction buffers. */
static int build_outer(train *tr) {
    tr->acc = malloc(tr->maxt * sizeof *tr->acc);
    tr->scratch = malloc(tr->maxt * sizeof *tr->scratch);
    if (!tr->acc || !tr->scratch)
        return fail(tr, TRAIN_ENOMEM, "train: out of memory");
    if (tr->dp) return TRAIN_OK;
    const size_t N = tr->N;
    tr->eager = tr->sp.overlap == SCHED_EAGER;
    tr->nouter = tr->eager ? (size_t)tr->M * N : N;
    tr->outer = malloc(tr->nouter * sizeof *tr->outer);
    if (tr->cfg.outer_momentum > 0)
        tr->mom = calloc(tr->nouter, sizeof *tr->mom);
    if (tr->sp.overlap == SCHED_OUTER) tr->ref = malloc(N * sizeof *tr->ref);
    if (tr->eager) tr->own = calloc((size_t)tr->M * N, sizeof *tr->own);
    if (!tr->outer || (tr->cfg.outer_momentum > 0 && !tr->mom) ||
        (tr->sp.overlap == SCHED_OUTER && !tr->ref) ||
        (tr->eager && !tr->own))
        return fail(tr, TRAIN_ENOMEM, "train: out of memory");
    for (size_t at = 0; at < tr->nouter; at += N)
        memcpy(tr->outer + at, tr->rep[0].p, N * sizeof *tr->outer);
    if (tr->ref) memcpy(tr->ref, tr->outer, N * sizeof *tr->ref);
    tr->averaging = tr->cfg.outer_lr == 1.0 && tr->cfg.outer_momentum == 0 &&
                    tr->codec.kind == CODEC_FP32 &&
                    tr->sp.overlap == SCHED_INNER;
    return TRAIN_OK;
}

int train_new(const train_config *c, train **out, char *err, size_t errlen) {
    *out = NULL;
    train *tr = calloc(1, sizeof *tr);
    if (!tr) {
        snprintf(err, errlen, "train: out of memory");
        return TRAIN_ENOMEM;
    }
    tr->cfg = *c;
    tr->M = c->replicas;
    int rc = check_config(tr);
    if (!rc) rc = pick_model(tr);
    if (!rc) rc = build_replicas(tr);
    if (!rc) rc = build_tensors(tr);
    if (!rc) rc = build_schedule(tr);
    if (!rc) rc = build_fragments(tr);
    if (!rc) rc = build_optimizers(tr);
    if (!rc) rc = build_data(tr);
    if (!rc) rc = build_outer(tr);
    if (!rc) {
        int th = c->threads < tr->M ? c->threads : tr->M;
        tr->pool = pool_new(th);
        if (!tr->pool) rc = fail(tr, TRAIN_ENOMEM, "train: cannot start "
                                 "threads");
    }
    if (rc) {
        snprintf(err, errlen, "%s", tr->err);
        train_free(tr);
        return rc;
    }
    tr->err[0] = 0;
    *out = tr;
    return TRAIN_OK;
}

/* Frees replica r's payload of fragment fr's sync and clears its bit. */
static void drop_payload(fragment *fr, int r) {
    free(fr->buf[r]);
    fr->buf[r] = NULL;
    fr->contrib &= ~(1ull << r);
}

/* Ends fragment fr's sync in flight (if any): every payload freed. */
static void close_sync(train *tr, fragment *fr) {
    for (int r = 0; r < tr->M; r++) drop_payload(fr, r);
    fr->take = -1;
}

void train_snapshot_free(train_snapshot *s) {
    if (!s) return;
    for (int r = 0; s->rep && r < s->M; r++) {
        free(s->rep[r].p);
        optim_free(s->rep[r].opt);
        data_stream_free(s->rep[r].data);
    }
    free(s->rep);
    free(s->outer);
    free(s);
}

void train_free(train *tr) {
    if (!tr) return;
    pool_free(tr->pool);
    for (int f = 0; tr->frag && f < tr->P; f++) {
        fragment *fr = &tr->frag[f];
        if (fr->buf) close_sync(tr, fr);
        free(fr->units);
        free(fr->tens);
        free(fr->boff);
        free(fr->buf);
    }
    free(tr->frag);
    for (int r = 0; tr->rep && r < tr->M; r++) {
        replica *rp = &tr->rep[r];
        if (rp->model) tr->ops->destroy(rp->model);
        optim_free(rp->opt);
        data_stream_free(rp->data);
        free(rp->x);
        free(rp->y);
    }
    free(tr->rep);
    data_source_free(tr->data);
    free(tr->tens);
    free(tr->unit_frag);
    free(tr->due);
    free(tr->flist);
    free(tr->outer);
    free(tr->mom);
    free(tr->ref);
    free(tr->own);
    free(tr->acc);
    free(tr->scratch);
    free(tr->ex);
    free(tr->ey);
    free(tr->eloss);
    free(tr);
}

/* ---- checks -------------------------------------------------------------- */

static int check_replica(train *tr, int r) {
    if (r < 0 || r >= tr->M)
        return fail(tr, TRAIN_EINVAL, "train: replica %d (expected 0..%d)",
                    r, tr->M - 1);
    return TRAIN_OK;
}

static int check_fragment_id(train *tr, int f) {
    if (f < 0 || f >= tr->P)
        return fail(tr, TRAIN_EINVAL, "train: fragment %d (expected 0..%d)",
                    f, tr->P - 1);
    return TRAIN_OK;
}

static int check_fragment(train *tr, int f, uint64_t mask) {
    int rc = check_fragment_id(tr, f);
    if (rc) return rc;
    uint64_t all = tr->M == 64 ? ~0ull : (1ull << tr->M) - 1;
    if (mask == 0 || (mask & ~all))
        return fail(tr, TRAIN_EINVAL, "train: participants 0x%llx (expected "
                    "a non-empty subset of 0x%llx)", (unsigned long long)mask,
                    (unsigned long long)all);
    return TRAIN_OK;
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

/* Replica r's outer parameters and momentum (its own copy under eager
 * overlap, else the shared one; momentum NULL when mu == 0). */
static float *outer_of(const train *tr, int r) {
    return tr->outer + (tr->eager ? (size_t)r * tr->N : 0);
}

static float *mom_of(const train *tr, int r) {
    return tr->mom ? tr->mom + (tr->eager ? (size_t)r * tr->N : 0) : NULL;
}

/* The step before which replica r merges a sync taken after `take`, on the
 * schedule (its own tau). */
static int64_t own_merge_step(const train *tr, int64_t take, int r) {
    return take + sched_delay(&tr->sp) + tr->cfg.tau_extra[r] + 1;
}

static int64_t *due_of(const train *tr, int r, int f) {
    return &tr->due[(size_t)r * (size_t)tr->P + (size_t)f];
}

/* Merges fragment f's current outer values into replica r (not DP) and
 * drops r's pending merge of f.  Touches replica r only: a pool job may
 * call it. */
static void land_fragment(train *tr, int r, int f) {
    const fragment *fr = &tr->frag[f];
    for (int i = 0; i < fr->ntens; i++) {
        const tensor_info *t = &tr->tens[fr->tens[i]];
        merge(tr->sp.alpha, tr->rep[r].p + t->off, outer_of(tr, r) + t->off,
              t->n);
    }
    *due_of(tr, r, f) = -1;
}

/* Lands replica r's pending merges due at or before its step t. */
static void land_due(train *tr, int r, int64_t t) {
    for (int f = 0; f < tr->P; f++) {
        int64_t d = *due_of(tr, r, f);
        if (d >= 0 && d <= t) land_fragment(tr, r, f);
    }
}

/* ---- inner steps --------------------------------------------------------- */

/* The fragment whose pseudo-gradient is taken first at or after step t
 * (the first in sync order of those taken after one step). */
static int turn_fragment(const train *tr, int64_t t) {
    for (int64_t s = t; s < t + tr->sp.H; s++) {
        int r = sched_take_phase(&tr->sp, s, INT64_MAX);
        for (int q = 0; r && q < tr->P; q++) {
            int f = sched_fragment_at(&tr->sp, q);
            if (sched_offset(&tr->sp, f) == r) return f;
        }
    }
    return 0; /* unreachable: every fragment is taken once per H steps */
}

/* One inner step of replica r: TRAIN_OK, TRAIN_EINVAL when the data
 * cannot fill a batch, TRAIN_ENUM on a non-finite loss. */
static int inner_step(train *tr, int r, int64_t t) {
    replica *rp = &tr->rep[r];
    if (tr->data && data_next_batch(rp->data, tr->cfg.batch, tr->cfg.seq,
                                    rp->x, rp->y))
        return TRAIN_EINVAL;
    rp->loss = tr->ops->grad(rp->model, rp->x, rp->y);
    rp->ngrads++;
    if (!isfinite(rp->loss)) return TRAIN_ENUM;
    if (tr->dp) {
        rp->grad_ready = 1;
        return TRAIN_OK;
    }
    const int *sel = NULL;
    int nsel = 0;
    if (tr->cfg.fedpart) {
        const fragment *fr = &tr->frag[turn_fragment(tr, t)];
        sel = fr->tens;
        nsel = fr->ntens;
    }
    optim_step(rp->opt, rp->p, rp->g, sel, nsel, t);
    return TRAIN_OK;
}

/* TRAIN_ESTATE (with the message) when replica r may not compute its
 * step `next` now: DP, while r's gradient is in fragment 0's sync in
 * flight; with `wait`, while a sync in flight was taken tau + 1 or more
 * steps before that step. */
static int step_refused(train *tr, int r, int64_t next, int wait) {
    for (int f = 0; f < tr->P; f++) {
        const fragment *fr = &tr->frag[f];
        if (fr->take < 0) continue;
        if (tr->dp && (fr->contrib >> r & 1))
            return fail(tr, TRAIN_ESTATE, "train: dp: replica %d would "
                        "compute a gradient while its gradient of step %lld "
                        "is in flight", r, (long long)fr->take);
        if (!tr->dp && wait && own_merge_step(tr, fr->take, r) <= next)
            return fail(tr, TRAIN_ESTATE, "train: replica %d would compute "
                        "step %lld before fragment %d's sync taken after "
                        "step %lld is reduced", r, (long long)next, f,
                        (long long)fr->take);
    }
    return TRAIN_OK;
}

/* The message for inner_step's code rc. */
static int step_failed(train *tr, int r, int rc) {
    if (rc == TRAIN_ENUM)
        return fail(tr, rc, "train: replica %d step %lld: loss %g", r,
                    (long long)tr->rep[r].ngrads, tr->rep[r].loss);
    return fail(tr, rc, "train: replica %d: the data cannot fill a batch "
                "of sequences of %d", r, tr->cfg.seq + 1);
}

/* Lockstep: the merges due, then the step, counted (a pool job). */
static void inner_job(void *ctx, int r) {
    train *tr = ctx;
    replica *rp = &tr->rep[r];
    int64_t t = rp->steps + 1;
    land_due(tr, r, t);
    rp->rc = inner_step(tr, r, t);
    if (!rp->rc && !tr->dp) rp->steps++;
}

int train_land(train *tr, int r) {
    int rc = check_replica(tr, r);
    if (rc) return rc;
    land_due(tr, r, tr->rep[r].steps + 1);
    return TRAIN_OK;
}

/* ---- encoding ------------------------------------------------------------ */

typedef struct {
    train *tr;
    int f;
    uint64_t mask;
} sync_job;

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
    float *d = tr->rep[r].g, *o = outer_of(tr, r), *m = mom_of(tr, r);
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
 * landing r's pending merge of f (a pool job). */
static void encode_job(void *ctx, int r) {
    const sync_job *j = ctx;
    train *tr = j->tr;
    const fragment *fr = &tr->frag[j->f];
    replica *rp = &tr->rep[r];
    if (!(j->mask >> r & 1)) return;
    if (*due_of(tr, r, j->f) >= 0) land_fragment(tr, r, j->f);
    uint64_t written = 0;
    for (int i = 0; i < fr->ntens; i++) {
        const tensor_info *t = &tr->tens[fr->tens[i]];
        const float *src;
        if (tr->dp) {
            src = rp->g + t->off;
        } else if (tr->averaging) {
            src = rp->p + t->off;
        } else { /* the gradient buffer is free between steps */
            float *d = rp->g + t->off;
            const float *o = (tr->ref ? tr->ref : outer_of(tr, r)) + t->off;
            const float *p = rp->p + t->off;
            for (size_t k = 0; k < t->n; k++) d[k] = o[k] - p[k];
            src = d;
        }
        written += codec_encode(tr->codec, src, t->n, t->row,
                                fr->buf[r] + fr->boff[i]);
    }
    rp->rc = written == fr->wire ? TRAIN_OK : TRAIN_EINVAL;
    if (tr->dp || tr->sp.overlap == SCHED_INNER) return;
    /* a 1-outer-step overlap merges what the outer parameters are once
     * the previous sync is applied, before the next step */
    if (tr->eager) eager_step(tr, r, fr);
    *due_of(tr, r, j->f) = fr->take + 1;
}

/* Replica r's payload of fragment f's sync taken after `take`, in buf
 * (wire bytes, owned by the sync from now on): the sync opened when none
 * is in flight, r a contributor, its bytes counted.  The encoding comes
 * later (encode_job). */
static void payload_open(train *tr, int r, int f, int64_t take,
                         uint8_t *buf) {
    fragment *fr = &tr->frag[f];
    fr->buf[r] = buf;
    fr->contrib |= 1ull << r;
    fr->take = take;
    tr->bytes += fr->wire;
}

/* ---- batches --------------------------------------------------------------
 * Every coupled call is a batch: first each op, in order, is checked
 * against the state the ops before it left and takes its effect on the
 * shared state (a step is counted; a payload is opened); then the
 * arithmetic runs, each replica's ops in order, replicas in parallel
 * (they share no state: the same bits as one op at a time). */

enum { ENCODE_FAILED = 100 }; /* internal: a codec wrote another size */

typedef struct {
    train *tr;
    train_op *ops;      /* accepted; a step's take is its step number */
    int n;
} batch_job;

/* Replica r's arithmetic of the batch (a pool job). */
static void batch_run(void *ctx, int r) {
    const batch_job *j = ctx;
    train *tr = j->tr;
    int rc = TRAIN_OK;
    for (int i = 0; i < j->n && !rc; i++) {
        train_op *o = &j->ops[i];
        if (o->replica != r) continue;
        if (o->fragment == TRAIN_OP_COPY) {
            land_due(tr, r, o->take);
            memcpy(o->copy, tr->rep[r].p, tr->N * sizeof *o->copy);
        } else if (o->fragment < 0) {
            land_due(tr, r, o->take);
            rc = inner_step(tr, r, o->take);
            o->loss = tr->rep[r].loss;
        } else {
            sync_job s = {tr, o->fragment, 1ull << r};
            encode_job(&s, r);
            if (tr->rep[r].rc) rc = ENCODE_FAILED;
        }
    }
    tr->rep[r].rc = rc;
}

/* The arithmetic of n accepted ops; the first failure in replica order. */
static int batch_arith(train *tr, train_op *ops, int n) {
    batch_job j = {tr, ops, n};
    int one = 1;
    for (int i = 1; i < n; i++) one &= ops[i].replica == ops[0].replica;
    if (n == 0) return TRAIN_OK;
    if (one) {
        for (int r = 0; r < tr->M; r++) tr->rep[r].rc = TRAIN_OK;
        batch_run(&j, ops[0].replica);
    } else {
        run_jobs(tr->pool, tr->M, batch_run, &j);
    }
    for (int r = 0; r < tr->M; r++) {
        int rc = tr->rep[r].rc;
        if (rc == ENCODE_FAILED)
            return fail(tr, TRAIN_EINVAL, "train: codec wrote an unexpected "
                        "size");
        if (rc) return step_failed(tr, r, rc);
    }
    return TRAIN_OK;
}

/* TRAIN_ESTATE (with the message) when replica r may not contribute to
 * fragment f's sync taken after `take` now. */
static int contribute_refused(train *tr, int r, int f, int64_t take) {
    const replica *rp = &tr->rep[r];
    const fragment *fr = &tr->frag[f];
    if (tr->dp && !rp->grad_ready)
        return fail(tr, TRAIN_ESTATE, "train: dp: replica %d has no "
                    "gradient to send", r);
    if (rp->steps + tr->dp != take)
        return fail(tr, TRAIN_ESTATE, "train: replica %d has done %lld "
                    "steps, not the %lld of fragment %d's sync", r,
                    (long long)rp->steps, (long long)(take - tr->dp), f);
    if (fr->take >= 0 && fr->take != take)
        return fail(tr, TRAIN_ESTATE, "train: fragment %d's sync in flight "
                    "was taken after step %lld, not %lld", f,
                    (long long)fr->take, (long long)take);
    if (fr->contrib >> r & 1)
        return fail(tr, TRAIN_ESTATE, "train: replica %d has already "
                    "contributed to fragment %d's sync", r, f);
    return TRAIN_OK;
}

/* Checks op o against the state so far and takes its shared effect; a
 * step's take becomes its step number. */
static int batch_accept(train *tr, train_op *o) {
    int r = o->replica, rc = check_replica(tr, r);
    if (rc) return rc;
    replica *rp = &tr->rep[r];
    if (o->fragment == TRAIN_OP_COPY) {
        if (!o->copy)
            return fail(tr, TRAIN_EINVAL, "train: a copy of replica %d to "
                        "nowhere", r);
        o->take = rp->steps + 1;
        return TRAIN_OK;
    }
    if (o->fragment < 0) {
        int64_t t = rp->steps + 1;
        rc = step_refused(tr, r, t, tr->cfg.late == TRAIN_LATE_WAIT);
        if (rc) return rc;
        o->take = t;
        if (tr->dp)
            rp->grad_ready = 1;
        else
            rp->steps++;
        return TRAIN_OK;
    }
    if ((rc = check_fragment_id(tr, o->fragment)) ||
        (rc = contribute_refused(tr, r, o->fragment, o->take)))
        return rc;
    uint8_t *buf = malloc(tr->frag[o->fragment].wire);
    if (!buf) return fail(tr, TRAIN_ENOMEM, "train: out of memory");
    payload_open(tr, r, o->fragment, o->take, buf);
    return TRAIN_OK;
}

int train_batch(train *tr, train_op *ops, int n) {
    if (n <= 0)
        return n ? fail(tr, TRAIN_EINVAL, "train: a batch of %d ops", n)
                 : TRAIN_OK;
    int done = 0, rc = TRAIN_OK;
    while (done < n && !(rc = batch_accept(tr, &ops[done]))) done++;
    /* the ops before a refused one are done; its message stays unless
     * their arithmetic fails */
    int arc = batch_arith(tr, ops, done);
    return arc ? arc : rc;
}

int train_inner_step(train *tr, int r) {
    train_op o = {r, -1, 0, 0, NULL};
    return train_batch(tr, &o, 1);
}

int train_contribute(train *tr, int r, int f, int64_t take,
                     uint64_t *bytes) {
    train_op o = {r, f, take, 0, NULL};
    int rc = train_batch(tr, &o, 1);
    if (!rc && bytes) *bytes = tr->frag[f].wire;
    return rc;
}

int train_prepare(train *tr, int f, uint64_t participants, uint64_t *bytes) {
    int rc = check_fragment(tr, f, participants);
    if (rc) return rc;
    fragment *fr = &tr->frag[f];
    if (fr->take >= 0)
        return fail(tr, TRAIN_ESTATE, "train: fragment %d already has a "
                    "sync in flight", f);
    int64_t take = INT64_MAX; /* the least step among the participants */
    train_op ops[TRAIN_MAX_REPLICAS];
    uint8_t *buf[TRAIN_MAX_REPLICAS] = {0};
    int n = 0;
    for (int r = 0; r < tr->M; r++) {
        if (!(participants >> r & 1)) continue;
        if (tr->dp && !tr->rep[r].grad_ready)
            return fail(tr, TRAIN_ESTATE, "train: dp: replica %d has no "
                        "gradient to send", r);
        if (tr->rep[r].steps + tr->dp < take) take = tr->rep[r].steps + tr->dp;
        ops[n++] = (train_op){r, f, 0, 0, NULL};
    }
    for (int i = 0; i < n; i++)
        if (!(buf[i] = malloc(fr->wire))) {
            for (int k = 0; k < i; k++) free(buf[k]);
            return fail(tr, TRAIN_ENOMEM, "train: out of memory");
        }
    for (int i = 0; i < n; i++) {
        ops[i].take = take;
        payload_open(tr, ops[i].replica, f, take, buf[i]);
    }
    if ((rc = batch_arith(tr, ops, n))) return rc;
    for (int r = 0; bytes && r < tr->M; r++)
        bytes[r] = participants >> r & 1 ? fr->wire : 0;
    return TRAIN_OK;
}

/* ---- reduce -------------------------------------------------------------- */

/* acc = FP32 mean of the participants' decoded tensor i, summed in
 * replica order. */
static void average_tensor(train *tr, const fragment *fr, int i,
                           uint64_t mask) {
    const tensor_info *t = &tr->tens[fr->tens[i]];
    int count = 0;
    for (int r = 0; r < tr->M; r++) {
        if (!(mask >> r & 1)) continue;
        const uint8_t *in = fr->buf[r] + fr->boff[i];
        /* eager: each term is kept, as its replica's own */
        float *dst = tr->eager ? tr->own + (size_t)r * tr->N + t->off
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

/* Completes fragment f's sync in flight with the payloads of `members`
 * (a non-empty subset of its contributors): their average, then the
 * outer step or the model-averaging copy (DP: one inner step of every
 * replica with the average).  The sync is closed; merges are the
 * caller's. */
static void reduce_sync(train *tr, int f, uint64_t members) {
    fragment *fr = &tr->frag[f];
    for (int r = 0; tr->ref && r < tr->M; r++) { /* outer overlap */
        int64_t d = *due_of(tr, r, f);
        if (d >= 0 && tr->rep[r].steps >= d - 1) land_fragment(tr, r, f);
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
        if (tr->averaging)
            memcpy(o, tr->acc, bytes);
        else
            optim_nesterov(tr->cfg.outer_lr, tr->cfg.outer_momentum, o,
                           tr->mom ? tr->mom + t->off : NULL, tr->acc, t->n);
    }
    if (tr->eager) fr->prev = members;
    close_sync(tr, fr);
    if (tr->dp) run_jobs(tr->pool, tr->M, dp_update_job, tr);
}

/* ESTATE when fragment f has no sync in flight, EINVAL when `members`
 * are not all contributors of it. */
static int check_members(train *tr, int f, uint64_t members) {
    const fragment *fr = &tr->frag[f];
    if (fr->take < 0)
        return fail(tr, TRAIN_ESTATE, "train: fragment %d has no sync in "
                    "flight", f);
    if (members & ~fr->contrib)
        return fail(tr, TRAIN_EINVAL, "train: participants 0x%llx were not "
                    "all prepared (0x%llx)", (unsigned long long)members,
                    (unsigned long long)fr->contrib);
    return TRAIN_OK;
}

int train_apply(train *tr, int f, uint64_t participants) {
    int rc = check_fragment(tr, f, participants);
    if (!rc) rc = check_members(tr, f, participants);
    if (rc) return rc;
    int64_t merge[TRAIN_MAX_REPLICAS];
    for (int r = 0; r < tr->M; r++) merge[r] = own_merge_step(tr, tr->frag[f].take, r);
    reduce_sync(tr, f, participants);
    for (int r = 0; !tr->dp && tr->sp.overlap == SCHED_INNER && r < tr->M; r++) {
        int64_t *d = due_of(tr, r, f);
        if (tr->cfg.tau_extra[r] == 0)
            land_fragment(tr, r, f);
        else if (*d < 0) /* a larger tau: the merge lands later */
            *d = merge[r];
    }
    return TRAIN_OK;
}

/* The step before which replica r merges the reduce of fragment fr's
 * sync in flight (negative: no merge). */
static int64_t merge_step_of(const train *tr, const fragment *fr,
                             const int64_t *merge_step, int r) {
    return merge_step ? merge_step[r] : own_merge_step(tr, fr->take, r);
}

int train_reduce(train *tr, int f, uint64_t members,
                 const int64_t *merge_step) {
    int rc = check_fragment_id(tr, f);
    if (!rc) rc = check_members(tr, f, members);
    if (rc) return rc;
    fragment *fr = &tr->frag[f];
    for (int r = 0; !tr->dp && members && r < tr->M; r++) {
        int64_t m = merge_step_of(tr, fr, merge_step, r);
        if (m >= 0 && tr->rep[r].steps >= m)
            return fail(tr, TRAIN_ESTATE, "train: replica %d has computed "
                        "step %lld, past the merge step %lld of fragment "
                        "%d's sync", r, (long long)tr->rep[r].steps,
                        (long long)m, f);
    }
    if (!members) {
        close_sync(tr, fr);
        return TRAIN_OK;
    }
    int64_t m[TRAIN_MAX_REPLICAS];
    for (int r = 0; r < tr->M; r++) m[r] = merge_step_of(tr, fr, merge_step, r);
    reduce_sync(tr, f, members);
    for (int r = 0; !tr->dp && tr->sp.overlap == SCHED_INNER && r < tr->M; r++) {
        int64_t *d = due_of(tr, r, f);
        if (m[r] >= 0 && (*d < 0 || m[r] < *d)) *d = m[r];
    }
    return TRAIN_OK;
}

/* ---- healing and snapshots ----------------------------------------------- */

int train_rejoin(train *tr, int r, int src, int64_t steps) {
    int rc = check_replica(tr, r);
    if (rc) return rc;
    if (tr->dp)
        return fail(tr, TRAIN_EINVAL, "train: dp: no outer parameters to "
                    "rejoin from");
    if (src >= tr->M || steps < 0)
        return fail(tr, TRAIN_EINVAL, "train: rejoin source %d, steps %lld "
                    "(expected < %d, >= 0)", src, (long long)steps, tr->M);
    replica *rp = &tr->rep[r];
    if (src >= 0 && src != r && optim_copy(rp->opt, tr->rep[src].opt))
        return fail(tr, TRAIN_EINVAL, "train: inner optimizers differ");
    if (tr->eager && src >= 0 && src != r) { /* src's outer copy */
        memcpy(outer_of(tr, r), outer_of(tr, src), tr->N * sizeof *tr->outer);
        if (tr->mom)
            memcpy(mom_of(tr, r), mom_of(tr, src), tr->N * sizeof *tr->mom);
    }
    memcpy(rp->p, outer_of(tr, r), tr->N * sizeof *rp->p);
    rp->steps = steps;
    for (int f = 0; f < tr->P; f++) *due_of(tr, r, f) = -1;
    return TRAIN_OK;
}

train_snapshot *train_snapshot_new(train *tr) {
    train_snapshot *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->owner = tr;
    s->M = tr->M;
    s->rep = calloc((size_t)tr->M, sizeof *s->rep);
    int bad = !s->rep;
    const size_t N = tr->N;
    for (int r = 0; !bad && r < tr->M; r++) {
        replica_snap *q = &s->rep[r];
        char e[200];
        q->p = malloc((size_t)(1 + tr->dp) * N * sizeof *q->p);
        q->g = q->p && tr->dp ? q->p + N : NULL;
        q->opt = inner_optimizer(tr, e, sizeof e);
        q->data = tr->data ? data_stream_new(tr->data, r) : NULL;
        bad = !q->p || !q->opt || (tr->data && !q->data);
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

/* n floats from the live buffer to the kept one, or back (restore). */
static void transfer(int restore, float *live, float *kept, size_t n) {
    if (!live) return;
    if (restore)
        memcpy(live, kept, n * sizeof *live);
    else
        memcpy(kept, live, n * sizeof *live);
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
        return fail(tr, TRAIN_EINVAL, "train: a snapshot of another trainer");
    return TRAIN_OK;
}

int train_snapshot_take(train *tr, train_snapshot *s) {
    int rc = check_snapshot(tr, s);
    if (rc) return rc;
    snapshot_transfer(tr, s, 0);
    s->taken = 1;
    return TRAIN_OK;
}

int train_snapshot_restore(train *tr, train_snapshot *s) {
    int rc = check_snapshot(tr, s);
    if (rc) return rc;
    if (!s->taken)
        return fail(tr, TRAIN_ESTATE, "train: restore of a snapshot never "
                    "taken");
    snapshot_transfer(tr, s, 1);
    for (int f = 0; f < tr->P; f++) close_sync(tr, &tr->frag[f]);
    for (int i = 0; i < tr->M * tr->P; i++) tr->due[i] = -1;
    return TRAIN_OK;
}

/* ---- the lockstep driver ------------------------------------------------- */

int train_step(train *tr) {
    int64_t t = train_steps_done(tr) + 1;
    uint64_t all = tr->M == 64 ? ~0ull : (1ull << tr->M) - 1;
    for (int r = 0; r < tr->M; r++) {
        int rc = step_refused(tr, r, tr->rep[r].steps + 1, 0);
        if (rc) return rc;
    }
    run_jobs(tr->pool, tr->M, inner_job, tr);
    for (int r = 0; r < tr->M; r++)
        if (tr->rep[r].rc) return step_failed(tr, r, tr->rep[r].rc);
    if (tr->dp) {
        int rc = train_prepare(tr, 0, all, NULL);
        return rc ? rc : train_apply(tr, 0, all);
    }
    /* The syncs applied after t that were taken before it, then those
     * taken after t, then the ones of those applied at once (delay 0). */
    int n = sched_applied_after(&tr->sp, t, tr->flist);
    for (int i = 0; i < n; i++) {
        int f = tr->flist[i];
        int64_t take = tr->frag[f].take;
        int rc = take >= 0 && take < t ? train_apply(tr, f, all) : TRAIN_OK;
        if (rc) return rc;
    }
    n = sched_taken_after(&tr->sp, t, tr->cfg.steps, tr->flist);
    for (int i = 0; i < n; i++) {
        int rc = train_prepare(tr, tr->flist[i], all, NULL);
        if (rc) return rc;
    }
    for (int i = 0; sched_delay(&tr->sp) == 0 && i < n; i++) {
        int rc = train_apply(tr, tr->flist[i], all);
        if (rc) return rc;
    }
    return TRAIN_OK;
}

static uint64_t tokens_done(const train *tr) {
    uint64_t n = 0, bt = (uint64_t)tr->cfg.batch * (uint64_t)tr->cfg.seq;
    for (int r = 0; r < tr->M; r++) n += (uint64_t)tr->rep[r].ngrads * bt;
    return n;
}

static int report(train *tr, int64_t t, train_report_fn fn, void *ctx) {
    train_report rep = {t, tokens_done(tr), 0, 0, tr->bytes};
    for (int r = 0; r < tr->M; r++) rep.train_loss += tr->rep[r].loss;
    rep.train_loss /= tr->M;
    int rc = train_eval_outer(tr, &rep.eval_loss);
    if (rc) return rc;
    return fn && fn(&rep, ctx) ? TRAIN_STOPPED : TRAIN_OK;
}

void train_on_step(train *tr, void (*fn)(void *ctx, int64_t t,
                                         int64_t steps), void *ctx) {
    tr->step_fn = fn;
    tr->step_ctx = ctx;
}

int train_run(train *tr, train_report_fn fn, void *ctx) {
    if (tokens_done(tr) != 0)
        return fail(tr, TRAIN_ESTATE, "train: run needs a fresh trainer");
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
    return TRAIN_OK;
}

/* ---- evaluation ---------------------------------------------------------- */

typedef struct {
    train *tr;
    const float *params;
    int nmodels;
} eval_job;

/* Model j evaluates batches j, j + nmodels, ... (a pool job). */
static void eval_batches_job(void *ctx, int j) {
    const eval_job *e = ctx;
    train *tr = e->tr;
    size_t bt = (size_t)tr->cfg.batch * (size_t)tr->cfg.seq;
    for (int i = j; i < tr->neval; i += e->nmodels)
        tr->eloss[i] = tr->ops->eval(tr->rep[j].model, e->params,
                                     tr->ex ? tr->ex + i * bt : NULL,
                                     tr->ey ? tr->ey + i * bt : NULL);
}

static double eval_params(train *tr, const float *params) {
    eval_job e = {tr, params, tr->M < tr->neval ? tr->M : tr->neval};
    run_jobs(tr->pool, e.nmodels, eval_batches_job, &e);
    double s = 0;
    for (int i = 0; i < tr->neval; i++) s += tr->eloss[i];
    return s / tr->neval;
}

int train_eval_outer(train *tr, double *loss) {
    *loss = eval_params(tr, train_outer(tr));
    return TRAIN_OK;
}

int train_eval_replica(train *tr, int r, double *loss) {
    int rc = check_replica(tr, r);
    if (rc) return rc;
    *loss = eval_params(tr, tr->rep[r].p);
    return TRAIN_OK;
}

int train_eval_average(train *tr, double *loss) {
    return train_eval_mean(tr, NULL, loss);
}

int train_eval_params(train *tr, const float *params, double *loss) {
    if (!params) return fail(tr, TRAIN_EINVAL, "train: no parameters");
    *loss = eval_params(tr, params);
    return TRAIN_OK;
}

int train_eval_mean(train *tr, const float *const *params, double *loss) {
    float *avg = malloc(tr->N * sizeof *avg);
    if (!avg) return fail(tr, TRAIN_ENOMEM, "train: out of memory");
    for (int r = 0; r < tr->M; r++) {
        const float *p = params && params[r] ? params[r] : tr->rep[r].p;
        if (r == 0)
            memcpy(avg, p, tr->N * sizeof *avg);
        else
            for (size_t i = 0; i < tr->N; i++) avg[i] += p[i];
    }
    if (tr->M > 1)
        for (size_t i = 0; i < tr->N; i++) avg[i] /= (float)tr->M;
    *loss = eval_params(tr, avg);
    free(avg);
    return TRAIN_OK;
}

/* ---- inspection ---------------------------------------------------------- */

int train_replicas(const train *tr) { return tr->M; }
size_t train_num_params(const train *tr) { return tr->N; }
const sched_spec *train_schedule(const train *tr) { return &tr->sp; }

const float *train_params(const train *tr, int r) {
    return r >= 0 && r < tr->M ? tr->rep[r].p : NULL;
}

const float *train_outer(const train *tr) {
    return tr->dp ? tr->rep[0].p : tr->outer;
}

int train_fragment_units(const train *tr, int f, int *out) {
    if (f < 0 || f >= tr->P) return 0;
    const fragment *fr = &tr->frag[f];
    memcpy(out, fr->units, (size_t)fr->nunits * sizeof *out);
    return fr->nunits;
}

uint64_t train_fragment_wire_bytes(const train *tr, int f) {
    return f >= 0 && f < tr->P ? tr->frag[f].wire : 0;
}

uint64_t train_bytes(const train *tr) { return tr->bytes; }

int64_t train_replica_steps(const train *tr, int r) {
    return r >= 0 && r < tr->M ? tr->rep[r].steps : 0;
}

int64_t train_steps_done(const train *tr) {
    int64_t t = tr->rep[0].steps;
    for (int r = 1; r < tr->M; r++)
        if (tr->rep[r].steps < t) t = tr->rep[r].steps;
    return t;
}

double train_last_loss(const train *tr, int r) {
    return r >= 0 && r < tr->M ? tr->rep[r].loss : NAN;
}

int train_fedpart_fragment(const train *tr, int r) {
    if (!tr->cfg.fedpart || r < 0 || r >= tr->M) return -1;
    return turn_fragment(tr, tr->rep[r].steps + 1);
}

double train_entropy_floor(const train *tr) {
    return tr->data ? data_entropy_rate(tr->data, -1) : NAN;
}

int64_t train_sync_take(const train *tr, int f) {
    return f >= 0 && f < tr->P ? tr->frag[f].take : -1;
}

uint64_t train_sync_contributors(const train *tr, int f) {
    return f >= 0 && f < tr->P ? tr->frag[f].contrib : 0;
}
