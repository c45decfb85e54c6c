/*
 * train_config.h -- what a trainer is made of (models/train.h): the
 * configuration, the pluggable replica model, and their defaults.
 *
 * Kept apart from the trainer's calls so that a scenario loader can hold
 * a train_config without seeing the trainer: only the coupled-run adapter
 * (sim/adapter/coupled.c) drives one.
 */
#ifndef DILOSIM_TRAIN_CONFIG_H
#define DILOSIM_TRAIN_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/codec.h"
#include "models/data.h"
#include "models/nn.h"
#include "models/optim.h"
#include "sim/base/schedule.h"

#define TRAIN_MAX_REPLICAS 64      /* participant masks are uint64_t */
#define TRAIN_MAX_SITE_REPLICAS 64 /* G, the replicas of one site */
#define TRAIN_MAX_SHARDS 1024      /* M x G, the data shards of a run */

typedef enum { TRAIN_MAP_JOIN = 0, TRAIN_MAP_OWN = 1 } train_map;

/* What a coupled run refuses of a replica whose sync result is late (see
 * "Coupled runs" above). */
typedef enum { TRAIN_LATE_WAIT = 0, TRAIN_LATE_CONTINUE = 1 } train_late;

typedef enum {
    TRAIN_MODEL_NN = 0,    /* nn.h, from train_config.nn */
    TRAIN_MODEL_TOY = 1,   /* constant gradient, from train_config.toy */
    TRAIN_MODEL_CUSTOM = 2 /* custom_ops with custom_cfg */
} train_model_kind;

/* A pluggable replica model.  Every function gets the object `create`
 * returned.  Implementations must be usable from several threads at once
 * on distinct objects, and `eval` on one object while other objects read
 * the same `params`.  Between a `grad` and the next, the trainer uses the
 * gradient buffer as scratch (grad overwrites it anyway). */
typedef struct {
    const char *name;
    /* A replica for batches of batch x seq tokens, parameters initialised
     * deterministically from seed (same seed, same values).  NULL with a
     * one-line reason in err. */
    void *(*create)(const void *cfg, int batch, int seq, uint64_t seed,
                    char *err, size_t errlen);
    void (*destroy)(void *model);
    float *(*params)(void *model);
    float *(*grads)(void *model);
    size_t (*num_params)(const void *model);
    int (*num_units)(const void *model);
    /* Offset (floats) of unit u; units are contiguous, back to back. */
    size_t (*unit_offset)(const void *model, int u);
    /* Tensors of unit u (offsets relative to the unit), as in nn.h. */
    int (*unit_tensors)(const void *model, int u, const nn_tensor **t);
    /* Token ids the model accepts: 0..vocab-1 (0: it ignores tokens). */
    int (*vocab)(const void *model);
    /* Forward + backward on one batch (x, y: batch*seq ids, NULL when the
     * data kind is DATA_NONE): OVERWRITES the gradients, returns the mean
     * loss (NAN on failure). */
    float (*grad)(void *model, const int32_t *x, const int32_t *y);
    /* The mean loss of the vector `params` (laid out like this model's)
     * on one batch, using this model's buffers only. */
    float (*eval)(void *model, const float *params, const int32_t *x,
                  const int32_t *y);
    /* Optional (NULL: none).  0 when `create` accepts cfg, batch and seq,
     * so that a NULL from it means out of memory; else non-zero with a
     * one-line reason in err.  Without it every failure of `create`
     * counts as a bad configuration. */
    int (*check)(const void *cfg, int batch, int seq, char *err, size_t errlen);
} train_model_ops;

/* The toy of the golden vectors: `units` units of one parameter each,
 * every one starting at `init`; loss = grad * sum(params), so the
 * gradient is `grad` everywhere whatever the data. */
typedef struct {
    int units;  /* >= 1 [2] */
    float grad; /* [2] */
    float init; /* [1] */
} train_toy_config;

extern const train_model_ops train_nn_ops;  /* cfg: const nn_config * */
extern const train_model_ops train_toy_ops; /* cfg: const train_toy_config * */

/* Everything a run needs.  A plain struct: train_config_default fills the
 * defaults in brackets; a loader then overrides fields. */
