/*
 * collective.c -- all-reduce of one worker group, as steps of flows.
 *
 * A stream holds a FIFO of submitted collectives; the head one runs.  A
 * running collective is a sequence of steps, each a set of flows started
 * together on the net; when the last flow of a step completes, the next
 * step starts at that instant, and after the last step the collective is
 * reported done and the next one in the queue starts.
 *
 *   algorithm    steps       flows in a step (M members m[0] < ... )
 *   ring         2(M-1)      m[k] -> m[k+1 mod M], one chunk each
 *   all_to_all   2           every ordered pair, one chunk each
 *   star         2           gather m[k] -> m[0], then broadcast m[0] -> m[k],
 *                            S each (k >= 1)
 *   (M <= 1)     1           one zero-byte flow on no link, no latency
 *
 * Chunks are whole bytes: chunk i (0..M-1) of S holds
 * floor((i+1)S/M) - floor(iS/M) bytes, so the M chunks sum to S exactly
 * and differ by at most one byte.  Ring step s < M-1 (reduce-scatter):
 * m[k] sends chunk (k - s) mod M; step M-1+s (all-gather): chunk
 * (k + 1 - s) mod M.  So m[k] sends 2S - chunk(k+1) - chunk(k+2) bytes
 * (indices mod M) and the group 2(M-1)S in all.  all_to_all: in the
 * reduce-scatter m[a] sends chunk b to m[b]; in the all-gather m[a]
 * sends chunk a to everybody: S - chunk(a) + (M-1) chunk(a) from m[a],
 * again 2(M-1)S in all.
 *
 * Choices the header leaves open (what a simulation user would expect):
 *  - The net tag of a flow is tag_base + its index within its step, so the
 *    tags of one stream lie in [tag_base, tag_base + M(M-1)) (all_to_all
 *    has the most flows per step).  Streams sharing a net need tag_bases
 *    at least nworkers^2 apart.  A completion is matched by flow id and
 *    index, so completions of cancelled or stale flows are ignored.
 *  - A collective with no members left (all removed, or an empty mask)
 *    completes like a single-member one.
 *  - lat_ns may be NULL (no latency); members may be NULL (all workers);
 *    a max_flow_bytes_per_s that is not > 0 (0, NaN) means no cap.
 *    coll_new returns NULL for invalid arguments too (nworkers < 1).
 *  - coll_remove_member also drops the worker from the members of the
 *    running collective when it restarts; a worker that is not a member of
 *    the running collective does not disturb it.
 *  - coll_free does not touch the net (which may be gone already); call
 *    coll_clear first to cancel the flows of a running collective.
 *  - If the net runs out of memory while a step starts from inside a
 *    callback, there is no caller to tell: the stream stalls with its
 *    collective pending (coll_pending() stays > 0), which the simulation
 *    can detect at its end.
 *  - The done callback may submit, remove members or clear, but must not
 *    free the stream.
 */
#include "collective.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../models/msg.h"

typedef struct {
    uint64_t bytes;
    uint64_t tag;
} coll_job;

struct coll {
    net *n;
    int nw;
    coll_algo algo;
    int64_t *lat;       /* nw * nw */
    double max_rate;
    uint64_t tag_base;
    coll_done_fn done;
    void *ctx;

    /* FIFO: jobs q[head .. head+len), member masks in qmask, nw bytes each,
     * same slots.  The head job runs when `running`. */
    coll_job *q;
    uint8_t *qmask;
    int qcap, head, len;

    /* the running collective */
    int running;
    int *mem;           /* its members, increasing worker id */
    int m;
    int step, nsteps;
    int *flows;         /* flow ids of the current step, -1 once complete */
    int nflows, fcap;
    int left;           /* flows of the current step not yet complete */
};

static const char *const algo_names[] = {"ring", "all_to_all", "star"};

/* ---- the queue --------------------------------------------------------- */

static uint8_t *mask_of(const coll *c, int slot) {
    return c->qmask + (size_t)slot * (size_t)c->nw;
}

/* Makes room for one more job at the tail: slides the live jobs to the
 * front, or doubles the arrays.  Returns 0 or -1 (out of memory). */
static int queue_reserve(coll *c) {
    if (c->head + c->len < c->qcap)
        return 0;
    if (c->head > 0) {
        memmove(c->q, c->q + c->head, (size_t)c->len * sizeof *c->q);
        memmove(c->qmask, mask_of(c, c->head), (size_t)c->len * (size_t)c->nw);
        c->head = 0;
        return 0;
    }
    int cap = c->qcap ? 2 * c->qcap : 4;
    coll_job *q = realloc(c->q, (size_t)cap * sizeof *q);
    if (!q)
        return -1;
    c->q = q;
    uint8_t *mk = realloc(c->qmask, (size_t)cap * (size_t)c->nw);
    if (!mk)
        return -1;
    c->qmask = mk;
    c->qcap = cap;
    return 0;
}

