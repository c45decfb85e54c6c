/*
 * coupled.h -- a coupled run: the event engine drives the trainer.
 *
 * The one place where sim/ (time) meets models/train (arithmetic).  The
 * scenario's timing world (model.params, layers, step time, workers,
 * network, faults, method) runs on the event engine (run.h); at the
 * instants its observer reports, this adapter makes the trainer calls of
 * the scenario's "train" section (docs/architecture.md, "Semantics both
 * halves share"):
 *
 *   step computed  train_inner_step of that replica
 *   contributed    train_contribute (its payload, encoded now)
 *   synced         train_reduce over the members, each replica merging
 *                  just before the step the engine names
 *   rejoined       train_rejoin: the outer parameters, the inner optimizer
 *                  state of the lowest live replica, the group's step
 *   DP checkpoint  the state after the checkpoint step's update is kept;
 *   DP rollback    ... and put back.
 *
 * So the clock comes from the simulated model and the loss from the small
 * trained one.  With blocking syncs and no failures the trainer sees
 * exactly the calls of the lockstep driver, in an order that gives the
 * same bits: cpl_lockstep runs that reference.
 *
 * Reports.  After every train.eval_interval steps t (and after the last),
 * one row: it is complete once every worker in the group has finished
 * step t and every sync applied by step t (take + tau <= t) has been
 * reduced; its instant is sim_time_s.  Its figures are those of step t
 * whatever the faster replicas did meanwhile: the mean of the replicas'
 * losses at their step t, the gradients they had computed by then, the
 * bytes of the syncs taken by step t, and the outer parameters as of step
 * t (evaluated before a later sync changes them).  The replica and
 * average evaluations take each replica as it starts step t + 1 (its
 * merges due by then landed): a copy made then when it runs ahead, else
 * the replica itself at the row's instant.  So with blocking syncs and no
 * failures every column equals lockstep's, whatever the speeds.  After a
 * DP rollback the redone steps report again, at their new instants.
 *
 * Failures.  A worker that fails loses its replica; when it rejoins, the
 * replica heals from the outer parameters (train_rejoin), and a payload
 * it had sent before failing stays in its sync: the reduce averages the
 * payloads of the members the engine names (those that took part in
 * every layer of the sync).
 */
#ifndef DILOSIM_COUPLED_H
#define DILOSIM_COUPLED_H

#include <stdint.h>

#include "sim/engine/run.h"
#include "sim/config/scenario.h"
#include "sim/config/scenario_train.h"

/* One report.  The sim_* fields are NAN (wan_bytes 0) in a lockstep run. */
typedef struct {
    int64_t step;            /* inner steps done by the group */
    uint64_t tokens;         /* training tokens consumed, all replicas */
    double train_loss;       /* mean of the replicas' losses at step */
    double eval_loss;        /* of the outer parameters, nats */
    double replica_loss;     /* of replica 0 (SCN_EVAL_REPLICA), or NAN */
    double average_loss;     /* of the replicas' mean (..._AVERAGE), NAN */
    uint64_t bytes_sent;     /* bytes the trained replicas have sent */
    double entropy_floor;    /* the eval chain's entropy rate, or NAN */
    double sim_time_s;       /* simulated instant of the row */
    double sim_utilization;  /* compute so far / (workers * sim_time) */
    double delay_mean_steps; /* effective sync delays so far: mean, */
    int64_t delay_max_steps; /*   and maximum (0 before any sync) */
    uint64_t wan_bytes;      /* bytes the simulated model has sent */
} cpl_row;

/* Called with each row; return 0 to go on, non-zero to stop the run (a
 * write error: cpl_run then returns MSG_EIO with errno's message). */
typedef int (*cpl_row_fn)(const cpl_row *r, void *ctx);

/* What a run ends with, besides its rows. */
typedef struct {
    run_result sim;       /* the timing world (zero in a lockstep run) */
    cpl_row last;         /* the last row (none: step 0, NAN losses
                                 and sim_time_s) */
    double target_loss;   /* train.target_loss, or NAN */
    int64_t target_step;  /* the first row at or below it; -1: never */
    double target_time_s; /* its sim_time_s (lockstep: NAN) */
    size_t params;        /* of one trained replica */
    double entropy_floor; /* the eval chain's entropy rate, or NAN */
} cpl_summary;

/* Options of a run: the scenario's timing config and its train section,
 * loaded together (scn_load_train); it must have one (has_train). */
typedef struct {
    const scn_config *cfg;
    const scn_train *train; /* what is evaluated: train->train_eval */
    cpl_row_fn row;         /* may be NULL */
    void *row_ctx;
    void (*progress)(void *ctx, double fraction); /* may be NULL */
    void *progress_ctx;
} cpl_options;

/* Runs the coupled training of o->train on o->cfg and fills *out.  Returns 0, or a
 * negative code of sim/base/msg.h with a one-line message in err:
 *   MSG_EINPUT  the train section cannot be built (train_new refused it)
 *   MSG_EFAIL   the training failed: a non-finite loss, a trainer call
 *               refused (an engine bug, caught by the trainer's checks)
 *   MSG_EIO     the row callback stopped it (errno's message)
 *   MSG_ENOMEM  out of memory
 * A timing world that cannot finish (run.h) is not an error: out->sim
 * says finished 0 and why, and the rows so far were written. */
int cpl_run(const cpl_options *o, cpl_summary *out, char *err, size_t errlen);

/* The same training driven in lockstep by train_run (the reference of
 * the tests): no clock, no failures; the sim_* fields are NAN. */
int cpl_lockstep(const cpl_options *o, cpl_summary *out, char *err,
                 size_t errlen);

/* Training FLOPs of one replica's inner step of the train section t
 * (nn_flops_per_step), from a model built for the purpose; 0 when it
 * cannot be built. */
double cpl_flops_per_step(const train_config *t);

/* Ends the BLAS backend's own threads, started as it loaded
 * (tn_blas_start): what a command calls first, once. */
void cpl_blas_start(void);

#endif
