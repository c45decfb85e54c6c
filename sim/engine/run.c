/*
 * run.c -- the event loop of one run: compute DAG, syncs, failures.
 *
 * Each worker executes one step as a fixed sequence of 3L compute ops on a
 * single stream: forward of layers 0..L-1, then, for layers L-1..0, the
 * two halves of the backward (activations and parameters, in the order the
 * scenario gives).  When the parameter backward of layer l ends after a
 * step t at which the schedule takes l's fragment, the worker has
 * "arrived" for the reduction of layer l; when every participant has
 * arrived, the all-reduce of that layer's payload is ready.  The group's
 * communication stream sends one all-reduce at a time: the oldest ready
 * one (reduce_order fifo) or the one the next forward needs first
 * (forward_first).  The forward of layer l in step t + 1 + tau waits until
 * that all-reduce has completed (DP and DiLoCo: tau = 0); with per-worker
 * taus the take is the schedule's (the least tau) and worker i waits at
 * step t + 1 + tau_i.  With a 1-outer-step overlap the delay is H: the
 * next take of the fragment comes first, and the arrival for it waits
 * until the previous sync is over (as with late: continue).  Layout
 * sliced: every layer belongs to every fragment, with 1/P of its bytes;
 * frag[l] is the fragment of the layer's current reduction.
 *
 * Events at one instant run in class order: communication first (so a
 * forward that can start at the instant a reduction ends does), then
 * failures and repairs, then compute completions.
 *
 * Failures.  DP: every worker stalls until the failed ones are repaired
 * and have downloaded the parameters; all compute since the last
 * checkpoint (every checkpoint_steps steps, taken once every worker has
 * computed the step and its all-reduces have completed: dp_commit) is
 * lost and redone.  DiLoCo and streaming: the others go on and reduce
 * among themselves; the failed worker loses what it computed since its
 * last contribution to each fragment that reached a completed sync (it
 * took part in every layer of that sync; weighted 1/P per fragment): an
 * arrival whose reduction then goes on without it counts for nothing.
 * Once repaired it downloads the outer parameters from a live peer and
 * rejoins at the step after the apply step of a completed sync (the
 * newest, if the group has not begun that step yet, else the next one
 * to complete), once a worker of the group has finished the step before:
 * never ahead of the group, whose steps it would otherwise skip (with
 * tau, or a delay of H under outer and eager overlap, the result of a
 * sync exists up to that many steps before it is applied).  When the
 * whole group has failed, the first worker back begins again at once, at
 * the step after the group's last finished step (or the newest sync's,
 * if that is sooner), from the outer parameters of the last completed
 * sync; what was in flight is abandoned (group_restart).
 *
 * Measure.  A sync whose apply step lies past the last step is not taken
 * (measure run, the default; syncs_not_waited counts them); with measure
 * steady it is taken after its step and the run waits for it, as a
 * longer run would.
 *
 * Life of a reduction (one per layer at a time, in W->red[l]):
 *   RED_IDLE        nothing outstanding; the forward of layer l is free.
 *   RED_COLLECTING  on_op_done -> arrive: the first participant to finish
 *                   the parameter backward of l after a step the schedule
 *                   takes l's fragment opens it (reduction_open: members =
 *                   the joined workers; gate[l] = take + 1 + tau).  Each
 *                   member's arrival is recorded; a failed member is
 *                   dropped (reductions_drop); one with no members (its
 *                   sync timed out before they came) is over at once.
 *   RED_READY       reduction_submit: every member has arrived; the layer
 *                   waits in W->ready for the communication stream.
 *   RED_SENDING     stream_kick hands it to the collective (coll_submit);
 *                   the flows run on the net (net_advance -> the
 *                   stream's own flow callback) until the collective ends.
 *   back to idle    on_coll_done -> reduction_done: spans, sync count,
 *                   the result charged to the joined workers that did not
 *                   take part (result_to_others), gate cleared, blocked
 *                   workers woken (wake), repaired workers rejoined when a
 *                   whole fragment has synced.
 *
 * Goodput.  Besides compute-busy time, each worker counts its useful
 * compute: every op it completes adds the op's duration at speed 1 (so a
 * slow or straggling step is worth one nominal step), and whatever the
 * failure rules above declare lost is taken off again at the same
 * nominal rate.
 *
 * Fast-forward (unless cfg->full; see the section of that name below):
 * ops with no side effect between them run as one event, and a period
 * whose whole-world signature repeats an earlier one is skipped at once.
 * Both give the results of the full simulation exactly.
 *
 * Stopping unfinished (finished 0, a one-line stop_reason, return 0):
 * DP rolls back MAX_ROLLBACKS times without a new checkpoint; DiLoCo or
 * streaming begin again MAX_RESTARTS times after the whole group failed
 * without a sync completing; failures keep coming without progress
 * (MAX_IDLE_FAILURES per worker in a row without any worker finishing a
 * step: a recovery slower than the time between failures); a step,
 * latency, transfer or event would not fit before RUN_TIME_MAX_NS;
 * nothing is left to happen (a transfer whose rate is too low to ever
 * complete, or every worker down for good).  Every
 * instant is checked before it is computed, so no ns arithmetic
 * overflows and no NaN or infinity is converted to an integer.
 */
#include "sim/engine/run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/collective.h"
#include "sim/engine/eventq.h"
#include "sim/engine/faults.h"
#include "sim/engine/memory.h"
#include "sim/engine/net.h"
#include "sim/engine/offload.h"
#include "sim/engine/sig.h"
#include "sim/base/msg.h"
#include "sim/base/rng.h"

enum { CLS_NET, CLS_FAULT, CLS_COMPUTE };              /* tie order */
enum { EV_NET, EV_OP, EV_FAIL, EV_REPAIR, EV_TIMEOUT, EV_COPY };
enum { OP_FWD, OP_BACT, OP_BPAR };
enum {
    W_READY,      /* can start its next op */
    W_BUSY,       /* an op is running */
    W_BLOCKED,    /* waiting on list `wait_on`: the reduction of layer
                     wait_on (wait), or, wait_on = L + f, the previous
                     sync of fragment f before arriving for the next
                     (continue) */
    W_STALLED,    /* DP: waiting for the others to recover */
    W_DOWN,       /* failed */
    W_RECOVERING, /* downloading the parameters */
    W_REJOINING,  /* waiting for the group's next sync */
    W_DONE        /* did every step */
};

/* The life cycle of a layer's reduction (see the header comment). */
enum { RED_IDLE, RED_COLLECTING, RED_READY, RED_SENDING };

#define NO_GATE INT64_MAX
#define WAIT_COPY (-1) /* wait_on: a copy-in of outer state (offload) */
/* DP: this many failures in a row without a new checkpoint and the run
 * stops unfinished: it would roll back forever. */
#define MAX_ROLLBACKS 100
/* Any method: this many failures per worker in a row without any worker
 * finishing a step and the run stops unfinished (failures faster than a
 * recovery, or than a step). */
#define MAX_IDLE_FAILURES 100
/* DiLoCo and streaming: the group emptied (every worker failed, and one
 * came back from the outer parameters of the last completed sync) this
 * many times without a sync completing and the run stops unfinished: it
 * would start again forever (the analogue of MAX_ROLLBACKS). */
#define MAX_RESTARTS 100
/* Linux's TCP_RTO_MIN, the floor of a connection's retransmission
 * timeout (network.transport tcp). */
#define RUN_TCP_RTO_MIN_S 0.2
#define TAG_RECOVERY 0           /* net tags below TAG_COLL: downloads */
#define TAG_COLL (1ull << 40)    /* the stream's (coll_new's tag_base) */

typedef struct {
    int state;
    int64_t step;      /* step being computed, 1..T (T+1: done) */
    int op;            /* next (or running) op of the step, 0..3L-1 */
    int64_t op_start;  /* ns, of the running op */
    int64_t busy;      /* ns of compute so far */
    int64_t nom;       /* ns of completed ops at speed 1 */
    int64_t nom_lost;  /* ns of nom declared lost */
    uint32_t epoch;    /* bumps cancel the running op's event */
    int wait_on;       /* W_BLOCKED: the wait list */
    int joined;        /* takes part in syncs (alive and caught up) */
    int64_t *cum;      /* ns from the step's start to the end of each op
                          of the current step */
    double factor;     /* step-time factor of the current step */
    int taken;         /* phase (1..H) of the fragments taken after the
                          current step, 0 for none: layer l's fragment is
                          taken when W->phase[l] equals it (sliced: every
                          layer, for fragment tfrag) */
    int tfrag;         /* sliced: the fragment taken after the step */
    int run_last;      /* the running event ends ops op..run_last (fast:
                          several at once; else run_last = op) */
    int64_t *contrib;  /* busy at the last contribution that reached a
                          completed sync, per fragment */
    int64_t *nom_contrib; /* nom at the same instants */
    int64_t *pend, *nom_pend; /* busy, nom at its latest arrival for the
                                 fragment's sync under way */
    int *pend_layers;  /* layers of that sync reduced with it */
    int64_t ckpt_busy, ckpt_cand_busy; /* DP checkpoint baselines */
    int64_t ckpt_nom, ckpt_cand_nom;
    int dl_flow;       /* recovery download, -1 when none */
    int64_t dl_start;
    int64_t idle_start; /* ns: entered W_DOWN, W_STALLED or W_REJOINING */
    int64_t rejoin_at; /* W_REJOINING: the step it rejoins at, once the
                          group has finished the one before (0: not known
                          yet, the next completed sync sets it) */
    int64_t lost, failures;
    int64_t counted;   /* the newest step the progress has counted */
    gsl_rng *straggle;
} worker;

typedef struct {       /* the outstanding reduction of one layer */
    int state;         /* RED_* */
    int64_t take;      /* step after which it was taken */
    int need, arrived;
    uint8_t *member;   /* participants, per worker */
    uint8_t *came;     /* arrived, per worker */
    int64_t started;   /* ns, handed to the communication stream */
} reduction;

/* network.completion member: a layer's all-reduce whose result some
 * members have and others do not yet (from its first member's completion
 * until the last one's). */
typedef struct {
    int64_t take;      /* step after which it was taken */
    int64_t started;   /* ns, handed to the communication stream */
    int pending;       /* members still without the result */
    uint8_t *got;      /* per worker: has the result */
} release;

/* The start of a period, for the fast-forward: the world's signature and
 * the figures that add up. */
#define FF_MARKS 4
typedef struct {
    sig_buf sig;
    int64_t now, step;  /* its instant; worker 0's step */
    int64_t *busy, *nom; /* per worker */
    uint64_t *bytes;    /* per link */
    int64_t syncs, timeouts, progress;
    uint64_t events;
    run_delays delays;
} ff_mark;

/* A fragment's sync in flight: from the first arrival for any of its
 * layers until every layer has been reduced (or dropped). */
typedef struct {
    int64_t take;      /* step after which it was taken; -1: none */
    int done;          /* layers reduced or dropped so far */
    int frozen;        /* its timeout expired: the members are closed */
    uint32_t epoch;    /* bumps cancel its timeout event */
    uint8_t *arrived;  /* per worker: arrived for one of its layers */
} fsync;

