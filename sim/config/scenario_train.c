/*
 * scenario_train.c -- the "train" section of a scenario (the numerics of
 * `dilosim train`): its schema table and the checks that span its keys,
 * made as train_new would make them but reported at a key, then the
 * completion of the section with the scenario's shared keys (replicas,
 * steps, seed, schedule, codecs).  Text data is opened here, so a missing,
 * unreadable, empty or too short file is an input error at its key.
 */
#include "sim/config/scenario_int.h"
#include "sim/config/scenario_out.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/base/msg.h"

/* The train section's tables write into the scn__out's train
 * (scenario_int.h); the K_* macros take their offsets from AT. */
#undef AT
#define AT(m) AT_TRAIN(m)

/* The train section's enums: names[i] is value i, or values[i]. */
static const char *const nn_kind_names[] = {"transformer", "mlp"};
static const int nn_kind_values[] = {NN_TRANSFORMER, NN_MLP};
static const char *const data_kind_names[] = {"markov", "text"};
static const int data_kind_values[] = {DATA_MARKOV, DATA_TEXT};
static const char *const optim_names[] = {"adamw", "sgd"}; /* ADAMW 0 */
static const char *const units_names[] = {"join", "own"};  /* MAP_JOIN 0 */
static const char *const eval_names[] = {"outer", "replica", "average"};
static const enum_def E_NN_KIND = {.n = 2,
                                   .names = nn_kind_names,
                                   .values = nn_kind_values};
static const enum_def E_DATA_KIND = {.n = 2,
                                     .names = data_kind_names,
                                     .values = data_kind_values};
static const enum_def E_OPTIM = SCN__NAMES(optim_names);
static const enum_def E_UNITS = SCN__NAMES(units_names);
static const enum_def E_EVAL = SCN__NAMES(eval_names); /* bit i: SCN_EVAL_* */

/* The numerics ("train"): what spans several keys, the schedule against
 * the trained model and the keys shared with the timing half are
 * check_train's. */
static const field train_model_fields[] = {
    K_ENUM("kind", train.nn.kind, E_NN_KIND),
    K_INT("vocab", train.nn.vocab, 2, 1 << 24),
    K_INT("d", train.nn.d, 1, 1 << 16),
    K_INT("heads", train.nn.heads, 1, 1 << 16),
    K_INT("layers", train.nn.layers, 1, NN_MAX_LAYERS),
    K_INT("ctx", train.nn.ctx, 1, 1 << 20),
    K_INT("mlp_ratio", train.nn.mlp_ratio, 1, 64),
    K_END,
};

static const field train_data_fields[] = {
    K_ENUM("kind", train.data.kind, E_DATA_KIND),
    K_INT("vocab", train.data.vocab, 2, 1 << 24),
    K_INT("successors", train.data.successors, 1, 1 << 24),
    K_NUM("skew", train.data.skew, IN(0, 1)),
    K_STR("path"),
    K_NUM("eval_fraction", train.data.eval_fraction, OO(0, 1)),
    K_END,
};

static const field train_inner_fields[] = {
    K_ENUM("optimizer", train.inner.kind, E_OPTIM),
    K_NUM("lr", train.inner.lr, IN(0, 1e6)),
    K_NUM("lr_min", train.inner.lr_min, IN(0, 1e6)),
    K_I64("warmup", train.inner.warmup, 0, 1e12),
    K_BOOL("cosine", train.inner.cosine),
    K_I64("total", train.inner.total, 0, 1e12),
    K_NUM("beta1", train.inner.beta1, CO(0, 1)),
    K_NUM("beta2", train.inner.beta2, CO(0, 1)),
    K_NUM("eps", train.inner.eps, OC(0, 1)),
    K_NUM("weight_decay", train.inner.weight_decay, IN(0, 1e6)),
    K_NUM("momentum", train.inner.momentum, CO(0, 1)),
    K_NUM("clip", train.inner.clip, IN(0, 1e30)),
    K_END,
};

static const field train_outer_fields[] = {
    K_NUM("lr", train.outer_lr, IN(0, 1e6)),
    K_NUM("momentum", train.outer_momentum, CO(0, 1)),
    K_END,
};

const field scn__train_fields[] = {
    K_OBJ("model", train_model_fields),
    K_OBJ("data", train_data_fields),
    K_INT("batch", train.batch, 1, 1 << 20),
    K_INT("seq", train.seq, 1, 1 << 20),
    K_OBJ("inner", train_inner_fields),
    K_OBJ("outer", train_outer_fields),
    K_ENUM("units", train.map, E_UNITS),
    K_I64("eval_interval", train.eval_interval, 0, 1e12),
    K_INT("eval_batches", train.eval_batches, 1, 100000),
    K_FLAGS("eval", train_eval, E_EVAL),
    K_INT("threads", train.threads, 1, 256),
    K_BOOL("fedpart", train.fedpart),
    K_NUM("target_loss", target_loss, IN(0, 1e6)),
    K_END,
};

