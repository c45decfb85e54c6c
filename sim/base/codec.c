/*
 * codec.c -- wire formats for pseudo-gradients: names, exact sizes,
 * encoders and decoders.
 *
 * See codec.h for the formats and the byte layout.  The encoders and
 * decoders live below the size functions so that both read the same layout
 * rules (groups(), group_len()).
 *
 * Speed: these run on millions of values per sync, so the per-value paths
 * use integer operations on the FP32 bits (via memcpy) instead of libm
 * calls; libm (frexpf, ldexpf) is used once per group (e3m0: per change
 * of a block's running scale) only.  The hot loops have constant trip
 * counts so that GCC vectorizes them at -O2.  The e3m0 encoder reads its
 * input from memory once, by L1-sized spans (e3m0_block()), and computes
 * its codes with SSE2 intrinsics where the compiler has them (always on
 * x86-64; -DCODEC_NO_SSE2 selects the portable loop, same bytes); the 4-bit
 * decoders copy two values a code byte from a table (pair_table()).
 * The sparse codec, topk, is codec_topk.c (its selection is its own);
 * powersgd's sizes and decoder and demo's DCT are codec_lowrank.c.
 */
#include "sim/base/codec.h"
#include "sim/base/codec_int.h"
#include "sim/base/msg.h"

#include <float.h>
#include <math.h>
#include <string.h>

#if defined(__SSE2__) && !defined(CODEC_NO_SSE2)
#include <emmintrin.h>
#endif

static const char *const names[CODEC_COUNT] = {
    "fp32",  "bf16", "fp16", "fp8_e4m3", "e3m0", "e2m1",
    "uint8", "topk", "int8", "powersgd", "demo",
};

int codec_parse(const char *name, codec_kind *out) {
    int k = msg_parse_name(name, names, CODEC_COUNT);
    if (k < 0) return -1;
    *out = (codec_kind)k;
    return 0;
}

const char *codec_name(codec_kind kind) {
    return (unsigned)kind < CODEC_COUNT ? names[kind] : "?";
}

const char *codec_names(void) {
    return "fp32, bf16, fp16, fp8_e4m3, e3m0, e2m1, uint8, topk, int8, "
           "powersgd, demo";
}

/* Number of scale groups of n values in blocks of `block` (0: one). */
static uint64_t groups(uint64_t n, uint64_t block) {
    if (n == 0) return 0;
    if (block == 0 || block >= n) return 1;
    return (n + block - 1) / block;
}

uint64_t codec_wire_bytes(codec_spec c, uint64_t n, uint64_t row_len) {
    switch (c.kind) {
    case CODEC_FP32: return 4 * n;
    case CODEC_BF16:
    case CODEC_FP16: return 2 * n;
    case CODEC_FP8_E4M3:
    case CODEC_INT8: return n + 4 * groups(n, row_len);
    case CODEC_E3M0:
    case CODEC_E2M1: return (n + 1) / 2 + 4 * groups(n, c.block);
    case CODEC_UINT8: return n + 8 * groups(n, c.block);
    case CODEC_TOPK: return n ? 4 + 8 * codec_topk_count(c, n) : 0;
    case CODEC_POWERSGD: return codec__lowrank_bytes(c, n, row_len);
    case CODEC_DEMO: return codec__demo_bytes(c, n);
    default: return 0;
    }
}

/* Values per group: the whole tensor when block is 0 or covers it. */
static uint64_t group_len(uint64_t n, uint64_t block) {
    return (block == 0 || block >= n) ? n : block;
}

/* ---- bits and bytes ---------------------------------------------------- */