typedef struct {
    const scn_config *cfg;
    const run_hooks *hooks;
    char *err;          /* run_simulate's message buffer (observer) */
    size_t errlen;
    int blocking;       /* late syncs block the forward: wait, or DP */
    int64_t timeout_ns; /* sync_timeout_s; 0: none */
    int64_t *merge_step; /* per worker: scratch of RUN_EV_SYNCED */
    uint8_t *member;    /* per worker: scratch of RUN_EV_SYNCED */
    run_delays delays;
    /* fast paths (see "Fast-forward" below) */
    int fast;           /* pure steps in one event */
    int jumps;          /* whole periods skipped */
    int64_t period;     /* steps of a period: H */
    int ff_check;       /* worker 0 has just begun a period */
    sig_buf sig;        /* the state now */
    ff_mark mark[FF_MARKS]; /* the last period starts, newest at nmark-1 */
    int nmark;
    uint64_t events;    /* events processed (and skipped by jumps) */
    int64_t *nom_cum;   /* per op: ns at speed 1 of ops 0..o of a step */
    int M, L, P;
    int64_t T;
    int64_t take_last;  /* the last apply step of a sync taken: T (measure
                           run), or T + delay (steady: every sync taken
                           after a step up to T) */
    sched_spec sch;
    eq_queue q;
    net *net;
    coll *coll;
    faults *faults;
    worker *w;
    reduction *red;
    int member_mode;    /* network.completion member: each worker passes
                           its gate when it has the result (rel) */
    release *rel;       /* per layer (member_mode) */
    int64_t *gate;      /* per layer: first step whose forward waits */
    int64_t *last_take; /* per layer: step of the newest reduction */
    int *frag;          /* per layer: fragment (sliced: of its current or
                           last reduction) */
    int *phase;         /* per layer: its fragment's sched_offset */
    int sliced;         /* layout sliced: each fragment 1/P of every layer */
    int64_t delay;      /* steps from a take to its apply: sched_delay */
    int *frag_size;     /* per fragment: its layers' reductions */
    int *lead;          /* per layer: the layer whose reduction carries it
                           (DP buckets: the bucket's lowest layer, whose
                           gradient comes last; else itself) */
    fsync *fs;          /* per fragment: its sync in flight */
    uint64_t *bytes;    /* per layer: payload bytes of a sync (sliced: per
                           layer and fragment, at l * P + f) */
    int *waiters;       /* per wait list (L layers, then P fragments):
                           first blocked worker, -1 for none */
    int *wait_next;     /* per worker: next blocked on the same layer */
    int64_t *lat;       /* M x M one-way latencies, ns */
    offload *off;       /* method.offload_outer: the host copies; NULL */
    int *flist;         /* scratch: P fragment ids */
    int64_t *out_step;  /* offload, per worker and fragment: the step at
                           whose start its merged state goes back to the
                           host (0: none pending) */
    uint64_t *outer_bytes; /* per fragment: its outer parameters and
                              momentum, bytes (offload) */
    double flow_cap;    /* bytes/s cap of every flow (TCP window) */
    int64_t base_ns;    /* step time at speed 1 */
    uint64_t dl_bytes;  /* bytes of one recovery download (UINT64_MAX: too
                           many to represent) */
    int64_t net_at;     /* instant of the scheduled net event */
    uint64_t net_version;
    int *ready;         /* reductions ready but not yet on the stream:
                           fifo, ready[head..nready) in the order they
                           became ready; forward_first, ready[0..nready)
                           a binary heap by needed_sooner */
    int nready, head;
    int stream_busy;    /* a reduction is on the stream */
    int forward_first;  /* reduce_order: 1 forward_first, 0 fifo */
    int64_t end;        /* instant of the last useful event */
    int64_t ckpt_step, ckpt_count; /* DP: committed checkpoint, arrivals */
    int64_t ckpt_cand;  /* DP: step all workers have computed for the next
                           checkpoint (0: none yet) */
    int64_t dp_synced;  /* DP: newest step whose all-reduces completed */
    int64_t resume_step; /* the step after the newest completed sync's
                            apply step */
    int64_t frontier;   /* the newest step a joined worker has finished */
    int outage;         /* DP: workers stalled for a recovery */
    int rollbacks;      /* DP: outages since the last checkpoint */
    int restarts;       /* DiLoCo, streaming: the group emptied and began
                           again since the last completed sync */
    int64_t syncs, failures;
    int64_t idle_failures; /* failures since a worker last ended a step */
    int check_done;     /* something happened that may end the run */
    uint64_t recovery_bytes;
    int64_t progress_done, progress_next;
    int rc;             /* first runtime error (MSG_E*), 0 for none */
    int observer_failed; /* rc is the observer's, its message in err */
    int64_t now;        /* instant of the event being processed */
    int64_t timeouts;   /* syncs whose timeout left a worker out */
    int stopped;        /* the run cannot go on: see reason */
    char reason[RUN_REASON_MAX];
} world;

/* Stops the run unfinished; the first reason given is kept. */
__attribute__((format(printf, 2, 3)))
static void stop(world *W, const char *fmt, ...) {
    if (W->stopped) return;
    W->stopped = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(W->reason, sizeof W->reason, fmt, ap);
    va_end(ap);
}

/* A runtime failure (out of memory): the run ends with an error. */
static void fail_rc(world *W, int rc) {
    if (rc < 0 && !W->rc) W->rc = rc;
}

/* a + b for the totals over workers (each below RUN_TIME_MAX_NS, their
 * sum may not be): saturates at INT64_MAX. */
static int64_t sum_ns(int64_t a, int64_t b) {
    return b > INT64_MAX - a ? INT64_MAX : a + b;
}

/* Tells the observer what happened; the error it returns (with its
 * message in W->err) ends the run. */
static void observe(world *W, run_event_kind kind, int wi, int f,
                    int64_t step, int src, int64_t now) {
    if (!W->hooks || !W->hooks->observe || W->rc) return;
    run_event e = {kind, now, wi, f, src, step, W->member, W->merge_step,
                   0, 0, &W->delays};
    for (int i = 0; i < W->M; i++) {
        e.compute_ns = sum_ns(e.compute_ns, W->w[i].busy);
        e.wan_bytes += net_link_bytes(W->net, 2 * i);
    }
    int rc = W->hooks->observe(W->hooks->observe_ctx, &e, W->err, W->errlen);
    if (rc) {
        W->rc = rc < 0 ? rc : MSG_EFAIL;
        W->observer_failed = 1;
    }
}

/* ---- ops of a step ---------------------------------------------------- */

/* Layer and kind of op o (0..3L-1) in the fixed per-step sequence. */
static void op_of(const world *W, int o, int *layer, int *kind) {
    if (o < W->L) {
        *layer = o;
        *kind = OP_FWD;
        return;
    }
    int j = o - W->L;
    *layer = W->L - 1 - j / 2;
    int first = W->cfg->bwd_order == SCN_ACT_FIRST ? OP_BACT : OP_BPAR;
    *kind = (j % 2 == 0) ? first : (OP_BACT + OP_BPAR - first);
}

/* Share of the step taken by ops 0..o-1, in [0, 1]. */
static double op_cum(const world *W, int o) {
    const double *s = W->cfg->split;
    if (o <= W->L) return s[0] * o / W->L;
    int j = o - W->L, pairs = j / 2;
    double per_half = (s[1] + s[2]) / W->L;
    double done = s[0] + pairs * per_half;
    if (j % 2) {
        int first = W->cfg->bwd_order == SCN_ACT_FIRST ? 1 : 2;
        done += s[first] / W->L;
    }
    return done;
}

/* Fills the op ends of a worker for a step-time factor.  Durations are
 * differences of rounded cumulative instants, so a step lasts exactly
 * round(base * factor) ns whatever L is. */
static void set_factor(world *W, worker *w, double factor) {
    if (factor == w->factor) return;
    double step = (double)W->base_ns * factor;
    if (!(step >= 0 && step < (double)RUN_TIME_MAX_NS)) {
        char b[MSG_NUM_MAX];
        stop(W, "worker %d: a step of %s s does not fit in 2^62 ns",
             (int)(w - W->w), msg_number(step * 1e-9, b));
        return;
    }
    w->factor = factor;
    for (int o = 0; o < 3 * W->L; o++)
        w->cum[o] = llround(step * op_cum(W, o + 1));
}

/* ns of ops a..b (inclusive) from the cumulative ends c[]. */
static int64_t ops_ns(const int64_t *c, int a, int b) {
    return c[b] - (a ? c[a - 1] : 0);
}

/* Offload: worker wi begins step t, after which fragments are taken:
 * their outer state starts its way to the accelerator. */
static void copy_in(world *W, int wi, int64_t t, int64_t now) {
    int *fr = W->flist, n = sched_taken_after(&W->sch, t, W->take_last, fr);
    for (int k = 0; k < n; k++)
        if (off_copy_in(W->off, wi, fr[k], W->outer_bytes[fr[k]], now) < 0)
            fail_rc(W, MSG_ENOMEM);
}

static void offload_merged(world *W, int wi, int64_t now);

/* Draws the factor of the step a worker is about to start, notes the
 * fragment taken after it, and (offload) sends the state it has merged
 * back to the host and starts copying in what the step's end takes. */
static void begin_step(world *W, worker *w, int wi, int64_t now) {
    const scn_config *c = W->cfg;
    w->taken = sched_take_phase(&W->sch, w->step, W->take_last);
    if (W->sliced && w->taken) /* P <= H: one */
        sched_taken_after(&W->sch, w->step, W->take_last, &w->tfrag);
    if (W->off) offload_merged(W, wi, now);
    if (W->off && w->taken && w->joined) copy_in(W, wi, w->step, now);
    double f = 1.0 / c->speed[wi];
    if (c->straggler_prob > 0 &&
        gsl_rng_uniform(w->straggle) < c->straggler_prob)
        f *= c->straggler_slowdown;
    set_factor(W, w, f);
}

/* Is layer l's fragment taken after a step of take phase `taken` (and
 * is l the layer whose parameter backward completes its bucket)? */
static int takes_layer(const world *W, int l, int taken) {
    return taken && W->lead[l] == l && (W->sliced || W->phase[l] == taken);
}

/* The fragment whose sync worker w's parameter backward of layer l joins
 * (when takes_layer). */
static int taken_fragment(const world *W, const worker *w, int l) {
    return W->sliced ? w->tfrag : W->frag[l];
}

/* Does worker w's forward of layer l in its current step wait for l's
 * reduction (gate[l] is take + 1 + tau, its own tau tau_extra later)? */
static int gated(const world *W, const worker *w, int l) {
    int wi = (int)(w - W->w), lead = W->lead[l];
    int64_t s = w->step - W->cfg->tau_extra[wi];
    if (W->gate[lead] <= s) return 1;
    if (!W->member_mode) return 0;
    const release *g = &W->rel[lead]; /* the result has come to some */
    return g->pending && !g->got[wi] && g->take + 1 + W->delay <= s;
}

/* Payload bytes of layer l's reduction for fragment frag[l]. */
static uint64_t layer_bytes(const world *W, int l) {
    return W->bytes[W->sliced ? (size_t)l * W->P + (size_t)W->frag[l] : (size_t)l];
}

/* ---- scheduling helpers ----------------------------------------------- */

static void push(world *W, int64_t t, uint32_t cls, uint32_t kind, int32_t a,
                 uint32_t b, uint64_t c) {
    fail_rc(W, eq_push(&W->q, t, cls, kind, a, b, c));
}

/* now + d for an event that must happen (0 <= now, d < RUN_TIME_MAX_NS,
 * so the sum cannot overflow); stops the run when it is too late. */
static int64_t later(world *W, int64_t now, int64_t d, const char *what) {
    int64_t t = now + d;
    if (t > RUN_TIME_MAX_NS) {
        char b[MSG_NUM_MAX];
        stop(W, "%s would end after 2^62 ns (%s s, about 146 years)", what,
             msg_number((double)RUN_TIME_MAX_NS * 1e-9, b));
    }
    return t;
}

