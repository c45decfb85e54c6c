/*
 * data.h -- token sources for the numerics half: a synthetic Markov chain
 * with a known entropy rate, and byte-level text from a file.
 *
 * Markov chain.  V states (tokens); state s has K distinct successors:
 * the first is always (s + 1) mod V (so the chain is irreducible), the
 * other K - 1 are drawn uniformly without replacement from the remaining
 * V - 1 states (s itself included); their probabilities are a flat
 * Dirichlet draw (K Exp(1) variables, normalised).  The stationary
 * distribution pi comes from power iteration of the lazy chain
 * (pi <- (pi + pi P) / 2, which has the same fixed point and converges
 * for every irreducible chain, periodic or not) and the entropy rate is
 *     H = sum_s pi(s) * sum_k -P(s,k) ln P(s,k)     (nats).
 * A stream starts in a state drawn from pi and continues across
 * sequences, so it is stationary and every position's best possible
 * expected loss is exactly H: eval loss can be read against that floor.
 *
 * Skew (non-i.i.d. shards).  With skew w in [0, 1], replica r's chain
 * keeps the successors but mixes the probabilities with a replica-own
 * Dirichlet draw Q_r:  P_r(s,k) = (1 - w) P(s,k) + w Q_r(s,k).  w = 0:
 * every replica samples the same chain (i.i.d. shards).  The eval stream
 * always samples the base chain P.  Same support, so no eval token is
 * impossible under any replica's chain.
 *
 * Text.  The bytes of a file, vocab 256.  The last eval_fraction of the
 * file (rounded down to whole bytes) is held out for evaluation; the rest
 * is cut into `replicas` disjoint contiguous regions, region r =
 * [r*N/M, (r+1)*N/M) of the N training bytes.  A sequence is T+1 bytes at
 * a uniformly random offset inside the stream's region.  Skew must be 0
 * (contiguous regions of a real text already differ).
 *
 * Batches.  B sequences of T+1 tokens c_0..c_T give inputs x = c_0..c_{T-1}
 * and targets y = c_1..c_T; x[b*T + i] is position i of sequence b.
 *
 * Seeds.  Every random draw comes from rng_stream(seed, RNG_DATA, index)
 * with index: r for replica r's stream, DATA_EVAL_INDEX for the eval
 * stream, DATA_CHAIN_INDEX for the base chain, DATA_SKEW_INDEX + r for
 * replica r's tilt.  Same configuration, same tokens; the eval stream
 * does not depend on the method or on the number of replicas.  No global
 * state.
 */
#ifndef DILOSIM_DATA_H
#define DILOSIM_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/msg.h" /* the codes returned */

#define DATA_EVAL_INDEX 0x80000000u
#define DATA_CHAIN_INDEX 0x80000001u
#define DATA_SKEW_INDEX 0x40000000u

typedef enum {
    DATA_NONE = 0,   /* no tokens (models that ignore them, e.g. a toy) */
    DATA_MARKOV = 1, /* the synthetic chain */
    DATA_TEXT = 2    /* bytes of a file */
} data_kind;

/* Defaults (data_config_default) in brackets. */
typedef struct {
    data_kind kind;       /* [DATA_MARKOV] */
    int vocab;            /* Markov: states V, 2..2^24 [64]; text: 256
                             (0 is taken as 256) */
    int successors;       /* Markov: K, 1..V [4] */
    double skew;          /* Markov: tilt weight w in [0, 1] [0] */
    uint64_t seed;        /* chain, shards and eval stream [1] */
    const char *path;     /* text: the file (read by data_source_new;
                             need not outlive it) [NULL] */
    double eval_fraction; /* text: held-out tail, in (0, 1) [0.1] */
} data_config;

/* ---- Markov chains ------------------------------------------------------- */

typedef struct data_chain data_chain;

/* A random chain (construction above) from a GSL stream seeded with
 * `seed` as rng_stream(seed, RNG_DATA, DATA_CHAIN_INDEX) does.  NULL for
 * V < 2, K outside 1..V, or out of memory. */
data_chain *data_chain_new(int V, int K, uint64_t seed);

/* A chain from explicit tables: successor k of state s is succ[s*K + k]
 * with probability prob[s*K + k] (rows must sum to 1 within 1e-9, entries
 * >= 0, successors in 0..V-1 and distinct within a row).  NULL when they
 * are not, or out of memory. */
data_chain *data_chain_from_table(int V, int K, const int32_t *succ,
                                  const double *prob);

void data_chain_free(data_chain *c);

int data_chain_vocab(const data_chain *c);
int data_chain_successors(const data_chain *c);
/* Row s: K successors and their probabilities (owned by the chain). */
const int32_t *data_chain_row(const data_chain *c, int s, const double **prob);
/* The stationary distribution (V values, owned by the chain; computed
 * when the chain is built, to 1e-13 in L1 or 10^6 lazy iterations). */
const double *data_chain_stationary(const data_chain *c);
/* The entropy rate H in nats (see above). */
double data_chain_entropy_rate(const data_chain *c);

/* ---- sources and streams ------------------------------------------------- */

typedef struct data_source data_source;
typedef struct data_stream data_stream;

/* The defaults listed above, as an initializer (data_config_default's,
 * and the train section's of a scenario). */
#define DATA_CONFIG_DEFAULT                                                    \
    {                                                                          \
        .kind = DATA_MARKOV, .vocab = 64, .successors = 4, .skew = 0,          \
        .seed = 1, .path = NULL, .eval_fraction = 0.1                          \
    }

/* Fills *c with the defaults listed above. */
void data_config_default(data_config *c);

/* Builds the corpus for `replicas` shards (>= 1): the base chain and the
 * replicas' tilted chains, or the file's bytes.  Returns 0 and sets
 * *out, or an error code with a one-line reason in err: MSG_EINPUT for a
 * bad configuration, MSG_EIO for a file that cannot be read, MSG_ENOMEM. */
int data_source_new(const data_config *c, int replicas, data_source **out,
                    char *err, size_t errlen);

void data_source_free(data_source *s);

/* Token ids lie in 0..vocab-1 (0 for DATA_NONE). */
int data_vocab(const data_source *s);

/* The entropy rate (nats per token) of replica r's chain, or of the base
 * (eval) chain for r = -1; NAN for text and DATA_NONE. */
double data_entropy_rate(const data_source *s, int replica);

/* Replica r's stream (0 <= r < replicas), or the eval stream for r = -1.
 * Independent of every other stream; two streams made for the same r
 * give the same tokens.  The source must outlive it.  NULL for a bad r,
 * DATA_NONE, or out of memory. */
data_stream *data_stream_new(const data_source *s, int replica);

void data_stream_free(data_stream *st);

/* Makes dst a copy of src: its generator state, chain and position
 * (Markov: the next token; text: the region), so both then yield the same
 * batches, whichever replica each was made for.  Both must be streams of
 * the same source: MSG_EINVAL otherwise, dst unchanged.  No allocation;
 * src is not touched. */
int data_stream_copy(data_stream *dst, const data_stream *src);

/* The next batch of B sequences of T+1 tokens: x and y each B*T.
 * 0, or MSG_EINVAL when B or T < 1 or a text region is shorter
 * than T+1 bytes. */
int data_next_batch(data_stream *st, int B, int T, int32_t *x, int32_t *y);

#endif