static inline uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline void put_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline void put_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline uint16_t get_u16(const uint8_t *p) {
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline void put_f32(uint8_t *p, float v) {
    put_u32(p, f2u(v));
}
static inline float get_f32(const uint8_t *p) {
    return u2f(get_u32(p));
}

enum {
    ABS_MASK = 0x7fffffffu,
    F32_INF = 0x7f800000u,
    CHUNK = 64,     /* values per loop of constant trip count; even */
    SPAN = 4096,    /* values per L1-resident span of the e3m0 encoder */
    PAIRS = 256,    /* byte values of a code byte (two 4-bit codes) */
    AMAX_LANES = 16 /* running maxima of finite_amax() */
};

/* |v| if finite, else 0. */
static inline float finite_abs(float v) {
    uint32_t a = f2u(v) & ABS_MASK;
    return u2f(a < F32_INF ? a : 0);
}

/* Largest finite |x| of x[0..m) (0 when there is none).  The maximum of
 * non-negative, non-NaN floats is one of them, whatever the order, so full
 * chunks keep AMAX_LANES running maxima (independent vector chains) in a
 * loop of constant trip count, which GCC vectorizes even at -O2. */
static float finite_amax(const float *x, uint64_t m) {
    float lane[AMAX_LANES] = {0}, best = 0.0f;
    uint64_t i = 0;
    for (; m - i >= AMAX_LANES; i += AMAX_LANES)
        for (size_t k = 0; k < AMAX_LANES; k++) {
            float a = finite_abs(x[i + k]);
            lane[k] = a > lane[k] ? a : lane[k];
        }
    for (; i < m; i++) {
        float a = finite_abs(x[i]);
        best = a > best ? a : best;
    }
    for (size_t k = 0; k < AMAX_LANES; k++)
        best = lane[k] > best ? lane[k] : best;
    return best;
}

/* Rounds a non-negative finite FP32 (bits a) to nearest even in a small
 * binary float with mb mantissa bits and exponent bias `bias`, subnormals
 * included; returns its code (exponent field << mb | mantissa).  The
 * caller saturates values above the format's largest finite value. */
static inline uint32_t round_small(uint32_t a, int mb, int bias) {
    int e = (int)(a >> 23) - 127, emin = 1 - bias;
    if (e >= emin) { /* normal: rebias, round 23 mantissa bits to mb */
        int sh = 23 - mb;
        uint32_t r = a - ((uint32_t)(127 - bias) << 23);
        r += (1u << (sh - 1)) - 1 + (r >> sh & 1u);
        return r >> sh;
    }
    /* subnormal: count units of 2^(emin-mb) in the 24-bit significand */
    int sh = 23 - mb + emin - e;
    if (sh > 24) return 0; /* below half the smallest subnormal */
    uint32_t mant = (a & 0x7fffffu) | 0x800000u;
    uint32_t r = mant >> sh, rem = mant & ((1u << sh) - 1);
    uint32_t half = 1u << (sh - 1);
    return r + (rem > half || (rem == half && (r & 1u)));
}

/* ---- 4-bit code streams -------------------------------------------------- */

/* Writes codes c[0..m) at nibble positions i, i+1, ... of data.  Nibbles
 * are written in increasing order: an even position writes its whole byte
 * (high nibble 0), an odd one replaces the high nibble of the byte its
 * predecessor wrote (so a range may be written again, provided it does not
 * end on an even position whose successor is already written). */
static void pack_nibbles(uint8_t *data, uint64_t i, const uint8_t *c,
                         size_t m) {
    size_t k = 0;
    if ((i & 1) && m > 0) {
        data[i >> 1] = (uint8_t)((data[i >> 1] & 15u) | (uint32_t)c[0] << 4);
        k = 1;
        i++;
    }
    uint8_t *p = data + (i >> 1);
    for (; k + 1 < m; k += 2) *p++ = (uint8_t)(c[k] | c[k + 1] << 4);
    if (k < m) *p = c[k];
}

/* The decoded values of every code byte b at scale s: pair[b] holds
 * lut[b & 15] * s and lut[b >> 4] * s (the same products as one code at a
 * time, so the same bits). */
static void pair_table(const float lut[16], float s, float pair[PAIRS][2]) {
    float v[16];
    for (int c = 0; c < 16; c++) v[c] = lut[c] * s;
    for (int b = 0; b < PAIRS; b++) {
        pair[b][0] = v[b & 15];
        pair[b][1] = v[b >> 4];
    }
}

/* out[i] = lut[code i] * s for nibble positions i in [lo, hi), with pair
 * the pair_table() of (lut, s): a whole byte is one 8-byte copy. */
static void decode_nibbles(const uint8_t *data, uint64_t lo, uint64_t hi,
                           const float pair[PAIRS][2], float *out) {
    uint64_t i = lo;
    if ((i & 1) && i < hi) {
        out[i] = pair[data[i >> 1]][1];
        i++;
    }
    for (; i + 1 < hi; i += 2)
        memcpy(out + i, pair[data[i >> 1]], sizeof pair[0]);
    if (i < hi) out[i] = pair[data[i >> 1]][0];
}

/* ---- fp32, bf16, fp16 --------------------------------------------------- */

static void fp32_encode(const float *x, uint64_t n, uint8_t *out) {
    for (uint64_t i = 0; i < n; i++) put_f32(out + 4 * i, x[i]);
}

static void fp32_decode(const uint8_t *in, uint64_t n, float *out) {
    for (uint64_t i = 0; i < n; i++) out[i] = get_f32(in + 4 * i);
}

static inline uint16_t bf16_bits(float x) {
    uint32_t b = f2u(x), a = b & ABS_MASK, sign = b >> 16 & 0x8000u;
    if (a > F32_INF) return (uint16_t)(b >> 16 | 0x40u); /* quiet NaN */
    if (a == F32_INF) return (uint16_t)(sign | 0x7f80u);
    if (a >= 0x7f7f8000u) return (uint16_t)(sign | 0x7f7fu); /* saturate */
    return (uint16_t)((b + 0x7fffu + (b >> 16 & 1u)) >> 16);
}

static inline uint16_t fp16_bits(float x) {
    uint32_t b = f2u(x), a = b & ABS_MASK, sign = b >> 16 & 0x8000u;
    if (a > F32_INF) return (uint16_t)(sign | 0x7e00u);
    if (a == F32_INF) return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7bffu); /* >= 65520 */
    return (uint16_t)(sign | round_small(a, 10, 15));
}

