/*
 * test_data.c -- the token sources: entropy rates of small chains against
 * hand-computed values, the random chain's structure, empirical
 * transition frequencies and loss against the chain, reproducibility,
 * distinct shards, skewed shards, byte-level text shards and errors.
 *
 * Fixtures live in tests/data/train/; the tests run from the repository
 * root (as `make check` does).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "models/data.h"

#define TEXT "tests/data/train/text.txt"

static data_source *markov(int V, int K, double skew, int replicas,
                           uint64_t seed) {
    data_config c;
    data_config_default(&c);
    c.vocab = V;
    c.successors = K;
    c.skew = skew;
    c.seed = seed;
    data_source *s;
    char err[128];
    ck_assert_int_eq(data_source_new(&c, replicas, &s, err, sizeof err), 0);
    return s;
}

/* 0 -> {0: 1/2, 1: 1/2}, 1 -> {0: 1}: pi = (2/3, 1/3), H = (2/3) ln 2. */
START_TEST(entropy_two_states) {
    const int32_t succ[4] = {0, 1, 0, 1};
    const double prob[4] = {0.5, 0.5, 1.0, 0.0};
    data_chain *c = data_chain_from_table(2, 2, succ, prob);
    ck_assert_ptr_nonnull(c);
    const double *pi = data_chain_stationary(c);
    ck_assert_double_eq_tol(pi[0], 2.0 / 3, 1e-12);
    ck_assert_double_eq_tol(pi[1], 1.0 / 3, 1e-12);
    ck_assert_double_eq_tol(data_chain_entropy_rate(c), 2.0 / 3 * log(2.0),
                            1e-12);
    data_chain_free(c);
}
END_TEST

/* 0 -> {1: 1/2, 2: 1/2}, 1 -> {0: 1}, 2 -> {0: 1/4, 1: 3/4}.
 * Balance: pi2 = pi0/2, pi1 = pi0/2 + 3 pi2/4 = 7 pi0/8, so
 * pi = (8, 7, 4)/19 and H = 8/19 ln 2 + 4/19 h(1/4, 3/4). */
START_TEST(entropy_three_states) {
    const int32_t succ[6] = {1, 2, 0, 2, 0, 1};
    const double prob[6] = {0.5, 0.5, 1.0, 0.0, 0.25, 0.75};
    data_chain *c = data_chain_from_table(3, 2, succ, prob);
    ck_assert_ptr_nonnull(c);
    const double *pi = data_chain_stationary(c);
    ck_assert_double_eq_tol(pi[0], 8.0 / 19, 1e-12);
    ck_assert_double_eq_tol(pi[1], 7.0 / 19, 1e-12);
    ck_assert_double_eq_tol(pi[2], 4.0 / 19, 1e-12);
    double h = -(0.25 * log(0.25) + 0.75 * log(0.75));
    ck_assert_double_eq_tol(data_chain_entropy_rate(c),
                            8.0 / 19 * log(2.0) + 4.0 / 19 * h, 1e-12);
    data_chain_free(c);
}
END_TEST

/* A deterministic 5-cycle is periodic: the lazy iteration still finds the
 * uniform distribution; its entropy rate is 0. */
START_TEST(entropy_periodic_cycle) {
    int32_t succ[5];
    double prob[5];
    for (int s = 0; s < 5; s++) succ[s] = (s + 1) % 5, prob[s] = 1;
    data_chain *c = data_chain_from_table(5, 1, succ, prob);
    ck_assert_ptr_nonnull(c);
    for (int s = 0; s < 5; s++)
        ck_assert_double_eq_tol(data_chain_stationary(c)[s], 0.2, 1e-12);
    ck_assert_double_eq_tol(data_chain_entropy_rate(c), 0, 1e-15);
    data_chain_free(c);
    const double bad[5] = {1, 1, 0.5, 1, 1}; /* a row not summing to 1 */
    ck_assert_ptr_null(data_chain_from_table(5, 1, succ, bad));
    const int32_t dup[4] = {0, 0, 0, 1};
    const double half[4] = {0.5, 0.5, 0.5, 0.5};
    ck_assert_ptr_null(data_chain_from_table(2, 2, dup, half));
}
END_TEST

