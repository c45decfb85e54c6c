/*
 * train.c -- DP, DiLoCo and Streaming DiLoCo on M replicas (train.h): the
 * trainer's life cycle (the configuration checked, the tensor table,
 * schedule, fragments, replicas, optimizers, data and outer state built;
 * freeing), its message, evaluation and inspection.  The internals it
 * shares with the other train files are train_int.h.
 */
#include "models/train_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int train__fail(train *tr, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tr->err, sizeof tr->err, fmt, ap);
    va_end(ap);
    return code;
}

const char *train_error(const train *tr) {
    return tr->err;
}

void train_config_default(train_config *c) {
    memset(c, 0, sizeof *c); /* the padding too: configs compare whole */
    *c = (train_config)TRAIN_CONFIG_DEFAULT;
}

/* ---- building ------------------------------------------------------------ */

static int check_config(train *tr) {
    const train_config *c = &tr->cfg;
    if (c->replicas < 1 || c->replicas > TRAIN_MAX_REPLICAS)
        return train__fail(tr, MSG_EINPUT,
                           "train: replicas %d (expected "
                           "1..%d)",
                           c->replicas, TRAIN_MAX_REPLICAS);
    if (c->site_replicas < 1 || c->site_replicas > TRAIN_MAX_SITE_REPLICAS)
        return train__fail(tr, MSG_EINPUT,
                           "train: site_replicas %d (expected 1..%d)",
                           c->site_replicas, TRAIN_MAX_SITE_REPLICAS);
    if (c->replicas * c->site_replicas > TRAIN_MAX_SHARDS)
        return train__fail(tr, MSG_EINPUT,
                           "train: %d sites of %d replicas are %d data "
                           "shards (expected at most %d)",
                           c->replicas, c->site_replicas,
                           c->replicas * c->site_replicas, TRAIN_MAX_SHARDS);
    if (c->threads < 1)
        return train__fail(tr, MSG_EINPUT, "train: threads %d (expected >= 1)",
                           c->threads);
    if (c->steps < 1)
        return train__fail(tr, MSG_EINPUT, "train: steps %lld (expected >= 1)",
                           (long long)c->steps);
    if (c->batch < 1 || c->seq < 1)
        return train__fail(tr, MSG_EINPUT,
                           "train: batch %d, seq %d (expected "
                           ">= 1)",
                           c->batch, c->seq);
    if (c->map != TRAIN_MAP_JOIN && c->map != TRAIN_MAP_OWN)
        return train__fail(tr, MSG_EINPUT,
                           "train: map %d (expected join or "
                           "own)",
                           (int)c->map);
    if (c->fedpart != 0 && c->fedpart != 1)
        return train__fail(tr, MSG_EINPUT,
                           "train: fedpart %d (expected 0 or "
                           "1)",
                           c->fedpart);
    if ((unsigned)c->codec.kind >= CODEC_COUNT ||
        (unsigned)c->dp_codec.kind >= CODEC_COUNT)
        return train__fail(tr, MSG_EINPUT,
                           "train: unknown codec (expected one "
                           "of %s)",
                           codec_names());
    if (!(c->outer_lr >= 0) || !isfinite(c->outer_lr))
        return train__fail(tr, MSG_EINPUT,
                           "train: outer_lr %g (expected "
                           "finite >= 0)",
                           c->outer_lr);
    if (!(c->outer_momentum >= 0 && c->outer_momentum < 1))
        return train__fail(tr, MSG_EINPUT,
                           "train: outer_momentum %g (expected "
                           "[0, 1))",
                           c->outer_momentum);
    if (c->late != TRAIN_LATE_WAIT && c->late != TRAIN_LATE_CONTINUE)
        return train__fail(tr, MSG_EINPUT,
                           "train: late %d (expected wait or "
                           "continue)",
                           (int)c->late);
    if (c->eval_interval < 0 || c->eval_batches < 1)
        return train__fail(tr, MSG_EINPUT,
                           "train: eval_interval %lld, "
                           "eval_batches %d (expected >= 0, >= 1)",
                           (long long)c->eval_interval, c->eval_batches);
    return 0;
}

