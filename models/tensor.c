/*
 * tensor.c -- FP32 kernels with hand-written backward passes (see
 * tensor.h for the conventions).  Written for clarity first; the matrix
 * products, which are nearly all of the arithmetic, go to cblas_sgemm.
 */
#include "models/tensor.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef DILOSIM_OPENBLAS
#include <cblas.h>
#else
#include <gsl/gsl_cblas.h>
#endif

/* ---- BLAS -------------------------------------------------------------- */

void tn_gemm(int ta, int tb, int M, int N, int K, float alpha, const float *A,
             int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb,
                beta, C, ldc);
}

#ifdef DILOSIM_OPENBLAS
/* OpenBLAS's own: ends the threads of its server (its handler before a
 * fork; the next call that needs them starts them again).  Not in
 * <cblas.h>, and absent from some builds (OpenMP's): weak, NULL there. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

/* The one piece of process-wide state here, set once: OpenBLAS's own
 * thread count.  pthread_once makes concurrent first calls safe.  A
 * count of 1 already is left alone: setting it again would start the
 * server's threads anew. */
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void blas_set_one_thread(void) {
    if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}
#endif

void tn_blas_start(void) {
#ifdef DILOSIM_OPENBLAS
    if (getenv("OPENBLAS_NUM_THREADS") || openblas_get_num_threads() == 1)
        return;
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_) blas_thread_shutdown_();
#endif
}

void tn_blas_single_thread(void) {
#ifdef DILOSIM_OPENBLAS
    pthread_once(&blas_once, blas_set_one_thread);
#endif
}

const char *tn_blas_name(void) {
#ifdef DILOSIM_OPENBLAS
    return openblas_get_config();
#else
    return "gslcblas";
#endif
}

/* ---- linear layer ------------------------------------------------------ */

void tn_linear_forward(float *out, const float *inp, const float *w,
                       const float *b, int n, int ic, int oc) {
    float beta = 0.0f;
    if (b) {
        for (int i = 0; i < n; i++)
            memcpy(out + (size_t)i * oc, b, (size_t)oc * sizeof *out);
        beta = 1.0f;
    }
    tn_gemm(0, 1, n, oc, ic, 1.0f, inp, ic, w, ic, beta, out, oc);
}

void tn_linear_backward(float *dinp, float *dw, float *db, const float *dout,
                        const float *inp, const float *w, int n, int ic,
                        int oc) {
    if (dinp) tn_gemm(0, 0, n, ic, oc, 1.0f, dout, oc, w, ic, 0.0f, dinp, ic);
    tn_gemm(1, 0, oc, ic, n, 1.0f, dout, oc, inp, ic, 1.0f, dw, ic);
    if (db) {
        for (int i = 0; i < n; i++) {
            const float *row = dout + (size_t)i * oc;
            for (int o = 0; o < oc; o++) db[o] += row[o];
        }
    }
}

/* ---- LayerNorm ---------------------------------------------------------- */

void tn_layernorm_forward(float *out, float *mean, float *rstd,
                          const float *inp, const float *w, const float *b,
                          int n, int c) {
    for (int i = 0; i < n; i++) {
        const float *x = inp + (size_t)i * c;
        float *y = out + (size_t)i * c;
        float m = 0.0f;
        for (int j = 0; j < c; j++) m += x[j];
        m /= (float)c;
        float v = 0.0f;
        for (int j = 0; j < c; j++) {
            float d = x[j] - m;
            v += d * d;
        }
        v /= (float)c;
        float s = 1.0f / sqrtf(v + TN_LN_EPS);
        for (int j = 0; j < c; j++) y[j] = (x[j] - m) * s * w[j] + b[j];
        mean[i] = m;
        rstd[i] = s;
    }
}

void tn_layernorm_backward(float *dinp, float *dw, float *db, const float *dout,
                           const float *inp, const float *w, const float *mean,
                           const float *rstd, int n, int c) {
    for (int i = 0; i < n; i++) {
        const float *x = inp + (size_t)i * c;
        const float *dy = dout + (size_t)i * c;
        float *dx = dinp + (size_t)i * c;
        float m = mean[i], s = rstd[i];
        /* the two reductions of the normalised-input gradient */
        float dmean = 0.0f, dnorm = 0.0f;
        for (int j = 0; j < c; j++) {
            float xhat = (x[j] - m) * s;
            float g = w[j] * dy[j];
            dmean += g;
            dnorm += g * xhat;
        }
        dmean /= (float)c;
        dnorm /= (float)c;
        for (int j = 0; j < c; j++) {
            float xhat = (x[j] - m) * s;
            float g = w[j] * dy[j];
            dx[j] += (g - dmean - xhat * dnorm) * s;
            dw[j] += dy[j] * xhat;
            db[j] += dy[j];
        }
    }
}

/* ---- GELU --------------------------------------------------------------- */

#define GELU_S 0.7978845608028654f /* sqrt(2/pi) */
#define GELU_C 0.044715f

/* tanh through one expf: exact limits +-1 for large |u| (expf overflows
 * to inf or underflows to 0), absolute error below 1e-7. */
static inline float fast_tanh(float u) {
    return 1.0f - 2.0f / (1.0f + expf(2.0f * u));
}

void tn_gelu_forward(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float u = GELU_S * (x + GELU_C * x * x * x);
        out[i] = 0.5f * x * (1.0f + fast_tanh(u));
    }
}

void tn_gelu_backward(float *dinp, const float *inp, const float *dout,
                      size_t n) {
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float u = GELU_S * (x + GELU_C * x * x * x);
        float t = fast_tanh(u);
        float du = GELU_S * (1.0f + 3.0f * GELU_C * x * x);
        float g = 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du;
        dinp[i] = g * dout[i];
    }
}

