/*
 * faults.h -- when workers fail and come back.
 *
 * Each worker alternates up and down periods.  Up periods are drawn from an
 * exponential (mean MTBF) or Weibull (scale chosen so the mean is MTBF,
 * given shape) distribution, down periods from an exponential of mean MTTR,
 * with one GSL generator per worker seeded from the scenario seed, so a
 * worker's failures do not depend on how many draws the others made.
 * Alternatively a trace file gives the transitions: lines
 *     time_s state            (worker 0)
 *     time_s worker state
 * with state 0 or "down" (failed) and 1 or "up" (repaired); '#' starts a
 * comment; times per worker must increase and states alternate.
 */
#ifndef DILOSIM_FAULTS_H
#define DILOSIM_FAULTS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/config/kinds.h" /* faults_dist, faults_spec, their names */

typedef struct faults faults;

/* Builds the failure processes of nworkers workers.  Returns NULL with a
 * message ("path:line: what is wrong") in err on a bad trace or OOM. */
faults *faults_new(const faults_spec *spec, int nworkers, uint64_t seed,
                   char *err, size_t errlen);
void faults_free(faults *f);

/* The next down period of worker w, after the previous one returned for w:
 * it fails at *fail_ns and is repaired at *repair_ns (> *fail_ns; INT64_MAX
 * when it never comes back).  Returns 1, or 0 when it never fails again. */
int faults_next(faults *f, int w, int64_t *fail_ns, int64_t *repair_ns);

/* A parsed trace: each worker's down periods. */
typedef struct faults_trace faults_trace;

#define FAULTS_TRACE_MAX_BYTES (64 << 20) /* the largest trace file */

/* Parses a whole trace (len bytes at text, any bytes; `name` stands for
 * the file in messages) for workers 0..nworkers-1 into *out.  Returns 0;
 * MSG_EINPUT with "name:line: what is wrong (expected ...)"; MSG_ENOMEM.
 * *out is NULL on error. */
int faults_trace_parse(const char *text, size_t len, const char *name,
                       int nworkers, faults_trace **out, char *err,
                       size_t errlen);

/* faults_trace_parse of the file at path: also MSG_EIO ("path: cannot
 * open: reason", "cannot read") and MSG_EINPUT for a file larger than
 * FAULTS_TRACE_MAX_BYTES. */
int faults_trace_load(const char *path, int nworkers, faults_trace **out,
                      char *err, size_t errlen);
void faults_trace_free(faults_trace *t);

#endif
