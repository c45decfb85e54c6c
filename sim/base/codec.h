/*
 * codec.h -- wire formats for pseudo-gradients and gradients.
 *
 * A codec turns n FP32 values into a byte buffer and back.  The wire size
 * is a pure function of (codec, n, row length) so the timing half of the
 * simulator can count bytes without encoding anything, and the numerics
 * half sends buffers whose size is exactly that figure.
 *
 * Formats (one scale is an FP32, 4 bytes):
 *   fp32        4 bytes a value
 *   bf16, fp16  2 bytes a value (round to nearest even)
 *   fp8_e4m3    1 byte a value, one scale per row of row_len values
 *   e3m0        4 bits a value, one power-of-two scale per block
 *   e2m1        4 bits a value, one scale per block
 *   uint8       1 byte a value, min and max (two scales) per block
 *               (affine, unsigned codes)
 *   topk        the k values of largest magnitude as FP32, with their
 *               uint32 indices (sparse; k from k_fraction, below)
 *   int8        1 byte a value, one scale per row of row_len values
 *               (symmetric: signed codes, zero maps to code 0)
 *   powersgd    rank-r factors P (rows x r) and Q (cols x r) as FP32 of a
 *               tensor seen as a rows x cols matrix (codec_lowrank_shape):
 *               4 r (rows + cols) bytes; a tensor with rows 1 (1-D) or
 *               r (rows + cols) >= n goes as FP32, 4n bytes
 *   demo        per chunk of demo_chunk values (the last one shorter), the
 *               kc = min(demo_topk, chunk length) largest DCT-II
 *               coefficients: their indices in the chunk (uint8 when
 *               demo_chunk <= 256, else uint16) and their FP32 values:
 *               K (b + 4) bytes, K the sum of the kc, b the index bytes
 * For the block-scaled codecs block == 0 means one scale for the whole
 * tensor.  Two 4-bit codes share a byte, low nibble first; an odd count
 * pads the last byte.
 *
 * Groups.  A group is the run of values sharing a scale: the block (e3m0,
 * e2m1, uint8) or the row (fp8_e4m3, int8, length row_len).  With length L
 * (block or row_len), G = 0 groups when n == 0, G = 1 when L == 0 or
 * L >= n, else G = ceil(n / L); group g holds values [g*L, min(n, g*L+L)).
 *
 * Byte layout.  Every multi-byte field is little-endian, whatever the host.
 * Scales come first, then the codes:
 *   fp32        n x 4 bytes: the IEEE-754 binary32 bits, unchanged
 *   bf16, fp16  n x 2 bytes
 *   fp8_e4m3    G FP32 scales, then n code bytes
 *   e3m0, e2m1  G FP32 scales, then ceil(n/2) bytes of 4-bit codes
 *   uint8       G pairs (min, max) of FP32, then n code bytes
 *   int8        G FP32 scales, then n code bytes (two's complement)
 *   topk        bytes 0-3 the count k as a uint32, then k uint32 indices in
 *               increasing order (bytes 4 .. 4+4k), then the k values as
 *               FP32 in the same order (4+4k .. 4+8k): 4 + 8k bytes; an
 *               empty tensor (n 0) is 0 bytes, no header
 *   powersgd    P row-major (rows x r FP32), then Q row-major (cols x r
 *               FP32); uncompressed, n FP32
 *   demo        every chunk's indices, chunk after chunk, each chunk's in
 *               increasing order (K x b bytes), then the K values as FP32
 *               in the same order
 * The 4-bit codes are one stream over the whole tensor, regardless of group
 * boundaries: value i sits in code byte i/2, in the low nibble when i is
 * even and the high nibble when i is odd; when n is odd the high nibble of
 * the last byte is 0.
 *
 * Rounding and range, per format:
 *   bf16      round to nearest even.  Finite values beyond the largest
 *             finite bf16 (which would round to inf) saturate to +-max
 *             (0x7f7f); subnormals follow the same rule.
 *   fp16      IEEE binary16, round to nearest even, subnormals kept (the
 *             smallest is 2^-24; |x| <= 2^-25 rounds to zero).  Finite
 *             |x| >= 65520 (which would round to inf) saturates to 65504.
 *   fp8_e4m3  OCP E4M3FN: bias 7, 3 mantissa bits, subnormals m*2^-9,
 *             largest 448, no inf; codes 0x7f/0xff (NaN) are never written.
 *             Per row scale = max|x| / 448 (an FP32 division), so the row
 *             maximum maps to 448; code = x / scale rounded to nearest even,
 *             saturating at 448.  Decoded value = E4M3 value * scale.
 *   e2m1      OCP MX FP4: code = sign (bit 3) | magnitude index (bits 0-2)
 *             of {0, 0.5, 1, 1.5, 2, 3, 4, 6}.  Per block scale = max|x| / 6;
 *             x / scale rounds to nearest, ties to the even code (0.25 -> 0,
 *             0.75 -> 1, 1.25 -> 1, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4),
 *             saturating at 6.  Decoded value = magnitude * scale.
 *   uint8     min-max affine per block: code = floor((x - min) / (max - min)
 *             * 255 + 1/2) computed in double and clamped to 0..255; decoded
 *             value = min + code * (max - min) / 255 in double, rounded to
 *             FP32.  A constant block (max == min) has all codes 0.
 *   int8      symmetric per row: scale = max|x| / 127 (an FP32 division;
 *             0 for a row of zeros); code = q rounded half to even and
 *             clamped to -127..127, with q = x / scale computed in double
 *             (one correctly rounded division of the widened values), so
 *             the row maximum maps to +-127 and -128 is never written.
 *             Decoded value = code * scale (an FP32 product; where a
 *             scale rounded up from a maximum near FLT_MAX takes it past
 *             the FP32 range, +-FLT_MAX).  Unlike uint8 (affine min-max
 *             per block, unsigned codes) zero is exact and the scale is
 *             per row.
 *   topk      k = max(1, ceil(k_fraction * n)), at most n, for n > 0: the
 *             product in double, a product within a relative 1e-9 of a
 *             whole number counting as that number (k_fraction 0.1 of 30
 *             values keeps 3, not 4 for the double just above 0.1).  A
 *             k_fraction that is not > 0 (a zeroed spec) means
 *             CODEC_K_FRACTION; above 1, 1.  Kept: the k values of largest
 *             |x|, ties to the lower index; |x| is ordered by its FP32
 *             bits, so -0 and +0 tie and NaN ranks above inf above every
 *             finite value.  The values are sent unchanged (their FP32
 *             bits); decode writes +0 everywhere else.  Indices are
 *             uint32: codec_encode of more than 2^32 values writes nothing
 *             and returns 0 (the wire size stays the formula).
 *   powersgd  codec_encode does not apply (the factors come from every
 *             replica's matrix, one power iteration with a warm start:
 *             models/compress.h); codec_decode of a buffer is P Q^T, each
 *             value summed over the r terms in double and rounded once to
 *             FP32.
 *   demo      the DCT of each chunk (codec_dct, length the chunk's);
 *             kept: the kc coefficients of largest |c|, ordered by their
 *             FP32 bits, ties to the lower index, sent unchanged; decode
 *             writes the inverse DCT (codec_idct) of each chunk with the
 *             other coefficients +0.  The decay and the residual (u -= the
 *             decoded kept part) are the trainer's state.
 * A group whose values are all zero stores scale 0 (uint8: min = max = 0)
 * and decodes to zeros.  For fp8_e4m3 and e2m1, x / scale is computed as
 * |x| * (1 / scale) in double and rounded once to FP32 before the format's
 * rounding.
 *
 * E3M0 (1 sign, 3 exponent, 0 mantissa bits) leaves bias, scale, rounding
 * and zero open in the Streaming DiLoCo paper; ours, per block:
 *   scale    s = 2^E with E = ceil(log2 m), m = max |x| over the block
 *            (finite values only), so m <= s < 2m; stored as an FP32.  E is
 *            capped at 127 so s stays finite (values above 2^127 then
 *            saturate); m == 0 stores s = 0.
 *   code     4 bits: sign of x in bit 3 (kept for zeros, so -0 and small
 *            negatives give 0x8), exponent field e (0..7) in bits 0-2.
 *   zero     e == 0 means zero: 0x0 decodes to +0, 0x8 to -0.
 *   values   e in 1..7 means s * 2^(e-7): s/64, s/32, s/16, s/8, s/4, s/2,
 *            s (a bias of 7 relative to the block scale).
 *   rounding to the nearest representable magnitude in the value domain,
 *            ties away from zero.  With r = |x| / s:
 *              r <  2^-7                         -> e = 0 (zero)
 *              2^-7 <= r < 1.5 * 2^-6            -> e = 1
 *              1.5 * 2^(e-8) <= r < 1.5 * 2^(e-7) -> e, for e = 2..6
 *              r >= 0.75                         -> e = 7
 *            The threshold between s*2^(e-8) and s*2^(e-7) is their
 *            arithmetic midpoint 0.75 * s * 2^(e-7) (not the geometric
 *            sqrt(2) point), and the zero threshold is half the smallest
 *            magnitude, s * 2^-7.  Consequences: for s/64 <= |x| <= s the
 *            decoded value d satisfies |d - x| <= |x| / 3 (d/x in
 *            [2/3, 4/3]); for |x| < s/64, |d - x| <= s/128.  Both bounds
 *            are attained.
 *
 * Non-finite input: the encoders assume finite input.  Given inf or NaN
 * they still read and write only their buffers: fp32 keeps the bits, bf16
 * and fp16 keep inf and quiet NaN; topk keeps them first (they rank
 * highest) and sends their bits, so a diverged payload is not hidden; int8
 * takes its scale over the finite values, saturates +-inf to +-127 and
 * writes code 0 for NaN; the other scaled codecs compute scales (and
 * uint8 min/max) over the finite values only, saturate +-inf to the group's
 * largest code of that sign (uint8: max or min) and map NaN to some valid,
 * unspecified code; demo's DCT spreads a non-finite value over its chunk,
 * and a coefficient beyond the FP32 range becomes inf.  The decoders
 * accept any bytes.
 */
