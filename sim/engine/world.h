/*
 * world.h -- the state of one run, shared by the engine's run files only
 * (run.c, world.c, worker.c, sync.c, site.c, recovery.c, fastfwd.c,
 * bwstep.c, and probe.c, which wires a network alone; nothing else
 * includes it): the
 * world and its parts, the small helpers every one of those files uses,
 * and each file's functions for the others.
 *
 * The fields are grouped by their part in the exact fast-forward
 * (fastfwd.c): "signature" fields decide the future and go into the
 * world's signature (relative to now and to worker 0's step); "jump"
 * fields are the counters a jump adds up (or the instants and steps it
 * shifts); "failure-only" fields are read only once a failure has
 * happened (checkpoint and contribution baselines, recovery state), and
 * failures turn the fast-forward off; "setup" fields are fixed when the
 * world is built (or scratch, or the run's outcome).
 *
 * explain.c is a run file too: with a book (expl_run) the loop tells it
 * every event's instant and the stream every collective's start and end
 * (the expl__ functions below); without one (run_simulate) nothing calls
 * it.
 */
#ifndef DILOSIM_WORLD_H
#define DILOSIM_WORLD_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/base/msg.h"
#include "sim/base/rng.h"
#include "sim/config/member_trace.h"
#include "sim/engine/collective.h"
#include "sim/engine/eventq.h"
#include "sim/engine/fabric.h"
#include "sim/engine/faults.h"
#include "sim/engine/net.h"
#include "sim/engine/offload.h"
#include "sim/engine/payload.h"
#include "sim/engine/run.h"
#include "sim/engine/sig.h"

enum { CLS_NET, CLS_FAULT, CLS_COMPUTE }; /* tie order */
enum { EV_NET, EV_OP, EV_FAIL, EV_REPAIR, EV_TIMEOUT, EV_COPY, EV_BW };
enum { EV_CKPT = EV_BW + 1, EV_RESTART }; /* checkpoint_s, restart_s */
enum { EV_SITE = EV_RESTART + 1 };        /* a bucket reduced inside a site */
enum { EV_MEMBER = EV_SITE + 1 };         /* faults.membership_trace */
enum { OP_FWD, OP_BACT, OP_BPAR };

/* A worker's state; changed only by worker_set_state (worker.c), whose
 * table lists the transitions.  W_READY is 0: a new worker is ready. */
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
    W_DONE,       /* did every step */
    W_CKPT,       /* writing a checkpoint (faults.checkpoint_s) */
    W_RESTARTING, /* repaired, its process starting (faults.restart_s) */
    W_NSTATES
};

/* The life cycle of a layer's reduction (run.c's header comment); changed
 * only by sync.c's reduction_set_state. */
enum { RED_IDLE, RED_COLLECTING, RED_READY, RED_SENDING, RED_NSTATES };

#define NO_GATE INT64_MAX
#define WAIT_COPY (-1)        /* wait_on: a copy-in of outer state (offload) */
#define WAIT_SITE (-2)        /* wait_on: a bucket reduced inside its site */
#define TAG_RECOVERY 0        /* net tags below TAG_COLL: downloads */
#define TAG_COLL (1ull << 40) /* the stream's (coll_new's tag_base) */

typedef struct expl_book expl_book; /* explain.c: where the time goes */

