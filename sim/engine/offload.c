/*
 * offload.c -- host copies of the outer state and the accelerator memory
 * they occupy (see offload.h).
 *
 * Every residency of a fragment on an accelerator is an interval [start,
 * end) with its bytes; end is INT64_MAX until the copy-out is known.  The
 * peak is a sweep over the interval ends in time order (an end before a
 * start at the same instant: the memory is freed first).
 */
#include "sim/engine/offload.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    int64_t start, end;
    uint64_t bytes;
} resident;

typedef struct {
    int64_t in_free, out_free; /* when each copy engine is free */
    resident *v;               /* every residency so far */
    int n, cap;
} engine;

struct offload {
    int workers, fragments;
    double rate;
    engine *e;
    int *open;        /* per worker and fragment: index of its residency on
                         the accelerator, -1 for none */
    int64_t *in_end;  /* per worker and fragment: end of its latest copy-in */
    int64_t *out_end; /* ... and of its latest copy-out */
};

offload *off_new(int workers, int fragments, double bytes_per_s) {
    offload *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    size_t n = (size_t)workers * (size_t)fragments;
    o->workers = workers;
    o->fragments = fragments;
    o->rate = bytes_per_s;
    o->e = calloc((size_t)workers, sizeof *o->e);
    o->open = malloc(n * sizeof *o->open);
    o->in_end = calloc(n, sizeof *o->in_end);
    o->out_end = calloc(n, sizeof *o->out_end);
    if (!o->e || !o->open || !o->in_end || !o->out_end) {
        off_free(o);
        return NULL;
    }
    for (size_t k = 0; k < n; k++) o->open[k] = -1;
    return o;
}

void off_free(offload *o) {
    if (!o) return;
    if (o->e)
        for (int w = 0; w < o->workers; w++) free(o->e[w].v);
    free(o->e);
    free(o->open);
    free(o->in_end);
    free(o->out_end);
    free(o);
}

/* ns of a copy of b bytes, to the nearest ns (a copy far shorter than a
 * ns takes none: the limit of instant copies is exact). */
static int64_t copy_ns(const offload *o, uint64_t b) {
    return (int64_t)llround((double)b / o->rate * 1e9);
}

static int64_t max64(int64_t a, int64_t b) {
    return a > b ? a : b;
}

int64_t off_copy_in(offload *o, int w, int f, uint64_t bytes, int64_t now) {
    int k = w * o->fragments + f;
    if (o->open[k] >= 0) return o->in_end[k];
    engine *e = &o->e[w];
    if (e->n == e->cap) {
        int cap = e->cap ? 2 * e->cap : 16;
        resident *v = realloc(e->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        e->v = v;
        e->cap = cap;
    }
    int64_t start = max64(max64(now, e->in_free), o->out_end[k]);
    e->v[e->n] = (resident){start, INT64_MAX, bytes};
    o->open[k] = e->n++;
    e->in_free = start + copy_ns(o, bytes);
    return o->in_end[k] = e->in_free;
}

int64_t off_ready_at(const offload *o, int w, int f) {
    return o->in_end[w * o->fragments + f];
}

void off_copy_out(offload *o, int w, int f, int64_t now) {
    int k = w * o->fragments + f;
    if (o->open[k] < 0) return;
    engine *e = &o->e[w];
    resident *r = &e->v[o->open[k]];
    int64_t start = max64(max64(now, e->out_free), o->in_end[k]);
    e->out_free = o->out_end[k] = r->end = start + copy_ns(o, r->bytes);
    o->open[k] = -1;
}

static int by_time(const void *a, const void *b) {
    const int64_t *x = a, *y = b; /* {instant, +1 start / 0 end} */
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

uint64_t off_peak_bytes(const offload *o, int w) {
    const engine *e = &o->e[w];
    int64_t(*ev)[3] = malloc((size_t)(2 * e->n + 1) * sizeof *ev);
    if (!ev) return 0;
    int n = 0;
    for (int i = 0; i < e->n; i++) {
        ev[n][0] = e->v[i].start, ev[n][1] = 1,
        ev[n++][2] = (int64_t)e->v[i].bytes;
        if (e->v[i].end != INT64_MAX)
            ev[n][0] = e->v[i].end, ev[n][1] = 0,
            ev[n++][2] = (int64_t)e->v[i].bytes;
    }
    qsort(ev, (size_t)n, sizeof *ev, by_time);
    uint64_t cur = 0, peak = 0;
    for (int i = 0; i < n; i++) {
        if (ev[i][1]) cur += (uint64_t)ev[i][2];
        else cur -= (uint64_t)ev[i][2];
        if (cur > peak) peak = cur;
    }
    free(ev);
    return peak;
}
