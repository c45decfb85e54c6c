/*
 * collective.c -- all-reduce of one worker group, as steps of flows.
 *
 * A stream holds a FIFO of submitted collectives; the head one runs.  A
 * running collective is a sequence of steps, each a set of flows started
 * together on the net; when the last flow of a step completes, the next
 * step starts at that instant, and after the last step the collective is
 * reported done and the next one in the queue starts.
 *
 *   algorithm    steps       flows in a step (M members m[0], ... in ring order)
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
 * The shortcut (coll_set_exclusive: the stream alone on its net, no member
 * ever removed).  When every flow of a ring gets the same rate (its cap
 * and its two links, each alone on them) and the same latency, the flows
 * of one step differ only in their chunk's size, q = floor(S/M) or q + 1:
 * every member sends one chunk per step, each step sends every chunk
 * once, and alike flows alone on their links move alike.  So from the
 * second step on (the first, run as M flows, sets the links' peaks), a
 * step is one flow per size on no link, standing for the M - S mod M or
 * S mod M flows of that size (net_flow_set_count), with the rate as its
 * cap: the net then goes through the very instants and arithmetic of the
 * M flows.  The bytes those steps move are the members' own: member k
 * sends chunk (k - s) mod M in step s, so after whole steps its bytes are
 * a run of chunks in closed form (ring_sent), and in the step under way
 * what its size's flow has moved; flush_alike() adds them to member k's
 * up link and its successor's down link, at the collective's end and
 * whenever asked (coll_flush_bytes).  Rings that are not alike run as
 * before, and so do rings under TCP: their flows' windows differ by
 * connection and their rates change by round, so keeping the shortcut
 * exact would take the windows of M connections through one flow.
 *
 * TCP.  Connection i * nw + j keeps the window its last flow ended with
 * (net_flow_window, read in the done callback or before a cancel) and the
 * instant its sender last sent data, stored less net_shift_total() so that
 * a shift of the net moves it too.  A flow moves its bytes (as the net
 * counts them, at the receiver) over [t_act, t_end], t_act its activation
 * and t_end its completion or cancel; its sender sent them one one-way
 * latency earlier, over [t_act - lat, t_end - lat]: Linux's lsndtime is
 * t_end - lat(i -> j).  A flow cancelled at or before t_act has moved
 * nothing and sent nothing: its connection stays as it was (its window,
 * restarted or not, was never used).  A flow's start window is taken when
 * the flow is added, at the instant its step began plus the step overhead
 * and the set-up it pays, if any (t_act - lat, when its sender sends
 * again); the step overhead and the set-up are part of the flow's wait.
 *
 * Set-up (coll_set_startup).  `started` marks the ordered pairs set up;
 * a flow of a pair not set up waits the set-up too and marks it (fsetup
 * says which pair each flow of the step pays for).  When that flow ends,
 * setup_end() reports the wait, and unmarks the pair if the flow was
 * cancelled before its set-up was over.  A removed member's pairs are
 * unmarked both ways (coll_remove_member).
 *
 * Choices the header leaves open (what a simulation user would expect):
 *  - Every flow of the stream is owned by flow_done (context: the
 *    stream), so the net reports its completions here directly.  Its net
 *    tag is tag_base + its index within its step, so the tags of one
 *    stream lie in [tag_base, tag_base + M(M-1)) (all_to_all has the most
 *    flows per step); the tag finds the flow's index, and it is what the
 *    net's signature tells the flows of different owners apart by.
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
#include "sim/engine/coll_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"

/* ---- the queue --------------------------------------------------------- */

static uint8_t *mask_of(const coll *c, int slot) {
    return c->qmask + (size_t)slot * (size_t)c->nw;
}

/* Makes room for one more job at the tail: slides the live jobs to the
 * front, or doubles the arrays.  Returns 0 or -1 (out of memory). */
