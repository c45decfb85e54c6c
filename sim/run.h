/*
 * run.h -- one simulated training run: a scenario in, figures out.
 *
 * run_simulate builds the world of a scenario (workers with their compute
 * DAG, WAN links, the collective stream, failure processes, the method's
 * schedule), runs the event loop to the end of the last inner step and of
 * every sync that step needs, and fills a run_result.  Same config, same
 * result, bit for bit.
 */
#ifndef DILOSIM_RUN_H
#define DILOSIM_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

typedef struct {
    double utilization;     /* compute-busy time / wall time, 0..1 */
    double compute_time_s;  /* s of compute (including lost work) */
    double bytes_sent;      /* bytes this worker put on its up link */
    double bytes_received;  /* bytes that came in over its down link */
    double lost_compute_s;  /* s of compute whose result was lost */
    int64_t failures;
} run_worker;

typedef struct {
    int workers;
    int64_t steps;              /* inner steps of the scenario */
    int finished;               /* 1 when every live worker did them all */
    double wall_time_s;         /* s from start to the last step's end */
    double compute_time_s;      /* s of compute, summed over workers */
    double compute_utilization; /* compute_time / (workers * wall), 0..1 */
    double bytes_sent_total;    /* bytes put on the WAN by all workers */
    double peak_link_gbps;      /* highest instantaneous rate of any link */
    double avg_link_gbps;       /* bytes_sent_total*8 / wall / workers */
    int64_t syncs;              /* completed syncs: DP steps, DiLoCo outer
                                   steps, streaming fragment syncs */
    int64_t failures;
    double lost_compute_s;      /* s of compute redone or discarded */
    double recovery_bytes;      /* bytes downloaded by repaired workers */
    double step_time_s;         /* compute time of one step at speed 1 */
    uint64_t events;            /* events processed by the queue */
    run_worker per_worker[SCN_MAX_WORKERS];
} run_result;

/* What a timeline sink receives: one span of one worker.  track 0 is
 * compute, track 1 communication.  name is e.g. "forward", "backward_act",
 * "backward_param", "allreduce", "recovery"; layer is -1 where it does not
 * apply. */
typedef struct {
    int worker, track, layer;
    const char *name;
    int64_t step;
    int64_t start_ns, end_ns;
} run_span;

typedef struct {
    void (*span)(void *ctx, const run_span *s);      /* NULL: no timeline */
    void *span_ctx;
    void (*progress)(void *ctx, double fraction);    /* NULL: none; called
                                                        about 100 times */
    void *progress_ctx;
} run_hooks;

/* Runs a validated scenario.  hooks may be NULL.  Returns 0, or -1 with a
 * message in err (out of memory, unreadable fault trace). */
int run_simulate(const scn_config *cfg, const run_hooks *hooks,
                 run_result *out, char *err, size_t errlen);

/* Bytes of one layer's payload under a codec: the layer holds
 * sched-independent n_l = floor((l+1)*N/L) - floor(l*N/L) of the model's N
 * parameters, as rows of `hidden` values. */
uint64_t run_layer_bytes(const scn_config *cfg, codec_spec codec, int l);

#endif
