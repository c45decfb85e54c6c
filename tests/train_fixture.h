/*
 * train_fixture.h -- the trainer configurations the trainer's suites
 * share (test_train.c, test_train_calls.c, test_train_sites.c): a
 * schedule spec of five values and a tiny transformer on a 16-token
 * Markov chain.
 */
#ifndef DILOSIM_TESTS_TRAIN_FIXTURE_H
#define DILOSIM_TESTS_TRAIN_FIXTURE_H

#include "models/train.h"

/* A schedule: method, H, fragments, tau, alpha (strided, ascending,
 * inner overlap, the paper's rule). */
static inline sched_spec spec(sched_method m, int H, int P, int tau,
                              double alpha) {
    sched_spec s = {m,
                    0,
                    H,
                    P,
                    tau,
                    alpha,
                    SCHED_STRIDED,
                    SCHED_ASCENDING,
                    SCHED_INNER,
                    SCHED_RULE_PAPER,
                    SCHED_SUBSET_DEFAULT};
    return s;
}

/* A tiny transformer on a 16-token Markov chain: 2 replicas on 2
 * threads, 24 steps of 4 x 8 tokens, overlapped Streaming DiLoCo (H 6,
 * 2 fragments, tau 1, alpha 0.5), AdamW lr 3e-3 with 2 warmup steps, a
 * report every 6 steps on 2 eval batches. */
static inline train_config nn_cfg(void) {
    train_config c;
    train_config_default(&c);
    c.replicas = 2;
    c.threads = 2;
    c.steps = 24;
    c.batch = 4;
    c.seq = 8;
    nn_config nn = {NN_TRANSFORMER, 16, 16, 2, 4, 8, 2};
    c.nn = nn;
    c.data.vocab = 16;
    c.data.successors = 3;
    c.data.seed = 3;
    c.sched = spec(SCHED_STREAMING, 6, 2, 1, 0.5);
    c.inner.lr = 3e-3;
    c.inner.warmup = 2;
    c.eval_interval = 6;
    c.eval_batches = 2;
    return c;
}

#endif
