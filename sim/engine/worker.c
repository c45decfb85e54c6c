/*
 * worker.c -- one worker's step: the compute DAG of its 3L ops (forward
 * of layers 0..L-1, then the two halves of each layer's backward), the
 * factor of each step, the runs of ops that go as one event, the wait
 * lists of the blocked workers, and the worker's state machine: every
 * change of a worker's state goes through worker_set_state and its table.
 */
#include <math.h>

#include "sim/engine/world.h"

/* ---- the worker's state machine --------------------------------------- */

/* The transitions a worker's state may take (from -> to, on what):
 *
 *   READY      -> BUSY        worker_advance: its next ops start
 *   READY      -> BLOCKED     a gated forward (block, on the layer's
 *                             list); an arrival held for the fragment's
 *                             previous sync (list L + f); a copy-in not
 *                             done yet (copy_wait, offload)
 *   READY      -> DONE        worker_advance: past the last step
 *   READY      -> CKPT        worker_advance: the step before is k * N
 *                             (checkpoint_start)
 *   CKPT       -> READY       worker_ckpt_done: the checkpoint is written
 *   BUSY       -> READY       worker_op_done: its ops ended
 *   BLOCKED    -> READY       worker_wake (the reduction or sync it
 *                             waited for is over), worker_got_result (its
 *                             own result came: member completion),
 *                             worker_copy_done (the copy-in ended)
 *   READY, BUSY, BLOCKED, DONE, CKPT, REJOINING
 *              -> STALLED     DP: a failure rolls everybody back
 *                             (dp_outage; REJOINING: a joiner, with a
 *                             membership trace)
 *   STALLED    -> READY       DP: nobody is down or downloading any more
 *                             (dp_resume)
 *   READY, BUSY, BLOCKED, STALLED, RECOVERING, REJOINING, CKPT,
 *   RESTARTING -> DOWN        a failure (rec_fail; DONE: no failure)
 *   DOWN       -> RECOVERING  repaired: it downloads the parameters
 *                             (start_download)
 *   DOWN       -> RESTARTING  repaired, with a restart time (rec_repair)
 *   RESTARTING -> RECOVERING  restarted: it downloads (rec_restart_done)
 *   RECOVERING -> STALLED     DP: the download ended (on_download_done)
 *   RECOVERING -> REJOINING   the download ended: it waits for the group
 *   REJOINING  -> READY       it rejoins the group (rejoin)
 */
#define TO(s) (1u << (s))
static const unsigned worker_moves[W_NSTATES] = {
    [W_READY] = TO(W_BUSY) | TO(W_BLOCKED) | TO(W_DONE) | TO(W_STALLED) |
                TO(W_DOWN) | TO(W_CKPT),
    [W_BUSY] = TO(W_READY) | TO(W_STALLED) | TO(W_DOWN),
    [W_BLOCKED] = TO(W_READY) | TO(W_STALLED) | TO(W_DOWN),
    [W_STALLED] = TO(W_READY) | TO(W_DOWN),
    [W_DOWN] = TO(W_RECOVERING) | TO(W_RESTARTING),
    [W_RECOVERING] = TO(W_STALLED) | TO(W_REJOINING) | TO(W_DOWN),
    [W_REJOINING] = TO(W_READY) | TO(W_DOWN) | TO(W_STALLED),
    [W_DONE] = TO(W_STALLED),
    [W_CKPT] = TO(W_READY) | TO(W_STALLED) | TO(W_DOWN),
    [W_RESTARTING] = TO(W_RECOVERING) | TO(W_DOWN),
};
#undef TO