/* Keeps exactly one live net event at the net's next instant.  INT64_MAX
 * is "never" (nothing pending, or only transfers that cannot complete);
 * an instant past RUN_TIME_MAX_NS is never too: the run may well finish
 * without it (a slow download nobody waits for), and if it cannot, the
 * queue runs dry and stalled_reason says why. */
static void net_resched(world *W) {
    int64_t t = net_next_time(W->net);
    if (t > RUN_TIME_MAX_NS) t = INT64_MAX;
    if (t == W->net_at) return;
    W->net_at = t;
    W->net_version++;
    if (t != INT64_MAX) push(W, t, CLS_NET, EV_NET, 0, 0, W->net_version);
}

static void span(world *W, int wi, int track, const char *name, int layer,
                 int64_t step, int64_t t0, int64_t t1, uint64_t bytes) {
    if (!W->hooks || !W->hooks->span) return;
    run_span s = {wi, track, layer, layer >= 0 ? W->frag[layer] : -1, name,
                  step, t0, t1, bytes};
    W->hooks->span(W->hooks->span_ctx, &s);
}

/* The span of a wait (down, stalled, rejoin_wait) that ends now. */
static void idle_span(world *W, int wi, const char *name, int64_t now) {
    worker *w = &W->w[wi];
    if (now > w->idle_start)
        span(W, wi, 0, name, -1, w->step, w->idle_start, now, 0);
}

static void try_advance(world *W, int wi, int64_t now);

/* ---- reductions --------------------------------------------------------- */

/* forward_first: does ready layer a go before ready layer b?  The lower
 * gate step first (the forward that waits soonest), then the lower layer. */
static int needed_sooner(const world *W, int a, int b) {
    return W->gate[a] != W->gate[b] ? W->gate[a] < W->gate[b] : a < b;
}

/* Adds ready layer l: at the tail (fifo) or into the heap. */
static void ready_push(world *W, int l) {
    if (W->nready == W->L && W->head > 0) { /* fifo: slide to the front */
        memmove(W->ready, W->ready + W->head,
                (size_t)(W->nready - W->head) * sizeof *W->ready);
        W->nready -= W->head;
        W->head = 0;
    }
    int i = W->nready++;
    if (W->forward_first)
        for (; i > 0 && needed_sooner(W, l, W->ready[(i - 1) / 2]);
             i = (i - 1) / 2)
            W->ready[i] = W->ready[(i - 1) / 2];
    W->ready[i] = l;
}

/* Takes the next ready layer: the oldest (fifo) or the one the next
 * forward needs first (forward_first, the heap's top). */
static int ready_pop(world *W) {
    if (!W->forward_first) {
        int l = W->ready[W->head++];
        if (W->head == W->nready) W->head = W->nready = 0;
        return l;
    }
    int top = W->ready[0], last = W->ready[--W->nready], i = 0;
    for (int c; (c = 2 * i + 1) < W->nready; i = c) {
        if (c + 1 < W->nready && needed_sooner(W, W->ready[c + 1], W->ready[c]))
            c++;
        if (!needed_sooner(W, W->ready[c], last)) break;
        W->ready[i] = W->ready[c];
    }
    W->ready[i] = last;
    return top;
}

/* Starts the next ready reduction when the stream is free. */
static void stream_kick(world *W, int64_t now) {
    if (W->stream_busy || W->nready == W->head) return;
    int l = ready_pop(W);
    W->stream_busy = 1;
    W->red[l].state = RED_SENDING;
    W->red[l].started = now;
    fail_rc(W, coll_submit(W->coll, now, layer_bytes(W, l), W->red[l].came,
                           (uint64_t)l));
}

/* Every participant has arrived: the reduction is ready to send. */
static void reduction_submit(world *W, int l, int64_t now) {
    reduction *r = &W->red[l];
    r->state = RED_READY;
    ready_push(W, l);
    stream_kick(W, now);
}

/* Participants of a new reduction: the joined workers (once the
 * fragment's sync has timed out, only those that arrived for it). */
static void reduction_open(world *W, int l, int64_t take) {
    reduction *r = &W->red[l];
    const fsync *fs = &W->fs[W->frag[l]];
    r->state = RED_COLLECTING;
    r->take = take;
    r->need = r->arrived = 0;
    for (int i = 0; i < W->M; i++) {
        int in = W->w[i].joined && (!fs->frozen || fs->arrived[i]);
        r->member[i] = (uint8_t)in;
        r->came[i] = 0;
        r->need += in;
    }
    W->gate[l] = take + 1 + W->delay;
}

/* Worker wi goes on wait list `list` (a layer, or L + a fragment). */
static void block(world *W, int wi, int list) {
    W->w[wi].state = W_BLOCKED;
    W->w[wi].wait_on = list;
    W->wait_next[wi] = W->waiters[list];
    W->waiters[list] = wi;
}

static void arrive(world *W, int wi, int l, int64_t t, int64_t now);
static void op_next(world *W, int wi, int64_t now);

/* Offload: worker wi, about to arrive for layer l, waits when the outer
 * state of l's fragment is not on its accelerator yet (the pseudo-
 * gradient needs it); its EV_COPY comes when the copy ends.  Returns 1
 * when it waits. */
static int copy_wait(world *W, int wi, int l, int64_t now) {
    if (!W->off) return 0;
    worker *w = &W->w[wi];
    int64_t t = off_ready_at(W->off, wi, taken_fragment(W, w, l));
    if (t <= now) return 0;
    w->state = W_BLOCKED;
    w->wait_on = WAIT_COPY;
    w->epoch++;
    push(W, t, CLS_COMPUTE + (uint32_t)wi, EV_COPY, wi, w->epoch, 0);
    return 1;
}

/* Worker wi arrives for layer l after its current step (once its copy,
 * if any, is in), and goes on with its next op. */
static void arrive_next(world *W, int wi, int l, int64_t now) {
    if (copy_wait(W, wi, l, now)) return;
    arrive(W, wi, l, W->w[wi].step, now);
    op_next(W, wi, now);
}

/* Wakes the workers on wait list `list`: a layer's blocked forwards go
 * on; a fragment's held arrivals (continue) are made now. */
static void wake(world *W, int list, int64_t now) {
    int wi = W->waiters[list];
    W->waiters[list] = -1;
    while (wi >= 0) {
        int next = W->wait_next[wi];
        worker *w = &W->w[wi];
        if (w->state == W_BLOCKED) {
            w->state = W_READY;
            if (list < W->L) {
                try_advance(W, wi, now);
            } else {
                int layer, kind;
                op_of(W, w->op, &layer, &kind);
                arrive_next(W, wi, layer, now);
            }
        }
        wi = next;
    }
}

static void rejoin_waiting(world *W, int64_t now);
static void rejoin_due(world *W, int64_t now);
static void dp_commit(world *W);

/* Offload: fragment f's sync is over; worker i merges its result at the
 * start of merge_step[i] and then its outer state goes back to the host
 * (now if i has begun that step or is not in the group; else begin_step
 * does it when i gets there). */
static void offload_after_sync(world *W, int i, int f, int64_t now) {
    int64_t m = W->merge_step[i];
    if (m < 0 || W->w[i].step >= m)
        off_copy_out(W->off, i, f, now);
    else
        W->out_step[i * W->P + f] = m;
}

/* Offload: worker wi begins its current step: the fragments merged now
 * go back to the host. */
static void offload_merged(world *W, int wi, int64_t now) {
    for (int f = 0; f < W->P; f++) {
        int64_t *m = &W->out_step[wi * W->P + f];
        if (*m && W->w[wi].step >= *m) {
            off_copy_out(W->off, wi, f, now);
            *m = 0;
        }
    }
}

/* Opens fragment f's sync taken after t at its first arrival, and its
 * timeout. */
static void fsync_open(world *W, int f, int64_t t, int64_t now) {
    fsync *fs = &W->fs[f];
    fs->take = t;
    fs->done = 0;
    fs->frozen = 0;
    memset(fs->arrived, 0, (size_t)W->M);
    fs->epoch++;
    if (W->timeout_ns > 0) {
        int64_t at = now + W->timeout_ns; /* both below 2^62 */
        if (at <= RUN_TIME_MAX_NS)
            push(W, at, CLS_FAULT, EV_TIMEOUT, f, fs->epoch, 0);
    }
}

/* The first step of worker i that sees the result of a sync taken after
 * `take` that completes now; -1 when i is not in the group.  Blocking:
 * take + tau + 1, where its forward waits.  Continue: its first step
 * boundary from now on (the step it has not started yet), but never
 * before take + tau + 1. */
static int64_t merge_step_of(const world *W, int i, int64_t take,
                             int64_t now) {
    const worker *w = &W->w[i];
    if (!w->joined) return -1;
    int64_t first = take + W->delay + 1 + W->cfg->tau_extra[i];
    if (W->blocking) return first;
    int fresh = w->op == 0 && (w->state != W_BUSY || w->op_start >= now);
    int64_t m = fresh ? w->step : w->step + 1;
    return m > first ? m : first;
}

static void count_delay(run_delays *d, int64_t steps) {
    d->count++;
    d->sum += steps;
    if (steps > d->max) d->max = steps;
    d->hist[steps < RUN_DELAY_BINS - 1 ? steps : RUN_DELAY_BINS - 1]++;
}

/* A layer of fragment f is over (reduced, or dropped with nobody left).
 * When it was the fragment's last: the sync is complete (members: the
 * workers that took part in every layer; none: abandoned), the observer
 * hears it, and 1 is returned (*synced: it had members). */
static int fsync_layer_done(world *W, int f, int64_t now, int *synced) {
    fsync *fs = &W->fs[f];
    *synced = 0;
    if (++fs->done < W->frag_size[f]) return 0;
    int64_t take = fs->take;
    fs->take = -1;
    fs->epoch++; /* its timeout, if pending, is void */
    for (int i = 0; i < W->M; i++) {
        worker *w = &W->w[i];
        W->member[i] = w->pend_layers[f] == W->frag_size[f];
        *synced |= W->member[i];
        w->pend_layers[f] = 0;
        W->merge_step[i] = -1;
    }
    if (*synced) {
        W->syncs++;
        W->restarts = 0;
        W->resume_step = take + W->delay + 1;
        /* what reached the outer parameters: the work of the members */
        for (int i = 0; i < W->M; i++) {
            worker *w = &W->w[i];
            if (W->member[i]) {
                w->contrib[f] = w->pend[f];
                w->nom_contrib[f] = w->nom_pend[f];
            }
            W->merge_step[i] = merge_step_of(W, i, take, now);
            if (W->merge_step[i] >= 0)
                count_delay(&W->delays, W->merge_step[i] - 1 - take);
        }
    }
    for (int i = 0; W->off && i < W->M; i++) offload_after_sync(W, i, f, now);
    observe(W, RUN_EV_SYNCED, -1, f, take, -1, now);
    if (*synced && W->sch.method == SCHED_DP) {
        W->dp_synced = take;
        dp_commit(W);
    }
    return 1;
}

/* Layer l's reduction is over (its state and gate already reset): the
 * fragment's bookkeeping, then whoever waited on it. */
static void layer_closed(world *W, int l, int64_t now) {
    int f = W->frag[l], synced;
    int closed = fsync_layer_done(W, f, now, &synced);
    wake(W, l, now);
    if (!closed) return;
    wake(W, W->L + f, now);
    if (synced) rejoin_waiting(W, now);
}

/* Layer l's all-reduce has its result: the joined workers that did not
 * take part (left out by the sync's timeout, or in the group since the
 * reduction opened) merge it too, so they receive it, from the lowest
 * member: its payload bytes are charged to that member's up link and to
 * each such worker's down link (the copy takes no simulated time: a
 * worker left out is late for the sync anyway). */
