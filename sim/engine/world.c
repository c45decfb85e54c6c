/*
 * world.c -- building and tearing down the world of a run (world.h): the
 * inputs the clock cannot represent, then one part at a time: the method
 * and its flags, the arrays, the layers and their payloads (DP buckets),
 * the offloaded outer state, the fragments, the fast-forward's marks, the
 * latencies, the links, the collective stream, the failure processes and
 * last the workers, which begin their first step.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/memory.h"
#include "sim/engine/payload.h"
#include "sim/engine/world.h"

/* Linux's TCP_RTO_MIN, the floor of a connection's retransmission
 * timeout (network.transport tcp). */
#define RUN_TCP_RTO_MIN_S 0.2

_Static_assert(W_READY == 0, "a zeroed worker is ready");

#define ALLOC(p, n)                                                            \
    do {                                                                       \
        (p) = calloc((size_t)(n) + 1, sizeof *(p));                            \
        if (!(p)) return MSG_ENOMEM;                                           \
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
    if (!(c->params >= 0 && c->params < (double)PAYLOAD_PARAMS_MAX))
        stop(W, "%s parameters is more than 2^62", msg_number(c->params, b));
    /* a download too large for 64 bits only matters once one starts */
    double dl = c->params * c->recovery_bytes_per_param;
    W->dl_bytes = dl >= 0 && dl < 1.8e19 ? (uint64_t)llround(dl) : UINT64_MAX;
    for (int i = 0; i < W->M; i++)
        for (int j = 0; j < W->M; j++) {
            int64_t ns;
            double ms = scn_latency_ms(c, i, j);
            if (ns_of(ms * 1e-3, &ns))
                stop(W,
                     "workers %d and %d: a latency of %s ms does not fit "
                     "in 2^62 ns",
                     i, j, msg_number(ms, b));
        }
}

/* Does method.offload_outer apply (not to DP)? */
static int offloads(const scn_config *c) {
    return c->offload_outer && c->sched.method != SCHED_DP;
}

/* The method's schedule and the run's flags, from the config. */
static int init_method(world *W, const scn_config *c, const run_hooks *h,
                       char *err, size_t errlen) {
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
    W->fast = !c->full && !(h && (h->span || h->observe)) &&
              c->faults.mtbf_s == 0 && !c->trace_path[0] &&
              !c->member_trace_path[0] && !offloads(c);
    W->jumps = W->fast && c->straggler_prob == 0 && !W->book;
    W->period = W->sch.H;
    W->timeout_ns = llround(c->sync_timeout_s * 1e9); /* <= 1e18 (loader) */
    /* checkpoint_s and restart_s are at most 1e9 s (loader): ns fit */
    W->ckpt_ns = llround(c->checkpoint_s * 1e9);
    W->ckpt_every = W->ckpt_ns > 0 ? scn_checkpoint_every(c) : 0;
    W->restart_ns = llround(c->restart_s * 1e9);
    W->progress_next = 1;
    W->resume_step = 1;
    return 0;
}

/* The world's arrays, zeroed. */
static int init_arrays(world *W, char *err, size_t errlen) {
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
    return 0;
}

/* Which reduction carries each layer.  Buckets (DP: dp_bucket_mb; DiLoCo
 * and streaming: bucket_mb, per fragment): the layers of one fragment in
 * backward order (highest first), each bucket closed once its payload
 * reaches the size, the fragment's lowest layer closing the last one with
 * what is left; a bucket is one all-reduce of its layers' bytes, ready
 * when its lowest layer's is, and the forward of each of its layers waits
 * for it.  Size 0, and the sliced layout: every layer is its own
 * reduction. */
