/*
 * test_nn.c -- the models of models/nn.h: parameter layout, configuration
 * checks, initialisation, finite-difference gradient checks of every
 * parameter tensor of both model kinds, causality, determinism (also
 * across threads) and a tiny model overfitting one batch.
 */
#include "models/nn.h"
#include "models/tensor.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

/* ---- helpers ------------------------------------------------------------- */

/* xorshift64*: uniform in [0, 1). */
static double uni(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53;
}

static double gauss(uint64_t *s) {
    double u = uni(s), v = uni(s);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

static void rand_ids(int32_t *ids, int n, int vocab, uint64_t seed) {
    uint64_t s = seed | 1;
    for (int i = 0; i < n; i++) ids[i] = (int32_t)(uni(&s) * vocab);
}

static nn_config transformer_cfg(int vocab, int d, int heads, int layers,
                                 int ctx) {
    nn_config c = {NN_TRANSFORMER, vocab, d, heads, layers, ctx, 0};
    return c;
}

static nn_config mlp_cfg(int vocab, int d, int layers) {
    nn_config c = {NN_MLP, vocab, d, 0, layers, 0, 0};
    return c;
}

static nn_model *new_model(const nn_config *c, int batch, int seq,
                           uint64_t seed) {
    nn_model *m = nn_new(c, batch, seq);
    ck_assert_ptr_nonnull(m);
    nn_init(m, seed);
    return m;
}

/* One plain SGD step: p -= lr * g. */
static float sgd_step(nn_model *m, const int32_t *x, const int32_t *y,
                      float lr) {
    float loss = nn_forward(m, x, y);
    ck_assert_int_eq(nn_backward(m), MSG_OK);
    float *p = nn_params(m);
    const float *g = nn_grads(m);
    for (size_t i = 0; i < nn_num_params(m); i++) p[i] -= lr * g[i];
    return loss;
}

/* ---- kernels against naive double-precision references ------------------ */

static void fill_gauss(float *x, size_t n, double sd, uint64_t seed) {
    uint64_t s = seed | 1;
    for (size_t i = 0; i < n; i++) x[i] = (float)(sd * gauss(&s));
}

START_TEST(test_kernel_attention) {
    enum { B = 2, T = 5, NH = 3, HS = 4, C = NH * HS };
    float qkv[B * T * 3 * C], out[B * T * C], att[B * NH * T * T];
    fill_gauss(qkv, B * T * 3 * C, 1.0, 3);
    tn_attn_shape sh = {B, T, NH, HS};
    tn_attention_forward(out, att, qkv, sh);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int i = 0; i < T; i++) {
                const float *q = qkv + (b * T + i) * 3 * C + h * HS;
                double w[T], mx = -1e300, sum = 0;
                for (int j = 0; j <= i; j++) {
                    const float *k = qkv + (b * T + j) * 3 * C + C + h * HS;
                    double dot = 0;
                    for (int e = 0; e < HS; e++) dot += (double)q[e] * k[e];
                    w[j] = dot / sqrt(HS);
                    mx = fmax(mx, w[j]);
                }
                for (int j = 0; j <= i; j++) sum += w[j] = exp(w[j] - mx);
                const float *a = att + ((b * NH + h) * T + i) * T;
                for (int j = 0; j < T; j++)
                    ck_assert_double_eq_tol(a[j], j <= i ? w[j] / sum : 0,
                                            1e-6);
                for (int e = 0; e < HS; e++) {
                    double y = 0;
                    for (int j = 0; j <= i; j++)
                        y += w[j] / sum *
                             qkv[(b * T + j) * 3 * C + 2 * C + h * HS + e];
                    ck_assert_double_eq_tol(out[(b * T + i) * C + h * HS + e],
                                            y, 1e-5);
                }
            }
}
END_TEST

