/*
 * nn.c -- the transformer LM and the residual MLP of nn.h: parameter
 * layout, initialisation, forward and backward passes.
 *
 * The layout is computed once from the configuration: each unit is a
 * list of tensors, and each tensor has a role (what it is in the network)
 * so the passes can find it without caring about its position.  The
 * passes follow llm.c's train_gpt2.c: activations of every layer are kept
 * for the backward pass, which walks the layers in reverse carrying the
 * gradient of the residual stream in one buffer.
 */
#include "models/nn.h"
#include "sim/base/msg.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "sim/base/rng.h"
#include "models/tensor.h"

/* ---- roles and layout --------------------------------------------------- */

typedef enum {
    R_WTE,
    R_WPE, /* embeddings */
    R_LN1W,
    R_LN1B,
    R_QKVW,
    R_QKVB, /* block: attention half */
    R_PROJW,
    R_PROJB,
    R_LN2W,
    R_LN2B,
    R_FCW,
    R_FCB, /* block: MLP half */
    R_FCPW,
    R_FCPB,
    R_LNFW,
    R_LNFB,
    R_HEADW, /* head */
    R_COUNT
} role;

#define MAX_TENSORS 12

typedef struct {
    nn_unit_kind kind;
    size_t offset, size;
    int ntensors;
    nn_tensor t[MAX_TENSORS];
    role roles[MAX_TENSORS];
    int slot[R_COUNT]; /* role -> tensor index, -1 when absent */
} unit_layout;

static void unit_begin(unit_layout *u, nn_unit_kind kind) {
    memset(u, 0, sizeof *u);
    u->kind = kind;
    for (int r = 0; r < R_COUNT; r++) u->slot[r] = -1;
}

static void unit_add(unit_layout *u, role r, const char *name, int rows,
                     int cols, int decay) {
    nn_tensor *t = &u->t[u->ntensors];
    t->name = name;
    t->offset = u->size;
    t->rows = rows;
    t->cols = cols;
    t->decay = decay;
    u->roles[u->ntensors] = r;
    u->slot[r] = u->ntensors++;
    u->size += (size_t)rows * (size_t)cols;
}

static int hidden_width(const nn_config *c) {
    return (c->mlp_ratio ? c->mlp_ratio : 4) * c->d;
}

/* Fills u (nunits = layers + 2 entries) for a valid configuration. */
static void build_layout(const nn_config *c, unit_layout *u) {
    const int d = c->d, h = hidden_width(c), L = c->layers;
    const int tf = c->kind == NN_TRANSFORMER;
    unit_begin(&u[0], NN_UNIT_EMBED);
    unit_add(&u[0], R_WTE, "wte", c->vocab, d, 1);
    if (tf) unit_add(&u[0], R_WPE, "wpe", c->ctx, d, 1);
    for (int l = 1; l <= L; l++) {
        unit_layout *b = &u[l];
        unit_begin(b, NN_UNIT_BLOCK);
        unit_add(b, R_LN1W, tf ? "ln1.w" : "ln.w", 1, d, 0);
        unit_add(b, R_LN1B, tf ? "ln1.b" : "ln.b", 1, d, 0);
        if (tf) {
            unit_add(b, R_QKVW, "attn.qkv.w", 3 * d, d, 1);
            unit_add(b, R_QKVB, "attn.qkv.b", 1, 3 * d, 0);
            unit_add(b, R_PROJW, "attn.proj.w", d, d, 1);
            unit_add(b, R_PROJB, "attn.proj.b", 1, d, 0);
            unit_add(b, R_LN2W, "ln2.w", 1, d, 0);
            unit_add(b, R_LN2B, "ln2.b", 1, d, 0);
        }
        unit_add(b, R_FCW, "mlp.fc.w", h, d, 1);
        unit_add(b, R_FCB, "mlp.fc.b", 1, h, 0);
        unit_add(b, R_FCPW, "mlp.proj.w", d, h, 1);
        unit_add(b, R_FCPB, "mlp.proj.b", 1, d, 0);
    }
    unit_begin(&u[L + 1], NN_UNIT_HEAD);
    unit_add(&u[L + 1], R_LNFW, "lnf.w", 1, d, 0);
    unit_add(&u[L + 1], R_LNFB, "lnf.b", 1, d, 0);
    unit_add(&u[L + 1], R_HEADW, "head.w", c->vocab, d, 1);
    size_t off = 0;
    for (int i = 0; i < L + 2; i++) {
        u[i].offset = off;
        off += u[i].size;
    }
}

