/*
 * data.c -- the Markov-chain corpus, byte-level text shards and the
 * batch streams of data.h.
 *
 * A chain stores, per state, its K successors with their probabilities
 * and cumulative sums (sampling walks the K sums: K is small).  A source
 * owns the base chain and, with skew, one tilted copy per replica; a
 * stream owns only its generator and position.
 */
#include "models/data.h"
#include "sim/base/msg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "sim/base/rng.h"

#define STATIONARY_TOL 1e-13
#define STATIONARY_MAX_ITERS 1000000

struct data_chain {
    int V, K;
    int32_t *succ; /* [V*K] */
    double *prob;  /* [V*K] */
    double *cum;   /* [V*K] cumulative, the last positive entry set to 1 */
    double *pi;    /* [V] stationary distribution */
    double H;      /* entropy rate, nats */
};

struct data_source {
    data_config cfg;
    int replicas;
    data_chain *base;    /* Markov */
    data_chain **chains; /* [replicas]: base itself when skew == 0 */
    uint8_t *text;       /* text: the whole file */
    size_t ntrain;       /* text: bytes before the held-out tail */
    size_t ntext;
};

struct data_stream {
    const data_source *src;
    gsl_rng *rng;
    const data_chain *chain; /* Markov */
    int32_t state;           /* Markov: the next token to emit */
    size_t lo, hi;           /* text: region [lo, hi) */
};

/* ---- chains -------------------------------------------------------------- */

static data_chain *chain_alloc(int V, int K) {
    if (V < 2 || K < 1 || K > V) return NULL;
    data_chain *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    size_t n = (size_t)V * (size_t)K;
    c->V = V;
    c->K = K;
    c->succ = malloc(n * sizeof *c->succ);
    c->prob = malloc(n * sizeof *c->prob);
    c->cum = malloc(n * sizeof *c->cum);
    c->pi = malloc((size_t)V * sizeof *c->pi);
    if (!c->succ || !c->prob || !c->cum || !c->pi) {
        data_chain_free(c);
        return NULL;
    }
    return c;
}

void data_chain_free(data_chain *c) {
    if (!c) return;
    free(c->succ);
    free(c->prob);
    free(c->cum);
    free(c->pi);
    free(c);
}

/* Power iteration of the lazy chain from the uniform distribution;
 * -1 when out of memory. */
static int stationary(data_chain *c) {
    const int V = c->V, K = c->K;
    double *pi = c->pi;
    double *next = malloc((size_t)V * sizeof *next);
    if (!next) return -1;
    for (int s = 0; s < V; s++) pi[s] = 1.0 / V;
    for (int it = 0; it < STATIONARY_MAX_ITERS; it++) {
        for (int s = 0; s < V; s++) next[s] = 0.5 * pi[s];
        for (int s = 0; s < V; s++)
            for (int k = 0; k < K; k++)
                next[c->succ[s * K + k]] += 0.5 * pi[s] * c->prob[s * K + k];
        double diff = 0, sum = 0;
        for (int s = 0; s < V; s++) {
            diff += fabs(next[s] - pi[s]);
            sum += next[s];
        }
        for (int s = 0; s < V; s++) pi[s] = next[s] / sum;
        if (diff < STATIONARY_TOL) break;
    }
    free(next);
    return 0;
}

/* Cumulative sums, stationary distribution and entropy rate; frees the
 * chain and returns NULL when out of memory. */
static data_chain *chain_finish(data_chain *c) {
    const int K = c->K;
    for (int s = 0; s < c->V; s++) {
        const double *p = c->prob + (size_t)s * K;
        double *cum = c->cum + (size_t)s * K;
        int last = 0;
        double acc = 0;
        for (int k = 0; k < K; k++) {
            acc += p[k];
            cum[k] = acc;
            if (p[k] > 0) last = k;
        }
        for (int k = last; k < K; k++) cum[k] = 1.0;
    }
    if (stationary(c)) {
        data_chain_free(c);
        return NULL;
    }
    double H = 0;
    for (int s = 0; s < c->V; s++) {
        double h = 0;
        for (int k = 0; k < K; k++) {
            double p = c->prob[(size_t)s * K + k];
            if (p > 0) h -= p * log(p);
        }
        H += c->pi[s] * h;
    }
    c->H = H;
    return c;
}

