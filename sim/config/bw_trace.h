/*
 * bw_trace.h -- bandwidth that changes over time (the scenario's
 * network.bandwidth_trace): a trace file of rate steps, or the diurnal
 * form, a cosine sampled in equal slots.
 *
 * A trace file's lines are
 *     t_s link gbps
 * separated by blanks (spaces, tabs, a trailing CR); '#' starts a comment
 * anywhere on a line; blank lines are skipped.  From instant t_s on
 * (seconds, finite, 0 <= t_s <= 9.2e9, rounded to the nearest nanosecond;
 * non-decreasing over the whole file) `link` (a worker 0..nworkers-1:
 * that worker's up and down links; or "all": every worker's) carries
 * `gbps` (a number in [1e-6, 1e9] or "inf", in the scenario's Gbit unit,
 * network.gbit).  Steps at one instant apply in file order, so a later
 * line wins.  Before a link's first step the scenario's own bandwidth
 * holds.
 *
 * Errors are one line, "path:line:col: what is wrong (expected ...)" (col
 * the 1-based byte column of the field at fault); a file that cannot be
 * read gives faults_trace_read()'s messages.  Plain parsing, no clock: the
 * scenario loader checks a trace with it and the engine (sim/engine/
 * bwstep.c) parses it again when a run starts and replays the steps.
 */
#ifndef DILOSIM_BW_TRACE_H
#define DILOSIM_BW_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* One step: from instant t (ns) on, link (a worker, or -1 for all) has
 * gbps (INFINITY for unbounded). */
typedef struct {
    int64_t t;
    int link;
    double gbps;
} bwt_step;

/* A parsed trace file: its steps in file (and so time) order. */
typedef struct bwt_trace bwt_trace;

/* Parses a whole trace (len bytes at text; `name` stands for the file in
 * messages) for workers 0..nworkers-1 into *out.  Returns 0, MSG_EINPUT
 * with "name:line:col: what is wrong (expected ...)", or MSG_ENOMEM;
 * *out is NULL on error. */
int bwt_parse(const char *text, size_t len, const char *name, int nworkers,
              bwt_trace **out, char *err, size_t errlen);

/* bwt_parse of the file at path (read by faults_trace_read: its errors
 * too). */
int bwt_load(const char *path, int nworkers, bwt_trace **out, char *err,
             size_t errlen);
void bwt_free(bwt_trace *t);

/* The steps of t, *n of them, owned by t. */
const bwt_step *bwt_steps(const bwt_trace *t, size_t *n);

/* The diurnal form (network.bandwidth_trace.diurnal): slot k (k >= 0) of
 * steps_per_period equal slots a period begins at h_k = k * period_h /
 * steps_per_period hours, the instant bwt_diurnal_start() (h_k in ns,
 * rounded to the nearest), and every link then carries
 *     low + (high - low) * (1 + cos(2 pi (h_k - phase_h) / period_h)) / 2
 * Gbit/s (bwt_diurnal_gbps), until slot k + 1 begins. */
typedef struct {
    double low_gbps, high_gbps, period_h, phase_h;
    int steps; /* steps_per_period */
} bwt_diurnal;

int64_t bwt_diurnal_start(const bwt_diurnal *d, int64_t k);
double bwt_diurnal_gbps(const bwt_diurnal *d, int64_t k);

#endif
