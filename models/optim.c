/*
 * optim.c -- AdamW, SGD, the warmup + cosine schedule, clipping and the
 * outer Nesterov step (formulas in optim.h).
 *
 * The element loops are plain FP32 with scalars rounded once per call, so
 * a given (state, gradient) gives the same bits on every thread.
 */
#include "models/optim.h"
#include "sim/base/msg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

struct optim_state {
    optim_config cfg;
    int nranges;
    optim_range *ranges;
    int64_t *steps; /* per range update count */
    size_t n;       /* floats covered: max offset + len */
    float *m, *v;   /* AdamW moments, or m = SGD momentum buffer */
};

void optim_config_default(optim_config *c) {
    memset(c, 0, sizeof *c);
    *c = (optim_config)OPTIM_CONFIG_DEFAULT;
}

/* 1 when lo <= x <= hi (or < hi with open_hi) and x is finite. */
static int in_range(double x, double lo, double hi, int open_hi) {
    if (!isfinite(x) || x < lo) return 0;
    return open_hi ? x < hi : x <= hi;
}

int optim_check(const optim_config *c, char *err, size_t errlen) {
    if (c->kind != OPTIM_ADAMW && c->kind != OPTIM_SGD)
        return msg_set(err, errlen, MSG_EINPUT,
                       "optim: kind %d (expected adamw or sgd)", (int)c->kind);
    if (!in_range(c->lr, 0, INFINITY, 0))
        return msg_set(err, errlen, MSG_EINPUT,
                       "optim: lr %g (expected finite >= 0)", c->lr);
    if (!in_range(c->lr_min, 0, c->lr, 0))
        return msg_set(err, errlen, MSG_EINPUT,
                       "optim: lr_min %g (expected 0..lr = %g)", c->lr_min,
                       c->lr);
    if (c->warmup < 0 || c->total < 0)
        return msg_set(err, errlen, MSG_EINPUT,
                       "optim: warmup %lld, total %lld (expected "
                       ">= 0)",
                       (long long)c->warmup, (long long)c->total);
    if (c->cosine != 0 && c->cosine != 1)
        return msg_set(err, errlen, MSG_EINPUT,
                       "optim: cosine %d (expected 0 or 1)", c->cosine);
    if (!in_range(c->beta1, 0, 1, 1) || !in_range(c->beta2, 0, 1, 1))
        return msg_set(err, errlen, MSG_EINPUT,
                       "optim: betas %g, %g (expected [0, 1))", c->beta1,
                       c->beta2);
    if (!(c->eps > 0) || !isfinite(c->eps))
        return msg_set(err, errlen, MSG_EINPUT,
                       "optim: eps %g (expected finite > 0)", c->eps);
    if (!in_range(c->weight_decay, 0, INFINITY, 0))
        return msg_set(err, errlen, MSG_EINPUT,
                       "optim: weight_decay %g (expected finite "
                       ">= 0)",
                       c->weight_decay);
    if (!in_range(c->momentum, 0, 1, 1))
        return msg_set(err, errlen, MSG_EINPUT,
                       "optim: momentum %g (expected [0, 1))", c->momentum);
    if (!in_range(c->clip, 0, INFINITY, 0))
        return msg_set(err, errlen, MSG_EINPUT,
                       "optim: clip %g (expected finite >= 0; 0 "
                       "= off)",
                       c->clip);
    return 0;
}

/* ---- building blocks ----------------------------------------------------- */

double optim_lr_at(const optim_config *c, int64_t t) {
    if (c->warmup > 0 && t <= c->warmup)
        return c->lr * (double)t / (double)c->warmup;
    if (!c->cosine) return c->lr;
    if (c->total <= c->warmup || t >= c->total) return c->lr_min;
    double p = (double)(t - c->warmup) / (double)(c->total - c->warmup);
    return c->lr_min + (c->lr - c->lr_min) * 0.5 * (1.0 + cos(PI * p));
}

double optim_sumsq(double acc, const float *g, size_t n) {
    for (size_t i = 0; i < n; i++) acc += (double)g[i] * (double)g[i];
    return acc;
}

double optim_clip_factor(double norm, double clip) {
    if (!(clip > 0)) return 1.0;
    double f = clip / (norm + 1e-6);
    return f < 1.0 ? f : 1.0;
}

void optim_adamw_update(const optim_config *c, double lr, int64_t k, int decay,
                        float gscale, float *p, const float *g, float *m,
                        float *v, size_t n) {
    const float b1 = (float)c->beta1, omb1 = (float)(1.0 - c->beta1);
    const float b2 = (float)c->beta2, omb2 = (float)(1.0 - c->beta2);
    const float step = (float)(lr / (1.0 - pow(c->beta1, (double)k)));
    const float bc2s = (float)sqrt(1.0 - pow(c->beta2, (double)k));
    const float eps = (float)c->eps;
    const float keep = (float)(1.0 - lr * c->weight_decay);
    const int wd = decay && c->weight_decay != 0;
    for (size_t i = 0; i < n; i++) {
        float gi = g[i] * gscale;
        float pi = wd ? p[i] * keep : p[i];
        float mi = b1 * m[i] + omb1 * gi;
        float vi = b2 * v[i] + omb2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] = pi - step * mi / (sqrtf(vi) / bc2s + eps);
    }
}

