/*
 * schedule.c -- the fragment schedule shared by timing and numerics.
 *
 * Everything here is a pure function of a sched_spec; see schedule.h for
 * the conventions (steps count from 1, positions versus fragment ids).
 */
#include "sim/base/schedule.h"
#include "sim/base/codec.h"
#include "sim/base/msg.h"
#include "sim/base/rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sparta: tau + 1 strided slots, one taken and one applied after every
 * step; 0 or -1 with the message. */
static int sparta_normalize(sched_spec *s, char *err, size_t errlen) {
    if (s->overlap != SCHED_INNER) {
        snprintf(err, errlen,
                 "sparta overlaps by tau steps (expected overlap inner, "
                 "got %s)",
                 sched_overlap_name(s->overlap));
        return -1;
    }
    if (s->layers >= 1 && (s->tau < 0 || s->tau >= s->layers)) {
        snprintf(err, errlen,
                 "tau must be in 0..layers-1 = %d with method sparta "
                 "(got %d)",
                 s->layers - 1, s->tau);
        return -1;
    }
    if (!(s->subset > 0 && s->subset <= 1)) {
        snprintf(err, errlen, "subset_fraction must be in (0, 1] (got %g)",
                 s->subset);
        return -1;
    }
    s->H = s->P = s->tau + 1;
    s->layout = SCHED_STRIDED;
    s->order = SCHED_ASCENDING;
    s->rule = SCHED_RULE_PAPER;
    return 0;
}

int sched_normalize(sched_spec *s, char *err, size_t errlen) {
    if (s->method == SCHED_DP) {
        s->H = 1, s->P = 1, s->tau = 0, s->alpha = 0;
        s->overlap = SCHED_INNER;
    } else if (s->method == SCHED_DILOCO) {
        s->P = 1, s->tau = 0, s->alpha = 0; /* every replica takes the
                                               new outer parameters */
    } else if (s->method == SCHED_SPARTA && sparta_normalize(s, err, errlen)) {
        return -1;
    }
    if (s->layout == SCHED_SLICED && s->P == 1)
        s->layout = SCHED_STRIDED; /* one fragment: every layout is one */
    if (s->layout == SCHED_SLICED && s->overlap != SCHED_INNER) {
        snprintf(err, errlen, "layout sliced needs inner overlap (got %s)",
                 sched_overlap_name(s->overlap));
        return -1;
    }
    int narrow = sched_narrow(s);
    if (s->layers < 1) {
        snprintf(err, errlen, "layers must be >= 1 (got %d)", s->layers);
        return -1;
    }
    if (s->H < 1) {
        snprintf(err, errlen, "H must be >= 1 (got %d)", s->H);
        return -1;
    }
    if (narrow && (s->P < 1 || s->P > s->H)) {
        snprintf(err, errlen, "fragments must be in 1..H = %d %s (got %d)",
                 s->H,
                 s->layout == SCHED_SLICED ? "with layout sliced"
                                           : "under the torchft rule",
                 s->P);
        return -1;
    }
    if (s->P < 1 || s->P > s->layers) {
        snprintf(err, errlen, "fragments must be in 1..layers = %d (got %d)",
                 s->layers, s->P);
        return -1;
    }
    if (s->overlap != SCHED_INNER && s->tau != 0) {
        snprintf(err, errlen, "tau must be 0 with %s overlap (got %d)",
                 sched_overlap_name(s->overlap), s->tau);
        return -1;
    }
    int cap = sched_tau_cap(s);
    if (s->tau < 0 || s->tau >= cap) {
        snprintf(err, errlen, "tau must be in 0..%s-1 = %d (got %d)",
                 narrow ? "floor(H/P)" : "H", cap - 1, s->tau);
        return -1;
    }
    if (!(s->alpha >= 0 && s->alpha <= 1)) {
        snprintf(err, errlen, "alpha must be in [0, 1] (got %g)", s->alpha);
        return -1;
    }
    return 0;
}

int sched_narrow(const sched_spec *s) {
    /* sliced: one slice of a layer in flight at a time */
    return s->rule == SCHED_RULE_TORCHFT || s->layout == SCHED_SLICED;
}

int sched_tau_cap(const sched_spec *s) {
    return sched_narrow(s) ? s->H / s->P : s->H;
}

int sched_delay(const sched_spec *s) {
    return s->overlap == SCHED_INNER ? s->tau : s->H;
}

int sched_layer_fragment(const sched_spec *s, int l) {
    if (s->layout == SCHED_STRIDED) return l % s->P;
    if (s->layout == SCHED_SLICED) return -1;
    /* Fragment j holds [floor(j*L/P), floor((j+1)*L/P)): the j with
     * j < (l+1)*P/L <= j+1. */
    return (int)(((int64_t)(l + 1) * s->P - 1) / s->layers);
}

int sched_fragment_layers(const sched_spec *s, int j, int *out) {
    int n = 0;
    for (int l = 0; l < s->layers; l++)
        if (s->layout == SCHED_SLICED || sched_layer_fragment(s, l) == j)
            out[n++] = l;
    return n;
}

