/*
 * site.c -- sites of many accelerators in a run (workers.sites; docs/
 * network.md, "Sites of many accelerators"): every site's fabric handed
 * to the stream (its syncs, hierarchical or one ring), and, for DiLoCo
 * and streaming, the data-parallel inner steps inside each site.
 *
 * Inner steps.  A site's accelerators run in lockstep, so the site is one
 * worker whose gradient buckets (method.dp_bucket_mb over every layer,
 * method.dp_codec bytes) are all-reduced inside it as DP reduces them
 * among plain workers: each bucket once its lowest layer's parameter
 * backward ends, one at a time in that order on the site's fabric (a
 * FIFO: a bucket starts when the fabric is free), each taking the ring's
 * closed form fabric_allreduce_ns; the next step's forward of each of the
 * bucket's layers waits for it.  No flow is simulated: the fabric's FIFO
 * is one instant (fab_free) and an EV_SITE event per bucket.  A sync's
 * arrival for a layer (its pseudo-gradient needs the step's update) is
 * held until the bucket holding that layer is reduced inside.  A failure
 * of the site drops what its fabric had pending and the arrivals held.
 */
#include "sim/engine/world.h"

#include <stdlib.h>

int site_init(world *W) {
    const scn_config *c = W->cfg;
    int M = W->M, L = W->L, any = 0;
    if (!c->has_sites) return 0;
    for (int i = 0; i < M; i++) any |= c->site_replicas[i] > 1;
    if (!any) return 0; /* sites of one: as without sites */
    W->fab = calloc((size_t)M, sizeof *W->fab);
    if (!W->fab) return MSG_ENOMEM;
    for (int i = 0; i < M; i++) W->fab[i] = fabric_of(c, i);
    /* the ring's flows alone on their links for good: no failure (no
     * download, no member removed), no capacity step, no TCP, no ACK */
    int alone = c->faults.mtbf_s <= 0 && !c->trace_path[0] &&
                !c->bw_trace_path[0] && !c->bw_diurnal &&
                c->transport == SCN_TRANSPORT_IDEAL && c->ack_bytes_per_kb <= 0;
    if (W->member_mode) {
        stop(W, "workers.sites cannot run with network.completion member");
        return 0;
    }
    int rc = coll_set_sites(W->coll, W->fab, c->site_allreduce == SCN_SITE_RING,
                            alone);
    if (rc || W->sch.method == SCHED_DP) return rc; /* DP: the stream's */
    W->inner = 1;
    W->dlead = calloc((size_t)L, sizeof *W->dlead);
    W->dbytes = calloc((size_t)L, sizeof *W->dbytes);
    W->fab_free = calloc((size_t)M, sizeof *W->fab_free);
    W->fab_epoch = calloc((size_t)M, sizeof *W->fab_epoch);
    W->intra_pend = calloc((size_t)M * (size_t)L, 1);
    W->held = calloc((size_t)M * (size_t)L, sizeof *W->held);
    if (!W->dlead || !W->dbytes || !W->fab_free || !W->fab_epoch ||
        !W->intra_pend || !W->held)
        return MSG_ENOMEM;
    for (int l = 0; l < L; l++)
        W->dbytes[l] = payload_layer_bytes(c, c->dp_codec, l);
    world_buckets(L, NULL, 0, c->dp_bucket_mb * 1e6, W->dbytes, W->dlead, NULL);
    return 0;
}

void site_free(world *W) {
    free(W->fab), free(W->dlead), free(W->dbytes), free(W->fab_free);
    free(W->fab_epoch), free(W->intra_pend), free(W->held);
}

int site_gated(const world *W, int wi, int l) {
    return W->inner && W->intra_pend[(size_t)wi * W->L + W->dlead[l]];
}

int site_bucket_ends(const world *W, int wi, int l) {
    return W->inner && W->dlead[l] == l && W->fab[wi].n > 1;
}

void site_grad_ready(world *W, int wi, int l, int64_t now) {
    if (!site_bucket_ends(W, wi, l)) return;
    int64_t d = fabric_allreduce_ns(&W->fab[wi], W->dbytes[l]);
    int64_t start = W->fab_free[wi] > now ? W->fab_free[wi] : now;
    if (d > RUN_TIME_MAX_NS) d = RUN_TIME_MAX_NS;
    int64_t t = later(W, start, d, "an all-reduce inside a site");
    if (W->stopped) return;
    W->fab_free[wi] = t;
    W->intra_pend[(size_t)wi * W->L + l] = 1;
    W->site_pending++;
    push(W, t, CLS_NET, EV_SITE, wi, W->fab_epoch[wi], (uint64_t)l);
}

int site_hold(world *W, int wi, int l) {
    if (!W->inner || W->fab[wi].n <= 1) return 0;
    W->held[(size_t)wi * W->L + l] = W->w[wi].step;
    return 1;
}

void site_reduced(world *W, int wi, uint32_t epoch, int l, int64_t now) {
    if (!W->inner || epoch != W->fab_epoch[wi]) return;
    W->intra_pend[(size_t)wi * W->L + l] = 0;
    W->site_pending--;
    if (now > W->end) W->end = now;
    W->check_done = 1;
    for (int k = l; k < W->L && W->dlead[k] == l; k++) { /* its layers */
        int64_t *h = &W->held[(size_t)wi * W->L + k];
        int64_t t = *h;
        *h = 0;
        if (t) sync_arrive(W, wi, k, t, now);
    }
    worker *w = &W->w[wi];
    if (w->state == W_BLOCKED && w->wait_on == WAIT_SITE) {
        worker_set_state(W, w, W_READY);
        worker_advance(W, wi, now);
    }
}

void site_reset(world *W, int wi, int64_t now) {
    if (!W->inner) return;
    W->fab_epoch[wi]++;
    W->fab_free[wi] = now;
    for (int l = 0; l < W->L; l++) {
        uint8_t *p = &W->intra_pend[(size_t)wi * W->L + l];
        W->site_pending -= *p;
        *p = 0;
        W->held[(size_t)wi * W->L + l] = 0;
    }
}