void world_buckets(int L, const int *frag, int f, double cap, uint64_t *bytes,
                   int *lead, int *count) {
    uint64_t acc = 0;
    int top = -1, low = 0; /* the open bucket's highest layer; the group's
                              lowest */
    while (low < L && frag && frag[low] != f) low++;
    for (int l = L - 1; l >= 0; l--) {
        if (frag && frag[l] != f) continue;
        if (top < 0) top = l;
        acc += bytes[l];
        if ((double)acc < cap && l > low) continue;
        for (int k = l; k <= top; k++)
            if (!frag || frag[k] == f) lead[k] = l;
        bytes[l] = acc; /* the bucket's payload, at its lead */
        if (count) (*count)++;
        acc = 0;
        top = -1;
    }
}

static void buckets_init(world *W) {
    const scn_config *c = W->cfg;
    double mb = W->sch.method == SCHED_DP ? c->dp_bucket_mb : c->bucket_mb;
    double cap = W->sliced ? 0 : mb * 1e6;
    for (int l = 0; l < W->L; l++) W->lead[l] = l;
    if (W->sliced) return; /* frag_size: counted with the slices */
    for (int f = 0; f < W->P; f++)
        world_buckets(W->L, W->frag, f, cap, W->bytes, W->lead,
                      &W->frag_size[f]);
}

/* Each layer: its reduction, gate and wait list, its fragment and the
 * bytes of its payload (sliced: of each fragment's slice); the buckets. */
static int init_layers(world *W) {
    const scn_config *c = W->cfg;
    int M = W->M, L = W->L, P = W->P;
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
                W->bytes[(size_t)l * P + p] =
                    payload_slice_bytes(c, codec, l, p, P);
            }
            continue;
        }
        W->frag[l] = sched_layer_fragment(&W->sch, l);
        W->phase[l] = sched_offset(&W->sch, W->frag[l]);
        W->bytes[l] = c->sched.method == SCHED_SPARTA
                          ? payload_sparta_bytes(c, codec, l, P)
                          : payload_layer_bytes(c, codec, l);
    }
    buckets_init(W);
    return 0;
}

/* method.offload_outer: each fragment's outer parameters and momentum
 * (sim/engine/memory.h), and the host copies. */
static int init_offload(world *W) {
    const scn_config *c = W->cfg;
    int L = W->L, P = W->P;
    if (!offloads(c)) return 0;
    uint64_t per = MEM_OUTER_BYTES + MEM_MOMENTUM_BYTES;
    for (int l = 0; l < L; l++)
        for (int p = 0; p < P; p++)
            if (W->sliced) /* a slice of every layer */
                W->outer_bytes[p] += per * payload_slice_params(c, l, p, P);
            else if (W->frag[l] == p)
                W->outer_bytes[p] += per * payload_slice_params(c, l, 0, 1);
    W->off = off_new(W->M, P, c->host_gbps * scn_gbit_bits(c->gbit) / 8);
    return W->off ? 0 : MSG_ENOMEM;
}

/* Each fragment: no sync in flight (the initial state, not a transition),
 * its wait list; the op ends at speed 1; the fast-forward's marks. */
static int init_fragments_and_marks(world *W) {
    int M = W->M, L = W->L;
    for (int p = 0; p < W->P; p++) {
        ALLOC(W->fs[p].arrived, M);
        W->fs[p].take = -1;
        W->waiters[L + p] = -1;
    }
    for (int o = 0; o < 3 * L; o++) /* the op ends of a step at speed 1 */
        W->nom_cum[o] = llround((double)W->base_ns * worker_op_cum(W, o + 1));
    for (int k = 0; k < FF_MARKS; k++) {
        ALLOC(W->mark[k].busy, M);
        ALLOC(W->mark[k].nom, M);
        ALLOC(W->mark[k].bytes, 2 * M);
        ALLOC(W->mark[k].ckpt, M);
    }
    return 0;
}

/* The M x M latencies in ns, and the cap a TCP window puts on every flow
 * (network.transport not tcp): a window per round trip, the longest one
 * and the standing queue (network.queue_ms), the one thing the queue
 * changes without TCP. */