/* ---- attention ---------------------------------------------------------- */

/* Row i of a causal score matrix a[t,t]: softmax over j <= i (max
 * subtracted), zeros for j > i. */
static void causal_softmax_rows(float *a, int t) {
    for (int i = 0; i < t; i++) {
        float *r = a + (size_t)i * t;
        float mx = r[0];
        for (int j = 1; j <= i; j++) mx = r[j] > mx ? r[j] : mx;
        float sum = 0.0f;
        for (int j = 0; j <= i; j++) {
            r[j] = expf(r[j] - mx);
            sum += r[j];
        }
        float inv = 1.0f / sum;
        for (int j = 0; j <= i; j++) r[j] *= inv;
        for (int j = i + 1; j < t; j++) r[j] = 0.0f;
    }
}

void tn_attention_forward(float *out, float *att, const float *qkv,
                          tn_attn_shape s) {
    const int c = s.nh * s.hs, c3 = 3 * c, t = s.t;
    const float scale = 1.0f / sqrtf((float)s.hs);
    for (int b = 0; b < s.b; b++) {
        for (int h = 0; h < s.nh; h++) {
            const float *q = qkv + (size_t)b * t * c3 + (size_t)h * s.hs;
            const float *k = q + c, *v = q + 2 * c;
            float *a = att + ((size_t)b * s.nh + h) * t * t;
            float *y = out + (size_t)b * t * c + (size_t)h * s.hs;
            /* scores = q k^T / sqrt(hs) (full square, then masked) */
            tn_gemm(0, 1, t, t, s.hs, scale, q, c3, k, c3, 0.0f, a, t);
            causal_softmax_rows(a, t);
            tn_gemm(0, 0, t, s.hs, t, 1.0f, a, t, v, c3, 0.0f, y, c);
        }
    }
}

/* In place, from dA (the gradient of the probabilities) to dS (of the
 * scores, before the 1/sqrt(hs) factor), for a causal softmax:
 * dS_ij = A_ij (dA_ij - sum_k A_ik dA_ik) for j <= i, 0 above. */
static void causal_softmax_backward_rows(float *da, const float *a, int t) {
    for (int i = 0; i < t; i++) {
        float *d = da + (size_t)i * t;
        const float *p = a + (size_t)i * t;
        float dot = 0.0f;
        for (int j = 0; j <= i; j++) dot += p[j] * d[j];
        for (int j = 0; j <= i; j++) d[j] = p[j] * (d[j] - dot);
        for (int j = i + 1; j < t; j++) d[j] = 0.0f;
    }
}

void tn_attention_backward(float *dqkv, float *scratch, const float *dout,
                           const float *qkv, const float *att,
                           tn_attn_shape s) {
    const int c = s.nh * s.hs, c3 = 3 * c, t = s.t;
    const float scale = 1.0f / sqrtf((float)s.hs);
    for (int b = 0; b < s.b; b++) {
        for (int h = 0; h < s.nh; h++) {
            size_t qo = (size_t)b * t * c3 + (size_t)h * s.hs;
            const float *q = qkv + qo, *k = q + c, *v = q + 2 * c;
            float *dq = dqkv + qo, *dk = dq + c, *dv = dq + 2 * c;
            const float *a = att + ((size_t)b * s.nh + h) * t * t;
            const float *dy = dout + (size_t)b * t * c + (size_t)h * s.hs;
            float *ds = scratch;
            /* y = a v:  da = dy v^T,  dv = a^T dy */
            tn_gemm(0, 1, t, t, s.hs, 1.0f, dy, c, v, c3, 0.0f, ds, t);
            tn_gemm(1, 0, t, s.hs, t, 1.0f, a, t, dy, c, 0.0f, dv, c3);
            causal_softmax_backward_rows(ds, a, t);
            /* scores = scale q k^T:  dq = scale ds k,  dk = scale ds^T q */
            tn_gemm(0, 0, t, s.hs, t, scale, ds, t, k, c3, 0.0f, dq, c3);
            tn_gemm(1, 0, t, s.hs, t, scale, ds, t, q, c3, 0.0f, dk, c3);
        }
    }
}

/* ---- softmax cross-entropy ---------------------------------------------- */

double tn_crossentropy_forward(float *losses, float *logits_to_probs,
                               const int32_t *targets, int n, int v) {
    double total = 0.0;
    for (int i = 0; i < n; i++) {
        float *r = logits_to_probs + (size_t)i * v;
        float mx = r[0];
        for (int j = 1; j < v; j++) mx = r[j] > mx ? r[j] : mx;
        float zt = r[targets[i]] - mx;
        float sum = 0.0f;
        for (int j = 0; j < v; j++) {
            r[j] = expf(r[j] - mx);
            sum += r[j];
        }
        float inv = 1.0f / sum;
        for (int j = 0; j < v; j++) r[j] *= inv;
        /* -log softmax, from the logits: no log of an underflowed 0 */
        losses[i] = logf(sum) - zt;
        total += losses[i];
    }
    return total / n;
}

void tn_crossentropy_backward(float *probs_to_dlogits, const int32_t *targets,
                              int n, int v) {
    const float inv_n = 1.0f / (float)n;
    for (int i = 0; i < n; i++) {
        float *r = probs_to_dlogits + (size_t)i * v;
        r[targets[i]] -= 1.0f;
        for (int j = 0; j < v; j++) r[j] *= inv_n;
    }
}