/* Branch-free: the 15 magnitude bits shifted into FP32 position give the
 * value times 2^-112 (subnormals included, exactly); inf and NaN only need
 * their exponent widened. */
static inline float fp16_value(uint16_t h) {
    uint32_t a = (uint32_t)(h & 0x7fffu) << 13;
    uint32_t r = f2u(u2f(a) * 0x1p112f);
    r = (h & 0x7c00u) == 0x7c00u ? (a | F32_INF) : r;
    return u2f(r | (uint32_t)(h & 0x8000u) << 16);
}

static void bf16_encode(const float *x, uint64_t n, uint8_t *out) {
    for (uint64_t i = 0; i < n; i++) put_u16(out + 2 * i, bf16_bits(x[i]));
}

static void bf16_decode(const uint8_t *in, uint64_t n, float *out) {
    for (uint64_t i = 0; i < n; i++)
        out[i] = u2f((uint32_t)get_u16(in + 2 * i) << 16);
}

static void fp16_encode(const float *x, uint64_t n, uint8_t *out) {
    for (uint64_t i = 0; i < n; i++) put_u16(out + 2 * i, fp16_bits(x[i]));
}

static void fp16_decode(const uint8_t *in, uint64_t n, float *out) {
    for (uint64_t i = 0; i < n; i++) out[i] = fp16_value(get_u16(in + 2 * i));
}

/* ---- fp8 e4m3 (OCP E4M3FN), one scale per row --------------------------- */

/* 1 / scale in double (0 for a zero scale, so zeros stay zeros). */
static double inverse(float scale) {
    return scale > 0.0f ? 1.0 / (double)scale : 0.0;
}

/* |x| * inv rounded once to FP32, as bits. */
static inline uint32_t scaled_bits(uint32_t b, double inv) {
    return f2u((float)((double)u2f(b & ABS_MASK) * inv));
}

static inline uint8_t e4m3_code(float x, double inv) {
    uint32_t b = f2u(x), a = scaled_bits(b, inv);
    uint32_t m = a >= 0x43e00000u ? 0x7eu : round_small(a, 3, 7); /* 448 */
    return (uint8_t)((b >> 24 & 0x80u) | m);
}

/* The value of every E4M3FN code (NaN codes included). */
static void e4m3_table(float lut[256]) {
    for (uint32_t c = 0; c < 256; c++) {
        uint32_t e = c >> 3 & 15u, m = c & 7u;
        float v = e ? u2f((e + 120) << 23 | m << 20) : (float)m * 0x1p-9f;
        if (e == 15 && m == 7) v = u2f(0x7fc00000u);
        lut[c] = (c & 0x80u) ? -v : v;
    }
}

static void fp8_encode(const float *x, uint64_t n, uint64_t row_len,
                       uint8_t *out) {
    uint64_t len = group_len(n, row_len), g = groups(n, row_len);
    uint8_t *data = out + 4 * g;
    for (uint64_t k = 0, lo = 0; k < g; k++, lo += len) {
        uint64_t m = n - lo < len ? n - lo : len;
        float scale = finite_amax(x + lo, m) / 448.0f;
        double inv = inverse(scale);
        put_f32(out + 4 * k, scale);
        for (uint64_t i = lo; i < lo + m; i++) data[i] = e4m3_code(x[i], inv);
    }
}

static void fp8_decode(const uint8_t *in, uint64_t n, uint64_t row_len,
                       float *out) {
    uint64_t len = group_len(n, row_len), g = groups(n, row_len);
    const uint8_t *data = in + 4 * g;
    float lut[256];
    e4m3_table(lut);
    for (uint64_t k = 0, lo = 0; k < g; k++, lo += len) {
        uint64_t hi = n - lo < len ? n : lo + len;
        float scale = get_f32(in + 4 * k);
        for (uint64_t i = lo; i < hi; i++) out[i] = lut[data[i]] * scale;
    }
}

/* ---- e3m0: power-of-two scale, 4-bit sign + exponent -------------------- */

enum {
    E3M0_ZERO = -1000, /* the exponent of a zero scale: below every other */
    E3M0_SEGS = 9      /* scale segments an e3m0 block keeps (see below) */
};

/* The coding state of a block scale s = 2^E (E3M0_ZERO: s = 0).  base is
 * 120 + E, the biased FP32 exponent of s * 2^-7 (code e = 0), so that
 * e3m0_code() of a value's top bits yields its code; a zero scale has base
 * 256, above every exponent field (all codes zero).  For E < -119, values
 * are pre-multiplied by 2^64 (pre; exact, base 64 higher) so that FP32
 * subnormals, which have no usable exponent field, cannot reach the
 * representable range. */
typedef struct {
    int E;
    int32_t base;
    float pre, scale;
} e3m0_state;

/* E = ceil(log2 amax), capped at 127 so that 2^E stays finite (larger
 * values then saturate); E3M0_ZERO for amax == 0. */