START_TEST(test_kernel_layernorm_gelu_linear) {
    enum { N = 3, C = 7, OC = 5 };
    float x[N * C], w[C], bb[C], y[N * C], mean[N], rstd[N];
    fill_gauss(x, N * C, 2.0, 5);
    fill_gauss(w, C, 1.0, 6);
    fill_gauss(bb, C, 1.0, 7);
    tn_layernorm_forward(y, mean, rstd, x, w, bb, N, C);
    for (int i = 0; i < N; i++) {
        double m = 0, v = 0;
        for (int j = 0; j < C; j++) m += x[i * C + j];
        m /= C;
        for (int j = 0; j < C; j++) v += pow(x[i * C + j] - m, 2);
        double r = 1 / sqrt(v / C + 1e-5);
        ck_assert_double_eq_tol(mean[i], m, 1e-6);
        ck_assert_double_eq_tol(rstd[i], r, 1e-5 * r);
        for (int j = 0; j < C; j++)
            ck_assert_double_eq_tol(y[i * C + j],
                                    (x[i * C + j] - m) * r * w[j] + bb[j],
                                    1e-5);
    }
    /* GELU, tanh form, at a few points (reference values in double) */
    const float gx[6] = {-6.0f, -1.0f, -1e-4f, 0.0f, 1.0f, 3.0f};
    float gy[6];
    tn_gelu_forward(gy, gx, 6);
    for (int i = 0; i < 6; i++) {
        double u = gx[i] + 0.044715 * pow(gx[i], 3);
        double t = tanh(0.7978845608028654 * u);
        ck_assert_double_eq_tol(gy[i], 0.5 * gx[i] * (1 + t), 2e-7);
    }
    ck_assert_double_eq_tol(gy[4], 0.8411919906082768, 1e-6);
    /* linear: out = x W^T + b */
    float W[OC * C], b2[OC], o[N * OC];
    fill_gauss(W, OC * C, 1.0, 8);
    fill_gauss(b2, OC, 1.0, 9);
    tn_linear_forward(o, x, W, b2, N, C, OC);
    for (int i = 0; i < N; i++)
        for (int k = 0; k < OC; k++) {
            double r = b2[k];
            for (int j = 0; j < C; j++)
                r += (double)x[i * C + j] * W[k * C + j];
            ck_assert_double_eq_tol(o[i * OC + k], r, 1e-5);
        }
}
END_TEST

START_TEST(test_kernel_crossentropy) {
    enum { N = 4, V = 6 };
    float z[N * V], z0[N * V], losses[N];
    int32_t tg[N] = {0, 5, 2, 2};
    fill_gauss(z0, N * V, 3.0, 10);
    z0[7] = 80.0f; /* a dominant logit: exp would overflow unshifted */
    memcpy(z, z0, sizeof z);
    double mean = tn_crossentropy_forward(losses, z, tg, N, V);
    double ref_mean = 0;
    for (int i = 0; i < N; i++) {
        double mx = -1e300, s = 0;
        for (int j = 0; j < V; j++) mx = fmax(mx, z0[i * V + j]);
        for (int j = 0; j < V; j++) s += exp(z0[i * V + j] - mx);
        double l = log(s) + mx - z0[i * V + tg[i]];
        ck_assert_double_eq_tol(losses[i], l, 1e-5 * fmax(1, l));
        ref_mean += l / N;
        for (int j = 0; j < V; j++)
            ck_assert_double_eq_tol(z[i * V + j], exp(z0[i * V + j] - mx) / s,
                                    1e-6);
    }
    ck_assert_double_eq_tol(mean, ref_mean, 1e-5 * ref_mean);
    ck_assert(isfinite(losses[1]) && losses[1] > 70); /* -log p ~ 80 - z */
    tn_crossentropy_backward(z, tg, N, V);
    for (int i = 0; i < N; i++) {
        double rs = 0;
        for (int j = 0; j < V; j++) rs += z[i * V + j];
        ck_assert_double_eq_tol(rs, 0, 1e-7); /* rows of p - onehot */
    }
}
END_TEST

/* ---- layout -------------------------------------------------------------- */

static void check_layout(const nn_config *c) {
    nn_model *m = new_model(c, 2, 3, 1);
    int nu = nn_num_units(m);
    ck_assert_int_eq(nu, c->layers + 2);
    ck_assert_int_eq(nn_config_num_units(c), nu);
    ck_assert_uint_eq(nn_config_num_params(c), nn_num_params(m));
    size_t next = 0;
    for (int u = 0; u < nu; u++) {
        /* units back to back, starting at 0 */
        ck_assert_uint_eq(nn_unit_offset(m, u), next);
        ck_assert_uint_eq(nn_unit_size(m, u), nn_config_unit_size(c, u));
        ck_assert_uint_gt(nn_unit_size(m, u), 0);
        next += nn_unit_size(m, u);
        ck_assert_int_eq(nn_unit_type(m, u),
                         u == 0 ? NN_UNIT_EMBED
                                : (u == nu - 1 ? NN_UNIT_HEAD : NN_UNIT_BLOCK));
        /* tensors back to back, covering the unit exactly */
        const nn_tensor *t;
        int nt = nn_unit_tensors(m, u, &t);
        ck_assert_int_gt(nt, 0);
        size_t in = 0;
        for (int i = 0; i < nt; i++) {
            ck_assert_uint_eq(t[i].offset, in);
            ck_assert_int_gt(t[i].rows, 0);
            ck_assert_int_gt(t[i].cols, 0);
            ck_assert_ptr_nonnull(t[i].name);
            in += (size_t)t[i].rows * t[i].cols;
        }
        ck_assert_uint_eq(in, nn_unit_size(m, u));
    }
    ck_assert_uint_eq(next, nn_num_params(m));
    ck_assert_uint_eq(nn_unit_size(m, nu), 0); /* out of range */
    nn_free(m);
}

