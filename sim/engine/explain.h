/*
 * explain.h -- why a run's wall time is what it is: the time of every
 * worker from 0 to the run's end, cut into parts that add up to it
 * exactly, in integer nanoseconds.
 *
 * expl_run simulates the scenario once (the same run as run_simulate: its
 * run_result is bit for bit the one run_simulate gives) and books every
 * nanosecond of each worker's timeline to exactly one part.  A worker's
 * parts sum to wall_ns; the method's parts are the workers' parts
 * averaged, rounded so that they too sum to wall_ns exactly.
 */
#ifndef DILOSIM_EXPLAIN_H
#define DILOSIM_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "sim/config/scenario.h"
#include "sim/engine/run.h"

/* The parts, in the order they are printed.  expl_part_names[p] is part
 * p's name in the JSON and the text ("compute", "straggler", ...); the
 * meaning of each is documented beside the names in explain.c and in
 * docs/usage.md ("Why: dilosim explain"). */
typedef enum {
    EXPL_COMPUTE,   /* compute at the nominal step time */
    EXPL_STRAGGLER, /* compute beyond nominal: slow steps, slow workers */
    EXPL_BANDWIDTH, /* exposed communication: bytes at the link's rate */
    EXPL_LATENCY,   /* exposed communication: one-way latencies */
    EXPL_TCP_RAMP,  /* exposed communication: TCP below its share */
    EXPL_STARTUP,   /* exposed communication: pair set-up */
    EXPL_QUEUE,     /* exposed communication: standing queue */
    EXPL_OVERHEAD,  /* exposed communication: per-step overhead */
    EXPL_GATE_WAIT, /* waiting at a gate for peers that are late */
    EXPL_DOWN,      /* failed, until repaired */
    EXPL_REDONE,    /* compute whose result a failure lost */
    EXPL_RECOVERY,  /* downloading the parameters after a repair, and
                       waiting to rejoin */
    EXPL_OFFLOAD,   /* exposed host <-> accelerator copies */
    EXPL_STALLED,   /* DP: stalled while a peer is down or recovering */
    EXPL_DONE_WAIT, /* done with every step, waiting for the run's end */
    EXPL_CKPT,      /* "checkpoint": compute stopped to write one */
    EXPL_RESTART,   /* repaired, its process starting before the download */
    EXPL_ABSENT,    /* not a member (faults.membership_trace) */
    EXPL_PARTS
} expl_part;

extern const char *const expl_part_names[EXPL_PARTS];

typedef struct {
    int64_t ns[EXPL_PARTS]; /* sum == the run's wall_ns */
} expl_parts;

typedef struct {
    run_result run;                     /* as run_simulate gives it */
    expl_parts method;                  /* the workers' parts, averaged */
    expl_parts worker[SCN_MAX_WORKERS]; /* per worker, run.workers of them */
    int workers_differ;                 /* 1 when two workers' parts differ */
    int64_t comm_ns; /* the stream's busy time: the collectives' durations
                        (to the wall), summed; hidden plus exposed */
} expl_result;

/* Runs cfg and explains its wall time into *out.  Returns 0, or the
 * codes of run_simulate with its message in err. */
int expl_run(const scn_config *cfg, expl_result *out, char *err, size_t errlen);

#endif
