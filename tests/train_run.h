/*
 * train_run.h -- one coupled (or lockstep) training run of a scenario
 * text with --set overrides, for the codec suites (header-only).
 */
#ifndef DILOSIM_TRAIN_RUN_H
#define DILOSIM_TRAIN_RUN_H

#include <check.h>
#include <stdlib.h>

#include "sim/adapter/coupled.h"

/* scenarios/train/mlp_smoke.json, inline: two replicas of a small MLP
 * (vocab 32, d 32, 2 blocks, hidden 128), streaming with 2 fragments and
 * tau 1, H 10, 30 steps, an eval every 10. */
#define TRAIN_RUN_SMOKE                                                        \
    "{\"workers\": {\"count\": 2},"                                            \
    " \"method\": {\"name\": \"streaming\", \"H\": 10, \"fragments\": 2,"      \
    "  \"tau\": 1, \"alpha\": 0.5, \"dp_bucket_mb\": 0, \"bucket_mb\": 0},"    \
    " \"steps\": 30, \"seed\": 1,"                                             \
    " \"train\": {\"model\": {\"kind\": \"mlp\", \"vocab\": 32, \"d\": 32,"    \
    "   \"layers\": 2, \"mlp_ratio\": 4},"                                     \
    "  \"data\": {\"kind\": \"markov\", \"successors\": 4},"                   \
    "  \"batch\": 8, \"seq\": 16, \"threads\": 1,"                             \
    "  \"inner\": {\"optimizer\": \"adamw\", \"lr\": 3e-3, \"warmup\": 5},"    \
    "  \"outer\": {\"lr\": 0.7, \"momentum\": 0.9},"                           \
    "  \"eval_interval\": 10, \"eval_batches\": 2, \"eval\": [\"outer\"]}}"

/* Runs `doc` (named s.json) with the n overrides sets, coupled or
 * lockstep, each row to row(ctx) when row is not NULL; fails the test on
 * any error. */
static inline cpl_summary train_run(const char *doc, const char *const *sets,
                                    int n, int lockstep, cpl_row_fn row,
                                    void *ctx) {
    scn_config *cfg = malloc(sizeof *cfg);
    scn_train *sec = malloc(sizeof *sec);
    ck_assert(cfg && sec);
    char err[512];
    int rc = scn_load_string_train(doc, "s.json", sets, n, cfg, sec, err,
                                   sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    cpl_options o = {.cfg = cfg, .train = sec, .row = row, .row_ctx = ctx};
    cpl_summary s;
    rc = lockstep ? cpl_lockstep(&o, &s, err, sizeof err)
                  : cpl_run(&o, &s, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    free(cfg);
    free(sec);
    return s;
}

#endif