START_TEST(test_layout_units) {
    nn_config t = transformer_cfg(11, 8, 2, 3, 6);
    nn_config m = mlp_cfg(11, 8, 3);
    check_layout(&t);
    check_layout(&m);
    t.mlp_ratio = 3;
    check_layout(&t);
}
END_TEST

/* The shapes of the transformer's tensors, by name, as nn.h lists them. */
START_TEST(test_layout_shapes) {
    nn_config c = transformer_cfg(50, 16, 4, 2, 10);
    nn_model *m = new_model(&c, 1, 4, 1);
    const nn_tensor *t;
    ck_assert_int_eq(nn_unit_tensors(m, 0, &t), 2);
    ck_assert_str_eq(t[0].name, "wte");
    ck_assert_int_eq(t[0].rows, 50);
    ck_assert_int_eq(t[0].cols, 16);
    ck_assert_str_eq(t[1].name, "wpe");
    ck_assert_int_eq(t[1].rows, 10);
    static const char *names[] = {"ln1.w",      "ln1.b",       "attn.qkv.w",
                                  "attn.qkv.b", "attn.proj.w", "attn.proj.b",
                                  "ln2.w",      "ln2.b",       "mlp.fc.w",
                                  "mlp.fc.b",   "mlp.proj.w",  "mlp.proj.b"};
    static const int rows[] = {1, 1, 48, 1, 16, 1, 1, 1, 64, 1, 16, 1};
    static const int cols[] = {16, 16, 16, 48, 16, 16, 16, 16, 16, 64, 64, 16};
    static const int decay[] = {0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0};
    ck_assert_int_eq(nn_unit_tensors(m, 2, &t), 12);
    for (int i = 0; i < 12; i++) {
        ck_assert_str_eq(t[i].name, names[i]);
        ck_assert_int_eq(t[i].rows, rows[i]);
        ck_assert_int_eq(t[i].cols, cols[i]);
        ck_assert_int_eq(t[i].decay, decay[i]);
    }
    ck_assert_int_eq(nn_unit_tensors(m, 3, &t), 3);
    ck_assert_str_eq(t[2].name, "head.w");
    ck_assert_int_eq(t[2].rows, 50);
    ck_assert_int_eq(nn_unit_tensors(m, 4, &t), 0);
    ck_assert_ptr_null(t);
    nn_free(m);

    nn_config mc = mlp_cfg(50, 16, 1);
    m = new_model(&mc, 1, 4, 1);
    ck_assert_int_eq(nn_unit_tensors(m, 0, &t), 1);
    ck_assert_int_eq(nn_unit_tensors(m, 1, &t), 6);
    ck_assert_str_eq(t[0].name, "ln.w");
    ck_assert_str_eq(t[5].name, "mlp.proj.b");
    nn_free(m);
}
END_TEST