static void result_to_others(world *W, int l) {
    const reduction *r = &W->red[l];
    int src = 0;
    while (src < W->M && !r->came[src]) src++;
    if (src == W->M) return;
    uint64_t bytes = layer_bytes(W, l);
    for (int i = 0; i < W->M; i++)
        if (W->w[i].joined && !r->came[i]) {
            net_link_bytes_add(W->net, 2 * src, bytes);
            net_link_bytes_add(W->net, 2 * i + 1, bytes);
        }
}

/* Layer l's all-reduce has its result (group: at its end; member: at its
 * first member's completion): the reduction is over, the fragment's
 * bookkeeping follows. */
static void reduction_over(world *W, int l, int64_t now) {
    reduction *r = &W->red[l];
    r->state = RED_IDLE;
    W->gate[l] = NO_GATE;
    int f = W->frag[l];
    for (int i = 0; i < W->M; i++)
        if (r->came[i]) W->w[i].pend_layers[f]++;
    result_to_others(W, l);
    if (now > W->end) W->end = now;
    W->check_done = 1;
    layer_closed(W, l, now);
}

/* Group completion: layer l's all-reduce is over for every member. */
static void reduction_done(world *W, int l, int64_t now) {
    reduction *r = &W->red[l];
    for (int i = 0; i < W->M; i++)
        if (r->came[i])
            span(W, i, 1, "allreduce", l, r->take, r->started, now,
                 layer_bytes(W, l));
    W->stream_busy = 0;
    reduction_over(W, l, now);
}

static void unwait(world *W, int wi);

/* Member completion: worker wi has the result of layer l's all-reduce.
 * The first member's completion ends the reduction (the average exists:
 * the fragment's sync may complete, the numerics reduce); each member
 * passes its own gate at its own completion. */
static void member_got(world *W, int l, int wi, int64_t now) {
    reduction *r = &W->red[l];
    release *g = &W->rel[l];
    if (r->state == RED_SENDING) {
        g->take = r->take;
        g->started = r->started;
        g->pending = 0;
        for (int i = 0; i < W->M; i++) {
            g->got[i] = 0;
            g->pending += r->came[i];
        }
    }
    if (g->got[wi] || !g->pending) return; /* again, after a restart */
    g->got[wi] = 1;
    g->pending--;
    span(W, wi, 1, "allreduce", l, g->take, g->started, now, layer_bytes(W, l));
    if (now > W->end) W->end = now;
    if (r->state == RED_SENDING) {
        reduction_over(W, l, now); /* wakes everybody on l: they look again */
        return;
    }
    worker *w = &W->w[wi];
    if (w->state == W_BLOCKED && w->wait_on == l) {
        unwait(W, wi);
        w->state = W_READY;
        try_advance(W, wi, now);
    }
}

/* Worker wi leaves the results it waits for (it failed). */
static void member_gone(world *W, int wi) {
    if (!W->member_mode) return;
    for (int l = 0; l < W->L; l++)
        if (W->rel[l].pending && !W->rel[l].got[wi]) {
            W->rel[l].got[wi] = 1;
            W->rel[l].pending--;
        }
}

/* Layer l's reduction has nobody left to take part: it is over. */
static void reduction_void(world *W, int l, int64_t now) {
    W->red[l].state = RED_IDLE;
    W->gate[l] = NO_GATE;
    layer_closed(W, l, now);
}

/* Worker wi finished the parameter backward of layer l after step t. */
static void arrive(world *W, int wi, int l, int64_t t, int64_t now) {
    reduction *r = &W->red[l];
    if (r->state == RED_IDLE && t > W->last_take[l])
        W->frag[l] = taken_fragment(W, &W->w[wi], l); /* sliced: this slice */
    int f = W->frag[l];
    if (r->state == RED_IDLE) {
        if (t <= W->last_take[l]) return; /* that sync is already done */
        if (W->fs[f].take != t) fsync_open(W, f, t, now);
        reduction_open(W, l, t);
        W->last_take[l] = t;
        if (!r->need) { /* its sync timed out before any member came */
            reduction_void(W, l, now);
            return;
        }
    }
    if (r->state != RED_COLLECTING || r->take != t || !r->member[wi] ||
        r->came[wi])
        return; /* a catching-up or late worker: not part of this sync */
    r->came[wi] = 1;
    r->arrived++;
    W->w[wi].pend[f] = W->w[wi].busy;
    W->w[wi].nom_pend[f] = W->w[wi].nom;
    if (!W->fs[f].arrived[wi]) {
        W->fs[f].arrived[wi] = 1;
        observe(W, RUN_EV_CONTRIBUTE, wi, f, t, -1, now);
    }
    if (r->arrived == r->need) reduction_submit(W, l, now);
}

/* Worker wi leaves layer l's reduction still collecting: it goes on
 * without it; one left with nobody is over at once. */
static void reduction_leave(world *W, int l, int wi, int64_t now) {
    reduction *r = &W->red[l];
    r->member[wi] = 0;
    r->need--;
    if (r->came[wi]) r->came[wi] = 0, r->arrived--;
    if (r->need == 0)
        reduction_void(W, l, now);
    else if (r->arrived == r->need) {
        reduction_submit(W, l, now);
    }
}

/* A participant is gone: it leaves every reduction still collecting. */
static void reductions_drop(world *W, int wi, int64_t now) {
    for (int l = 0; l < W->L; l++)
        if (W->red[l].state == RED_COLLECTING && W->red[l].member[wi])
            reduction_leave(W, l, wi, now);
}

/* Fragment f's sync timed out: the workers that have not arrived for
 * any of its layers are left out of it (they merge its result). */
static void on_timeout(world *W, int f, uint32_t epoch, int64_t now) {
    fsync *fs = &W->fs[f];
    if (fs->take < 0 || fs->epoch != epoch) return;
    fs->frozen = 1;
    int left = 0;
    for (int i = 0; i < W->M; i++)
        left |= W->w[i].joined && !fs->arrived[i];
    if (left) W->timeouts++;
    int64_t take = fs->take;
    for (int l = 0; l < W->L && fs->epoch == epoch; l++) {
        reduction *r = &W->red[l];
        if (W->frag[l] != f) continue;
        for (int i = 0; i < W->M; i++)
            if (r->state == RED_COLLECTING && r->take == take &&
                r->member[i] && !fs->arrived[i])
                reduction_leave(W, l, i, now);
    }
}

/* ---- compute ---------------------------------------------------------- */

/* DP: the checkpoint of step ckpt_cand is taken once every worker has
 * computed that step and the step's all-reduces have completed (its
 * update happened): a failure in between rolls back further. */
static void dp_commit(world *W) {
    if (!W->ckpt_cand || W->dp_synced < W->ckpt_cand) return;
    W->ckpt_step = W->ckpt_cand;
    W->ckpt_cand = 0;
    W->rollbacks = 0;
    for (int i = 0; i < W->M; i++) {
        W->w[i].ckpt_busy = W->w[i].ckpt_cand_busy;
        W->w[i].ckpt_nom = W->w[i].ckpt_cand_nom;
    }
    observe(W, RUN_EV_CHECKPOINT, -1, -1, W->ckpt_step, -1, W->now);
}

/* DP: worker wi has finished every op of step `step`. */
static void dp_checkpoint(world *W, worker *w, int64_t step) {
    int64_t every = W->cfg->checkpoint_steps;
    if (step % every) return;
    w->ckpt_cand_busy = w->busy;
    w->ckpt_cand_nom = w->nom;
    if (++W->ckpt_count < W->M) return;
    W->ckpt_count = 0;
    W->ckpt_cand = step;
    dp_commit(W);
}

/* Worker w has ended step w->step - 1.  The progress counts each worker's
 * steps once (a step redone after a failure or a rollback adds nothing),
 * so the fraction never goes back nor past 1. */
static void report_progress(world *W, worker *w) {
    if (!W->hooks || !W->hooks->progress || w->step - 1 <= w->counted) return;
    w->counted = w->step - 1;
    if (++W->progress_done < W->progress_next) return;
    W->progress_next += W->T * W->M / 100 + 1;
    W->hooks->progress(W->hooks->progress_ctx,
                       (double)W->progress_done / ((double)W->T * W->M));
}

/* The last op of the run that can start at op o of worker w's step: ops
 * run back to back while none of them is an arrival (the parameter
 * backward of a layer whose fragment is taken after this step) and the
 * next is not a gated forward.  (A gate for this step can only come from
 * a sync taken at an earlier step, which exists already: none appears
 * during the run.)  Without the fast paths every op is its own run. */
static int run_end(const world *W, const worker *w) {
    int o = w->op;
    if (!W->fast) return o;
    int taken = w->joined ? w->taken : 0;
    for (;; o++) {
        int layer, kind;
        op_of(W, o, &layer, &kind);
        if (o + 1 == 3 * W->L || (kind == OP_BPAR && takes_layer(W, layer, taken)))
            return o;
        op_of(W, o + 1, &layer, &kind);
        if (W->blocking && kind == OP_FWD && gated(W, w, layer))
            return o;
    }
}

/* Starts ops on worker wi until it blocks, runs some, or is done. */
static void try_advance(world *W, int wi, int64_t now) {
    worker *w = &W->w[wi];
    if (w->state != W_READY) return;
    if (w->step > W->T) {
        w->state = W_DONE;
        W->check_done = 1;
        if (now > W->end) W->end = now;
        return;
    }
    int layer, kind;
    op_of(W, w->op, &layer, &kind);
    if (W->blocking && kind == OP_FWD && gated(W, w, layer)) {
        block(W, wi, W->lead[layer]);
        return;
    }
    w->state = W_BUSY;
    w->op_start = now;
    w->run_last = run_end(W, w);
    int64_t t = later(W, now, ops_ns(w->cum, w->op, w->run_last),
                      "a compute op");
    if (!W->stopped)
        push(W, t, CLS_COMPUTE + (uint32_t)wi, EV_OP, wi, w->epoch, 0);
}

static const char *const op_names[] = {"forward", "backward_act",
                                       "backward_param"};

static void on_op_done(world *W, int wi, int64_t now) {
    worker *w = &W->w[wi];
    int first = w->op;
    W->events += (uint64_t)(w->run_last - first); /* a run: as its ops */
    w->op = w->run_last;
    int layer, kind;
    op_of(W, w->op, &layer, &kind);
    w->busy += now - w->op_start;
    w->nom += ops_ns(W->nom_cum, first, w->op);
    span(W, wi, 0, op_names[kind], layer, w->step, w->op_start, now, 0);
    w->state = W_READY;
    if (kind == OP_FWD && layer == W->L - 1)
        observe(W, RUN_EV_STEP, wi, -1, w->step, -1, now);
    if (kind == OP_BPAR && w->joined && takes_layer(W, layer, w->taken)) {
        int f = taken_fragment(W, w, layer);
        /* one sync of a fragment in flight at a time (continue, or a
         * delay of H: the previous sync may not be over) */
        if (W->fs[f].take >= 0 && W->fs[f].take < w->step) {
            block(W, wi, W->L + f);
            return;
        }
        arrive_next(W, wi, layer, now);
        return;
    }
    op_next(W, wi, now);
}

/* Offload: worker wi's copy-in has ended; the arrival it held is made. */
static void on_copy(world *W, int wi, uint32_t epoch, int64_t now) {
    worker *w = &W->w[wi];
    if (w->state != W_BLOCKED || w->wait_on != WAIT_COPY || w->epoch != epoch)
        return;
    w->state = W_READY;
    int layer, kind;
    op_of(W, w->op, &layer, &kind);
    arrive_next(W, wi, layer, now);
}

/* Worker wi is done with its current op: on to the next, or the next
 * step. */