static int queue_reserve(coll *c) {
    if (c->head + c->len < c->qcap) return 0;
    if (c->head > 0) {
        memmove(c->q, c->q + c->head, (size_t)c->len * sizeof *c->q);
        memmove(c->qmask, mask_of(c, c->head), (size_t)c->len * (size_t)c->nw);
        c->head = 0;
        return 0;
    }
    int cap = c->qcap ? 2 * c->qcap : 4;
    coll_job *q = realloc(c->q, (size_t)cap * sizeof *q);
    if (!q) return -1;
    c->q = q;
    uint8_t *mk = realloc(c->qmask, (size_t)cap * (size_t)c->nw);
    if (!mk) return -1;
    c->qmask = mk;
    c->qcap = cap;
    return 0;
}

static void queue_pop(coll *c) {
    c->head++;
    if (--c->len == 0) c->head = 0;
}

/* ---- steps ------------------------------------------------------------- */

static int steps_of(coll_algo algo, int m) {
    if (m <= 1) return 1;
    return algo == COLL_RING ? 2 * (m - 1) : 2;
}

/* Bytes of chunk i (0 <= i < m) of S bytes split m ways:
 * floor((i+1)S/m) - floor(iS/m), without overflow. */
uint64_t coll_chunk_bytes(uint64_t S, int m, int i) {
    if (m <= 1) return S;
    uint64_t M = (uint64_t)m, q = S / M, r = S % M, k = (uint64_t)i;
    return q + ((k + 1) * r / M - k * r / M);
}

/* ---- the shortcut: the bytes of each member ----------------------------- */

/* floor(x S / m) for 0 <= x <= m: the bytes of chunks 0 .. x-1. */
static uint64_t chunks_below(uint64_t S, int m, int x) {
    uint64_t M = (uint64_t)m, X = (uint64_t)x;
    return X * (S / M) + X * (S % M) / M;
}

/* Bytes of the n (<= m) chunks i, i+1, ... (indices mod m). */
static uint64_t chunk_run(uint64_t S, int m, int i, int n) {
    if (i + n <= m) return chunks_below(S, m, i + n) - chunks_below(S, m, i);
    return S - chunks_below(S, m, i) + chunks_below(S, m, i + n - m);
}

/* Bytes member index k sends in ring steps a .. b-1 (step s: chunk
 * (k - s) mod m, the reduce-scatter's and the all-gather's alike). */
static uint64_t ring_sent(uint64_t S, int m, int k, int a, int b) {
    if (b <= a) return 0;
    int n = b - a, rem = n % m;
    /* m steps in a row send every chunk once; the last rem steps send
     * chunks k - b + 1 .. k - b + rem */
    return (uint64_t)(n / m) * S +
           chunk_run(S, m, ((k - b + 1) % m + m) % m, rem);
}

/* Bytes member index k has moved in the alike steps (>= 1) of the running
 * collective: the steps before the current one whole, the current one as
 * far as the flow of its chunk's size has come (once past the last step,
 * all of them). */
static uint64_t alike_sent(const coll *c, int k) {
    int s = c->step, M = c->m;
    uint64_t S = c->q[c->head].bytes;
    uint64_t sent = ring_sent(S, M, k, 1, s < c->nsteps ? s : c->nsteps);
    if (s >= c->nsteps) return sent;
    int chunk = ((k - s) % M + M) % M;
    uint64_t b = coll_chunk_bytes(S, M, chunk);
    int f = (int)(b - S / (uint64_t)M); /* its flow: 0 small, 1 big */
    int id = f < c->nflows ? c->flows[f] : -1;
    return sent + (id < 0 ? b : net_flow_counted(c->n, id));
}

/* Adds to the net's link counters what the alike steps have moved since
 * the last time: member k's up link and its successor's down link. */
static void flush_alike(coll *c) {
    if (!c->running || !c->alike || c->step == 0) return;
    for (int k = 0; k < c->m; k++) {
        uint64_t sent = alike_sent(c, k), d = sent - c->flushed[k];
        if (d == 0) continue;
        net_link_bytes_add(c->n, 2 * c->mem[k], d);
        net_link_bytes_add(c->n, 2 * c->mem[(k + 1) % c->m] + 1, d);
        c->flushed[k] = sent;
    }
}