void optim_sgd_update(double lr, double momentum, float gscale, float *p,
                      const float *g, float *buf, size_t n) {
    const float lrf = (float)lr;
    if (momentum > 0) {
        const float mu = (float)momentum;
        for (size_t i = 0; i < n; i++) {
            buf[i] = mu * buf[i] + g[i] * gscale;
            p[i] -= lrf * buf[i];
        }
    } else {
        for (size_t i = 0; i < n; i++) p[i] -= lrf * (g[i] * gscale);
    }
}

void optim_nesterov(double lr, double mu, float *theta, float *v,
                    const float *delta, size_t n) {
    const float lrf = (float)lr, muf = (float)mu;
    if (mu > 0) {
        for (size_t i = 0; i < n; i++) {
            v[i] = muf * v[i] + delta[i];
            theta[i] -= lrf * (delta[i] + muf * v[i]);
        }
    } else {
        for (size_t i = 0; i < n; i++) theta[i] -= lrf * delta[i];
    }
}

/* ---- the inner optimizer ------------------------------------------------- */

static float *zeroed(size_t n) {
    return n ? calloc(n, sizeof(float)) : NULL;
}

optim_state *optim_new(const optim_config *c, const optim_range *ranges,
                       int nranges, char *err, size_t errlen) {
    if (optim_check(c, err, errlen)) return NULL;
    if (nranges < 0 || (nranges > 0 && !ranges)) {
        msg_set(err, errlen, MSG_EINVAL, "optim: %d ranges", nranges);
        return NULL;
    }
    optim_state *o = calloc(1, sizeof *o);
    if (!o) goto oom;
    o->cfg = *c;
    o->nranges = nranges;
    o->ranges = calloc((size_t)nranges + 1, sizeof *o->ranges);
    o->steps = calloc((size_t)nranges + 1, sizeof *o->steps);
    if (!o->ranges || !o->steps) goto oom;
    if (nranges) memcpy(o->ranges, ranges, (size_t)nranges * sizeof *ranges);
    for (int i = 0; i < nranges; i++)
        if (ranges[i].offset + ranges[i].len > o->n)
            o->n = ranges[i].offset + ranges[i].len;
    if (c->kind == OPTIM_ADAMW) {
        o->m = zeroed(o->n);
        o->v = zeroed(o->n);
        if (o->n && (!o->m || !o->v)) goto oom;
    } else if (c->momentum > 0) {
        o->m = zeroed(o->n);
        if (o->n && !o->m) goto oom;
    }
    return o;
oom:
    msg_set(err, errlen, MSG_ENOMEM, "optim: out of memory");
    optim_free(o);
    return NULL;
}

void optim_free(optim_state *o) {
    if (!o) return;
    free(o->ranges);
    free(o->steps);
    free(o->m);
    free(o->v);
    free(o);
}

/* Range index number i of the selection (sel NULL: every range). */
static int pick(const int *sel, int i) {
    return sel ? sel[i] : i;
}

double optim_step(optim_state *o, float *p, const float *g, const int *sel,
                  int nsel, int64_t t) {
    const optim_config *c = &o->cfg;
    if (!sel) nsel = o->nranges;
    double lr = optim_lr_at(c, t);
    float gscale = 1.0f;
    if (c->clip > 0) {
        double ss = 0;
        for (int i = 0; i < nsel; i++) {
            const optim_range *r = &o->ranges[pick(sel, i)];
            ss = optim_sumsq(ss, g + r->offset, r->len);
        }
        gscale = (float)optim_clip_factor(sqrt(ss), c->clip);
    }
    for (int i = 0; i < nsel; i++) {
        int k = pick(sel, i);
        const optim_range *r = &o->ranges[k];
        size_t off = r->offset;
        o->steps[k]++;
        if (c->kind == OPTIM_ADAMW)
            optim_adamw_update(c, lr, o->steps[k], r->decay, gscale, p + off,
                               g + off, o->m + off, o->v + off, r->len);
        else
            optim_sgd_update(lr, c->momentum, gscale, p + off, g + off,
                             o->m ? o->m + off : NULL, r->len);
    }
    return lr;
}

/* 1 when a and b hold every field alike. */
static int same_config(const optim_config *a, const optim_config *b) {
    return a->kind == b->kind && a->lr == b->lr && a->lr_min == b->lr_min &&
           a->warmup == b->warmup && a->total == b->total &&
           a->cosine == b->cosine && a->beta1 == b->beta1 &&
           a->beta2 == b->beta2 && a->eps == b->eps &&
           a->weight_decay == b->weight_decay && a->momentum == b->momentum &&
           a->clip == b->clip;
}

int optim_copy(optim_state *dst, const optim_state *src) {
    if (!same_config(&dst->cfg, &src->cfg) || dst->nranges != src->nranges)
        return MSG_EINVAL;
    for (int i = 0; i < src->nranges; i++) {
        const optim_range *a = &dst->ranges[i], *b = &src->ranges[i];
        if (a->offset != b->offset || a->len != b->len || a->decay != b->decay)
            return MSG_EINVAL;
    }
    if (src->nranges)
        memcpy(dst->steps, src->steps,
               (size_t)src->nranges * sizeof *dst->steps);
    if (src->m) memcpy(dst->m, src->m, src->n * sizeof *dst->m);
    if (src->v) memcpy(dst->v, src->v, src->n * sizeof *dst->v);
    return 0;
}

int64_t optim_range_steps(const optim_state *o, int i) {
    return i >= 0 && i < o->nranges ? o->steps[i] : 0;
}

size_t optim_state_bytes(const optim_state *o) {
    size_t moments = (o->m ? o->n : 0) + (o->v ? o->n : 0);
    return moments * sizeof(float) + (size_t)o->nranges * sizeof(int64_t);
}