static void op_next(world *W, int wi, int64_t now) {
    worker *w = &W->w[wi];
    if (++w->op == 3 * W->L) {
        w->op = 0;
        observe(W, RUN_EV_STEP_END, wi, -1, w->step, -1, now);
        if (wi == 0 && W->jumps && w->step % W->period == 0) W->ff_check = 1;
        if (W->sch.method == SCHED_DP) dp_checkpoint(W, w, w->step);
        int ahead = w->joined && w->step > W->frontier;
        if (ahead) W->frontier = w->step;
        w->step++;
        W->idle_failures = 0;
        report_progress(W, w);
        if (w->step <= W->T) begin_step(W, w, wi, now);
        /* (only a failure makes a worker wait to rejoin) */
        if (ahead && W->failures && W->sch.method != SCHED_DP)
            rejoin_due(W, now);
    }
    try_advance(W, wi, now);
}

/* Stops the running op of a worker (its time counts as compute, lost). */
static const char *const cut_names[] = {"forward_interrupted",
                                        "backward_act_interrupted",
                                        "backward_param_interrupted"};

static void cancel_op(world *W, worker *w, int64_t now) {
    if (w->state == W_BUSY) {
        w->busy += now - w->op_start;
        if (now > W->end) W->end = now; /* the wall covers every compute */
        w->epoch++;
        int layer, kind;
        op_of(W, w->op, &layer, &kind);
        span(W, (int)(w - W->w), 0, cut_names[kind], layer, w->step,
             w->op_start, now, 0);
    }
}

/* Removes a blocked worker from its layer's waiting list. */
static void unwait(world *W, int wi) {
    worker *w = &W->w[wi];
    if (w->state != W_BLOCKED || w->wait_on == WAIT_COPY) return;
    int *p = &W->waiters[w->wait_on];
    while (*p >= 0 && *p != wi) p = &W->wait_next[*p];
    if (*p == wi) *p = W->wait_next[wi];
}

/* ---- failures and recovery -------------------------------------------- */

/* Schedules worker wi's next failure, if any. */
static void next_failure(world *W, int wi) {
    int64_t fail, repair;
    /* a failure after the last representable instant never matters */
    if (faults_next(W->faults, wi, &fail, &repair) && fail >= 0 &&
        fail <= RUN_TIME_MAX_NS)
        push(W, fail, CLS_FAULT, EV_FAIL, wi, 0, (uint64_t)repair);
}

static void on_download_flow(void *ctx, int64_t now, int flow, uint64_t tag);

/* The repaired worker wi downloads the parameters from the lowest live
 * peer, or from storage over its own down link when nobody is up. */
static void start_download(world *W, int wi, int64_t now) {
    if (W->dl_bytes == UINT64_MAX) {
        char b[MSG_NUM_MAX];
        stop(W, "worker %d: a recovery download of %s bytes does not fit in "
             "64 bits", wi,
             msg_number(W->cfg->params * W->cfg->recovery_bytes_per_param, b));
        return;
    }
    int src = -1;
    for (int i = 0; i < W->M && src < 0; i++) {
        int st = W->w[i].state;
        if (i != wi && st != W_DOWN && st != W_RECOVERING &&
            (W->sch.method == SCHED_DP || W->w[i].joined))
            src = i;
    }
    int64_t lat = src >= 0 ? W->lat[src * W->M + wi] : W->lat[wi * W->M + wi];
    worker *w = &W->w[wi];
    w->state = W_RECOVERING;
    w->dl_start = now;
    w->dl_flow = net_flow_add(W->net, now, lat, src >= 0 ? 2 * src : -1,
                              2 * wi + 1, W->dl_bytes, W->flow_cap,
                              on_download_flow, W, TAG_RECOVERY + (uint64_t)wi);
    fail_rc(W, w->dl_flow);
}

/* A worker enters the group at `step` (rejoin_due), holding the outer
 * parameters of the syncs completed so far. */
static void rejoin(world *W, int wi, int64_t step, int64_t now) {
    worker *w = &W->w[wi];
    int src = -1;
    for (int i = 0; i < W->M && src < 0; i++)
        if (i != wi && W->w[i].joined) src = i;
    observe(W, RUN_EV_REJOINED, wi, -1, step, src, now);
    w->step = step;
    w->op = 0;
    w->joined = 1;
    for (int p = 0; p < W->P; p++) {
        w->contrib[p] = w->busy;
        w->nom_contrib[p] = w->nom;
    }
    if (w->state == W_REJOINING) idle_span(W, wi, "rejoin_wait", now);
    w->state = W_READY;
    w->rejoin_at = 0;
    begin_step(W, w, wi, now);
    try_advance(W, wi, now);
}

/* The group emptied and begins again from the outer parameters: what was
 * under way is void, as nobody holds its payloads.  Each fragment sync
 * in flight is abandoned (the observer hears it without members) and its
 * layers may be taken again at the same step; the communication stream is
 * cleared. */
static void group_restart(world *W, int64_t now) {
    for (int f = 0; f < W->P; f++) {
        fsync *fs = &W->fs[f];
        if (fs->take < 0) continue;
        for (int l = 0; l < W->L; l++)
            if (W->frag[l] == f && W->last_take[l] == fs->take)
                W->last_take[l] = fs->take - 1;
        int64_t take = fs->take;
        fs->take = -1;
        fs->epoch++; /* its timeout, if pending, is void */
        for (int i = 0; i < W->M; i++) {
            W->member[i] = 0;
            W->merge_step[i] = -1;
            W->w[i].pend_layers[f] = 0;
        }
        observe(W, RUN_EV_SYNCED, -1, f, take, -1, now);
    }
    for (int l = 0; l < W->L; l++) {
        W->red[l].state = RED_IDLE;
        W->rel[l].pending = 0;
        W->gate[l] = NO_GATE;
    }
    W->nready = W->head = 0;
    W->stream_busy = 0;
    coll_clear(W->coll, now);
}

/* Rejoins the repaired workers that are due, never ahead of the group: a
 * waiting worker rejoins at step rejoin_at (the step after the apply step
 * of a completed sync) once a joined worker has finished the step before
 * (at once if one has: blocking syncs, or late: continue, where the
 * others may be further).  With nobody left in the group they rejoin at
 * once, at the step after the group's last finished step (or the newest
 * sync's resume step, if that is sooner): nobody is ahead to wait for. */
static void rejoin_due(world *W, int64_t now) {
    int anyone = 0, waiting = 0;
    for (int i = 0; i < W->M; i++) {
        anyone |= W->w[i].joined;
        waiting |= W->w[i].state == W_REJOINING;
    }
    if (!waiting) return;
    if (!anyone) { /* the group begins again from the outer parameters */
        if (++W->restarts >= MAX_RESTARTS) {
            stop(W, "the group emptied %d times without a sync completing "
                 "(failures come faster than syncs)", W->restarts);
            return;
        }
        group_restart(W, now);
        int64_t step = W->frontier + 1 < W->resume_step ? W->frontier + 1
                                                        : W->resume_step;
        W->frontier = step - 1; /* the steps after it are to be done again */
        for (int i = 0; i < W->M; i++)
            if (W->w[i].state == W_REJOINING) rejoin(W, i, step, now);
        return;
    }
    for (int i = 0; i < W->M; i++) {
        const worker *w = &W->w[i];
        if (w->state == W_REJOINING && w->rejoin_at &&
            W->frontier >= w->rejoin_at - 1)
            rejoin(W, i, w->rejoin_at, now);
    }
}

/* A sync has completed: the repaired workers waiting for one rejoin at
 * the step after its apply step (W->resume_step). */
static void rejoin_waiting(world *W, int64_t now) {
    for (int i = 0; i < W->M; i++)
        if (W->w[i].state == W_REJOINING && !W->w[i].rejoin_at)
            W->w[i].rejoin_at = W->resume_step;
    rejoin_due(W, now);
}

/* DP: a failure stops everybody and rolls back to the last checkpoint. */
static void dp_outage(world *W, int64_t now) {
    W->outage = 1;
    W->rollbacks++;
    for (int i = 0; i < W->M; i++) {
        worker *w = &W->w[i];
        cancel_op(W, w, now);
        w->lost += w->busy - w->ckpt_busy;
        w->ckpt_busy = w->busy;
        w->nom_lost += w->nom - w->ckpt_nom;
        w->ckpt_nom = w->nom;
        w->step = W->ckpt_step + 1;
        w->op = 0;
        if (w->state != W_DOWN && w->state != W_RECOVERING) {
            w->state = W_STALLED;
            w->idle_start = now;
        }
    }
    W->ckpt_count = 0;
    W->ckpt_cand = 0;
    W->dp_synced = W->ckpt_step;
    for (int l = 0; l < W->L; l++) {
        W->red[l].state = RED_IDLE;
        W->rel[l].pending = 0;
        W->last_take[l] = W->ckpt_step;
        W->gate[l] = NO_GATE;
        W->waiters[l] = -1;
    }
    for (int l = W->L; l < W->L + W->P; l++) W->waiters[l] = -1;
    for (int p = 0; p < W->P; p++) {
        W->fs[p].take = -1;
        W->fs[p].epoch++;
        for (int i = 0; i < W->M; i++) W->w[i].pend_layers[p] = 0;
    }
    W->nready = W->head = 0;
    W->stream_busy = 0;
    coll_clear(W->coll, now);
    observe(W, RUN_EV_ROLLBACK, -1, -1, W->ckpt_step, -1, now);
}

/* DP: training resumes once nobody is down or downloading. */
static void dp_resume(world *W, int64_t now) {
    for (int i = 0; i < W->M; i++) {
        int st = W->w[i].state;
        if (st == W_DOWN || st == W_RECOVERING) return;
    }
    W->outage = 0;
    for (int i = 0; i < W->M; i++) {
        idle_span(W, i, "stalled", now);
        W->w[i].state = W_READY;
        begin_step(W, &W->w[i], i, now);
    }
    for (int i = 0; i < W->M; i++) try_advance(W, i, now);
}

static void on_fail(world *W, int wi, int64_t now, int64_t repair) {
    worker *w = &W->w[wi];
    if (w->state == W_DONE) return; /* its part of the run is over */
    W->failures++;
    w->failures++;
    observe(W, RUN_EV_FAILED, wi, -1, w->step, -1, now);
    if (++W->idle_failures >= (int64_t)MAX_IDLE_FAILURES * W->M)
        stop(W, "%lld failures in a row without any worker finishing a step "
             "(failures come faster than recovery or a step)",
             (long long)W->idle_failures);
    if (w->state == W_RECOVERING) net_flow_cancel(W->net, now, w->dl_flow);
    if (w->state == W_RECOVERING) {
        span(W, wi, 1, "recovery_interrupted", -1, w->step, w->dl_start, now,
             0);
        w->dl_flow = -1;
    }
    if (w->state == W_STALLED || w->state == W_REJOINING)
        idle_span(W, wi, w->state == W_STALLED ? "stalled" : "rejoin_wait",
                  now);
    if (W->sch.method == SCHED_DP) {
        if (!W->outage) dp_outage(W, now);
        w->state = W_DOWN;
    } else {
        cancel_op(W, w, now);
        unwait(W, wi);
        member_gone(W, wi);
        if (w->joined) {
            int64_t lost = 0;
            int64_t nlost = 0;
            for (int p = 0; p < W->P; p++) {
                lost += w->busy - w->contrib[p];
                nlost += w->nom - w->nom_contrib[p];
            }
            w->lost += lost / W->P;
            w->nom_lost += nlost / W->P;
            w->joined = 0;
            for (int p = 0; p < W->P; p++) { /* its arrivals count for
                                                 nothing, also if it
                                                 comes back to the take */
                W->fs[p].arrived[wi] = 0;
                w->pend_layers[p] = 0;
            }
            for (int l = 0; l < W->L; l++)
                if (W->red[l].state == RED_READY ||
                    W->red[l].state == RED_SENDING)
                    W->red[l].came[wi] = 0;
            coll_remove_member(W->coll, now, wi);
            w->state = W_DOWN;
            reductions_drop(W, wi, now);
            W->check_done = 1;
        }
        w->state = W_DOWN;
        rejoin_due(W, now); /* the last one in the group: nobody to wait for */
    }
    w->idle_start = now;
    if (repair >= now && repair <= RUN_TIME_MAX_NS)
        push(W, repair, CLS_FAULT, EV_REPAIR, wi, 0, 0);
}