/* Ends the shortcut of the running collective: every byte it moved is on
 * the net's counters. */
static void end_alike(coll *c) {
    if (!c->alike) return;
    flush_alike(c);
    memset(c->flushed, 0, (size_t)c->nw * sizeof *c->flushed);
    c->alike = 0;
}

/* The wait of a flow from worker i to worker j before it is active: the
 * step overhead, then the one-way latency. */
int64_t coll__flow_lat(const coll *c, int i, int j) {
    return c->overhead + c->lat[i * c->nw + j];
}

/* Whether the ring about to start among c->mem can take the shortcut: an
 * exclusive stream without TCP on a net without ACKs (whose loads share
 * links), and every flow of a step gets the same rate (its cap and its
 * two links alone, as lone_rate() in net.c takes them) and the same
 * latency.  The steps it takes (from the second) pay no set-up: the first
 * set every pair of the ring up.  Sets alike_rate and alike_lat. */
static int alike_ring(coll *c) {
    if (!c->exclusive || c->tcp || c->member_done || c->algo != COLL_RING ||
        c->m < 2 || net_ack(c->n) > 0)
        return 0;
    for (int k = 0; k < c->m; k++) {
        int i = c->mem[k], j = c->mem[(k + 1) % c->m];
        double r = c->max_rate, up = net_link_capacity(c->n, 2 * i);
        double down = net_link_capacity(c->n, 2 * j + 1);
        if (up < r) r = up;
        if (down < r) r = down;
        int64_t lat = coll__flow_lat(c, i, j);
        if (k == 0) {
            c->alike_rate = r;
            c->alike_lat = lat;
        } else if (r != c->alike_rate || lat != c->alike_lat) {
            return 0;
        }
    }
    return c->alike_rate > 0;
}

/* ---- TCP connections ---------------------------------------------------- */

/* The round trip of the pair (i, j): lat(i -> j) + lat(j -> i) + the
 * standing queue (coll_set_queue). */
static int64_t pair_rtt(const coll *c, int pair) {
    int i = pair / c->nw, j = pair % c->nw;
    return c->lat[i * c->nw + j] + c->lat[j * c->nw + i] + c->queue;
}

static int64_t rto_min_ns(const coll_tcp *t) {
    return (int64_t)llround(t->rto_min_s * 1e9);
}

double coll_tcp_restart(const coll_tcp *t, int64_t rtt_ns, double window,
                        int64_t idle_ns) {
    if (!t->restart_after_idle) return window;
    int64_t rto = rtt_ns + rto_min_ns(t);
    if (idle_ns <= rto) return window;
    double restart =
        t->init_window_bytes < window ? t->init_window_bytes : window;
    if (rto <= 0) /* every instant is an RTO: halved down to restart */
        return restart;
    /* tcp_cwnd_restart(): one halving per RTO elapsed, down to restart */
    for (int64_t delta = idle_ns; (delta -= rto) > 0 && window > restart;)
        window *= 0.5;
    return window > restart ? window : restart;
}

/* The instant connection p last sent data (its last flow's end less its
 * one-way latency), as the net's clock now has it (net_shift moves it). */
static int64_t conn_end_at(const coll *c, int p) {
    return c->cend[p] + net_shift_total(c->n);
}

/* The window a flow starting on connection p at `start` begins with. */
static double conn_window(const coll *c, int p, int64_t start) {
    if (c->cend[p] == INT64_MIN) return c->tp.init_window_bytes;
    return coll_tcp_restart(&c->tp, pair_rtt(c, p), c->cwin[p],
                            start - conn_end_at(c, p));
}

/* Flow k of the step (net id `flow`) has ended (completed or been
 * cancelled) at now: its connection keeps its window and the instant its
 * sender last sent, now less the one-way latency -- unless the flow was
 * not yet past its activation, step start + overhead + latency, and so
 * sent nothing (see the file comment). */
