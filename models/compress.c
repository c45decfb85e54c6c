/*
 * compress.c -- the trainer's stateful compressors (compress.h): PowerSGD's
 * error feedback, warm-started Q and power iteration, DeMo's residual.
 *
 * State per replica r: res[r * N + off] (PowerSGD's e, DeMo's u) and, for
 * PowerSGD, mat[r * N + off], the M_m of the sync in flight (a tensor has
 * one sync in flight at a time, so one copy is enough), and per tensor its
 * warm Q.  Scratch: one tensor's decoding per replica (DeMo, in a pool
 * job) and the reduce's P, Q and wire buffer (on the calling thread).
 */
#include "models/compress.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/base/rng.h"

struct cmp_state {
    codec_spec c;
    int M, ntens;
    size_t N, maxt;
    uint64_t r;       /* powersgd's rank */
    cmp_tensor *t;    /* [ntens] */
    uint64_t *qoff;   /* [ntens] offset of each compressed tensor's Q */
    float *q;         /* the warm Qs */
    float *res, *mat; /* [M * N] */
    float *tmp;       /* [M * maxt] */
    float *pf;        /* the reduce's P */
    double *pd;       /* P in double */
    uint8_t *wire;    /* one tensor's P and Q */
};

int cmp_stateful(codec_spec c) {
    return c.kind == CODEC_POWERSGD || c.kind == CODEC_DEMO;
}

int cmp_reduces(const cmp_state *s) {
    return s->c.kind == CODEC_POWERSGD;
}

/* Tensor i's factor shape: 1 when it is sent as P and Q. */
static int shape(const cmp_state *s, int i, uint64_t *rows, uint64_t *cols) {
    return codec_lowrank_shape(s->c, s->t[i].n, s->t[i].row, rows, cols);
}

void cmp_free(cmp_state *s) {
    if (!s) return;
    free(s->t);
    free(s->qoff);
    free(s->q);
    free(s->res);
    free(s->mat);
    free(s->tmp);
    free(s->pf);
    free(s->pd);
    free(s->wire);
    free(s);
}

/* powersgd: the warm Qs, N(0, 1) from the compressor's stream, and the
 * reduce's scratch sized for the largest factors. */
static int powersgd_new(cmp_state *s, uint64_t seed) {
    uint64_t nq = 0, np = 0, rows, cols;
    s->qoff = calloc((size_t)s->ntens, sizeof *s->qoff);
    for (int i = 0; s->qoff && i < s->ntens; i++) {
        s->qoff[i] = nq;
        if (!shape(s, i, &rows, &cols)) continue;
        nq += cols * s->r;
        np = rows > np ? rows : np;
        np = cols > np ? cols : np;
    }
    np *= s->r;
    s->q = malloc((nq ? nq : 1) * sizeof *s->q);
    s->mat = malloc(s->M * s->N * sizeof *s->mat);
    s->pf = malloc((np + 1) * sizeof *s->pf);
    s->pd = malloc((np + 1) * sizeof *s->pd);
    s->wire = malloc(8 * np + 4);
    gsl_rng *g = rng_stream(seed, RNG_COMPRESS, 0);
    if (!s->qoff || !s->q || !s->mat || !s->pf || !s->pd || !s->wire || !g) {
        if (g) gsl_rng_free(g);
        return MSG_ENOMEM;
    }
    for (uint64_t k = 0; k < nq; k++) s->q[k] = (float)gsl_ran_gaussian(g, 1);
    gsl_rng_free(g);
    return 0;
}

int cmp_new(codec_spec c, int M, const cmp_tensor *t, int ntens, size_t N,
            uint64_t seed, cmp_state **out) {
    *out = NULL;
    if (!cmp_stateful(c)) return 0;
    cmp_state *s = calloc(1, sizeof *s);
    if (!s) return MSG_ENOMEM;
    s->c = c;
    s->M = M;
    s->ntens = ntens;
    s->N = N;
    s->r = codec_rank(c);
    s->t = malloc((size_t)ntens * sizeof *s->t);
    s->res = calloc((size_t)M * N, sizeof *s->res);
    for (int i = 0; i < ntens; i++)
        s->maxt = t[i].n > s->maxt ? t[i].n : s->maxt;
    s->tmp = malloc((size_t)M * (s->maxt + 1) * sizeof *s->tmp);
    if (!s->t || !s->res || !s->tmp) {
        cmp_free(s);
        return MSG_ENOMEM;
    }
    memcpy(s->t, t, (size_t)ntens * sizeof *t);
    if (c.kind == CODEC_POWERSGD && powersgd_new(s, seed)) {
        cmp_free(s);
        return MSG_ENOMEM;
    }
    *out = s;
    return 0;
}

const float *cmp_residual(const cmp_state *s, int r, int i) {
    return s->res + (size_t)r * s->N + s->t[i].off;
}

const float *cmp_warm_q(const cmp_state *s, int i) {
    uint64_t rows, cols;
    if (s->c.kind != CODEC_POWERSGD || !shape(s, i, &rows, &cols)) return NULL;
    return s->q + s->qoff[i];
}

/* ---- wire values --------------------------------------------------------- */

static void put_f32(uint8_t *p, float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    for (int b = 0; b < 4; b++) p[b] = (uint8_t)(u >> (8 * b));
}