static int e3m0_exponent(float amax) {
    if (amax == 0.0f) return E3M0_ZERO;
    int ex;
    float f = frexpf(amax, &ex); /* amax = f * 2^ex, f in [0.5, 1) */
    int E = f == 0.5f ? ex - 1 : ex;
    return E > 127 ? 127 : E;
}

static e3m0_state e3m0_state_of(int E) {
    e3m0_state st = {E, 256, 1.0f, 0.0f};
    if (E == E3M0_ZERO) return st;
    st.base = 120 + E;
    if (E < -119) {
        st.pre = 0x1p64f;
        st.base += 64;
    }
    st.scale = ldexpf(1.0f, E);
    return st;
}

/* The top 16 bits of the FP32 bits of v * pre: all that a code needs. */
static inline uint16_t e3m0_top(float v, float pre) {
    return (uint16_t)(f2u(v * pre) >> 16);
}

/* Code of a value from its top bits h (e3m0_top()) for a block's base.
 * With a = h & 0x7fff, P = a >> 7 is the exponent field; P < base means
 * |x| < s*2^-7, zero.  Adding half an exponent step (0x40, mantissa 0.5)
 * rounds to the nearest power of two in the value domain, ties away from
 * zero, since the midpoint of 2^k and 2^(k+1) is 1.5 * 2^k: Q = (a + 0x40)
 * >> 7 is P, plus one from the top mantissa bit.  e = Q - base, clamped to
 * >= 1 (sends [s*2^-7, s*2^-6) to the smallest magnitude) and <= 7 (only
 * for saturation: above the scale, inf and NaN). */
static inline uint8_t e3m0_code(uint16_t h, int32_t base) {
    int32_t a = h & 0x7fff, P = a >> 7, e = ((a + 0x40) >> 7) - base;
    e = e < 1 ? 1 : e > 7 ? 7 : e;
    e = P < base ? 0 : e;
    return (uint8_t)((h >> 12 & 8) | e);
}

#if defined(__SSE2__) && !defined(CODEC_NO_SSE2)
/* The top 16 bits (e3m0_top()) of v[0..8) as signed 16-bit lanes: the
 * arithmetic shift keeps them in range, so the signed pack is exact. */
static inline __m128i e3m0_tops(const float *v, __m128 pre, int scaled) {
    __m128 a = _mm_loadu_ps(v), b = _mm_loadu_ps(v + 4);
    if (scaled) {
        a = _mm_mul_ps(a, pre);
        b = _mm_mul_ps(b, pre);
    }
    return _mm_packs_epi32(_mm_srai_epi32(_mm_castps_si128(a), 16),
                           _mm_srai_epi32(_mm_castps_si128(b), 16));
}

/* e3m0_code() of v[0..16), one code a byte, in saturating unsigned byte
 * arithmetic: with w = h << 1 (sign dropped), P is the high byte of w and
 * Q that of w + 0x80 (saturating: inf and NaN keep Q = 255); then e =
 * max(Q -sat base, min(P -sat (base - 1), 1)) is 0 for P < base and
 * max(Q - base, 1) otherwise, and min(e, 7) saturates.  b1 and b0 hold
 * base and base - 1 capped at 255 (a zero scale's 256 still gives zeros).
 * The sign comes from a saturating signed pack of h (bit 7 kept), moved to
 * bit 3.  *amax keeps the running maximum of h & 0x7fff. */
static inline __m128i e3m0_code16(const float *v, __m128 pre, int scaled,
                                  __m128i b1, __m128i b0, __m128i *amax) {
    const __m128i half = _mm_set1_epi16(0x80), one = _mm_set1_epi8(1);
    __m128i h0 = e3m0_tops(v, pre, scaled), h1 = e3m0_tops(v + 8, pre, scaled);
    __m128i w0 = _mm_slli_epi16(h0, 1), w1 = _mm_slli_epi16(h1, 1);
    *amax = _mm_max_epi16(*amax, _mm_max_epi16(_mm_srli_epi16(w0, 1),
                                               _mm_srli_epi16(w1, 1)));
    __m128i p = _mm_packus_epi16(_mm_srli_epi16(w0, 8), _mm_srli_epi16(w1, 8));
    __m128i q = _mm_packus_epi16(_mm_srli_epi16(_mm_adds_epu16(w0, half), 8),
                                 _mm_srli_epi16(_mm_adds_epu16(w1, half), 8));
    __m128i e = _mm_max_epu8(_mm_subs_epu8(q, b1),
                             _mm_min_epu8(_mm_subs_epu8(p, b0), one));
    __m128i s = _mm_srli_epi16(_mm_packs_epi16(h0, h1), 4);
    return _mm_or_si128(_mm_min_epu8(e, _mm_set1_epi8(7)),
                        _mm_and_si128(s, _mm_set1_epi8(8)));
}

/* Codes c (one a byte) two a byte: the low byte of each 16-bit lane gets
 * c[2k] | c[2k+1] << 4, the high byte 0 (for an unsigned pack). */
