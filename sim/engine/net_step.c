/*
 * net_step.c -- moving bytes through time: the ticks the clock stops at,
 * lazy segments and their proofs, completion instants and the net's next
 * instant (net_int.h has the state).
 *
 * Stepping.  The clock stops at ticks: each instant step_to() brings it to
 * (an instant processed, or an add or cancel later than the clock), kept
 * in `ticks`.  The results are defined by stepping every active flow at
 * every tick (remaining -= rate dt / 1e9, never below zero), recomputing
 * every completion instant at every share() from the stepped bytes
 * (t_done = now + ceil(g), g = x - (1e-6 + 1e-13 x), x = remaining 1e9 /
 * rate) and finishing, at each instant t, the flows with t_done <= t or
 * remaining <= tolerance.  Rounding makes a flow's bytes depend on the
 * ticks it went through, so it cannot simply be stepped once from where
 * its rate last changed; what is done instead gives the same bits:
 *  - A flow begins a segment at a share where its rate is new (R, r and
 *    t_done = now + K as above); every eager flow begins one at every
 *    later share, as the definition recomputes it.  From the second
 *    (flows that end at their next instant are not worth it),
 *    proven_ticks() checks
 *    that for the next k ticks (k from its margins, at least 64) the
 *    definition would recompute t_done = now + K at every share before
 *    that instant and never find the flow done by tolerance.  Such a flow
 *    is lazy: neither stepped nor recomputed.  When something needs its
 *    bytes (a byte count, a signature, a rate change, a cancel), R is
 *    replayed through the ticks since with step_to()'s own expression:
 *    the bits stepping would have.  After k ticks (net.ends: a heap by the
 *    tick each proof ends) or when the clock passes t_done unprocessed
 *    (an add or cancel later than an instant not processed), it is
 *    replayed and stepped at every tick again (eager) until a share
 *    proves a new segment.  Eager flows follow the definition as written.
 *  - The proof (u = 2^-53, X = R 1e9 / r exactly): after k ticks over
 *    n <= K - 1 ns the stepped bytes are within (k + 3) u R of
 *    R - r n / 1e9 (each step rounds r dt, / 1e9 and the subtraction, and
 *    never clamps while the bytes stay above zero), so the recomputed x is
 *    within (k + 5.1) u X of X - n and the recomputed g, plus n, within
 *    (k + 9.3) u X of g + n 1e-13 (g computed from y is within 1.01 u y +
 *    3e-22 of y - 1e-6 - 1e-13 y, and x within 2.1 u X of X).  The ceiling is
 *    therefore K - n, the same t_done, while lo = g - (K - 1) and
 *    hi = K - g - K 1e-13 both exceed (k + 9.3) u X; the bytes stay above
 *    tolerance while lo also exceeds that plus the tolerance in ns
 *    (tol 1e9 / r).  proven_ticks() takes k from the smaller room at
 *    1.01 u x per tick less 16 ticks, and wants K < 2^52 so that every
 *    difference of ticks is exact in a double.  A flow of more than about
 *    a second is never lazy: its tolerance, 1e-9 of its size, spans more
 *    than a ns.
 *  - Ticks are dropped once no lazy flow needs them; past TICKS_MAX kept,
 *    every lazy flow's replay restarts from the last tick (its proof still
 *    counts from where it began).
 * A link's byte count is what its finished and cancelled flows moved plus
 * the whole bytes its active flows have moved (from their replayed
 * bytes), which is what counting at every tick gives.
 */
#include "sim/engine/net_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"

/* One step of a flow's bytes: what is left of `remaining` after dt_ns
 * (whole ns, as a double) at `rate`.  Never below zero (a completion
 * instant is rounded up, so a flow may reach zero a fraction of a ns
 * early).  net__step_to() and net__remaining_now() both step with it: a lazy flow's
 * replayed bytes are the bits stepping at every tick gives. */
static double step_bytes(double remaining, double rate, double dt_ns) {
    double mv = isinf(rate) ? remaining : rate * dt_ns / 1e9;
    if (mv > remaining) mv = remaining;
    return remaining - mv;
}

static int64_t tick_at(const net *n, int64_t k) {
    return n->ticks[k - n->tick0];
}

/* f's remaining bytes at n->now: a lazy flow's segment start stepped
 * through every tick since, exactly as stepping at each would have. */
double net__remaining_now(const net *n, const flow *f) {
    double r = f->remaining;
    if (!f->lazy || f->seg_rate == 0) return r;
    for (int64_t k = f->k0 + 1; k <= tick_now(n); k++)
        r = step_bytes(r, f->seg_rate,
                       (double)(tick_at(n, k) - tick_at(n, k - 1)));
    return r;
}

