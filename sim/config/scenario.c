/*
 * scenario.c -- a scenario file (JSON) turned into a validated scn_config.
 *
 * The work is done in passes over one document, one file each (the
 * files call downwards only: this one calls all of them; scenario_doc.c,
 * the lowest, none of them):
 *
 *   1. parse    (scenario_doc.c) json_parse (sim/config/json.h) checks the
 *               syntax strictly, with exact positions, builds the cJSON
 *               tree and gives the offsets of every node's key and value,
 *               which are filed in the ctx's position table.
 *   2. merge    (scenario_merge.c; a variant) deep-merges the named variant
 *               of the "variants" section into the root: its nodes move,
 *               keeping their filed offsets, and are marked, so errors
 *               about them point into the variant and read
 *               variants.NAME.json.path.
 *   3. override (scenario_set.c) applies the "a.b.c=value" overrides to
 *               the tree; the nodes they create are filed as "made by
 *               override k", so errors about them name the override
 *               instead of a line.
 *   4. validate walks the tables of scenario_schema.c (one per JSON
 *               object: key, type, range, where the value goes in
 *               scn_config) through the generic loader of
 *               scenario_fields.c, then checks what spans several keys
 *               (scenario_check.c): FLOP-derived step time, split, the
 *               schedule (sched_normalize), the run's length in
 *               nanoseconds, the fault trace (parsed here, so a bad trace
 *               is an input error with its line), and the train section
 *               (scenario_train.c), which goes to its own struct
 *               (scenario_train.h) next to the config.  The shapes of the variants and sweep
 *               sections are scenario_sections.c's.
 *
 * Passes 1 to 3 run once per scn_doc (scn_doc_open); scn_doc_load copies
 * the resolved tree with its positions, applies its own overrides and
 * validates, so a sweep parses its file once.
 *
 * Every error stops the load and leaves one line in err:
 *     file:line:col: json.path: what is wrong (expected ...)
 *     --set a.b.c=value: json.path: what is wrong (expected ...)
 *     --vary a.b.c=SPEC: json.path: what is wrong (expected ...)
 *     file:line:col: sweep.a.b.c[i]: what is wrong (expected ...)
 *     file:line:col: syntax error (what is wrong; expected ...)
 *     file: cannot open: reason
 * Lines and columns count from 1; a column counts characters (UTF-8 code
 * points, a tab is one).  The position is that of the offending value; of
 * the key for an unknown or duplicate key; of the enclosing object's "{"
 * for a missing key.  An override a sweep drew from the file's sweep
 * section (scn_doc_load_from) is reported at that item of the section (at
 * its key for an unknown key), one drawn from a --vary as that --vary.
 * An unknown key within two edits of exactly one known key names it
 * ("did you mean a.b?").  On error *out is left untouched: the config is
 * built in a local copy and copied out only on success.
 *
 * The "variants" and "sweep" sections are checked for shape only (object
 * of objects with valid names; object of key: spec string or array of
 * scalars), by every load and by scn_meta_load.
 *
 * No global state: everything lives in a ctx on the caller's stack or in
 * a read-only scn_doc; cJSON's parse global is json.c's, behind its lock.
 */
#include "sim/config/scenario.h"
#include "sim/config/scenario_int.h"
#include "sim/config/scenario_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/base/rng.h"

/* ---------------------------------------------------------------------
 * The whole load
 */