/* ---- configuration checks ------------------------------------------------ */

/* Largest width we accept for one dimension: keeps every product of two
 * dimensions (the offsets of one tensor) far from overflow. */
#define DIM_MAX (1 << 24)

static int check_config(const nn_config *c, char *err, size_t errlen) {
    if (!c) return msg_set(err, errlen, MSG_EINPUT, "nn: no configuration");
    if (c->kind != NN_TRANSFORMER && c->kind != NN_MLP)
        return msg_set(err, errlen, MSG_EINPUT,
                       "nn: kind %d (expected transformer or mlp)",
                       (int)c->kind);
    if (c->vocab < 2 || c->vocab > DIM_MAX)
        return msg_set(err, errlen, MSG_EINPUT, "nn: vocab %d (expected 2..%d)",
                       c->vocab, DIM_MAX);
    if (c->d < 1 || c->d > DIM_MAX)
        return msg_set(err, errlen, MSG_EINPUT, "nn: d %d (expected 1..%d)",
                       c->d, DIM_MAX);
    if (c->layers < 1 || c->layers > NN_MAX_LAYERS)
        return msg_set(err, errlen, MSG_EINPUT,
                       "nn: layers %d (expected 1..%d)", c->layers,
                       NN_MAX_LAYERS);
    if (c->mlp_ratio < 0 || c->mlp_ratio > 64 ||
        (long long)(c->mlp_ratio ? c->mlp_ratio : 4) * c->d > DIM_MAX)
        return msg_set(err, errlen, MSG_EINPUT,
                       "nn: mlp_ratio %d (expected 0..64, "
                       "mlp_ratio * d <= %d)",
                       c->mlp_ratio, DIM_MAX);
    if (c->kind == NN_TRANSFORMER) {
        if (c->heads < 1 || c->d % c->heads != 0)
            return msg_set(err, errlen, MSG_EINPUT,
                           "nn: heads %d (expected >= 1 dividing "
                           "d = %d)",
                           c->heads, c->d);
        if (c->d > DIM_MAX / 3)
            return msg_set(err, errlen, MSG_EINPUT,
                           "nn: d %d (expected 3 * d <= %d)", c->d, DIM_MAX);
        if (c->ctx < 1 || c->ctx > DIM_MAX)
            return msg_set(err, errlen, MSG_EINPUT,
                           "nn: ctx %d (expected 1..%d)", c->ctx, DIM_MAX);
    }
    return 0;
}

int nn_check(const nn_config *c, int batch, int seq, char *err, size_t errlen) {
    int rc = check_config(c, err, errlen);
    if (rc) return rc;
    if (batch < 1 || seq < 1)
        return msg_set(err, errlen, MSG_EINPUT,
                       "nn: batch %d, seq %d (expected >= 1)", batch, seq);
    if (c->kind == NN_TRANSFORMER && seq > c->ctx)
        return msg_set(err, errlen, MSG_EINPUT, "nn: seq %d longer than ctx %d",
                       seq, c->ctx);
    if ((long long)batch * seq > INT_MAX / 4)
        return msg_set(err, errlen, MSG_EINPUT,
                       "nn: batch * seq = %lld too large",
                       (long long)batch * seq);
    return 0;
}

int nn_config_num_units(const nn_config *c) {
    return check_config(c, NULL, 0) ? 0 : c->layers + 2;
}

/* Unit sizes without building the whole layout. */
size_t nn_config_unit_size(const nn_config *c, int u) {
    int n = nn_config_num_units(c);
    if (u < 0 || u >= n) return 0;
    const size_t d = (size_t)c->d, h = (size_t)hidden_width(c);
    const size_t v = (size_t)c->vocab;
    if (u == 0)
        return v * d + (c->kind == NN_TRANSFORMER ? (size_t)c->ctx * d : 0);
    if (u == n - 1) return 2 * d + v * d;
    size_t mlp = 2 * d + h * d + h + d * h + d;
    if (c->kind == NN_MLP) return mlp;
    return mlp + 2 * d + 3 * d * d + 3 * d + d * d + d;
}

