/*
 * rng.c -- per-purpose GSL streams seeded by hashing the scenario seed.
 */
#include "sim/base/rng.h"

uint64_t rng_mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

gsl_rng *rng_stream(uint64_t seed, uint32_t purpose, uint32_t index) {
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return NULL;
    uint64_t h = rng_mix(rng_mix(seed) ^ ((uint64_t)purpose << 32 | index));
    /* MT19937 takes an unsigned long seed; 0 selects GSL's default seed,
     * which would collide, so map it away. */
    gsl_rng_set(r, (unsigned long)(h ? h : 1));
    return r;
}
