/*
 * compress.h -- the trainer's stateful compressors: PowerSGD (Vogels et
 * al. 2019: rank r, one power iteration, warm start, error feedback) and
 * DeMo (Peng et al. 2024: a decayed residual per replica, its chunked DCT
 * with the largest coefficients sent).  The wire formats and their sizes
 * are sim/base/codec.h's; this module keeps the state between syncs.
 *
 * PowerSGD, per tensor of rows x cols (codec_lowrank_shape) sent as its
 * factors, at a sync over the members m (in replica order):
 *   encode (each replica):  M_m = x_m + e_m; P_m = M_m Q          (sent)
 *   reduce (once):          P = mean_m P_m; P's columns made orthonormal
 *                           (modified Gram-Schmidt in double, columns in
 *                           order 0..r-1, a column of norm 0 set to 0);
 *                           Q_m = M_m^T P (sent); Q = mean_m Q_m;
 *                           decoded = P Q^T (codec_decode); e_m = M_m -
 *                           decoded; Q is kept for the tensor's next sync.
 * Products are summed in double and rounded once to FP32; means are FP32
 * sums in replica order divided by the count.  The first Q is N(0, 1)
 * from the GSL stream (seed, RNG_COMPRESS, 0), tensor after tensor in
 * table order, row-major: the same on every replica.  A tensor sent as
 * FP32 has no error feedback and is averaged as FP32.  A replica that is
 * not a member of a reduce keeps its e.
 *
 * DeMo, per tensor: encode u = beta u + x (FP32; beta 1 is plain error
 * feedback), send demo's encoding of u (codec_encode), u -= its decoding;
 * the reduce is the FP32 mean of the members' decodings (as every
 * stateless codec).  A payload that is not reduced is lost (its kept part
 * has already left u).
 */
#ifndef DILOSIM_COMPRESS_H
#define DILOSIM_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/codec.h"

typedef struct cmp_state cmp_state;

/* One tensor of the trainer's table: offset in the flat parameters,
 * values, row length (columns). */
typedef struct {
    size_t off, n, row;
} cmp_tensor;

/* 1 when codec c keeps state in the trainer (powersgd, demo), else 0. */
int cmp_stateful(codec_spec c);

/* The state of M replicas over ntens tensors of N values in all: 0 and
 * *out (NULL for a codec that is not stateful), or MSG_ENOMEM. */
int cmp_new(codec_spec c, int M, const cmp_tensor *t, int ntens, size_t N,
            uint64_t seed, cmp_state **out);

void cmp_free(cmp_state *s);

/* Replica r's payload x of tensor i encoded into out (its wire bytes,
 * codec_wire_bytes): the bytes written (0 when demo is out of memory).
 * Touches replica r's state only (a pool job may call it). */
uint64_t cmp_encode(cmp_state *s, int r, int i, const float *x, uint8_t *out);

/* 1 when every tensor's reduce is cmp_reduce's (powersgd, its FP32
 * tensors too), 0 when it is the FP32 mean of the members' codec_decode
 * (demo). */
int cmp_reduces(const cmp_state *s);

/* powersgd's reduce of tensor i over `members`: buf[m] is replica m's
 * encoding of it (its Q_m is written there); out[0..n) gets the decoded
 * payload, the same for every member; the members' e and the warm Q are
 * updated. */
void cmp_reduce(cmp_state *s, int i, uint8_t *const *buf, uint64_t members,
                float *out);

/* Replica r's error feedback (powersgd) or residual (demo) of tensor i,
 * its n values (tests). */
const float *cmp_residual(const cmp_state *s, int r, int i);

/* Tensor i's warm Q (cols x r, row-major), NULL for a tensor sent as
 * FP32 or without powersgd (tests). */
const float *cmp_warm_q(const cmp_state *s, int i);

#endif
