/*
 * run.c -- the event loop of one run, and its result.
 *
 * The map of the engine's run files (each includes world.h, the world's
 * state, which nothing outside them includes):
 *   run.c       run_simulate: builds the world, pops the events in order
 *               and hands each to its part, fills the run_result.
 *   world.c     world_init, one part at a time; world_free.   (world_)
 *   worker.c    one worker's step: its compute DAG of ops, the wait
 *               lists, the worker's state machine.             (worker_)
 *   sync.c      the layers' reductions and the fragments' syncs: arrivals,
 *               the communication stream, completion, timeouts. (sync_)
 *   recovery.c  failures, repairs, downloads, rejoins, DP checkpoints and
 *               rollbacks, restarts of an emptied group.        (rec_)
 *   fastfwd.c   the exact fast-forward: signatures and jumps.   (ff_)
 *   payload.c   the bytes of a sync's payload (payload.h, also used by
 *               memory.c).                                      (payload_)
 *   explain.c   expl_run: the same run with a book of where every
 *               worker's time goes (explain.h).                 (expl_)
 * Each file's functions for the others carry its prefix (in brackets);
 * the static helpers each has are unprefixed, as elsewhere in the tree.
 *
 * The model.
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
 * computed the step and its all-reduces have completed: rec_dp_commit) is
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
 * Life of a step (worker.c; a worker's state changes only through
 * worker_set_state, whose table is in worker.c):
 *   worker_begin_step  the step's factor (stragglers), the fragment taken
 *                      after it (offload: the copy-in starts).
 *   worker_advance     READY: the next op starts (BUSY, one EV_OP for a
 *                      run of ops: run_end), or the forward is gated
 *                      (block: BLOCKED on the layer's wait list), or past
 *                      the last step (DONE).
 *   worker_op_done     EV_OP: busy and nominal time added, READY again;
 *                      after the parameter backward of a taken layer the
 *                      worker arrives (arrive_next -> sync_arrive; or it
 *                      waits on the fragment's list for the previous sync,
 *                      or for its copy-in: copy_wait), then op_next: the
 *                      next op, or the next step (rec_dp_checkpoint,
 *                      worker_begin_step, rec_frontier_moved), and
 *                      worker_advance again.
 *   worker_wake        a reduction or sync it waited for is over: READY,
 *                      and worker_advance (or its held arrival).
 *
 * Life of a reduction (sync.c; one per layer at a time, in W->red[l],
 * changed only through reduction_set_state, whose table is in sync.c):
 *   RED_IDLE        nothing outstanding; the forward of layer l is free.
 *   RED_COLLECTING  worker_op_done -> arrive_next -> sync_arrive: the
 *                   first participant to finish the parameter backward
 *                   of l after a step the schedule takes l's fragment
 *                   opens it (fsync_open for the fragment's sync, then
 *                   reduction_open: members = the joined workers; gate[l]
 *                   = take + 1 + tau).  Each member's arrival is
 *                   recorded; a failed member is dropped (sync_drop ->
 *                   reduction_leave); one with no members (its sync timed
 *                   out before they came: sync_timeout) is over at once
 *                   (reduction_void).
 *   RED_READY       reduction_submit: every member has arrived; the layer
 *                   waits in W->ready for the communication stream.
 *   RED_SENDING     stream_kick hands it to the collective (coll_submit);
 *                   the flows run on the net (net_advance -> the
 *                   stream's own flow callback, collective.h) until the
 *                   collective ends.
 *   back to idle    sync_coll_done -> reduction_done -> reduction_over
 *                   (member completion: sync_member_done -> member_got ->
 *                   reduction_over at the first member's result):
 *                   spans, the result charged to the joined workers that
 *                   did not take part (result_to_others), gate cleared;
 *                   layer_closed: fsync_layer_done (the sync count and
 *                   the observer, when the fragment's last layer is
 *                   over), blocked workers woken (worker_wake), repaired
 *                   workers rejoined when a whole fragment has synced
 *                   (rec_sync_completed).
 *
 * Life of a failure (recovery.c): EV_FAIL -> rec_fail (DP: dp_outage
 * rolls everybody back; else leave_group) -> EV_REPAIR -> rec_repair ->
 * start_download -> on_download_flow -> on_download_done (DP: dp_resume; else
 * rejoin_due -> rejoin, or group_restart when nobody is left).
 *
 * Goodput.  Besides compute-busy time, each worker counts its useful
 * compute: every op it completes adds the op's duration at speed 1 (so a
 * slow or straggling step is worth one nominal step), and whatever the
 * failure rules above declare lost is taken off again at the same
 * nominal rate.
 *
 * Fast-forward (unless cfg->full; see fastfwd.c):
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

#include <stdio.h>
#include <string.h>

#include "sim/engine/world.h"

/* DP: this many failures in a row without a new checkpoint and the run
 * stops unfinished: it would roll back forever. */
