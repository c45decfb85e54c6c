/*
 * libm.c -- log, exp, pow, log10 and log1p of the WebAssembly engine, computed
 * as this machine's native build computes them, so that the page's plan
 * (table.c's log10 and pow(10, x), grid.c's logspace) and GSL's draws
 * (the exponential's log1p, Weibull's pow and log, gsl_sf_gamma's exp
 * and log) give the native bits.  Only make wasm compiles it (the native build links glibc).
 *
 * Why: glibc 2.36 and musl (emscripten's libc) share one implementation
 * of log, exp and pow (Arm's optimized-routines; the tables __log_data,
 * __exp_data and __pow_log_data are the same), and without fused
 * multiply-adds they agree on every input.  But on a CPU with FMA glibc
 * runs the same C compiled with -mfma (its ifunc variants __log_fma,
 * __exp_fma, __pow_fma), where GCC 12 fuses a * b + c into one rounding
 * at the places written below as fma(); WebAssembly has no fused
 * multiply-add, so emscripten's musl rounds twice there and differs in
 * about one result in a thousand (by one ulp).  Here the same places are
 * fused explicitly (fma() is exact in musl, in software), read off GCC's
 * -fdump-tree-optimized of musl's sources at -O2 -mfma: the result equals
 * glibc's on this machine on every input tested (docs/usage.md, "The
 * interactive page").  A native CPU without FMA runs glibc's plain
 * variants (which musl's own log, exp and pow match): the page, built for
 * the FMA ones, then differs instead.  glibc's log10 is __ieee754_log10
 * (fdlibm's reduction around glibc's own log) and its log1p fdlibm's
 * __log1p (with an -mfma variant too), both written out below; musl's
 * log1p is FreeBSD's, another rounding.
 *
 * The code of log, exp and pow is musl's (src/math/log.c, exp.c, pow.c;
 * MIT licence, Copyright (c) 2018, Arm Limited), the fused operations
 * added; its tables are musl's, linked from emscripten's libc.  log10 and
 * log1p are fdlibm's as glibc 2.36 has them (Copyright (C) 1993 by Sun
 * Microsystems, Inc.  Developed at SunPro, a Sun Microsystems, Inc.
 * business.  Permission to use, copy, modify, and distribute this
 * software is freely granted, provided that this notice is preserved).
 */
#include <math.h>
#include <stdint.h>

#include "exp_data.h"
#include "libm.h"
#include "log_data.h"
#include "pow_data.h"

/* ---- log -------------------------------------------------------------- */

#define LT __log_data.tab
#define LB __log_data.poly1
#define LA __log_data.poly
#define LOG_N (1 << LOG_TABLE_BITS)
#define LOG_OFF 0x3fe6000000000000

/* log(x) for x within 2^-4 of 1: the polynomial of B, fused as GCC does. */
static double log_near1(double x) {
    double r = x - 1.0, r2 = r * r, r3 = r * r2;
    double p1 = fma(LB[2], r, LB[1]), q1 = fma(LB[3], r2, p1);
    double p2 = fma(LB[5], r, LB[4]), q2 = fma(LB[6], r2, p2);
    double p3 = fma(LB[8], r, LB[7]), q3 = fma(LB[9], r2, p3);
    double s3 = fma(LB[10], r3, q3);
    double s2 = fma(s3, r3, q2);
    double s1 = fma(s2, r3, q1);
    /* rhi = r + w - w with w = r * 2^27: both fused */
    double t = fma(r, 0x1p27, r);
    double rhi = fma(-r, 0x1p27, t), rlo = r - rhi;
    double w2 = rhi * rhi;
    double hi = fma(w2, LB[0], r);
    double lo = fma(w2, LB[0], r - hi);
    lo = fma(LB[0] * rlo, r + rhi, lo);
    double y = fma(s1, r3, lo);
    return hi + y;
}

double log(double x) {
    uint64_t ix = asuint64(x), tmp, iz;
    uint32_t top = ix >> 48;
    if (predict_false(ix - asuint64(1.0 - 0x1p-4) <
                      asuint64(1.0 + 0x1.09p-4) - asuint64(1.0 - 0x1p-4))) {
        if (ix == asuint64(1.0)) return 0;
        return log_near1(x);
    }
    if (predict_false(top - 0x0010 >= 0x7ff0 - 0x0010)) {
        if (ix * 2 == 0) return __math_divzero(1);
        if (ix == asuint64(INFINITY)) return x;
        if ((top & 0x8000) || (top & 0x7ff0) == 0x7ff0)
            return __math_invalid(x);
        ix = asuint64(x * 0x1p52);
        ix -= 52ULL << 52;
    }
    tmp = ix - LOG_OFF;
    int i = (tmp >> (52 - LOG_TABLE_BITS)) % LOG_N;
    int k = (int64_t)tmp >> 52;
    iz = ix - (tmp & 0xfffULL << 52);
    double invc = LT[i].invc, logc = LT[i].logc, z = asdouble(iz);
    double r = fma(z, invc, -1.0), kd = (double)k;
    double w = fma(__log_data.ln2hi, kd, logc);
    double hi = r + w;
    double lo = fma(__log_data.ln2lo, kd, (w - hi) + r);
    double r2 = r * r;
    double a = fma(LA[0], r2, lo);
    double p = fma(fma(LA[4], r, LA[3]), r2, fma(LA[2], r, LA[1]));
    return fma(r * r2, p, a) + hi;
}