static void on_repair(world *W, int wi, int64_t now) {
    idle_span(W, wi, "down", now);
    start_download(W, wi, now);
    next_failure(W, wi);
}

static void on_download_done(world *W, int wi, int64_t now) {
    worker *w = &W->w[wi];
    w->dl_flow = -1;
    W->recovery_bytes += W->dl_bytes;
    span(W, wi, 1, "recovery", -1, w->step, w->dl_start, now, W->dl_bytes);
    w->idle_start = now;
    if (W->sch.method == SCHED_DP) {
        w->state = W_STALLED;
        dp_resume(W, now);
        return;
    }
    /* it waits for the apply point of the newest completed sync if the
     * group has not reached it yet, else of the next one */
    w->state = W_REJOINING;
    w->rejoin_at = W->resume_step > W->frontier + 1 ? W->resume_step : 0;
    rejoin_due(W, now);
}

/* ---- net callbacks ------------------------------------------------------ */

static void on_coll_done(void *ctx, int64_t now, uint64_t tag) {
    world *W = ctx;
    if (W->member_mode) {
        W->rel[tag].pending = 0; /* whoever is left (failed) has nothing */
        W->stream_busy = 0;
        W->check_done = 1; /* the stream may have been all that was left */
    } else {
        reduction_done(W, (int)tag, now);
    }
    stream_kick(W, now);
}

static void on_member_done(void *ctx, int64_t now, uint64_t tag, int worker) {
    member_got(ctx, (int)tag, worker, now);
}

/* The net's done callback of a recovery download's flow (start_download):
 * ctx the world, tag TAG_RECOVERY + the worker. */
static void on_download_flow(void *ctx, int64_t now, int flow, uint64_t tag) {
    (void)flow;
    on_download_done(ctx, (int)(tag - TAG_RECOVERY), now);
}

/* ---- fast-forward ---------------------------------------------------------
 *
 * Two exact shortcuts, on unless the config asks for `full`, a timeline or
 * an observer listens, or failures can happen (their draws and instants
 * are not periodic):
 *   runs        ops with no side effect between them run as one event
 *               (run_end): a step with no gate and no take is one;
 *   periods     when worker 0 begins a period (H steps; DP: every step),
 *               the state of the whole world is written as a signature:
 *               instants relative to now, steps relative to worker 0's.
 *               When it equals the signature of one of the last period
 *               starts, the world repeats that stretch exactly; it is
 *               skipped whole, as many times as fit (jump): instants move
 *               by its length, steps by its steps, and every figure that
 *               adds up (compute, bytes, syncs, delays, events) by what it
 *               added.  Not with stragglers (their draws differ).
 * Left out of the signature: what only a failure reads (checkpoint
 * baselines, contribution baselines, recovery state), span-only instants,
 * and the counters the jump adds up.  Under the same conditions (but with
 * stragglers too) the stream is alone on the net (coll_set_exclusive):
 * alike ring steps run as one flow per chunk size, whose bytes reach the
 * link counters when coll_flush_bytes() is called before they are read. */

/* The pending events in pop order, relative to now (epochs and versions
 * relative to the current ones). */
