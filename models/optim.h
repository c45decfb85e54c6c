/*
 * optim.h -- the optimizers of the numerics half: inner AdamW and plain
 * SGD (with an optional momentum), their learning-rate schedule and
 * global-norm gradient clipping, and the outer Nesterov SGD of DiLoCo.
 *
 * Parameters are one flat FP32 vector cut into ranges (the tensors of a
 * model, see nn_unit_tensors); each range carries a weight-decay flag
 * and its own AdamW step count, so an optimizer may update any subset of
 * ranges at a step (FedPart trains one fragment at a time) and bias
 * correction still counts the updates each range has actually had.
 *
 * Formulas (all element arithmetic in FP32; scalars derived once per call
 * in double and rounded to FP32; g below is the clipped gradient):
 *
 *   schedule   step t = 1, 2, ... (the step about to be taken):
 *                t <= W:  lr * t / W                 (linear warmup)
 *                cosine:  p = min(1, (t - W) / (total - W)),
 *                         lr_min + (lr - lr_min) * (1 + cos(pi p)) / 2
 *                         (lr_min from t >= total; total <= W: lr_min)
 *                else:    lr                         (constant)
 *   clipping   norm = sqrt(sum g^2) over the updated ranges, summed in
 *              double in index order; with clip > 0 and
 *              c = clip / (norm + 1e-6) < 1 (PyTorch clip_grad_norm_),
 *              g = g * c in FP32 before the update.
 *   AdamW      (PyTorch torch.optim.AdamW, decoupled weight decay)
 *                p = p * (1 - lr * wd)             (decay ranges only)
 *                m = b1 * m + (1 - b1) * g
 *                v = b2 * v + (1 - b2) * g * g
 *                p = p - (lr / (1 - b1^k)) * m
 *                        / (sqrt(v) / sqrt(1 - b2^k) + eps)
 *              k = the range's own update count, 1 at its first update.
 *   SGD        (PyTorch torch.optim.SGD, dampening 0, no Nesterov, no
 *              weight decay)
 *                momentum mu > 0:  b = mu * b + g;  p = p - lr * b
 *                mu = 0:           p = p - lr * g
 *   Nesterov   outer step, PyTorch SGD(nesterov=True, dampening=0):
 *                v = mu * v + delta;  theta = theta - lr * (delta + mu * v)
 *              mu = 0 is plain SGD (no buffer needed); lr 1 is allowed.
 *
 * No global state; no allocation after optim_new.
 */
#ifndef DILOSIM_OPTIM_H
#define DILOSIM_OPTIM_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/msg.h" /* the codes returned */

typedef enum { OPTIM_ADAMW = 0, OPTIM_SGD = 1 } optim_kind;

/* The inner optimizer.  Defaults (optim_config_default) in brackets: the
 * AdamW settings of public DiLoCo reproductions. */
typedef struct {
    optim_kind kind;     /* [OPTIM_ADAMW] */
    double lr;           /* peak learning rate, >= 0 [4e-4] */
    double lr_min;       /* cosine floor, 0 <= lr_min <= lr [0] */
    int64_t warmup;      /* W: linear warmup steps, >= 0 [0] */
    int64_t total;       /* steps of the whole schedule, >= 0; 0 = let
                             the caller fill it (the trainer uses its run
                             length) [0] */
    int cosine;          /* 1: cosine decay to lr_min after warmup;
                             0: constant lr after warmup [1] */
    double beta1, beta2; /* AdamW, each in [0, 1) [0.9, 0.95] */
    double eps;          /* AdamW, > 0 [1e-8] */
    double weight_decay; /* AdamW, decoupled, decay ranges only, >= 0
                             [0.1]; SGD ignores it */
    double momentum;     /* SGD, in [0, 1) [0]; AdamW ignores it */
    double clip;         /* global gradient-norm bound, >= 0; 0 = off
                             [1.0] */
} optim_config;

