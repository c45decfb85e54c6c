/*
 * calib_int.h -- what the two halves of a calibration share (not for
 * other modules): the context every prediction reads, and the calls
 * between the fit (calib.c: keys, trust region, covariance, bounds) and
 * the predictions (calib_predict.c: each row's world, simulated, many at
 * once on the pool).
 */
#ifndef DILOSIM_CALIB_INT_H
#define DILOSIM_CALIB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/pool.h"
#include "sim/config/scenario.h"
#include "sim/study/calib.h"

#define CALIB_NSPEED 4 /* overrides from the step times, at most */
#define CALIB_ERR_MAX 2048

/* Read-only while predictions run, but for runs (counted by the batch). */
typedef struct {
    const calib_spec *spec;
    scn_doc *doc;                        /* the base with spec->sets */
    char (*speed_buf)[MEAS_FIT_SET_MAX]; /* the speeds' overrides */
    const char *speed[CALIB_NSPEED];     /* those applied */
    int nspeed;
    int nkeys; /* the keys, as asked or the default list */
    const char *key[CALIB_MAX_KEYS];
    pool *pool;
    int64_t runs; /* simulations so far */
} calib_ctx;

/* One prediction: row `row` with key k at val[k] where use[k] (the
 * others as the base has them); s its result, in seconds. */
typedef struct {
    int row;
    double val[CALIB_MAX_KEYS];
    uint8_t use[CALIB_MAX_KEYS];
    double s;
} calib_job;

/* Opens the base (spec->sets applied), makes the speeds' overrides and
 * the pool.  Returns 0, or a code with its message (the loader's);
 * calib__close must follow either way. */
int calib__open(calib_ctx *c, const calib_spec *spec, char *err, size_t errlen);
void calib__close(calib_ctx *c);

/* One job, simulated.  Returns 0 with j->s set, or a code with a one-line
 * message naming the row ("FILE:LINE: ..."). */
int calib__predict(const calib_ctx *c, calib_job *j, char *err, size_t errlen);

/* n jobs on the pool; the code and message of the lowest failed one, or
 * 0.  Counts c->runs. */
int calib__batch(calib_ctx *c, calib_job *jobs, int64_t n, char *err,
                 size_t errlen);

/* The base scenario (its overrides applied): its workers.count, digest,
 * and with the speeds applied the value of each key of c->key (the loader
 * is the one reader of keys: see calib_predict.c).  Returns 0, or
 * MSG_EINPUT with the loader's message for an unknown key ("--fit KEY:
 * ...") or one that is not one number of the config. */
int calib__base(const calib_ctx *c, double *values, int *workers,
                uint64_t *digest, char *err, size_t errlen);

#endif