#ifndef DILOSIM_CODEC_H
#define DILOSIM_CODEC_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    CODEC_FP32,
    CODEC_BF16,
    CODEC_FP16,
    CODEC_FP8_E4M3,
    CODEC_E3M0,
    CODEC_E2M1,
    CODEC_UINT8,
    CODEC_TOPK,
    CODEC_INT8,
    CODEC_POWERSGD,
    CODEC_DEMO,
    CODEC_COUNT
} codec_kind;

typedef struct {
    codec_kind kind;
    uint64_t block; /* values per scale for e3m0/e2m1/uint8; 0 = per tensor */
    double k_fraction;   /* topk: the fraction of values kept, in (0, 1];
                          not > 0: CODEC_K_FRACTION */
    uint64_t rank;       /* powersgd: r; 0: CODEC_RANK */
    uint64_t demo_chunk; /* demo: values per DCT chunk; 0: CODEC_DEMO_CHUNK */
    uint64_t demo_topk;  /* demo: coefficients kept per chunk; 0:
                            CODEC_DEMO_TOPK */
    double demo_beta;    /* demo: the trainer's residual decay u = beta u +
                            payload, in [0, 1] (not on the wire) */
} codec_spec;

/* The default fraction of values topk keeps. */
#define CODEC_K_FRACTION 0.01
/* The defaults of powersgd's rank and of demo's chunk, kept coefficients
 * per chunk and residual decay. */
