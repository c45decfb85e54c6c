/*
 * explain.c -- why a run's wall time is what it is: every nanosecond of
 * every worker, from 0 to the run's end, booked to exactly one part.
 *
 * The design.  expl_run runs the scenario through run__simulate with a
 * book: the same run as run_simulate (the loop, the fast path of ops run
 * as one event and the exclusive ring's shortcut stay; only the jumps
 * over repeating periods are off, since a jump skips the instants the
 * book needs), so the run_result is bit for bit run_simulate's.  Before
 * each event the loop calls expl__advance: each worker's state since the
 * previous event held until this instant (states change only inside
 * events), so the interval is booked to what that state means (classify):
 *
 *   busy              computing (split below)
 *   blocked, copy     offload: waiting for a copy-in of outer state
 *   blocked, gate     its reduction not yet submitted (a member has not
 *                     arrived): gate_wait; submitted (queued, sent, or in
 *                     member completion its own result not there yet):
 *                     exposed communication
 *   blocked, held     an arrival held for the fragment's previous sync:
 *                     gate_wait while a layer of that sync still collects,
 *                     else exposed communication
 *   done              exposed communication while the stream sends (the
 *                     last syncs the run waits for), else done_wait
 *   stalled           stalled (DP: a peer down or recovering)
 *   down              down
 *   recovering, rejoining  recovery
 *   checkpointing     checkpoint (faults.checkpoint_s)
 *   restarting        restart (faults.restart_s)
 *
 * Intervals are kept in a log per worker (consecutive ones of the same
 * kind merged), and clipped to the wall once it is known (events after
 * the last useful one do not count).  Exposed communication is booked
 * against the collective the stream runs at that time (the one the
 * worker waits for, or the one it queues behind); the stream tells the
 * book each collective's start, end and pair set-ups.  A collective's
 * make-up is its ideal model: the step overhead times its steps, the
 * union of its set-up waits, and per step the latency and bytes/rate of
 * its slowest flow (rate: min of the sender's up link and the receiver's
 * down link, each shared by the step's flows over it, and the flow cap);
 * what its real duration D has beyond that ideal is TCP below its share
 * under TCP (split with queue by the standing queue's share of the round
 * trip, slow start's rounds being RTT long), and bandwidth without TCP
 * (links shared with downloads, restarts after a member left).  An
 * exposed interval of length E is split over those weights by the
 * largest remainder, in integer ns: the pieces sum to E exactly.  An
 * ideal above D just scales down (the weights are shares).
 *
 * Busy time B (booked) is split from the worker's counters: redone =
 * min(lost, B) (compute a failure threw away), compute = min(useful
 * nominal ns, B - redone) (a worker faster than nominal books its actual
 * time), straggler = the rest (slow steps, slower workers, the part of an
 * op still running when an unfinished run stopped).
 *
 * The method's parts are the workers' averaged with the largest
 * remainder over the parts, so they sum to wall_ns exactly.
 */
#include "sim/engine/explain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/world.h"

const char *const expl_part_names[EXPL_PARTS] = {
    "compute", "straggler", "bandwidth", "latency",    "tcp_ramp", "startup",
    "queue",   "overhead",  "gate_wait", "down",       "redone",   "recovery",
    "offload", "stalled",   "done_wait", "checkpoint", "restart",  "absent"};

enum { CAT_BUSY = EXPL_PARTS, CAT_COMM };

typedef struct {
    int64_t t0, t1;
    int cat;  /* an expl_part, CAT_BUSY or CAT_COMM */
    int coll; /* CAT_COMM: index of the collective, else -1 */
} seg;

typedef struct {
    seg *v;
    int n, cap;
} seg_log;

/* One collective of the stream and its ideal make-up, ns. */
typedef struct {
    int64_t start, end;
    double overhead, startup, latency, bandwidth;
    double rtt;     /* round trip of its slowest flow, for TCP's share */
    int64_t su_end; /* set-up waits so far end here (their union) */
} coll_rec;

struct expl_book {
    expl_result *out;
    int64_t t; /* booked up to here */
    seg_log log[SCN_MAX_WORKERS];
    coll_rec *c;
    int nc, capc;
    int cur; /* the collective the stream runs, -1: none */
};

/* ---- classifying and logging ------------------------------------------ */

/* Is a layer of fragment f's sync still collecting arrivals? */
static int frag_collecting(const world *W, int f) {
    for (int l = 0; l < W->L; l++)
        if (W->frag[l] == f && W->red[l].state == RED_COLLECTING) return 1;
    return 0;
}