/* ... and from here it is stepped every tick. */
static void make_eager(net *n, int id) {
    make_current(n, &n->flows[id]);
    eager_add(n, id);
}

/* Makes every active lazy flow for which pred(n, f) holds eager. */
void net__make_eager_if(net *n, int (*pred)(const net *, const flow *)) {
    for (int i = 0; i < n->nlive; i++) {
        flow *f = &n->flows[n->live[i]];
        if (f->state == FLOW_ACTIVE && f->lazy && pred(n, f))
            make_eager(n, n->live[i]);
    }
}

static int end_current(const net *n, const due_entry *e) {
    const flow *f = &n->flows[e->id];
    return f->state == FLOW_ACTIVE && f->lazy && f->kend == e->t;
}

/* Keeps only the current entries (when stale ones pile up). */
static void ends_rebuild(net *n) {
    int k = 0;
    for (int i = 0; i < n->nends; i++)
        if (end_current(n, &n->ends[i])) n->ends[k++] = n->ends[i];
    n->nends = k;
    for (int i = k / 2 - 1; i >= 0; i--)
        net__heap_down(n->ends, k, i, n->ends[i], NULL);
}

/* Records lazy flow id's proof end; out of memory, the flow goes eager. */
static int ends_push(net *n, int id) {
    const flow *f = &n->flows[id];
    if (n->nends >= 2 * n->nlive + 64) ends_rebuild(n);
    if (n->nends == n->cends) {
        int cap = net__doubled(n->cends, 64);
        due_entry *p =
            cap > 0 ? realloc(n->ends, (size_t)cap * sizeof *p) : NULL;
        if (!p) return -1;
        n->ends = p;
        n->cends = cap;
    }
    net__heap_up(n->ends, n->nends++, (due_entry){f->kend, id}, NULL);
    return 0;
}

/* Makes eager every lazy flow whose proof ends before the current tick. */
static void expire_proofs(net *n) {
    while (n->nends > 0 && n->ends[0].t < tick_now(n)) {
        due_entry e = n->ends[0];
        n->nends--;
        net__heap_down(n->ends, n->nends, 0, n->ends[n->nends], NULL);
        if (end_current(n, &e)) make_eager(n, e.id);
    }
}

/* Drops the ticks no lazy flow needs (those before the oldest segment
 * start). */
static void trim_ticks(net *n) {
    int64_t keep = tick_now(n);
    for (int i = 0; i < n->nlive; i++) {
        const flow *f = &n->flows[n->live[i]];
        if (f->state == FLOW_ACTIVE && f->lazy && f->seg_rate != 0 &&
            f->k0 < keep)
            keep = f->k0;
    }
    int drop = (int)(keep - n->tick0);
    memmove(n->ticks, n->ticks + drop,
            (size_t)(n->nticks - drop) * sizeof *n->ticks);
    n->tick0 = keep;
    n->nticks -= drop;
    int64_t at = 2 * (int64_t)n->nticks + 2 * (int64_t)n->nlive + 64;
    n->trim_at = at > INT32_MAX / 2 ? INT32_MAX / 2 : (int)at;
}

/* Room for one more tick: old ticks dropped, or the array doubled.  Past
 * TICKS_MAX ticks kept (a flow lazy for that long) or out of memory, every
 * lazy flow's segment restarts at the last tick with its replayed bytes
 * (its proof, counted from where it began, stays), and all but that tick
 * go. */
static void reserve_tick(net *n) {
    if (n->nticks >= n->trim_at) trim_ticks(n);
    if (n->nticks < n->cticks) return;
    int cap = n->nticks < TICKS_MAX ? net__doubled(n->cticks, 64) : -1;
    int64_t *p = cap > 0 ? realloc(n->ticks, (size_t)cap * sizeof *p) : NULL;
    if (p) {
        n->ticks = p;
        n->cticks = cap;
        return;
    }
    for (int i = 0; i < n->nlive; i++) {
        flow *f = &n->flows[n->live[i]];
        if (f->state == FLOW_ACTIVE && f->lazy && f->seg_rate != 0) {
            f->remaining = net__remaining_now(n, f);
            f->k0 = tick_now(n);
        }
    }
    trim_ticks(n); /* keeps one tick: cticks >= 64 */
}