static void init_latencies(world *W) {
    const scn_config *c = W->cfg;
    int M = W->M;
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
    double rtt_ms = 2 * max_lat + c->queue_ms; /* exactly 2 max_lat at 0 */
    W->flow_cap = INFINITY;
    if (c->tcp_window_mb > 0 && rtt_ms > 0 && !tcp)
        W->flow_cap = c->tcp_window_mb * 1e6 / (rtt_ms * 1e-3);
}

/* The net: an up link (2i) and a down link (2i + 1) per worker; with
 * network.ack_bytes_per_kb, a flow from i to j loads up(j) and down(i)
 * with its ACKs (each link's partner is the other link of its worker). */
static int init_links(world *W) {
    const scn_config *c = W->cfg;
    W->net = net_new(2 * W->M);
    if (!W->net) return MSG_ENOMEM;
    if (c->ack_bytes_per_kb > 0) {
        int *partner = malloc((size_t)(2 * W->M) * sizeof *partner);
        if (!partner) return MSG_ENOMEM;
        for (int l = 0; l < 2 * W->M; l++) partner[l] = l ^ 1;
        int rc = net_set_ack(W->net, c->ack_bytes_per_kb / 1000, partner);
        free(partner);
        if (rc) return rc; /* the loader checked the range: only OOM */
    }
    /* payload bytes get the efficiency's share of the line rate */
    double rate = scn_gbit_bits(c->gbit) / 8 * c->efficiency;
    for (int i = 0; i < W->M; i++) {
        net_link_set(W->net, 2 * i, c->up_gbps[i] * rate);
        net_link_set(W->net, 2 * i + 1, c->down_gbps[i] * rate);
    }
    return 0;
}

/* A set-up wait of the stream (network.startup_ms) as a span of the
 * sender's communication track: "startup", the layer and take of the
 * reduction it is part of (the stream's tag is the layer), no bytes. */
static void on_startup(void *ctx, uint64_t tag, int src, int dst, int64_t t0,
                       int64_t t1) {
    world *W = ctx;
    (void)dst;
    int l = (int)tag;
    span(W, src, 1, "startup", l, W->red[l].take, t0, t1, 0);
    if (W->book) expl__startup(W, t0, t1);
}

/* The group's collective stream: its shape, TCP, step overhead, set-up,
 * standing queue, ring order and completion. */
static int init_collective(world *W) {
    const scn_config *c = W->cfg;
    W->coll = coll_new(W->net, W->M, c->collective, W->lat, W->flow_cap,
                       TAG_COLL, sync_coll_done, W);
    if (!W->coll) return MSG_ENOMEM;
    if (c->transport == SCN_TRANSPORT_TCP) { /* the window limit is then
                                                each connection's own */
        coll_tcp t = {.init_window_bytes = c->tcp_init_window_kb * 1e3,
                      .max_window_bytes = c->tcp_window_mb > 0
                                              ? c->tcp_window_mb * 1e6
                                              : INFINITY,
                      .rto_min_s = RUN_TCP_RTO_MIN_S,
                      .restart_after_idle = c->tcp_slow_start_after_idle};
        coll_set_tcp(W->coll, &t);
    }
    coll_set_step_overhead(W->coll, llround(c->collective_overhead_ms * 1e6));
    int spans = (W->hooks && W->hooks->span) || W->book; /* its slices */
    if (c->startup_ms > 0 &&
        coll_set_startup(W->coll, llround(c->startup_ms * 1e6),
                         spans ? on_startup : NULL))
        return MSG_ENOMEM;
    coll_set_queue(W->coll, llround(c->queue_ms * 1e6));
    if (c->has_ring_order && coll_set_order(W->coll, c->ring_order))
        return MSG_ENOMEM; /* the loader checked the permutation */
    W->member_mode = c->completion == SCN_COMPLETION_MEMBER;
    if (W->member_mode && coll_set_member_done(W->coll, sync_member_done))
        return MSG_ENOMEM;
    /* no failures (so no downloads, no lost members) and nobody watching:
     * the stream alone on the net may take its shortcuts */
    if (W->fast && !W->member_mode && !c->bw_trace_path[0] && !c->bw_diurnal)
        coll_set_exclusive(W->coll); /* (its alike flows cross no link: a
                                        capacity step would not reach them) */
    return 0;
}