size_t nn_config_num_params(const nn_config *c) {
    size_t n = 0;
    for (int u = 0; u < nn_config_num_units(c); u++)
        n += nn_config_unit_size(c, u);
    return n;
}

/* ---- the model ----------------------------------------------------------- */

/* Activations of one block, kept for the backward pass.  The NN_MLP
 * block uses ln1, ln1_mean, ln1_rstd, fch and fchg only. */
typedef struct {
    float *ln1, *ln1_mean, *ln1_rstd; /* [n,c], [n], [n] */
    float *qkv;                       /* [n,3c] */
    float *att;                       /* [b,nh,t,t] probabilities */
    float *atty;                      /* [n,c] attention output */
    float *resmid;                    /* [n,c] residual after attention */
    float *ln2, *ln2_mean, *ln2_rstd;
    float *fch, *fchg; /* [n,h] before and after GELU */
} block_acts;

struct nn_model {
    nn_config cfg; /* mlp_ratio resolved */
    int B, T, n;   /* batch, seq, n = B * T positions */
    int h;         /* MLP hidden width */
    int nunits;
    unit_layout *units;
    size_t nparams;
    float *params, *grads;
    gsl_rng *rng;

    /* inputs of the last forward */
    int32_t *tokens, *targets;
    int ready; /* a forward with own params awaits its backward */

    /* activations: one allocation, carved */
    float *act_mem;
    float **res;     /* res[l], l = 0..layers: input of block l; [n,c] */
    block_acts *blk; /* per block */
    float *lnf, *lnf_mean, *lnf_rstd;
    float *logits; /* [n,vocab]: logits, then probs, then dlogits */
    float *losses; /* [n] */

    /* backward scratch (part of act_mem) */
    float *dres;   /* [n,c] gradient of the residual stream */
    float *dln;    /* [n,c] gradient of a LayerNorm output */
    float *datty;  /* [n,c] */
    float *dqkv;   /* [n,3c] */
    float *dfch;   /* [n,h] */
    float *dscore; /* [t,t] */
};

/* Parameter tensor of a role in unit u, inside the vector `base`. */
static const float *prm(const nn_model *m, const float *base, int u, role r) {
    const unit_layout *ul = &m->units[u];
    return base + ul->offset + ul->t[ul->slot[r]].offset;
}

static float *grd(nn_model *m, int u, role r) {
    const unit_layout *ul = &m->units[u];
    return m->grads + ul->offset + ul->t[ul->slot[r]].offset;
}

