/*
 * rng.h -- independent random streams derived from the scenario seed.
 *
 * Every purpose (failures of worker 3, stragglers of worker 0, ...) gets
 * its own GSL generator whose seed is a hash of (seed, purpose, index), so
 * adding draws to one stream never shifts another: same scenario, same
 * bytes out.
 */
#ifndef DILOSIM_RNG_H
#define DILOSIM_RNG_H

#include <stdint.h>
#include <gsl/gsl_rng.h>

enum {
    RNG_FAULTS = 1,
    RNG_STRAGGLERS = 2,
    RNG_DATA = 3,
    RNG_INIT = 4,
    RNG_COMPRESS = 5, /* the trainer's compressors (PowerSGD's first Q) */
    RNG_SUBSET = 6    /* sparta's subsets */
};

/* A new MT19937 generator for (seed, purpose, index); NULL on OOM.
 * Free with gsl_rng_free. */
gsl_rng *rng_stream(uint64_t seed, uint32_t purpose, uint32_t index);

/* The 64-bit mix used to derive stream seeds (splitmix64 finaliser). */
uint64_t rng_mix(uint64_t x);

#endif
