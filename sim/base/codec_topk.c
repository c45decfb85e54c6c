/*
 * codec_topk.c -- the sparse codec: the k values of largest magnitude and
 * their indices (format and ties in codec.h).
 *
 * The selection reads the input four times and allocates nothing: a radix
 * select over the 31 magnitude bits of the FP32 values (three digits of
 * 11, 10 and 10 bits, one histogram pass each) finds the k-th largest
 * magnitude T and how many of the kept values have magnitude T; a last
 * pass in index order then keeps every value above T and the first of
 * those at T, which is the tie rule (lower index first) and writes the
 * indices in increasing order without a sort.
 */
#include "sim/base/codec.h"
#include "sim/base/codec_int.h"

#include <math.h>
#include <string.h>

enum { DIGIT_MAX = 1 << 11 }; /* buckets of the widest digit */

/* The digits of a magnitude, most significant first: shift and width. */
static const int digit_shift[3] = {20, 10, 0};
static const int digit_bits[3] = {11, 10, 10};

uint64_t codec_topk_count(codec_spec c, uint64_t n) {
    if (n == 0) return 0;
    double f = c.k_fraction > 0 ? c.k_fraction : CODEC_K_FRACTION;
    f = f < 1 ? f : 1;
    double p = f * (double)n, r = nearbyint(p);
    /* a product at a whole number up to rounding counts as that number */
    double k = fabs(p - r) <= 1e-9 * r ? r : ceil(p);
    if (k < 1) return 1;
    return k >= (double)n ? n : (uint64_t)k;
}

/* The magnitude T of the k-th largest |x| (1 <= k <= n), by radix select:
 * each digit narrows the candidates (the values whose higher digits equal
 * T's) to the bucket that holds the k-th.  *at_t gets how many values of
 * magnitude T are kept: k minus the count of those above T. */
static uint32_t kth_magnitude(const float *x, uint64_t n, uint64_t k,
                              uint64_t *at_t) {
    uint32_t prefix = 0, mask = 0;
    uint64_t need = k, count[DIGIT_MAX];
    for (int d = 0; d < 3; d++) {
        int sh = digit_shift[d];
        uint32_t top = (1u << digit_bits[d]) - 1;
        memset(count, 0, sizeof count);
        for (uint64_t i = 0; i < n; i++) {
            uint32_t m = codec__magnitude(x[i]);
            if ((m & mask) == prefix) count[m >> sh & top]++;
        }
        uint32_t b = top;
        while (count[b] < need) need -= count[b--];
        prefix |= b << sh;
        mask |= top << sh;
    }
    *at_t = need;
    return prefix;
}

uint64_t codec__topk_encode(const float *x, uint64_t n, uint64_t k,
                            uint8_t *out) {
    if (n > (uint64_t)UINT32_MAX + 1) return 0;
    uint64_t at_t, j = 0;
    uint32_t t = kth_magnitude(x, n, k, &at_t);
    uint8_t *idx = out + 4, *val = out + 4 + 4 * k;
    codec__store_u32(out, (uint32_t)k);
    for (uint64_t i = 0; i < n && j < k; i++) {
        uint32_t m = codec__magnitude(x[i]), bits;
        if (m < t || (m == t && at_t == 0)) continue;
        if (m == t) at_t--;
        memcpy(&bits, &x[i], sizeof bits);
        codec__store_u32(idx + 4 * j, (uint32_t)i);
        codec__store_u32(val + 4 * j, bits);
        j++;
    }
    return 4 + 8 * k;
}

void codec__topk_decode(const uint8_t *in, uint64_t n, uint64_t k, float *out) {
    uint64_t m = codec__load_u32(in);
    m = m < k ? m : k;
    for (uint64_t i = 0; i < n; i++) out[i] = 0.0f;
    const uint8_t *idx = in + 4, *val = in + 4 + 4 * k;
    for (uint64_t j = 0; j < m; j++) {
        uint64_t i = codec__load_u32(idx + 4 * j);
        uint32_t bits = codec__load_u32(val + 4 * j);
        if (i < n) memcpy(&out[i], &bits, sizeof bits);
    }
}
