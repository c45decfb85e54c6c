/*
 * fabric.h -- a site's inside fabric (workers.sites): the closed forms of
 * the collectives among the site's identical accelerators.
 *
 * A site of n accelerators, each joined to the next of a ring by a link
 * of `rate` bytes/s and one-way latency `lat` ns, all alike.  A ring step
 * in which every accelerator sends a chunk of c bytes to its successor
 * moves n flows that start together and never share a link, so it lasts
 * exactly what the net gives one such flow: lat + net_transfer_ns(c,
 * rate).  The ring's chunks of S bytes are coll_chunk_bytes(S, n, i), the
 * largest ceil(S / n), and every step sends each chunk once, so each of
 * its steps lasts fabric_step_ns(f, ceil(S / n)); a reduce-scatter (or an
 * all-gather) is n - 1 such steps and an all-reduce 2(n - 1): the instants
 * a net of n plain workers would give, without its n 2(n - 1) flows
 * (docs/network.md, "Sites of many accelerators").
 */
#ifndef DILOSIM_FABRIC_H
#define DILOSIM_FABRIC_H

#include <stdint.h>

#include "sim/config/scenario.h"

typedef struct {
    int n;       /* accelerators, >= 1 */
    double rate; /* bytes/s of each link, > 0 */
    int64_t lat; /* one-way latency of each link, ns */
} fabric;

/* Site i of a config: workers.sites[i] (replicas, intra_gbps in the Gbit
 * of network.gbit, intra_latency_us rounded to ns as the net rounds a
 * worker's latency_ms). */
fabric fabric_of(const scn_config *c, int i);

/* The largest of the m chunks of S bytes: ceil(S / m) (m >= 1). */
uint64_t fabric_max_chunk(uint64_t S, int m);

/* One ring step moving chunks of at most `chunk` bytes: lat +
 * net_transfer_ns(chunk, rate) (INT64_MAX: never). */
int64_t fabric_step_ns(const fabric *f, uint64_t chunk);

/* A reduce-scatter (or all-gather) of S bytes: n - 1 steps of
 * fabric_step_ns(f, ceil(S / n)); 0 for n = 1; saturates at INT64_MAX. */
int64_t fabric_half_ns(const fabric *f, uint64_t S);

/* An all-reduce of S bytes: 2 fabric_half_ns (saturating). */
int64_t fabric_allreduce_ns(const fabric *f, uint64_t S);

#endif