/* The failure processes (a trace file, or random). */
static int init_faults(world *W, char *err, size_t errlen) {
    const scn_config *c = W->cfg;
    faults_spec fs = c->faults;
    fs.trace = c->trace_path[0] ? c->trace_path : NULL;
    W->faults = faults_new(&fs, W->M, c->seed, err, errlen);
    /* faults_new fails on a bad or unreadable trace (or, rarely, OOM):
     * the user's input to fix */
    return W->faults ? 0 : MSG_EINPUT;
}

/* The workers (W_READY: zeroed), each at the start of its first step,
 * with its first failure scheduled. */
static int init_workers(world *W) {
    int L = W->L, P = W->P;
    for (int i = 0; i < W->M; i++) {
        worker *w = &W->w[i];
        ALLOC(w->cum, 3 * L);
        ALLOC(w->contrib, P);
        ALLOC(w->nom_contrib, P);
        ALLOC(w->pend, P);
        ALLOC(w->nom_pend, P);
        ALLOC(w->pend_layers, P);
        w->straggle = rng_stream(W->cfg->seed, RNG_STRAGGLERS, (uint32_t)i);
        if (!w->straggle) return MSG_ENOMEM;
        w->step = 1;
        w->joined = 1;
        w->dl_flow = -1;
        w->factor = NAN; /* no factor yet: never equal to one */
        worker_begin_step(W, w, i, 0);
        rec_next_failure(W, i);
    }
    return 0;
}

int world_wire_net(world *W) {
    init_latencies(W);
    int rc = init_links(W);
    if (!rc) rc = init_collective(W);
    return rc;
}

int world_init(world *W, const scn_config *c, const run_hooks *h,
               expl_book *book, char *err, size_t errlen) {
    memset(W, 0, sizeof *W);
    W->book = book;
    int rc = init_method(W, c, h, err, errlen);
    if (!rc) rc = init_arrays(W, err, errlen);
    if (!rc) rc = init_layers(W);
    if (!rc) rc = init_offload(W);
    if (!rc) rc = init_fragments_and_marks(W);
    if (!rc) rc = world_wire_net(W);
    if (!rc) rc = site_init(W);
    if (!rc) rc = init_faults(W, err, errlen);
    if (!rc) rc = bw_init(W, err, errlen);
    if (!rc) rc = init_workers(W);
    if (!rc) rc = mb_init(W, err, errlen);
    return rc;
}

void world_free(world *W) {
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
    free(W->w), free(W->red), free(W->rel), free(W->gate), free(W->last_take),
        free(W->ready);
    free(W->frag), free(W->phase);
    free(W->bytes), free(W->waiters), free(W->wait_next);
    if (W->fs)
        for (int p = 0; p < W->P; p++) free(W->fs[p].arrived);
    free(W->fs), free(W->member), free(W->merge_step);
    for (int k = 0; k < FF_MARKS; k++) {
        free(W->mark[k].busy), free(W->mark[k].nom), free(W->mark[k].bytes);
        free(W->mark[k].ckpt);
        free(W->mark[k].sig.p);
    }
    free(W->sig.p);
    off_free(W->off);
    site_free(W);
    free(W->flist), free(W->outer_bytes), free(W->out_step);
    free(W->frag_size), free(W->lead), free(W->lat), free(W->nom_cum);
    if (W->coll) coll_free(W->coll);
    if (W->net) net_free(W->net);
    if (W->faults) faults_free(W->faults);
    bwt_free(W->bwt);
    mbt_free(W->mbt);
    eq_free(&W->q);
}