/* One contiguous run of parameters (usually one tensor). */
typedef struct {
    size_t offset, len; /* in floats, into the parameter vector */
    int decay;          /* 1: AdamW weight decay applies */
} optim_range;

typedef struct optim_state optim_state;

/* The defaults listed above, as an initializer (optim_config_default's,
 * and the train section's of a scenario). */
#define OPTIM_CONFIG_DEFAULT                                                   \
    {                                                                          \
        .kind = OPTIM_ADAMW, .lr = 4e-4, .lr_min = 0, .warmup = 0, .total = 0, \
        .cosine = 1, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8,                 \
        .weight_decay = 0.1, .momentum = 0, .clip = 1.0                        \
    }

/* Fills *c with the defaults listed above. */
void optim_config_default(optim_config *c);

/* Checks a configuration: 0, or MSG_EINPUT with a one-line reason in
 * err (when err is not NULL). */
int optim_check(const optim_config *c, char *err, size_t errlen);

/* ---- building blocks (pure functions) ------------------------------------ */

/* The learning rate of step t (t >= 1) under c's schedule (see above). */
double optim_lr_at(const optim_config *c, int64_t t);

/* Sum of squares of g[0..n), in double, in index order, added to acc. */
double optim_sumsq(double acc, const float *g, size_t n);

/* The clipping factor for a gradient of global norm `norm`: clip /
 * (norm + 1e-6) when clip > 0 and that is < 1, else 1. */
double optim_clip_factor(double norm, double clip);

/* One AdamW update of p[0..n) with gradient g * gscale (gscale the
 * clipping factor), moments m and v, learning rate lr, update count k >= 1
 * for the bias corrections and decay 0/1.  Hyper-parameters from c. */
void optim_adamw_update(const optim_config *c, double lr, int64_t k, int decay,
                        float gscale, float *p, const float *g, float *m,
                        float *v, size_t n);

/* One SGD update of p[0..n) with gradient g * gscale; buf (n floats) is
 * the momentum buffer, required when momentum > 0, unused otherwise. */
void optim_sgd_update(double lr, double momentum, float gscale, float *p,
                      const float *g, float *buf, size_t n);

/* One outer Nesterov step on theta[0..n) with pseudo-gradient delta and
 * momentum buffer v (required when mu > 0, may be NULL when mu == 0). */
void optim_nesterov(double lr, double mu, float *theta, float *v,
                    const float *delta, size_t n);

/* ---- an inner optimizer over a parameter vector -------------------------- */

/* An optimizer for a vector cut into nranges ranges (copied; they must not
 * overlap).  Allocates the moments (AdamW: m and v; SGD: a momentum
 * buffer when momentum > 0, else nothing) for the largest offset + len,
 * zeroed, and update counts at 0.  NULL (with a reason in err) when c is
 * invalid or memory runs out. */
optim_state *optim_new(const optim_config *c, const optim_range *ranges,
                       int nranges, char *err, size_t errlen);

/* Frees everything; NULL is allowed. */
void optim_free(optim_state *o);

/* One step at schedule step t >= 1 on the ranges listed in sel[0..nsel)
 * (indices into the ranges given to optim_new; sel NULL: every range):
 * clips over those ranges' gradients, updates their parameters and adds
 * one to their update counts.  g is read only.  Returns the learning rate
 * used. */
double optim_step(optim_state *o, float *p, const float *g, const int *sel,
                  int nsel, int64_t t);

/* Makes dst a copy of src: the update counts and the moment buffers (m,
 * v, or the momentum buffer), so both then take the same steps from the
 * same parameters and gradients.  Both must have the same configuration
 * (every optim_config field) and the same ranges (offsets, lengths and
 * decay flags, in order): MSG_EINVAL otherwise, dst unchanged.  No
 * allocation. */
int optim_copy(optim_state *dst, const optim_state *src);

/* The update count of range i (AdamW's bias-correction step). */
int64_t optim_range_steps(const optim_state *o, int i);

/* Bytes of optimizer state held (moments and counts), for memory reports. */
size_t optim_state_bytes(const optim_state *o);

#endif