static inline __m128i e3m0_pairs(__m128i c) {
    return _mm_and_si128(_mm_or_si128(c, _mm_srli_epi16(c, 4)),
                         _mm_set1_epi16(0xff));
}

/* e3m0_chunks() for one value of `scaled` (a constant once inlined). */
static inline int e3m0_chunks_as(const float *v, uint64_t m,
                                 const e3m0_state *st, int scaled,
                                 uint8_t *out) {
    __m128i b1 =
        _mm_set1_epi8((char)(uint8_t)(st->base < 255 ? st->base : 255));
    __m128i b0 =
        _mm_set1_epi8((char)(uint8_t)(st->base - 1 < 255 ? st->base - 1 : 255));
    __m128i amax = _mm_setzero_si128();
    __m128 pre = _mm_set1_ps(st->pre);
    for (uint64_t i = 0; i < m; i += 32) {
        __m128i lo = e3m0_pairs(e3m0_code16(v + i, pre, scaled, b1, b0, &amax));
        __m128i hi =
            e3m0_pairs(e3m0_code16(v + i + 16, pre, scaled, b1, b0, &amax));
        _mm_storeu_si128((__m128i *)(void *)(out + i / 2),
                         _mm_packus_epi16(lo, hi));
    }
    amax = _mm_max_epi16(amax, _mm_srli_si128(amax, 8));
    amax = _mm_max_epi16(amax, _mm_srli_si128(amax, 4));
    amax = _mm_max_epi16(amax, _mm_srli_si128(amax, 2));
    return _mm_extract_epi16(amax, 0);
}

/* Codes of v[0..m), m a multiple of CHUNK, written two a byte from out[0];
 * returns the largest h & 0x7fff of them (h of e3m0_top()).  SSE2: 32
 * values a loop, in 16-bit and 8-bit lanes (e3m0_code16()). */
static int e3m0_chunks(const float *v, uint64_t m, const e3m0_state *st,
                       uint8_t *out) {
    return st->pre != 1.0f ? e3m0_chunks_as(v, m, st, 1, out)
                           : e3m0_chunks_as(v, m, st, 0, out);
}
#else
/* Codes of v[0..m), m a multiple of CHUNK, written two a byte from out[0];
 * returns the largest h & 0x7fff of them (h of e3m0_top()).  Portable:
 * loops of constant trip count, for the auto-vectorizer. */
static int e3m0_chunks(const float *v, uint64_t m, const e3m0_state *st,
                       uint8_t *out) {
    int amax = 0;
    for (uint64_t i = 0; i < m; i += CHUNK) {
        uint16_t h[CHUNK];
        for (size_t k = 0; k < CHUNK; k++) h[k] = e3m0_top(v[i + k], st->pre);
        for (size_t k = 0; k < CHUNK / 2; k++)
            out[i / 2 + k] = (uint8_t)(e3m0_code(h[2 * k], st->base) |
                                       e3m0_code(h[2 * k + 1], st->base) << 4);
        for (size_t k = 0; k < CHUNK; k++)
            amax = (h[k] & 0x7fff) > amax ? h[k] & 0x7fff : amax;
    }
    return amax;
}
#endif

/* Codes of x[lo..hi) into the nibble stream in state st; returns the
 * largest top bits h & 0x7fff among them (e3m0_top(): a value >= the scale,
 * inf or NaN has h >= (base + 7) << 7; inf and NaN h >= 0x7f80).  Full
 * chunks from an even position go through e3m0_chunks(), a leading odd
 * position and the tail through pack_nibbles(). */
static int e3m0_codes(const float *x, uint64_t lo, uint64_t hi,
                      const e3m0_state *st, uint8_t *data) {
    uint8_t c[CHUNK];
    int amax = 0;
    uint64_t i = lo;
    if ((i & 1) && i < hi) {
        uint16_t h = e3m0_top(x[i], st->pre);
        amax = h & 0x7fff;
        c[0] = e3m0_code(h, st->base);
        pack_nibbles(data, i, c, 1);
        i++;
    }
    uint64_t m = (hi - i) / CHUNK * CHUNK;
    if (m > 0) {
        int t = e3m0_chunks(x + i, m, st, data + (i >> 1));
        amax = t > amax ? t : amax;
        i += m;
    }
    size_t r = (size_t)(hi - i);
    for (size_t k = 0; k < r; k++) {
        uint16_t h = e3m0_top(x[i + k], st->pre);
        amax = (h & 0x7fff) > amax ? h & 0x7fff : amax;
        c[k] = e3m0_code(h, st->base);
    }
    pack_nibbles(data, i, c, r);
    return amax;
}

/* Keeps only the sign bit of the codes at nibble positions [p, q), q even:
 * the codes, in a scale 2^8 or more times the one they were computed in,
 * of finite values at most that scale (all below s*2^-7, zero). */
