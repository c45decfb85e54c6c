/*
 * coll_site.c -- the collective stream's steps when its workers are sites
 * of many accelerators (coll_set_sites, collective.h): the inside phases
 * of a hierarchical job around its algorithm among the sites, or one ring
 * over every accelerator of every member site.
 */
#include "sim/engine/coll_int.h"

#include <math.h>
#include <stdlib.h>

#include "sim/base/msg.h"

/* The running job's bytes. */
static uint64_t job_bytes(const coll *c) {
    return c->q[c->head].bytes;
}

void coll__site_begin(coll *c) {
    uint64_t S = job_bytes(c);
    c->site_phase = 0;
    c->site_T = 0;
    for (int k = 0; k < c->m; k++) c->site_T += c->fab[c->mem[k]].n;
    if (c->site_ring) {
        if (c->site_T > 1) c->nsteps = 2 * (c->site_T - 1);
        return; /* one accelerator: as plain */
    }
    for (int k = 0; k < c->m; k++) {
        int64_t t = fabric_half_ns(&c->fab[c->mem[k]], S);
        if (t > c->site_phase) c->site_phase = t;
    }
    if (c->site_phase > 0) c->nsteps += 2;
}

/* The chunk ring position p sends in step s of a ring of T. */
static int ring_chunk(int p, int s, int T) {
    int chunk = s < T - 1 ? p - s : p + 1 - (s - (T - 1));
    return ((chunk % T) + T) % T;
}

/* Of the chunks a, a+1, ..., a+w-1 (mod T, w <= T) of S, how many hold
 * ceil(S / T) bytes (S mod T = r of the T do): chunk i does when
 * floor((i+1) r / T) > floor(i r / T). */
static uint64_t big_chunks(int a, int w, uint64_t r, int T) {
    uint64_t t = (uint64_t)T, A = (uint64_t)a, E = (uint64_t)(a + w);
    if (E <= t) return E * r / t - A * r / t;
    return r - A * r / t + (E - t) * r / t;
}

/* What ring step s lasts at least inside the member sites: in each site
 * of n > 1 its accelerators but the last (all n when it is the only
 * site) send a window of consecutive chunks to their neighbours inside;
 * a window with a chunk of ceil(S / T) bytes takes that chunk's
 * fabric_step_ns, else floor(S / T)'s.  The slowest site's, after the
 * step overhead that every edge of the step pays (0: no site of n > 1). */
static int64_t inside_floor(const coll *c, int s) {
    int T = c->site_T, start = 0;
    uint64_t S = job_bytes(c), q = S / (uint64_t)T, r = S % (uint64_t)T;
    int64_t d = 0;
    for (int k = 0; k < c->m; k++) {
        const fabric *f = &c->fab[c->mem[k]];
        if (f->n > 1) {
            int w = c->m > 1 ? f->n - 1 : f->n;
            uint64_t big = big_chunks(ring_chunk(start, s, T), w, r, T);
            int64_t t = fabric_step_ns(f, q + (big > 0));
            if (t > d) d = t;
        }
        start += f->n;
    }
    if (d == 0) return 0;
    return d > INT64_MAX - c->overhead ? INT64_MAX : d + c->overhead;
}

/* Step s of one ring over the site_T accelerators: each member site's
 * last accelerator sends its chunk to the next site over the WAN, and
 * the step lasts at least inside_floor (the chunks inside the sites). */
static int ring_step(coll *c, int64_t now, int s) {
    int T = c->site_T, M = c->m, err = 0, pos = -1;
    uint64_t S = job_bytes(c);
    for (int k = 0; k < M && M > 1 && !err; k++) {
        pos += c->fab[c->mem[k]].n; /* the site's last accelerator */
        err = coll__add_flow(c, now, c->mem[k], c->mem[(k + 1) % M],
                             coll_chunk_bytes(S, T, ring_chunk(pos, s, T)));
    }
    int64_t floor_ns = inside_floor(c, s);
    if (!err && floor_ns > 0)
        err = coll__start_flow(c, now, floor_ns, -1, -1, 0, INFINITY, 1, -1);
    if (err) coll__cancel_step(c, now);
    return err;
}

/* The ring's steps 1 .. nsteps-1 in closed form (coll_set_sites): their
 * summed durations (INT64_MAX saturated), and each member's bytes into
 * site_owed. */
static int64_t closed_steps(coll *c) {
    int T = c->site_T, M = c->m;
    uint64_t S = job_bytes(c), q = S / (uint64_t)T;
    int64_t L[64], X[128], *lat = L, *tx = X; /* per member: L_k, and the
                                                 transfers of q, q + 1 bytes */
    int64_t *heap = NULL;
    if (M > 64) {
        heap = malloc((size_t)M * 3 * sizeof *heap);
        if (!heap) return -1;
        lat = heap, tx = heap + M;
    }
    for (int k = 0; k < M && M > 1; k++) {
        int i = c->mem[k], j = c->mem[(k + 1) % M];
        double r = c->max_rate, up = net_link_capacity(c->n, 2 * i);
        double down = net_link_capacity(c->n, 2 * j + 1);
        if (up < r) r = up;
        if (down < r) r = down;
        lat[k] = coll__flow_lat(c, i, j);
        tx[2 * k] = q ? net_transfer_ns((double)q, r) : 0;
        tx[2 * k + 1] = net_transfer_ns((double)(q + 1), r);
        c->site_owed[k] = 0;
    }
    int64_t total = 0;
    for (int s = 1; s < c->nsteps; s++) {
        int64_t d = inside_floor(c, s);
        int pos = -1;
        for (int k = 0; k < M && M > 1; k++) {
            pos += c->fab[c->mem[k]].n;
            uint64_t b = coll_chunk_bytes(S, T, ring_chunk(pos, s, T));
            c->site_owed[k] += b;
            int64_t t = tx[2 * k + (b > q)];
            t = t > INT64_MAX - lat[k] ? INT64_MAX : t + lat[k];
            if (t > d) d = t;
        }
        total = d > INT64_MAX - total ? INT64_MAX : total + d;
    }
    free(heap);
    return total;
}

void coll__site_end(coll *c) {
    if (!c->site_ring || !c->site_closed || c->m < 2) return;
    for (int k = 0; k < c->m; k++) {
        int i = c->mem[k], j = c->mem[(k + 1) % c->m];
        net_link_bytes_add(c->n, 2 * i, c->site_owed[k]);
        net_link_bytes_add(c->n, 2 * j + 1, c->site_owed[k]);
        c->site_owed[k] = 0;
    }
}

int coll__site_step(coll *c, int64_t now) {
    int s = c->step;
    if (c->site_ring && c->site_T > 1 && c->site_closed && s == 1) {
        int64_t d = closed_steps(c);
        if (d < 0) return MSG_ENOMEM;
        c->step = c->nsteps - 1; /* the closed steps end with the job */
        return coll__start_flow(c, now, d, -1, -1, 0, INFINITY, 1, -1);
    }
    if (c->site_ring)
        return c->site_T > 1 ? ring_step(c, now, s)
                             : coll__plain_step(c, now, s);
    if (c->site_phase == 0) return coll__plain_step(c, now, s);
    if (s == 0 || s == c->nsteps - 1) /* an inside phase */
        return coll__start_flow(c, now, c->site_phase, -1, -1, 0, INFINITY, 1,
                                -1);
    return coll__plain_step(c, now, s - 1);
}