static void queue_pop(coll *c) {
    c->head++;
    if (--c->len == 0)
        c->head = 0;
}

/* ---- steps ------------------------------------------------------------- */

static int steps_of(coll_algo algo, int m) {
    if (m <= 1)
        return 1;
    return algo == COLL_RING ? 2 * (m - 1) : 2;
}

/* Bytes of chunk i (0 <= i < m) of S bytes split m ways:
 * floor((i+1)S/m) - floor(iS/m), without overflow. */
uint64_t coll_chunk_bytes(uint64_t S, int m, int i) {
    if (m <= 1)
        return S;
    uint64_t M = (uint64_t)m, q = S / M, r = S % M, k = (uint64_t)i;
    return q + ((k + 1) * r / M - k * r / M);
}

/* Starts one flow of the current step from worker i to worker j.
 * Returns 0 or a negative MSG_E* code. */
static int add_flow(coll *c, int64_t now, int i, int j, uint64_t bytes) {
    if (c->nflows == c->fcap) {
        int cap = c->fcap ? 2 * c->fcap : 16;
        int *p = realloc(c->flows, (size_t)cap * sizeof *p);
        if (!p)
            return MSG_ENOMEM;
        c->flows = p;
        c->fcap = cap;
    }
    int id = net_flow_add(c->n, now, c->lat[i * c->nw + j], 2 * i, 2 * j + 1,
                          bytes, c->max_rate, c->tag_base + (uint64_t)c->nflows);
    if (id < 0)
        return id;
    c->flows[c->nflows++] = id;
    c->left++;
    return 0;
}

/* Cancels the flows of the current step still on the net. */
static void cancel_step(coll *c, int64_t now) {
    for (int k = 0; k < c->nflows; k++)
        if (c->flows[k] >= 0)
            net_flow_cancel(c->n, now, c->flows[k]);
    c->nflows = 0;
    c->left = 0;
}

/* Adds the flows of step c->step of the running collective.  On failure
 * the step's flows are cancelled and a negative MSG_E* code returned. */
static int launch_step(coll *c, int64_t now) {
    const int *m = c->mem, M = c->m;
    uint64_t S = c->q[c->head].bytes;
    int err = 0, s = c->step;
    c->nflows = 0;
    c->left = 0;
    if (M <= 1) {
        int id = net_flow_add(c->n, now, 0, -1, -1, 0, INFINITY, c->tag_base);
        if (id < 0)
            return id;
        c->flows[c->nflows++] = id; /* fcap >= 16 from coll_new */
        c->left = 1;
        return 0;
    }
    switch (c->algo) {
    case COLL_RING:
        for (int k = 0; k < M && !err; k++) {
            int chunk = s < M - 1 ? k - s : k + 1 - (s - (M - 1));
            chunk = ((chunk % M) + M) % M;
            err = add_flow(c, now, m[k], m[(k + 1) % M],
                           coll_chunk_bytes(S, M, chunk));
        }
        break;
    case COLL_ALL_TO_ALL:
        for (int a = 0; a < M && !err; a++)
            for (int b = 0; b < M && !err; b++)
                if (a != b)
                    err = add_flow(c, now, m[a], m[b],
                                   coll_chunk_bytes(S, M, s == 0 ? b : a));
        break;
    case COLL_STAR:
        for (int k = 1; k < M && !err; k++)
            err = c->step == 0 ? add_flow(c, now, m[k], m[0], S)
                               : add_flow(c, now, m[0], m[k], S);
        break;
    }
    if (err)
        cancel_step(c, now);
    return err;
}

/* Takes the members of the head job from its mask and starts its first
 * step.  Returns 0 or a negative MSG_E* code (the collective then has no
 * flows). */
static int restart_head(coll *c, int64_t now) {
    const uint8_t *mask = mask_of(c, c->head);
    c->m = 0;
    for (int i = 0; i < c->nw; i++)
        if (mask[i])
            c->mem[c->m++] = i;
    c->step = 0;
    c->nsteps = steps_of(c->algo, c->m);
    c->running = 1;
    return launch_step(c, now);
}

/* Starts the head job if the stream is idle. */
static int start_next(coll *c, int64_t now) {
    if (c->running || c->len == 0)
        return 0;
    return restart_head(c, now);
}