START_TEST(random_chain_structure) {
    const int V = 50, K = 5;
    data_chain *c = data_chain_new(V, K, 7);
    ck_assert_ptr_nonnull(c);
    const double *pi = data_chain_stationary(c);
    double *piP = calloc(V, sizeof *piP), total = 0;
    for (int s = 0; s < V; s++) {
        const double *p;
        const int32_t *succ = data_chain_row(c, s, &p);
        ck_assert_int_eq(succ[0], (s + 1) % V);
        double sum = 0;
        for (int k = 0; k < K; k++) {
            ck_assert(succ[k] >= 0 && succ[k] < V);
            for (int j = 0; j < k; j++) ck_assert_int_ne(succ[j], succ[k]);
            ck_assert(p[k] >= 0);
            sum += p[k];
            piP[succ[k]] += pi[s] * p[k];
        }
        ck_assert_double_eq_tol(sum, 1, 1e-12);
        total += pi[s];
    }
    ck_assert_double_eq_tol(total, 1, 1e-12);
    for (int s = 0; s < V; s++) ck_assert_double_eq_tol(piP[s], pi[s], 1e-12);
    double H = data_chain_entropy_rate(c);
    ck_assert(H > 0 && H < log((double)K));
    free(piP);
    data_chain_free(c);
}
END_TEST

/* Transition counts from a long stream match the chain's probabilities
 * (within 5 standard deviations), and the mean loss of the true
 * predictor approaches the entropy rate. */
START_TEST(empirical_frequencies) {
    const int V = 8, K = 3, B = 16, T = 256, batches = 100;
    data_source *src = markov(V, K, 0, 1, 3);
    data_chain *c = data_chain_new(V, K, 3); /* the same chain */
    data_stream *st = data_stream_new(src, 0);
    int32_t *x = malloc(B * T * sizeof *x), *y = malloc(B * T * sizeof *y);
    long count[8][8] = {{0}}, from[8] = {0};
    double nll = 0;
    long n = 0;
    for (int i = 0; i < batches; i++) {
        ck_assert_int_eq(data_next_batch(st, B, T, x, y), 0);
        for (int j = 0; j < B * T; j++) {
            count[x[j]][y[j]]++;
            from[x[j]]++;
            const double *p;
            const int32_t *succ = data_chain_row(c, x[j], &p);
            int k = 0;
            while (k < K && succ[k] != y[j]) k++;
            ck_assert_int_lt(k, K); /* only successors follow */
            nll -= log(p[k]);
            n++;
        }
        for (int b = 0; b < B; b++)
            for (int t = 0; t + 1 < T; t++)
                ck_assert_int_eq(y[b * T + t], x[b * T + t + 1]);
    }
    for (int s = 0; s < V; s++) {
        const double *p;
        const int32_t *succ = data_chain_row(c, s, &p);
        ck_assert_int_gt(from[s], 1000);
        ck_assert_double_eq_tol((double)from[s] / n,
                                data_chain_stationary(c)[s], 0.02);
        for (int k = 0; k < K; k++) {
            double f = (double)count[s][succ[k]] / from[s];
            double sd = sqrt(p[k] * (1 - p[k]) / from[s]);
            ck_assert_msg(fabs(f - p[k]) <= 5 * sd + 1e-12,
                          "state %d succ %d: %g vs %g", s, succ[k], f, p[k]);
        }
    }
    ck_assert_double_eq_tol(nll / n, data_entropy_rate(src, 0), 0.02);
    free(x);
    free(y);
    data_stream_free(st);
    data_chain_free(c);
    data_source_free(src);
}
END_TEST

static void batch(data_stream *st, int32_t *x, int32_t *y) {
    ck_assert_int_eq(data_next_batch(st, 4, 32, x, y), 0);
}

