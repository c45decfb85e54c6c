/*
 * run.h -- one simulated training run: a scenario in, figures out.
 *
 * run_simulate builds the world of a scenario (workers with their compute
 * DAG, WAN links, the collective stream, failure processes, the method's
 * schedule), runs the event loop to the end of the last inner step and of
 * every sync that step needs (cfg->measure steady: of every sync taken
 * after a step up to the last), and fills a run_result.  Same config, same
 * result, bit for bit; with cfg->full or without (the engine then
 * fast-forwards where that gives the same result: fastfwd.c).
 *
 * Units: times are integer nanoseconds (the *_ns fields; the *_s fields
 * are the same values in seconds, for arithmetic), bytes are whole bytes.
 * The simulated clock stops at RUN_TIME_MAX_NS: a run that would need a
 * later instant (or a step, latency or transfer that cannot be written in
 * ns) stops unfinished with a reason instead of overflowing.
 */
#ifndef DILOSIM_RUN_H
#define DILOSIM_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "sim/config/scenario.h"

/* The last instant a run may reach: 2^62 ns, about 146 years. */
#define RUN_TIME_MAX_NS ((int64_t)1 << 62)

/* Effective delays of the syncs, in steps: for every completed sync and
 * every worker in the group, the steps between the take and the step
 * before the first one that sees the result (merge step - 1 - take).
 * With `late: wait` that is tau; with `late: continue` it grows when the
 * sync ends after the worker has gone on.  DP: always 0. */
#define RUN_DELAY_BINS 17
typedef struct {
    int64_t count, sum, max;      /* samples, their sum and maximum */
    int64_t hist[RUN_DELAY_BINS]; /* hist[d]: samples of d steps; the last
                                      bin: RUN_DELAY_BINS - 1 or more */
} run_delays;

typedef struct {
    double utilization;      /* compute-busy time / wall time, 0..1 */
    double goodput;          /* useful_ns / wall, 0..1 */
    double compute_time_s;   /* s of compute (including lost work) */
    int64_t compute_ns;      /* the same in ns */
    int64_t useful_ns;       /* useful compute at speed 1: steps whose work
                               was kept, each at the nominal step time */
    uint64_t bytes_sent;     /* bytes this worker put on its up link */
    uint64_t bytes_received; /* bytes that came in over its down link */
    double lost_compute_s;   /* s of compute whose result was lost */
    int64_t lost_ns;         /* the same in ns */
    int64_t failures;
    uint64_t outer_device_peak_bytes; /* method.offload_outer: the most
                               bytes of outer parameters and momentum on
                               its accelerator at once; 0 without */
    int64_t checkpoint_ns; /* ns its compute stopped for checkpoints */
    int64_t restart_ns;    /* ns it restarted after repairs */
    int64_t member_ns;     /* ns it was a member (faults.membership_trace;
                              without one: the wall) */
    int64_t joins, leaves; /* its events of the membership trace applied */
} run_worker;

#define RUN_REASON_MAX 128