static int pick_model(train *tr) {
    const train_config *c = &tr->cfg;
    switch (c->model) {
    case TRAIN_MODEL_NN:
        tr->ops = &train_nn_ops;
        tr->mcfg = &tr->cfg.nn;
        return 0;
    case TRAIN_MODEL_TOY:
        tr->ops = &train_toy_ops;
        tr->mcfg = &tr->cfg.toy;
        return 0;
    case TRAIN_MODEL_CUSTOM: {
        const train_model_ops *o = c->custom_ops;
        if (!o || !o->create || !o->destroy || !o->params || !o->grads ||
            !o->num_params || !o->num_units || !o->unit_offset ||
            !o->unit_tensors || !o->vocab || !o->grad || !o->eval)
            return train__fail(tr, MSG_EINPUT,
                               "train: custom model without "
                               "every operation");
        tr->ops = o;
        tr->mcfg = c->custom_cfg;
        return 0;
    }
    }
    return train__fail(tr, MSG_EINPUT,
                       "train: model %d (expected nn, toy or "
                       "custom)",
                       (int)c->model);
}

/* The tensor table from replica 0's model; checks that the tensors tile
 * the parameter vector in order. */
static int build_tensors(train *tr) {
    void *m = tr->rep[0].model;
    tr->N = tr->ops->num_params(m);
    tr->U = tr->ops->num_units(m);
    if (tr->U < 1 || tr->N < 1)
        return train__fail(tr, MSG_EINPUT, "train: model has no parameters");
    int n = 0;
    for (int u = 0; u < tr->U; u++) {
        const nn_tensor *t;
        n += tr->ops->unit_tensors(m, u, &t);
    }
    tr->tens = calloc((size_t)n, sizeof *tr->tens);
    if (!tr->tens) return train__fail(tr, MSG_ENOMEM, "train: out of memory");
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
                return train__fail(tr, MSG_EINPUT,
                                   "train: model tensors do "
                                   "not tile the parameters (unit %d, %s)",
                                   u, t[i].name);
            next += ti->n;
            if (ti->n > tr->maxt) tr->maxt = ti->n;
        }
    }
    if (next != tr->N)
        return train__fail(tr, MSG_EINPUT,
                           "train: model tensors cover %zu of "
                           "%zu parameters",
                           next, tr->N);
    return 0;
}

/* The schedule over units (own) or blocks (join), normalised. */
static int build_schedule(train *tr) {
    tr->sp = tr->cfg.sched;
    if (tr->cfg.map == TRAIN_MAP_JOIN) {
        if (tr->U < 3)
            return train__fail(tr, MSG_EINPUT,
                               "train: map join needs an "
                               "embedding, a block and a head (model has %d "
                               "units)",
                               tr->U);
        tr->sp.layers = tr->U - 2;
    } else {
        tr->sp.layers = tr->U;
    }
    char e[200];
    if (sched_normalize(&tr->sp, e, sizeof e))
        return train__fail(tr, MSG_EINPUT, "train: schedule: %s", e);
    tr->dp = tr->sp.method == SCHED_DP;
    tr->sparta = tr->sp.method == SCHED_SPARTA;
    tr->P = tr->sp.P;
    if (tr->sp.layout == SCHED_SLICED)
        return train__fail(tr, MSG_EINPUT,
                           "train: layout sliced is timing "
                           "only (expected sequential or strided)");
    int cap = sched_tau_cap(&tr->sp);
    int taus =
        tr->sp.method == SCHED_STREAMING && tr->sp.overlap == SCHED_INNER;
    for (int r = 0; r < tr->cfg.replicas; r++) {
        int x = tr->cfg.tau_extra[r];
        if (x < 0 || (!taus && x) || tr->sp.tau + x >= cap)
            return train__fail(tr, MSG_EINPUT,
                               "train: replica %d's tau %d + "
                               "%d (expected below %d, and no extra without "
                               "streaming and inner overlap)",
                               r, tr->sp.tau, x, cap);
    }
    if ((tr->dp || tr->sparta) && tr->cfg.fedpart)
        return train__fail(tr, MSG_EINPUT,
                           "train: fedpart needs diloco or "
                           "streaming (not %s)",
                           sched_method_name(tr->sp.method));
    return 0;
}

