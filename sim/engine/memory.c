/*
 * memory.c -- a worker's accelerator memory before activations (see
 * memory.h): byte counts per parameter, and with offloading the peak of
 * fragments in flight, a sweep over the windows of the run's syncs.
 */
#include "sim/engine/memory.h"

#include <inttypes.h>
#include <stdlib.h>

#include "sim/base/msg.h"
#include "sim/engine/payload.h"

/* An edge of a window over the steps: +1 where it starts, -1 one step
 * after it ends. */
typedef struct {
    int64_t at;
    int delta;
} edge;

static int edge_cmp(const void *a, const void *b) {
    const edge *x = a, *y = b;
    if (x->at != y->at) return x->at < y->at ? -1 : 1;
    return x->delta - y->delta; /* an end before a start at one step */
}

/* The edges of window [start, end] (none when start > end). */
static void emit(edge *e, int *n, int64_t start, int64_t end) {
    if (start > end) return;
    e[(*n)++] = (edge){start, 1};
    e[(*n)++] = (edge){end + 1, -1};
}

/* Adds [start, end] to a fragment's current window [*cs, *ce] when they
 * share a step (a fragment in two syncs at once counts once), else emits
 * the current one and starts anew.  Windows come in increasing start. */
static void add_window(edge *e, int *n, int64_t start, int64_t end, int64_t *cs,
                       int64_t *ce) {
    if (*cs <= *ce && start <= *ce) {
        if (end > *ce) *ce = end;
        return;
    }
    emit(e, n, *cs, *ce);
    *cs = start;
    *ce = end;
}

/* The syncs of one fragment a run of `steps` steps takes: k0..k1. */
static void sync_range(const sched_spec *s, int j, int64_t steps, int64_t *k0,
                       int64_t *k1) {
    int64_t off = sched_offset(s, j), H = s->H;
    int64_t first = 1 + sched_delay(s) - off; /* off + kH - d >= 1 */
    *k0 = first <= 0 ? 0 : (first + H - 1) / H;
    *k1 = steps < off ? -1 : (steps - off) / H;
}

/* A run in which every fragment syncs this often has a stretch of whole
 * periods in which every window of the periodic schedule exists (below). */
#define MEM_STEADY_SYNCS 9
#define MEM_MAX_SYNCS (MEM_STEADY_SYNCS + 2)

int mem_in_flight(const sched_spec *s, int extra, int64_t steps, int *out,
                  char *err, size_t errlen) {
    int P = s->P;
    int64_t d = sched_delay(s), dw = d + extra, H = s->H;
    /* Fragments sync alike: k0 is 0 or 1 and k1 differs by at most one
     * between fragments, so their sync counts differ by at most two.  When
     * every fragment syncs MEM_STEADY_SYNCS times or more, steps 2H+1..3H
     * lie where every window touching them exists and none is cut, and
     * the peak is that of the unbounded schedule: the windows of k = 0..2,
     * which hold every window touching steps H+1..2H (dw < 2H).  Else
     * every window of the run is swept (at most MEM_MAX_SYNCS each). */
    int steady = 1;
    for (int j = 0; j < P && steady; j++) {
        int64_t k0, k1;
        sync_range(s, j, steps, &k0, &k1);
        steady = k1 - k0 + 1 >= MEM_STEADY_SYNCS;
    }
    edge *e = malloc(sizeof *e * 2 * (size_t)P * MEM_MAX_SYNCS);
    if (!e) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    int n = 0;
    for (int j = 0; j < P; j++) {
        int64_t k0 = 0, k1 = 2, off = sched_offset(s, j);
        if (!steady) sync_range(s, j, steps, &k0, &k1);
        int64_t cs = 1, ce = 0;
        for (int64_t k = k0; k <= k1; k++) {
            int64_t start = off + k * H - d, end = start + dw;
            if (!steady && end > steps) end = steps;
            add_window(e, &n, start, end, &cs, &ce);
        }
        emit(e, &n, cs, ce);
    }
    qsort(e, (size_t)n, sizeof *e, edge_cmp);
    int cur = 0, peak = 0;
    for (int i = 0; i < n; i++) {
        cur += e[i].delta;
        if (cur > peak) peak = cur;
    }
    free(e);
    *out = peak;
    return 0;
}