/* ---------------------------------------------------------------------
 * Pass 4, continued: the train section, checked as train_new would check
 * it, each conflict reported at a key.
 */

/* Node train.sec.key (sec NULL: train.key; key NULL: the section). */
static const cJSON *tget(const cJSON *root, const char *sec, const char *key) {
    const cJSON *t = get(root, "train");
    if (sec) t = get(t, sec);
    return key ? get(t, key) : t;
}

/* A conflict between keys a and b (paths pa, pb; either node may be
 * NULL when not given) is reported at the one given last, or at the one
 * given; when neither was given, at node d (an enclosing object) under
 * path pd.  Always returns -1. */
static int fail_either(ctx *c, const cJSON *a, const char *pa, const cJSON *b,
                       const char *pb, const cJSON *d, const char *pd,
                       const char *fmt, ...) {
    const cJSON *at = d;
    const char *p = pd;
    if (a && (!b || !is_later(c, b, a))) at = a, p = pa;
    else if (b) at = b, p = pb;
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(c, at, 0, p, fmt, ap);
    va_end(ap);
    return rc;
}

/* The first of `keys` given in train.data, which data of this kind does
 * not use, is an error at its key. */
static int reject_keys(ctx *c, const cJSON *root, const char *const *keys,
                       const char *kind, const char *other) {
    char p[PATH_LEN];
    for (; *keys; keys++) {
        const cJSON *v = tget(root, "data", *keys);
        if (!v) continue;
        join_key(p, "train.data", *keys);
        return fail(c, v, 1, p,
                    "not used by %s data (expected it only "
                    "with kind %s)",
                    kind, other);
    }
    return 0;
}

/* The text file of train.data.path (node v): a readable file, whose
 * size goes to *size. */
static int open_text_file(ctx *c, const cJSON *v, const scn_train *tr,
                          size_t *size) {
    const char *name = tr->train_data_path;
    FILE *f = fopen(name, "rb");
    struct stat st;
    if (!f)
        return fail(c, v, 0, "train.data.path", "cannot open %s: %s", name,
                    strerror(errno));
    int e = fstat(fileno(f), &st) ? errno : 0;
    char probe;
    if (!e && S_ISDIR(st.st_mode)) e = EISDIR;
    if (!e && fread(&probe, 1, 1, f) != 1 && ferror(f)) e = errno ? errno : EIO;
    fclose(f);
    if (e)
        return fail(c, v, 0, "train.data.path", "cannot read %s: %s", name,
                    strerror(e));
    *size = (size_t)st.st_size;
    return 0;
}

/* Text of n bytes is long enough for an eval tail (eval_fraction of it)
 * and workers.count training shards of seq + 1 bytes each, as
 * data_next_batch needs. */
static int check_text_size(ctx *c, const cJSON *v, const scn_config *cfg,
                           const scn_train *tr, size_t n) {
    const char *name = tr->train_data_path;
    const train_config *t = &tr->train;
    size_t need = (size_t)t->seq + 1;
    if (n == 0)
        return fail(c, v, 0, "train.data.path",
                    "%s is empty (expected a "
                    "text file)",
                    name);
    size_t neval = (size_t)floor((double)n * t->data.eval_fraction);
    size_t shard = (n - neval) / (size_t)cfg->workers;
    if (neval < need || shard < need)
        return fail(c, v, 0, "train.data.path",
                    "%s: %zu bytes are too few "
                    "(its eval tail has %zu bytes and each of the %d shards "
                    "%zu; expected at least train.seq + 1 = %zu each)",
                    name, n, neval, cfg->workers, shard, need);
    return 0;
}

/* Text: a readable file of bytes.  Markov: successors within V.  Either:
 * the model's vocabulary holds the data's. */