static int unit_fragment(const train *tr, int u) {
    if (tr->cfg.map == TRAIN_MAP_OWN) return sched_layer_fragment(&tr->sp, u);
    int L = tr->U - 2;
    int block = u == 0 ? 0 : u == tr->U - 1 ? L - 1 : u - 1;
    return sched_layer_fragment(&tr->sp, block);
}

/* The state of a stateful codec (powersgd, demo: compress.h) over the
 * tensor table. */
static int build_compressor(train *tr) {
    if (!cmp_stateful(tr->codec)) return 0;
    cmp_tensor *t = malloc((size_t)tr->ntens * sizeof *t);
    if (!t) return train__fail(tr, MSG_ENOMEM, "train: out of memory");
    for (int k = 0; k < tr->ntens; k++)
        t[k] = (cmp_tensor){tr->tens[k].off, tr->tens[k].n, tr->tens[k].row};
    int rc =
        cmp_new(tr->codec, tr->M, t, tr->ntens, tr->N, tr->cfg.seed, &tr->cmp);
    free(t);
    return rc ? train__fail(tr, rc, "train: out of memory") : 0;
}

static int build_fragments(train *tr) {
    tr->codec = tr->dp ? tr->cfg.dp_codec : tr->cfg.codec;
    tr->unit_frag = calloc((size_t)tr->U, sizeof *tr->unit_frag);
    tr->frag = calloc((size_t)tr->P, sizeof *tr->frag);
    tr->due = malloc((size_t)tr->M * (size_t)tr->P * sizeof *tr->due);
    tr->flist = malloc((size_t)tr->P * sizeof *tr->flist);
    if (!tr->unit_frag || !tr->frag || !tr->due || !tr->flist)
        return train__fail(tr, MSG_ENOMEM, "train: out of memory");
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
            return train__fail(tr, MSG_ENOMEM, "train: out of memory");
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
    int e = build_compressor(tr);
    if (e) return e;
    return tr->sparta ? train__sparta_build(tr) : 0;
}

/* The replicas' models.  A model whose configuration its `check`
 * accepted and that cannot be created is out of memory. */
static int build_replicas(train *tr) {
    const train_config *c = &tr->cfg;
    char e[200] = "";
    const train_model_ops *o = tr->ops;
    if (o->check && o->check(tr->mcfg, c->batch, c->seq, e, sizeof e))
        return train__fail(tr, MSG_EINPUT, "train: %s", e);
    tr->rep = calloc((size_t)tr->M, sizeof *tr->rep);
    if (!tr->rep) return train__fail(tr, MSG_ENOMEM, "train: out of memory");
    for (int r = 0; r < tr->M; r++) {
        replica *rp = &tr->rep[r];
        rp->loss = NAN;
        rp->model = o->create(tr->mcfg, c->batch, c->seq, c->seed, e, sizeof e);
        if (!rp->model)
            return train__fail(tr, o->check ? MSG_ENOMEM : MSG_EINPUT,
                               "train: %s", e);
        rp->p = tr->ops->params(rp->model);
        rp->g = tr->ops->grads(rp->model);
    }
    return 0;
}