START_TEST(test_config_checks) {
    char err[128];
    nn_config ok = transformer_cfg(16, 8, 2, 1, 4);
    ck_assert_int_eq(nn_check(&ok, 2, 4, err, sizeof err), MSG_OK);
    ck_assert_int_eq(nn_check(&ok, 2, 5, err, sizeof err), MSG_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "ctx"));
    ck_assert_ptr_null(nn_new(&ok, 2, 5));
    ck_assert_int_eq(nn_check(&ok, 0, 4, NULL, 0), MSG_EINPUT);
    nn_config c = ok;
    c.heads = 3; /* does not divide d */
    ck_assert_int_eq(nn_check(&c, 1, 1, err, sizeof err), MSG_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "heads"));
    ck_assert_ptr_null(nn_new(&c, 1, 1));
    c = ok;
    c.vocab = 1;
    ck_assert_int_eq(nn_check(&c, 1, 1, err, sizeof err), MSG_EINPUT);
    c = ok;
    c.layers = 0;
    ck_assert_int_eq(nn_check(&c, 1, 1, err, sizeof err), MSG_EINPUT);
    ck_assert_int_eq(nn_config_num_units(&c), 0);
    ck_assert_uint_eq(nn_config_num_params(&c), 0);
    c = ok;
    c.kind = (nn_kind)7;
    ck_assert_int_eq(nn_check(&c, 1, 1, err, sizeof err), MSG_EINPUT);
    c = ok;
    c.mlp_ratio = -1;
    ck_assert_int_eq(nn_check(&c, 1, 1, err, sizeof err), MSG_EINPUT);
    /* the MLP ignores heads and ctx */
    nn_config m = mlp_cfg(16, 8, 1);
    ck_assert_int_eq(nn_check(&m, 3, 100, err, sizeof err), MSG_OK);
    ck_assert_int_eq(nn_check(NULL, 1, 1, err, sizeof err), MSG_EINPUT);
}
END_TEST

START_TEST(test_param_count) {
    /* GPT-2 small's shape: 124,439,808 parameters with the head tied to
     * wte, so 124,439,808 + 50257 * 768 = 163,037,184 with ours untied */
    nn_config g = transformer_cfg(50257, 768, 12, 12, 1024);
    size_t d = 768, v = 50257, t = 1024;
    size_t block = 12 * d * d + 13 * d;
    ck_assert_uint_eq(nn_config_num_params(&g),
                      v * d + t * d + 12 * block + 2 * d + v * d);
    ck_assert_uint_eq(nn_config_num_params(&g), 163037184u);
    ck_assert_uint_eq(nn_config_unit_size(&g, 5), block);
    nn_config m = mlp_cfg(100, 10, 2);
    ck_assert_uint_eq(nn_config_num_params(&m),
                      1000 + 2 * (20 + 400 + 40 + 400 + 10) + 20 + 1000);
}
END_TEST

START_TEST(test_flops_formula) {
    nn_config c = transformer_cfg(64, 16, 2, 3, 8);
    nn_model *m = new_model(&c, 2, 8, 1);
    double n = 16, d = 16, v = 64, L = 3, T = 8;
    double nmm = L * (12 * d * d) + v * d;
    ck_assert_double_eq_tol(nn_flops_per_step(m),
                            6 * nmm * n + 12 * L * n * T * d, 1e-6);
    nn_free(m);
    nn_config mc = mlp_cfg(64, 16, 3);
    m = new_model(&mc, 2, 8, 1);
    ck_assert_double_eq_tol(nn_flops_per_step(m),
                            6 * (L * 8 * d * d + v * d) * n, 1e-6);
    nn_free(m);
}
END_TEST

/* ---- initialisation ------------------------------------------------------ */

static void check_init_loss(const nn_config *c, int b, int t) {
    nn_model *m = new_model(c, b, t, 42);
    int n = b * t;
    int32_t *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    rand_ids(x, n, c->vocab, 7);
    rand_ids(y, n, c->vocab, 8);
    float loss = nn_forward(m, x, y);
    double lnv = log(c->vocab);
    ck_assert_msg(fabs(loss - lnv) < 0.03 * lnv, "init loss %g, ln V %g", loss,
                  lnv);
    free(x);
    free(y);
    nn_free(m);
}

START_TEST(test_init_loss) {
    nn_config t = transformer_cfg(256, 64, 4, 2, 32);
    nn_config m = mlp_cfg(256, 64, 2);
    check_init_loss(&t, 4, 32);
    check_init_loss(&m, 4, 32);
}
END_TEST

START_TEST(test_init_values) {
    nn_config c = transformer_cfg(64, 32, 4, 4, 16);
    nn_model *m = new_model(&c, 1, 4, 3);
    const float *p = nn_params(m);
    for (int u = 0; u < nn_num_units(m); u++) {
        const nn_tensor *t;
        int nt = nn_unit_tensors(m, u, &t);
        for (int i = 0; i < nt; i++) {
            const float *x = p + nn_unit_offset(m, u) + t[i].offset;
            size_t cnt = (size_t)t[i].rows * t[i].cols;
            double s1 = 0, s2 = 0;
            for (size_t j = 0; j < cnt; j++) {
                s1 += x[j];
                s2 += (double)x[j] * x[j];
            }
            double mean = s1 / cnt, sd = sqrt(s2 / cnt - mean * mean);
            const char *nm = t[i].name;
            if (!strcmp(nm, "ln1.w") || !strcmp(nm, "ln2.w") ||
                !strcmp(nm, "lnf.w")) {
                ck_assert(mean == 1.0 && sd == 0.0);
            } else if (!t[i].decay) {
                ck_assert(s2 == 0.0); /* biases */
            } else {
                double want = strstr(nm, "proj.w") ? 0.02 / sqrt(8) : 0.02;
                ck_assert_msg(fabs(sd - want) < 0.1 * want, "%s sd %g", nm, sd);
            }
        }
    }
    nn_free(m);
}
END_TEST