/* 64-byte aligned zeroed floats (NULL on failure or n == 0). */
static float *alloc_floats(size_t n) {
    if (n == 0 || n > SIZE_MAX / sizeof(float) - 64) return NULL;
    size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

/* Carves `count` floats off *cursor, keeping 16-float (64-byte) alignment.
 * With a NULL base only counts (the first pass sizes the allocation). */
static float *carve(float *base, size_t *cursor, size_t count) {
    float *p = base ? base + *cursor : NULL;
    *cursor += (count + 15) / 16 * 16;
    return p;
}

/* Lays out (or, with base NULL, sizes) the activation memory; returns the
 * floats used. */
static size_t carve_acts(nn_model *m, float *base) {
    const size_t n = (size_t)m->n, c = (size_t)m->cfg.d, h = (size_t)m->h;
    const size_t v = (size_t)m->cfg.vocab, t = (size_t)m->T;
    const int tf = m->cfg.kind == NN_TRANSFORMER;
    const size_t nh = tf ? (size_t)m->cfg.heads : 0;
    size_t cur = 0;
    for (int l = 0; l <= m->cfg.layers; l++) {
        float *p = carve(base, &cur, n * c);
        if (base) m->res[l] = p;
    }
    for (int l = 0; l < m->cfg.layers; l++) {
        block_acts a = {0};
        a.ln1 = carve(base, &cur, n * c);
        a.ln1_mean = carve(base, &cur, n);
        a.ln1_rstd = carve(base, &cur, n);
        if (tf) {
            a.qkv = carve(base, &cur, n * 3 * c);
            a.att = carve(base, &cur, (size_t)m->B * nh * t * t);
            a.atty = carve(base, &cur, n * c);
            a.resmid = carve(base, &cur, n * c);
            a.ln2 = carve(base, &cur, n * c);
            a.ln2_mean = carve(base, &cur, n);
            a.ln2_rstd = carve(base, &cur, n);
        }
        a.fch = carve(base, &cur, n * h);
        a.fchg = carve(base, &cur, n * h);
        if (base) m->blk[l] = a;
    }
    float *lnf = carve(base, &cur, n * c);
    float *lnf_mean = carve(base, &cur, n);
    float *lnf_rstd = carve(base, &cur, n);
    float *logits = carve(base, &cur, n * v);
    float *losses = carve(base, &cur, n);
    float *dres = carve(base, &cur, n * c);
    float *dln = carve(base, &cur, n * c);
    float *datty = tf ? carve(base, &cur, n * c) : NULL;
    float *dqkv = tf ? carve(base, &cur, n * 3 * c) : NULL;
    float *dfch = carve(base, &cur, n * h);
    float *dscore = tf ? carve(base, &cur, t * t) : NULL;
    if (base) {
        m->lnf = lnf;
        m->lnf_mean = lnf_mean;
        m->lnf_rstd = lnf_rstd;
        m->logits = logits;
        m->losses = losses;
        m->dres = dres;
        m->dln = dln;
        m->datty = datty;
        m->dqkv = dqkv;
        m->dfch = dfch;
        m->dscore = dscore;
    }
    return cur;
}

nn_model *nn_new(const nn_config *c, int batch, int seq) {
    if (nn_check(c, batch, seq, NULL, 0)) return NULL;
    tn_blas_single_thread();
    nn_model *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->cfg = *c;
    if (m->cfg.mlp_ratio == 0) m->cfg.mlp_ratio = 4;
    m->B = batch;
    m->T = seq;
    m->n = batch * seq;
    m->h = hidden_width(&m->cfg);
    m->nunits = c->layers + 2;
    m->units = calloc((size_t)m->nunits, sizeof *m->units);
    m->res = calloc((size_t)c->layers + 1, sizeof *m->res);
    m->blk = calloc((size_t)c->layers, sizeof *m->blk);
    m->tokens = calloc((size_t)m->n, sizeof *m->tokens);
    m->targets = calloc((size_t)m->n, sizeof *m->targets);
    m->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!m->units || !m->res || !m->blk || !m->tokens || !m->targets || !m->rng)
        goto oom;
    build_layout(&m->cfg, m->units);
    m->nparams = m->units[m->nunits - 1].offset + m->units[m->nunits - 1].size;
    m->params = alloc_floats(m->nparams);
    m->grads = alloc_floats(m->nparams);
    m->act_mem = alloc_floats(carve_acts(m, NULL));
    if (!m->params || !m->grads || !m->act_mem) goto oom;
    carve_acts(m, m->act_mem);
    return m;
oom:
    nn_free(m);
    return NULL;
}

void nn_free(nn_model *m) {
    if (!m) return;
    free(m->units);
    free(m->res);
    free(m->blk);
    free(m->tokens);
    free(m->targets);
    if (m->rng) gsl_rng_free(m->rng);
    free(m->params);
    free(m->grads);
    free(m->act_mem);
    free(m);
}

/* ---- initialisation ------------------------------------------------------ */

/* The standard deviation of a role's initial values; 0 for biases
 * (zero) and negative for LayerNorm weights (one). */
static double init_std(const nn_model *m, role r) {
    switch (r) {
    case R_WTE:
    case R_WPE:
    case R_QKVW:
    case R_FCW:
    case R_HEADW: return 0.02;
    case R_PROJW:
    case R_FCPW: return 0.02 / sqrt(2.0 * m->cfg.layers);
    case R_LN1W:
    case R_LN2W:
    case R_LNFW: return -1.0;
    default: return 0.0;
    }
}