optim_state *train__inner_optimizer(const train *tr, char *e, size_t elen) {
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
        return train__fail(tr, MSG_EINPUT, "train: inner %s", e);
    for (int r = 0; r < tr->M; r++) {
        tr->rep[r].opt = train__inner_optimizer(tr, e, sizeof e);
        if (!tr->rep[r].opt)
            return train__fail(tr, MSG_ENOMEM, "train: inner %s", e);
    }
    return 0;
}

/* Site r's streams (shards r G + k, k = 0..G-1: one site of G replicas
 * reads what DP over G replicas reads) and its batch buffers.  A probe
 * stream per shard (the replica's own is left untouched) finds text
 * shards too short for one sequence now rather than mid-run. */
static int build_streams(train *tr, int r, size_t bt) {
    const train_config *c = &tr->cfg;
    replica *rp = &tr->rep[r];
    const int G = tr->G;
    rp->data = data_stream_new(tr->data, r * G);
    rp->x = malloc(bt * sizeof *rp->x);
    rp->y = malloc(bt * sizeof *rp->y);
    int oom = !rp->data || !rp->x || !rp->y;
    if (!oom && G > 1)
        oom = !(rp->more = calloc((size_t)G - 1, sizeof *rp->more));
    for (int k = 1; !oom && k < G; k++)
        oom = !(rp->more[k - 1] = data_stream_new(tr->data, r * G + k));
    if (oom) return train__fail(tr, MSG_ENOMEM, "train: out of memory");
    for (int k = 0; k < G; k++) {
        data_stream *probe = data_stream_new(tr->data, r * G + k);
        int bad =
            !probe || data_next_batch(probe, c->batch, c->seq, rp->x, rp->y);
        data_stream_free(probe);
        if (bad && G == 1)
            return train__fail(tr, MSG_EINPUT,
                               "train: replica %d's data shard "
                               "cannot fill sequences of %d tokens",
                               r, c->seq + 1);
        if (bad)
            return train__fail(tr, MSG_EINPUT,
                               "train: site %d replica %d's data shard "
                               "cannot fill sequences of %d tokens",
                               r, k, c->seq + 1);
    }
    return 0;
}

/* Data streams, batch buffers and the fixed eval set. */
static int build_data(train *tr) {
    const train_config *c = &tr->cfg;
    char e[200] = "";
    int mv = tr->ops->vocab(tr->rep[0].model);
    if (c->data.kind == DATA_NONE) {
        if (mv != 0)
            return train__fail(tr, MSG_EINPUT,
                               "train: the model needs tokens "
                               "(data kind none)");
        tr->neval = 1;
        tr->eloss = calloc(1, sizeof *tr->eloss);
        return tr->eloss ? 0
                         : train__fail(tr, MSG_ENOMEM, "train: out of memory");
    }
    int drc = data_source_new(&c->data, tr->M * tr->G, &tr->data, e, sizeof e);
    if (drc) /* an unreadable data file is the user's input too */
        return train__fail(tr, drc == MSG_ENOMEM ? MSG_ENOMEM : MSG_EINPUT,
                           "train: %s", e);
    if (mv != 0 && data_vocab(tr->data) > mv)
        return train__fail(tr, MSG_EINPUT,
                           "train: data vocab %d exceeds the "
                           "model's %d",
                           data_vocab(tr->data), mv);
    size_t bt = (size_t)c->batch * (size_t)c->seq;
    for (int r = 0; r < tr->M; r++) {
        int rc = build_streams(tr, r, bt);
        if (rc) return rc;
    }
    tr->neval = c->eval_batches;
    tr->ex = malloc((size_t)tr->neval * bt * sizeof *tr->ex);
    tr->ey = malloc((size_t)tr->neval * bt * sizeof *tr->ey);
    tr->eloss = calloc((size_t)tr->neval, sizeof *tr->eloss);
    data_stream *es = data_stream_new(tr->data, -1);
    int rc = !tr->ex || !tr->ey || !tr->eloss || !es ? MSG_ENOMEM : 0;
    for (int i = 0; i < tr->neval && !rc; i++)
        if (data_next_batch(es, c->batch, c->seq, tr->ex + i * bt,
                            tr->ey + i * bt))
            rc = MSG_EINPUT;
    data_stream_free(es);
    if (rc == MSG_ENOMEM) return train__fail(tr, rc, "train: out of memory");
    if (rc)
        return train__fail(tr, rc,
                           "train: the eval data has too few tokens "
                           "for sequences of %d",
                           c->seq + 1);
    return 0;
}