/* What worker i's state means, as a part or CAT_BUSY / CAT_COMM. */
static int classify(const world *W, int i) {
    const worker *w = &W->w[i];
    switch (w->state) {
    case W_BUSY: return CAT_BUSY;
    case W_STALLED: return EXPL_STALLED;
    case W_DOWN: return w->absent ? EXPL_ABSENT : EXPL_DOWN;
    case W_RECOVERING:
    case W_REJOINING: return EXPL_RECOVERY;
    case W_DONE: return W->stream_busy ? CAT_COMM : EXPL_DONE_WAIT;
    case W_CKPT: return EXPL_CKPT;
    case W_RESTARTING: return EXPL_RESTART;
    case W_BLOCKED: break;
    default: return EXPL_GATE_WAIT; /* ready: never for long */
    }
    if (w->wait_on == WAIT_COPY) return EXPL_OFFLOAD;
    if (w->wait_on == WAIT_SITE) return CAT_COMM; /* inside its site */
    if (w->wait_on >= W->L)
        return frag_collecting(W, w->wait_on - W->L) ? EXPL_GATE_WAIT
                                                     : CAT_COMM;
    int st = W->red[w->wait_on].state;
    if (st == RED_READY || st == RED_SENDING) return CAT_COMM;
    const release *g = &W->rel[w->wait_on];
    if (W->member_mode && g->pending && !g->got[i]) return CAT_COMM;
    return EXPL_GATE_WAIT;
}

/* Room for element n of the array *v of *cap elements of `size` bytes
 * (doubled when full): 1, or 0 out of memory (the run ends with it). */
static int room(world *W, void **v, int *cap, int n, size_t size) {
    if (n < *cap) return 1;
    int c = *cap ? 2 * *cap : 64;
    void *p = realloc(*v, (size_t)c * size);
    if (!p) {
        fail_rc(W, MSG_ENOMEM);
        return 0;
    }
    *v = p;
    *cap = c;
    return 1;
}

static void log_add(world *W, seg_log *g, int64_t t0, int64_t t1, int cat,
                    int coll) {
    if (g->n && g->v[g->n - 1].cat == cat && g->v[g->n - 1].coll == coll &&
        g->v[g->n - 1].t1 == t0) {
        g->v[g->n - 1].t1 = t1;
        return;
    }
    if (!room(W, (void **)&g->v, &g->cap, g->n, sizeof *g->v)) return;
    g->v[g->n++] = (seg){t0, t1, cat, coll};
}

void expl__advance(world *W, int64_t now) {
    expl_book *b = W->book;
    if (now <= b->t) return;
    for (int i = 0; i < W->M; i++) {
        int cat = classify(W, i), coll = -1;
        if (cat == CAT_COMM) {
            coll = b->cur;
            if (coll < 0) cat = EXPL_GATE_WAIT; /* nothing on the wire */
        }
        log_add(W, &b->log[i], b->t, now, cat, coll);
    }
    b->t = now;
}

/* ---- the collectives' make-up ----------------------------------------- */

typedef struct {
    double latency, bandwidth, rtt; /* of the slowest flow so far */
    double total;
} step_crit;

/* A flow a -> b of `bytes` at `rate` bytes/s: the step's slowest yet? */
static void flow_crit(const world *W, step_crit *s, int a, int b, double bytes,
                      double rate) {
    double lat = (double)W->lat[a * W->M + b];
    double bw = rate > 0 && isfinite(rate) ? bytes / rate * 1e9 : 0;
    if (lat + bw <= s->total) return;
    s->total = lat + bw;
    s->latency = lat;
    s->bandwidth = bw;
    s->rtt = lat + (double)W->lat[b * W->M + a];
}

static double up(const world *W, int i) {
    return net_link_capacity(W->net, 2 * i);
}

static double down(const world *W, int i) {
    return net_link_capacity(W->net, 2 * i + 1);
}

static double min3(double a, double b, double c) {
    double m = a < b ? a : b;
    return m < c ? m : c;
}

/* The slowest flow of one step of the algorithm among members mem[0..m)
 * (ring order) for S bytes (star: of its two steps together); *steps:
 * the collective's steps, *reps: how many times it runs that. */