START_TEST(same_seed_same_tokens_shards_differ) {
    data_source *a = markov(64, 4, 0, 3, 11), *b = markov(64, 4, 0, 3, 11);
    int32_t xa[128], ya[128], xb[128], yb[128], xc[128], yc[128];
    for (int r = -1; r < 3; r++) {
        data_stream *sa = data_stream_new(a, r), *sb = data_stream_new(b, r);
        for (int i = 0; i < 3; i++) {
            batch(sa, xa, ya);
            batch(sb, xb, yb);
            ck_assert(!memcmp(xa, xb, sizeof xa) && !memcmp(ya, yb, sizeof ya));
        }
        data_stream_free(sa);
        data_stream_free(sb);
    }
    /* every pair of streams (replicas 0..2 and eval) differs */
    for (int r = -1; r < 3; r++)
        for (int q = r + 1; q < 3; q++) {
            data_stream *sr = data_stream_new(a, r);
            data_stream *sq = data_stream_new(a, q);
            batch(sr, xa, ya);
            batch(sq, xc, yc);
            ck_assert(memcmp(xa, xc, sizeof xa) != 0);
            data_stream_free(sr);
            data_stream_free(sq);
        }
    /* the eval stream does not depend on the number of replicas */
    data_source *one = markov(64, 4, 0, 1, 11);
    data_stream *e1 = data_stream_new(one, -1), *e3 = data_stream_new(a, -1);
    batch(e1, xa, ya);
    batch(e3, xb, yb);
    ck_assert(!memcmp(xa, xb, sizeof xa));
    ck_assert_ptr_null(data_stream_new(a, 3));
    data_stream_free(e1);
    data_stream_free(e3);
    data_source_free(one);
    /* another seed, another chain */
    data_source *d = markov(64, 4, 0, 3, 12);
    ck_assert(data_entropy_rate(d, -1) != data_entropy_rate(a, -1));
    data_source_free(d);
    data_source_free(a);
    data_source_free(b);
}
END_TEST

START_TEST(skewed_shards) {
    data_source *iid = markov(32, 4, 0, 2, 5), *sk = markov(32, 4, 0.7, 2, 5);
    double h = data_entropy_rate(iid, -1);
    ck_assert(data_entropy_rate(iid, 0) == h && data_entropy_rate(iid, 1) == h);
    ck_assert(data_entropy_rate(sk, -1) == h); /* eval: the base chain */
    ck_assert(data_entropy_rate(sk, 0) != h);
    ck_assert(data_entropy_rate(sk, 1) != data_entropy_rate(sk, 0));
    /* tilted shards keep the base chain's successors */
    data_chain *c = data_chain_new(32, 4, 5);
    data_stream *st = data_stream_new(sk, 1);
    int32_t x[128], y[128];
    for (int i = 0; i < 50; i++) {
        batch(st, x, y);
        for (int j = 0; j < 128; j++) {
            const int32_t *succ = data_chain_row(c, x[j], NULL);
            int k = 0;
            while (k < 4 && succ[k] != y[j]) k++;
            ck_assert_int_lt(k, 4);
        }
    }
    data_stream_free(st);
    data_chain_free(c);
    data_source_free(iid);
    data_source_free(sk);
}
END_TEST

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    unsigned char *b = malloc(1 << 16);
    *n = fread(b, 1, 1 << 16, f);
    fclose(f);
    return b;
}

/* 1 when needle[0..len) occurs in hay[lo..hi). */
static int occurs(const unsigned char *hay, size_t lo, size_t hi,
                  const unsigned char *needle, size_t len) {
    for (size_t i = lo; i + len <= hi; i++)
        if (!memcmp(hay + i, needle, len)) return 1;
    return 0;
}