void scn_defaults(scn_config *c) {
    memset(c, 0, sizeof *c);
    c->params = 1e9;
    c->layers = 24;
    c->step_time_s = 0.1;
    c->split[0] = c->split[1] = c->split[2] = 1.0 / 3;
    c->bwd_order = SCN_ACT_FIRST;
    c->hidden = 0;
    c->host_gbps = 256; /* one PCIe 4.0 x16 link, 32 GB/s */

    c->workers = 2;
    for (int i = 0; i < SCN_MAX_WORKERS; i++) {
        c->speed[i] = 1;
        c->up_gbps[i] = c->down_gbps[i] = 10;
        c->latency_ms[i] = 0;
        c->site_replicas[i] = 1;
        c->site_intra_gbps[i] = 400; /* workers.sites[i].intra_gbps */
        c->site_intra_latency_us[i] = 0;
    }
    c->straggler_prob = 0;
    c->straggler_slowdown = 2;
    c->collective = COLL_RING;
    c->reduce_order = SCN_FIFO;
    c->gbit = SCN_GBIT_SI;
    c->tcp_window_mb = 0;
    c->transport = SCN_TRANSPORT_IDEAL;
    c->tcp_init_window_kb = 14.48; /* Linux: 10 segments of 1448 bytes */
    c->tcp_slow_start_after_idle = 1;
    c->efficiency = 1;
    c->collective_overhead_ms = 0;
    c->startup_ms = 0;
    c->ack_bytes_per_kb = 0;
    c->queue_ms = 0;
    for (int i = 0; i < SCN_MAX_WORKERS; i++) c->ring_order[i] = i;
    c->bw_trace_path[0] = 0;
    c->bw_diurnal = 0;
    c->diurnal = (bwt_diurnal){.period_h = 24, .phase_h = 0, .steps = 24};

    c->sched = (sched_spec){.method = SCHED_STREAMING,
                            .layers = 24,
                            .H = 100,
                            .P = 1,
                            .tau = 0,
                            .alpha = 0.5,
                            .subset = SCHED_SUBSET_DEFAULT,
                            .layout = SCHED_STRIDED,
                            .order = SCHED_ASCENDING};
    c->codec = CODEC_SPEC(CODEC_BF16, 0);
    c->dp_codec = CODEC_SPEC(CODEC_BF16, 0);
    c->late = SCN_LATE_WAIT;
    c->sync_timeout_s = 0;
    c->dp_bucket_mb = SCN_BUCKET_MB;
    c->bucket_mb = SCN_BUCKET_MB;

    c->faults = (faults_spec){.mtbf_s = 0,
                              .mttr_s = 3600,
                              .dist = FAULTS_EXPONENTIAL,
                              .weibull_shape = 1.5,
                              .trace = NULL};
    c->trace_path[0] = 0;
    c->checkpoint_steps = 100;
    c->recovery_bytes_per_param = 4;
    c->checkpoint_every_steps = 0;
    c->checkpoint_s = 0;
    c->restart_s = 0;
    c->member_trace_path[0] = 0;
    c->quorum = 1;

    c->steps = 1000;
    c->seed = 1;
    c->measure = SCN_MEASURE_RUN;
}

/* The digest of the resolved document: its compact print without the
 * "variants" and "sweep" sections (scn_digest_bytes), mixed with
 * SCN_MODEL_REVISION (the same text means another run when a default
 * changed).  Returns 0, or -1 when out of memory. */
static int digest_doc(const cJSON *root, uint64_t *out) {
    cJSON *copy = cJSON_Duplicate(root, 1);
    if (!copy) return -1;
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "variants");
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "sweep");
    char *text = cJSON_PrintUnformatted(copy);
    cJSON_Delete(copy);
    if (!text) return -1;
    *out = rng_mix(scn_digest_bytes(text, strlen(text)) ^ SCN_MODEL_REVISION);
    free(text);
    return 0;
}

uint64_t scn_digest_bytes(const char *s, size_t n) {
    uint64_t h = 0;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        for (size_t j = i; j < i + 8 && j < n; j++)
            w = w << 8 | (unsigned char)s[j];
        h = rng_mix(h ^ w);
    }
    return rng_mix(h ^ n);
}

/* Pass 4 over the resolved tree, the train section included: *out (and
 * *train, when not NULL) on success only. */
static int validate(ctx *c, const cJSON *root, scn_config *out,
                    scn_train *train) {
    scn__out o;
    scn_defaults(&o.cfg);
    scn_train_defaults(&o.train);
    if (scn__load_root(c, root, &o) || scn__check_config(c, root, &o.cfg) ||
        scn__check_train(c, root, &o.cfg, &o.train))
        return c->rc ? c->rc : MSG_EINPUT;
    if (digest_doc(root, &o.cfg.digest)) return oom(c);
    *out = o.cfg;
    if (train) *train = o.train;
    return 0;
}

/* ---------------------------------------------------------------------
 * Documents: parsed once, loaded many times
 */