typedef struct {
    int workers;
    int64_t steps; /* inner steps of the scenario */
    int finished;  /* 1 when every live worker did them all */
    char stop_reason[RUN_REASON_MAX]; /* finished 0: why, one line;
                                         finished 1: "" */
    int64_t wall_ns;                  /* ns from start to the last step's end,
                                   or later: the last sync waited for, an
                                   op a failure cut short */
    double wall_time_s;               /* the same in s */
    int64_t compute_ns;               /* ns of compute, summed over workers
                                   (the sums saturate at INT64_MAX) */
    double compute_time_s;            /* the same in s */
    double compute_utilization; /* compute_time / (workers * wall), 0..1 */
    int64_t useful_ns;          /* useful compute, summed over workers */
    double goodput;             /* useful_ns / (workers * wall), 0..1 */
    uint64_t bytes_sent_total;  /* bytes put on the WAN by all workers */
    double peak_link_gbps;      /* highest instantaneous rate of any link */
    double avg_link_gbps;       /* bytes_sent_total*8 / wall / workers */
    int64_t syncs;              /* completed syncs: DP steps, DiLoCo outer
                                   steps, streaming fragment syncs */
    int64_t failures;
    int64_t lost_ns;          /* ns of compute redone or discarded */
    double lost_compute_s;    /* the same in s */
    uint64_t recovery_bytes;  /* bytes downloaded by repaired workers */
    int64_t checkpoint_ns;    /* ns of checkpoints (faults.checkpoint_s),
                                 summed over workers */
    int64_t restart_ns;       /* ns of restarts (faults.restart_s), summed
                                 over workers */
    int64_t member_ns;        /* ns of membership, summed over workers */
    int64_t joins, leaves;    /* events of the membership trace applied */
    int64_t step_ns;          /* compute time of one step at speed 1 */
    double step_time_s;       /* the same in s */
    uint64_t events;          /* events a full simulation processes
                                   (--full or not: the same count) */
    run_delays delays;        /* effective sync delays, steps */
    int64_t timeouts;         /* syncs whose timeout left workers out */
    int64_t syncs_not_waited; /* syncs the schedule takes after a step up
                                   to `steps` but applies after the last
                                   step: measure run neither sends nor
                                   waits for them (a longer run would);
                                   0 with measure steady, which does */
    run_worker per_worker[SCN_MAX_WORKERS];
} run_result;

/* What a timeline sink receives: one span of one worker.  track 0 is
 * compute, track 1 communication.  name is one of "forward",
 * "backward_act", "backward_param" (track 0: compute ops),
 * "forward_interrupted", "backward_act_interrupted",
 * "backward_param_interrupted" (track 0: the part of an op a failure cut
 * short; it counts as compute, and as lost), "down" (track
 * 0: failed, until repaired), "stalled" (track 0, DP: waiting for the
 * others' recovery), "rejoin_wait" (track 0: repaired and up to date,
 * waiting for the group's next sync), "allreduce" (track 1), "startup"
 * (track 1: a sender's set-up of a pair, network.startup_ms, bytes 0),
 * "checkpoint" (track 0: its compute stopped to write a checkpoint,
 * faults.checkpoint_s, after step `step`; cut short by a failure, the
 * part until it), "restart" (track 0: repaired, its process starting
 * before the download, faults.restart_s; cut short by a failure, the part
 * until it), "recovery" (track 1: downloading the parameters),
 * "recovery_interrupted"
 * (track 1: a download cut short by a failure, bytes 0), "absent" (track
 * 0: not a member, faults.membership_trace: from a leave, or from 0, until
 * its join).  layer and
 * fragment are -1 where they do not apply; bytes is the all-reduce's
 * payload or the download's size (0 for compute).  step is the step
 * computed, the step after which the reduction was taken, or the worker's
 * step when it failed. */
typedef struct {
    int worker, track, layer, fragment;
    const char *name;
    int64_t step;
    int64_t start_ns, end_ns;
    uint64_t bytes;
} run_span;

/* What the observer hears: the instants at which a coupled run calls the
 * trainer (docs/architecture.md, "Semantics both halves share").  Every
 * event carries its instant and the run's figures so far; the other
 * fields say what happened:
 *
 *   RUN_EV_STEP        worker has passed every gate of `step` (the
 *                      forward of its last layer ended): replica `worker`
 *                      computes that inner step now.
 *   RUN_EV_STEP_END    worker finished every op of `step`.
 *   RUN_EV_CONTRIBUTE  worker first arrived for fragment's sync taken
 *                      after step `step`: it encodes its payload now.
 *   RUN_EV_SYNCED      every layer of fragment's sync taken after `step`
 *                      has been all-reduced; member[i] = 1 for the workers
 *                      that took part in all of them (none: the sync was
 *                      abandoned, every member failed).  merge_step[i] is
 *                      the first step of worker i whose compute sees the
 *                      result (-1: worker i is not in the group).
 *   RUN_EV_FAILED      worker failed (its local work since its last
 *                      contribution is lost; DP: a rollback follows).
 *   RUN_EV_REJOINED    worker, repaired and up to date, rejoins the group
 *                      at `step` (the step after the sync that just
 *                      completed); src is the lowest other joined worker
 *                      (-1: none), whose state a healing replica copies.
 *   RUN_EV_CHECKPOINT  DP: the checkpoint of `step` is committed.
 *   RUN_EV_ROLLBACK    DP: every worker goes back to the checkpoint of
 *                      `step` and computes from step + 1 on.
 *   RUN_EV_LEFT        worker left (faults.membership_trace) at `step`:
 *                      as RUN_EV_FAILED, but DP does not roll back (the
 *                      others go on without it); it comes back, if it
 *                      does, as RUN_EV_REJOINED.  A worker absent
 *                      from the start leaves at step 0, instant 0.
 */
