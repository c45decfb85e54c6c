/*
 * fastfwd.c -- the engine's exact fast-forward: the world's signature at
 * the start of each period, the last few period starts remembered, and
 * the jump over the periods that repeat one of them.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/engine/world.h"

/* Two exact shortcuts, on unless the config asks for `full`, a timeline or
 * an observer listens, or failures can happen (their draws and instants
 * are not periodic):
 *   runs        ops with no side effect between them run as one event
 *               (worker.c's run_end): a step with no gate and no take is one;
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
 * and the counters the jump adds up.  Checkpoints (faults.checkpoint_s)
 * follow every step k * N: the signature then holds the phase of worker
 * 0's step in N and each worker's newest checkpoint, so a match is a
 * whole number of intervals too (none, and no jump, when N is longer than
 * the FF_MARKS periods remembered).  Under the same conditions (but with
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
        if (e->kind == EV_OP || e->kind == EV_CKPT)
            rb = (int32_t)(e->b - W->w[e->a].epoch);
        if (e->kind == EV_TIMEOUT) rb = (int32_t)(e->b - W->fs[e->a].epoch);
        if (e->kind == EV_SITE) rb = (int32_t)(e->b - W->fab_epoch[e->a]);
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
        int64_t v[8] = {w->state,
                        w->step - s0,
                        w->op,
                        w->state == W_BUSY ? w->op_start - now : 0,
                        w->state == W_BLOCKED ? w->wait_on : -1,
                        w->joined,
                        w->run_last - w->op,
                        W->wait_next[i]};
        sig_put(b, v, sizeof v);
        sig_put(b, &w->factor, sizeof w->factor);
        sig_put(b, w->pend_layers, (size_t)P * sizeof *w->pend_layers);
        if (W->inner) { /* its fabric: free from, its buckets under way */
            int64_t f = W->fab_free[i] > now ? W->fab_free[i] - now : 0;
            sig_put(b, &f, sizeof f);
            sig_put(b, W->intra_pend + (size_t)i * L, (size_t)L);
            for (int l = 0; l < L; l++) {
                int64_t h = W->held[(size_t)i * L + l];
                sig_i64(b, h ? h - s0 : INT64_MIN);
            }
        }
        if (W->ckpt_every) { /* checkpoints: the newest one written */
            int64_t c[2] = {w->ckpt_done - s0,
                            w->state == W_CKPT ? w->ckpt_start - now : 0};
            sig_put(b, c, sizeof c);
        }
    }
    /* which steps the checkpoints follow: only periods that start at the
     * same phase of the checkpoint interval match */
    if (W->ckpt_every) sig_i64(b, s0 % W->ckpt_every);
    for (int l = 0; l < L; l++) {
        const reduction *r = &W->red[l];
        int64_t v[6] = {r->state,
                        r->state == RED_IDLE ? 0 : r->take - s0,
                        r->need,
                        r->arrived,
                        W->gate[l] == NO_GATE ? INT64_MIN : W->gate[l] - s0,
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
        int64_t v[3] = {f->take < 0 ? INT64_MIN : f->take - s0, f->done,
                        f->frozen};
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
        m->ckpt[i] = W->w[i].ckpt_ns;
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
        w->ckpt_ns += n * (w->ckpt_ns - m->ckpt[i]);
        for (int p = 0; p < W->P; p++) { /* baselines a failure would read */
            w->contrib[p] += db, w->pend[p] += db;
            w->nom_contrib[p] += dn, w->nom_pend[p] += dn;
        }
        w->ckpt_busy += db, w->ckpt_cand_busy += db;
        w->ckpt_nom += dn, w->ckpt_cand_nom += dn;
        if (w->state == W_BUSY) w->op_start += D;
        if (w->state == W_CKPT) w->ckpt_start += D;
        if (W->inner) W->fab_free[i] += D;
        for (int l = 0; W->inner && l < W->L; l++)
            if (W->held[(size_t)i * W->L + l])
                W->held[(size_t)i * W->L + l] += K;
        if (W->ckpt_every) w->ckpt_done += K;
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
        net_link_bytes_add(W->net, k,
                           (uint64_t)n *
                               (net_link_bytes(W->net, k) - m->bytes[k]));
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

/* Compares the world with the last period starts (a state may repeat
 * only every few periods: flow ids alternate, say) and skips what
 * repeats. */
void ff_forward(world *W, int64_t now) {
    if (W->bw_left) { /* a capacity step to come: no period repeats */
        W->nmark = 0;
        return;
    }
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
