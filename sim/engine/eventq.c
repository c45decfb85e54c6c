/*
 * eventq.c -- array binary heap of events keyed by (time, class, seq).
 *
 * Events are stored by value in one growing array: no allocation per
 * event, and sift operations move 40-byte records within a cache-friendly
 * block.  seq makes every key unique, so the pop order is total and does
 * not depend on the heap's internal layout.
 */
#include "sim/engine/eventq.h"

#include <stdlib.h>

#include "sim/base/msg.h"

static inline int less(const eq_event *x, const eq_event *y) {
    if (x->time != y->time) return x->time < y->time;
    if (x->cls != y->cls) return x->cls < y->cls;
    return x->seq < y->seq;
}

int eq_init(eq_queue *q, uint32_t capacity_hint) {
    q->len = 0;
    q->next_seq = 0;
    q->cap = capacity_hint ? capacity_hint : 64;
    q->heap = malloc((size_t)q->cap * sizeof *q->heap);
    return q->heap ? 0 : MSG_ENOMEM;
}

void eq_free(eq_queue *q) {
    free(q->heap);
    q->heap = NULL;
    q->len = q->cap = 0;
}

int eq_push(eq_queue *q, int64_t time, uint32_t cls, uint32_t kind, int32_t a,
            uint32_t b, uint64_t c) {
    if (q->len == q->cap) {
        if (q->cap > UINT32_MAX / 2) return MSG_ENOMEM;
        uint32_t cap = q->cap * 2;
        eq_event *h = realloc(q->heap, (size_t)cap * sizeof *h);
        if (!h) return MSG_ENOMEM;
        q->heap = h;
        q->cap = cap;
    }
    eq_event ev = {time, cls, kind, q->next_seq++, a, b, c};
    eq_event *h = q->heap;
    uint32_t i = q->len++;
    while (i > 0) { /* sift up: move parents down until ev fits */
        uint32_t p = (i - 1) / 2;
        if (!less(&ev, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = ev;
    return 0;
}

int eq_pop(eq_queue *q, eq_event *ev) {
    if (q->len == 0) return 0;
    eq_event *h = q->heap;
    *ev = h[0];
    eq_event last = h[--q->len];
    uint32_t n = q->len, i = 0;
    for (;;) { /* sift down the former last element from the root */
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && less(&h[c + 1], &h[c])) c++;
        if (!less(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (n) h[i] = last;
    return 1;
}
