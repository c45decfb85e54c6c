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
 * input from memory once, by L1-sized spans (e3m0_block()); the 4-bit
 * decoders copy two values a code byte from a table (pair_table()).
 */
#include "codec.h"
#include "msg.h"

#include <math.h>
#include <string.h>

static const char *const names[CODEC_COUNT] = {
    "fp32", "bf16", "fp16", "fp8_e4m3", "e3m0", "e2m1", "uint8",
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
    return "fp32, bf16, fp16, fp8_e4m3, e3m0, e2m1, uint8";
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
    case CODEC_FP8_E4M3: return n + 4 * groups(n, row_len);
    case CODEC_E3M0:
    case CODEC_E2M1: return (n + 1) / 2 + 4 * groups(n, c.block);
    case CODEC_UINT8: return n + 8 * groups(n, c.block);
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

static inline void put_f32(uint8_t *p, float v) { put_u32(p, f2u(v)); }
static inline float get_f32(const uint8_t *p) { return u2f(get_u32(p)); }

enum {
    ABS_MASK = 0x7fffffffu,
    F32_INF = 0x7f800000u,
    CHUNK = 64,  /* values per loop of constant trip count; even */
    SPAN = 4096, /* values per L1-resident span of the e3m0 encoder */
    PAIRS = 256, /* byte values of a code byte (two 4-bit codes) */
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
    for (size_t k = 0; k < AMAX_LANES; k++) best = lane[k] > best ? lane[k] : best;
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
    for (; i + 1 < hi; i += 2) memcpy(out + i, pair[data[i >> 1]], sizeof pair[0]);
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

/* Block scale s = 2^ceil(log2 amax) (E capped at 127; 0 for amax == 0).
 * Sets *base so that e3m0_code() of a value's bits yields its code: base is
 * 120 + E, the biased FP32 exponent of s * 2^-7 (e = 0).  For E < -119,
 * values are pre-multiplied by 2^64 (*pre) so that FP32 subnormals, which
 * have no usable exponent field, cannot reach the representable range. */
static float e3m0_scale(float amax, int32_t *base, float *pre) {
    *pre = 1.0f;
    if (amax == 0.0f) {
        *base = 256; /* above every exponent field: all codes zero */
        return 0.0f;
    }
    int ex;
    float f = frexpf(amax, &ex); /* amax = f * 2^ex, f in [0.5, 1) */
    int E = f == 0.5f ? ex - 1 : ex;
    if (E > 127) E = 127;
    *base = 120 + E;
    if (E < -119) {
        *pre = 0x1p64f;
        *base += 64;
    }
    return ldexpf(1.0f, E);
}

/* Code of a value v, pre-multiplied by pre, for a block's base.  On the
 * FP32 bits b: er is the exponent field e before rounding (negative: |x| <
 * s*2^-7, zero); adding half an exponent step (0x400000, mantissa 0.5)
 * rounds to the nearest power of two in the value domain, ties away from
 * zero, since the midpoint of 2^k and 2^(k+1) is 1.5 * 2^k.  The clamp to
 * >= 1 sends [s*2^-7, s*2^-6) to the smallest magnitude; the clamp to <= 7
 * only matters for saturation.  Only the top 16 bits h = b >> 16 matter
 * (0x400000 is 0x40 << 16, so no carry comes up from the low half), and
 * every quantity fits an int16, so GCC vectorizes 8 values a vector. */
static inline uint8_t e3m0_code(float v, float pre, int16_t base) {
    uint16_t h = (uint16_t)(f2u(v * pre) >> 16);
    int16_t a = (int16_t)(h & 0x7fff);
    int16_t er = (int16_t)((a >> 7) - base);
    int16_t e = (int16_t)(((a + 0x40) >> 7) - base);
    e = e < 1 ? 1 : e > 7 ? 7 : e;
    e = er < 0 ? 0 : e;
    return (uint8_t)((h >> 12 & 8) | e);
}

/* Codes of x[lo..hi) into the nibble stream, for (base, pre) of
 * e3m0_scale().  Full chunks
 * from an even position compute their codes and pack them in one loop of
 * constant trip count, which GCC vectorizes even at -O2; a leading odd
 * position and the tail go through pack_nibbles(). */
static void e3m0_codes(const float *x, uint64_t lo, uint64_t hi,
                       int32_t base, float pre, uint8_t *data) {
    int16_t b = (int16_t)base;
    uint8_t c[CHUNK];
    uint64_t i = lo;
    if ((i & 1) && i < hi) {
        c[0] = e3m0_code(x[i], pre, b);
        pack_nibbles(data, i, c, 1);
        i++;
    }
    for (; hi - i >= CHUNK; i += CHUNK) {
        const float *v = x + i;
        for (size_t k = 0; k < CHUNK / 2; k++)
            c[k] = (uint8_t)(e3m0_code(v[2 * k], pre, b) |
                             e3m0_code(v[2 * k + 1], pre, b) << 4);
        memcpy(data + (i >> 1), c, CHUNK / 2);
    }
    size_t m = (size_t)(hi - i);
    for (size_t k = 0; k < m; k++) c[k] = e3m0_code(x[i + k], pre, b);
    pack_nibbles(data, i, c, m);
}

/* Encodes the block x[lo..hi) and returns its scale, reading the input
 * from memory once: the block goes by spans of at most SPAN values (their
 * ends on multiples of SPAN in the stream, so every span but the first
 * starts on a code byte), each read twice while it is in L1: its max |x|,
 * then its codes in the state of the running block max.  The state is a
 * function of the scale, which only grows with the running max, so the
 * spans coded in a state other than the final one are those before the
 * last change of scale: that prefix [lo, redo) is coded again (it ends on
 * a span start, an even position, so pack_nibbles() may rewrite it).  The
 * codes are then those of the block's max, as if it had been known first;
 * the prefix is short unless the block's magnitudes keep growing. */
static float e3m0_block(const float *x, uint64_t lo, uint64_t hi,
                        uint8_t *data) {
    int32_t base;
    float pre, amax = 0.0f, s = e3m0_scale(amax, &base, &pre);
    uint64_t redo = lo;
    for (uint64_t a = lo, b; a < hi; a = b) {
        b = (a / SPAN + 1) * SPAN;
        b = b < hi ? b : hi;
        float m = finite_amax(x + a, b - a);
        if (m > amax) {
            amax = m;
            float t = e3m0_scale(amax, &base, &pre);
            redo = t != s ? a : redo;
            s = t;
        }
        e3m0_codes(x, a, b, base, pre, data);
    }
    if (redo > lo) e3m0_codes(x, lo, redo, base, pre, data);
    return s;
}

static void e3m0_encode(const float *x, uint64_t n, uint64_t block,
                        uint8_t *out) {
    uint64_t len = group_len(n, block), g = groups(n, block);
    uint8_t *data = out + 4 * g;
    for (uint64_t k = 0, lo = 0; k < g; k++, lo += len) {
        uint64_t hi = n - lo < len ? n : lo + len;
        put_f32(out + 4 * k, e3m0_block(x, lo, hi, data));
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
        decode_nibbles(data, lo, hi, (const float (*)[2])pair, out);
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
    default: return 0;
    }
    return codec_wire_bytes(c, n, row_len);
}

void codec_decode(codec_spec c, const uint8_t *in, uint64_t n,
                  uint64_t row_len, float *out) {
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
    default: break;
    }
}