typedef struct {
    int replicas;      /* M, 1..TRAIN_MAX_REPLICAS [2] */
    int site_replicas; /* G, 1..TRAIN_MAX_SITE_REPLICAS with M x G <=
                              TRAIN_MAX_SHARDS: each of the M members is a
                              site of G replicas that are data-parallel
                              inside it (one parameter copy, G data shards,
                              the G gradients averaged every inner step);
                              the method's syncs are between the M sites
                              [1] */
    int threads;       /* threads stepping replicas, >= 1; more than
                              M are not used [2] */
    uint64_t seed;     /* model initialisation (every replica and the
                              outer parameters start equal) [1] */
    int64_t steps;     /* inner steps of train_run, >= 1; syncs whose
                              apply step would exceed it are not taken
                              [1000] */
    int batch, seq;    /* sequences per batch and tokens per sequence
                              (inputs; each sequence reads seq + 1 tokens)
                              [8, 64] */

    train_model_kind model;            /* [TRAIN_MODEL_NN] */
    nn_config nn;                      /* [transformer, vocab 64, d 64,
                                      heads 4, layers 4, ctx 64,
                                      mlp_ratio 4] */
    train_toy_config toy;              /* [units 2, grad 2, init 1] */
    const train_model_ops *custom_ops; /* TRAIN_MODEL_CUSTOM [NULL] */
    const void *custom_cfg;            /* passed to custom_ops->create, during
                                      train_new only [NULL] */

    data_config data; /* data_config_default [Markov, V 64, K 4,
                              seed 1]; its vocab must be <= the model's */

    sched_spec sched; /* method, H, P, tau, alpha, layout, order
                              [streaming, H 100, P 2, tau 1, alpha 0.5,
                              strided, ascending]; sched.layers is ignored
                              (set from the model and `map`) */
    int tau_extra[TRAIN_MAX_REPLICAS]; /* per-worker taus: replica r merges
                              a sync's result tau_extra[r] steps after the
                              schedule's tau (its payload is taken with
                              everyone's, sched.tau before the sync step)
                              [0] */
    train_map map;                     /* [TRAIN_MAP_JOIN] */
    int fedpart;         /* 1: FedPart baseline (not with DP) [0] */
    codec_spec codec;    /* pseudo-gradient payloads [fp32, block 0] */
    codec_spec dp_codec; /* DP gradient payloads [fp32, block 0] */

    optim_config inner;    /* optim_config_default [AdamW lr 4e-4,
                              betas 0.9 0.95, eps 1e-8, wd 0.1, clip 1,
                              cosine to 0, no warmup]; total 0 = steps */
    double outer_lr;       /* >= 0 [0.7] */
    double outer_momentum; /* Nesterov mu in [0, 1) [0.9] */

    int64_t eval_interval; /* train_run reports after every eval_interval
                              steps and after the last; 0: only after the
                              last [100] */
    int eval_batches;      /* batches of the fixed eval set, >= 1 (not
                              used with DATA_NONE, which evaluates once)
                              [4] */
    train_late late;       /* which orders of the coupled calls are
                              refused; train_step and train_run ignore it
                              [TRAIN_LATE_WAIT] */
} train_config;

/* The defaults listed above, as an initializer: train_config_default's,
 * and those of a scenario's train section (sim/config/scenario_train.h),
 * which calls nothing of models/. */
#define TRAIN_CONFIG_DEFAULT                                                   \
    {                                                                          \
        .replicas = 2, .site_replicas = 1, .threads = 2, .seed = 1,            \
        .steps = 1000, .batch = 8, .seq = 64, .model = TRAIN_MODEL_NN,         \
        .nn = {.kind = NN_TRANSFORMER,                                         \
               .vocab = 64,                                                    \
               .d = 64,                                                        \
               .heads = 4,                                                     \
               .layers = 4,                                                    \
               .ctx = 64,                                                      \
               .mlp_ratio = 4},                                                \
        .toy = {.units = 2, .grad = 2, .init = 1},                             \
        .data = DATA_CONFIG_DEFAULT,                                           \
        .sched = {.method = SCHED_STREAMING,                                   \
                  .layers = 0,                                                 \
                  .H = 100,                                                    \
                  .P = 2,                                                      \
                  .tau = 1,                                                    \
                  .alpha = 0.5,                                                \
                  .subset = SCHED_SUBSET_DEFAULT,                              \
                  .layout = SCHED_STRIDED,                                     \
                  .order = SCHED_ASCENDING,                                    \
                  .overlap = SCHED_INNER,                                      \
                  .rule = SCHED_RULE_PAPER},                                   \
        .map = TRAIN_MAP_JOIN,                                                 \
        .codec = {.kind = CODEC_FP32, .demo_beta = CODEC_DEMO_BETA},           \
        .dp_codec = {.kind = CODEC_FP32, .demo_beta = CODEC_DEMO_BETA},        \
        .inner = OPTIM_CONFIG_DEFAULT, .outer_lr = 0.7, .outer_momentum = 0.9, \
        .eval_interval = 100, .eval_batches = 4, .late = TRAIN_LATE_WAIT       \
    }

/* Fills *c with the defaults listed above (TRAIN_CONFIG_DEFAULT). */
void train_config_default(train_config *c);

#endif