static void conn_close(coll *c, int k, int flow, int64_t now) {
    int p = c->fpair[k];
    if (p < 0) return;
    int64_t shift = net_shift_total(c->n), lat = c->lat[p];
    int64_t setup = c->fsetup[k] >= 0 ? c->startup : 0;
    if (now - shift <= c->step_at + c->overhead + setup + lat) return;
    c->cwin[p] = net_flow_window(c->n, flow);
    c->cend[p] = now - lat - shift;
}

/* ---- connection set-up ------------------------------------------------- */

/* Flow k of the step, which pays the set-up of its pair, ends at now
 * (completes, or is cancelled): the set-up ran from its sender's start
 * (the step's start plus the overhead) for `startup` ns, or up to now
 * when the flow was cancelled before that; a set-up cut short leaves the
 * pair as never set up.  Reports the wait to on_startup, once per sender
 * and step (a star's hub sets up every pair of its broadcast at once). */
static void setup_end(coll *c, int k, int64_t now) {
    int p = c->fsetup[k];
    if (p < 0) return;
    int64_t t0 = c->step_at + net_shift_total(c->n) + c->overhead;
    int64_t t1 = t0 + c->startup;
    if (now < t1) {
        c->started[p] = 0;
        t1 = now;
    }
    int src = p / c->nw;
    if (c->on_startup && t1 > t0 && c->told[src] != c->step_at) {
        c->told[src] = c->step_at;
        c->on_startup(c->ctx, c->q[c->head].tag, src, p % c->nw, t0, t1);
    }
}

/* Grows the per-flow arrays of the step to twice their size.  Returns 0
 * or MSG_ENOMEM. */
static int grow_step(coll *c) {
    int cap = c->fcap ? 2 * c->fcap : 16;
    int **arrays[] = {&c->flows, &c->fpair, &c->fsetup};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        int *p = realloc(*arrays[i], (size_t)cap * sizeof *p);
        if (!p) return MSG_ENOMEM;
        *arrays[i] = p;
    }
    c->fcap = cap;
    return 0;
}

/* ---- flows ------------------------------------------------------------- */

static void flow_done(void *ctx, int64_t now, int flow, uint64_t tag);

/* Starts one flow of the current step over links a and b, standing for
 * `count` flows, active after lat; for pair >= 0 (i * nw + j) a flow of
 * that pair: it first pays the pair's set-up if the pair was never set up
 * (coll_set_startup), and it is a TCP flow of connection `pair` when TCP
 * is on and its round trip is not 0.  Returns 0 or a negative MSG_E*
 * code. */
int coll__start_flow(coll *c, int64_t now, int64_t lat, int a, int b,
                     uint64_t bytes, double rate, int count, int pair) {
    if (c->nflows == c->fcap && grow_step(c)) return MSG_ENOMEM;
    int setup = pair >= 0 && c->startup > 0 && !c->started[pair];
    int64_t wait = setup ? c->startup : 0;
    int id = net_flow_add(c->n, now, lat + wait, a, b, bytes, rate, flow_done,
                          c, c->tag_base + (uint64_t)c->nflows);
    if (id < 0) return id;
    if (count > 1) net_flow_set_count(c->n, id, count);
    int conn = -1;
    if (c->tcp && pair >= 0 && pair_rtt(c, pair) > 0 &&
        net_flow_set_tcp(c->n, id, pair_rtt(c, pair),
                         conn_window(c, pair, now + c->overhead + wait),
                         c->tp.max_window_bytes) == 0)
        conn = pair;
    if (setup) c->started[pair] = 1;
    c->fsetup[c->nflows] = setup ? pair : -1;
    c->fpair[c->nflows] = conn;
    c->flows[c->nflows++] = id;
    c->left++;
    return 0;
}