typedef struct {
    /* signature */
    int state;        /* W_*: worker_set_state only */
    int64_t step;     /* step being computed, 1..T (T+1: done) */
    int op;           /* next (or running) op of the step, 0..3L-1 */
    int64_t op_start; /* ns, of the running op */
    int wait_on;      /* W_BLOCKED: the wait list */
    int joined;       /* takes part in syncs (alive and caught up) */
    int run_last;     /* the running event ends ops op..run_last (fast:
                          several at once; else run_last = op) */
    double factor;    /* step-time factor of the current step */
    int *pend_layers; /* layers of the fragment's sync under way reduced
                          with it */
    /* signature, with checkpoints (W->ckpt_every) */
    int64_t ckpt_done;  /* the newest step whose checkpoint it has written
                           (or restored) */
    int64_t ckpt_start; /* ns, W_CKPT: the checkpoint's start */
    /* jump: added up */
    int64_t busy;    /* ns of compute so far */
    int64_t nom;     /* ns of completed ops at speed 1 */
    int64_t counted; /* the newest step the progress has counted */
    int64_t ckpt_ns; /* ns spent writing checkpoints */
    /* failure-only */
    int64_t nom_lost;         /* ns of nom declared lost */
    int64_t *contrib;         /* busy at the last contribution that reached a
                          completed sync, per fragment */
    int64_t *nom_contrib;     /* nom at the same instants */
    int64_t *pend, *nom_pend; /* busy, nom at its latest arrival for the
                                 fragment's sync under way */
    int64_t ckpt_busy, ckpt_cand_busy; /* DP checkpoint baselines */
    int64_t ckpt_nom, ckpt_cand_nom;
    int dl_flow; /* recovery download, -1 when none */
    int64_t dl_start;
    int64_t idle_start; /* ns: entered W_DOWN, W_STALLED or W_REJOINING */
    int64_t rejoin_at;  /* W_REJOINING: the step it rejoins at, once the
                          group has finished the one before (0: not known
                          yet, the next completed sync sets it) */
    int64_t lost, failures;
    int64_t restart_ns; /* ns spent restarting after repairs */
    /* faults.membership_trace (member.c): the worker is not a member from
     * a leave until its join (or from 0 until its first join); broken:
     * failed and not yet repaired, member or not */
    int absent, broken;
    int64_t absent_start; /* ns: its absence began */
    int64_t absent_ns;    /* ns of the absences that ended */
    int64_t joins, leaves;
    /* setup, or derived from the signature's fields */
    uint32_t epoch; /* bumps cancel the running op's event (relative
                          in the events' signature) */
    int64_t *cum;   /* ns from the step's start to the end of each op
                          of the current step (from factor) */
    int taken;      /* phase (1..H) of the fragments taken after the
                          current step, 0 for none: layer l's fragment is
                          taken when W->phase[l] equals it (sliced: every
                          layer, for fragment tfrag) */
    int tfrag;      /* sliced: the fragment taken after the step */
    gsl_rng *straggle;
} worker;

typedef struct {  /* the outstanding reduction of one layer */
    int state;    /* RED_*: reduction_set_state only */
    int64_t take; /* step after which it was taken */
    int need, arrived;
    uint8_t *member; /* participants, per worker */
    uint8_t *came;   /* arrived, per worker */
    int64_t started; /* ns, handed to the communication stream */
} reduction;

/* network.completion member: a layer's all-reduce whose result some
 * members have and others do not yet (from its first member's completion
 * until the last one's). */
typedef struct {
    int64_t take;    /* step after which it was taken */
    int64_t started; /* ns, handed to the communication stream */
    int pending;     /* members still without the result */
    uint8_t *got;    /* per worker: has the result */
} release;

/* The start of a period, for the fast-forward: the world's signature and
 * the figures that add up. */
#define FF_MARKS 4
typedef struct {
    sig_buf sig;
    int64_t now, step;   /* its instant; worker 0's step */
    int64_t *busy, *nom; /* per worker */
    int64_t *ckpt;       /* per worker: ckpt_ns */
    uint64_t *bytes;     /* per link */
    int64_t syncs, timeouts, progress;
    uint64_t events;
    run_delays delays;
} ff_mark;

/* A fragment's sync in flight: from the first arrival for any of its
 * layers until every layer has been reduced (or dropped).  Its state
 * (FS_* of sync.c: none, open, frozen) is that of take and frozen, which
 * only sync.c's fsync_set_state changes. */
typedef struct {
    int64_t take;     /* step after which it was taken; -1: none */
    int done;         /* layers reduced or dropped so far */
    int frozen;       /* its timeout expired: the members are closed */
    uint32_t epoch;   /* bumps cancel its timeout event */
    uint8_t *arrived; /* per worker: arrived for one of its layers */
} fsync;