/* K probabilities from a flat Dirichlet: normalised Exp(1) draws. */
static void dirichlet(gsl_rng *r, double *p, int K) {
    double sum = 0;
    for (int k = 0; k < K; k++) sum += p[k] = gsl_ran_exponential(r, 1.0);
    for (int k = 0; k < K; k++) p[k] = sum > 0 ? p[k] / sum : 1.0 / K;
}

/* Successors of state s: (s+1) mod V, then K-1 distinct others chosen by
 * Floyd's algorithm among the V-1 states s+2, s+3, ..., s (mod V);
 * `mark` (V ints) records the states taken for this s (stamp s+1). */
static void pick_successors(gsl_rng *r, int V, int K, int s, int32_t *out,
                            int *mark) {
    const int n = V - 1;
    out[0] = (s + 1) % V;
    for (int j = n - (K - 1), k = 1; j < n; j++, k++) {
        int t = (int)gsl_rng_uniform_int(r, (unsigned long)j + 1);
        int state = (s + 2 + t) % V;
        if (mark[state] == s + 1) state = (s + 2 + j) % V;
        mark[state] = s + 1;
        out[k] = state;
    }
}

data_chain *data_chain_new(int V, int K, uint64_t seed) {
    data_chain *c = chain_alloc(V, K);
    if (!c) return NULL;
    gsl_rng *r = rng_stream(seed, RNG_DATA, DATA_CHAIN_INDEX);
    int *mark = calloc((size_t)V, sizeof *mark);
    if (!r || !mark) {
        if (r) gsl_rng_free(r);
        free(mark);
        data_chain_free(c);
        return NULL;
    }
    for (int s = 0; s < V; s++) {
        pick_successors(r, V, K, s, c->succ + (size_t)s * K, mark);
        dirichlet(r, c->prob + (size_t)s * K, K);
    }
    gsl_rng_free(r);
    free(mark);
    return chain_finish(c);
}

/* 1 when row s of the tables is valid. */
static int row_ok(int V, int K, const int32_t *succ, const double *prob) {
    double sum = 0;
    for (int k = 0; k < K; k++) {
        if (succ[k] < 0 || succ[k] >= V || !(prob[k] >= 0)) return 0;
        for (int j = 0; j < k; j++)
            if (succ[j] == succ[k]) return 0;
        sum += prob[k];
    }
    return fabs(sum - 1.0) <= 1e-9;
}

data_chain *data_chain_from_table(int V, int K, const int32_t *succ,
                                  const double *prob) {
    if (!succ || !prob || V < 2 || K < 1 || K > V) return NULL;
    for (int s = 0; s < V; s++)
        if (!row_ok(V, K, succ + (size_t)s * K, prob + (size_t)s * K))
            return NULL;
    data_chain *c = chain_alloc(V, K);
    if (!c) return NULL;
    size_t n = (size_t)V * (size_t)K;
    memcpy(c->succ, succ, n * sizeof *succ);
    memcpy(c->prob, prob, n * sizeof *prob);
    return chain_finish(c);
}

/* A copy of base whose rows are mixed with a fresh Dirichlet draw:
 * (1 - w) P + w Q. */
static data_chain *chain_tilted(const data_chain *base, double w, gsl_rng *r) {
    const int K = base->K;
    data_chain *c = chain_alloc(base->V, K);
    double *q = malloc((size_t)K * sizeof *q);
    if (!c || !q) {
        data_chain_free(c);
        free(q);
        return NULL;
    }
    size_t n = (size_t)base->V * (size_t)K;
    memcpy(c->succ, base->succ, n * sizeof *c->succ);
    for (int s = 0; s < base->V; s++) {
        dirichlet(r, q, K);
        for (int k = 0; k < K; k++) {
            size_t i = (size_t)s * K + k;
            c->prob[i] = (1.0 - w) * base->prob[i] + w * q[k];
        }
    }
    free(q);
    return chain_finish(c);
}

int data_chain_vocab(const data_chain *c) {
    return c->V;
}
int data_chain_successors(const data_chain *c) {
    return c->K;
}

const int32_t *data_chain_row(const data_chain *c, int s, const double **prob) {
    if (prob) *prob = c->prob + (size_t)s * c->K;
    return c->succ + (size_t)s * c->K;
}

const double *data_chain_stationary(const data_chain *c) {
    return c->pi;
}
double data_chain_entropy_rate(const data_chain *c) {
    return c->H;
}

/* ---- sources ------------------------------------------------------------- */

void data_config_default(data_config *c) {
    memset(c, 0, sizeof *c);
    *c = (data_config)DATA_CONFIG_DEFAULT;
}

