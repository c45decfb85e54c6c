/*
 * fabric.c -- the closed forms of a site's inside collectives (fabric.h).
 */
#include "sim/engine/fabric.h"

#include <math.h>

#include "sim/engine/net.h"

fabric fabric_of(const scn_config *c, int i) {
    /* as world.c makes a worker's latency_ms of us / 1000 ns and its
     * intra_gbps link bytes/s (efficiency 1) */
    double ms = c->site_intra_latency_us[i] / 1000;
    fabric f = {.n = c->site_replicas[i],
                .rate = c->site_intra_gbps[i] * (scn_gbit_bits(c->gbit) / 8),
                .lat = llround(ms * 1e-3 * 1e9)};
    return f;
}

uint64_t fabric_max_chunk(uint64_t S, int m) {
    uint64_t M = m > 1 ? (uint64_t)m : 1;
    return S / M + (S % M != 0);
}

int64_t fabric_step_ns(const fabric *f, uint64_t chunk) {
    int64_t t = net_transfer_ns((double)chunk, f->rate);
    return t > INT64_MAX - f->lat ? INT64_MAX : t + f->lat;
}

int64_t fabric_half_ns(const fabric *f, uint64_t S) {
    if (f->n <= 1) return 0;
    int64_t step = fabric_step_ns(f, fabric_max_chunk(S, f->n));
    int64_t k = f->n - 1;
    return step > INT64_MAX / k ? INT64_MAX : step * k;
}

int64_t fabric_allreduce_ns(const fabric *f, uint64_t S) {
    int64_t h = fabric_half_ns(f, S);
    return h > INT64_MAX / 2 ? INT64_MAX : 2 * h;
}