typedef struct {
    /* ---- setup: the config and what follows from it ---- */
    const scn_config *cfg;
    const run_hooks *hooks;
    char *err; /* run_simulate's message buffer (observer) */
    size_t errlen;
    int M, L, P;
    int64_t T;
    int64_t take_last; /* the last apply step of a sync taken: T (measure
                           run), or T + delay (steady: every sync taken
                           after a step up to T) */
    sched_spec sch;
    int blocking;          /* late syncs block the forward: wait, or DP */
    int64_t timeout_ns;    /* sync_timeout_s; 0: none */
    int member_mode;       /* network.completion member: each worker passes
                           its gate when it has the result (rel) */
    int forward_first;     /* reduce_order: 1 forward_first, 0 fifo */
    int sliced;            /* layout sliced: each fragment 1/P of every layer */
    int64_t delay;         /* steps from a take to its apply: sched_delay */
    int *phase;            /* per layer: its fragment's sched_offset */
    int *frag_size;        /* per fragment: its layers' reductions */
    int *lead;             /* per layer: the layer whose reduction carries it
                           (DP buckets: the bucket's lowest layer, whose
                           gradient comes last; else itself) */
    uint64_t *bytes;       /* per layer: payload bytes of a sync (sliced: per
                           layer and fragment, at l * P + f) */
    int64_t *lat;          /* M x M one-way latencies, ns */
    double flow_cap;       /* bytes/s cap of every flow (TCP window) */
    int64_t base_ns;       /* step time at speed 1 */
    int64_t *nom_cum;      /* per op: ns at speed 1 of ops 0..o of a step */
    uint64_t dl_bytes;     /* bytes of one recovery download (UINT64_MAX: too
                           many to represent) */
    int64_t ckpt_every;    /* a checkpoint of ckpt_ns after every step k *
                           ckpt_every (scn_checkpoint_every); 0: none (also
                           when it costs no time) */
    int64_t ckpt_ns;       /* faults.checkpoint_s in ns */
    int64_t restart_ns;    /* faults.restart_s in ns; 0: none */
    faults *faults;        /* failures turn the fast-forward off */
    offload *off;          /* method.offload_outer: the host copies; NULL (it
                           turns the fast-forward off) */
    uint64_t *outer_bytes; /* per fragment: its outer parameters and
                              momentum, bytes (offload) */
    int64_t *out_step;     /* offload, per worker and fragment: the step at
                           whose start its merged state goes back to the
                           host (0: none pending) */
    /* fast paths (see "Fast-forward" in fastfwd.c) */
    int fast;       /* pure steps in one event */
    int jumps;      /* whole periods skipped (0 once out of memory) */
    int64_t period; /* steps of a period: H */
    /* expl_run's bookkeeping; NULL: none (with one, no jumps) */
    expl_book *book;
    /* network.bandwidth_trace (bwstep.c): while a step is still to come
     * the jumps wait, so the steps need not be in the signature */
    bwt_trace *bwt;  /* the trace file's steps; NULL: none */
    size_t bw_next;  /* the file's next step not yet applied */
    int64_t bw_slot; /* diurnal: the next slot */
    int bw_left;     /* an EV_BW is pending */
    /* workers.sites (site.c): fab NULL when every site is of one */
    fabric *fab;         /* per worker: its site's fabric */
    int inner;           /* DiLoCo, streaming: inner steps reduce inside */
    int *dlead;          /* per layer: the inner-step bucket carrying it */
    uint64_t *dbytes;    /* per layer: that bucket's bytes, at its lead */
    uint32_t *fab_epoch; /* per worker: bumps void its EV_SITE events */
    /* faults.membership_trace (member.c): it turns the fast paths off, as
     * a fault trace does; method.quorum */
    mbt_trace *mbt; /* the trace file's events; NULL: none */
    size_t mb_next; /* the file's next event not yet applied */
    int quorum;     /* members a reduction needs to proceed, >= 1 */
    int64_t joins, leaves;

    /* ---- signature: what decides the future ---- */
    eq_queue q; /* the pending events */
    net *net;
    coll *coll;
    worker *w;
    reduction *red;
    release *rel;       /* per layer (member_mode) */
    int64_t *gate;      /* per layer: first step whose forward waits */
    int64_t *last_take; /* per layer: step of the newest reduction */
    int *frag;          /* per layer: fragment (sliced: of its current or
                           last reduction) */
    fsync *fs;          /* per fragment: its sync in flight */
    int *waiters;       /* per wait list (L layers, then P fragments):
                           first blocked worker, -1 for none */
    int *wait_next;     /* per worker: next blocked on the same layer */
    int *ready;         /* reductions ready but not yet on the stream:
                           fifo, ready[head..nready) in the order they
                           became ready; forward_first, ready[0..nready)
                           a binary heap by needed_sooner */
    int nready, head;
    int stream_busy;      /* a reduction is on the stream */
    int64_t *fab_free;    /* per worker (inner): its fabric is free from */
    uint8_t *intra_pend;  /* per worker x layer (inner): the bucket led by
                             the layer is being reduced inside */
    int site_pending;     /* inner: such buckets in all */
    int64_t *held;        /* per worker x layer (inner): the step whose
                             arrival for the layer's sync waits for the
                             layer's bucket to be reduced inside; 0 none */
    int64_t end;          /* instant of the last useful event */
    int64_t net_at;       /* instant of the scheduled net event */
    uint64_t net_version; /* relative in the events' signature */

    /* ---- jump: the counters a jump adds up ---- */
    uint64_t events; /* events processed (and skipped by jumps) */
    int64_t syncs;
    int64_t timeouts; /* syncs whose timeout left a worker out */
    run_delays delays;
    int64_t progress_done, progress_next;

    /* ---- failure-only (a jump shifts the steps) ---- */
    int64_t ckpt_step, ckpt_count; /* DP: committed checkpoint, arrivals */
    int64_t ckpt_cand;   /* DP: step all workers have computed for the next
                           checkpoint (0: none yet) */
    int64_t dp_synced;   /* DP: newest step whose all-reduces completed */
    int64_t resume_step; /* the step after the newest completed sync's
                            apply step */
    int64_t frontier;    /* the newest step a joined worker has finished */
    int outage;          /* DP: workers stalled for a recovery */
    int rollbacks;       /* DP: outages since the last checkpoint */
    int restarts;        /* DiLoCo, streaming: the group emptied and began
                           again since the last completed sync */
    int64_t failures;
    int64_t idle_failures; /* failures since a worker last ended a step */
    uint64_t recovery_bytes;

    /* ---- setup: scratch, the fast-forward's memory, the outcome ---- */
    int64_t *merge_step;    /* per worker: scratch of RUN_EV_SYNCED */
    uint8_t *member;        /* per worker: scratch of RUN_EV_SYNCED */
    int *flist;             /* scratch: P fragment ids */
    int ff_check;           /* worker 0 has just begun a period */
    sig_buf sig;            /* the state now */
    ff_mark mark[FF_MARKS]; /* the last period starts, newest at nmark-1 */
    int nmark;
    int64_t now;         /* instant of the event being processed */
    int check_done;      /* something happened that may end the run */
    int rc;              /* first runtime error (MSG_E*), 0 for none */
    int observer_failed; /* rc is the observer's, its message in err */
    int stopped;         /* the run cannot go on: see reason */
    char reason[RUN_REASON_MAX];
} world;

