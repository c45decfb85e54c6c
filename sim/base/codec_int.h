/*
 * codec_int.h -- between the files of the codec module (codec.c, the
 * dispatch and the dense formats; codec_topk.c, the sparse one).  Not for
 * other modules: they call codec.h.
 */
#ifndef DILOSIM_CODEC_INT_H
#define DILOSIM_CODEC_INT_H

#include <stdint.h>

/* topk of x[0..n), n > 0, keeping k (1 <= k <= n) values into out, which
 * holds 4 + 8k bytes (codec.h).  Returns 4 + 8k, or 0 (nothing written)
 * when n is more than 2^32, beyond the uint32 indices. */
uint64_t codec__topk_encode(const float *x, uint64_t n, uint64_t k,
                            uint8_t *out);

/* Decodes a topk buffer of 4 + 8k bytes into out[0..n): zeros, then each
 * entry's value at its index.  Any bytes are accepted: the count read is
 * capped at k, and an index at or beyond n is skipped. */
void codec__topk_decode(const uint8_t *in, uint64_t n, uint64_t k, float *out);

#endif