/* ---- exp -------------------------------------------------------------- */

#define EXP_N (1 << EXP_TABLE_BITS)
#define ET __exp_data.tab
#define EC __exp_data.poly

static inline uint32_t top12(double x) {
    return asuint64(x) >> 52;
}

/* scale * (1 + tmp) where the exponent of scale may be out of range. */
static double exp_special(double tmp, uint64_t sbits, uint64_t ki,
                          int signed_one) {
    if ((ki & 0x80000000) == 0) {
        double scale = asdouble(sbits - (1009ull << 52));
        return 0x1p1009 * fma(tmp, scale, scale);
    }
    sbits += 1022ull << 52;
    double scale = asdouble(sbits), st = tmp * scale, y = scale + st;
    if (signed_one ? fabs(y) < 1.0 : y < 1.0) {
        double one = signed_one && y < 0.0 ? -1.0 : 1.0;
        double lo = st + (scale - y), hi = y + one;
        lo = lo + (y + (one - hi));
        y = (hi + lo) - one;
        if (y == 0.0)
            y = signed_one ? asdouble(sbits & 0x8000000000000000) : 0.0;
        fp_force_eval(fp_barrier(0x1p-1022) * 0x1p-1022);
    }
    return 0x1p-1022 * y;
}

/* exp(x + xtail) with the sign of sign_bias (pow's), or exp(x) (xtail 0,
 * plain 1: exp's own special cases). */
static double exp_core(double x, double xtail, uint32_t sign_bias, int plain) {
    uint32_t abstop = top12(x) & 0x7ff;
    if (predict_false(abstop - top12(0x1p-54) >=
                      top12(512.0) - top12(0x1p-54))) {
        if (abstop - top12(0x1p-54) >= 0x80000000) {
            double one = 1.0 + x;
            return sign_bias ? -one : one;
        }
        if (abstop >= top12(1024.0)) {
            if (plain && asuint64(x) == asuint64(-INFINITY)) return 0.0;
            if (plain && abstop >= top12(INFINITY)) return 1.0 + x;
            if (asuint64(x) >> 63) return __math_uflow(sign_bias);
            return __math_oflow(sign_bias);
        }
        abstop = 0;
    }
    double kd = fma(x, __exp_data.invln2N, __exp_data.shift);
    uint64_t ki = asuint64(kd);
    kd -= __exp_data.shift;
    double r = fma(kd, __exp_data.negln2loN, fma(kd, __exp_data.negln2hiN, x));
    if (!plain) r = xtail + r;
    uint64_t idx = 2 * (ki % EXP_N);
    uint64_t top = (ki + sign_bias) << (52 - EXP_TABLE_BITS);
    double tail = asdouble(ET[idx]);
    uint64_t sbits = ET[idx + 1] + top;
    double r2 = r * r;
    double tmp = fma(r2, fma(r, EC[1], EC[0]), r + tail);
    tmp = fma(r2 * r2, fma(r, EC[3], EC[2]), tmp);
    if (predict_false(abstop == 0)) return exp_special(tmp, sbits, ki, !plain);
    double scale = asdouble(sbits);
    return fma(tmp, scale, scale);
}

double exp(double x) {
    return exp_core(x, 0.0, 0, 1);
}

/* ---- pow -------------------------------------------------------------- */

#define PT __pow_log_data.tab
#define PA __pow_log_data.poly
#define POW_N (1 << POW_LOG_TABLE_BITS)
#define POW_OFF 0x3fe6955500000000
#define SIGN_BIAS (0x800 << EXP_TABLE_BITS)