static void e3m0_signs(uint8_t *data, uint64_t p, uint64_t q) {
    if (p >= q) return;
    if (p & 1) data[p++ >> 1] &= 0x8f;
    uint64_t k = p >> 1, end = q >> 1;
    for (; end - k >= 8; k += 8) {
        uint64_t w;
        memcpy(&w, data + k, 8);
        w &= 0x8888888888888888ull;
        memcpy(data + k, &w, 8);
    }
    for (; k < end; k++) data[k] &= 0x88;
}

/* Encodes the block x[lo..hi) and returns its state, reading the input
 * from memory once, by spans of at most SPAN values (their ends on
 * multiples of SPAN in the stream, so every span but the first starts on a
 * code byte): a span is coded in the running state, and the largest top
 * bits of its codes (e3m0_codes()) tell whether it has a value >= the
 * scale (or inf, NaN); only then is its max |x| computed and, for a larger
 * scale, the span coded again while it is in L1.  A zero scale computes
 * the max first.  The block starts from the scale `guess` (the previous
 * block's; E3M0_ZERO for none).  The scale only grows, by segments of
 * spans; at the end the codes are those of the block's max:
 *  - spans coded at a scale of 2^8 or more below the final one keep their
 *    sign bits only (e3m0_signs()), unless they hold inf or NaN; the
 *    segments above that bound are at most 8 (E3M0_SEGS with the new one);
 *  - the other spans before the last change of scale are coded again from
 *    the input (their start is a span start, an even position, so
 *    pack_nibbles() may rewrite them);
 *  - a guessed scale that no span raised holds if some value lies above
 *    half of it; else the block's max decides and the block is coded again
 *    when the scale differs. */
static e3m0_state e3m0_block(const float *x, uint64_t lo, uint64_t hi,
                             int guess, uint8_t *data) {
    e3m0_state st = e3m0_state_of(guess);
    int exact = guess == E3M0_ZERO, amax = 0, nseg = 1,
        seg_E[E3M0_SEGS] = {guess};
    uint64_t seg_at[E3M0_SEGS] = {lo}, keep = lo, redo = lo, nonfinite = hi;
    for (uint64_t a = lo, b; a < hi; a = b) {
        b = (a / SPAN + 1) * SPAN;
        b = b < hi ? b : hi;
        int coded = st.E != E3M0_ZERO,
            h = coded ? e3m0_codes(x, a, b, &st, data) : 0, E = st.E;
        if (!coded || h >= (st.base + 7) << 7) {
            int t = e3m0_exponent(finite_amax(x + a, b - a));
            exact |= t >= st.E;
            E = t > E ? t : E;
        } else {
            amax = h > amax ? h : amax;
        }
        if (E != st.E) { /* a larger scale from this span on */
            st = e3m0_state_of(E);
            seg_at[nseg] = a;
            seg_E[nseg++] = E;
            while (seg_E[0] <= E - 8) {
                nseg--;
                memmove(seg_at, seg_at + 1, (size_t)nseg * sizeof seg_at[0]);
                memmove(seg_E, seg_E + 1, (size_t)nseg * sizeof seg_E[0]);
                keep = seg_at[0];
            }
            redo = a;
            coded = 0;
        }
        if (!coded) h = e3m0_codes(x, a, b, &st, data);
        if (h >= 0x7f80 && nonfinite == hi) nonfinite = a;
    }
    if (!exact && amax <= (st.base + 6) << 7) {
        int E = e3m0_exponent(finite_amax(x + lo, hi - lo));
        if (E != st.E) {
            st = e3m0_state_of(E);
            e3m0_codes(x, lo, hi, &st, data);
        }
        return st;
    }
    keep = keep < nonfinite ? keep : nonfinite;
    e3m0_signs(data, lo, keep);
    if (redo > keep) e3m0_codes(x, keep, redo, &st, data);
    return st;
}

static void e3m0_encode(const float *x, uint64_t n, uint64_t block,
                        uint8_t *out) {
    uint64_t len = group_len(n, block), g = groups(n, block);
    uint8_t *data = out + 4 * g;
    int guess = E3M0_ZERO;
    for (uint64_t k = 0, lo = 0; k < g; k++, lo += len) {
        uint64_t hi = n - lo < len ? n : lo + len;
        e3m0_state st = e3m0_block(x, lo, hi, guess, data);
        put_f32(out + 4 * k, st.scale);
        guess = st.E;
    }
}

/* Magnitudes 2^(e-7) for e = 1..7, zero for e = 0; bit 3 the sign. */
static void e3m0_table(float lut[16]) {
    for (int c = 0; c < 16; c++) {
        int e = c & 7;
        float v = e ? u2f((uint32_t)(120 + e) << 23) : 0.0f;
        lut[c] = (c & 8) ? -v : v;
    }
}

/* ---- e2m1 (OCP MX FP4) ------------------------------------------------- */

/* Magnitude index of q = |x| / scale: the number of decision thresholds
 * it passes.  The thresholds are the midpoints 0.25, 0.75, 1.25, 1.75,
 * 2.5, 3.5, 5; at a midpoint the comparison is strict where the lower
 * neighbour has the even code and non-strict where the upper one does,
 * which is round to nearest, ties to even.  Saturates at 7 (6.0); NaN
 * gives 0. */