#define CODEC_RANK 4
#define CODEC_DEMO_CHUNK 64
#define CODEC_DEMO_TOPK 8
#define CODEC_DEMO_BETA 1.0

/* A codec with every parameter at its default. */
#define CODEC_SPEC(kind_, block_)                                              \
    ((codec_spec){.kind = (kind_),                                             \
                  .block = (block_),                                           \
                  .k_fraction = CODEC_K_FRACTION,                              \
                  .rank = CODEC_RANK,                                          \
                  .demo_chunk = CODEC_DEMO_CHUNK,                              \
                  .demo_topk = CODEC_DEMO_TOPK,                                \
                  .demo_beta = CODEC_DEMO_BETA})

/* Parses a codec name ("fp32", "bf16", "fp16", "fp8_e4m3", "e3m0", "e2m1",
 * "uint8", "topk", "int8", "powersgd", "demo"). Returns 0 and sets *out,
 * or -1 for an unknown name. */
int codec_parse(const char *name, codec_kind *out);

/* The canonical name of a codec kind. */
const char *codec_name(codec_kind kind);

/* A comma-separated list of every codec name, for error messages. */
const char *codec_names(void);

/* The values topk keeps of n (0 for n 0): k of the formats above. */
uint64_t codec_topk_count(codec_spec c, uint64_t n);

