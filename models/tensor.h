/*
 * tensor.h -- the FP32 kernels under models/nn.c: matrix products through
 * CBLAS, linear layers, LayerNorm, GELU, causal multi-head attention and
 * softmax cross-entropy, each with its hand-written backward pass.
 *
 * Conventions shared by every kernel:
 *   - Row-major.  An activation is a matrix of n rows (one per position)
 *     and c columns (channels).  A weight of a linear layer is [oc, ic]
 *     (one row per output channel), so out = inp * W^T + b.
 *   - Forward kernels overwrite their outputs.
 *   - Backward kernels ACCUMULATE into parameter gradients (dw, db) and
 *     into dinp unless the comment says "overwrites".  The caller zeroes
 *     the parameter gradients once per step.
 *   - No allocation, no global state: every scratch buffer is passed in.
 *     Several threads may run kernels at the same time on distinct buffers
 *     (the CBLAS backend must be single-threaded per call or thread-safe;
 *     see tn_blas_single_thread).
 *   - Deterministic: the same inputs give the same bits, whatever thread
 *     runs the kernel.  Sums over positions run in a fixed order.
 *
 * Matrix products go through cblas_sgemm: OpenBLAS when the build defines
 * DILOSIM_OPENBLAS, GSL's reference CBLAS (gslcblas) otherwise.
 */
#ifndef DILOSIM_TENSOR_H
#define DILOSIM_TENSOR_H

#include <stddef.h>
#include <stdint.h>

/* C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, row-major, where
 * op(X) is X or X^T as ta / tb are 0 or 1; lda, ldb, ldc are row strides. */
void tn_gemm(int ta, int tb, int M, int N, int K, float alpha, const float *A,
             int lda, const float *B, int ldb, float beta, float *C, int ldc);

/* Called once at the start of a program: OpenBLAS starts a thread per
 * core as it loads (in its constructor, before main), and they spin for a
 * while, about 0.1 s of a core per process, though dilosim only calls
 * BLAS from its own threads, one thread a call.  Unless the user chose a
 * count (OPENBLAS_NUM_THREADS), this sets OpenBLAS's count to 1 and ends
 * those threads (no re-exec: valgrind and the dynamic loader run by hand
 * see one process).  Does nothing for gslcblas. */
void tn_blas_start(void);

/* Makes the BLAS backend run each call on the calling thread only
 * (OpenBLAS: openblas_set_num_threads(1), done once per process however
 * many threads call this).  Does nothing for gslcblas, which never
 * spawns threads.  Called by nn_new. */
void tn_blas_single_thread(void);

/* The BLAS backend in use: OpenBLAS's configuration string (version,
 * build options and the kernel chosen for this CPU) or "gslcblas".  A
 * static string. */
const char *tn_blas_name(void);

/* ---- linear layer ------------------------------------------------------ */

/* out[n,oc] = inp[n,ic] * w[oc,ic]^T + b[oc]; b may be NULL (no bias). */
void tn_linear_forward(float *out, const float *inp, const float *w,
                       const float *b, int n, int ic, int oc);

/* Backward of tn_linear_forward given dout[n,oc]:
 *   dinp[n,ic]  OVERWRITTEN with dout * w     (skipped when dinp is NULL)
 *   dw[oc,ic]  += dout^T * inp
 *   db[oc]     += column sums of dout         (skipped when db is NULL) */
void tn_linear_backward(float *dinp, float *dw, float *db, const float *dout,
                        const float *inp, const float *w, int n, int ic,
                        int oc);

/* ---- LayerNorm ---------------------------------------------------------- */

#define TN_LN_EPS 1e-5f

/* Per row of inp[n,c]: out = (x - mean) * rstd * w + b with
 * rstd = 1 / sqrt(var + TN_LN_EPS) (biased variance); mean[n] and rstd[n]
 * are saved for the backward pass. */
void tn_layernorm_forward(float *out, float *mean, float *rstd,
                          const float *inp, const float *w, const float *b,
                          int n, int c);

/* Backward of tn_layernorm_forward: dinp += ..., dw += ..., db += ... */
void tn_layernorm_backward(float *dinp, float *dw, float *db, const float *dout,
                           const float *inp, const float *w, const float *mean,
                           const float *rstd, int n, int c);

/* ---- GELU (tanh approximation) ----------------------------------------- */

/* out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), elementwise.
 * tanh(u) is computed as 1 - 2 / (1 + exp(2u)) (expf is several times
 * faster than tanhf; absolute error below 1e-7). */
void tn_gelu_forward(float *out, const float *inp, size_t n);

/* dinp = gelu'(inp) * dout, OVERWRITTEN; dinp may alias dout. */
void tn_gelu_backward(float *dinp, const float *inp, const float *dout,
                      size_t n);

/* ---- causal multi-head self-attention ----------------------------------- */

/* Shape of one attention call: b sequences of t positions, nh heads of
 * size hs each (c = nh * hs). */
typedef struct {
    int b, t, nh, hs;
} tn_attn_shape;

/* qkv[b,t,3c] holds per position q (channels 0..c-1), k (c..2c-1) and v
 * (2c..3c-1); head h uses channels h*hs .. h*hs+hs-1 of each.  For every
 * (sequence, head): att = softmax(q k^T / sqrt(hs)) over keys j <= i
 * (causal; entries j > i are written as 0), out = att v.
 * att[b,nh,t,t] keeps the probabilities for the backward pass;
 * out[b,t,c]. */
void tn_attention_forward(float *out, float *att, const float *qkv,
                          tn_attn_shape s);

/* Backward of tn_attention_forward: dqkv[b,t,3c] OVERWRITTEN.  scratch
 * holds t*t floats. */
void tn_attention_backward(float *dqkv, float *scratch, const float *dout,
                           const float *qkv, const float *att, tn_attn_shape s);

/* ---- softmax cross-entropy ---------------------------------------------- */

/* For each of n rows of logits[n,v]: probs = softmax(row) (max subtracted,
 * FP32), written over the logits; losses[i] = -log probs[i][targets[i]].
 * Returns the mean loss, summed in double in row order. */
double tn_crossentropy_forward(float *losses, float *logits_to_probs,
                               const int32_t *targets, int n, int v);

/* Turns probs[n,v] (from tn_crossentropy_forward) into the gradient of the
 * mean loss with respect to the logits, in place:
 * (probs - onehot(target)) / n. */
void tn_crossentropy_backward(float *probs_to_dlogits, const int32_t *targets,
                              int n, int v);

#endif
