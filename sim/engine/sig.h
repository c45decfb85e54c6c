/*
 * sig.h -- state signatures: byte strings that describe what decides a
 * simulation's future, for the engine's exact fast-forward (fastfwd.c).
 *
 * Each module appends its state with every instant made relative to the
 * current one (and every step to a reference step), so two states whose
 * futures are the same up to a shift of time and steps give equal bytes.
 * Doubles go in as their bits: equal means bit for bit.
 */
#ifndef DILOSIM_SIG_H
#define DILOSIM_SIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"

typedef struct {
    uint8_t *p;
    size_t len, cap;
    int oom; /* an append failed: the signature is unusable */
} sig_buf;

/* Appends n bytes at v (nothing once out of memory). */
static inline void sig_put(sig_buf *b, const void *v, size_t n) {
    if (b->oom) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, v, n);
    b->len += n;
}

static inline void sig_i64(sig_buf *b, int64_t x) {
    sig_put(b, &x, sizeof x);
}

#endif
