/*
 * scenario_train.h -- the "train" section of a scenario: the numerics of
 * `dilosim train` and of the trainings of `dilosim report`, kept apart
 * from the timing config (scenario.h), which the engine reads.
 *
 * The one file of the config that includes a trainer header:
 * models/train_config.h, the trainer's plain-data input.  The loader
 * calls nothing of models/: it checks every condition the trainer's own
 * checks would test, each at its key, and the adapter (sim/adapter/
 * coupled.h) builds the trainer from a section loaded here.
 *
 * Every load of a scenario (scn_load, scn_doc_load, ...) validates its
 * train section, with the same messages; the loaders below also hand it
 * out, next to the timing config.
 */
#ifndef DILOSIM_SCENARIO_TRAIN_H
#define DILOSIM_SCENARIO_TRAIN_H

#include <stddef.h>

#include "models/train_config.h"
#include "sim/config/scenario.h"

/* What `dilosim train` evaluates at each report ("train.eval"): the outer
 * parameters always; replica 0 and the replicas' average on request. */
enum { SCN_EVAL_OUTER = 1, SCN_EVAL_REPLICA = 2, SCN_EVAL_AVERAGE = 4 };

typedef struct scn_train {
    /* has_train 0: no section, and train holds TRAIN_CONFIG_DEFAULT
     * untouched.  has_train 1: train is complete and consistent
     * (train_new should accept it): replicas = workers.count, steps, seed
     * (model initialisation and data), sched (normalised; sched.layers =
     * the trained model's blocks, or units with "units": "own"), codec
     * and dp_codec come from the scenario's own keys, the rest from the
     * section.  train.data.path is always NULL (a pointer into the struct
     * would dangle in a copy): for text data set train.data.path =
     * train_data_path on the copy you pass to train_new. */
    int has_train;
    train_config train;
    char train_data_path[SCN_PATH_MAX]; /* resolved against the scenario
                                           file's directory; "" none.  The
                                           loader checked it is a readable
                                           file long enough for the
                                           shards, eval tail and seq */
    unsigned train_eval;                /* SCN_EVAL_* bits; OUTER always set */
    double target_loss; /* train.target_loss: the outer eval loss to
                                reach, nats; NAN: none */
} scn_train;

/* Fills t with the defaults of a scenario without a train section. */
void scn_train_defaults(scn_train *t);

/* scn_load_variant (variant NULL: the base) that also fills *train with
 * the train section (train NULL: scn_load_variant itself).  Returns 0, or
 * the code with the message in err; on error *cfg and *train are left
 * untouched. */
int scn_load_train(const char *path, const char *variant,
                   const char *const *sets, int nset, scn_config *cfg,
                   scn_train *train, char *err, size_t errlen);

/* scn_doc_load_from that also fills *train (NULL: as scn_doc_load_from). */
int scn_doc_load_train_from(const scn_doc *doc, const char *const *more,
                            const scn_origin *from, int nmore, scn_config *out,
                            scn_train *train, char *err, size_t errlen);

/* The same from a string, as scn_load_string (train NULL: that one). */
int scn_load_string_train(const char *text, const char *name,
                          const char *const *sets, int nset, scn_config *cfg,
                          scn_train *train, char *err, size_t errlen);

#endif