static float get_f32(const uint8_t *p) {
    uint32_t u = 0;
    for (int b = 3; b >= 0; b--) u = u << 8 | p[b];
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- encode -------------------------------------------------------------- */

/* out[o * r + k] = sum_i m[o * so + i * si] f[i * r + k] for o < outer,
 * i < inner, the values of m past n (a padded last row) read as 0; in
 * double, written as FP32 on the wire.  With so = cols, si = 1: M Q (rows x
 * r); with so = 1, si = cols: M^T P (cols x r). */
static void project(const float *m, uint64_t n, uint64_t outer, uint64_t inner,
                    uint64_t so, uint64_t si, const float *f, uint64_t r,
                    uint8_t *out) {
    for (uint64_t o = 0; o < outer; o++)
        for (uint64_t k = 0; k < r; k++) {
            double sum = 0;
            for (uint64_t i = 0; i < inner && o * so + i * si < n; i++)
                sum += (double)m[o * so + i * si] * (double)f[i * r + k];
            put_f32(out + 4 * (o * r + k), (float)sum);
        }
}

uint64_t cmp_encode(cmp_state *s, int r, int i, const float *x, uint8_t *out) {
    const cmp_tensor *t = &s->t[i];
    float *res = s->res + (size_t)r * s->N + t->off;
    if (s->c.kind == CODEC_DEMO) {
        const float beta = (float)s->c.demo_beta;
        float *dec = s->tmp + (size_t)r * (s->maxt + 1);
        for (size_t k = 0; k < t->n; k++) res[k] = beta * res[k] + x[k];
        uint64_t w = codec_encode(s->c, res, t->n, t->row, out);
        if (w == 0) return 0;
        codec_decode(s->c, out, t->n, t->row, dec);
        for (size_t k = 0; k < t->n; k++) res[k] -= dec[k];
        return w;
    }
    uint64_t rows, cols;
    if (!shape(s, i, &rows, &cols)) {
        for (size_t k = 0; k < t->n; k++) put_f32(out + 4 * k, x[k]);
        return 4 * t->n;
    }
    float *m = s->mat + (size_t)r * s->N + t->off;
    for (size_t k = 0; k < t->n; k++) m[k] = x[k] + res[k];
    project(m, t->n, rows, cols, cols, 1, s->q + s->qoff[i], s->r, out);
    memset(out + 4 * s->r * rows, 0, 4 * s->r * cols); /* Q_m: the reduce */
    return 4 * s->r * (rows + cols);
}

/* ---- reduce -------------------------------------------------------------- */

/* acc[0..len) = the FP32 mean over the members of the FP32 values at
 * buf[m] + at, summed in replica order. */
static void mean_f32(const cmp_state *s, uint8_t *const *buf, uint64_t members,
                     uint64_t at, uint64_t len, float *acc) {
    int count = 0;
    for (int m = 0; m < s->M; m++) {
        if (!(members >> m & 1)) continue;
        for (uint64_t k = 0; k < len; k++) {
            float v = get_f32(buf[m] + at + 4 * k);
            acc[k] = count ? acc[k] + v : v;
        }
        count++;
    }
    if (count > 1)
        for (uint64_t k = 0; k < len; k++) acc[k] /= (float)count;
}

/* P's r columns (rows x r, row-major) made orthonormal in place: modified
 * Gram-Schmidt in double, column after column; a column of norm 0 is 0. */
static void orthonormalise(double *p, uint64_t rows, uint64_t r) {
    for (uint64_t j = 0; j < r; j++) {
        for (uint64_t i = 0; i < j; i++) {
            double dot = 0;
            for (uint64_t a = 0; a < rows; a++)
                dot += p[a * r + i] * p[a * r + j];
            for (uint64_t a = 0; a < rows; a++)
                p[a * r + j] -= dot * p[a * r + i];
        }
        double norm = 0;
        for (uint64_t a = 0; a < rows; a++) norm += p[a * r + j] * p[a * r + j];
        norm = sqrt(norm);
        for (uint64_t a = 0; a < rows; a++)
            p[a * r + j] = norm > 0 ? p[a * r + j] / norm : 0;
    }
}

void cmp_reduce(cmp_state *s, int i, uint8_t *const *buf, uint64_t members,
                float *out) {
    const cmp_tensor *t = &s->t[i];
    uint64_t rows, cols, r = s->r;
    if (!shape(s, i, &rows, &cols)) {
        mean_f32(s, buf, members, 0, t->n, out);
        return;
    }
    uint64_t np = rows * r, nq = cols * r;
    mean_f32(s, buf, members, 0, np, s->pf);
    for (uint64_t k = 0; k < np; k++) s->pd[k] = s->pf[k];
    orthonormalise(s->pd, rows, r);
    for (uint64_t k = 0; k < np; k++) s->pf[k] = (float)s->pd[k];
    for (int m = 0; m < s->M; m++)
        if (members >> m & 1)
            project(s->mat + (size_t)m * s->N + t->off, t->n, cols, rows, 1,
                    cols, s->pf, r, buf[m] + 4 * np);
    float *q = s->q + s->qoff[i];
    mean_f32(s, buf, members, 4 * np, nq, q);
    for (uint64_t k = 0; k < np; k++) put_f32(s->wire + 4 * k, s->pf[k]);
    for (uint64_t k = 0; k < nq; k++) put_f32(s->wire + 4 * (np + k), q[k]);
    codec_decode(s->c, s->wire, t->n, t->row, out);
    for (int m = 0; m < s->M; m++) {
        if (!(members >> m & 1)) continue;
        float *e = s->res + (size_t)m * s->N + t->off;
        const float *mm = s->mat + (size_t)m * s->N + t->off;
        for (size_t k = 0; k < t->n; k++) e[k] = mm[k] - out[k];
    }
}