/* Each site's sum of its gradients and their losses (sites only). */
static int build_sites(train *tr) {
    for (int r = 0; tr->G > 1 && r < tr->M; r++) {
        replica *rp = &tr->rep[r];
        rp->gsum = malloc(tr->N * sizeof *rp->gsum);
        rp->losses = calloc((size_t)tr->G, sizeof *rp->losses);
        if (!rp->gsum || !rp->losses)
            return train__fail(tr, MSG_ENOMEM, "train: out of memory");
    }
    return 0;
}

/* Outer parameters and momentum (not DP nor sparta), and the reduction
 * buffers. */
static int build_outer(train *tr) {
    tr->acc = malloc(tr->maxt * sizeof *tr->acc);
    tr->scratch = malloc(tr->maxt * sizeof *tr->scratch);
    if (!tr->acc || !tr->scratch)
        return train__fail(tr, MSG_ENOMEM, "train: out of memory");
    if (tr->dp || tr->sparta) return 0;
    const size_t N = tr->N;
    tr->eager = tr->sp.overlap == SCHED_EAGER;
    tr->nouter = tr->eager ? (size_t)tr->M * N : N;
    tr->outer = malloc(tr->nouter * sizeof *tr->outer);
    if (tr->cfg.outer_momentum > 0)
        tr->mom = calloc(tr->nouter, sizeof *tr->mom);
    if (tr->sp.overlap == SCHED_OUTER) tr->ref = malloc(N * sizeof *tr->ref);
    if (tr->eager) tr->own = calloc((size_t)tr->M * N, sizeof *tr->own);
    if (!tr->outer || (tr->cfg.outer_momentum > 0 && !tr->mom) ||
        (tr->sp.overlap == SCHED_OUTER && !tr->ref) || (tr->eager && !tr->own))
        return train__fail(tr, MSG_ENOMEM, "train: out of memory");
    for (size_t at = 0; at < tr->nouter; at += N)
        memcpy(tr->outer + at, tr->rep[0].p, N * sizeof *tr->outer);
    if (tr->ref) memcpy(tr->ref, tr->outer, N * sizeof *tr->ref);
    tr->averaging = tr->cfg.outer_lr == 1.0 && tr->cfg.outer_momentum == 0 &&
                    tr->codec.kind == CODEC_FP32 &&
                    tr->sp.overlap == SCHED_INNER;
    return 0;
}

int train_new(const train_config *c, train **out, char *err, size_t errlen) {
    *out = NULL;
    train *tr = calloc(1, sizeof *tr);
    if (!tr) {
        snprintf(err, errlen, "train: out of memory");
        return MSG_ENOMEM;
    }
    tr->cfg = *c;
    tr->M = c->replicas;
    tr->G = c->site_replicas;
    int rc = check_config(tr);
    if (!rc) rc = pick_model(tr);
    if (!rc) rc = build_replicas(tr);
    if (!rc) rc = build_tensors(tr);
    if (!rc) rc = build_schedule(tr);
    if (!rc) rc = build_fragments(tr);
    if (!rc) rc = build_optimizers(tr);
    if (!rc) rc = build_data(tr);
    if (!rc) rc = build_sites(tr);
    if (!rc) rc = build_outer(tr);
    if (!rc) {
        int th = c->threads < tr->M ? c->threads : tr->M;
        tr->pool = pool_new(th);
        if (!tr->pool)
            rc = train__fail(tr, MSG_ENOMEM,
                             "train: cannot start "
                             "threads");
    }
    if (rc) {
        snprintf(err, errlen, "%s", tr->err);
        train_free(tr);
        return rc;
    }
    tr->err[0] = 0;
    *out = tr;
    return 0;
}