static inline uint8_t e2m1_code(float x, double inv) {
    uint32_t b = f2u(x);
    float q = u2f(scaled_bits(b, inv));
    uint32_t m = (uint32_t)(q > 0.25f) + (uint32_t)(q >= 0.75f) +
                 (uint32_t)(q > 1.25f) + (uint32_t)(q >= 1.75f) +
                 (uint32_t)(q > 2.5f) + (uint32_t)(q >= 3.5f) +
                 (uint32_t)(q > 5.0f);
    return (uint8_t)((b >> 28 & 8u) | m);
}

static void e2m1_block(const float *x, uint64_t lo, uint64_t hi, double inv,
                       uint8_t *data) {
    uint8_t c[CHUNK];
    uint64_t i = lo;
    for (; hi - i >= CHUNK; i += CHUNK) {
        for (size_t k = 0; k < CHUNK; k++) c[k] = e2m1_code(x[i + k], inv);
        pack_nibbles(data, i, c, CHUNK);
    }
    size_t m = (size_t)(hi - i);
    for (size_t k = 0; k < m; k++) c[k] = e2m1_code(x[i + k], inv);
    pack_nibbles(data, i, c, m);
}

static void e2m1_encode(const float *x, uint64_t n, uint64_t block,
                        uint8_t *out) {
    uint64_t len = group_len(n, block), g = groups(n, block);
    uint8_t *data = out + 4 * g;
    for (uint64_t k = 0, lo = 0; k < g; k++, lo += len) {
        uint64_t hi = n - lo < len ? n : lo + len;
        float scale = finite_amax(x + lo, hi - lo) / 6.0f;
        put_f32(out + 4 * k, scale);
        e2m1_block(x, lo, hi, inverse(scale), data);
    }
}

static void e2m1_table(float lut[16]) {
    static const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f,
                                 2.0f, 3.0f, 4.0f, 6.0f};
    for (int c = 0; c < 16; c++) lut[c] = (c & 8) ? -mag[c & 7] : mag[c & 7];
}

/* Shared decoder of the two 4-bit codecs: one FP32 scale per block.  The
 * pair table is rebuilt only when a block's scale bits differ from the
 * previous block's (neighbouring e3m0 scales, powers of two, often agree). */
static void nibble_decode(const uint8_t *in, uint64_t n, uint64_t block,
                          const float lut[16], float *out) {
    uint64_t len = group_len(n, block), g = groups(n, block);
    const uint8_t *data = in + 4 * g;
    float pair[PAIRS][2];
    uint32_t built = 0;
    for (uint64_t k = 0, lo = 0; k < g; k++, lo += len) {
        uint64_t hi = n - lo < len ? n : lo + len;
        uint32_t sb = get_u32(in + 4 * k);
        if (k == 0 || sb != built) pair_table(lut, u2f(sb), pair);
        built = sb;
        decode_nibbles(data, lo, hi, (const float(*)[2])pair, out);
    }
}

/* ---- uint8 min-max ------------------------------------------------------- */

/* Finite min and max of x[0..m) (both 0 when there is none). */
static void finite_range(const float *x, uint64_t m, float *mn, float *mx) {
    float lo = 0.0f, hi = 0.0f;
    int any = 0;
    for (uint64_t i = 0; i < m; i++) {
        if ((f2u(x[i]) & ABS_MASK) >= F32_INF) continue;
        if (!any || x[i] < lo) lo = x[i];
        if (!any || x[i] > hi) hi = x[i];
        any = 1;
    }
    *mn = lo;
    *mx = hi;
}

static inline uint8_t uint8_code(float x, double lo, double k) {
    double t = ((double)x - lo) * k + 0.5;
    if (!(t > 0.0)) return 0; /* also NaN */
    return t >= 255.0 ? 255 : (uint8_t)t;
}

static void uint8_encode(const float *x, uint64_t n, uint64_t block,
                         uint8_t *out) {
    uint64_t len = group_len(n, block), g = groups(n, block);
    uint8_t *data = out + 8 * g;
    for (uint64_t j = 0, lo = 0; j < g; j++, lo += len) {
        uint64_t hi = n - lo < len ? n : lo + len;
        float mn, mx;
        finite_range(x + lo, hi - lo, &mn, &mx);
        put_f32(out + 8 * j, mn);
        put_f32(out + 8 * j + 4, mx);
        double range = (double)mx - (double)mn;
        double k = range > 0.0 ? 255.0 / range : 0.0;
        for (uint64_t i = lo; i < hi; i++) data[i] = uint8_code(x[i], mn, k);
    }
}

static void uint8_decode(const uint8_t *in, uint64_t n, uint64_t block,
                         float *out) {
    uint64_t len = group_len(n, block), g = groups(n, block);
    const uint8_t *data = in + 8 * g;
    for (uint64_t j = 0, lo = 0; j < g; j++, lo += len) {
        uint64_t hi = n - lo < len ? n : lo + len;
        double mn = get_f32(in + 8 * j), mx = get_f32(in + 8 * j + 4);
        double step = (mx - mn) / 255.0;
        for (uint64_t i = lo; i < hi; i++)
            out[i] = (float)(mn + data[i] * step);
    }
}