/* log(x) as hi + *tail, x's bits ix (normalised). */
static double pow_log(uint64_t ix, double *tail) {
    uint64_t tmp = ix - POW_OFF;
    int i = (tmp >> (52 - POW_LOG_TABLE_BITS)) % POW_N;
    int k = (int64_t)tmp >> 52;
    uint64_t iz = ix - (tmp & 0xfffULL << 52);
    double z = asdouble(iz), kd = (double)k;
    double invc = PT[i].invc, logc = PT[i].logc, logctail = PT[i].logctail;
    double r = fma(z, invc, -1.0);
    double t1 = fma(kd, __pow_log_data.ln2hi, logc), t2 = r + t1;
    double lo1 = fma(kd, __pow_log_data.ln2lo, logctail);
    double lo2 = r + (t1 - t2);
    double ar = r * PA[0], ar2 = r * ar, ar3 = r * ar2;
    double hi = t2 + ar2;
    double lo3 = fma(r, ar, -ar2), lo4 = ar2 + (t2 - hi);
    double p = fma(r, PA[6], PA[5]);
    p = fma(ar2, p, fma(r, PA[4], PA[3]));
    p = fma(ar2, p, fma(r, PA[2], PA[1]));
    double lo = fma(ar3, p, lo4 + (lo3 + (lo1 + lo2)));
    double y = hi + lo;
    *tail = lo + (hi - y);
    return y;
}

/* 0: not an integer, 1: odd, 2: even (iy finite, non-zero). */
static int checkint(uint64_t iy) {
    int e = iy >> 52 & 0x7ff;
    if (e < 0x3ff) return 0;
    if (e > 0x3ff + 52) return 2;
    if (iy & ((1ULL << (0x3ff + 52 - e)) - 1)) return 0;
    if (iy & (1ULL << (0x3ff + 52 - e))) return 1;
    return 2;
}

static int zeroinfnan(uint64_t i) {
    return 2 * i - 1 >= 2 * asuint64(INFINITY) - 1;
}

/* pow's special cases of y (zero, inf, nan). */
static double pow_y_special(double x, double y, uint64_t ix, uint64_t iy) {
    if (2 * iy == 0) return issignaling_inline(x) ? x + y : 1.0;
    if (ix == asuint64(1.0)) return issignaling_inline(y) ? x + y : 1.0;
    if (2 * ix > 2 * asuint64(INFINITY) || 2 * iy > 2 * asuint64(INFINITY))
        return x + y;
    if (2 * ix == 2 * asuint64(1.0)) return 1.0;
    if ((2 * ix < 2 * asuint64(1.0)) == !(iy >> 63)) return 0.0;
    return y * y;
}

double pow(double x, double y) {
    uint32_t sign_bias = 0;
    uint64_t ix = asuint64(x), iy = asuint64(y);
    uint32_t topx = top12(x), topy = top12(y);
    if (predict_false(topx - 0x001 >= 0x7ff - 0x001 ||
                      (topy & 0x7ff) - 0x3be >= 0x43e - 0x3be)) {
        if (predict_false(zeroinfnan(iy))) return pow_y_special(x, y, ix, iy);
        if (predict_false(zeroinfnan(ix))) {
            double x2 = x * x;
            if (ix >> 63 && checkint(iy) == 1) x2 = -x2;
            return iy >> 63 ? fp_barrier(1 / x2) : x2;
        }
        if (ix >> 63) {
            int yint = checkint(iy);
            if (yint == 0) return __math_invalid(x);
            if (yint == 1) sign_bias = SIGN_BIAS;
            ix &= 0x7fffffffffffffff;
            topx &= 0x7ff;
        }
        if ((topy & 0x7ff) - 0x3be >= 0x43e - 0x3be) {
            if (ix == asuint64(1.0)) return 1.0;
            if ((topy & 0x7ff) < 0x3be)
                return ix > asuint64(1.0) ? 1.0 + y : 1.0 - y;
            return (ix > asuint64(1.0)) == (topy < 0x800) ? __math_oflow(0)
                                                          : __math_uflow(0);
        }
        if (topx == 0) {
            ix = asuint64(x * 0x1p52);
            ix &= 0x7fffffffffffffff;
            ix -= 52ULL << 52;
        }
    }
    double lo, hi = pow_log(ix, &lo);
    double ehi = y * hi;
    double elo = fma(y, lo, fma(y, hi, -ehi));
    return exp_core(ehi, elo, sign_bias, 0);
}

/* ---- log10: glibc's __ieee754_log10 ------------------------------------ */