static int by_key(const void *a, const void *b) {
    const eq_event *x = a, *y = b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    if (x->cls != y->cls) return x->cls < y->cls ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void events_signature(const world *W, int64_t now, sig_buf *b) {
    uint32_t n = W->q.len;
    eq_event *v = malloc((size_t)n * sizeof *v + 1);
    if (!v) {
        b->oom = 1;
        return;
    }
    memcpy(v, W->q.heap, (size_t)n * sizeof *v);
    qsort(v, n, sizeof *v, by_key);
    sig_i64(b, n);
    for (uint32_t i = 0; i < n; i++) {
        const eq_event *e = &v[i];
        int64_t rb = e->b, rc = (int64_t)e->c;
        if (e->kind == EV_OP) rb = (int32_t)(e->b - W->w[e->a].epoch);
        if (e->kind == EV_TIMEOUT) rb = (int32_t)(e->b - W->fs[e->a].epoch);
        if (e->kind == EV_NET) rc = (int64_t)(e->c - W->net_version);
        int64_t x[6] = {e->time - now, e->cls, e->kind, e->a, rb, rc};
        sig_put(b, x, sizeof x);
    }
    free(v);
}

/* What decides the world's future from now, worker 0 at step s0. */
static void world_signature(const world *W, int64_t now, int64_t s0,
                            sig_buf *b) {
    int M = W->M, L = W->L, P = W->P;
    for (int i = 0; i < M; i++) {
        const worker *w = &W->w[i];
        int64_t v[8] = {w->state, w->step - s0, w->op,
                        w->state == W_BUSY ? w->op_start - now : 0,
                        w->state == W_BLOCKED ? w->wait_on : -1, w->joined,
                        w->run_last - w->op, W->wait_next[i]};
        sig_put(b, v, sizeof v);
        sig_put(b, &w->factor, sizeof w->factor);
        sig_put(b, w->pend_layers, (size_t)P * sizeof *w->pend_layers);
    }
    for (int l = 0; l < L; l++) {
        const reduction *r = &W->red[l];
        int64_t v[6] = {r->state,
                        r->state == RED_IDLE ? 0 : r->take - s0,
                        r->need, r->arrived,
                        W->gate[l] == NO_GATE ? INT64_MIN
                                              : W->gate[l] - s0,
                        W->last_take[l] - s0};
        sig_put(b, v, sizeof v);
        sig_put(b, r->member, (size_t)M);
        sig_put(b, r->came, (size_t)M);
        if (!W->member_mode) continue;
        const release *g = &W->rel[l];
        int64_t u[3] = {g->pending, g->pending ? g->take - s0 : 0,
                        g->pending ? g->started - now : 0};
        sig_put(b, u, sizeof u);
        if (g->pending) sig_put(b, g->got, (size_t)M);
    }
    sig_put(b, W->waiters, (size_t)(L + P) * sizeof *W->waiters);
    if (W->sliced) sig_put(b, W->frag, (size_t)L * sizeof *W->frag);
    for (int p = 0; p < P; p++) {
        const fsync *f = &W->fs[p];
        int64_t v[3] = {f->take < 0 ? INT64_MIN : f->take - s0,
                        f->done, f->frozen};
        sig_put(b, v, sizeof v);
        sig_put(b, f->arrived, (size_t)M);
    }
    sig_i64(b, W->nready - W->head);
    sig_put(b, W->ready + W->head,
            (size_t)(W->nready - W->head) * sizeof *W->ready);
    int64_t g[3] = {W->stream_busy, now - W->end,
                    W->net_at == INT64_MAX ? INT64_MIN : W->net_at - now};
    sig_put(b, g, sizeof g);
    events_signature(W, now, b);
    net_signature(W->net, now, b);
    coll_signature(W->coll, b);
}

/* Records the start of a period (the current signature) as the newest
 * mark, dropping the oldest when all are used. */
static void remember_period(world *W, int64_t now, int64_t s0) {
    if (W->nmark == FF_MARKS) {
        ff_mark oldest = W->mark[0];
        memmove(W->mark, W->mark + 1, (FF_MARKS - 1) * sizeof oldest);
        W->mark[--W->nmark] = oldest;
    }
    ff_mark *m = &W->mark[W->nmark++];
    sig_buf t = m->sig;
    m->sig = W->sig;
    W->sig = t;
    m->now = now;
    m->step = s0;
    for (int i = 0; i < W->M; i++) {
        m->busy[i] = W->w[i].busy;
        m->nom[i] = W->w[i].nom;
    }
    for (int k = 0; k < 2 * W->M; k++) m->bytes[k] = net_link_bytes(W->net, k);
    m->syncs = W->syncs;
    m->timeouts = W->timeouts;
    m->progress = W->progress_done;
    m->events = W->events;
    m->delays = W->delays;
}

/* Skips n periods of dt ns and ds steps, each adding what the one since
 * mark m added. */
static void jump(world *W, const ff_mark *m, int64_t n, int64_t dt,
                 int64_t ds) {
    int64_t D = n * dt, K = n * ds;
    for (int i = 0; i < W->M; i++) {
        worker *w = &W->w[i];
        int64_t db = n * (w->busy - m->busy[i]);
        int64_t dn = n * (w->nom - m->nom[i]);
        w->busy += db;
        w->nom += dn;
        for (int p = 0; p < W->P; p++) { /* baselines a failure would read */
            w->contrib[p] += db, w->pend[p] += db;
            w->nom_contrib[p] += dn, w->nom_pend[p] += dn;
        }
        w->ckpt_busy += db, w->ckpt_cand_busy += db;
        w->ckpt_nom += dn, w->ckpt_cand_nom += dn;
        if (w->state == W_BUSY) w->op_start += D;
        w->idle_start += D;
        w->step += K;
        w->counted += K;
    }
    for (int l = 0; l < W->L; l++) {
        reduction *r = &W->red[l];
        if (r->state != RED_IDLE) {
            r->take += K;
            r->started += D;
        }
        if (W->gate[l] != NO_GATE) W->gate[l] += K;
        W->last_take[l] += K;
        if (W->member_mode && W->rel[l].pending) {
            W->rel[l].take += K;
            W->rel[l].started += D;
        }
    }
    for (int p = 0; p < W->P; p++)
        if (W->fs[p].take >= 0) W->fs[p].take += K;
    W->resume_step += K;
    W->frontier += K;
    W->dp_synced += K;
    if (W->ckpt_step) W->ckpt_step += K;
    if (W->ckpt_cand) W->ckpt_cand += K;
    W->end += D;
    if (W->net_at != INT64_MAX) W->net_at += D;
    for (uint32_t i = 0; i < W->q.len; i++) W->q.heap[i].time += D;
    net_shift(W->net, D);
    for (int k = 0; k < 2 * W->M; k++)
        net_link_bytes_add(W->net, k, (uint64_t)n * (net_link_bytes(W->net, k) -
                                                     m->bytes[k]));
    W->syncs += n * (W->syncs - m->syncs);
    W->timeouts += n * (W->timeouts - m->timeouts);
    W->progress_done += n * (W->progress_done - m->progress);
    W->events += (uint64_t)n * (W->events - m->events);
    run_delays *d = &W->delays;
    const run_delays *p = &m->delays;
    d->count += n * (d->count - p->count);
    d->sum += n * (d->sum - p->sum);
    for (int k = 0; k < RUN_DELAY_BINS; k++)
        d->hist[k] += n * (d->hist[k] - p->hist[k]);
}

/* Worker 0 has begun a period at `now`: compares the world with the last
 * period starts (a state may repeat only every few periods: flow ids
 * alternate, say) and skips what repeats. */
static void fast_forward(world *W, int64_t now) {
    int64_t s0 = W->w[0].step;
    coll_flush_bytes(W->coll); /* the marks read the link counters */
    W->sig.len = 0;
    world_signature(W, now, s0, &W->sig);
    if (W->sig.oom) {
        W->jumps = 0;
        return;
    }
    const ff_mark *m = NULL;
    for (int j = W->nmark - 1; j >= 0 && !m; j--)
        if (W->mark[j].sig.len == W->sig.len &&
            !memcmp(W->mark[j].sig.p, W->sig.p, W->sig.len))
            m = &W->mark[j];
    if (!m) {
        remember_period(W, now, s0);
        return;
    }
    int64_t dt = now - m->now, ds = s0 - m->step, top = 0, tmax = now;
    for (int i = 0; i < W->M; i++)
        if (W->w[i].step > top) top = W->w[i].step;
    for (uint32_t i = 0; i < W->q.len; i++)
        if (W->q.heap[i].time > tmax) tmax = W->q.heap[i].time;
    /* the skipped periods stay clear of the end (a step whose sync would
     * apply after the last step takes none; a worker past it stops) and
     * of the clock's limit: the last one processes steps up to top + n ds */
    int extra = 0;
    for (int i = 0; i < W->M; i++)
        if (W->cfg->tau_extra[i] > extra) extra = W->cfg->tau_extra[i];
    int64_t n = (W->T - W->delay - extra - top) / ds;
    if (dt > 0 && (RUN_TIME_MAX_NS / 2 - tmax) / dt - 1 < n)
        n = (RUN_TIME_MAX_NS / 2 - tmax) / dt - 1;
    if (n >= 1 && dt > 0) jump(W, m, n, dt, ds);
    W->nmark = 0; /* marks of the skipped past no longer describe it */
}

/* ---- building and tearing down the world -------------------------------- */

/* The model's parameters as a whole count: params beyond 2^62 cannot be
 * run (world_init stops); clamped here so the conversion is defined. */
static uint64_t model_params(const scn_config *cfg) {
    double np = cfg->params < (double)RUN_TIME_MAX_NS ? cfg->params
                                                       : (double)RUN_TIME_MAX_NS;
    return np > 0 ? (uint64_t)llround(np) : 0;
}

uint64_t run_slice_params(const scn_config *cfg, int l, int j, int P) {
    uint64_t N = model_params(cfg), L = (uint64_t)cfg->layers;
    uint64_t q = N / L, r = N % L, ul = (uint64_t)l;
    uint64_t n = q + ((ul + 1) * r / L - ul * r / L);
    /* n < 2^62 and j < P < 2^31: the products fit */
    uint64_t uj = (uint64_t)j, uP = (uint64_t)P;
    uint64_t part = n / uP, rem = n % uP;
    return part + ((uj + 1) * rem / uP - uj * rem / uP);
}

uint64_t run_slice_bytes(const scn_config *cfg, codec_spec codec, int l,
                         int j, int P) {
    uint64_t row = cfg->hidden;
    if (row == 0) {
        uint64_t N = model_params(cfg);
        row = (uint64_t)llround(sqrt((double)N / (double)cfg->layers / 12.0));
        if (row == 0) row = 1;
    }
    return codec_wire_bytes(codec, run_slice_params(cfg, l, j, P), row);
}

uint64_t run_layer_bytes(const scn_config *cfg, codec_spec codec, int l) {
    return run_slice_bytes(cfg, codec, l, 0, 1);
}

#define ALLOC(p, n)                                            \
    do {                                                       \
        (p) = calloc((size_t)(n) + 1, sizeof *(p));            \
        if (!(p)) return MSG_ENOMEM;                           \
    } while (0)

/* x seconds as whole ns in *ns, or -1 when x is not a number of seconds
 * below RUN_TIME_MAX_NS (NaN, infinite, negative, too large). */
static int ns_of(double x, int64_t *ns) {
    double v = x * 1e9;
    if (!(v >= 0 && v < (double)RUN_TIME_MAX_NS)) return -1;
    *ns = llround(v);
    return 0;
}

/* The inputs the clock cannot represent: stops the run before it starts
 * (the loader rejects most of them; this keeps the engine safe alone). */
static void check_inputs(world *W) {
    const scn_config *c = W->cfg;
    char b[MSG_NUM_MAX];
    double step = scn_step_time_s(c);
    if (ns_of(step, &W->base_ns))
        stop(W, "a step time of %s s does not fit in 2^62 ns",
             msg_number(step, b));
    else if (W->base_ns < 1)
        stop(W, "a step time of %s s is shorter than 1 ns",
             msg_number(step, b));
    if (!(c->params >= 0 && c->params < (double)RUN_TIME_MAX_NS))
        stop(W, "%s parameters is more than 2^62", msg_number(c->params, b));
    /* a download too large for 64 bits only matters once one starts */
    double dl = c->params * c->recovery_bytes_per_param;
    W->dl_bytes = dl >= 0 && dl < 1.8e19 ? (uint64_t)llround(dl) : UINT64_MAX;
    for (int i = 0; i < W->M; i++)
        for (int j = 0; j < W->M; j++) {
            int64_t ns;
            double ms = scn_latency_ms(c, i, j);
            if (ns_of(ms * 1e-3, &ns))
                stop(W, "workers %d and %d: a latency of %s ms does not fit "
                     "in 2^62 ns", i, j, msg_number(ms, b));
        }
}

/* Which reduction carries each layer.  DP with dp_bucket_mb: buckets of
 * layers in backward order (L-1 down to 0), each closed once its payload
 * reaches dp_bucket_mb MB, the last one with what is left; a bucket is
 * one all-reduce of its layers' bytes, ready when the gradient of its
 * lowest layer is, and the forward of each of its layers waits for it.
 * Otherwise every layer is its own reduction. */
static void buckets_init(world *W) {
    double cap = W->sch.method == SCHED_DP ? W->cfg->dp_bucket_mb * 1e6 : 0;
    uint64_t acc = 0;
    int top = W->L - 1; /* the open bucket's highest layer */
    for (int l = W->L - 1; l >= 0; l--) {
        W->lead[l] = l;
        if (cap <= 0) {
            if (!W->sliced) W->frag_size[W->frag[l]]++; /* sliced: counted */
            continue;
        }
        acc += W->bytes[l];
        if ((double)acc < cap && l > 0) continue;
        for (int k = l; k <= top; k++) W->lead[k] = l;
        W->bytes[l] = acc; /* the bucket's payload, at its lead */
        W->frag_size[0]++;
        acc = 0;
        top = l - 1;
    }
}

static int world_init(world *W, const scn_config *c, const run_hooks *h,
                      char *err, size_t errlen) {
    memset(W, 0, sizeof *W);
    W->cfg = c;
    W->hooks = h;
    W->M = c->workers;
    W->L = c->layers;
    W->T = c->steps;
    W->sch = c->sched;
    W->sch.layers = c->layers;
    if (sched_normalize(&W->sch, err, errlen)) return MSG_EINPUT;
    W->P = W->sch.P;
    W->delay = sched_delay(&W->sch);
    W->take_last = c->measure == SCN_MEASURE_STEADY ? W->T + W->delay : W->T;
    W->sliced = W->sch.layout == SCHED_SLICED;
    check_inputs(W);
    W->net_at = INT64_MAX;
    W->forward_first = c->reduce_order == SCN_FORWARD_FIRST;
    W->blocking = !scn_late_continues(c);
    int offload = c->offload_outer && c->sched.method != SCHED_DP;
    W->fast = !c->full && !(h && (h->span || h->observe)) &&
              c->faults.mtbf_s == 0 && !c->trace_path[0] && !offload;
    W->jumps = W->fast && c->straggler_prob == 0;
    W->period = W->sch.H;
    W->timeout_ns = llround(c->sync_timeout_s * 1e9); /* <= 1e18 (loader) */
    W->progress_next = 1;
    W->resume_step = 1;
    int M = W->M, L = W->L, P = W->P;

    int rc = eq_init(&W->q, 1024);
    if (rc) return msg_set(err, errlen, rc, "out of memory");
    ALLOC(W->w, M);
    ALLOC(W->red, L);
    ALLOC(W->rel, L);
    ALLOC(W->gate, L);
    ALLOC(W->last_take, L);
    ALLOC(W->ready, L);
    ALLOC(W->frag, L);
    ALLOC(W->phase, L);
    ALLOC(W->bytes, (size_t)L * (W->sliced ? (size_t)P : 1));
    ALLOC(W->waiters, L + P);
    ALLOC(W->fs, P);
    ALLOC(W->member, M);
    ALLOC(W->merge_step, M);
    ALLOC(W->wait_next, M);
    ALLOC(W->frag_size, P);
    ALLOC(W->lead, L);
    ALLOC(W->flist, P);
    ALLOC(W->out_step, (size_t)M * P);
    ALLOC(W->outer_bytes, P);
    ALLOC(W->lat, (size_t)M * M);
    ALLOC(W->nom_cum, 3 * L);

    codec_spec codec = c->sched.method == SCHED_DP ? c->dp_codec : c->codec;
    for (int l = 0; l < L; l++) {
        ALLOC(W->red[l].member, M);
        ALLOC(W->red[l].came, M);
        ALLOC(W->rel[l].got, M);
        W->gate[l] = NO_GATE;
        W->waiters[l] = -1;
        if (W->sliced) { /* every fragment holds a slice of every layer */
            for (int p = 0; p < P; p++) {
                W->frag_size[p]++;
                W->bytes[(size_t)l * P + p] = run_slice_bytes(c, codec, l, p, P);
            }
            continue;
        }
        W->frag[l] = sched_layer_fragment(&W->sch, l);
        W->phase[l] = sched_offset(&W->sch, W->frag[l]);
        W->bytes[l] = run_layer_bytes(c, codec, l);
    }
    buckets_init(W);
    if (offload) { /* outer parameters and momentum (sim/memory.h) */
        uint64_t per = MEM_OUTER_BYTES + MEM_MOMENTUM_BYTES;
        for (int l = 0; l < L; l++)
            for (int p = 0; p < P; p++)
                if (W->sliced) /* a slice of every layer */
                    W->outer_bytes[p] += per * run_slice_params(c, l, p, P);
                else if (W->frag[l] == p)
                    W->outer_bytes[p] += per * run_slice_params(c, l, 0, 1);
        W->off = off_new(M, P, c->host_gbps * scn_gbit_bits(c->gbit) / 8);
        if (!W->off) return MSG_ENOMEM;
    }
    for (int p = 0; p < P; p++) {
        ALLOC(W->fs[p].arrived, M);
        W->fs[p].take = -1;
        W->waiters[L + p] = -1;
    }

    for (int o = 0; o < 3 * L; o++) /* the op ends of a step at speed 1 */
        W->nom_cum[o] = llround((double)W->base_ns * op_cum(W, o + 1));
    for (int k = 0; k < FF_MARKS; k++) {
        ALLOC(W->mark[k].busy, M);
        ALLOC(W->mark[k].nom, M);
        ALLOC(W->mark[k].bytes, 2 * M);
    }

    double max_lat = 0;
    for (int i = 0; i < M && !W->stopped; i++)
        for (int j = 0; j < M; j++) {
            double ms = scn_latency_ms(c, i, j);
            ns_of(ms * 1e-3, &W->lat[i * M + j]); /* checked above */
            if (ms > max_lat) max_lat = ms;
        }
    /* One TCP window in flight per round trip; the longest round trip
     * bounds every flow (a conservative reading of heterogeneous RTTs). */
    int tcp = c->transport == SCN_TRANSPORT_TCP;
    W->flow_cap = INFINITY;
    if (c->tcp_window_mb > 0 && max_lat > 0 && !tcp)
        W->flow_cap = c->tcp_window_mb * 1e6 / (2 * max_lat * 1e-3);

    W->net = net_new(2 * M);
    if (!W->net) return MSG_ENOMEM;
    /* payload bytes get the efficiency's share of the line rate */
    double rate = scn_gbit_bits(c->gbit) / 8 * c->efficiency;
    for (int i = 0; i < M; i++) {
        net_link_set(W->net, 2 * i, c->up_gbps[i] * rate);
        net_link_set(W->net, 2 * i + 1, c->down_gbps[i] * rate);
    }
    W->coll = coll_new(W->net, M, c->collective, W->lat, W->flow_cap,
                       TAG_COLL, on_coll_done, W);
    if (!W->coll) return MSG_ENOMEM;
    if (tcp) { /* the window limit is then each connection's own */
        coll_tcp t = {.init_window_bytes = c->tcp_init_window_kb * 1e3,
                      .max_window_bytes = c->tcp_window_mb > 0
                                          ? c->tcp_window_mb * 1e6 : INFINITY,
                      .rto_min_s = RUN_TCP_RTO_MIN_S,
                      .restart_after_idle = c->tcp_slow_start_after_idle};
        coll_set_tcp(W->coll, &t);
    }
    coll_set_step_overhead(W->coll, llround(c->collective_overhead_ms * 1e6));
    if (c->has_ring_order && coll_set_order(W->coll, c->ring_order))
        return MSG_ENOMEM; /* the loader checked the permutation */
    W->member_mode = c->completion == SCN_COMPLETION_MEMBER;
    if (W->member_mode && coll_set_member_done(W->coll, on_member_done))
        return MSG_ENOMEM;
    /* no failures (so no downloads, no lost members) and nobody watching:
     * the stream alone on the net may take its shortcuts */
    if (W->fast && !W->member_mode) coll_set_exclusive(W->coll);

    faults_spec fs = c->faults;
    fs.trace = c->trace_path[0] ? c->trace_path : NULL;
    W->faults = faults_new(&fs, M, c->seed, err, errlen);
    /* faults_new fails on a bad or unreadable trace (or, rarely, OOM):
     * the user's input to fix */
    if (!W->faults) return MSG_EINPUT;

    for (int i = 0; i < M; i++) {
        worker *w = &W->w[i];
        ALLOC(w->cum, 3 * L);
        ALLOC(w->contrib, P);
        ALLOC(w->nom_contrib, P);
        ALLOC(w->pend, P);
        ALLOC(w->nom_pend, P);
        ALLOC(w->pend_layers, P);
        w->straggle = rng_stream(c->seed, RNG_STRAGGLERS, (uint32_t)i);
        if (!w->straggle) return MSG_ENOMEM;
        w->step = 1;
        w->joined = 1;
        w->dl_flow = -1;
        w->factor = NAN; /* no factor yet: never equal to one */
        w->state = W_READY;
        begin_step(W, w, i, 0);
        next_failure(W, i);
    }
    return 0;
}

static void world_free(world *W) {
    if (W->w)
        for (int i = 0; i < W->M; i++) {
            free(W->w[i].cum);
            free(W->w[i].contrib);
            free(W->w[i].nom_contrib);
            free(W->w[i].pend);
            free(W->w[i].nom_pend);
            free(W->w[i].pend_layers);
            if (W->w[i].straggle) gsl_rng_free(W->w[i].straggle);
        }
    if (W->red)
        for (int l = 0; l < W->L; l++) {
            free(W->red[l].member);
            free(W->red[l].came);
            if (W->rel) free(W->rel[l].got);
        }
    free(W->w), free(W->red), free(W->rel), free(W->gate), free(W->last_take), free(W->ready);
    free(W->frag), free(W->phase);
    free(W->bytes), free(W->waiters), free(W->wait_next);
    if (W->fs)
        for (int p = 0; p < W->P; p++) free(W->fs[p].arrived);
    free(W->fs), free(W->member), free(W->merge_step);
    for (int k = 0; k < FF_MARKS; k++) {
        free(W->mark[k].busy), free(W->mark[k].nom), free(W->mark[k].bytes);
        free(W->mark[k].sig.p);
    }
    free(W->sig.p);
    off_free(W->off);
    free(W->flist), free(W->outer_bytes), free(W->out_step);
    free(W->frag_size), free(W->lead), free(W->lat), free(W->nom_cum);
    if (W->coll) coll_free(W->coll);
    if (W->net) net_free(W->net);
    if (W->faults) faults_free(W->faults);
    eq_free(&W->q);
}

/* ---- the loop ------------------------------------------------------------ */

/* Done: nobody joined is still computing and no reduction is pending. */
static int finished(const world *W) {
    if (W->outage || coll_pending(W->coll)) return 0;
    int joined = 0;
    for (int i = 0; i < W->M; i++) {
        if (!W->w[i].joined) continue;
        if (W->w[i].state != W_DONE) return 0;
        joined++;
    }
    return joined > 0;
}

/* Why a run whose queue ran dry did not finish. */
static void stalled_reason(world *W) {
    int down = 0;
    for (int i = 0; i < W->M; i++) {
        int st = W->w[i].state;
        down += st == W_DOWN || st == W_RECOVERING || st == W_REJOINING;
    }
    if (net_active_flows(W->net) > 0)
        stop(W, "%d transfers can never complete (a link or TCP-window rate "
             "too low to move their bytes before 2^62 ns)",
             net_active_flows(W->net));
    else if (down == W->M)
        stop(W, "every worker is down for good");
    else
        stop(W, "nothing left to happen before every step was done");
}

/* Spans of the waits still open when the run ends. */
static void close_spans(world *W) {
    for (int i = 0; i < W->M; i++) {
        worker *w = &W->w[i];
        if (w->state == W_DOWN) idle_span(W, i, "down", W->end);
        if (w->state == W_STALLED) idle_span(W, i, "stalled", W->end);
        if (w->state == W_REJOINING) idle_span(W, i, "rejoin_wait", W->end);
    }
}

/* The syncs taken after a step up to T whose apply step lies past T
 * (t in (T - delay, T]): measure run does not take them; steady waits for
 * them. */
static int64_t not_waited(const world *W) {
    if (W->take_last > W->T) return 0;
    int64_t n = 0;
    for (int64_t t = W->T; t > W->T - W->delay && t >= 1; t--)
        n += sched_taken_after(&W->sch, t, INT64_MAX, NULL);
    return n;
}

static void fill_result(const world *W, int done, uint64_t events,
                        run_result *out) {
    memset(out, 0, sizeof *out);
    double wall = (double)W->end * 1e-9;
    out->workers = W->M;
    out->steps = W->T;
    out->finished = done;
    if (!done)
        snprintf(out->stop_reason, sizeof out->stop_reason, "%s",
                 W->reason[0] ? W->reason : "stopped");
    out->wall_ns = W->end;
    out->wall_time_s = wall;
    out->step_ns = W->base_ns;
    out->step_time_s = (double)W->base_ns * 1e-9;
    out->syncs = W->syncs;
    out->failures = W->failures;
    out->recovery_bytes = W->recovery_bytes;
    out->events = events;
    out->delays = W->delays;
    out->timeouts = W->timeouts;
    out->syncs_not_waited = not_waited(W);
    double peak = 0;
    for (int i = 0; i < W->M; i++) {
        const worker *w = &W->w[i];
        run_worker *r = &out->per_worker[i];
        r->compute_ns = w->busy;
        r->compute_time_s = (double)w->busy * 1e-9;
        r->utilization = W->end > 0 ? (double)w->busy / (double)W->end : 0;
        r->useful_ns = w->nom - w->nom_lost;
        r->goodput = W->end > 0 ? (double)r->useful_ns / (double)W->end : 0;
        r->bytes_sent = net_link_bytes(W->net, 2 * i);
        r->bytes_received = net_link_bytes(W->net, 2 * i + 1);
        r->lost_ns = w->lost;
        r->lost_compute_s = (double)w->lost * 1e-9;
        r->failures = w->failures;
        r->outer_device_peak_bytes = W->off ? off_peak_bytes(W->off, i) : 0;
        out->compute_ns = sum_ns(out->compute_ns, w->busy);
        out->useful_ns = sum_ns(out->useful_ns, r->useful_ns);
        out->lost_ns = sum_ns(out->lost_ns, w->lost);
        out->bytes_sent_total += r->bytes_sent;
        for (int k = 0; k < 2; k++) {
            double p = net_link_peak(W->net, 2 * i + k);
            if (p > peak) peak = p;
        }
    }
    out->compute_time_s = (double)out->compute_ns * 1e-9;
    out->lost_compute_s = (double)out->lost_ns * 1e-9;
    out->compute_utilization = W->end > 0 ? (double)out->compute_ns /
                                                ((double)W->end * W->M) : 0;
    out->goodput = W->end > 0 ? (double)out->useful_ns /
                                    ((double)W->end * W->M) : 0;
    /* Rates in the scenario's own Gbit, like its bandwidth keys. */
    double gbit = scn_gbit_bits(W->cfg->gbit);
    out->peak_link_gbps = peak * 8 / gbit;
    out->avg_link_gbps =
        wall > 0 ? (double)out->bytes_sent_total * 8 / gbit / wall / W->M : 0;
}

int run_simulate(const scn_config *cfg, const run_hooks *hooks,
                 run_result *out, char *err, size_t errlen) {
    world W;
    int rc = world_init(&W, cfg, hooks, err, errlen);
    W.err = err;
    W.errlen = errlen;
    if (rc == MSG_ENOMEM) msg_set(err, errlen, rc, "out of memory");
    if (rc) {
        world_free(&W);
        return rc;
    }
    for (int i = 0; i < W.M && !W.stopped; i++) try_advance(&W, i, 0);

    int64_t last = 0; /* instant of the last event processed */
    int done = 0;
    eq_event ev;
    while (!W.rc && !W.stopped) {
        if (W.rollbacks >= MAX_ROLLBACKS) {
            stop(&W, "DP rolled back %d times without a new checkpoint "
                 "(failures come faster than checkpoints)", W.rollbacks);
            break;
        }
        if (!eq_pop(&W.q, &ev)) {
            stalled_reason(&W);
            break;
        }
        int64_t now = ev.time;
        W.now = now;
        worker *w = ev.kind == EV_NET ? NULL : &W.w[ev.a];
        switch (ev.kind) {
        case EV_NET:
            if (ev.c != W.net_version) continue; /* superseded */
            W.net_at = INT64_MAX;
            net_advance(W.net, now);
            break;
        case EV_OP:
            if (ev.b != w->epoch || w->state != W_BUSY) continue;
            on_op_done(&W, ev.a, now);
            break;
        case EV_FAIL:
            on_fail(&W, ev.a, now, (int64_t)ev.c);
            break;
        case EV_REPAIR:
            on_repair(&W, ev.a, now);
            break;
        case EV_TIMEOUT:
            on_timeout(&W, ev.a, ev.b, now);
            break;
        case EV_COPY:
            on_copy(&W, ev.a, ev.b, now);
            break;
        }
        W.events++;
        last = now;
        net_resched(&W);
        if (W.check_done) {
            W.check_done = 0;
            if ((done = finished(&W))) break;
        }
        if (W.ff_check) {
            W.ff_check = 0;
            fast_forward(&W, now);
        }
    }
    if (W.rc) {
        rc = W.observer_failed ? W.rc
             : msg_set(err, errlen, W.rc, "%s", W.rc == MSG_ENOMEM
                       ? "out of memory" : "internal error in the event loop");
        world_free(&W);
        return rc;
    }
    /* the wall of an unfinished run: until it stopped */
    if (!done && last > W.end) W.end = last;
    close_spans(&W);
    coll_flush_bytes(W.coll);
    fill_result(&W, done, W.events, out);
    world_free(&W);
    return 0;
}
