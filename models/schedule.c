/*
 * schedule.c -- the fragment schedule shared by timing and numerics.
 *
 * Everything here is a pure function of a sched_spec; see schedule.h for
 * the conventions (steps count from 1, positions versus fragment ids).
 */
#include "schedule.h"
#include "msg.h"

#include <stdio.h>
#include <string.h>

int sched_normalize(sched_spec *s, char *err, size_t errlen) {
    if (s->method == SCHED_DP) {
        s->H = 1, s->P = 1, s->tau = 0, s->alpha = 0;
    } else if (s->method == SCHED_DILOCO) {
        s->P = 1, s->tau = 0, s->alpha = 0; /* every replica takes the
                                               new outer parameters */
    }
    if (s->layers < 1) {
        snprintf(err, errlen, "layers must be >= 1 (got %d)", s->layers);
        return -1;
    }
    if (s->H < 1) {
        snprintf(err, errlen, "H must be >= 1 (got %d)", s->H);
        return -1;
    }
    if (s->P < 1 || s->P > s->H) {
        snprintf(err, errlen, "fragments must be in 1..H = %d (got %d)",
                 s->H, s->P);
        return -1;
    }
    if (s->P > s->layers) {
        snprintf(err, errlen, "fragments must be <= layers = %d (got %d)",
                 s->layers, s->P);
        return -1;
    }
    if (s->tau < 0 || s->tau >= s->H / s->P) {
        snprintf(err, errlen, "tau must be in 0..floor(H/P)-1 = %d (got %d)",
                 s->H / s->P - 1, s->tau);
        return -1;
    }
    if (!(s->alpha >= 0 && s->alpha <= 1)) {
        snprintf(err, errlen, "alpha must be in [0, 1] (got %g)", s->alpha);
        return -1;
    }
    return 0;
}

int sched_layer_fragment(const sched_spec *s, int l) {
    if (s->layout == SCHED_STRIDED) return l % s->P;
    /* Fragment j holds [floor(j*L/P), floor((j+1)*L/P)): the j with
     * j < (l+1)*P/L <= j+1. */
    return (int)(((int64_t)(l + 1) * s->P - 1) / s->layers);
}

int sched_fragment_layers(const sched_spec *s, int j, int *out) {
    int n = 0;
    for (int l = 0; l < s->layers; l++)
        if (sched_layer_fragment(s, l) == j) out[n++] = l;
    return n;
}

int sched_fragment_at(const sched_spec *s, int q) {
    return s->order == SCHED_ROTATED ? (q + 1) % s->P : q;
}

int sched_position_of(const sched_spec *s, int j) {
    return s->order == SCHED_ROTATED ? (j + s->P - 1) % s->P : j;
}

/* Offset of position q within a period: floor((q+1)*H/P), in 1..H. */
static int64_t offset(const sched_spec *s, int q) {
    return (int64_t)(q + 1) * s->H / s->P;
}

int64_t sched_apply_step(const sched_spec *s, int j, int64_t k) {
    return offset(s, sched_position_of(s, j)) + k * s->H;
}

int sched_applied_after(const sched_spec *s, int64_t t) {
    if (t < 1) return -1;
    int64_t r = t % s->H;
    if (r == 0) r = s->H; /* offsets lie in 1..H */
    /* The unique q with floor((q+1)H/P) == r, if any: q+1 = ceil(r*P/H). */
    int64_t q1 = (r * s->P + s->H - 1) / s->H;
    if (q1 < 1 || q1 > s->P || offset(s, (int)q1 - 1) != r) return -1;
    return sched_fragment_at(s, (int)q1 - 1);
}

int sched_taken_after(const sched_spec *s, int64_t t, int64_t last_step) {
    if (t < 1 || t > last_step - s->tau) return -1;
    return sched_applied_after(s, t + s->tau);
}

static const char *const method_names[] = {"dp", "diloco", "streaming"};
static const char *const layout_names[] = {"sequential", "strided"};
static const char *const order_names[] = {"ascending", "rotated"};

#define PARSER(fn, type, table)                                      \
    int fn(const char *name, type *out) {                           \
        int i = msg_parse_name(name, table,                         \
                               sizeof table / sizeof *table);     \
        if (i < 0) return -1;                                       \
        *out = (type)i;                                             \
        return 0;                                                   \
    }
PARSER(sched_parse_method, sched_method, method_names)
PARSER(sched_parse_layout, sched_layout, layout_names)
PARSER(sched_parse_order, sched_order, order_names)

const char *sched_method_name(sched_method m) { return method_names[m]; }
const char *sched_layout_name(sched_layout l) { return layout_names[l]; }
const char *sched_order_name(sched_order o) { return order_names[o]; }
