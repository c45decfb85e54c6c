/*
 * eventq.h -- the simulator's clock: a priority queue of timed events.
 *
 * An array binary heap of plain-data events ordered by (time, class, seq).
 * Time is an integer number of nanoseconds.  Events at the same instant
 * run in increasing class (see CLS_* in world.h for the order the
 * simulator uses), then in the order they were pushed (seq), so a run is
 * deterministic whatever the heap layout.
 */
#ifndef DILOSIM_EVENTQ_H
#define DILOSIM_EVENTQ_H

#include <stdint.h>

typedef struct {
    int64_t time;  /* ns */
    uint32_t cls;  /* tie-break class at equal time, smaller first */
    uint32_t kind; /* what to do; meaning is the caller's */
    uint64_t seq;  /* push order, assigned by eq_push */
    int32_t a;     /* caller payload */
    uint32_t b;
    uint64_t c;
} eq_event;

typedef struct {
    eq_event *heap;
    uint32_t len, cap;
    uint64_t next_seq;
} eq_queue;

/* Initialises an empty queue. Returns 0, or MSG_ENOMEM (sim/base/msg.h). */
int eq_init(eq_queue *q, uint32_t capacity_hint);
void eq_free(eq_queue *q);

/* Pushes an event (its seq is assigned here). Returns 0, or MSG_ENOMEM
 * (the queue is unchanged). */
int eq_push(eq_queue *q, int64_t time, uint32_t cls, uint32_t kind, int32_t a,
            uint32_t b, uint64_t c);

/* Pops the least event into *ev. Returns 1, or 0 when the queue is empty. */
int eq_pop(eq_queue *q, eq_event *ev);

/* The least event without removing it, or NULL when empty. */
static inline const eq_event *eq_peek(const eq_queue *q) {
    return q->len ? &q->heap[0] : 0;
}

#endif