struct scn_doc {
    char *name; /* the file's name in messages */
    char *buf;  /* its bytes */
    size_t len;
    size_t dirlen;    /* name[0..dirlen) is its directory; 0: cwd */
    const char *text; /* buf past a BOM */
    char *variant;    /* the merged variant, or NULL */
    char **sets;      /* copies of the overrides */
    int nset;
    cJSON *root; /* the resolved tree */
    pos *pos;    /* its positions */
    size_t npos;
    json_map index;
};

void scn_doc_free(scn_doc *d) {
    if (!d) return;
    free(d->name);
    free(d->buf);
    free(d->variant);
    for (int i = 0; i < d->nset; i++) free(d->sets[i]);
    free(d->sets);
    cJSON_Delete(d->root);
    free(d->pos);
    json_map_free(&d->index);
    free(d);
}

/* A doc holding a copy of name and the bytes buf (taken). */
static scn_doc *doc_new(const char *name, char *buf, size_t len,
                        int relative_to_file, char *err, size_t errlen) {
    scn_doc *d = calloc(1, sizeof *d);
    if (d) d->name = strdup(name);
    if (!d || !d->name) {
        free(buf);
        scn_doc_free(d);
        msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", name);
        return NULL;
    }
    d->buf = buf, d->len = len;
    const char *slash = strrchr(name, '/');
    d->dirlen = relative_to_file && slash ? (size_t)(slash - name) + 1 : 0;
    return d;
}

static ctx doc_ctx(const scn_doc *d, char *err, size_t errlen) {
    return (ctx){.name = d->name,
                 .text = d->text,
                 .dir = d->name,
                 .dirlen = d->dirlen,
                 .variant = d->variant,
                 .err = err,
                 .errlen = errlen};
}

/* Passes 1 to 3 into d: parse, merge the variant, apply the overrides. */
static int doc_resolve(scn_doc *d, const char *variant, const char *const *sets,
                       int nset, char *err, size_t errlen) {
    if (variant && !(d->variant = strdup(variant)))
        return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", d->name);
    d->sets = calloc((size_t)(nset > 0 ? nset : 1), sizeof *d->sets);
    if (!d->sets)
        return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", d->name);
    for (; d->nset < nset; d->nset++)
        if (!(d->sets[d->nset] = strdup(sets[d->nset])))
            return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory",
                           d->name);
    ctx c = doc_ctx(d, err, errlen);
    c.sets = (const char *const *)d->sets;
    c.variant = NULL; /* set by merge_variant once merged */
    cJSON *root = NULL;
    int rc = scn__parse_doc(&c, d->buf, d->len, &root);
    d->text = c.text;
    if (!rc && d->variant) rc = scn__merge_variant(&c, root, d->variant);
    for (int i = 0; !rc && i < nset; i++) rc = scn__apply_set(&c, root, i);
    if (rc) {
        cJSON_Delete(root);
        scn__free_positions(&c);
        return c.rc ? c.rc : rc;
    }
    d->root = root;
    d->pos = c.pos, d->npos = c.npos, d->index = c.index;
    return 0;
}

