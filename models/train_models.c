/*
 * train_models.c -- the trainer's two built-in models (train_config.h):
 * train_nn_ops, the nn transformer or residual MLP (nn.h), and
 * train_toy_ops, the toy of the golden vectors (one parameter per unit, a
 * constant gradient).
 */
#include "models/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

static void nn_destroy(void *m) {
    nn_free(m);
}
static float *nn_params_fn(void *m) {
    return nn_params(m);
}
static float *nn_grads_fn(void *m) {
    return nn_grads(m);
}
static size_t nn_nparams_fn(const void *m) {
    return nn_num_params(m);
}
static int nn_nunits_fn(const void *m) {
    return nn_num_units(m);
}
static size_t nn_uoff_fn(const void *m, int u) {
    return nn_unit_offset(m, u);
}
static int nn_tensors_fn(const void *m, int u, const nn_tensor **t) {
    return nn_unit_tensors(m, u, t);
}
static int nn_vocab_fn(const void *m) {
    return nn_get_config(m)->vocab;
}

static float nn_grad_fn(void *m, const int32_t *x, const int32_t *y) {
    float loss = nn_forward(m, x, y);
    if (isnan(loss) || nn_backward(m)) return NAN;
    return loss;
}

static float nn_eval_fn(void *m, const float *params, const int32_t *x,
                        const int32_t *y) {
    return nn_eval_loss(m, params, x, y);
}

const train_model_ops train_nn_ops = {"nn",         nn_create,   nn_destroy,
                                      nn_params_fn, nn_grads_fn, nn_nparams_fn,
                                      nn_nunits_fn, nn_uoff_fn,  nn_tensors_fn,
                                      nn_vocab_fn,  nn_grad_fn,  nn_eval_fn,
                                      nn_check_fn};

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
    snprintf(err, errlen,
             "toy: units %d, grad %g, init %g (expected units "
             ">= 1, finite values)",
             c->units, c->grad, c->init);
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

static float *toy_params(void *m) {
    return ((toy_model *)m)->p;
}
static float *toy_grads(void *m) {
    return ((toy_model *)m)->g;
}
static size_t toy_nparams(const void *m) {
    return (size_t)((const toy_model *)m)->units;
}
static int toy_nunits(const void *m) {
    return ((const toy_model *)m)->units;
}
static size_t toy_uoff(const void *m, int u) {
    (void)m;
    return (size_t)u;
}
static int toy_tensors(const void *m, int u, const nn_tensor **t) {
    (void)m, (void)u;
    *t = &toy_tensor;
    return 1;
}
static int toy_vocab(const void *m) {
    (void)m;
    return 0;
}

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

const train_model_ops train_toy_ops = {"toy",      toy_create, toy_destroy,
                                       toy_params, toy_grads,  toy_nparams,
                                       toy_nunits, toy_uoff,   toy_tensors,
                                       toy_vocab,  toy_grad,   toy_eval,
                                       toy_check};