static int markov_new(data_source *s, char *err, size_t errlen) {
    const data_config *c = &s->cfg;
    if (c->vocab < 2 || c->vocab > (1 << 24))
        return msg_set(err, errlen, MSG_EINPUT,
                       "data: vocab %d (expected 2..%d)", c->vocab, 1 << 24);
    if (c->successors < 1 || c->successors > c->vocab)
        return msg_set(err, errlen, MSG_EINPUT,
                       "data: successors %d (expected 1..vocab = %d)",
                       c->successors, c->vocab);
    if (!(c->skew >= 0 && c->skew <= 1))
        return msg_set(err, errlen, MSG_EINPUT,
                       "data: skew %g (expected [0, 1])", c->skew);
    s->base = data_chain_new(c->vocab, c->successors, c->seed);
    s->chains = calloc((size_t)s->replicas, sizeof *s->chains);
    if (!s->base || !s->chains)
        return msg_set(err, errlen, MSG_ENOMEM, "data: out of memory");
    for (int r = 0; r < s->replicas; r++) {
        if (c->skew == 0) {
            s->chains[r] = s->base;
            continue;
        }
        gsl_rng *g = rng_stream(c->seed, RNG_DATA, DATA_SKEW_INDEX + r);
        s->chains[r] = g ? chain_tilted(s->base, c->skew, g) : NULL;
        if (g) gsl_rng_free(g);
        if (!s->chains[r])
            return msg_set(err, errlen, MSG_ENOMEM, "data: out of memory");
    }
    return 0;
}

/* Reads a whole file into *buf (malloc'd) and its size into *n. */
static int read_file(const char *path, uint8_t **buf, size_t *n, char *err,
                     size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) return msg_set(err, errlen, MSG_EIO, "data: %s: cannot open", path);
    size_t cap = 1 << 16, len = 0;
    uint8_t *b = malloc(cap);
    while (b) {
        len += fread(b + len, 1, cap - len, f);
        if (len < cap) break;
        uint8_t *nb = realloc(b, cap * 2);
        if (!nb) {
            free(b);
            b = NULL;
            break;
        }
        b = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!b) return msg_set(err, errlen, MSG_ENOMEM, "data: out of memory");
    if (bad) {
        free(b);
        return msg_set(err, errlen, MSG_EIO, "data: %s: read error", path);
    }
    *buf = b;
    *n = len;
    return 0;
}

static int text_new(data_source *s, const char *path, char *err,
                    size_t errlen) {
    const data_config *c = &s->cfg;
    if (!path)
        return msg_set(err, errlen, MSG_EINPUT, "data: text needs a path");
    if (c->vocab != 0 && c->vocab != 256)
        return msg_set(err, errlen, MSG_EINPUT,
                       "data: text vocab %d (expected 256)", c->vocab);
    if (c->skew != 0)
        return msg_set(err, errlen, MSG_EINPUT,
                       "data: text skew %g (expected 0: regions are disjoint)",
                       c->skew);
    if (!(c->eval_fraction > 0 && c->eval_fraction < 1))
        return msg_set(err, errlen, MSG_EINPUT,
                       "data: eval_fraction %g (expected (0, 1))",
                       c->eval_fraction);
    int rc = read_file(path, &s->text, &s->ntext, err, errlen);
    if (rc) return rc;
    size_t neval = (size_t)floor((double)s->ntext * c->eval_fraction);
    s->ntrain = s->ntext - neval;
    if (neval < 2 || s->ntrain / (size_t)s->replicas < 2)
        return msg_set(err, errlen, MSG_EINPUT,
                       "data: %s: %zu bytes are too few for %d shards and an "
                       "eval tail",
                       path, s->ntext, s->replicas);
    return 0;
}