static step_crit ideal_step(const world *W, const int *mem, int m, double S,
                            int *steps, int *reps) {
    step_crit s = {0, 0, 0, -1};
    double cap = W->flow_cap, chunk = S / m, k = m - 1;
    switch (W->cfg->collective) {
    case COLL_RING:
        *steps = *reps = 2 * (m - 1);
        for (int i = 0; i < m; i++) {
            int a = mem[i], b = mem[(i + 1) % m];
            flow_crit(W, &s, a, b, chunk, min3(up(W, a), down(W, b), cap));
        }
        break;
    case COLL_ALL_TO_ALL:
        *steps = *reps = 2;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++)
                if (i != j)
                    flow_crit(W, &s, mem[i], mem[j], chunk,
                              min3(up(W, mem[i]) / k, down(W, mem[j]) / k,
                                   cap));
        break;
    default: { /* star: gather to the hub, then its broadcast */
        *steps = 2;
        *reps = 1;
        step_crit g = s;
        for (int i = 1; i < m; i++) {
            flow_crit(W, &s, mem[i], mem[0], S,
                      min3(up(W, mem[i]), down(W, mem[0]) / k, cap));
            flow_crit(W, &g, mem[0], mem[i], S,
                      min3(up(W, mem[0]) / k, down(W, mem[i]), cap));
        }
        s.latency += g.latency;
        s.bandwidth += g.bandwidth;
        s.rtt = s.rtt > g.rtt ? s.rtt : g.rtt;
    }
    }
    return s;
}

void expl__coll_start(world *W, int l, uint64_t bytes, int64_t now) {
    expl_book *b = W->book;
    if (!room(W, (void **)&b->c, &b->capc, b->nc, sizeof *b->c)) return;
    int mem[SCN_MAX_WORKERS], m = 0;
    const scn_config *cfg = W->cfg;
    for (int k = 0; k < W->M; k++) {
        int i = cfg->has_ring_order ? cfg->ring_order[k] : k;
        if (W->red[l].came[i]) mem[m++] = i;
    }
    coll_rec *c = &b->c[b->nc];
    memset(c, 0, sizeof *c);
    c->start = c->su_end = now;
    c->end = -1;
    if (m > 1) {
        int steps, reps;
        step_crit s = ideal_step(W, mem, m, (double)bytes, &steps, &reps);
        c->overhead =
            (double)steps * (double)llround(cfg->collective_overhead_ms * 1e6);
        c->latency = reps * s.latency;
        c->bandwidth = reps * s.bandwidth;
        c->rtt = s.rtt;
    }
    b->cur = b->nc++;
}

void expl__coll_end(world *W, int64_t now) {
    expl_book *b = W->book;
    if (b->cur >= 0) b->c[b->cur].end = now;
    b->cur = -1;
}

void expl__startup(world *W, int64_t t0, int64_t t1) {
    expl_book *b = W->book;
    if (b->cur < 0) return;
    coll_rec *c = &b->c[b->cur];
    if (t0 < c->su_end) t0 = c->su_end;
    if (t1 > t0) c->startup += (double)(t1 - t0), c->su_end = t1;
}

/* ---- exact splits ----------------------------------------------------- */

/* Splits total (>= 0) over n weights (>= 0, integers) in proportion, by
 * the largest remainder (ties: the lower index): out sums to total. */
static void lr_split(int64_t total, const int64_t *w, int n, int64_t *out) {
    __int128 sum = 0;
    for (int k = 0; k < n; k++) sum += w[k];
    if (sum == 0) {
        memset(out, 0, (size_t)n * sizeof *out);
        out[0] = total;
        return;
    }
    __int128 rem[EXPL_PARTS];
    int64_t left = total;
    for (int k = 0; k < n; k++) {
        __int128 p = (__int128)total * w[k];
        out[k] = (int64_t)(p / sum);
        rem[k] = p % sum;
        left -= out[k];
    }
    while (left-- > 0) {
        int best = 0;
        for (int k = 1; k < n; k++)
            if (rem[k] > rem[best]) best = k;
        out[best]++;
        rem[best] = -1;
    }
}

/* The comm parts, in the order of the weights coll_weights fills. */
static const int comm_parts[6] = {EXPL_BANDWIDTH, EXPL_LATENCY, EXPL_TCP_RAMP,
                                  EXPL_STARTUP,   EXPL_QUEUE,   EXPL_OVERHEAD};