void train_free(train *tr) {
    if (!tr) return;
    pool_free(tr->pool);
    for (int f = 0; tr->frag && f < tr->P; f++) {
        fragment *fr = &tr->frag[f];
        if (fr->buf) train__close_sync(tr, fr);
        free(fr->units);
        free(fr->tens);
        free(fr->boff);
        free(fr->buf);
        train__sparta_free(fr);
    }
    free(tr->frag);
    cmp_free(tr->cmp);
    for (int r = 0; tr->rep && r < tr->M; r++) {
        replica *rp = &tr->rep[r];
        if (rp->model) tr->ops->destroy(rp->model);
        optim_free(rp->opt);
        data_stream_free(rp->data);
        for (int k = 0; rp->more && k < tr->G - 1; k++)
            data_stream_free(rp->more[k]);
        free(rp->more);
        free(rp->gsum);
        free(rp->losses);
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
    free(tr->perm);
    free(tr->ex);
    free(tr->ey);
    free(tr->eloss);
    free(tr);
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
    train__run_jobs(tr->pool, e.nmodels, eval_batches_job, &e);
    double s = 0;
    for (int i = 0; i < tr->neval; i++) s += tr->eloss[i];
    return s / tr->neval;
}

int train_eval_outer(train *tr, double *loss) {
    if (tr->sparta) return train_eval_mean(tr, NULL, loss); /* no outer */
    *loss = eval_params(tr, train_outer(tr));
    return 0;
}

int train_eval_replica(train *tr, int r, double *loss) {
    int rc = train__check_replica(tr, r);
    if (rc) return rc;
    *loss = eval_params(tr, tr->rep[r].p);
    return 0;
}

int train_eval_average(train *tr, double *loss) {
    return train_eval_mean(tr, NULL, loss);
}

int train_eval_params(train *tr, const float *params, double *loss) {
    if (!params) return train__fail(tr, MSG_EINVAL, "train: no parameters");
    *loss = eval_params(tr, params);
    return 0;
}

int train_eval_mean(train *tr, const float *const *params, double *loss) {
    float *avg = malloc(tr->N * sizeof *avg);
    if (!avg) return train__fail(tr, MSG_ENOMEM, "train: out of memory");
    for (int r = 0; r < tr->M; r++) {
        const float *p = params && params[r] ? params[r] : tr->rep[r].p;
        if (r == 0) memcpy(avg, p, tr->N * sizeof *avg);
        else
            for (size_t i = 0; i < tr->N; i++) avg[i] += p[i];
    }
    if (tr->M > 1)
        for (size_t i = 0; i < tr->N; i++) avg[i] /= (float)tr->M;
    *loss = eval_params(tr, avg);
    free(avg);
    return 0;
}

/* ---- inspection ---------------------------------------------------------- */

int train_replicas(const train *tr) {
    return tr->M;
}
int train_site_replicas(const train *tr) {
    return tr->G;
}
size_t train_num_params(const train *tr) {
    return tr->N;
}
const sched_spec *train_schedule(const train *tr) {
    return &tr->sp;
}

const float *train_params(const train *tr, int r) {
    return r >= 0 && r < tr->M ? tr->rep[r].p : NULL;
}

const float *train_outer(const train *tr) {
    return tr->dp ? tr->rep[0].p : tr->outer; /* sparta: NULL */
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

uint64_t train_bytes(const train *tr) {
    return tr->bytes;
}

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
    return train__turn_fragment(tr, tr->rep[r].steps + 1);
}

double train_entropy_floor(const train *tr) {
    return tr->data ? data_entropy_rate(tr->data, -1) : NAN;
}