int data_source_new(const data_config *c, int replicas, data_source **out,
                    char *err, size_t errlen) {
    *out = NULL;
    if (replicas < 1)
        return msg_set(err, errlen, MSG_EINPUT,
                       "data: replicas %d (expected >= 1)", replicas);
    data_source *s = calloc(1, sizeof *s);
    if (!s) return msg_set(err, errlen, MSG_ENOMEM, "data: out of memory");
    s->cfg = *c;
    s->cfg.path = NULL; /* not kept */
    s->replicas = replicas;
    int rc;
    switch (c->kind) {
    case DATA_NONE: rc = 0; break;
    case DATA_MARKOV: rc = markov_new(s, err, errlen); break;
    case DATA_TEXT: rc = text_new(s, c->path, err, errlen); break;
    default:
        rc = msg_set(err, errlen, MSG_EINPUT,
                     "data: kind %d (expected none, "
                     "markov or text)",
                     (int)c->kind);
    }
    if (rc) {
        data_source_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void data_source_free(data_source *s) {
    if (!s) return;
    if (s->chains)
        for (int r = 0; r < s->replicas; r++)
            if (s->chains[r] != s->base) data_chain_free(s->chains[r]);
    free(s->chains);
    data_chain_free(s->base);
    free(s->text);
    free(s);
}

int data_vocab(const data_source *s) {
    switch (s->cfg.kind) {
    case DATA_MARKOV: return s->cfg.vocab;
    case DATA_TEXT: return 256;
    default: return 0;
    }
}

double data_entropy_rate(const data_source *s, int replica) {
    if (s->cfg.kind != DATA_MARKOV || replica < -1 || replica >= s->replicas)
        return NAN;
    return (replica < 0 ? s->base : s->chains[replica])->H;
}

/* ---- streams ------------------------------------------------------------- */

/* A draw from the distribution p[0..n) by walking its cumulative sum. */
static int32_t draw_index(gsl_rng *r, const double *p, int n) {
    double u = gsl_rng_uniform(r), acc = 0;
    for (int i = 0; i < n - 1; i++) {
        acc += p[i];
        if (u < acc) return i;
    }
    return n - 1;
}

data_stream *data_stream_new(const data_source *s, int replica) {
    if (s->cfg.kind == DATA_NONE || replica < -1 || replica >= s->replicas)
        return NULL;
    data_stream *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->src = s;
    uint32_t index = replica < 0 ? DATA_EVAL_INDEX : (uint32_t)replica;
    st->rng = rng_stream(s->cfg.seed, RNG_DATA, index);
    if (!st->rng) {
        free(st);
        return NULL;
    }
    if (s->cfg.kind == DATA_MARKOV) {
        st->chain = replica < 0 ? s->base : s->chains[replica];
        st->state = draw_index(st->rng, st->chain->pi, st->chain->V);
    } else if (replica < 0) {
        st->lo = s->ntrain;
        st->hi = s->ntext;
    } else {
        size_t M = (size_t)s->replicas, r = (size_t)replica;
        st->lo = r * s->ntrain / M;
        st->hi = (r + 1) * s->ntrain / M;
    }
    return st;
}

void data_stream_free(data_stream *st) {
    if (!st) return;
    if (st->rng) gsl_rng_free(st->rng);
    free(st);
}

int data_stream_copy(data_stream *dst, const data_stream *src) {
    if (dst->src != src->src || dst->rng->type != src->rng->type)
        return MSG_EINVAL;
    gsl_rng_memcpy(dst->rng, src->rng);
    dst->chain = src->chain;
    dst->state = src->state;
    dst->lo = src->lo;
    dst->hi = src->hi;
    return 0;
}

/* The current state, then one transition. */
static int32_t markov_next(data_stream *st) {
    const data_chain *c = st->chain;
    int32_t tok = st->state;
    const double *cum = c->cum + (size_t)tok * c->K;
    double u = gsl_rng_uniform(st->rng);
    int k = 0;
    while (k < c->K - 1 && u >= cum[k]) k++;
    st->state = c->succ[(size_t)tok * c->K + k];
    return tok;
}

int data_next_batch(data_stream *st, int B, int T, int32_t *x, int32_t *y) {
    if (B < 1 || T < 1) return MSG_EINVAL;
    const int text = st->src->cfg.kind == DATA_TEXT;
    if (text && st->hi - st->lo < (size_t)T + 1) return MSG_EINVAL;
    for (int b = 0; b < B; b++) {
        int32_t *xb = x + (size_t)b * T, *yb = y + (size_t)b * T;
        if (text) {
            size_t span = st->hi - st->lo - (size_t)T;
            const uint8_t *c =
                st->src->text + st->lo + gsl_rng_uniform_int(st->rng, span);
            for (int i = 0; i < T; i++) {
                xb[i] = c[i];
                yb[i] = c[i + 1];
            }
            continue;
        }
        int32_t prev = markov_next(st);
        for (int i = 0; i < T; i++) {
            xb[i] = prev;
            yb[i] = prev = markov_next(st);
        }
    }
    return 0;
}