#define MAX_ROLLBACKS 100

/* ---- the result --------------------------------------------------------- */

/* Done: nobody joined is still computing and no reduction is pending. */
static int finished(const world *W) {
    if (W->outage || coll_pending(W->coll) || W->site_pending) return 0;
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
    int down = 0, absent = 0;
    for (int i = 0; i < W->M; i++) {
        int st = W->w[i].state;
        absent += W->w[i].absent;
        down += st == W_DOWN || st == W_RECOVERING || st == W_REJOINING ||
                st == W_RESTARTING;
    }
    if (net_active_flows(W->net) > 0)
        stop(W,
             "%d transfers can never complete (a link or TCP-window rate "
             "too low to move their bytes before 2^62 ns)",
             net_active_flows(W->net));
    else if (absent == W->M) stop(W, "every worker has left for good");
    else if (down == W->M) stop(W, "every worker is down for good");
    else if (sync_held(W))
        stop(W,
             "a sync waits for a quorum of %d members and no worker is left "
             "to join (method.quorum)",
             W->quorum);
    else stop(W, "nothing left to happen before every step was done");
}

/* Spans of the waits still open when the run ends. */
static void close_spans(world *W) {
    for (int i = 0; i < W->M; i++) {
        worker *w = &W->w[i];
        if (w->state == W_DOWN && !w->absent) idle_span(W, i, "down", W->end);
        if (w->absent && W->end > w->absent_start)
            span(W, i, 0, "absent", -1, w->step, w->absent_start, W->end, 0);
        if (w->state == W_STALLED) idle_span(W, i, "stalled", W->end);
        if (w->state == W_REJOINING) idle_span(W, i, "rejoin_wait", W->end);
        if (w->state == W_RESTARTING && W->end > w->idle_start) {
            w->restart_ns += W->end - w->idle_start;
            idle_span(W, i, "restart", W->end);
        }
        if (w->state == W_CKPT && W->end > w->ckpt_start) {
            w->ckpt_ns += W->end - w->ckpt_start;
            span(W, i, 0, "checkpoint", -1, w->step - 1, w->ckpt_start, W->end,
                 0);
        }
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
    out->joins = W->joins;
    out->leaves = W->leaves;
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
        r->checkpoint_ns = w->ckpt_ns;
        r->restart_ns = w->restart_ns;
        r->member_ns =
            W->end - w->absent_ns -
            (w->absent && W->end > w->absent_start ? W->end - w->absent_start
                                                   : 0);
        r->joins = w->joins;
        r->leaves = w->leaves;
        out->member_ns = sum_ns(out->member_ns, r->member_ns);
        out->checkpoint_ns = sum_ns(out->checkpoint_ns, w->ckpt_ns);
        out->restart_ns = sum_ns(out->restart_ns, w->restart_ns);
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
    out->compute_utilization =
        W->end > 0 ? (double)out->compute_ns / ((double)W->end * W->M) : 0;
    out->goodput =
        W->end > 0 ? (double)out->useful_ns / ((double)W->end * W->M) : 0;
    /* Rates in the scenario's own Gbit, like its bandwidth keys. */
    double gbit = scn_gbit_bits(W->cfg->gbit);
    out->peak_link_gbps = peak * 8 / gbit;
    out->avg_link_gbps =
        wall > 0 ? (double)out->bytes_sent_total * 8 / gbit / wall / W->M : 0;
}

/* ---- the loop ------------------------------------------------------------ */

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

/* The run is over (stopped, finished, or an error in W->rc): the result,
 * or the error's code and message; the world is freed. */
static int conclude(world *W, int done, int64_t last, run_result *out,
                    char *err, size_t errlen) {
    int rc = 0;
    if (W->rc) {
        rc = W->observer_failed
                 ? W->rc
                 : msg_set(err, errlen, W->rc, "%s",
                           W->rc == MSG_ENOMEM
                               ? "out of memory"
                               : "internal error in the event loop");
    } else {
        /* the wall of an unfinished run: until it stopped */
        if (!done && last > W->end) W->end = last;
        close_spans(W);
        coll_flush_bytes(W->coll);
        fill_result(W, done, W->events, out);
        if (W->book && expl__finish(W))
            rc = msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    }
    world_free(W);
    return rc;
}

int run_simulate(const scn_config *cfg, const run_hooks *hooks, run_result *out,
                 char *err, size_t errlen) {
    return run__simulate(cfg, hooks, NULL, out, err, errlen);
}

int run__simulate(const scn_config *cfg, const run_hooks *hooks,
                  expl_book *book, run_result *out, char *err, size_t errlen) {
    world W;
    int rc = world_init(&W, cfg, hooks, book, err, errlen);
    W.err = err;
    W.errlen = errlen;
    if (rc == MSG_ENOMEM) msg_set(err, errlen, rc, "out of memory");
    if (rc) {
        world_free(&W);
        return rc;
    }
    for (int i = 0; i < W.M && !W.stopped; i++) worker_advance(&W, i, 0);

    int64_t last = 0; /* instant of the last event processed */
    int done = 0;
    eq_event ev;
    while (!W.rc && !W.stopped) {
        if (W.rollbacks >= MAX_ROLLBACKS) {
            stop(&W,
                 "DP rolled back %d times without a new checkpoint "
                 "(failures come faster than checkpoints)",
                 W.rollbacks);
            break;
        }
        if (!eq_pop(&W.q, &ev)) {
            stalled_reason(&W);
            break;
        }
        int64_t now = ev.time;
        if (W.book) expl__advance(&W, now);
        W.now = now;
        worker *w =
            ev.kind == EV_NET || ev.kind == EV_BW || ev.kind == EV_MEMBER
                ? NULL
                : &W.w[ev.a];
        switch (ev.kind) {
        case EV_NET:
            if (ev.c != W.net_version) continue; /* superseded */
            W.net_at = INT64_MAX;
            net_advance(W.net, now);
            break;
        case EV_OP:
            if (ev.b != w->epoch || w->state != W_BUSY) continue;
            worker_op_done(&W, ev.a, now);
            break;
        case EV_FAIL: rec_fail(&W, ev.a, now, (int64_t)ev.c); break;
        case EV_REPAIR: rec_repair(&W, ev.a, now); break;
        case EV_TIMEOUT: sync_timeout(&W, ev.a, ev.b, now); break;
        case EV_COPY: worker_copy_done(&W, ev.a, ev.b, now); break;
        case EV_BW: bw_step(&W, now); break;
        case EV_CKPT: worker_ckpt_done(&W, ev.a, ev.b, now); break;
        case EV_RESTART: rec_restart_done(&W, ev.a, ev.b, now); break;
        case EV_SITE: site_reduced(&W, ev.a, ev.b, (int)ev.c, now); break;
        case EV_MEMBER: mb_event(&W, now); break;
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
            ff_forward(&W, now);
        }
    }
    return conclude(&W, done, last, out, err, errlen);
}

void run_energy_of(const scn_config *cfg, const run_result *r, run_energy *e) {
    const double J_PER_KWH = 3.6e6;
    double wall = (double)r->wall_ns / 1e9, busy = 0, idle = 0;
    for (int i = 0; cfg->has_power && i < r->workers; i++) {
        double b = (double)r->per_worker[i].compute_ns / 1e9;
        double a = scn_accelerators(cfg, i);
        busy += b * a * cfg->power_busy_w;
        idle += (wall - b) * a * cfg->power_idle_w;
    }
    e->compute_busy = busy / J_PER_KWH;
    e->compute_idle = idle / J_PER_KWH;
    e->network = cfg->has_joules_per_gb ? (double)r->bytes_sent_total / 1e9 *
                                              cfg->joules_per_gb / J_PER_KWH
                                        : 0;
    e->total = e->compute_busy + e->compute_idle + e->network;
}
