/*
 * faults.h -- when workers fail and come back.
 *
 * Each worker alternates up and down periods.  Up periods are drawn from an
 * exponential (mean MTBF) or Weibull (scale chosen so the mean is MTBF,
 * given shape) distribution, down periods from an exponential of mean MTTR,
 * with one GSL generator per worker seeded from the scenario seed, so a
 * worker's failures do not depend on how many draws the others made.
 * Alternatively a trace file gives the transitions (its format and parser:
 * sim/config/faults_trace.h).
 */
#ifndef DILOSIM_FAULTS_H
#define DILOSIM_FAULTS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/config/faults_trace.h" /* the trace files */
#include "sim/config/kinds.h"        /* faults_dist, faults_spec, their names */

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

#endif
