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
 * P does not divide H.  With P > H several fragments sync after one step,
 * and a position whose offset floor((q+1)*H/P) is 0 syncs after H, 2H, ...
 * (its offset is taken as H): every offset lies in 1..H.
 *
 * Overlap.  "inner" (the Streaming DiLoCo paper): the pseudo-gradient is
 * taken tau steps before the sync step, after floor((q+1)*H/P) + k*H - tau,
 * and applied after the sync step; 0 <= tau < H, so several fragments may
 * be in flight at once.  "outer" and "eager" (the eager-updates paper's
 * 1-outer-step overlap): it is taken after the sync step itself and
 * applied H steps later, at the fragment's next sync.  The delay from
 * take to apply is sched_delay(): tau, or H.  A sync whose apply step lies
 * past the run's last step is not taken.
 *
 * Rules.  "paper" (the default) allows what the papers do: P up to the
 * number of layers, tau up to H - 1.  "torchft" keeps the narrower rule of
 * torchft's implementation: P <= H and tau < floor(H/P).
 *
 * Data-parallel is the degenerate schedule H = 1, P = 1, tau = 0 (a sync of
 * the whole model after every step); DiLoCo is P = 1, tau = 0, alpha = 0
 * (every replica takes the new outer parameters).
 *
 * SPARTA (sparse parameter averaging): after every step t a random subset
 * S_t of each tensor's parameters (sched_subset: the same on every
 * replica) is averaged and merged after step t + tau.  As a schedule it
 * is H = P = tau + 1 strided "slots": the subset taken after step t is
 * slot (t + tau - 1) mod (tau + 1), applied after step t + tau, so one
 * sync is taken and one applied after every step and a slot's next sync
 * is taken only once its last one is applied.  Each slot is the whole
 * subset (every tensor), not a set of layers; its layers only say which
 * reductions the timing uses (payload.h).  No outer step: the merge is
 * theta[S] = alpha * local[S] + (1 - alpha) * mean[S].
 */
#ifndef DILOSIM_SCHEDULE_H
#define DILOSIM_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    SCHED_DP,
    SCHED_DILOCO,
    SCHED_STREAMING,
    SCHED_SPARTA
} sched_method;

/* Sequential: fragment j holds layers [j*L/P, (j+1)*L/P) (rounded down at
 * both ends).  Strided: fragment j holds layers j, j+P, j+2P, ...
 * Sliced: every fragment holds 1/P of every layer (the model of the
 * DiLoCo bandwidth simulator's web page), values
 * [floor(j*n/P), floor((j+1)*n/P)) of a layer of n; timing only, and
 * under the torchft rule's P <= H, tau < floor(H/P) with inner overlap, so
 * a layer has one slice in flight at a time. */
typedef enum { SCHED_SEQUENTIAL, SCHED_STRIDED, SCHED_SLICED } sched_layout;

/* Ascending: fragment j syncs at position j (0, 1, ..., P-1).
 * Rotated: fragments sync in the order 1, 2, ..., P-1, 0. */
typedef enum { SCHED_ASCENDING, SCHED_ROTATED } sched_order;

/* How long a sync may take: tau inner steps, or until the fragment's next
 * sync (outer: the average applied one outer step late; eager: the
 * replica's own fresh pseudo-gradient stands in for its stale term). */
typedef enum { SCHED_INNER, SCHED_OUTER, SCHED_EAGER } sched_overlap;

/* Which (H, P, tau) are allowed: see "Rules" above. */
typedef enum { SCHED_RULE_PAPER, SCHED_RULE_TORCHFT } sched_rule;

/* Sparta's default subset fraction p: 0.005 of the parameters per step,
 * the SPARTA write-up's setting. */
#define SCHED_SUBSET_DEFAULT 0.005

typedef struct {
    sched_method method;
    int layers;   /* L >= 1 */
    int H;        /* inner steps between two syncs of one fragment */
    int P;        /* fragments, 1 <= P <= L (torchft rule: P <= H) */
    int tau;      /* overlap delay, 0 <= tau < H (torchft rule:
                       tau < floor(H/P)); 0 with outer or eager overlap */
    double alpha; /* merge weight of the local parameters, in [0, 1] */
    sched_layout layout;
    sched_order order;
    sched_overlap overlap;
    sched_rule rule;
    double subset; /* sparta: the fraction p of each tensor averaged after
                      every step, in (0, 1] */
} sched_spec;

/* Normalises a spec in place (DP: H = P = 1, tau = 0, alpha = 0, inner
 * overlap; DiLoCo: P = 1, tau = 0, alpha = 0; sparta: H = P = tau + 1,
 * strided, ascending, paper rule, and tau in 0..layers-1) and checks it.
 * Returns 0, or -1 with a message in err (P > layers, tau >= H, tau with
 * outer overlap, alpha outside [0,1]; under the torchft rule P > H or
 * tau >= floor(H/P); sparta: overlap other than inner, tau >= layers,
 * subset outside (0, 1]). */