void worker_set_state(world *W, worker *w, int to) {
    if (!(worker_moves[w->state] >> to & 1u)) fail_rc(W, MSG_EFAIL);
    w->state = to;
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
double worker_op_cum(const world *W, int o) {
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
        w->cum[o] = llround(step * worker_op_cum(W, o + 1));
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

/* Draws the factor of the step a worker is about to start, notes the
 * fragment taken after it, and (offload) sends the state it has merged
 * back to the host and starts copying in what the step's end takes. */
void worker_begin_step(world *W, worker *w, int wi, int64_t now) {
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
int worker_taken_fragment(const world *W, const worker *w, int l) {
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

/* Worker wi goes on wait list `list` (a layer, or L + a fragment). */

/* ---- wait lists ------------------------------------------------------- */

/* Worker wi goes on wait list `list` (a layer, or L + a fragment). */
static void block(world *W, int wi, int list) {
    worker_set_state(W, &W->w[wi], W_BLOCKED);
    W->w[wi].wait_on = list;
    W->wait_next[wi] = W->waiters[list];
    W->waiters[list] = wi;
}

void worker_unwait(world *W, int wi) {
    worker *w = &W->w[wi];
    if (w->state != W_BLOCKED || w->wait_on < 0) return; /* on no list */
    int *p = &W->waiters[w->wait_on];
    while (*p >= 0 && *p != wi) p = &W->wait_next[*p];
    if (*p == wi) *p = W->wait_next[wi];
}

static void op_next(world *W, int wi, int64_t now);

/* Offload: worker wi, about to arrive for layer l, waits when the outer
 * state of l's fragment is not on its accelerator yet (the pseudo-
 * gradient needs it); its EV_COPY comes when the copy ends.  Returns 1
 * when it waits. */
static int copy_wait(world *W, int wi, int l, int64_t now) {
    if (!W->off) return 0;
    worker *w = &W->w[wi];
    int64_t t = off_ready_at(W->off, wi, worker_taken_fragment(W, w, l));
    if (t <= now) return 0;
    worker_set_state(W, w, W_BLOCKED);
    w->wait_on = WAIT_COPY;
    w->epoch++;
    push(W, t, CLS_COMPUTE + (uint32_t)wi, EV_COPY, wi, w->epoch, 0);
    return 1;
}

/* Worker wi arrives for layer l after its current step (once its copy,
 * if any, is in), and goes on with its next op. */
static void arrive_next(world *W, int wi, int l, int64_t now) {
    if (copy_wait(W, wi, l, now)) return;
    if (!site_hold(W, wi, l)) sync_arrive(W, wi, l, W->w[wi].step, now);
    op_next(W, wi, now);
}

/* Worker wi, ready again, makes the arrival it held (for the layer of its
 * current op: a parameter backward) and goes on. */
static void arrive_held(world *W, int wi, int64_t now) {
    int layer, kind;
    op_of(W, W->w[wi].op, &layer, &kind);
    arrive_next(W, wi, layer, now);
}

void worker_wake(world *W, int list, int64_t now) {
    int wi = W->waiters[list];
    W->waiters[list] = -1;
    while (wi >= 0) {
        int next = W->wait_next[wi];
        worker *w = &W->w[wi];
        if (w->state == W_BLOCKED) {
            worker_set_state(W, w, W_READY);
            if (list < W->L) worker_advance(W, wi, now);
            else arrive_held(W, wi, now);
        }
        wi = next;
    }
}

void worker_got_result(world *W, int wi, int l, int64_t now) {
    worker *w = &W->w[wi];
    if (w->state == W_BLOCKED && w->wait_on == l) {
        worker_unwait(W, wi);
        worker_set_state(W, w, W_READY);
        worker_advance(W, wi, now);
    }
}

/* ---- running ops ------------------------------------------------------ */

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
        if (o + 1 == 3 * W->L ||
            (kind == OP_BPAR && (takes_layer(W, layer, taken) ||
                                 site_bucket_ends(W, (int)(w - W->w), layer))))
            return o;
        op_of(W, o + 1, &layer, &kind);
        if (kind == OP_FWD && site_gated(W, (int)(w - W->w), layer)) return o;
        if (W->blocking && kind == OP_FWD && gated(W, w, layer)) return o;
    }
}

/* faults.checkpoint_s: worker wi, about to begin a step after step
 * k * N (its first forward free: the update of step k * N is in), writes
 * its checkpoint first, once per step (ckpt_done: not again after a
 * rollback to it, nor after a rejoin).  Returns 1 when it began one: its
 * compute stops for ckpt_ns, until its EV_CKPT. */
static int checkpoint_start(world *W, int wi, int64_t now) {
    worker *w = &W->w[wi];
    int64_t s = w->step - 1;
    if (!W->ckpt_every || w->op || s <= w->ckpt_done || s % W->ckpt_every)
        return 0;
    w->ckpt_done = s;
    int64_t t = later(W, now, W->ckpt_ns, "a checkpoint");
    if (W->stopped) return 1;
    worker_set_state(W, w, W_CKPT);
    w->ckpt_start = now;
    w->epoch++;
    push(W, t, CLS_COMPUTE + (uint32_t)wi, EV_CKPT, wi, w->epoch, 0);
    return 1;
}

void worker_ckpt_done(world *W, int wi, uint32_t epoch, int64_t now) {
    worker *w = &W->w[wi];
    if (w->state != W_CKPT || w->epoch != epoch) return;
    w->ckpt_ns += now - w->ckpt_start;
    span(W, wi, 0, "checkpoint", -1, w->step - 1, w->ckpt_start, now, 0);
    worker_set_state(W, w, W_READY);
    worker_advance(W, wi, now);
}

void worker_advance(world *W, int wi, int64_t now) {
    worker *w = &W->w[wi];
    if (w->state != W_READY) return;
    int layer, kind;
    if (w->step <= W->T) { /* a gated first forward waits before a
                              checkpoint: the step's update comes first */
        op_of(W, w->op, &layer, &kind);
        if (kind == OP_FWD && site_gated(W, wi, layer)) { /* inner DP */
            worker_set_state(W, w, W_BLOCKED);
            w->wait_on = WAIT_SITE;
            return;
        }
        if (W->blocking && kind == OP_FWD && gated(W, w, layer)) {
            block(W, wi, W->lead[layer]);
            return;
        }
    }
    if (checkpoint_start(W, wi, now)) return;
    if (w->step > W->T) {
        worker_set_state(W, w, W_DONE);
        W->check_done = 1;
        if (now > W->end) W->end = now;
        return;
    }
    worker_set_state(W, w, W_BUSY);
    w->op_start = now;
    w->run_last = run_end(W, w);
    int64_t t =
        later(W, now, ops_ns(w->cum, w->op, w->run_last), "a compute op");
    if (!W->stopped)
        push(W, t, CLS_COMPUTE + (uint32_t)wi, EV_OP, wi, w->epoch, 0);
}

static const char *const op_names[] = {"forward", "backward_act",
                                       "backward_param"};

void worker_op_done(world *W, int wi, int64_t now) {
    worker *w = &W->w[wi];
    int first = w->op;
    W->events += (uint64_t)(w->run_last - first); /* a run: as its ops */
    w->op = w->run_last;
    int layer, kind;
    op_of(W, w->op, &layer, &kind);
    w->busy += now - w->op_start;
    w->nom += ops_ns(W->nom_cum, first, w->op);
    span(W, wi, 0, op_names[kind], layer, w->step, w->op_start, now, 0);
    worker_set_state(W, w, W_READY);
    if (kind == OP_FWD && layer == W->L - 1)
        observe(W, RUN_EV_STEP, wi, -1, w->step, -1, now);
    if (kind == OP_BPAR) site_grad_ready(W, wi, layer, now);
    if (kind == OP_BPAR && w->joined && takes_layer(W, layer, w->taken)) {
        int f = worker_taken_fragment(W, w, layer);
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

/* Offload: the arrival it held is made. */
void worker_copy_done(world *W, int wi, uint32_t epoch, int64_t now) {
    worker *w = &W->w[wi];
    if (w->state != W_BLOCKED || w->wait_on != WAIT_COPY || w->epoch != epoch)
        return;
    worker_set_state(W, w, W_READY);
    arrive_held(W, wi, now);
}

/* Worker wi is done with its current op: on to the next, or the next
 * step. */
static void op_next(world *W, int wi, int64_t now) {
    worker *w = &W->w[wi];
    if (++w->op == 3 * W->L) {
        w->op = 0;
        observe(W, RUN_EV_STEP_END, wi, -1, w->step, -1, now);
        if (wi == 0 && W->jumps && w->step % W->period == 0) W->ff_check = 1;
        if (W->sch.method == SCHED_DP) rec_dp_checkpoint(W, w, w->step);
        int ahead = w->joined && w->step > W->frontier;
        if (ahead) W->frontier = w->step;
        w->step++;
        W->idle_failures = 0;
        report_progress(W, w);
        if (w->step <= W->T) worker_begin_step(W, w, wi, now);
        if (ahead) rec_frontier_moved(W, now);
    }
    worker_advance(W, wi, now);
}

/* Stops the running op of a worker (its time counts as compute, lost). */
static const char *const cut_names[] = {"forward_interrupted",
                                        "backward_act_interrupted",
                                        "backward_param_interrupted"};

void worker_cancel_op(world *W, worker *w, int64_t now) {
    if (w->state == W_CKPT) { /* a checkpoint cut short: its time is spent */
        w->ckpt_ns += now - w->ckpt_start;
        w->epoch++;
        span(W, (int)(w - W->w), 0, "checkpoint", -1, w->step - 1,
             w->ckpt_start, now, 0);
    }
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