void nn_init(nn_model *m, uint64_t seed) {
    for (int u = 0; u < m->nunits; u++) {
        const unit_layout *ul = &m->units[u];
        uint64_t s = rng_mix(seed + (uint64_t)(u + 1) * 0x9E3779B97F4A7C15ull);
        gsl_rng_set(m->rng, (unsigned long)(s & 0xffffffffu));
        for (int i = 0; i < ul->ntensors; i++) {
            const nn_tensor *t = &ul->t[i];
            float *p = m->params + ul->offset + t->offset;
            size_t cnt = (size_t)t->rows * (size_t)t->cols;
            double sd = init_std(m, ul->roles[i]);
            for (size_t j = 0; j < cnt; j++)
                p[j] = sd > 0 ? (float)gsl_ran_gaussian(m->rng, sd)
                              : (sd < 0 ? 1.0f : 0.0f);
        }
    }
    memset(m->grads, 0, m->nparams * sizeof *m->grads);
    m->ready = 0;
}

/* ---- forward ------------------------------------------------------------- */

static int ids_ok(const int32_t *ids, int n, int vocab) {
    if (!ids) return 0;
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= vocab) return 0;
    return 1;
}

static void add_inplace(float *y, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

/* res[0] = wte[token] (+ wpe[position] for the transformer). */
static void embed_forward(nn_model *m, const float *P) {
    const int c = m->cfg.d;
    const float *wte = prm(m, P, 0, R_WTE);
    const float *wpe =
        m->cfg.kind == NN_TRANSFORMER ? prm(m, P, 0, R_WPE) : NULL;
    for (int i = 0; i < m->n; i++) {
        float *x = m->res[0] + (size_t)i * c;
        const float *e = wte + (size_t)m->tokens[i] * c;
        if (wpe) {
            const float *p = wpe + (size_t)(i % m->T) * c;
            for (int j = 0; j < c; j++) x[j] = e[j] + p[j];
        } else {
            memcpy(x, e, (size_t)c * sizeof *x);
        }
    }
}

static tn_attn_shape attn_shape(const nn_model *m) {
    tn_attn_shape s = {m->B, m->T, m->cfg.heads, m->cfg.d / m->cfg.heads};
    return s;
}

/* out = in + W2 gelu(W1 LN(in) + b1) + b2, with LN given as (w, b) and
 * its activations (ln, mean, rstd) — the MLP half of either block. */
static void mlp_half_forward(nn_model *m, const float *P, int u, float *out,
                             const float *in, role lnw, role lnb, float *ln,
                             float *mean, float *rstd, block_acts *a) {
    const int n = m->n, c = m->cfg.d, h = m->h;
    tn_layernorm_forward(ln, mean, rstd, in, prm(m, P, u, lnw),
                         prm(m, P, u, lnb), n, c);
    tn_linear_forward(a->fch, ln, prm(m, P, u, R_FCW), prm(m, P, u, R_FCB), n,
                      c, h);
    tn_gelu_forward(a->fchg, a->fch, (size_t)n * h);
    tn_linear_forward(out, a->fchg, prm(m, P, u, R_FCPW), prm(m, P, u, R_FCPB),
                      n, h, c);
    add_inplace(out, in, (size_t)n * c);
}

static void block_forward(nn_model *m, const float *P, int l) {
    const int n = m->n, c = m->cfg.d, u = l + 1;
    block_acts *a = &m->blk[l];
    const float *in = m->res[l];
    float *out = m->res[l + 1];
    if (m->cfg.kind == NN_MLP) {
        mlp_half_forward(m, P, u, out, in, R_LN1W, R_LN1B, a->ln1, a->ln1_mean,
                         a->ln1_rstd, a);
        return;
    }
    tn_layernorm_forward(a->ln1, a->ln1_mean, a->ln1_rstd, in,
                         prm(m, P, u, R_LN1W), prm(m, P, u, R_LN1B), n, c);
    tn_linear_forward(a->qkv, a->ln1, prm(m, P, u, R_QKVW),
                      prm(m, P, u, R_QKVB), n, c, 3 * c);
    tn_attention_forward(a->atty, a->att, a->qkv, attn_shape(m));
    tn_linear_forward(a->resmid, a->atty, prm(m, P, u, R_PROJW),
                      prm(m, P, u, R_PROJB), n, c, c);
    add_inplace(a->resmid, in, (size_t)n * c);
    mlp_half_forward(m, P, u, out, a->resmid, R_LN2W, R_LN2B, a->ln2,
                     a->ln2_mean, a->ln2_rstd, a);
}

static float forward(nn_model *m, const float *P, const int32_t *tokens,
                     const int32_t *targets) {
    const int n = m->n, c = m->cfg.d, v = m->cfg.vocab, L = m->cfg.layers;
    if (!ids_ok(tokens, n, v) || !ids_ok(targets, n, v)) return NAN;
    memcpy(m->tokens, tokens, (size_t)n * sizeof *tokens);
    memcpy(m->targets, targets, (size_t)n * sizeof *targets);
    embed_forward(m, P);
    for (int l = 0; l < L; l++) block_forward(m, P, l);
    tn_layernorm_forward(m->lnf, m->lnf_mean, m->lnf_rstd, m->res[L],
                         prm(m, P, L + 1, R_LNFW), prm(m, P, L + 1, R_LNFB), n,
                         c);
    tn_linear_forward(m->logits, m->lnf, prm(m, P, L + 1, R_HEADW), NULL, n, c,
                      v);
    return (float)tn_crossentropy_forward(m->losses, m->logits, m->targets, n,
                                          v);
}

float nn_forward(nn_model *m, const int32_t *tokens, const int32_t *targets) {
    float loss = forward(m, m->params, tokens, targets);
    m->ready = !isnan(loss);
    return loss;
}

float nn_eval_loss(nn_model *m, const float *params, const int32_t *tokens,
                   const int32_t *targets) {
    m->ready = 0;
    return forward(m, params ? params : m->params, tokens, targets);
}

/* ---- backward ------------------------------------------------------------ */

/* Backward of mlp_half_forward; m->dres holds d out on entry and d in on
 * return (the residual path plus the LayerNorm path). */
static void mlp_half_backward(nn_model *m, int u, const float *in, role lnw,
                              role lnb, const float *ln, const float *mean,
                              const float *rstd, const block_acts *a) {
    const int n = m->n, c = m->cfg.d, h = m->h;
    const float *P = m->params;
    tn_linear_backward(m->dfch, grd(m, u, R_FCPW), grd(m, u, R_FCPB), m->dres,
                       a->fchg, prm(m, P, u, R_FCPW), n, h, c);
    tn_gelu_backward(m->dfch, a->fch, m->dfch, (size_t)n * h);
    tn_linear_backward(m->dln, grd(m, u, R_FCW), grd(m, u, R_FCB), m->dfch, ln,
                       prm(m, P, u, R_FCW), n, c, h);
    tn_layernorm_backward(m->dres, grd(m, u, lnw), grd(m, u, lnb), m->dln, in,
                          prm(m, P, u, lnw), mean, rstd, n, c);
}

static void block_backward(nn_model *m, int l) {
    const int n = m->n, c = m->cfg.d, u = l + 1;
    const float *P = m->params;
    const block_acts *a = &m->blk[l];
    const float *in = m->res[l];
    if (m->cfg.kind == NN_MLP) {
        mlp_half_backward(m, u, in, R_LN1W, R_LN1B, a->ln1, a->ln1_mean,
                          a->ln1_rstd, a);
        return;
    }
    mlp_half_backward(m, u, a->resmid, R_LN2W, R_LN2B, a->ln2, a->ln2_mean,
                      a->ln2_rstd, a);
    tn_linear_backward(m->datty, grd(m, u, R_PROJW), grd(m, u, R_PROJB),
                       m->dres, a->atty, prm(m, P, u, R_PROJW), n, c, c);
    tn_attention_backward(m->dqkv, m->dscore, m->datty, a->qkv, a->att,
                          attn_shape(m));
    tn_linear_backward(m->dln, grd(m, u, R_QKVW), grd(m, u, R_QKVB), m->dqkv,
                       a->ln1, prm(m, P, u, R_QKVW), n, c, 3 * c);
    tn_layernorm_backward(m->dres, grd(m, u, R_LN1W), grd(m, u, R_LN1B), m->dln,
                          in, prm(m, P, u, R_LN1W), a->ln1_mean, a->ln1_rstd, n,
                          c);
}

/* Scatter-adds the residual gradient into the embedding rows used. */
static void embed_backward(nn_model *m) {
    const int c = m->cfg.d;
    float *dwte = grd(m, 0, R_WTE);
    float *dwpe = m->cfg.kind == NN_TRANSFORMER ? grd(m, 0, R_WPE) : NULL;
    for (int i = 0; i < m->n; i++) {
        const float *g = m->dres + (size_t)i * c;
        add_inplace(dwte + (size_t)m->tokens[i] * c, g, (size_t)c);
        if (dwpe) add_inplace(dwpe + (size_t)(i % m->T) * c, g, (size_t)c);
    }
}

int nn_backward(nn_model *m) {
    if (!m->ready) return MSG_ESTATE;
    m->ready = 0;
    const int n = m->n, c = m->cfg.d, v = m->cfg.vocab, L = m->cfg.layers;
    const float *P = m->params;
    memset(m->grads, 0, m->nparams * sizeof *m->grads);
    tn_crossentropy_backward(m->logits, m->targets, n, v);
    tn_linear_backward(m->dln, grd(m, L + 1, R_HEADW), NULL, m->logits, m->lnf,
                       prm(m, P, L + 1, R_HEADW), n, c, v);
    memset(m->dres, 0, (size_t)n * c * sizeof *m->dres);
    tn_layernorm_backward(m->dres, grd(m, L + 1, R_LNFW), grd(m, L + 1, R_LNFB),
                          m->dln, m->res[L], prm(m, P, L + 1, R_LNFW),
                          m->lnf_mean, m->lnf_rstd, n, c);
    for (int l = L - 1; l >= 0; l--) block_backward(m, l);
    embed_backward(m);
    return 0;
}

/* ---- accessors ----------------------------------------------------------- */

const float *nn_position_losses(const nn_model *m) {
    return m->losses;
}
float *nn_params(nn_model *m) {
    return m->params;
}
float *nn_grads(nn_model *m) {
    return m->grads;
}
size_t nn_num_params(const nn_model *m) {
    return m->nparams;
}
int nn_num_units(const nn_model *m) {
    return m->nunits;
}

size_t nn_unit_offset(const nn_model *m, int u) {
    return u >= 0 && u < m->nunits ? m->units[u].offset : 0;
}

size_t nn_unit_size(const nn_model *m, int u) {
    return u >= 0 && u < m->nunits ? m->units[u].size : 0;
}

nn_unit_kind nn_unit_type(const nn_model *m, int u) {
    if (u < 0 || u >= m->nunits) return NN_UNIT_BLOCK;
    return m->units[u].kind;
}

int nn_unit_tensors(const nn_model *m, int u, const nn_tensor **t) {
    if (u < 0 || u >= m->nunits) {
        *t = NULL;
        return 0;
    }
    *t = m->units[u].t;
    return m->units[u].ntensors;
}

const nn_config *nn_get_config(const nn_model *m) {
    return &m->cfg;
}
int nn_batch(const nn_model *m) {
    return m->B;
}
int nn_seq(const nn_model *m) {
    return m->T;
}

double nn_flops_per_step(const nn_model *m) {
    const double c = m->cfg.d, h = m->h, v = m->cfg.vocab;
    const double L = m->cfg.layers, n = m->n, t = m->T;
    double per_block = 2.0 * h * c;                              /* fc, proj */
    if (m->cfg.kind == NN_TRANSFORMER) per_block += 4.0 * c * c; /* qkv, proj */
    double nmm = L * per_block + v * c;                          /* + head */
    double flops = 6.0 * nmm * n;
    if (m->cfg.kind == NN_TRANSFORMER) flops += 12.0 * L * n * t * c;
    return flops;
}