/* Opens path ("-": standard input) into *out: 0 or the code. */
int scn_doc_open(const char *path, const char *variant, const char *const *sets,
                 int nset, scn_doc **out, char *err, size_t errlen) {
    int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    char *buf;
    size_t len;
    *out = NULL;
    int rc = scn__read_input(path, name, "scenario", SCN_MAX_BYTES, &buf, &len,
                             err, errlen);
    if (rc) return rc;
    scn_doc *d = doc_new(name, buf, len, !is_stdin, err, errlen);
    if (!d) return MSG_ENOMEM;
    if ((rc = doc_resolve(d, variant, sets, nset, err, errlen))) {
        scn_doc_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

/* The same from a string: relative paths from the working directory. */
static int doc_open_string(const char *text, const char *name,
                           const char *const *sets, int nset, scn_doc **out,
                           char *err, size_t errlen) {
    size_t len = strlen(text);
    *out = NULL;
    if (len > SCN_MAX_BYTES)
        return scn__too_big(name, "scenario", SCN_MAX_BYTES, err, errlen);
    char *buf = malloc(len + 1);
    if (!buf)
        return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", name);
    memcpy(buf, text, len + 1);
    scn_doc *d = doc_new(name, buf, len, 0, err, errlen);
    if (!d) return MSG_ENOMEM;
    int rc = doc_resolve(d, NULL, sets, nset, err, errlen);
    if (rc) {
        scn_doc_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

/* A copy of node n of d (and its subtree), filed in c as n is in d. */
static cJSON *copy_node(ctx *c, const scn_doc *d, const cJSON *n) {
    cJSON *m = cJSON_Duplicate(n, 0);
    if (!m) return NULL;
    size_t k;
    const pos *p = json_map_get(&d->index, n, &k) ? &d->pos[k] : NULL;
    if (p) {
        if (record(c, m, p->key, p->val, p->lit, p->set)) {
            cJSON_Delete(m);
            return NULL;
        }
        c->pos[c->npos - 1].in_variant = p->in_variant;
    }
    for (const cJSON *ch = n->child; ch; ch = ch->next) {
        cJSON *cc = copy_node(c, d, ch);
        if (!cc) {
            cJSON_Delete(m);
            return NULL;
        }
        cJSON_AddItemToArray(m, cc); /* keeps cc's key in an object */
    }
    return m;
}

int scn_doc_load(const scn_doc *d, const char *const *more, int nmore,
                 scn_config *out, char *err, size_t errlen) {
    return scn_doc_load_from(d, more, NULL, nmore, out, err, errlen);
}

/* scn_doc_load_from that also fills *train when not NULL. */
static int doc_load(const scn_doc *d, const char *const *more,
                    const scn_origin *from, int nmore, scn_config *out,
                    scn_train *train, char *err, size_t errlen) {
    int n = d->nset + (nmore > 0 ? nmore : 0);
    const char **sets = malloc((size_t)(n > 0 ? n : 1) * sizeof *sets);
    if (!sets)
        return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", d->name);
    for (int i = 0; i < d->nset; i++) sets[i] = d->sets[i];
    for (int i = d->nset; i < n; i++) sets[i] = more[i - d->nset];
    ctx c = doc_ctx(d, err, errlen);
    c.sets = sets;
    c.from = from;
    c.from_base = d->nset;
    cJSON *root = copy_node(&c, d, d->root);
    c.root = root;
    int rc = root ? 0 : oom(&c);
    for (int i = d->nset; !rc && i < n; i++) rc = scn__apply_set(&c, root, i);
    if (!rc) rc = validate(&c, root, out, train);
    cJSON_Delete(root);
    scn__free_positions(&c);
    free(sets);
    return rc ? (c.rc ? c.rc : rc) : 0;
}

int scn_doc_load_from(const scn_doc *d, const char *const *more,
                      const scn_origin *from, int nmore, scn_config *out,
                      char *err, size_t errlen) {
    return doc_load(d, more, from, nmore, out, NULL, err, errlen);
}

int scn_doc_load_train_from(const scn_doc *d, const char *const *more,
                            const scn_origin *from, int nmore, scn_config *out,
                            scn_train *train, char *err, size_t errlen) {
    return doc_load(d, more, from, nmore, out, train, err, errlen);
}

int scn_load_string_train(const char *text, const char *name,
                          const char *const *sets, int nset, scn_config *out,
                          scn_train *train, char *err, size_t errlen) {
    scn_doc *d;
    int rc = doc_open_string(text, name ? name : "<string>", sets, nset, &d,
                             err, errlen);
    if (rc) return rc;
    rc = doc_load(d, NULL, NULL, 0, out, train, err, errlen);
    scn_doc_free(d);
    return rc;
}

int scn_load_string(const char *text, const char *name, const char *const *sets,
                    int nset, scn_config *out, char *err, size_t errlen) {
    return scn_load_string_train(text, name, sets, nset, out, NULL, err,
                                 errlen);
}

int scn_load_train(const char *path, const char *variant,
                   const char *const *sets, int nset, scn_config *out,
                   scn_train *train, char *err, size_t errlen) {
    scn_doc *d;
    int rc = scn_doc_open(path, variant, sets, nset, &d, err, errlen);
    if (rc) return rc;
    rc = doc_load(d, NULL, NULL, 0, out, train, err, errlen);
    scn_doc_free(d);
    return rc;
}

int scn_load_variant(const char *path, const char *variant,
                     const char *const *sets, int nset, scn_config *out,
                     char *err, size_t errlen) {
    return scn_load_train(path, variant, sets, nset, out, NULL, err, errlen);
}

int scn_load(const char *path, const char *const *sets, int nset,
             scn_config *out, char *err, size_t errlen) {
    return scn_load_variant(path, NULL, sets, nset, out, err, errlen);
}

/* The sections of the text in d into meta. */
static int meta_of(const char *name, char *buf, size_t len, scn_meta *meta,
                   char *err, size_t errlen) {
    ctx c = {.name = name, .err = err, .errlen = errlen};
    scn_meta *m = calloc(1, sizeof *m);
    cJSON *root = NULL;
    int rc = MSG_ENOMEM;
    if (!m) oom(&c);
    else if (!(rc = scn__parse_doc(&c, buf, len, &root))) {
        const cJSON *vs = get(root, "variants"), *sw = get(root, "sweep");
        rc = (vs && scn__check_variants(&c, vs, m)) ||
                     (sw && scn__check_sweep(&c, sw, m))
                 ? c.rc
                 : 0;
    }
    if (!rc) *meta = *m;
    cJSON_Delete(root);
    scn__free_positions(&c);
    free(m);
    return rc;
}

int scn_meta_load(const char *path, scn_meta *meta, char *err, size_t errlen) {
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    char *buf;
    size_t len;
    int rc = scn__read_input(path, name, "scenario", SCN_MAX_BYTES, &buf, &len,
                             err, errlen);
    if (rc) return rc;
    rc = meta_of(name, buf, len, meta, err, errlen);
    free(buf);
    return rc;
}

int scn_doc_meta(const scn_doc *d, scn_meta *meta, char *err, size_t errlen) {
    return meta_of(d->name, d->buf, d->len, meta, err, errlen);
}

/* A codec as a label says it: by its bits where one format of that width
 * is the usual one, by its name otherwise. */
static const char *codec_label(codec_kind k) {
    switch (k) {
    case CODEC_FP8_E4M3: return "8-bit";
    case CODEC_E3M0: return "4-bit";
    case CODEC_E2M1: return "4-bit E2M1";
    case CODEC_UINT8: return "8-bit integer";
    default: return codec_name(k);
    }
}

int scn_method_label(const scn_config *c, char *buf, size_t n) {
    const sched_spec *s = &c->sched;
    if (s->method == SCHED_DP)
        return c->dp_codec.kind == CODEC_FP32
                   ? snprintf(buf, n, "Data-parallel")
                   : snprintf(buf, n, "Data-parallel, %s gradients",
                              codec_label(c->dp_codec.kind));
    char ov[48] = "";
    if (s->method == SCHED_SPARTA) {
        char b[MSG_NUM_MAX];
        return snprintf(buf, n, "SPARTA, p %s, overlap %d, %s",
                        msg_number(s->subset, b), s->tau,
                        codec_label(c->codec.kind));
    }
    if (s->overlap == SCHED_OUTER) snprintf(ov, sizeof ov, ", outer overlap");
    else if (s->overlap == SCHED_EAGER)
        snprintf(ov, sizeof ov, ", eager overlap");
    else {
        int most = s->tau; /* per-worker tau: the least and the largest */
        for (int i = 0; i < c->workers; i++)
            if (s->tau + c->tau_extra[i] > most)
                most = s->tau + c->tau_extra[i];
        if (most > s->tau)
            snprintf(ov, sizeof ov, ", overlap %d to %d", s->tau, most);
        else if (s->tau > 0) snprintf(ov, sizeof ov, ", overlap %d", s->tau);
    }
    char cd[32] = "";
    if (c->codec.kind != CODEC_FP32)
        snprintf(cd, sizeof cd, ", %s", codec_label(c->codec.kind));
    return snprintf(buf, n, "%s, H %d%s%s",
                    s->method == SCHED_DILOCO ? "DiLoCo" : "Streaming DiLoCo",
                    s->H, ov, cd);
}