START_TEST(text_shards) {
    size_t n;
    unsigned char *file = slurp(TEXT, &n);
    data_config c;
    data_config_default(&c);
    c.kind = DATA_TEXT;
    c.vocab = 0;
    c.path = TEXT;
    c.eval_fraction = 0.2;
    data_source *s;
    char err[160];
    ck_assert_int_eq(data_source_new(&c, 2, &s, err, sizeof err), 0);
    ck_assert_int_eq(data_vocab(s), 256);
    ck_assert(isnan(data_entropy_rate(s, 0)));
    size_t neval = (size_t)floor(n * 0.2), ntrain = n - neval;
    const size_t lo[3] = {0, ntrain / 2, ntrain};
    const size_t hi[3] = {ntrain / 2, ntrain, n};
    enum { B = 4, T = 24 };
    int32_t x[B * T], y[B * T];
    unsigned char seq[T + 1];
    for (int r = -1; r < 2; r++) {
        int region = r < 0 ? 2 : r;
        data_stream *st = data_stream_new(s, r);
        for (int i = 0; i < 20; i++) {
            ck_assert_int_eq(data_next_batch(st, B, T, x, y), 0);
            for (int b = 0; b < B; b++) {
                for (int t = 0; t < T; t++)
                    seq[t] = (unsigned char)x[b * T + t];
                seq[T] = (unsigned char)y[b * T + T - 1];
                for (int t = 0; t + 1 < T; t++)
                    ck_assert_int_eq(y[b * T + t], x[b * T + t + 1]);
                ck_assert(occurs(file, lo[region], hi[region], seq, T + 1));
            }
        }
        data_stream_free(st);
    }
    /* a region shorter than a sequence cannot fill a batch */
    data_stream *st = data_stream_new(s, 0);
    ck_assert_int_eq(data_next_batch(st, 1, (int)ntrain, x, y), MSG_EINVAL);
    data_stream_free(st);
    data_source_free(s);
    free(file);
}
END_TEST

START_TEST(errors) {
    data_config c;
    data_config_default(&c);
    data_source *s;
    char err[160];
    c.vocab = 1;
    ck_assert_int_eq(data_source_new(&c, 1, &s, err, sizeof err), MSG_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "vocab"));
    data_config_default(&c);
    c.successors = 65;
    ck_assert_int_eq(data_source_new(&c, 1, &s, err, sizeof err), MSG_EINPUT);
    data_config_default(&c);
    c.skew = 1.5;
    ck_assert_int_eq(data_source_new(&c, 1, &s, err, sizeof err), MSG_EINPUT);
    data_config_default(&c);
    c.kind = DATA_TEXT;
    c.vocab = 0;
    c.path = "tests/data/train/no-such-file";
    ck_assert_int_eq(data_source_new(&c, 1, &s, err, sizeof err), MSG_EIO);
    ck_assert_ptr_nonnull(strstr(err, "no-such-file"));
    c.path = TEXT;
    c.skew = 0.5;
    ck_assert_int_eq(data_source_new(&c, 1, &s, err, sizeof err), MSG_EINPUT);
    c.skew = 0;
    ck_assert_int_eq(data_source_new(&c, 2000, &s, err, sizeof err),
                     MSG_EINPUT); /* too few bytes per shard */
    ck_assert_ptr_null(data_chain_new(1, 1, 1));
    ck_assert_ptr_null(data_chain_new(4, 5, 1));
    /* no tokens: no streams */
    data_config_default(&c);
    c.kind = DATA_NONE;
    ck_assert_int_eq(data_source_new(&c, 2, &s, err, sizeof err), 0);
    ck_assert_int_eq(data_vocab(s), 0);
    ck_assert_ptr_null(data_stream_new(s, 0));
    data_source_free(s);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("data");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, entropy_two_states);
    tcase_add_test(tc, entropy_three_states);
    tcase_add_test(tc, entropy_periodic_cycle);
    tcase_add_test(tc, random_chain_structure);
    tcase_add_test(tc, empirical_frequencies);
    tcase_add_test(tc, same_seed_same_tokens_shards_differ);
    tcase_add_test(tc, skewed_shards);
    tcase_add_test(tc, text_shards);
    tcase_add_test(tc, errors);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