/* Moves every active flow's bytes from n->now to t at its current rate:
 * the eager ones now, the lazy ones when asked (net__remaining_now), through
 * the tick t adds. */
void net__step_to(net *n, int64_t t) {
    if (t <= n->now) return;
    if (n->nticks >= n->trim_at || n->nticks == n->cticks) reserve_tick(n);
    double dt_ns = (double)(t - n->now);
    for (int i = 0; i < n->neager; i++) {
        flow *f = &n->flows[n->eager[i]];
        if (f->rate > 0)
            f->remaining = step_bytes(f->remaining, f->rate, dt_ns);
    }
    n->ticks[n->nticks++] = t;
    n->now = t;
    expire_proofs(n);
}

/* The instant (from n->now) at which f, at its current rate, has moved
 * everything.  Rounded up to whole ns; a slack far above floating-point
 * noise and far below 1 ns keeps an exact instant from being pushed to the
 * next ns by rounding.  f's bytes must be current (not lazy). */
static int64_t completion(const net *n, const flow *f) {
    if (f->remaining <= tolerance(f) || isinf(f->rate)) return n->now;
    int64_t ns = net_transfer_ns(f->remaining, f->rate);
    return ns == INT64_MAX ? INT64_MAX : add_sat(n->now, ns);
}

int64_t net_transfer_ns(double bytes, double rate) {
    if (isinf(rate)) return 0;
    if (rate <= 0) return INT64_MAX;
    double x = bytes * 1e9 / rate;
    if (!(x < 9e18)) /* also inf and NaN (a subnormal rate): never */
        return INT64_MAX;
    double ns = ceil(x - (1e-6 + 1e-13 * x));
    return ns <= 0 ? 0 : (int64_t)ns;
}

/* How many ticks after now f may go unstepped: for that many, stepping it
 * at each tick and recomputing its completion instant would give t_done
 * again and never find it done by tolerance (the proof is in the file
 * comment).  -1 when that cannot be shown.  f's bytes, rate and t_done =
 * completion() are current. */
static int64_t proven_ticks(const net *n, const flow *f) {
    double r = f->rate, R = f->remaining, tol = tolerance(f);
    if (r == 0) return R > tol ? INT64_MAX : -1; /* it never moves */
    int64_t K = f->t_done == INT64_MAX ? 0 : f->t_done - n->now;
    if (!(r >= 1e-200) || isinf(r) || !(R > tol) || K < 1 ||
        K >= (int64_t)1 << 52)
        return -1;
    double x = R * 1e9 / r, g = x - (1e-6 + 1e-13 * x); /* as completion() */
    if (ceil(g) != (double)K) return -1;
    double e = x * 0x1p-53 * 1.01;          /* u x0, with room */
    double tau = tol * 1e9 / r * 1.0000001; /* the tolerance, in ns */
    double lo = g - (double)(K - 1);        /* exact (Sterbenz) */
    double hi = (double)K - g - 0x1p-52;
    double room = lo - tau;
    if (hi - 1.0000001e-13 * (double)K < room)
        room = hi - 1.0000001e-13 * (double)K;
    double k = (room - 1e-20) / e * (1 - 1e-9) - 16;
    if (!(k >= 64)) return -1;
    return k > 1e15 ? (int64_t)1e15 : (int64_t)k;
}

/* Starts a new segment of active flow id at now: its completion instant
 * from its current bytes and rate; then, with `prove`, lazy if
 * proven_ticks() allows, else eager.  Its bytes must be current. */
void net__begin_segment(net *n, int id, int prove) {
    flow *f = &n->flows[id];
    f->t_done = completion(n, f);
    due_update(n, id);
    if (f->t_done <= n->now) n->due_now = 1;
    f->seg_rate = f->rate;
    f->k0 = tick_now(n);
    int64_t k = prove && !n->no_lazy ? proven_ticks(n, f) : -1;
    if (k < 0) {
        f->lazy = 0;
        eager_add(n, id);
        return;
    }
    f->kend = k > INT64_MAX - f->k0 ? INT64_MAX : f->k0 + k;
    if (f->kend != INT64_MAX && ends_push(n, id) < 0) {
        eager_add(n, id);
        return;
    }
    eager_remove(n, id);
    f->lazy = 1;
}

void net__update_next(net *n) {
    if (n->heaped) {
        n->next = n->due[0].t;
        return;
    }
    int64_t next = INT64_MAX;
    for (int i = 0; i < n->nlive; i++) {
        int64_t t = due_at(&n->flows[n->live[i]]);
        if (t < next) next = t;
    }
    n->next = next;
}