START_TEST(test_init_deterministic) {
    nn_config c = transformer_cfg(32, 16, 2, 2, 8);
    nn_model *a = new_model(&c, 2, 8, 99);
    nn_model *b = new_model(&c, 2, 8, 99);
    nn_model *o = new_model(&c, 2, 8, 100);
    size_t bytes = nn_num_params(a) * sizeof(float);
    ck_assert(memcmp(nn_params(a), nn_params(b), bytes) == 0);
    ck_assert(memcmp(nn_params(a), nn_params(o), bytes) != 0);
    /* a block's initial values do not depend on the vocabulary */
    nn_config c2 = c;
    c2.vocab = 77;
    nn_model *v = new_model(&c2, 2, 8, 99);
    ck_assert_uint_eq(nn_unit_size(a, 1), nn_unit_size(v, 1));
    ck_assert(memcmp(nn_params(a) + nn_unit_offset(a, 1),
                     nn_params(v) + nn_unit_offset(v, 1),
                     nn_unit_size(a, 1) * sizeof(float)) == 0);
    int32_t x[16], y[16];
    rand_ids(x, 16, 32, 1);
    rand_ids(y, 16, 32, 2);
    float la = nn_forward(a, x, y), lb = nn_forward(b, x, y);
    ck_assert(memcmp(&la, &lb, sizeof la) == 0);
    nn_backward(a);
    nn_backward(b);
    ck_assert(memcmp(nn_grads(a), nn_grads(b), bytes) == 0);
    /* re-initialising restores the same values */
    nn_params(a)[3] += 1.0f;
    nn_init(a, 99);
    ck_assert(memcmp(nn_params(a), nn_params(b), bytes) == 0);
    nn_free(a);
    nn_free(b);
    nn_free(o);
    nn_free(v);
}
END_TEST

/* ---- gradient checks ----------------------------------------------------- */

/* Random order-one parameters, so every path carries signal (GPT-2's init
 * leaves attention almost uniform and LayerNorm at its identity, which
 * would hide bugs): matrices ~ N(0, 1/cols), LayerNorm weights ~ 1 +
 * N(0, 0.2^2), biases ~ N(0, 0.2^2), embeddings ~ N(0, 1). */
static void randomise(nn_model *m, uint64_t seed) {
    uint64_t s = seed | 1;
    float *p = nn_params(m);
    for (int u = 0; u < nn_num_units(m); u++) {
        const nn_tensor *t;
        int nt = nn_unit_tensors(m, u, &t);
        for (int i = 0; i < nt; i++) {
            float *x = p + nn_unit_offset(m, u) + t[i].offset;
            size_t cnt = (size_t)t[i].rows * t[i].cols;
            int is_lnw = strstr(t[i].name, "ln") && strstr(t[i].name, ".w");
            double sd = t[i].rows == 1 ? 0.2
                        : u == 0       ? 1.0
                                       : 1.0 / sqrt(t[i].cols);
            for (size_t j = 0; j < cnt; j++)
                x[j] = (float)((is_lnw ? 1.0 : 0.0) + sd * gauss(&s));
        }
    }
}

/* Compares the analytic gradient of every parameter tensor with central
 * differences on a sample of entries: 6 random ones plus the 2 of largest
 * analytic magnitude.  See the comment in the suite for the tolerance. */
#define GC_EPS 1e-2
#define GC_RTOL 1e-2
#define GC_ATOL 2e-4