/* Collective c's make-up as integer weights over comm_parts. */
static void coll_weights(const world *W, const coll_rec *c, int64_t *wt) {
    int64_t D = c->end - c->start;
    double v[6] = {c->bandwidth, c->latency, 0, c->startup, 0, c->overhead};
    double ideal = v[0] + v[1] + v[3] + v[5], rest = (double)D - ideal;
    if (rest > 0) {
        if (W->cfg->transport == SCN_TRANSPORT_TCP) {
            double q = (double)llround(W->cfg->queue_ms * 1e6);
            double rtt = c->rtt + q;
            v[4] = rtt > 0 ? rest * q / rtt : 0;
            v[2] = rest - v[4];
        } else {
            v[0] += rest;
        }
    }
    for (int k = 0; k < 6; k++) wt[k] = llround(v[k] > 0 ? v[k] : 0);
}

/* ---- the result ------------------------------------------------------- */

/* Worker i's parts from its log clipped to [0, end]. */
static void worker_parts(const world *W, int i, const int64_t (*wt)[6],
                         expl_parts *p) {
    const seg_log *g = &W->book->log[i];
    int64_t busy = 0;
    memset(p, 0, sizeof *p);
    for (int k = 0; k < g->n; k++) {
        int64_t t1 = g->v[k].t1 < W->end ? g->v[k].t1 : W->end;
        int64_t len = t1 - g->v[k].t0;
        if (len <= 0) continue;
        if (g->v[k].cat == CAT_BUSY) {
            busy += len;
        } else if (g->v[k].cat == CAT_COMM) {
            int64_t piece[6];
            lr_split(len, wt[g->v[k].coll], 6, piece);
            for (int q = 0; q < 6; q++) p->ns[comm_parts[q]] += piece[q];
        } else {
            p->ns[g->v[k].cat] += len;
        }
    }
    const worker *w = &W->w[i];
    int64_t redone = w->lost < busy ? w->lost : busy;
    int64_t nominal = w->nom - w->nom_lost;
    if (nominal > busy - redone) nominal = busy - redone;
    if (nominal < 0) nominal = 0;
    p->ns[EXPL_REDONE] += redone;
    p->ns[EXPL_COMPUTE] += nominal;
    p->ns[EXPL_STRAGGLER] += busy - redone - nominal;
}

/* The workers' parts averaged: each part's sum over M workers divided by
 * M, the remainders handed out largest first so the parts sum to wall. */
static void average(const expl_parts *w, int M, expl_parts *out) {
    int64_t rem[EXPL_PARTS], left = 0;
    for (int p = 0; p < EXPL_PARTS; p++) {
        __int128 sum = 0;
        for (int i = 0; i < M; i++) sum += w[i].ns[p];
        out->ns[p] = (int64_t)(sum / M);
        rem[p] = (int64_t)(sum % M);
        left += rem[p];
    }
    for (left /= M; left > 0; left--) {
        int best = 0;
        for (int p = 1; p < EXPL_PARTS; p++)
            if (rem[p] > rem[best]) best = p;
        out->ns[best]++;
        rem[best] = -1;
    }
}

int expl__finish(world *W) {
    expl_book *b = W->book;
    expl__advance(W, W->end);
    if (W->rc) return MSG_ENOMEM; /* the log could not grow */
    int64_t(*wt)[6] = malloc((size_t)(b->nc ? b->nc : 1) * sizeof *wt);
    if (!wt) return MSG_ENOMEM;
    expl_result *r = b->out;
    r->comm_ns = 0;
    for (int k = 0; k < b->nc; k++) {
        coll_rec *c = &b->c[k];
        if (c->end < 0 || c->end > W->end) c->end = W->end;
        if (c->end > c->start) r->comm_ns += c->end - c->start;
        coll_weights(W, c, wt[k]);
    }
    for (int i = 0; i < W->M; i++)
        worker_parts(W, i, (const int64_t(*)[6])wt, &r->worker[i]);
    free(wt);
    average(r->worker, W->M, &r->method);
    r->workers_differ = 0;
    for (int i = 1; i < W->M; i++)
        if (memcmp(&r->worker[i], &r->worker[0], sizeof r->worker[0]))
            r->workers_differ = 1;
    return 0;
}

int expl_run(const scn_config *cfg, expl_result *out, char *err,
             size_t errlen) {
    expl_book *b = calloc(1, sizeof *b);
    if (!b) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    memset(out, 0, sizeof *out);
    b->out = out;
    b->cur = -1;
    int rc = run__simulate(cfg, NULL, b, &out->run, err, errlen);
    for (int i = 0; i < SCN_MAX_WORKERS; i++) free(b->log[i].v);
    free(b->c);
    free(b);
    return rc;
}