/* Starts one flow of the current step from worker i to worker j. */
int coll__add_flow(coll *c, int64_t now, int i, int j, uint64_t bytes) {
    return coll__start_flow(c, now, coll__flow_lat(c, i, j), 2 * i, 2 * j + 1,
                            bytes, c->max_rate, 1, i * c->nw + j);
}

/* Cancels the flows of the current step still on the net (their
 * connections keep the window they had). */
void coll__cancel_step(coll *c, int64_t now) {
    for (int k = 0; k < c->nflows; k++)
        if (c->flows[k] >= 0) {
            conn_close(c, k, c->flows[k], now);
            setup_end(c, k, now);
            net_flow_cancel(c->n, now, c->flows[k]);
        }
    c->nflows = 0;
    c->left = 0;
}

/* Adds the flows of step c->step of the running collective.  On failure
 * the step's flows are cancelled and a negative MSG_E* code returned. */
static int launch_step(coll *c, int64_t now) {
    c->nflows = 0;
    c->left = 0;
    c->step_at = now - net_shift_total(c->n);
    return c->fab ? coll__site_step(c, now) : coll__plain_step(c, now, c->step);
}

int coll__plain_step(coll *c, int64_t now, int s) {
    const int *m = c->mem, M = c->m;
    uint64_t S = c->q[c->head].bytes;
    int err = 0;
    if (M <= 1) {
        int id = net_flow_add(c->n, now, 0, -1, -1, 0, INFINITY, flow_done, c,
                              c->tag_base);
        if (id < 0) return id;
        c->fpair[c->nflows] = -1;
        c->fsetup[c->nflows] = -1;
        c->flows[c->nflows++] = id; /* fcap >= 16 from coll_new */
        c->left = 1;
        return 0;
    }
    if (c->alike && s > 0) {
        /* one flow per chunk size, on no link (the file comment) */
        uint64_t q = S / (uint64_t)M;
        int big = (int)(S % (uint64_t)M);
        err = coll__start_flow(c, now, c->alike_lat, -1, -1, q, c->alike_rate,
                               M - big, -1);
        if (!err && big > 0)
            err = coll__start_flow(c, now, c->alike_lat, -1, -1, q + 1,
                                   c->alike_rate, big, -1);
        if (err) coll__cancel_step(c, now);
        return err;
    }
    switch (c->algo) {
    case COLL_RING:
        for (int k = 0; k < M && !err; k++) {
            int chunk = s < M - 1 ? k - s : k + 1 - (s - (M - 1));
            chunk = ((chunk % M) + M) % M;
            err = coll__add_flow(c, now, m[k], m[(k + 1) % M],
                                 coll_chunk_bytes(S, M, chunk));
        }
        break;
    case COLL_ALL_TO_ALL:
        for (int b = 0; c->member_done && b < M; b++)
            c->inleft[b] = M - 1; /* members_done counts them down */
        for (int a = 0; a < M && !err; a++)
            for (int b = 0; b < M && !err; b++)
                if (a != b)
                    err =
                        coll__add_flow(c, now, m[a], m[b],
                                       coll_chunk_bytes(S, M, s == 0 ? b : a));
        break;
    case COLL_STAR:
        for (int k = 1; k < M && !err; k++)
            err = s == 0 ? coll__add_flow(c, now, m[k], m[0], S)
                         : coll__add_flow(c, now, m[0], m[k], S);
        break;
    }
    if (err) coll__cancel_step(c, now);
    return err;
}

/* Takes the members of the head job from its mask and starts its first
 * step.  Returns 0 or a negative MSG_E* code (the collective then has no
 * flows). */
static int restart_head(coll *c, int64_t now) {
    const uint8_t *mask = mask_of(c, c->head);
    c->m = 0;
    for (int k = 0; k < c->nw; k++)
        if (mask[c->order[k]]) c->mem[c->m++] = c->order[k];
    c->step = 0;
    c->nsteps = steps_of(c->algo, c->m);
    c->running = 1;
    c->alike = !c->fab && alike_ring(c);
    if (c->fab) coll__site_begin(c);
    return launch_step(c, now);
}

