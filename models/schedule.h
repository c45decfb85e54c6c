/*
 * schedule.h -- which parameters are synchronised when: the single source
 * of truth shared by the timing half (sim/) and the numerics (models/).
 *
 * Steps are counted from 1: "after step t" means after t inner steps.
 * Fragments are numbered by position in the sync order, q = 0..P-1; the
 * fragment at position q holds the layers given by the layout and is
 * applied (outer step and merge) after the inner steps
 *
 *     floor((q+1)*H/P) + k*H,   k = 0, 1, ...
 *
 * so one fragment syncs every H/P steps and each keeps period H even where
 * P does not divide H.  Its pseudo-gradient is taken tau steps earlier,
 * after step floor((q+1)*H/P) + k*H - tau.
 *
 * Data-parallel is the degenerate schedule H = 1, P = 1, tau = 0 (a sync of
 * the whole model after every step); DiLoCo is P = 1, tau = 0, alpha = 0
 * (every replica takes the new outer parameters).
 */
#ifndef DILOSIM_SCHEDULE_H
#define DILOSIM_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

typedef enum { SCHED_DP, SCHED_DILOCO, SCHED_STREAMING } sched_method;

/* Sequential: fragment j holds layers [j*L/P, (j+1)*L/P) (rounded down at
 * both ends).  Strided: fragment j holds layers j, j+P, j+2P, ... */
typedef enum { SCHED_SEQUENTIAL, SCHED_STRIDED } sched_layout;

/* Ascending: fragment j syncs at position j (0, 1, ..., P-1).
 * Rotated: fragments sync in the order 1, 2, ..., P-1, 0. */
typedef enum { SCHED_ASCENDING, SCHED_ROTATED } sched_order;

typedef struct {
    sched_method method;
    int layers;     /* L >= 1 */
    int H;          /* inner steps between two syncs of one fragment */
    int P;          /* fragments, 1 <= P <= min(H, L) */
    int tau;        /* overlap delay, 0 <= tau < floor(H/P) */
    double alpha;   /* merge weight of the local parameters, in [0, 1] */
    sched_layout layout;
    sched_order order;
} sched_spec;

/* Normalises a spec in place (DP: H = P = 1, tau = 0, alpha = 0; DiLoCo:
 * P = 1, tau = 0, alpha = 0) and checks it.  Returns 0, or -1 with a message in err
 * (H < P, tau >= floor(H/P), P > layers, alpha outside [0,1], ...). */
int sched_normalize(sched_spec *s, char *err, size_t errlen);

/* The fragment id (0..P-1) that holds layer l under the layout. */
int sched_layer_fragment(const sched_spec *s, int l);

/* Fills out[] with the layers of fragment j in increasing order and
 * returns their count (out must hold `layers` ints). */
int sched_fragment_layers(const sched_spec *s, int j, int *out);

/* The fragment id synced at position q of the order, and its inverse. */
int sched_fragment_at(const sched_spec *s, int q);
int sched_position_of(const sched_spec *s, int j);

/* The inner step after which the k-th sync (k >= 0) of fragment j is
 * applied: floor((q+1)*H/P) + k*H with q = sched_position_of(j). */
int64_t sched_apply_step(const sched_spec *s, int j, int64_t k);

/* The fragment applied after step t (t >= 1), or -1 if none. */
int sched_applied_after(const sched_spec *s, int64_t t);

/* The fragment whose pseudo-gradient is taken after step t (t >= 1), that
 * is applied after step t + tau, or -1 if none.  Syncs whose apply step
 * exceeds `last_step` are not taken (pass INT64_MAX for no limit). */
int sched_taken_after(const sched_spec *s, int64_t t, int64_t last_step);

/* Parses/names the enums ("dp" | "diloco" | "streaming", "sequential" |
 * "strided", "ascending" | "rotated"); parse returns 0 or -1. */
int sched_parse_method(const char *name, sched_method *out);
int sched_parse_layout(const char *name, sched_layout *out);
int sched_parse_order(const char *name, sched_order *out);
const char *sched_method_name(sched_method m);
const char *sched_layout_name(sched_layout l);
const char *sched_order_name(sched_order o);

#endif