/* powersgd's shape of a tensor of n values in rows of row_len: cols =
 * row_len (n when row_len is 0 or at least n), rows = ceil(n / cols).
 * Returns 1 when the tensor is sent as its factors (rows > 1 and
 * r (rows + cols) < n), else 0 (sent as FP32). */
int codec_lowrank_shape(codec_spec c, uint64_t n, uint64_t row_len,
                        uint64_t *rows, uint64_t *cols);

/* The rank r of powersgd, demo's chunk length and kept coefficients per
 * chunk (the defaults for a zeroed field). */
uint64_t codec_rank(codec_spec c);
uint64_t codec_demo_chunk(codec_spec c);
uint64_t codec_demo_topk(codec_spec c);

/* The orthonormal DCT-II of x[0..len) into out (len >= 1):
 * out[k] = s_k sum_j x[j] cos(pi (2j + 1) k / (2 len)), s_0 = sqrt(1/len),
 * s_k = sqrt(2/len), summed in double and rounded once to FP32; and its
 * inverse (DCT-III): out[j] = sum_k s_k x[k] cos(pi (2j + 1) k / (2 len)).
 * cosines is a table of 4 len doubles, cos(pi i / (2 len)), filled by
 * codec_dct_table. */
void codec_dct_table(uint64_t len, double *cosines);
void codec_dct(const float *x, uint64_t len, const double *cosines, float *out);
void codec_idct(const float *x, uint64_t len, const double *cosines,
                float *out);

/* Exact bytes on the wire for a tensor of n values whose rows hold row_len
 * values (row_len is used by per-row codecs only; 0 means one row). */
uint64_t codec_wire_bytes(codec_spec c, uint64_t n, uint64_t row_len);

/* Encodes n values into out, which must hold codec_wire_bytes() bytes.
 * Returns the number of bytes written: codec_wire_bytes(), except topk of
 * more than 2^32 values and demo when out of memory, which write nothing
 * and return 0, and powersgd, which is stateful (its factors need every
 * replica: models/compress.h) and writes nothing here: 0. */
uint64_t codec_encode(codec_spec c, const float *x, uint64_t n,
                      uint64_t row_len, uint8_t *out);

/* Decodes a buffer written by codec_encode() with the same arguments
 * (powersgd: the buffer's factors, P Q^T, or its FP32 values; demo: out of
 * memory, zeros). */
void codec_decode(codec_spec c, const uint8_t *in, uint64_t n, uint64_t row_len,
                  float *out);

#endif
