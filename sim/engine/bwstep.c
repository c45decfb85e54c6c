/*
 * bwstep.c -- bandwidth that changes over time (network.bandwidth_trace):
 * the steps of a trace file (sim/config/bw_trace.h) or the diurnal form's
 * slots, each an EV_BW event at its instant that sets the capacities of
 * the links it names.
 *
 * At a step the net is first brought to the instant (what completes
 * there completes at the old rates), then every link due there changes
 * together and the flows re-share once (net_links_set on a busy net, so
 * no peak counts a state between the old and the new); a flow still
 * waiting out its latency moves nothing, so it only ever sees the new
 * rate.  Only one EV_BW is pending at a time, the next step's.
 *
 * Exactness of the fast-forward (fastfwd.c): the world's signature does
 * not see the trace's future, so no period is skipped while a step is to
 * come (W->bw_left; the diurnal form always has one): ff_forward() does
 * not even write the signature then.  (It could not match anyway: the
 * pending EV_BW is in it, at its instant relative to now.)  After a file's
 * last step the capacities stay as they are, the signature sees them
 * (net_signature), and the jumps resume.  The exclusive ring's shortcut
 * stays off with a trace (world.c): its alike flows cross no link.
 */
#include <math.h>

#include "sim/config/bw_trace.h"
#include "sim/engine/world.h"

/* The next step's instant, or INT64_MAX when none is left. */
static int64_t next_instant(const world *W) {
    if (W->cfg->bw_diurnal)
        return bwt_diurnal_start(&W->cfg->diurnal, W->bw_slot);
    if (!W->bwt) return INT64_MAX;
    size_t n;
    const bwt_step *s = bwt_steps(W->bwt, &n);
    return W->bw_next < n ? s[W->bw_next].t : INT64_MAX;
}

/* One EV_BW at the next step, if it comes before the clock's limit. */
static void schedule(world *W) {
    int64_t t = next_instant(W);
    W->bw_left = t <= RUN_TIME_MAX_NS;
    if (W->bw_left) push(W, t, CLS_NET, EV_BW, 0, 0, 0);
}

/* Worker link's up and down links (link -1: every worker's) are to carry
 * gbps in the scenario's Gbit, of which payload gets the efficiency's
 * share (as world.c's links): into cap[] (bytes/s per link), set[]. */
static void due_links(const world *W, int link, double gbps, double *cap,
                      unsigned char *set) {
    const scn_config *c = W->cfg;
    double rate = gbps * (scn_gbit_bits(c->gbit) / 8 * c->efficiency);
    for (int i = link < 0 ? 0 : link; i < (link < 0 ? W->M : link + 1); i++) {
        cap[2 * i] = cap[2 * i + 1] = rate;
        set[2 * i] = set[2 * i + 1] = 1;
    }
}

int bw_init(world *W, char *err, size_t errlen) {
    const scn_config *c = W->cfg;
    if (c->bw_trace_path[0]) {
        int rc = bwt_load(c->bw_trace_path, W->M, &W->bwt, err, errlen);
        if (rc) return rc == MSG_ENOMEM ? rc : MSG_EINPUT;
    }
    if (W->bwt || c->bw_diurnal) schedule(W);
    return 0;
}

void bw_step(world *W, int64_t now) {
    net_advance(W->net, now);
    double cap[2 * SCN_MAX_WORKERS];
    unsigned char set[2 * SCN_MAX_WORKERS] = {0};
    if (W->cfg->bw_diurnal) {
        const bwt_diurnal *d = &W->cfg->diurnal;
        for (; bwt_diurnal_start(d, W->bw_slot) <= now; W->bw_slot++)
            due_links(W, -1, bwt_diurnal_gbps(d, W->bw_slot), cap, set);
    } else {
        size_t n;
        const bwt_step *s = bwt_steps(W->bwt, &n);
        for (; W->bw_next < n && s[W->bw_next].t <= now; W->bw_next++)
            due_links(W, s[W->bw_next].link, s[W->bw_next].gbps, cap, set);
    }
    /* every link due at once (the last step of a link wins): one filling */
    int ids[2 * SCN_MAX_WORKERS], k = 0;
    for (int l = 0; l < 2 * W->M; l++)
        if (set[l]) cap[k] = cap[l], ids[k++] = l;
    net_links_set(W->net, k, ids, cap);
    schedule(W);
}