static void gradcheck(const nn_config *c, int b, int t, uint64_t seed) {
    nn_model *m = new_model(c, b, t, seed);
    randomise(m, seed + 1);
    int n = b * t;
    int32_t *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    rand_ids(x, n, c->vocab, seed + 2);
    rand_ids(y, n, c->vocab, seed + 3);
    nn_forward(m, x, y);
    ck_assert_int_eq(nn_backward(m), MSG_OK);
    float *p = nn_params(m);
    const float *g = nn_grads(m);
    uint64_t s = seed | 1;
    int checked = 0;
    for (int u = 0; u < nn_num_units(m); u++) {
        const nn_tensor *tt;
        int nt = nn_unit_tensors(m, u, &tt);
        for (int i = 0; i < nt; i++) {
            size_t base = nn_unit_offset(m, u) + tt[i].offset;
            size_t cnt = (size_t)tt[i].rows * tt[i].cols;
            size_t idx[8], top1 = 0, top2 = 0;
            for (size_t j = 0; j < cnt; j++) {
                float a = fabsf(g[base + j]);
                if (a > fabsf(g[base + top1])) {
                    top2 = top1;
                    top1 = j;
                } else if (j != top1 && a > fabsf(g[base + top2])) {
                    top2 = j;
                }
            }
            idx[0] = top1;
            idx[1] = top2;
            for (int k = 2; k < 8; k++) idx[k] = (size_t)(uni(&s) * cnt);
            double worst = 0;
            for (int k = 0; k < 8; k++) {
                size_t j = base + idx[k];
                float keep = p[j];
                p[j] = keep + (float)GC_EPS;
                double lp = nn_eval_loss(m, NULL, x, y);
                p[j] = keep - (float)GC_EPS;
                double lm = nn_eval_loss(m, NULL, x, y);
                p[j] = keep;
                double num = (lp - lm) / (2 * GC_EPS), ana = g[j];
                double err = fabs(num - ana);
                double tol = GC_ATOL + GC_RTOL * fmax(fabs(num), fabs(ana));
                ck_assert_msg(err <= tol,
                              "unit %d %s[%zu]: analytic %.6g numeric %.6g", u,
                              tt[i].name, idx[k], ana, num);
                worst = fmax(worst, err / tol);
                checked++;
            }
            if (getenv("NN_GC_VERBOSE"))
                fprintf(stderr, "gc u%d %-12s |g|max %.3g  err/tol %.3f\n", u,
                        tt[i].name, fabsf(g[base + top1]), worst);
            /* the sample must not be all zeros: the test checks something */
            ck_assert_msg(fabsf(g[base + top1]) > 1e-3, "%s: zero gradient",
                          tt[i].name);
        }
    }
    ck_assert_int_gt(checked, 0);
    free(x);
    free(y);
    nn_free(m);
}

START_TEST(test_gradcheck_transformer) {
    nn_config c = transformer_cfg(7, 8, 2, 2, 6);
    gradcheck(&c, 2, 5, 11);
}
END_TEST

START_TEST(test_gradcheck_transformer_ratio) {
    nn_config c = transformer_cfg(9, 12, 3, 1, 4);
    c.mlp_ratio = 2;
    gradcheck(&c, 3, 4, 23);
}
END_TEST

START_TEST(test_gradcheck_mlp) {
    nn_config c = mlp_cfg(7, 8, 2);
    gradcheck(&c, 2, 5, 31);
}
END_TEST

/* ---- call contract ------------------------------------------------------- */

START_TEST(test_backward_overwrites) {
    nn_config c = transformer_cfg(16, 8, 2, 2, 8);
    nn_model *m = new_model(&c, 2, 8, 5);
    int32_t x[16], y[16];
    rand_ids(x, 16, 16, 3);
    rand_ids(y, 16, 16, 4);
    size_t np = nn_num_params(m);
    float *g1 = malloc(np * sizeof *g1);
    ck_assert_int_eq(nn_backward(m), MSG_ESTATE); /* no forward yet */
    nn_forward(m, x, y);
    ck_assert_int_eq(nn_backward(m), MSG_OK);
    ck_assert_int_eq(nn_backward(m), MSG_ESTATE); /* only once */
    memcpy(g1, nn_grads(m), np * sizeof *g1);
    nn_forward(m, x, y);
    ck_assert_int_eq(nn_backward(m), MSG_OK);
    ck_assert(memcmp(g1, nn_grads(m), np * sizeof *g1) == 0);
    /* eval cancels a pending backward */
    nn_forward(m, x, y);
    nn_eval_loss(m, NULL, x, y);
    ck_assert_int_eq(nn_backward(m), MSG_ESTATE);
    free(g1);
    nn_free(m);
}
END_TEST

