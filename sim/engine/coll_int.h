/*
 * coll_int.h -- the collective stream's state, shared by collective.c
 * (the stream, its algorithms, TCP, set-up) and coll_site.c (the steps
 * of sites of many accelerators, coll_set_sites).  Not for the rest of
 * the engine: use collective.h.
 */
#ifndef DILOSIM_COLL_INT_H
#define DILOSIM_COLL_INT_H

#include "sim/engine/collective.h"
#include "sim/engine/fabric.h"

typedef struct {
    uint64_t bytes;
    uint64_t tag;
} coll_job;

struct coll {
    net *n;
    int nw;
    coll_algo algo;
    int64_t *lat; /* nw * nw */
    double max_rate;
    uint64_t tag_base;
    coll_done_fn done;
    void *ctx;
    coll_member_fn member_done; /* coll_set_member_done(), or NULL */
    int *inleft; /* all_to_all's all-gather: per member index, its
                           incoming flows still running */

    /* FIFO: jobs q[head .. head+len), member masks in qmask, nw bytes each,
     * same slots.  The head job runs when `running`. */
    coll_job *q;
    uint8_t *qmask;
    int qcap, head, len;

    /* the running collective */
    int running;
    int *mem; /* its members, in ring order (coll_set_order) */
    int m;
    int step, nsteps;
    int *flows; /* flow ids of the current step, -1 once complete */
    int nflows, fcap;
    int left; /* flows of the current step not yet complete */

    /* the shortcut (see the file comment) */
    int exclusive;     /* coll_set_exclusive() */
    int alike;         /* the running ring's steps >= 1 are one flow per
                           chunk size */
    double alike_rate; /* the rate each of its flows gets */
    int64_t alike_lat; /* the latency of each */
    uint64_t *flushed; /* per member index: bytes of those steps already
                           added to the net's link counters */

    /* TCP connections (coll_set_tcp), one per ordered pair i * nw + j */
    int tcp;
    coll_tcp tp;
    double *cwin;     /* the window each connection's last flow ended with */
    int64_t *cend;    /* the instant its last flow's sender last sent
                           (t_end - lat), less net_shift_total() then (so
                           net_shift moves it); INT64_MIN: never */
    int64_t step_at;  /* the instant the current step began, less
                           net_shift_total() then */
    int *fpair;       /* per flow of the step (as flows): its connection,
                           -1 for a flow that is not TCP */
    int64_t overhead; /* coll_set_step_overhead() */
    int *order;       /* the ring order: a permutation of 0..nw-1 */
    int64_t queue;    /* coll_set_queue(): added to every round trip */

    /* connection set-up (coll_set_startup) */
    int64_t startup;            /* what a pair's first flow waits, ns */
    uint8_t *started;           /* per ordered pair i * nw + j: set up (or
                                   being set up by a flow of the step) */
    int *fsetup;                /* per flow of the step (as flows): the pair
                                   whose set-up it pays, -1 for none */
    coll_startup_fn on_startup; /* hears each set-up wait, or NULL */
    int64_t *told; /* per worker: the step (its step_at) whose set-up
                      on_startup heard last, INT64_MIN: none */

    /* sites (coll_set_sites; coll_site.c) */
    fabric *fab;         /* per worker: its site's fabric; NULL: no sites */
    int site_ring;       /* 1: one ring over every accelerator */
    int site_T;          /* ring: the running job's accelerators */
    int64_t site_phase;  /* hierarchical: each inside phase of the running
                           job, ns (0: none, no phase steps) */
    int site_closed;     /* ring: steps after the first in closed form */
    uint64_t *site_owed; /* per member index: bytes its closed steps sent
                            (to its up link and its successor's down) */
};

/* collective.c's steps, for coll_site.c. */

/* Starts one flow of the current step over links a and b, standing for
 * `count` flows, active after lat; pair >= 0: a flow of that pair (its
 * set-up, its TCP connection).  Returns 0 or a negative MSG_E* code. */
int coll__start_flow(coll *c, int64_t now, int64_t lat, int a, int b,
                     uint64_t bytes, double rate, int count, int pair);
/* Starts one flow of the current step from worker i to worker j. */
int coll__add_flow(coll *c, int64_t now, int i, int j, uint64_t bytes);
/* The wait of a flow from worker i to worker j before it is active: the
 * step overhead, then the one-way latency. */
int64_t coll__flow_lat(const coll *c, int i, int j);
/* Cancels the flows of the current step still on the net. */
void coll__cancel_step(coll *c, int64_t now);
/* Adds the flows of ring step s of the running collective (its
 * algorithm's, among the members); cancels them on failure. */
int coll__plain_step(coll *c, int64_t now, int s);

/* coll_site.c: the running job's steps with sites (c->fab): sets
 * c->nsteps and the phases at its start; launches step c->step. */
void coll__site_begin(coll *c);
int coll__site_step(coll *c, int64_t now);
/* The running job ends: the bytes of its closed steps onto the links. */
void coll__site_end(coll *c);

#endif