int sched_fragment_at(const sched_spec *s, int q) {
    return s->order == SCHED_ROTATED ? (q + 1) % s->P : q;
}

int sched_position_of(const sched_spec *s, int j) {
    return s->order == SCHED_ROTATED ? (j + s->P - 1) % s->P : j;
}

/* Offset of position q within a period: floor((q+1)*H/P), or H where
 * that is 0 (P > H); in 1..H. */
static int offset(const sched_spec *s, int q) {
    int o = (int)((int64_t)(q + 1) * s->H / s->P);
    return o ? o : s->H;
}

int sched_offset(const sched_spec *s, int j) {
    return offset(s, sched_position_of(s, j));
}

int sched_phase(const sched_spec *s, int64_t t) {
    return (int)((t - 1) % s->H) + 1;
}

int64_t sched_apply_step(const sched_spec *s, int j, int64_t k) {
    return sched_offset(s, j) + k * s->H;
}

/* Positions q with floor((q+1)H/P) = r are those with q+1 in
 * [ceil(rP/H), ceil((r+1)P/H) - 1]; for r = H, add those where the floor
 * is 0, q+1 in [1, ceil(P/H) - 1].  Ascending positions. */
static int positions_at(const sched_spec *s, int r, int *out) {
    int64_t H = s->H, P = s->P, n = 0;
    if (r == H)
        for (int64_t q1 = 1; q1 <= (P + H - 1) / H - 1; q1++, n++)
            if (out) out[n] = sched_fragment_at(s, (int)q1 - 1);
    int64_t lo = (r * P + H - 1) / H, hi = ((r + 1) * P + H - 1) / H - 1;
    if (lo < 1) lo = 1;
    if (hi > P) hi = P;
    for (int64_t q1 = lo; q1 <= hi; q1++, n++)
        if (out) out[n] = sched_fragment_at(s, (int)q1 - 1);
    return (int)n;
}

int sched_applied_after(const sched_spec *s, int64_t t, int *out) {
    return t < 1 ? 0 : positions_at(s, sched_phase(s, t), out);
}

int sched_take_phase(const sched_spec *s, int64_t t, int64_t last_step) {
    int d = sched_delay(s);
    if (t < 1 || t > last_step - d) return 0;
    int r = sched_phase(s, t + d);
    return positions_at(s, r, NULL) ? r : 0;
}

int sched_taken_after(const sched_spec *s, int64_t t, int64_t last_step,
                      int *out) {
    int r = sched_take_phase(s, t, last_step);
    return r ? positions_at(s, r, out) : 0;
}

int sched_has_outer(const sched_spec *s) {
    return s->method == SCHED_DILOCO || s->method == SCHED_STREAMING;
}

uint64_t sched_subset_count(double p, uint64_t n) {
    codec_spec c = CODEC_SPEC(CODEC_TOPK, 0);
    c.k_fraction = p;
    return codec_topk_count(c, n);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int64_t sched_subset(uint64_t seed, int64_t step, uint32_t part, uint64_t n,
                     double p, uint32_t *perm, uint32_t *out) {
    if (n >= (uint64_t)1 << 32) return -1;
    uint64_t k = sched_subset_count(p, n);
    gsl_rng *r = rng_stream(seed ^ rng_mix((uint64_t)step), RNG_SUBSET, part);
    if (!r) return -1;
    for (uint64_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    for (uint64_t i = 0; i < k; i++) { /* perm[i] from perm[i..n-1] */
        uint64_t j = i + gsl_rng_uniform_int(r, (unsigned long)(n - i));
        uint32_t v = perm[j];
        perm[j] = perm[i];
        perm[i] = v;
        out[i] = v;
    }
    gsl_rng_free(r);
    qsort(out, (size_t)k, sizeof *out, cmp_u32);
    return (int64_t)k;
}

static const char *const method_names[] = {"dp", "diloco", "streaming",
                                           "sparta"};
static const char *const layout_names[] = {"sequential", "strided", "sliced"};
static const char *const order_names[] = {"ascending", "rotated"};
static const char *const overlap_names[] = {"inner", "outer", "eager"};
static const char *const rule_names[] = {"paper", "torchft"};

#define PARSER(fn, type, table)                                                \
    int fn(const char *name, type *out) {                                      \
        int i = msg_parse_name(name, table, sizeof table / sizeof *table);     \
        if (i < 0) return -1;                                                  \
        *out = (type)i;                                                        \
        return 0;                                                              \
    }
PARSER(sched_parse_method, sched_method, method_names)
PARSER(sched_parse_layout, sched_layout, layout_names)
PARSER(sched_parse_order, sched_order, order_names)
PARSER(sched_parse_overlap, sched_overlap, overlap_names)
PARSER(sched_parse_rule, sched_rule, rule_names)

const char *sched_method_name(sched_method m) {
    return method_names[m];
}
const char *sched_layout_name(sched_layout l) {
    return layout_names[l];
}
const char *sched_order_name(sched_order o) {
    return order_names[o];
}
const char *sched_overlap_name(sched_overlap o) {
    return overlap_names[o];
}
const char *sched_rule_name(sched_rule r) {
    return rule_names[r];
}