typedef enum {
    RUN_EV_STEP,
    RUN_EV_STEP_END,
    RUN_EV_CONTRIBUTE,
    RUN_EV_SYNCED,
    RUN_EV_FAILED,
    RUN_EV_REJOINED,
    RUN_EV_CHECKPOINT,
    RUN_EV_ROLLBACK,
    RUN_EV_LEFT
} run_event_kind;

typedef struct {
    run_event_kind kind;
    int64_t now;               /* ns */
    int worker;                /* -1 where it does not apply */
    int fragment;              /* CONTRIBUTE, SYNCED; -1 otherwise */
    int src;                   /* REJOINED */
    int64_t step;              /* see above */
    const uint8_t *member;     /* SYNCED: per worker */
    const int64_t *merge_step; /* SYNCED: per worker */
    int64_t compute_ns;        /* compute of the ops completed so far, all
                                  workers */
    uint64_t wan_bytes;        /* bytes put on the WAN so far (as of the
                                  last network update) */
    const run_delays *delays;  /* so far */
} run_event;

typedef struct {
    void (*span)(void *ctx, const run_span *s); /* NULL: no timeline */
    void *span_ctx;
    void (*progress)(void *ctx, double fraction); /* NULL: none; called
                                                        about 100 times */
    void *progress_ctx;
    /* NULL: none.  Returns 0 to go on, or a negative code of sim/base/msg.h
     * with a one-line message in err: the run stops and run_simulate
     * returns that code and message. */
    int (*observe)(void *ctx, const run_event *e, char *err, size_t errlen);
    void *observe_ctx;
} run_hooks;

/* Runs a validated scenario.  hooks may be NULL.  Returns 0 with *out
 * filled (out->finished 0 and out->stop_reason when the run could not go
 * to its end: DP rolling back forever, failures faster than recovery,
 * a transfer that never completes, time past RUN_TIME_MAX_NS), or a
 * negative code of sim/base/msg.h with a one-line message in err, passed
 * through unchanged from where it arose:
 *   MSG_EINPUT  the config cannot be run (a method schedule it cannot
 *               follow, a bad fault trace file)
 *   MSG_ENOMEM  out of memory
 *   any code    the observer's, with its message */
int run_simulate(const scn_config *cfg, const run_hooks *hooks, run_result *out,
                 char *err, size_t errlen);

/* The energy of a run, kWh (1 kWh = 3.6e6 J).  With A_i =
 * scn_accelerators(cfg, i), b_i worker i's compute time (s, the figure
 * utilization uses, lost work included) and T the wall time (s):
 *   compute_busy = sum_i b_i A_i power_busy_w / 3.6e6
 *   compute_idle = sum_i (T - b_i) A_i power_idle_w / 3.6e6
 *   network      = bytes_sent_total / 1e9 x joules_per_gb / 3.6e6
 *   total        = compute_busy + compute_idle + network
 * Everything that is not compute is idle: waiting for a sync, a
 * checkpoint, a restart, and the time a worker is down (its accelerators
 * stay powered and provisioned).  Without workers.power_w the compute
 * parts are 0, without network.joules_per_gb the network part is. */
typedef struct {
    double compute_busy, compute_idle, network, total;
} run_energy;

void run_energy_of(const scn_config *cfg, const run_result *r, run_energy *e);

#endif
