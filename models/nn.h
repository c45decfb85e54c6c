/*
 * nn.h -- the two models the numerics half trains: a decoder-only
 * transformer language model and a small residual MLP, with their FP32
 * forward and backward passes on the CPU.
 *
 * Models.
 *   NN_TRANSFORMER  token + learned position embeddings; `layers` pre-norm
 *                   blocks  x += proj(attn(LN1(x)));  x += W2 gelu(W1 LN2(x))
 *                   with causal multi-head self-attention and an MLP of
 *                   width mlp_ratio * d; final LayerNorm; output head (its
 *                   own matrix, not tied to the embedding, no bias).
 *   NN_MLP          token embedding only (no position, no sequence mixing:
 *                   position i predicts targets[i] from tokens[i] alone);
 *                   `layers` blocks  x += W2 gelu(W1 LN(x) + b1) + b2;
 *                   final LayerNorm; output head.
 * Loss: softmax cross-entropy averaged over all batch * seq positions.
 * GELU is the tanh approximation; LayerNorm eps is 1e-5.
 *
 * Parameters.  One contiguous FP32 vector, cut into units laid back to
 * back; each unit is contiguous and is what fragments are made of:
 *   unit 0          embeddings    wte [vocab, d], wpe [ctx, d] (transformer)
 *   units 1..L      block l-1     (tensors listed below)
 *   unit L+1        head          lnf.w [d], lnf.b [d], head.w [vocab, d]
 * Transformer block: ln1.w, ln1.b [d]; attn.qkv.w [3d, d]; attn.qkv.b [3d];
 * attn.proj.w [d, d]; attn.proj.b [d]; ln2.w, ln2.b [d]; mlp.fc.w [h, d];
 * mlp.fc.b [h]; mlp.proj.w [d, h]; mlp.proj.b [d] (h = mlp_ratio * d).
 * MLP block: ln.w, ln.b [d]; mlp.fc.w [h, d]; mlp.fc.b [h]; mlp.proj.w
 * [d, h]; mlp.proj.b [d].
 * Tensors inside a unit are stored in that order, each row-major; a
 * linear weight [out, in] has one row per output channel.  The gradient
 * vector has exactly the same layout.
 *
 * Threads.  No global mutable state: several models may be used from
 * different threads at the same time (one model per thread).  nn_new
 * makes OpenBLAS single-threaded per call (tn_blas_single_thread), and
 * then results are bit-identical whichever thread runs a model and
 * however many run at once.  They are not across BLAS thread counts: a
 * program that raises OpenBLAS's thread count afterwards gets the same
 * losses but gradients that differ in the last bits.  Nor across BLAS
 * backends or CPUs (OpenBLAS picks its kernel at run time).
 *
 * Memory.  nn_new allocates parameters, gradients and every activation
 * and scratch buffer for its (batch, seq) shape; forward and backward
 * never allocate.
 */
#ifndef DILOSIM_NN_H
#define DILOSIM_NN_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/msg.h" /* the codes returned */

typedef enum { NN_TRANSFORMER = 1, NN_MLP = 2 } nn_kind;

typedef struct {
    nn_kind kind;
    int vocab;     /* >= 2 */
    int d;         /* model width >= 1; transformer: a multiple of heads */
    int heads;     /* transformer: >= 1; ignored by NN_MLP */
    int layers;    /* blocks, >= 1 */
    int ctx;       /* transformer: rows of wpe, the longest sequence;
                      ignored by NN_MLP */
    int mlp_ratio; /* MLP hidden width = mlp_ratio * d; 0 means 4 */
} nn_config;

typedef enum {
    NN_UNIT_EMBED = 0, /* unit 0 */
    NN_UNIT_BLOCK = 1, /* units 1..layers */
    NN_UNIT_HEAD = 2   /* unit layers + 1 */
} nn_unit_kind;

/* One tensor inside a unit. */
typedef struct {
    const char *name; /* e.g. "attn.qkv.w"; a static string */
    size_t offset;    /* first value, counted from the start of the unit */
    int rows, cols;   /* row-major; a vector is 1 x n */
    int decay;        /* 1 for matrices and embeddings (weight decay
                         applies), 0 for biases and LayerNorm parameters */
} nn_tensor;

typedef struct nn_model nn_model;

/* ---- configuration (pure functions, no model needed) -------------------- */

/* The most blocks (nn_config.layers) a model may have. */
#define NN_MAX_LAYERS 10000

/* Checks a configuration and the batch shape nn_new would get: returns
 * 0, or MSG_EINPUT and writes a one-line reason to err (when err is
 * not NULL; truncated to errlen).  seq must be <= ctx for the
 * transformer; batch * seq must fit in an int. */