/* Starts the head job if the stream is idle. */
static int start_next(coll *c, int64_t now) {
    if (c->running || c->len == 0) return 0;
    return restart_head(c, now);
}

/* The running collective has finished its last step. */
static void finish_head(coll *c, int64_t now) {
    end_alike(c);
    if (c->fab) coll__site_end(c);
    uint64_t tag = c->q[c->head].tag;
    queue_pop(c);
    c->running = 0;
    c->nflows = 0;
    if (c->done) c->done(c->ctx, now, tag);
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
    if (!c) return NULL;
    size_t nn = (size_t)nworkers * (size_t)nworkers;
    c->lat = calloc(nn, sizeof *c->lat);
    c->mem = calloc((size_t)nworkers, sizeof *c->mem);
    c->flows = calloc(16, sizeof *c->flows);
    c->fpair = calloc(16, sizeof *c->fpair);
    c->fsetup = calloc(16, sizeof *c->fsetup);
    c->flushed = calloc((size_t)nworkers, sizeof *c->flushed);
    c->order = calloc((size_t)nworkers, sizeof *c->order);
    c->cwin = calloc(nn, sizeof *c->cwin);
    c->cend = calloc(nn, sizeof *c->cend);
    if (!c->lat || !c->mem || !c->flows || !c->fpair || !c->fsetup ||
        !c->flushed || !c->order || !c->cwin || !c->cend) {
        coll_free(c);
        return NULL;
    }
    for (int i = 0; i < nworkers; i++) c->order[i] = i;
    if (lat_ns) memcpy(c->lat, lat_ns, nn * sizeof *c->lat);
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
    if (!c) return;
    free(c->lat);
    free(c->mem);
    free(c->flows);
    free(c->fpair);
    free(c->fsetup);
    free(c->started);
    free(c->told);
    free(c->flushed);
    free(c->order);
    free(c->cwin);
    free(c->cend);
    free(c->inleft);
    free(c->fab);
    free(c->site_owed);
    free(c->q);
    free(c->qmask);
    free(c);
}

