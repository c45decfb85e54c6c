/*
 * memory.h -- the accelerator memory one worker (one replica of the
 * model) needs before activations, from the config alone.
 *
 * Conventions, per parameter of the model's N (model.params, rounded to a
 * whole count, every layer its floor((l+1)N/L) - floor(lN/L) as in
 * payload.h):
 *
 *     parameters        bf16        2 B
 *     gradients         bf16        2 B
 *     inner optimizer   AdamW m, v  8 B  (two fp32 moments)
 *     outer parameters  fp32        4 B  (not DP)
 *     outer momentum    fp32        4 B  (not DP: outer Nesterov)
 *
 * so DP needs 12 B per parameter (3x an fp32 copy of the model) and
 * DiLoCo and Streaming DiLoCo 20 B (5x).
 *
 * Offloading (method.offload_outer, not DP): the outer parameters and
 * momentum of the whole model live in host memory (8 B x N there) and
 * only the fragments "in flight" are on the accelerator.  A sync of
 * fragment j applied after step a is taken after step a - d (d =
 * sched_delay: tau, or H with outer or eager overlap); its fragment is on
 * the accelerator from the start of step a - d until the end of the step
 * at which the worker applies it, a - d + d_w (d_w = d plus the worker's
 * extra tau, method.tau per worker; the largest of the workers is
 * reported), so over the steps [a - d, a - d + d_w].  The accelerator then
 * holds
 *
 *     8 B x (the most fragments whose windows overlap at one step)
 *         x (the largest fragment's parameters)
 *
 * of outer state: a bound that is the peak when the fragments are of one
 * size (a fragment of several syncs at once counts once).  The windows
 * are those of the run: syncs taken after a step >= 1 whose apply step
 * is at most `steps` (schedule.h), the window cut at the last step.
 */
#ifndef DILOSIM_MEMORY_H
#define DILOSIM_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/base/jw.h"
#include "sim/config/scenario.h"

#define MEM_PARAM_BYTES 2    /* bf16 parameters */
#define MEM_GRAD_BYTES 2     /* bf16 gradients */
#define MEM_ADAMW_BYTES 8    /* fp32 m and v */
#define MEM_OUTER_BYTES 4    /* fp32 outer parameters */
#define MEM_MOMENTUM_BYTES 4 /* fp32 outer momentum */

typedef struct {
    uint64_t params;                 /* N */
    uint64_t parameters_bytes;       /* 2 N */
    uint64_t gradients_bytes;        /* 2 N */
    uint64_t inner_optimizer_bytes;  /* 8 N */
    uint64_t outer_parameters_bytes; /* on the accelerator: 4 N; DP 0;
                                        offloaded 4 x in flight x largest */
    uint64_t outer_momentum_bytes;   /* the same */
    uint64_t accelerator_bytes;      /* the sum of the five */
    int offload;                     /* 1: method.offload_outer, not DP */
    uint64_t host_bytes;             /* offload: 8 N; else 0 */
    int fragments;                   /* P (DP: 1) */
    int in_flight;                   /* offload: the most fragments on the
                                        accelerator at once; else 0 */
    uint64_t fragment_params;        /* the largest fragment's parameters
                                        (DP, DiLoCo: N) */
} mem_worker;

/* The memory of a worker of a validated config.  Returns 0, or a MSG_E*
 * code (MSG_EINPUT: a schedule the config cannot have; MSG_ENOMEM) with
 * a one-line message. */
int mem_worker_of(const scn_config *c, mem_worker *out, char *err,
                  size_t errlen);

/* The most fragments on the accelerator at one step (see above) of a
 * normalised schedule s that is not DP, for a worker whose tau is the
 * schedule's plus extra (>= 0), in a run of `steps` steps (>= 1): into
 * *out.  Returns 0, or MSG_ENOMEM with a message. */
int mem_in_flight(const sched_spec *s, int extra, int64_t steps, int *out,
                  char *err, size_t errlen);

/* The parameters of the largest fragment of normalised schedule s over
 * config c's layers (layout sliced: 1/P of every layer).  Returns 0, or
 * MSG_ENOMEM with a message. */
int mem_largest_fragment(const scn_config *c, const sched_spec *s,
                         uint64_t *out, char *err, size_t errlen);

/* Accelerator bytes per parameter: accelerator_bytes / params (0 for no
 * parameters). */
double mem_bytes_per_param(const mem_worker *m);

/* Writes m as member key (NULL: an element) of w's open container, one
 * inline JSON object: the five
 * *_bytes parts, "accelerator_bytes", "bytes_per_param", "offload_outer",
 * and with offloading "host_bytes", "fragments_in_flight" and
 * "fragment_params". */
void mem_write_json(jw *w, const char *key, const mem_worker *m);

#endif