/* The parameters of layer l: floor((l+1)N/L) - floor(lN/L) (payload.h). */
static uint64_t layer_params(const scn_config *c, int l) {
    return payload_slice_params(c, l, 0, 1);
}

int mem_largest_fragment(const scn_config *c, const sched_spec *s,
                         uint64_t *out, char *err, size_t errlen) {
    uint64_t P = (uint64_t)s->P, best = 0;
    if (s->layout == SCHED_SLICED) { /* every layer's largest slice */
        for (int l = 0; l < c->layers; l++)
            best += (layer_params(c, l) + P - 1) / P;
        *out = best;
        return 0;
    }
    uint64_t *sum = calloc(P, sizeof *sum);
    if (!sum) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    for (int l = 0; l < c->layers; l++)
        sum[sched_layer_fragment(s, l)] += layer_params(c, l);
    for (uint64_t j = 0; j < P; j++)
        if (sum[j] > best) best = sum[j];
    free(sum);
    *out = best;
    return 0;
}

int mem_worker_of(const scn_config *c, mem_worker *out, char *err,
                  size_t errlen) {
    *out = (mem_worker){0};
    sched_spec s = c->sched;
    s.layers = c->layers;
    char msg[256];
    if (sched_normalize(&s, msg, sizeof msg))
        return msg_set(err, errlen, MSG_EINPUT, "method: %s", msg);
    uint64_t N = 0;
    for (int l = 0; l < c->layers; l++) N += layer_params(c, l);
    out->params = N;
    out->parameters_bytes = MEM_PARAM_BYTES * N;
    out->gradients_bytes = MEM_GRAD_BYTES * N;
    out->inner_optimizer_bytes = MEM_ADAMW_BYTES * N;
    out->fragments = s.P;
    int rc = mem_largest_fragment(c, &s, &out->fragment_params, err, errlen);
    if (rc) return rc;
    uint64_t outer = 0; /* outer parameters on the accelerator */
    if (sched_has_outer(&s) && c->offload_outer) {
        int extra = 0;
        for (int i = 0; i < c->workers; i++)
            if (c->tau_extra[i] > extra) extra = c->tau_extra[i];
        rc = mem_in_flight(&s, extra, c->steps, &out->in_flight, err, errlen);
        if (rc) return rc;
        out->offload = 1;
        out->host_bytes = (MEM_OUTER_BYTES + MEM_MOMENTUM_BYTES) * N;
        outer = (uint64_t)out->in_flight * out->fragment_params;
        if (outer > N) outer = N; /* never more than the whole model */
    } else if (sched_has_outer(&s)) {
        outer = N;
    }
    out->outer_parameters_bytes = MEM_OUTER_BYTES * outer;
    out->outer_momentum_bytes = MEM_MOMENTUM_BYTES * outer;
    out->accelerator_bytes = out->parameters_bytes + out->gradients_bytes +
                             out->inner_optimizer_bytes +
                             out->outer_parameters_bytes +
                             out->outer_momentum_bytes;
    return 0;
}

double mem_bytes_per_param(const mem_worker *m) {
    return m->params ? (double)m->accelerator_bytes / (double)m->params : 0;
}

void mem_write_json(jw *w, const char *key, const mem_worker *m) {
    jw_object(w, key);
    jw_u64(w, "parameters_bytes", m->parameters_bytes);
    jw_u64(w, "gradients_bytes", m->gradients_bytes);
    jw_u64(w, "inner_optimizer_bytes", m->inner_optimizer_bytes);
    jw_u64(w, "outer_parameters_bytes", m->outer_parameters_bytes);
    jw_u64(w, "outer_momentum_bytes", m->outer_momentum_bytes);
    jw_u64(w, "accelerator_bytes", m->accelerator_bytes);
    jw_num(w, "bytes_per_param", mem_bytes_per_param(m));
    jw_bool(w, "offload_outer", m->offload);
    if (m->offload) {
        jw_u64(w, "host_bytes", m->host_bytes);
        jw_int(w, "fragments_in_flight", m->in_flight);
        jw_u64(w, "fragment_params", m->fragment_params);
    }
    jw_end(w);
}