int sched_normalize(sched_spec *s, char *err, size_t errlen);

/* Is the spec under the narrow rule (torchft's, which layout sliced needs
 * too): P <= H, tau < floor(H/P)?  Of a normalised spec. */
int sched_narrow(const sched_spec *s);

/* The bound tau stays below: floor(H/P) under the narrow rule, else H. */
int sched_tau_cap(const sched_spec *s);

/* Steps from a sync's take to its apply: tau (inner overlap) or H. */
int sched_delay(const sched_spec *s);

/* Fragment j's sync step within a period, in 1..H: it is applied after
 * the steps t >= 1 with t = sched_offset(s, j) (mod H). */
int sched_offset(const sched_spec *s, int j);

/* Where step t (t >= 1) lies in its period, in 1..H: the offset of the
 * fragments applied after it. */
int sched_phase(const sched_spec *s, int64_t t);

/* The fragment id (0..P-1) that holds layer l under the layout; -1 when
 * sliced (every fragment holds a slice of it). */
int sched_layer_fragment(const sched_spec *s, int l);

/* Fills out[] with the layers of fragment j in increasing order and
 * returns their count (out must hold `layers` ints; sliced: all). */
int sched_fragment_layers(const sched_spec *s, int j, int *out);

/* The fragment id synced at position q of the order, and its inverse. */
int sched_fragment_at(const sched_spec *s, int q);
int sched_position_of(const sched_spec *s, int j);

/* The inner step after which the k-th sync (k >= 0) of fragment j is
 * applied: sched_offset(j) + k*H. */
int64_t sched_apply_step(const sched_spec *s, int j, int64_t k);

/* The fragments applied after step t (t >= 1), in sync order, into out
 * (room for P ints; NULL to count only); returns their number, 0 if none
 * (at most 1 when P <= H). */
int sched_applied_after(const sched_spec *s, int64_t t, int *out);

/* The fragments whose pseudo-gradients are taken after step t (t >= 1),
 * those applied after step t + sched_delay(), into out as above; returns
 * their number.  Syncs whose apply step exceeds `last_step` are not taken
 * (pass INT64_MAX for no limit). */
int sched_taken_after(const sched_spec *s, int64_t t, int64_t last_step,
                      int *out);

/* The phase (1..H) of the fragments taken after step t, or 0 when none
 * can be (t < 1, or their apply step past last_step): fragment j is taken
 * after t exactly when sched_offset(j) equals it and some fragment has
 * that offset. */
int sched_take_phase(const sched_spec *s, int64_t t, int64_t last_step);

/* Does the method keep outer parameters (DiLoCo, streaming)? */
int sched_has_outer(const sched_spec *s);

/* Sparta: the values k of a tensor of n that a subset holds:
 * max(1, ceil(p * n)), at most n (0 for n 0), the rounding of topk's
 * count (codec.h): a product within a relative 1e-9 of a whole number
 * counts as that number. */
uint64_t sched_subset_count(double p, uint64_t n);

/* Sparta: the subset of the sync taken after step `step` of the tensor
 * (or timing layer) `part` of n values: k = sched_subset_count(p, n)
 * distinct indices in 0..n-1, uniform, in increasing order, into out
 * (room for k).  A pure function of (seed, step, part, n, p): a partial
 * Fisher-Yates shuffle of 0..n-1 (perm, room for n, is scratch) driven
 * by the GSL stream rng_stream(seed ^ rng_mix(step), RNG_SUBSET, part).
 * Returns k, or -1 when n >= 2^32 or the stream cannot be allocated. */
int64_t sched_subset(uint64_t seed, int64_t step, uint32_t part, uint64_t n,
                     double p, uint32_t *perm, uint32_t *out);

/* Parses/names the enums ("dp" | "diloco" | "streaming" | "sparta",
 * "sequential" |
 * "strided" | "sliced", "ascending" | "rotated", "inner" | "outer" | "eager",
 * "paper" | "torchft"); parse returns 0 or -1. */
int sched_parse_method(const char *name, sched_method *out);
int sched_parse_layout(const char *name, sched_layout *out);
int sched_parse_order(const char *name, sched_order *out);
int sched_parse_overlap(const char *name, sched_overlap *out);
int sched_parse_rule(const char *name, sched_rule *out);
const char *sched_method_name(sched_method m);
const char *sched_layout_name(sched_layout l);
const char *sched_order_name(sched_order o);
const char *sched_overlap_name(sched_overlap o);
const char *sched_rule_name(sched_rule r);

#endif