/* ---- helpers of every run file (static: each file has its copy) ------- */

/* Stops the run unfinished; the first reason given is kept. */
__attribute__((format(printf, 2, 3))) static inline void
stop(world *W, const char *fmt, ...) {
    if (W->stopped) return;
    W->stopped = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(W->reason, sizeof W->reason, fmt, ap);
    va_end(ap);
}

/* A runtime failure (out of memory): the run ends with an error. */
static inline void fail_rc(world *W, int rc) {
    if (rc < 0 && !W->rc) W->rc = rc;
}

/* a + b for the totals over workers (each below RUN_TIME_MAX_NS, their
 * sum may not be): saturates at INT64_MAX. */
static inline int64_t sum_ns(int64_t a, int64_t b) {
    return b > INT64_MAX - a ? INT64_MAX : a + b;
}

/* Tells the observer what happened; the error it returns (with its
 * message in W->err) ends the run. */
static inline void observe(world *W, run_event_kind kind, int wi, int f,
                           int64_t step, int src, int64_t now) {
    if (!W->hooks || !W->hooks->observe || W->rc) return;
    run_event e = {kind,      now,           wi, f, src,       step,
                   W->member, W->merge_step, 0,  0, &W->delays};
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

static inline void push(world *W, int64_t t, uint32_t cls, uint32_t kind,
                        int32_t a, uint32_t b, uint64_t c) {
    fail_rc(W, eq_push(&W->q, t, cls, kind, a, b, c));
}

/* now + d for an event that must happen (0 <= now, d < RUN_TIME_MAX_NS,
 * so the sum cannot overflow); stops the run when it is too late. */
static inline int64_t later(world *W, int64_t now, int64_t d,
                            const char *what) {
    int64_t t = now + d;
    if (t > RUN_TIME_MAX_NS) {
        char b[MSG_NUM_MAX];
        stop(W, "%s would end after 2^62 ns (%s s, about 146 years)", what,
             msg_number((double)RUN_TIME_MAX_NS * 1e-9, b));
    }
    return t;
}

/* A span of the timeline, when somebody listens. */
static inline void span(world *W, int wi, int track, const char *name,
                        int layer, int64_t step, int64_t t0, int64_t t1,
                        uint64_t bytes) {
    if (!W->hooks || !W->hooks->span) return;
    run_span s = {wi,   track, layer, layer >= 0 ? W->frag[layer] : -1,
                  name, step,  t0,    t1,
                  bytes};
    W->hooks->span(W->hooks->span_ctx, &s);
}

/* The span of a wait (down, stalled, rejoin_wait) that ends now. */
static inline void idle_span(world *W, int wi, const char *name, int64_t now) {
    worker *w = &W->w[wi];
    if (now > w->idle_start)
        span(W, wi, 0, name, -1, w->step, w->idle_start, now, 0);
}

/* ---- world.c: building and tearing down ------------------------------- */

/* Builds the world of a validated config (hooks may be NULL): 0, or a
 * MSG_E* code (MSG_EINPUT with its message in err; MSG_ENOMEM without).
 * world_free must follow either way.  A config the clock cannot run
 * leaves W->stopped set with the reason. */
int world_init(world *W, const scn_config *c, const run_hooks *h,
               expl_book *book, char *err, size_t errlen);

/* Frees what world_init allocated (also after it failed half-way). */
void world_free(world *W);

/* The scenario's network as a run wires it, the one place that does:
 * from W->cfg and W->M (and W->fast, W->member_mode), the latencies into
 * W->lat (M x M, allocated by the caller) and W->flow_cap, the links into
 * a new W->net and the collective stream into a new W->coll (its done
 * callback sync_coll_done, context W).  world_init's, and probe.c's for a
 * transfer on a fresh network.  Returns 0 or MSG_ENOMEM. */
int world_wire_net(world *W);

/* ---- worker.c: one worker's step (compute DAG) and its state ---------- */

/* Moves worker w to state `to`; a transition the table of worker.c does
 * not allow ends the run with an internal error. */
void worker_set_state(world *W, worker *w, int to);

/* Share of the step taken by ops 0..o-1, in [0, 1]. */
double worker_op_cum(const world *W, int o);

/* Draws the factor of the step worker w (index wi) is about to start and
 * notes what is taken after it (offload: starts the copies it needs). */
void worker_begin_step(world *W, worker *w, int wi, int64_t now);

/* Starts ops on worker wi (if W_READY) until it blocks, runs some, or is
 * done. */
void worker_advance(world *W, int wi, int64_t now);

/* The fragment whose sync worker w's parameter backward of layer l joins
 * (when the layer is taken after w's step). */
int worker_taken_fragment(const world *W, const worker *w, int l);

/* Wakes the workers on wait list `list` (a layer, or L + a fragment): a
 * layer's blocked forwards go on; a fragment's held arrivals (continue)
 * are made now. */
void worker_wake(world *W, int list, int64_t now);

/* member_mode: worker wi has the result of layer l's all-reduce; if it
 * waits for it, it goes on. */
void worker_got_result(world *W, int wi, int l, int64_t now);

/* EV_OP: worker wi's running ops end now. */
void worker_op_done(world *W, int wi, int64_t now);

/* EV_COPY: worker wi's copy-in (offload) ends; stale epochs are ignored. */
void worker_copy_done(world *W, int wi, uint32_t epoch, int64_t now);

/* Stops worker w's running op, if any (its time counts as compute). */
void worker_cancel_op(world *W, worker *w, int64_t now);

/* Takes a blocked worker off its wait list (its state stays). */
void worker_unwait(world *W, int wi);

/* EV_CKPT: worker wi's checkpoint (of timer epoch `epoch`) is written;
 * stale epochs are ignored. */
void worker_ckpt_done(world *W, int wi, uint32_t epoch, int64_t now);

/* ---- sync.c: reductions and fragment syncs ---------------------------- */

/* Worker wi finished the parameter backward of layer l after step t. */
void sync_arrive(world *W, int wi, int l, int64_t t, int64_t now);

/* A participant is gone: it leaves every reduction still collecting. */
void sync_drop(world *W, int wi, int64_t now);

/* member_mode: worker wi (failed) leaves the results it waits for. */
void sync_member_gone(world *W, int wi);

/* EV_TIMEOUT: fragment f's sync (of timeout epoch `epoch`) timed out. */
void sync_timeout(world *W, int f, uint32_t epoch, int64_t now);

/* Ends fragment f's sync in flight, if any, without a result (its timeout
 * void): a restart or a rollback abandons it. */
void sync_abandon(world *W, int f);

/* Every layer's reduction back to idle and the stream emptied (a restart
 * or a rollback: nobody holds the payloads). */
void sync_clear(world *W, int64_t now);

/* The collective's callbacks (coll_new, coll_set_member_done). */
void sync_coll_done(void *ctx, int64_t now, uint64_t tag);
void sync_member_done(void *ctx, int64_t now, uint64_t tag, int worker);

/* ---- recovery.c: failures, repairs, downloads, rejoins ---------------- */

/* Schedules worker wi's next failure, if any. */
void rec_next_failure(world *W, int wi);

/* EV_FAIL, EV_REPAIR: worker wi fails (repair: the instant it is
 * repaired) or is repaired. */
void rec_fail(world *W, int wi, int64_t now, int64_t repair);
void rec_repair(world *W, int wi, int64_t now);

/* EV_RESTART: worker wi's restart (of epoch `epoch`) is over: it begins
 * its download.  Stale epochs (a failure cut it) are ignored. */
void rec_restart_done(world *W, int wi, uint32_t epoch, int64_t now);

/* A joined worker has finished a step past the group's frontier: a
 * repaired worker waiting for it may rejoin. */
void rec_frontier_moved(world *W, int64_t now);

/* A sync has completed: the repaired workers waiting for one rejoin. */
void rec_sync_completed(world *W, int64_t now);

/* ---- run.c and explain.c: a run explained ----------------------------- */

/* run_simulate with a book (NULL: run_simulate itself): the same run,
 * the same result, every instant told to the book. */
int run__simulate(const scn_config *cfg, const run_hooks *hooks,
                  expl_book *book, run_result *out, char *err, size_t errlen);

/* Before the event at `now`: each worker's state since the last instant
 * is booked up to now. */
void expl__advance(world *W, int64_t now);

/* The stream starts layer l's all-reduce of `bytes` among its arrivals
 * (red[l].came); it ends (or is cleared) now; a pair's set-up wait of the
 * running one ran over [t0, t1). */
void expl__coll_start(world *W, int l, uint64_t bytes, int64_t now);
void expl__coll_end(world *W, int64_t now);
void expl__startup(world *W, int64_t t0, int64_t t1);

/* The run is over (W->end final): the parts into the book's result.
 * Returns 0, or MSG_ENOMEM. */
int expl__finish(world *W);

/* DP: the candidate checkpoint is committed once its all-reduces are
 * done; worker w has finished every op of `step`. */
void rec_dp_commit(world *W);
void rec_dp_checkpoint(world *W, worker *w, int64_t step);

/* ---- bwstep.c: bandwidth that changes over time ------------------------ */

/* Reads the world's bandwidth trace (a file, or the diurnal form) and
 * schedules its first step; nothing without one.  0, or MSG_EINPUT (a
 * trace file that went bad since the load, its message in err) or
 * MSG_ENOMEM. */
int bw_init(world *W, char *err, size_t errlen);

/* EV_BW: the net brought to now, the steps due at now change the links'
 * capacities (the flows re-share), the next step is scheduled. */
void bw_step(world *W, int64_t now);

/* ---- site.c: sites of many accelerators -------------------------------- */

/* The sites' fabrics (none when every site is of one): handed to the
 * stream; DiLoCo and streaming: the inner steps' buckets.  0, or
 * MSG_ENOMEM.  After world_wire_net. */
int site_init(world *W);
void site_free(world *W);

/* Does worker wi's forward of layer l wait for a bucket reduced inside
 * its site? */
int site_gated(const world *W, int wi, int l);

/* Does worker wi's parameter backward of layer l end an inner-step
 * bucket that its site reduces inside? */
int site_bucket_ends(const world *W, int wi, int l);

/* Worker wi's parameter backward of layer l ended: the bucket it ends (if
 * any) goes on its site's fabric. */
void site_grad_ready(world *W, int wi, int l, int64_t now);

/* Worker wi's arrival for layer l's sync after its current step: held
 * until the layer's bucket is reduced inside its site (1), or to be made
 * now (0: no such bucket). */
int site_hold(world *W, int wi, int l);

/* EV_SITE: worker wi's bucket led by layer l is reduced (stale epochs are
 * ignored): the arrivals held for its layers are made; a forward waiting
 * for it goes on. */
void site_reduced(world *W, int wi, uint32_t epoch, int l, int64_t now);

/* Worker wi failed: what its fabric had pending is dropped. */
void site_reset(world *W, int wi, int64_t now);

/* The layers of fragment f (frag NULL: every layer) into buckets of at
 * least cap bytes (0: one per layer), as world.c's buckets: lead[l] the
 * bucket's lowest layer, bytes[lead] the bucket's bytes (from the
 * layers' own), *count (if not NULL) increased by the buckets made. */
void world_buckets(int L, const int *frag, int f, double cap, uint64_t *bytes,
                   int *lead, int *count);
/* ---- member.c: members that come and go ------------------------------- */

/* Reads the world's membership trace (none: nothing), makes the workers
 * whose first event is a join absent from time 0, and schedules the first
 * event.  0, or MSG_EINPUT (a trace that went bad since the load, its
 * message in err) or MSG_ENOMEM. */
int mb_init(world *W, char *err, size_t errlen);

/* EV_MEMBER: the events due at now, in file order (rec_leave,
 * rec_join), and the next one scheduled. */
void mb_event(world *W, int64_t now);

/* The joined workers. */
int mb_joined(const world *W);

/* 1 when the trace's events still to come join worker wi. */
int mb_joins_later(const world *W, int wi);

/* recovery.c: worker wi leaves (as a failure, without the rollback of
 * DP) or joins (as a repair: restart, download, rejoin). */
void rec_leave(world *W, int wi, int64_t now);
void rec_join(world *W, int wi, int64_t now);

/* sync.c: worker wi, rejoining at `step` under a quorum, takes part in
 * every reduction still collecting that was taken after a step >= step. */
void sync_admit(world *W, int wi, int64_t step);

/* sync.c: 1 when a reduction has every member's arrival but fewer
 * members than the quorum (it waits for joins or repairs). */
int sync_held(const world *W);

/* ---- fastfwd.c: the exact fast-forward -------------------------------- */

/* Worker 0 has begun a period at `now`: skips the periods that repeat. */
void ff_forward(world *W, int64_t now);

#endif