double log10(double x) {
    static const double two54 = 0x1p54, ivln10 = 4.34294481903251816668e-01,
                        log10_2hi = 3.01029995663611771306e-01,
                        log10_2lo = 3.69423907715893078616e-13;
    uint64_t u = asuint64(x);
    int32_t hx = (int32_t)(u >> 32), k = 0;
    uint32_t lx = (uint32_t)u;
    if (hx < 0x00100000) {
        if (((hx & 0x7fffffff) | lx) == 0) return -two54 / fabs(x);
        if (hx < 0) return (x - x) / (x - x);
        k -= 54;
        x *= two54;
        hx = (int32_t)(asuint64(x) >> 32);
    }
    if (hx >= 0x7ff00000) return x + x;
    k += (hx >> 20) - 1023;
    int32_t i = ((uint32_t)k & 0x80000000) >> 31;
    hx = (hx & 0x000fffff) | ((0x3ff - i) << 20);
    double y = (double)(k + i);
    x = asdouble(((uint64_t)(uint32_t)hx << 32) | (asuint64(x) & 0xffffffffu));
    double z = y * log10_2lo + ivln10 * log(x);
    return z + y * log10_2hi;
}

/* ---- log1p: glibc's __log1p (fdlibm's), as its -mfma variant runs ------ */

/* k ln2 + c + the rest, fused as GCC fuses it: fma(k, ln2_hi, -(rest)),
 * rest = (lead - (k ln2_lo + c)) - f in both of log1p's uses. */
#define LN2_HI 6.93147180369123816490e-01
#define LN2_LO 1.90821492927058770002e-10

/* log1p's reduction of x (high word hx) to 1 + f = (1 + x) / 2^k, with c
 * the rounding error of 1 + x over it and hu as __log1p uses it: k. */
static int32_t log1p_reduce(double x, int32_t hx, double *f, double *c,
                            int32_t *hu_out) {
    double u = x;
    int32_t k, hu = hx;
    *c = 0;
    if (hx < 0x43400000) {
        u = 1.0 + x;
        hu = (int32_t)(asuint64(u) >> 32);
        k = (hu >> 20) - 1023;
        *c = ((k > 0) ? 1.0 - (u - x) : x - (u - 1.0)) / u;
    }
    k = (hu >> 20) - 1023;
    hu &= 0x000fffff;
    uint64_t lo = asuint64(u) & 0xffffffffu;
    if (hu < 0x6a09e) {
        u = asdouble((uint64_t)(uint32_t)(hu | 0x3ff00000) << 32 | lo);
    } else {
        k += 1;
        u = asdouble((uint64_t)(uint32_t)(hu | 0x3fe00000) << 32 | lo);
        hu = (0x00100000 - hu) >> 2;
    }
    *f = u - 1.0;
    *hu_out = hu;
    return k;
}

double log1p(double x) {
    static const double two54 = 1.80143985094819840000e+16,
                        Lp[] = {0.0,
                                6.666666666666735130e-01,
                                3.999999999940941908e-01,
                                2.857142874366239149e-01,
                                2.222219843214978396e-01,
                                1.818357216161805012e-01,
                                1.531383769920937332e-01,
                                1.479819860511658591e-01};
    double hfsq, f = 0, c = 0;
    int32_t k = 1, hu = 0, hx = (int32_t)(asuint64(x) >> 32);
    int32_t ax = hx & 0x7fffffff;
    if (hx < 0x3FDA827A) {
        if (ax >= 0x3ff00000) {
            if (x == -1.0) return -two54 / 0.0;
            return (x - x) / (x - x);
        }
        if (ax < 0x3e200000) {
            fp_force_eval(two54 + x);
            if (ax < 0x3c900000) return x;
            return fma(-(x * x), 0.5, x);
        }
        if (hx > 0 || hx <= (int32_t)0xbfd2bec3) {
            k = 0;
            f = x;
            hu = 1;
        }
    } else if (hx >= 0x7ff00000) {
        return x + x;
    }
    if (k != 0) k = log1p_reduce(x, hx, &f, &c, &hu);
    hfsq = (f * 0.5) * f;
    double kd = (double)k;
    if (hu == 0) {
        if (f == 0.0) {
            if (k == 0) return 0.0;
            return fma(kd, LN2_HI, fma(kd, LN2_LO, c));
        }
        double R = fma(-f, 0.66666666666666666, 1.0) * hfsq;
        if (k == 0) return f - R;
        return fma(kd, LN2_HI, -((R - fma(kd, LN2_LO, c)) - f));
    }
    double s = f / (2.0 + f), z = s * s, z2 = z * z, z4 = z2 * z2;
    double R2 = fma(z, Lp[3], Lp[2]), R3 = fma(z, Lp[5], Lp[4]);
    double z6 = z2 * z4, R4 = fma(z, Lp[7], Lp[6]);
    double R = fma(z, Lp[1], z2 * R2);
    R = fma(z6, R4, fma(z4, R3, R));
    double sR = s * (R + hfsq);
    if (k == 0) return f - (hfsq - sR);
    return fma(kd, LN2_HI, -((hfsq - (fma(kd, LN2_LO, c) + sR)) - f));
}