START_TEST(test_bad_ids) {
    nn_config c = mlp_cfg(16, 8, 1);
    nn_model *m = new_model(&c, 1, 4, 5);
    int32_t x[4] = {0, 1, 2, 16}, y[4] = {0, 1, 2, 3};
    ck_assert(isnan(nn_forward(m, x, y)));
    ck_assert_int_eq(nn_backward(m), MSG_ESTATE);
    x[3] = 3;
    y[0] = -1;
    ck_assert(isnan(nn_forward(m, x, y)));
    ck_assert(isnan(nn_eval_loss(m, NULL, x, y)));
    y[0] = 0;
    ck_assert(!isnan(nn_forward(m, x, y)));
    nn_free(m);
}
END_TEST

START_TEST(test_eval_loss) {
    nn_config c = transformer_cfg(16, 8, 2, 2, 8);
    nn_model *a = new_model(&c, 2, 8, 5);
    nn_model *b = new_model(&c, 2, 8, 6);
    int32_t x[16], y[16];
    rand_ids(x, 16, 16, 3);
    rand_ids(y, 16, 16, 4);
    float la = nn_forward(a, x, y);
    float lb = nn_forward(b, x, y);
    ck_assert(la != lb);
    ck_assert(nn_eval_loss(a, NULL, x, y) == la);
    /* a's buffers, b's parameters */
    ck_assert(nn_eval_loss(a, nn_params(b), x, y) == lb);
    /* the mean of the per-position losses */
    const float *pl = nn_position_losses(a);
    double s = 0;
    for (int i = 0; i < 16; i++) s += pl[i];
    ck_assert_double_eq_tol(s / 16, lb, 1e-6);
    nn_free(a);
    nn_free(b);
}
END_TEST

/* Changing token k changes no loss before position k (causal mask); the
 * MLP's loss at i depends on token i only.  Bit for bit. */
START_TEST(test_causal) {
    nn_config cf[2] = {transformer_cfg(16, 16, 4, 2, 8), mlp_cfg(16, 16, 2)};
    for (int k = 0; k < 2; k++) {
        nn_model *m = new_model(&cf[k], 2, 8, 9);
        randomise(m, 4);
        int32_t x[16], y[16];
        rand_ids(x, 16, 16, 3);
        rand_ids(y, 16, 16, 4);
        float l0[16];
        nn_forward(m, x, y);
        memcpy(l0, nn_position_losses(m), sizeof l0);
        x[5] = (x[5] + 1) % 16; /* sequence 0, position 5 */
        nn_forward(m, x, y);
        const float *l1 = nn_position_losses(m);
        for (int i = 0; i < 16; i++) {
            int may_change = k == 0 ? (i >= 5 && i < 8) : i == 5;
            if (may_change)
                ck_assert_msg(l0[i] != l1[i], "kind %d pos %d", k, i);
            else
                ck_assert_msg(memcmp(&l0[i], &l1[i], sizeof(float)) == 0,
                              "kind %d pos %d: %g vs %g", k, i, l0[i], l1[i]);
        }
        nn_free(m);
    }
}
END_TEST

/* ---- threads ------------------------------------------------------------- */

typedef struct {
    nn_config cfg;
    float losses[5];
    float *params; /* final parameters, malloc'd */
} run_job;

static void *run_steps(void *arg) {
    run_job *j = arg;
    nn_model *m = nn_new(&j->cfg, 4, 16);
    if (!m) return NULL;
    nn_init(m, 1234);
    int32_t x[64], y[64];
    rand_ids(x, 64, j->cfg.vocab, 5);
    rand_ids(y, 64, j->cfg.vocab, 6);
    for (int s = 0; s < 5; s++) {
        j->losses[s] = nn_forward(m, x, y);
        nn_backward(m);
        float *p = nn_params(m);
        const float *g = nn_grads(m);
        for (size_t i = 0; i < nn_num_params(m); i++) p[i] -= 0.1f * g[i];
    }
    j->params = malloc(nn_num_params(m) * sizeof(float));
    if (j->params)
        memcpy(j->params, nn_params(m), nn_num_params(m) * sizeof(float));
    nn_free(m);
    return NULL;
}