static int check_train_data(ctx *c, const cJSON *root, const scn_config *cfg,
                            scn_train *tr) {
    static const char *const markov_only[] = {"successors", "skew", NULL};
    static const char *const text_only[] = {"path", "eval_fraction", NULL};
    train_config *t = &tr->train;
    size_t size = 0;
    const cJSON *data = tget(root, "data", NULL);
    const cJSON *dv = get(data, "vocab"), *mv = tget(root, "model", "vocab");
    const cJSON *model = tget(root, "model", NULL);
    if (t->data.kind == DATA_TEXT) {
        const cJSON *path = get(data, "path");
        if (reject_keys(c, root, markov_only, "text", "markov")) return -1;
        if (dv && t->data.vocab != 256)
            return fail(c, dv, 0, "train.data.vocab",
                        "%d is not the 256 "
                        "byte values of text data (expected 256, or no "
                        "vocab)",
                        t->data.vocab);
        if (!path)
            return fail(c, data, 0, "train.data.path",
                        "missing (expected "
                        "a text file with kind text)");
        if (scn__resolve_path(c, path, "train.data.path",
                              tr->train_data_path) ||
            open_text_file(c, path, tr, &size))
            return -1;
        t->data.vocab = 256;
    } else {
        if (reject_keys(c, root, text_only, "markov", "text")) return -1;
        if (!dv) t->data.vocab = t->nn.vocab;
        if (t->data.successors > t->data.vocab) /* V: dv, else mv's */
            return fail_either(c, get(data, "successors"),
                               "train.data.successors", dv ? dv : mv,
                               dv ? "train.data.vocab" : "train.model.vocab",
                               data ? data : tget(root, NULL, NULL),
                               "train.data.successors",
                               "successors = %d "
                               "exceed the vocabulary V = %d (expected "
                               "successors <= V)",
                               t->data.successors, t->data.vocab);
    }
    if (t->data.vocab > t->nn.vocab)
        return fail_either(c, mv, "train.model.vocab", dv, "train.data.vocab",
                           model ? model : tget(root, NULL, NULL),
                           "train.model.vocab",
                           "the model's vocab = %d is "
                           "smaller than the data's %d token values "
                           "(expected train.model.vocab >= %d)",
                           t->nn.vocab, t->data.vocab, t->data.vocab);
    if (t->data.kind == DATA_TEXT)
        return check_text_size(c, get(data, "path"), cfg, tr, size);
    return 0;
}

/* heads divide d, seq fits ctx, the batch fits an int.  With the ranges
 * of the tables, these are every condition of nn_check (models/nn.h),
 * which train_new tests again:
 *   kind transformer or mlp      E_NN_KIND
 *   vocab in 2..2^24             train.model.vocab's range
 *   d in 1..2^24, 3 d <= 2^24    train.model.d's range, 1..2^16
 *   layers in 1..NN_MAX_LAYERS   train.model.layers's range
 *   mlp_ratio in 0..64,          train.model.mlp_ratio's range, 1..64;
 *     mlp_ratio * d <= 2^24        64 * 2^16 = 2^22
 *   heads >= 1 dividing d        train.model.heads's range; below
 *   ctx in 1..2^24               train.model.ctx's range, 1..2^20
 *   batch, seq >= 1              train.batch's and train.seq's ranges
 *   seq <= ctx (transformer)     below
 *   batch * seq <= INT_MAX / 4   below
 * so none of its messages ("train.model: nn: ...") can be reached. */
static int check_train_model(ctx *c, const cJSON *root, const scn_train *trn) {
    const train_config *t = &trn->train;
    const nn_config *m = &t->nn;
    const cJSON *tr = tget(root, NULL, NULL),
                *model = tget(root, "model", NULL);
    const cJSON *seq = get(tr, "seq"), *batch = get(tr, "batch");
    if (m->kind == NN_TRANSFORMER && m->d % m->heads)
        return fail_either(c, get(model, "heads"), "train.model.heads",
                           get(model, "d"), "train.model.d", model,
                           "train.model.heads",
                           "d = %d is not a multiple "
                           "of heads = %d (expected heads dividing d)",
                           m->d, m->heads);
    if (m->kind == NN_TRANSFORMER && t->seq > m->ctx)
        return fail_either(c, seq, "train.seq", get(model, "ctx"),
                           "train.model.ctx", tr, "train.seq",
                           "seq = %d is "
                           "longer than ctx = %d (expected seq <= "
                           "train.model.ctx for the transformer)",
                           t->seq, m->ctx);
    if ((long long)t->batch * t->seq > INT_MAX / 4)
        return fail_either(c, seq, "train.seq", batch, "train.batch", tr,
                           "train.seq",
                           "batch * seq = %lld tokens are too "
                           "many (expected at most %d)",
                           (long long)t->batch * t->seq, INT_MAX / 4);
    return 0;
}

/* lr_min <= lr.  With the ranges of the tables, this is every condition
 * of optim_check (models/optim.h), which train_new tests again:
 *   kind adamw or sgd            E_OPTIM
 *   lr finite >= 0               train.inner.lr's range, [0, 1e6]
 *   lr_min in 0..lr              train.inner.lr_min's range; below
 *   warmup, total >= 0           their ranges, 0..1e12
 *   cosine 0 or 1                a boolean
 *   beta1, beta2 in [0, 1)       their ranges
 *   eps finite > 0               train.inner.eps's range, (0, 1]
 *   weight_decay finite >= 0     its range, [0, 1e6]
 *   momentum in [0, 1)           train.inner.momentum's range
 *   clip finite >= 0             its range, [0, 1e30]
 * so none of its messages ("train.inner: optim: ...") can be reached. */