/* The running collective has finished its last step. */
static void finish_head(coll *c, int64_t now) {
    uint64_t tag = c->q[c->head].tag;
    queue_pop(c);
    c->running = 0;
    c->nflows = 0;
    if (c->done)
        c->done(c->ctx, now, tag);
    start_next(c, now); /* unless the callback already did (or cleared) */
}

/* ---- public interface -------------------------------------------------- */

coll *coll_new(net *n, int nworkers, coll_algo algo, const int64_t *lat_ns,
               double max_flow_bytes_per_s, uint64_t tag_base,
               coll_done_fn done, void *ctx) {
    if (!n || nworkers < 1 || nworkers > 46340 ||
        (algo != COLL_RING && algo != COLL_ALL_TO_ALL && algo != COLL_STAR))
        return NULL;
    coll *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    size_t nn = (size_t)nworkers * (size_t)nworkers;
    c->lat = calloc(nn, sizeof *c->lat);
    c->mem = calloc((size_t)nworkers, sizeof *c->mem);
    c->flows = calloc(16, sizeof *c->flows);
    if (!c->lat || !c->mem || !c->flows) {
        coll_free(c);
        return NULL;
    }
    if (lat_ns)
        memcpy(c->lat, lat_ns, nn * sizeof *c->lat);
    c->fcap = 16;
    c->n = n;
    c->nw = nworkers;
    c->algo = algo;
    c->max_rate = max_flow_bytes_per_s > 0 ? max_flow_bytes_per_s : INFINITY;
    c->tag_base = tag_base;
    c->done = done;
    c->ctx = ctx;
    return c;
}

void coll_free(coll *c) {
    if (!c)
        return;
    free(c->lat);
    free(c->mem);
    free(c->flows);
    free(c->q);
    free(c->qmask);
    free(c);
}

int coll_submit(coll *c, int64_t now, uint64_t bytes, const uint8_t *members,
                uint64_t tag) {
    if (queue_reserve(c) < 0)
        return MSG_ENOMEM;
    int slot = c->head + c->len;
    c->q[slot] = (coll_job){bytes, tag};
    uint8_t *mask = mask_of(c, slot);
    for (int i = 0; i < c->nw; i++)
        mask[i] = members ? members[i] != 0 : 1;
    c->len++;
    int rc = start_next(c, now);
    if (rc < 0) {
        /* it was alone and idle: forget it */
        c->running = 0;
        c->len = 0;
        c->head = 0;
        return rc;
    }
    return 0;
}

void coll_on_flow_done(coll *c, int64_t now, int flow, uint64_t flow_tag) {
    if (!c->running || flow_tag < c->tag_base)
        return;
    uint64_t k = flow_tag - c->tag_base;
    if (k >= (uint64_t)c->nflows || c->flows[k] != flow)
        return; /* not a flow of the current step */
    c->flows[k] = -1;
    if (--c->left > 0)
        return;
    if (++c->step < c->nsteps)
        launch_step(c, now); /* OOM: stalls, see the header comment */
    else
        finish_head(c, now);
}

void coll_remove_member(coll *c, int64_t now, int worker) {
    if (worker < 0 || worker >= c->nw)
        return;
    int in_running = c->running && mask_of(c, c->head)[worker];
    for (int j = 0; j < c->len; j++)
        mask_of(c, c->head + j)[worker] = 0;
    if (!in_running)
        return;
    cancel_step(c, now);
    restart_head(c, now); /* OOM: stalls, see the header comment */
}

void coll_clear(coll *c, int64_t now) {
    if (c->running)
        cancel_step(c, now);
    c->running = 0;
    c->len = 0;
    c->head = 0;
}

int coll_pending(const coll *c) {
    return c->len;
}

int coll_parse_algo(const char *name, coll_algo *out) {
    int a = msg_parse_name(name, algo_names, 3);
    if (a < 0) return -1;
    *out = (coll_algo)a;
    return 0;
}

const char *coll_algo_name(coll_algo a) {
    return a >= COLL_RING && a <= COLL_STAR ? algo_names[a] : "unknown";
}

void coll_signature(const coll *c, sig_buf *b) {
    sig_i64(b, c->len);
    for (int k = 0; k < c->len; k++) {
        sig_put(b, &c->q[c->head + k], sizeof c->q[0]);
        sig_put(b, mask_of(c, c->head + k), (size_t)c->nw);
    }
    sig_i64(b, c->running);
    if (!c->running) return;
    sig_put(b, c->mem, (size_t)c->m * sizeof *c->mem);
    int64_t v[4] = {c->m, c->step, c->nsteps, c->left};
    sig_put(b, v, sizeof v);
    sig_i64(b, c->nflows);
    sig_put(b, c->flows, (size_t)c->nflows * sizeof *c->flows);
}