/* ---- int8: symmetric, one scale per row --------------------------------- */

/* round_half_even(x / scale) clamped to -127..127 (codec.h); a zero scale
 * gives 0 / 0 = NaN for the zeros (code 0) and +-inf for +-inf (+-127).
 * Adding and subtracting 1.5 * 2^52 rounds a double of magnitude below
 * 2^51 to an integer in the current (nearest, ties to even) mode. */
static inline uint8_t int8_code(float x, double scale) {
    double q = (double)x / scale;
    if (q != q) return 0;
    q = q > 127.0 ? 127.0 : q < -127.0 ? -127.0 : q;
    return (uint8_t)(int8_t)((q + 0x1.8p52) - 0x1.8p52);
}

/* One row of m values: its scale at scale_at, its codes at codes. */
static void int8_row(const float *x, uint64_t m, uint8_t *scale_at,
                     uint8_t *codes) {
    float scale = finite_amax(x, m) / 127.0f;
    put_f32(scale_at, scale);
    for (uint64_t i = 0; i < m; i++) codes[i] = int8_code(x[i], scale);
}

/* code * scale for the m codes of a row, saturated to the FP32 range. */
static void int8_row_values(const uint8_t *codes, uint64_t m, float scale,
                            float *y) {
    for (uint64_t i = 0; i < m; i++) {
        float v = (float)(int8_t)codes[i] * scale;
        y[i] = v > FLT_MAX ? FLT_MAX : v < -FLT_MAX ? -FLT_MAX : v;
    }
}

static void int8_encode(const float *x, uint64_t n, uint64_t row_len,
                        uint8_t *out) {
    uint64_t len = group_len(n, row_len), g = groups(n, row_len);
    for (uint64_t k = 0, lo = 0; k < g; k++, lo += len)
        int8_row(x + lo, n - lo < len ? n - lo : len, out + 4 * k,
                 out + 4 * g + lo);
}

static void int8_decode(const uint8_t *in, uint64_t n, uint64_t row_len,
                        float *out) {
    uint64_t len = group_len(n, row_len), g = groups(n, row_len);
    for (uint64_t k = 0, lo = 0; k < g; k++, lo += len)
        int8_row_values(in + 4 * g + lo, n - lo < len ? n - lo : len,
                        get_f32(in + 4 * k), out + lo);
}

/* ---- dispatch ------------------------------------------------------------ */

uint64_t codec_encode(codec_spec c, const float *x, uint64_t n,
                      uint64_t row_len, uint8_t *out) {
    if (n == 0) return 0;
    switch (c.kind) {
    case CODEC_FP32: fp32_encode(x, n, out); break;
    case CODEC_BF16: bf16_encode(x, n, out); break;
    case CODEC_FP16: fp16_encode(x, n, out); break;
    case CODEC_FP8_E4M3: fp8_encode(x, n, row_len, out); break;
    case CODEC_E3M0: e3m0_encode(x, n, c.block, out); break;
    case CODEC_E2M1: e2m1_encode(x, n, c.block, out); break;
    case CODEC_UINT8: uint8_encode(x, n, c.block, out); break;
    case CODEC_TOPK:
        return codec__topk_encode(x, n, codec_topk_count(c, n), out);
    case CODEC_INT8: int8_encode(x, n, row_len, out); break;
    case CODEC_DEMO: return codec__demo_encode(c, x, n, out);
    default: return 0; /* powersgd: models/compress.h */
    }
    return codec_wire_bytes(c, n, row_len);
}

void codec_decode(codec_spec c, const uint8_t *in, uint64_t n, uint64_t row_len,
                  float *out) {
    float lut[16];
    if (n == 0) return;
    switch (c.kind) {
    case CODEC_FP32: fp32_decode(in, n, out); break;
    case CODEC_BF16: bf16_decode(in, n, out); break;
    case CODEC_FP16: fp16_decode(in, n, out); break;
    case CODEC_FP8_E4M3: fp8_decode(in, n, row_len, out); break;
    case CODEC_E3M0:
        e3m0_table(lut);
        nibble_decode(in, n, c.block, lut, out);
        break;
    case CODEC_E2M1:
        e2m1_table(lut);
        nibble_decode(in, n, c.block, lut, out);
        break;
    case CODEC_UINT8: uint8_decode(in, n, c.block, out); break;
    case CODEC_TOPK:
        codec__topk_decode(in, n, codec_topk_count(c, n), out);
        break;
    case CODEC_INT8: int8_decode(in, n, row_len, out); break;
    case CODEC_POWERSGD: codec__lowrank_decode(c, in, n, row_len, out); break;
    case CODEC_DEMO: codec__demo_decode(c, in, n, out); break;
    default: break;
    }
}