static int check_train_inner(ctx *c, const cJSON *root, const scn_train *tr) {
    const optim_config *o = &tr->train.inner;
    const cJSON *in = tget(root, "inner", NULL);
    char a[MSG_NUM_MAX], b[MSG_NUM_MAX];
    if (o->lr_min > o->lr)
        return fail_either(c, get(in, "lr_min"), "train.inner.lr_min",
                           get(in, "lr"), "train.inner.lr", in,
                           "train.inner.lr_min",
                           "lr_min = %s exceeds lr = "
                           "%s (expected lr_min <= lr)",
                           msg_number(o->lr_min, a), msg_number(o->lr, b));
    return 0;
}

/* Replicas within TRAIN_MAX_REPLICAS, FedPart not with DP, fragments
 * within the trained model's blocks (units with "own"). */
static int check_train_method(ctx *c, const cJSON *root, const scn_config *cfg,
                              const scn_train *trn) {
    const train_config *t = &trn->train;
    const cJSON *m = get(root, "method"), *tr = tget(root, NULL, NULL);
    const cJSON *layers = tget(root, "model", "layers");
    int own = t->map == TRAIN_MAP_OWN;
    int n = t->nn.layers + (own ? 2 : 0);
    if (cfg->workers > TRAIN_MAX_REPLICAS)
        return fail(c, get(get(root, "workers"), "count"), 0, "workers.count",
                    "%d replicas are too many to train (expected at most %d "
                    "with a train section)",
                    cfg->workers, TRAIN_MAX_REPLICAS);
    if (t->fedpart && !sched_has_outer(&cfg->sched))
        return fail_either(c, get(tr, "fedpart"), "train.fedpart",
                           get(m, "name"), "method.name", tr, "train.fedpart",
                           "FedPart needs method diloco or streaming (got "
                           "%s)",
                           sched_method_name(cfg->sched.method));
    if (cfg->sched.method == SCHED_SPARTA && cfg->sched.P > n)
        return fail_either(c, get(m, "tau"), "method.tau", layers,
                           "train.model.layers", m, "method.tau",
                           "tau = %d needs %d slots, more than the trained "
                           "model's %d %s (expected method.tau <= %d with "
                           "method sparta)",
                           cfg->sched.tau, cfg->sched.P, n,
                           own ? "units" : "blocks", n - 1);
    if (cfg->sched.layout == SCHED_SLICED && cfg->sched.P > 1)
        return fail(c, get(m, "layout"), 0, "method.layout",
                    "sliced is "
                    "timing only (expected sequential or strided with a "
                    "train section)");
    if (cfg->sched.P > n)
        return fail_either(c, get(m, "fragments"), "method.fragments", layers,
                           "train.model.layers", m, "method.fragments",
                           "P = %d fragments exceed the trained model's %d "
                           "%s (expected method.fragments <= %s = %d)",
                           cfg->sched.P, n, own ? "units" : "blocks",
                           own ? "train.model.layers + 2 with units own"
                               : "train.model.layers",
                           n);
    return 0;
}

void scn_train_defaults(scn_train *t) {
    memset(t, 0, sizeof *t); /* no section, no path; padding zero too */
    t->train = (train_config)TRAIN_CONFIG_DEFAULT;
    t->train_eval = SCN_EVAL_OUTER;
    t->target_loss = NAN;
}

/* The train section, when present: checked, then completed with the
 * scenario's shared keys (see scenario_train.h). */
int scn__check_train(ctx *c, const cJSON *root, const scn_config *cfg,
                     scn_train *tr) {
    if (!tget(root, NULL, NULL)) return 0;
    if (check_train_model(c, root, tr) || check_train_data(c, root, cfg, tr) ||
        check_train_inner(c, root, tr) || check_train_method(c, root, cfg, tr))
        return -1;
    train_config *t = &tr->train;
    t->replicas = cfg->workers;
    t->steps = cfg->steps;
    t->seed = cfg->seed;
    t->data.seed = cfg->seed;
    t->data.path = NULL;
    t->sched = cfg->sched;
    for (int i = 0; i < cfg->workers; i++) t->tau_extra[i] = cfg->tau_extra[i];
    t->sched.layers = t->nn.layers + (t->map == TRAIN_MAP_OWN ? 2 : 0);
    t->codec = cfg->codec;
    t->dp_codec = cfg->dp_codec;
    tr->train_eval |= SCN_EVAL_OUTER;
    tr->has_train = 1;
    return 0;
}