START_TEST(test_threads_identical) {
    nn_config c = transformer_cfg(64, 64, 4, 2, 16);
    size_t np = nn_config_num_params(&c);
    run_job ref = {.cfg = c}, t1 = {.cfg = c}, t2 = {.cfg = c};
    run_steps(&ref);
    pthread_t a, b;
    ck_assert_int_eq(pthread_create(&a, NULL, run_steps, &t1), 0);
    ck_assert_int_eq(pthread_create(&b, NULL, run_steps, &t2), 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    ck_assert_ptr_nonnull(ref.params);
    ck_assert_ptr_nonnull(t1.params);
    ck_assert_ptr_nonnull(t2.params);
    ck_assert(memcmp(ref.losses, t1.losses, sizeof ref.losses) == 0);
    ck_assert(memcmp(ref.losses, t2.losses, sizeof ref.losses) == 0);
    ck_assert(memcmp(ref.params, t1.params, np * sizeof(float)) == 0);
    ck_assert(memcmp(ref.params, t2.params, np * sizeof(float)) == 0);
    ck_assert(ref.losses[4] < ref.losses[0]);
    free(ref.params);
    free(t1.params);
    free(t2.params);
}
END_TEST

/* ---- learning ------------------------------------------------------------ */

/* 200 SGD steps on one fixed batch must more than halve the loss. */
static void check_overfit(const nn_config *c, const int32_t *x,
                          const int32_t *y, int b, int t, float lr) {
    nn_model *m = new_model(c, b, t, 2024);
    float first = 0, last = 0;
    for (int s = 0; s < 200; s++) {
        last = sgd_step(m, x, y, lr);
        if (s == 0) first = last;
    }
    last = nn_eval_loss(m, NULL, x, y);
    if (getenv("NN_GC_VERBOSE"))
        fprintf(stderr, "overfit kind %d: %g -> %g\n", c->kind, first, last);
    ck_assert_msg(last < 0.5f * first, "loss %g -> %g", first, last);
    nn_free(m);
}

START_TEST(test_overfit_transformer) {
    /* next token of 4 random sequences: memorised with the positions */
    nn_config c = transformer_cfg(16, 32, 4, 2, 8);
    int32_t seq[4][9], x[32], y[32];
    rand_ids(&seq[0][0], 36, 16, 77);
    for (int b = 0; b < 4; b++)
        for (int t = 0; t < 8; t++) {
            x[b * 8 + t] = seq[b][t];
            y[b * 8 + t] = seq[b][t + 1];
        }
    check_overfit(&c, x, y, 4, 8, 0.3f);
}
END_TEST

START_TEST(test_overfit_mlp) {
    /* a fixed map token -> target: learnable from the token alone */
    nn_config c = mlp_cfg(16, 32, 2);
    int32_t x[32], y[32];
    rand_ids(x, 32, 16, 78);
    for (int i = 0; i < 32; i++) y[i] = (5 * x[i] + 3) % 16;
    check_overfit(&c, x, y, 4, 8, 0.3f);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("nn");
    TCase *tc = tcase_create("core");
    /* Gradient-check tolerance.  Central differences with eps = 1e-2 on
     * order-one parameters: truncation error ~ eps^2 |f'''| / 6 ~ 1e-5,
     * FP32 rounding of the loss (~1e-7 relative of ~2) over 2 eps ~ 1e-5;
     * so |analytic - numeric| <= 2e-4 + 1e-2 * max(|a|, |n|) holds with a
     * wide margin on a correct gradient, while a wrong one (missing term,
     * wrong scale, transposed weight) is off by far more than 1%. */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_kernel_attention);
    tcase_add_test(tc, test_kernel_layernorm_gelu_linear);
    tcase_add_test(tc, test_kernel_crossentropy);
    tcase_add_test(tc, test_layout_units);
    tcase_add_test(tc, test_layout_shapes);
    tcase_add_test(tc, test_config_checks);
    tcase_add_test(tc, test_param_count);
    tcase_add_test(tc, test_flops_formula);
    tcase_add_test(tc, test_init_loss);
    tcase_add_test(tc, test_init_values);
    tcase_add_test(tc, test_init_deterministic);
    tcase_add_test(tc, test_gradcheck_transformer);
    tcase_add_test(tc, test_gradcheck_transformer_ratio);
    tcase_add_test(tc, test_gradcheck_mlp);
    tcase_add_test(tc, test_backward_overwrites);
    tcase_add_test(tc, test_bad_ids);
    tcase_add_test(tc, test_eval_loss);
    tcase_add_test(tc, test_causal);
    tcase_add_test(tc, test_threads_identical);
    tcase_add_test(tc, test_overfit_transformer);
    tcase_add_test(tc, test_overfit_mlp);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
