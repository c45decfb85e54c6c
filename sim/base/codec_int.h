/*
 * codec_int.h -- between the files of the codec module (codec.c, the
 * dispatch and the dense formats; codec_topk.c, the sparse one;
 * codec_lowrank.c, powersgd and demo).  Not for
 * other modules: they call codec.h.
 */
#ifndef DILOSIM_CODEC_INT_H
#define DILOSIM_CODEC_INT_H

#include <stdint.h>
#include <string.h>

#include "sim/base/codec.h"

/* |x| as ordered bits: the FP32 bits without the sign (NaN above inf
 * above every finite value; -0 and +0 equal). */
static inline uint32_t codec__magnitude(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u & 0x7fffffffu;
}

/* v as 4 bytes, little-endian, and back. */
static inline void codec__store_u32(uint8_t *p, uint32_t v) {
    for (int b = 0; b < 4; b++) p[b] = (uint8_t)(v >> (8 * b));
}

static inline uint32_t codec__load_u32(const uint8_t *p) {
    uint32_t v = 0;
    for (int b = 3; b >= 0; b--) v = v << 8 | p[b];
    return v;
}

/* topk of x[0..n), n > 0, keeping k (1 <= k <= n) values into out, which
 * holds 4 + 8k bytes (codec.h).  Returns 4 + 8k, or 0 (nothing written)
 * when n is more than 2^32, beyond the uint32 indices. */
uint64_t codec__topk_encode(const float *x, uint64_t n, uint64_t k,
                            uint8_t *out);

/* Decodes a topk buffer of 4 + 8k bytes into out[0..n): zeros, then each
 * entry's value at its index.  Any bytes are accepted: the count read is
 * capped at k, and an index at or beyond n is skipped. */
void codec__topk_decode(const uint8_t *in, uint64_t n, uint64_t k, float *out);

/* powersgd's and demo's wire bytes (codec.h). */
uint64_t codec__lowrank_bytes(codec_spec c, uint64_t n, uint64_t row_len);
uint64_t codec__demo_bytes(codec_spec c, uint64_t n);

/* powersgd: out[0..n) = P Q^T of the buffer's factors, or its FP32
 * values when the tensor is not compressed. */
void codec__lowrank_decode(codec_spec c, const uint8_t *in, uint64_t n,
                           uint64_t row_len, float *out);

/* demo of x[0..n), n > 0: the bytes written (codec__demo_bytes), or 0
 * (nothing written) when out of memory. */
uint64_t codec__demo_encode(codec_spec c, const float *x, uint64_t n,
                            uint8_t *out);

/* Decodes a demo buffer into out[0..n) (zeros when out of memory); any
 * bytes are accepted: an index beyond its chunk is skipped. */
void codec__demo_decode(codec_spec c, const uint8_t *in, uint64_t n,
                        float *out);

#endif