int coll_submit(coll *c, int64_t now, uint64_t bytes, const uint8_t *members,
                uint64_t tag) {
    if (queue_reserve(c) < 0) return MSG_ENOMEM;
    int slot = c->head + c->len;
    c->q[slot] = (coll_job){bytes, tag};
    uint8_t *mask = mask_of(c, slot);
    for (int i = 0; i < c->nw; i++) mask[i] = members ? members[i] != 0 : 1;
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

/* Member index k of the running collective has all of its result. */
static void member_has_it(coll *c, int64_t now, int k) {
    c->member_done(c->ctx, now, c->q[c->head].tag, c->mem[k]);
}

/* Flow k of the current step has ended: the members it completes (see
 * coll_set_member_done).  A star's hub has the sum once its gather ends
 * (left is then 0); in the last step, a ring's flow k completes member
 * k + 1, a star's member k + 1, an all-to-all's its receiver once all of
 * that member's incoming flows have ended. */
static void members_done(coll *c, int64_t now, int k) {
    int M = c->m, last = c->step == c->nsteps - 1;
    if (M <= 1) {
        if (M == 1) member_has_it(c, now, 0);
        return;
    }
    switch (c->algo) {
    case COLL_RING:
        if (last) member_has_it(c, now, (k + 1) % M);
        break;
    case COLL_STAR:
        if (last) member_has_it(c, now, k + 1);
        else if (c->left == 0) member_has_it(c, now, 0);
        break;
    case COLL_ALL_TO_ALL: {
        if (!last) break;
        int a = k / (M - 1), b = k % (M - 1);
        b += b >= a; /* flows run a -> b for b != a, in order */
        if (--c->inleft[b] == 0) member_has_it(c, now, b);
        break;
    }
    }
}

/* The net's done callback of every flow of the stream (ctx: the stream):
 * flow k of the current step has completed.  Advances the running
 * collective, starts the next one.  The net calls it only for flows that
 * are live, so the check on k is a guard, not a filter. */
static void flow_done(void *ctx, int64_t now, int flow, uint64_t tag) {
    coll *c = ctx;
    uint64_t k = tag - c->tag_base;
    if (!c->running || k >= (uint64_t)c->nflows || c->flows[k] != flow) return;
    if (c->tcp) conn_close(c, (int)k, flow, now);
    if (c->startup > 0) setup_end(c, (int)k, now);
    c->flows[k] = -1;
    --c->left;
    if (c->member_done) members_done(c, now, (int)k);
    if (c->left > 0) return;
    if (++c->step < c->nsteps)
        launch_step(c, now); /* OOM: stalls, see the header comment */
    else finish_head(c, now);
}

void coll_remove_member(coll *c, int64_t now, int worker) {
    if (worker < 0 || worker >= c->nw) return;
    for (int j = 0; c->started && j < c->nw; j++) /* its connections go */
        c->started[worker * c->nw + j] = c->started[j * c->nw + worker] = 0;
    int in_running = c->running && mask_of(c, c->head)[worker];
    for (int j = 0; j < c->len; j++) mask_of(c, c->head + j)[worker] = 0;
    if (!in_running) return;
    end_alike(c);
    coll__cancel_step(c, now);
    restart_head(c, now); /* OOM: stalls, see the header comment */
}

void coll_clear(coll *c, int64_t now) {
    if (c->running) {
        end_alike(c);
        coll__cancel_step(c, now);
    }
    c->running = 0;
    c->len = 0;
    c->head = 0;
}

int coll_pending(const coll *c) {
    return c->len;
}

int coll_set_member_done(coll *c, coll_member_fn fn) {
    if (fn && !c->inleft) {
        c->inleft = calloc((size_t)c->nw, sizeof *c->inleft);
        if (!c->inleft) return MSG_ENOMEM;
    }
    c->member_done = fn;
    return 0;
}

void coll_set_exclusive(coll *c) {
    c->exclusive = 1;
    if (c->algo == COLL_RING) net_set_anonymous(c->n);
}

int coll_set_sites(coll *c, const fabric *sites, int ring, int closed) {
    free(c->fab), free(c->site_owed);
    c->fab = NULL;
    c->site_owed = NULL;
    c->site_ring = ring;
    c->site_closed = closed;
    if (!sites) return 0;
    c->fab = malloc((size_t)c->nw * sizeof *c->fab);
    c->site_owed = calloc((size_t)c->nw, sizeof *c->site_owed);
    if (!c->fab || !c->site_owed) return MSG_ENOMEM;
    memcpy(c->fab, sites, (size_t)c->nw * sizeof *c->fab);
    return 0;
}

void coll_flush_bytes(coll *c) {
    flush_alike(c);
}

void coll_set_tcp(coll *c, const coll_tcp *t) {
    if (!t) {
        c->tcp = 0;
        return;
    }
    if (!(t->init_window_bytes > 0) || !isfinite(t->init_window_bytes) ||
        !(t->max_window_bytes > 0) || !(t->rto_min_s >= 0) ||
        !(t->rto_min_s <= 1e9))
        return;
    c->tp = *t;
    c->tcp = 1;
    size_t nn = (size_t)c->nw * (size_t)c->nw;
    for (size_t p = 0; p < nn; p++) {
        c->cwin[p] = t->init_window_bytes;
        c->cend[p] = INT64_MIN;
    }
}

void coll_set_step_overhead(coll *c, int64_t ns) {
    if (ns >= 0) c->overhead = ns < COLL_OVERHEAD_MAX ? ns : COLL_OVERHEAD_MAX;
}

int coll_set_startup(coll *c, int64_t ns, coll_startup_fn fn) {
    if (ns < 0) return 0;
    if (!c->started) {
        c->started = calloc((size_t)c->nw * (size_t)c->nw, 1);
        c->told = malloc((size_t)c->nw * sizeof *c->told);
        if (!c->started || !c->told) {
            free(c->started);
            free(c->told);
            c->started = NULL;
            c->told = NULL;
            return MSG_ENOMEM;
        }
        for (int i = 0; i < c->nw; i++) c->told[i] = INT64_MIN;
    }
    c->startup = ns < COLL_OVERHEAD_MAX ? ns : COLL_OVERHEAD_MAX;
    c->on_startup = fn;
    return 0;
}

void coll_set_queue(coll *c, int64_t ns) {
    if (ns >= 0) c->queue = ns < COLL_OVERHEAD_MAX ? ns : COLL_OVERHEAD_MAX;
}

int coll_set_order(coll *c, const int *order) {
    if (!order) {
        for (int i = 0; i < c->nw; i++) c->order[i] = i;
        return 0;
    }
    uint8_t *seen = calloc((size_t)c->nw, 1);
    if (!seen) return MSG_ENOMEM;
    int ok = 1;
    for (int k = 0; k < c->nw && ok; k++) {
        ok = order[k] >= 0 && order[k] < c->nw && !seen[order[k]];
        if (ok) seen[order[k]] = 1;
    }
    free(seen);
    if (!ok) return MSG_EINPUT;
    memcpy(c->order, order, (size_t)c->nw * sizeof *order);
    return 0;
}

double coll_conn_window(const coll *c, int i, int j) {
    if (!c->tcp || i < 0 || j < 0 || i >= c->nw || j >= c->nw) return 0;
    return c->cwin[i * c->nw + j];
}

/* The connections' part of coll_signature(): each one that carried a
 * flow, with its window and how long ago (on the net's clock) it last
 * sent data, or INT64_MIN once that no longer matters (see the header);
 * then -1. */
static void conns_signature(const coll *c, sig_buf *b) {
    sig_i64(b, c->tcp);
    if (!c->tcp) return;
    int64_t now = net_now(c->n);
    for (int p = 0; p < c->nw * c->nw; p++) {
        if (c->cend[p] == INT64_MIN)
            continue; /* never used: at the initial window */
        double w = c->cwin[p];
        double floor =
            c->tp.init_window_bytes < w ? c->tp.init_window_bytes : w;
        int64_t idle = now - conn_end_at(c, p);
        if (!c->tp.restart_after_idle ||
            coll_tcp_restart(&c->tp, pair_rtt(c, p), w, idle) == floor)
            idle = INT64_MIN; /* idling longer changes nothing */
        sig_i64(b, p);
        sig_put(b, &w, sizeof w);
        sig_i64(b, idle);
    }
    sig_i64(b, -1);
}

void coll_signature(const coll *c, sig_buf *b) {
    conns_signature(c, b);
    sig_i64(b, c->startup);
    if (c->startup > 0) /* which pairs are set up */
        sig_put(b, c->started, (size_t)c->nw * (size_t)c->nw);
    sig_i64(b, c->len);
    for (int k = 0; k < c->len; k++) {
        sig_put(b, &c->q[c->head + k], sizeof c->q[0]);
        sig_put(b, mask_of(c, c->head + k), (size_t)c->nw);
    }
    sig_i64(b, c->running);
    if (!c->running) return;
    sig_put(b, c->mem, (size_t)c->m * sizeof *c->mem);
    int64_t v[5] = {c->m, c->step, c->nsteps, c->left, c->alike};
    sig_put(b, v, sizeof v);
    sig_i64(b, c->nflows);
    /* which flows of the step are still running; their ids are the net's
     * (flow k is the live flow tagged tag_base + k) */
    for (int k = 0; k < c->nflows; k++) {
        uint8_t live = c->flows[k] >= 0, setup = c->fsetup[k] >= 0;
        sig_put(b, &live, 1);
        if (c->startup > 0) sig_put(b, &setup, 1);
    }
}