int nn_check(const nn_config *c, int batch, int seq, char *err, size_t errlen);

/* Units (layers + 2), total parameters and the size of unit u of a valid
 * configuration (the same figures a model built from it reports); 0 for
 * an invalid configuration or unit. */
int nn_config_num_units(const nn_config *c);
size_t nn_config_num_params(const nn_config *c);
size_t nn_config_unit_size(const nn_config *c, int u);

/* ---- life cycle ---------------------------------------------------------- */

/* A model for batches of `batch` sequences of `seq` tokens, parameters
 * zeroed (call nn_init).  NULL when nn_check fails or memory runs out. */
nn_model *nn_new(const nn_config *c, int batch, int seq);

/* Frees everything; NULL is allowed. */
void nn_free(nn_model *m);

/* GPT-2 initialisation, deterministic from the seed: matrices and
 * embeddings ~ N(0, 0.02^2), residual projections (attn.proj.w,
 * mlp.proj.w) ~ N(0, (0.02 / sqrt(2 * layers))^2), biases 0, LayerNorm
 * weights 1.  Each unit u has its own GSL mt19937 stream seeded with
 * splitmix64(seed + (u + 1) * 0x9E3779B97F4A7C15) (the low 32 bits, as
 * mt19937 uses), drawn with gsl_ran_gaussian over the unit's tensors in
 * order, row-major; so a unit's initial values depend only on the seed,
 * its index and its own shape.  Gradients are zeroed. */
void nn_init(nn_model *m, uint64_t seed);

/* ---- steps --------------------------------------------------------------- */

/* Forward pass on tokens[batch * seq] with targets[batch * seq] (row b*seq
 * + t is position t of sequence b; ids in [0, vocab)).  Both arrays are
 * copied.  Returns the mean cross-entropy loss, or NAN (nothing computed)
 * when an id is out of range. */
float nn_forward(nn_model *m, const int32_t *tokens, const int32_t *targets);

/* Backward pass of the last nn_forward: OVERWRITES the gradient vector
 * (zeroes it, then computes d mean-loss / d params); it does not
 * accumulate across calls.  Must follow a successful nn_forward, once:
 * returns MSG_ESTATE otherwise (a second call, or after nn_eval_loss,
 * which reuses the activation buffers), else 0. */
int nn_backward(nn_model *m);

/* Forward only: the mean loss of the parameter vector `params` (laid out
 * like nn_params, nn_num_params floats; NULL means the model's own) on
 * this batch.  Lets one model's buffers evaluate another vector (say the
 * outer parameters) without copying.  Uses the model's activation
 * buffers, so a pending nn_backward is cancelled.  NAN when an id is out
 * of range. */
float nn_eval_loss(nn_model *m, const float *params, const int32_t *tokens,
                   const int32_t *targets);

/* The per-position losses [batch * seq] of the last forward pass. */
const float *nn_position_losses(const nn_model *m);

/* ---- parameters and layout ----------------------------------------------- */

float *nn_params(nn_model *m);
float *nn_grads(nn_model *m);
size_t nn_num_params(const nn_model *m);

int nn_num_units(const nn_model *m);
/* Offset (in floats, into nn_params / nn_grads) and size of unit u;
 * units are back to back: offset(u+1) = offset(u) + size(u).  Both are 0
 * for u outside 0..nn_num_units-1, and nn_unit_tensors gives no tensor;
 * nn_unit_type needs a valid u. */
size_t nn_unit_offset(const nn_model *m, int u);
size_t nn_unit_size(const nn_model *m, int u);
nn_unit_kind nn_unit_type(const nn_model *m, int u);
/* The tensors of unit u, in storage order: sets *t to an array owned by
 * the model and returns its length. */
int nn_unit_tensors(const nn_model *m, int u, const nn_tensor **t);

const nn_config *nn_get_config(const nn_model *m); /* mlp_ratio resolved */
int nn_batch(const nn_model *m);
int nn_seq(const nn_model *m);

/* Floating-point operations of one forward + backward step, counting
 * 2 per multiply-add of the matrix products only (the work that scales):
 *   6 * N_mm * batch * seq  +  12 * layers * batch * seq^2 * d
 * where N_mm is the number of weights in matrix products (qkv, attention
 * projection, the two MLP matrices of every block, and the head; not the
 * embeddings, which are lookups, nor biases or LayerNorm).  The second
 * term is attention (q k^T and att v, forward and twice backward), full
 * seq x seq squares as computed, as in the PaLM paper's count; NN_MLP
 * has no such term.  Elementwise work (LayerNorm, GELU, softmax) is not
 * counted. */
double nn_flops_per_step(const nn_model *m);

#endif
