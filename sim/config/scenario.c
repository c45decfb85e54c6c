/*
 * scenario.c -- a scenario file (JSON) turned into a validated scn_config.
 *
 * The work is done in passes over one document:
 *
 *   1. parse    json_parse (sim/json.h) checks the syntax strictly, with
 *               exact positions, builds the cJSON tree and gives the
 *               offsets of every node's key and value, which are filed in
 *               the ctx's position table.
 *   2. merge    (a variant) deep-merges the named variant of the
 *               "variants" section into the root: its nodes move, keeping
 *               their filed offsets, and are marked, so errors about them
 *               point into the variant and read variants.NAME.json.path.
 *   3. override applies the "a.b.c=value" overrides to the tree; the nodes
 *               they create are filed as "made by override k", so errors
 *               about them name the override instead of a line.
 *   4. validate walks the tables below (one per JSON object: key, type,
 *               range, where the value goes in scn_config), then checks
 *               what spans several keys: FLOP-derived step time, split,
 *               the schedule (sched_normalize), the run's length in
 *               nanoseconds, the fault trace (parsed here, so a bad trace
 *               is an input error with its line), and the train section
 *               (scenario_train.c).
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

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/base/msg.h"
#include "sim/base/rng.h"

#define NO_POS JSON_NO_POS
#define PATH_LEN SCN__PATH_LEN
#define EXACT_INT 9007199254740992.0 /* 2^53: doubles are exact up to it */

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           is_digit(c) || c == '_';
}

/* ---------------------------------------------------------------------
 * Messages
 */

/* Messages are one line (msg_vset makes control characters from keys,
 * values and names '?'). */
static int set_err_code(ctx *c, int rc, const char *fmt, va_list ap) {
    msg_vset(c->err, c->errlen, rc, fmt, ap);
    if (!c->rc) c->rc = rc;
    return c->rc;
}

/* An input error (MSG_EINPUT): the message, made one line. */
static int set_err(ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int set_err(ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = set_err_code(c, MSG_EINPUT, fmt, ap);
    va_end(ap);
    return rc;
}

static int oom(ctx *c) {
    c->rc = MSG_ENOMEM;
    msg_set(c->err, c->errlen, MSG_ENOMEM, "%s: out of memory", c->name);
    return MSG_ENOMEM;
}

/* ---------------------------------------------------------------------
 * The position table
 */

static int record(ctx *c, const cJSON *node, size_t key, size_t val,
                  const char *lit, int set) {
    if (c->npos == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        pos *p = realloc(c->pos, cap * sizeof *p);
        if (!p) return -1;
        c->pos = p, c->cap = cap;
    }
    if (json_map_put(&c->index, node, c->npos)) return -1;
    c->pos[c->npos++] = (pos){node, key, val, lit, set, 0};
    return 0;
}

/* The newest entry of node: a node freed by an override may share its
 * address with a node made later, which is always filed after it. */
static pos *lookup(const ctx *c, const cJSON *node) {
    size_t k;
    return json_map_get(&c->index, node, &k) ? &c->pos[k] : NULL;
}

static void free_positions(ctx *c) {
    free(c->pos);
    json_map_free(&c->index);
    c->pos = NULL;
    c->npos = c->cap = 0;
}

/* Files the nodes of a parsed document: in the scenario's text (set -1,
 * literals at text + offset) or in override k's value. */
static int file_doc(ctx *c, const json_doc *d, const char *text, int set) {
    for (size_t i = 0; i < d->npos; i++) {
        const json_pos *p = &d->pos[i];
        size_t key = set < 0 ? p->key : NO_POS, val = set < 0 ? p->val : NO_POS;
        if (record(c, p->node, key, val, text + p->val, set)) return -1;
    }
    return 0;
}

/* out = base + sep + part, cut at PATH_LEN - 1 bytes (a cut path only
 * shortens a message); out must not overlap the others. */
static void join(char out[PATH_LEN], const char *base, const char *sep,
                 const char *part) {
    const char *parts[3] = {base, sep, part};
    size_t n = 0;
    for (int k = 0; k < 3; k++)
        for (const char *q = parts[k]; *q && n + 1 < PATH_LEN; q++)
            out[n++] = *q;
    out[n] = 0;
}

void scn__join_key(char out[PATH_LEN], const char *base, const char *key) {
    join(out, base, *base ? "." : "", key);
}

static void join_index(char out[PATH_LEN], const char *base, int i) {
    char num[16];
    snprintf(num, sizeof num, "[%d]", i);
    join(out, base, "", num);
}

/* Where in the file's sweep section override k was drawn from: the
 * offset of its item (the member's key when at_key, or when the member is
 * no array) and its path in path[PATH_LEN]; NO_POS when k is no such
 * override. */
static size_t sweep_origin(const ctx *c, int k, int at_key, char *path) {
    if (!c->from || k < c->from_base || c->from[k - c->from_base].vary)
        return NO_POS;
    const scn_origin *o = &c->from[k - c->from_base];
    const cJSON *m = o->sweep >= 0 ? get(c->root, "sweep") : NULL;
    m = m ? cJSON_GetArrayItem(m, o->sweep) : NULL;
    if (!m || !m->string) return NO_POS;
    char key[PATH_LEN];
    join_key(key, "sweep", m->string);
    const pos *p = lookup(c, m);
    if (at_key || !cJSON_IsArray(m) || o->item < 0) {
        memcpy(path, key, PATH_LEN);
        return !p ? NO_POS : at_key && p->key != NO_POS ? p->key : p->val;
    }
    join_index(path, key, o->item);
    p = lookup(c, cJSON_GetArrayItem(m, o->item));
    return p ? p->val : NO_POS;
}

/* "PREFIX: PATH: msg" about override k (at its key when at_key), PREFIX
 * naming where it comes from: "--set KEY=VALUE", "--vary KEY=SPEC", or
 * "file:line:col: sweep.KEY[i]" (then PATH only when it is not KEY).
 * path NULL: none. */
static int override_fail(ctx *c, int k, int at_key, const char *path,
                         const char *msg) {
    const char *s = c->sets[k];
    char sp[PATH_LEN];
    size_t off = sweep_origin(c, k, at_key, sp);
    if (off != NO_POS) {
        int line, col;
        size_t klen = strcspn(s, "=");
        json_line_col(c->text, off, &line, &col);
        if (path && !(strlen(path) == klen && !strncmp(path, s, klen)))
            return set_err(c, "%s:%d:%d: %s: %s: %s", c->name, line, col, sp,
                           path, msg);
        return set_err(c, "%s:%d:%d: %s: %s", c->name, line, col, sp, msg);
    }
    const char *opt = "--set";
    if (c->from && k >= c->from_base && c->from[k - c->from_base].vary) {
        opt = "--vary";
        s = c->from[k - c->from_base].vary;
    }
    if (path) return set_err(c, "%s %s: %s: %s", opt, s, path, msg);
    return set_err(c, "%s %s: %s", opt, s, msg);
}

int scn__vfail(ctx *c, const cJSON *at, int at_key, const char *path,
               const char *fmt, va_list ap) {
    char msg[SCN_PATH_MAX + 512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (!*path) path = "(root)";
    const pos *p = lookup(c, at);
    char in_file[PATH_LEN], var[PATH_LEN];
    if (p && p->in_variant && c->variant) {
        join(var, "variants", ".", c->variant);
        join_key(in_file, var, path);
        path = in_file;
    }
    if (p && p->set >= 0) return override_fail(c, p->set, at_key, path, msg);
    if (!p) return set_err(c, "%s: %s: %s", c->name, path, msg);
    int line, col;
    json_line_col(c->text, at_key && p->key != NO_POS ? p->key : p->val,
                  &line, &col);
    return set_err(c, "%s:%d:%d: %s: %s", c->name, line, col, path, msg);
}

int scn__fail(ctx *c, const cJSON *at, int at_key, const char *path,
              const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(c, at, at_key, path, fmt, ap);
    va_end(ap);
    return rc;
}

int scn__is_later(const ctx *c, const cJSON *a, const cJSON *b) {
    const pos *pa = lookup(c, a), *pb = lookup(c, b);
    if (!pa || !pb) return 0;
    if (pa->set != pb->set) return pa->set > pb->set;
    if (pa->in_variant != pb->in_variant) return pa->in_variant;
    return pa->val > pb->val;
}

static const char *type_name(const cJSON *v) {
    if (cJSON_IsBool(v)) return "boolean";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsNumber(v)) return "number";
    if (cJSON_IsString(v)) return "string";
    if (cJSON_IsArray(v)) return "array";
    if (cJSON_IsObject(v)) return "object";
    return "raw";
}

const cJSON *scn__get(const cJSON *obj, const char *key) {
    return obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* ---------------------------------------------------------------------
 * The schema as tables
 */

/* The typed parsers behind a void * (the field's type is the enum's). */
static int p_codec(const char *s, void *o) { return codec_parse(s, o); }
static int p_method(const char *s, void *o) {
    return sched_parse_method(s, o);
}
static int p_layout(const char *s, void *o) {
    return sched_parse_layout(s, o);
}
static int p_order(const char *s, void *o) { return sched_parse_order(s, o); }
static int p_overlap(const char *s, void *o) {
    return sched_parse_overlap(s, o);
}
static int p_rule(const char *s, void *o) { return sched_parse_rule(s, o); }
static int p_coll(const char *s, void *o) { return coll_parse_algo(s, o); }
static int p_dist(const char *s, void *o) { return faults_parse_dist(s, o); }
static int p_bwd(const char *s, void *o) {
    static const char *const n[] = {"activations_first", "parameters_first"};
    int i = msg_parse_name(s, n, 2);
    if (i < 0) return -1;
    *(scn_bwd_order *)o = i == 0 ? SCN_ACT_FIRST : SCN_PARAM_FIRST;
    return 0;
}

static const enum_def E_CODEC = {NULL, p_codec};
static const enum_def E_METHOD = {"dp, diloco, streaming", p_method};
static const enum_def E_LAYOUT = {"sequential, strided, sliced", p_layout};
static const enum_def E_ORDER = {"ascending, rotated", p_order};
static const enum_def E_OVERLAP = {"inner, outer, eager", p_overlap};
static const enum_def E_RULE = {"paper, torchft", p_rule};
static const enum_def E_COLL = {"ring, all_to_all, star", p_coll};
static const enum_def E_DIST = {"exponential, weibull", p_dist};
static const enum_def E_BWD = {"activations_first, parameters_first", p_bwd};

int scn__parse_index(const char *s, void *o, const char *const *names,
                     int n) {
    int i = msg_parse_name(s, names, n);
    if (i < 0) return -1;
    *(int *)o = i;
    return 0;
}
static int p_reduce(const char *s, void *o) {
    static const char *const n[] = {"fifo", "forward_first"};
    return scn__parse_index(s, o, n, 2);
}
static int p_gbit(const char *s, void *o) {
    static const char *const n[] = {"si", "binary"};
    return scn__parse_index(s, o, n, 2);
}
int scn_late_continues(const scn_config *c) {
    return c->late == SCN_LATE_CONTINUE && c->sched.method != SCHED_DP;
}

static int p_late(const char *s, void *o) {
    static const char *const n[] = {"wait", "continue"};
    return scn__parse_index(s, o, n, 2);
}
static const enum_def E_REDUCE = {"fifo, forward_first", p_reduce};
static const enum_def E_LATE = {"wait, continue", p_late};
static const enum_def E_GBIT = {"si, binary", p_gbit};
static int p_transport(const char *s, void *o) {
    static const char *const n[] = {"ideal", "tcp"};
    return scn__parse_index(s, o, n, 2);
}
static const enum_def E_TRANSPORT = {"ideal, tcp", p_transport};
static int p_completion(const char *s, void *o) {
    static const char *const n[] = {"group", "member"};
    return scn__parse_index(s, o, n, 2);
}
static const enum_def E_COMPLETION = {"group, member", p_completion};
static int p_measure(const char *s, void *o) {
    static const char *const n[] = {"run", "steady"};
    return scn__parse_index(s, o, n, 2);
}
static const enum_def E_MEASURE = {"run, steady", p_measure};


static const field split_fields[] = {
    K_NUM("forward", split[0], IN(0, 1)),
    K_NUM("backward_activations", split[1], IN(0, 1)),
    K_NUM("backward_parameters", split[2], IN(0, 1)),
    K_END};

/* step_time_s versus the four FLOP keys, and split's sum: check_model. */
static const field model_fields[] = {
    K_NUM("params", params, OC(0, 1e15)),
    K_INT("layers", layers, 1, 100000),
    K_NUM("step_time_s", step_time_s, IN(1e-9, 1e6)),
    K_NUM("tokens_per_step", tokens_per_step, OC(0, 1e15)),
    K_NUM("chips", chips, OC(0, 1e9)),
    K_NUM("peak_tflops", peak_tflops, OC(0, 1e9)),
    K_NUM("mfu", mfu, OC(0, 1)),
    K_OBJ("split", split_fields),
    K_ENUM("backward_order", bwd_order, E_BWD),
    K_U64("hidden", hidden, 0, 1e15),
    K_NUM("host_gbps", host_gbps, IN(SCN_MIN_GBPS, SCN_MAX_GBPS)),
    K_END};

static const field stragglers_fields[] = {
    K_NUM("probability", straggler_prob, IN(0, 1)),
    K_NUM("slowdown", straggler_slowdown, IN(1, 1000)),
    K_END};

/* count before speed: per-worker arrays are checked against it. */
static const field workers_fields[] = {
    K_INT("count", workers, 1, SCN_MAX_WORKERS),
    K_WORKERS("speed", speed, IN(0.001, 1000)),
    K_OBJ("stragglers", stragglers_fields),
    K_END};

/* bandwidth_gbps before up_gbps and down_gbps, which override it. */
static const field network_fields[] = {
    {.key = "bandwidth_gbps", .type = F_WORKERS, .off = AT(up_gbps),
     .off2 = AT(down_gbps), .r = IN(SCN_MIN_GBPS, SCN_MAX_GBPS), .inf_ok = 1},
    {.key = "up_gbps", .type = F_WORKERS, .off = AT(up_gbps),
     .r = IN(SCN_MIN_GBPS, SCN_MAX_GBPS), .inf_ok = 1},
    {.key = "down_gbps", .type = F_WORKERS, .off = AT(down_gbps),
     .r = IN(SCN_MIN_GBPS, SCN_MAX_GBPS), .inf_ok = 1},
    K_WORKERS("latency_ms", latency_ms, IN(0, 1e6)),
    K_ENUM("collective", collective, E_COLL),
    K_ENUM("reduce_order", reduce_order, E_REDUCE),
    K_ENUM("gbit", gbit, E_GBIT),
    K_NUM("tcp_window_mb", tcp_window_mb, IN(0, 1e6)),
    K_ENUM("transport", transport, E_TRANSPORT),
    K_ENUM("completion", completion, E_COMPLETION),
    K_NUM("tcp_init_window_kb", tcp_init_window_kb, IN(0.001, 1e9)),
    K_BOOL("tcp_slow_start_after_idle", tcp_slow_start_after_idle),
    K_NUM("efficiency", efficiency, OC(0, 1)),
    K_NUM("collective_overhead_ms", collective_overhead_ms, IN(0, 1e6)),
    K_MATRIX("latency_matrix_ms", latency_matrix_ms, IN(0, 1e6)),
    K_WORKERS("ring_order", ring_order_w, INT(0, SCN_MAX_WORKERS - 1)),
    K_END};

/* The combination is checked by sched_normalize: check_method. */
static const field method_fields[] = {
    K_ENUM("name", sched.method, E_METHOD),
    K_INT("H", sched.H, 1, INT_MAX),
    K_INT("fragments", sched.P, 1, INT_MAX),
    K_ENUM("layout", sched.layout, E_LAYOUT),
    K_ENUM("order", sched.order, E_ORDER),
    K_WORKERS("tau", tau_w, INT(0, INT_MAX)),
    K_ENUM("overlap", sched.overlap, E_OVERLAP),
    K_ENUM("rule", sched.rule, E_RULE),
    K_NUM("alpha", sched.alpha, IN(0, 1)),
    K_ENUM("codec", codec.kind, E_CODEC),
    K_U64("codec_block", codec.block, 0, 1e15),
    K_ENUM("dp_codec", dp_codec.kind, E_CODEC),
    K_ENUM("late", late, E_LATE),
    K_NUM("sync_timeout_s", sync_timeout_s, IN(0, 1e9)),
    K_NUM("dp_bucket_mb", dp_bucket_mb, IN(0, 1e9)),
    K_BOOL("offload_outer", offload_outer),
    K_END};

/* trace is resolved and checked against mtbf_hours in check_faults. */
static const field faults_fields[] = {
    {.key = "mtbf_hours", .type = F_NUM, .off = AT(faults.mtbf_s),
     .r = IN(0, 1e6), .scale = 3600},
    {.key = "mttr_hours", .type = F_NUM, .off = AT(faults.mttr_s),
     .r = OC(0, 1e6), .scale = 3600},
    K_ENUM("distribution", faults.dist, E_DIST),
    K_NUM("weibull_shape", faults.weibull_shape, IN(0.01, 1000)),
    K_STR("trace"),
    K_I64("checkpoint_steps", checkpoint_steps, 1, EXACT_INT),
    K_NUM("recovery_bytes_per_param", recovery_bytes_per_param,
          IN(0, 1000)),
    K_END};

/* Sections first: workers.count must be known before network. */
static const field root_fields[] = {
    K_OBJ("model", model_fields),
    K_OBJ("workers", workers_fields),
    K_OBJ("network", network_fields),
    K_OBJ("method", method_fields),
    K_OBJ("faults", faults_fields),
    K_OBJ("train", scn__train_fields),
    K_I64("steps", steps, 1, 1e12),
    K_U64("seed", seed, 0, EXACT_INT),
    K_ENUM("measure", measure, E_MEASURE),
    K_STR("name"),
    K_STR("description"),
    {.key = "variants", .type = F_VARIANTS},
    {.key = "sweep", .type = F_SWEEP},
    K_END};

/* ---------------------------------------------------------------------
 * Pass 4: validation, driven by the tables
 */

/* "a number > 0", "an integer in 1..256", "a number in (0, 1]". */
static const char *describe(const range *r, char buf[96]) {
    char lo[32], hi[32];
    msg_number(r->lo, lo);
    msg_number(r->hi, hi);
    if (r->integer)
        snprintf(buf, 96, "an integer in %s..%s", lo, hi);
    else if (isinf(r->hi))
        snprintf(buf, 96, "a number %s %s", r->lo_open ? ">" : ">=", lo);
    else
        snprintf(buf, 96, "a number in %c%s, %s%c", r->lo_open ? '(' : '[',
                 lo, hi, r->hi_open ? ')' : ']');
    return buf;
}

/* Checks that v is a finite number in r; `expected` ends the messages.
 * The literal is checked too, where the double read from it would hide
 * the problem: a nonzero literal that underflows to 0, and for integer
 * keys a literal that is not exactly an integer or exceeds 2^53. */
static int check_number(ctx *c, const cJSON *v, const char *path,
                        const range *r, const char *expected, double *out) {
    char b[MSG_NUM_MAX];
    if (!cJSON_IsNumber(v))
        return fail(c, v, 0, path, "wrong type: %s (expected %s)",
                    type_name(v), expected);
    double x = v->valuedouble, exact;
    const pos *at = lookup(c, v);
    const char *lit = at ? at->lit : NULL;
    int litlen = lit ? (int)strspn(lit, "+-.0123456789eE") : 0;
    if (!isfinite(x))
        return fail(c, v, 0, path, "not a finite number (expected %s)",
                    expected);
    if (x == 0 && lit && json_literal_nonzero(lit))
        return fail(c, v, 0, path, "%.*s underflows to 0 (expected %s)",
                    litlen, lit, expected);
    if (r->integer && x != floor(x))
        return fail(c, v, 0, path, "%s is not an integer (expected %s)",
                    msg_number(x, b), expected);
    if (x < r->lo || (r->lo_open && x == r->lo) || x > r->hi ||
        (r->hi_open && x == r->hi))
        return fail(c, v, 0, path, "%s is out of range (expected %s)",
                    msg_number(x, b), expected);
    int k = r->integer && lit ? json_literal_integer(lit, &exact) : 0;
    if (k == 1)
        return fail(c, v, 0, path, "%.*s is not an integer (expected %s)",
                    litlen, lit, expected);
    if (k == 2)
        return fail(c, v, 0, path, "%.*s is above 2^53 = 9007199254740992 "
                    "and cannot be read exactly (expected %s)", litlen, lit,
                    expected);
    *out = x;
    return 0;
}

/* One per-worker value: a number in f->r, or "inf" when f->inf_ok. */
static int worker_value(ctx *c, const cJSON *v, const char *path,
                        const field *f, const char *expected, double *out) {
    if (f->inf_ok && cJSON_IsString(v) && strcmp(v->valuestring, "inf") == 0) {
        *out = INFINITY;
        return 0;
    }
    return check_number(c, v, path, &f->r, expected, out);
}

/* A per-worker field: one value for every worker, or an array of exactly
 * workers.count values. */
static int load_workers(ctx *c, const cJSON *v, const char *path,
                        const field *f, scn_config *cfg) {
    double *dst = (double *)((char *)cfg + f->off);
    double *dst2 = f->off2 ? (double *)((char *)cfg + f->off2) : NULL;
    int n = cfg->workers;
    char one[128], any[224], rb[96], p[PATH_LEN];
    snprintf(one, sizeof one, "%s%s", describe(&f->r, rb),
             f->inf_ok ? " or \"inf\"" : "");
    snprintf(any, sizeof any, "%s, or an array of workers.count = %d such "
             "values", one, n);
    if (!cJSON_IsArray(v)) {
        double x;
        if (worker_value(c, v, path, f, any, &x)) return -1;
        for (int i = 0; i < SCN_MAX_WORKERS; i++) {
            dst[i] = x;
            if (dst2) dst2[i] = x;
        }
        return 0;
    }
    int len = cJSON_GetArraySize(v);
    if (len != n)
        return fail(c, v, 0, path, "array of %d values (expected "
                    "workers.count = %d values)", len, n);
    int i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        join_index(p, path, i);
        if (worker_value(c, e, p, f, one, &dst[i])) return -1;
        if (dst2) dst2[i] = dst[i];
    }
    return 0;
}

/* A per-pair field: workers.count arrays of workers.count values (at most
 * SCN_MAX_MATRIX workers). */
static int load_matrix(ctx *c, const cJSON *v, const char *path,
                       const field *f, scn_config *cfg) {
    double *dst = (double *)((char *)cfg + f->off);
    int n = cfg->workers;
    char rb[96], p[PATH_LEN], q[PATH_LEN];
    if (n > SCN_MAX_MATRIX)
        return fail(c, v, 0, path, "given for %d workers (expected at most "
                    "%d workers)", n, SCN_MAX_MATRIX);
    char all[96], one[96];
    snprintf(all, sizeof all, "workers.count = %d arrays of %d numbers", n, n);
    snprintf(one, sizeof one, "an array of workers.count = %d numbers", n);
    if (!cJSON_IsArray(v))
        return fail(c, v, 0, path, "wrong type: %s (expected %s)", type_name(v), all);
    if (cJSON_GetArraySize(v) != n)
        return fail(c, v, 0, path, "array of %d values (expected %s)",
                    cJSON_GetArraySize(v), all);
    int i = 0;
    for (const cJSON *row = v->child; row; row = row->next, i++) {
        join_index(p, path, i);
        if (!cJSON_IsArray(row))
            return fail(c, row, 0, p, "wrong type: %s (expected %s)", type_name(row), one);
        if (cJSON_GetArraySize(row) != n)
            return fail(c, row, 0, p, "array of %d values (expected %s)",
                        cJSON_GetArraySize(row), one);
        int j = 0;
        for (const cJSON *e = row->child; e; e = e->next, j++) {
            join_index(q, p, j);
            if (check_number(c, e, q, &f->r, describe(&f->r, rb),
                             &dst[i * n + j]))
                return -1;
        }
    }
    return 0;
}

static int load_object(ctx *c, const cJSON *obj, const char *path,
                       const field *fields, scn_config *cfg);

/* One member of a section: checks member m (path p), the n-th, and files
 * it in meta when meta is not NULL. */
typedef int (*member_fn)(ctx *c, const cJSON *m, const char *p, int n,
                         scn_meta *meta);

/* A section: an object of at most max members with distinct keys, each
 * checked by `member`; their count goes to meta at count_off. */
typedef struct {
    const char *name, *expected;
    int max;
    member_fn member;
    size_t count_off;
} section;

static int variant_member(ctx *c, const cJSON *m, const char *p, int n,
                          scn_meta *meta);
static int sweep_member(ctx *c, const cJSON *m, const char *p, int n,
                        scn_meta *meta);
static const section S_VARIANTS = {"variants", "an object of named variants",
                                   SCN_MAX_VARIANTS, variant_member,
                                   offsetof(scn_meta, nvariants)};
static const section S_SWEEP = {"sweep", "an object of key: grid spec",
                                SCN_MAX_SWEEP, sweep_member,
                                offsetof(scn_meta, nsweep)};
static int check_section(ctx *c, const cJSON *v, const section *s,
                         scn_meta *meta);

/* An array of distinct names of e: bit i for the name parsed as i. */
static int load_flags(ctx *c, const cJSON *v, const char *path,
                      const enum_def *e, unsigned *out) {
    char p[PATH_LEN];
    if (!cJSON_IsArray(v))
        return fail(c, v, 0, path, "wrong type: %s (expected an array of "
                    "names from: %s)", type_name(v), e->names);
    unsigned bits = 0;
    int i = 0;
    for (const cJSON *m = v->child; m; m = m->next, i++) {
        int k;
        join_index(p, path, i);
        if (!cJSON_IsString(m))
            return fail(c, m, 0, p, "wrong type: %s (expected one of: %s)",
                        type_name(m), e->names);
        if (e->parse(m->valuestring, &k))
            return fail(c, m, 0, p, "unknown value \"%s\" (expected one "
                        "of: %s)", m->valuestring, e->names);
        if (bits & 1u << k)
            return fail(c, m, 0, p, "\"%s\" given twice (expected each "
                        "name at most once)", m->valuestring);
        bits |= 1u << k;
    }
    *out = bits;
    return 0;
}

/* One present key of a table. */
static int load_field(ctx *c, const cJSON *v, const char *path,
                      const field *f, scn_config *cfg) {
    char *dst = (char *)cfg + f->off, rb[96];
    double x;
    switch (f->type) {
    case F_NUM:
        if (check_number(c, v, path, &f->r, describe(&f->r, rb), &x))
            return -1;
        if (f->scale) x *= f->scale;
        if (!isfinite(x))
            return fail(c, v, 0, path, "too large (expected %s)",
                        describe(&f->r, rb));
        *(double *)dst = x;
        return 0;
    case F_INT:
    case F_I64:
    case F_U64:
        if (check_number(c, v, path, &f->r, describe(&f->r, rb), &x))
            return -1;
        if (f->type == F_INT) *(int *)dst = (int)x;
        else if (f->type == F_I64) *(int64_t *)dst = (int64_t)x;
        else *(uint64_t *)dst = (uint64_t)x;
        return 0;
    case F_ENUM: {
        const char *names = f->e->names ? f->e->names : codec_names();
        if (!cJSON_IsString(v))
            return fail(c, v, 0, path, "wrong type: %s (expected one of: %s)",
                        type_name(v), names);
        if (f->e->parse(v->valuestring, dst))
            return fail(c, v, 0, path, "unknown value \"%s\" (expected one "
                        "of: %s)", v->valuestring, names);
        return 0;
    }
    case F_STR:
        if (!cJSON_IsString(v))
            return fail(c, v, 0, path, "wrong type: %s (expected a string)",
                        type_name(v));
        return 0;
    case F_BOOL:
        if (!cJSON_IsBool(v))
            return fail(c, v, 0, path, "wrong type: %s (expected true or "
                        "false)", type_name(v));
        *(int *)dst = cJSON_IsTrue(v);
        return 0;
    case F_FLAGS:
        return load_flags(c, v, path, f->e, (unsigned *)dst);
    case F_OBJ:
        return load_object(c, v, path, f->sub, cfg);
    case F_WORKERS:
        return load_workers(c, v, path, f, cfg);
    case F_MATRIX:
        return load_matrix(c, v, path, f, cfg);
    case F_VARIANTS:
        return check_section(c, v, &S_VARIANTS, NULL);
    case F_SWEEP:
        return check_section(c, v, &S_SWEEP, NULL);
    }
    return 0;
}

/* The first member of obj whose key an earlier member has, in *dup (NULL
 * when none) and that earlier member in *first.  Linear in obj's size. */
static int find_dup(ctx *c, const cJSON *obj, const cJSON **dup,
                    const cJSON **first) {
    *dup = *first = NULL;
    int r = json_first_duplicate(obj, dup, first);
    if (r < 0) return oom(c);
    if (r == 0) *dup = NULL;
    return 0;
}

/* The error about member m (path p), a duplicate of member e. */
static int dup_fail(ctx *c, const cJSON *m, const cJSON *e, const char *p) {
    const pos *first = lookup(c, e);
    int line, col;
    if (!first || first->key == NO_POS)
        return fail(c, m, 1, p, "duplicate key");
    json_line_col(c->text, first->key, &line, &col);
    return fail(c, m, 1, p, "duplicate key (first given at %d:%d)", line,
                col);
}

/* Rejects unknown and duplicate keys, in document order. */
static int check_keys(ctx *c, const cJSON *obj, const char *path,
                      const field *fields) {
    char p[PATH_LEN];
    const cJSON *dup, *first;
    if (find_dup(c, obj, &dup, &first)) return -1;
    for (const cJSON *m = obj->child; m; m = m->next) {
        join_key(p, path, m->string);
        const field *f = fields;
        while (f->key && strcmp(f->key, m->string) != 0) f++;
        if (!f->key) {
            const char *names[64];
            int n = 0;
            for (f = fields; f->key && n < 64; f++) names[n++] = f->key;
            char keys[512], near[PATH_LEN + 32] = "";
            msg_name_list(names, n, keys, sizeof keys);
            int k = msg_nearest_name(m->string, names, n, 2);
            if (k >= 0) {
                char q[PATH_LEN];
                join_key(q, path, names[k]);
                snprintf(near, sizeof near, "did you mean %s? ", q);
            }
            return fail(c, m, 1, p, "unknown key (%sexpected one of: %s)",
                        near, keys);
        }
        if (m == dup) return dup_fail(c, m, first, p);
    }
    return 0;
}

/* An object described by a table: keys first, then each field present,
 * in table order (so counts come before the arrays sized by them). */
static int load_object(ctx *c, const cJSON *obj, const char *path,
                       const field *fields, scn_config *cfg) {
    char p[PATH_LEN];
    if (!cJSON_IsObject(obj))
        return fail(c, obj, 0, path, "wrong type: %s (expected an object)",
                    type_name(obj));
    if (check_keys(c, obj, path, fields)) return -1;
    for (const field *f = fields; f->key; f++) {
        const cJSON *v = get(obj, f->key);
        if (!v) continue;
        join_key(p, path, f->key);
        if (load_field(c, v, p, f, cfg)) return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------
 * The variants and sweep sections: shapes only.  What a variant sets is
 * validated when it is merged; what a sweep varies, when a point loads.
 */

/* A variant name: 1 to SCN_NAME_MAX - 1 of [A-Za-z0-9_.-]. */
static int is_variant_name(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n >= SCN_NAME_MAX) return 0;
    for (; *s; s++)
        if (!is_word(*s) && *s != '.' && *s != '-') return 0;
    return 1;
}

/* A sweep key: a dotted key path with no empty segment and no '=' that
 * fits scn_meta.sweep_key. */
static int is_sweep_key(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof ((scn_meta *)0)->sweep_key[0]) return 0;
    if (s[0] == '.' || s[n - 1] == '.' || strstr(s, "..")) return 0;
    return strchr(s, '=') == NULL;
}

static int check_section(ctx *c, const cJSON *v, const section *s,
                         scn_meta *meta) {
    char p[PATH_LEN];
    if (!cJSON_IsObject(v))
        return fail(c, v, 0, s->name, "wrong type: %s (expected %s)",
                    type_name(v), s->expected);
    const cJSON *dup, *first;
    if (find_dup(c, v, &dup, &first)) return -1;
    int n = 0;
    for (const cJSON *m = v->child; m; m = m->next, n++) {
        join_key(p, s->name, m->string);
        if (m == dup) return dup_fail(c, m, first, p);
        if (n == s->max)
            return fail(c, m, 1, p, "too many keys (expected at most %d)",
                        s->max);
        if (s->member(c, m, p, n, meta)) return -1;
    }
    if (meta) *(int *)((char *)meta + s->count_off) = n;
    return 0;
}

static int variant_member(ctx *c, const cJSON *m, const char *p, int n,
                          scn_meta *meta) {
    if (!is_variant_name(m->string))
        return fail(c, m, 1, p, "bad variant name (expected 1 to %d of "
                    "A-Z a-z 0-9 _ . -)", SCN_NAME_MAX - 1);
    if (!cJSON_IsObject(m))
        return fail(c, m, 0, p, "wrong type: %s (expected an object of "
                    "scenario keys)", type_name(m));
    if (meta) strcpy(meta->variant[n], m->string);
    return 0;
}


/* A string that --set would not read back as itself: empty, JSON (such
 * as "1" or "true"), padded, or holding what splits a comma list. */
static int needs_quotes(const char *s) {
    size_t n = strlen(s);
    return n == 0 || json_valid(s) || strpbrk(s, ",\"[]{}") != NULL ||
           isspace((unsigned char)s[0]) || isspace((unsigned char)s[n - 1]);
}

/* Appends item e of a sweep array to spec (len bytes used) as the VALUE
 * of a --set: a number, true, false, or a string, JSON-quoted when it
 * needs quotes.  Returns 0, 1 when it does not fit, -1 out of memory. */
static int append_item(const cJSON *e, char *spec, size_t *len) {
    char b[32], *q = NULL;
    const char *t = cJSON_IsTrue(e) ? "true" : "false";
    if (cJSON_IsNumber(e)) t = msg_number(e->valuedouble, b);
    if (cJSON_IsString(e)) {
        t = e->valuestring;
        if (needs_quotes(t) && !(t = q = cJSON_PrintUnformatted(e)))
            return -1;
    }
    size_t n = strlen(t), sep = *len ? 1 : 0;
    int rc = *len + sep + n >= SCN_SPEC_MAX;
    if (!rc) {
        if (sep) spec[(*len)++] = ',';
        memcpy(spec + *len, t, n + 1);
        *len += n;
    }
    free(q);
    return rc;
}

/* A sweep value as a grid spec in spec[SCN_SPEC_MAX]: a string as it is,
 * an array of scalars as a comma list. */
static int sweep_spec_text(ctx *c, const cJSON *v, const char *p,
                           char *spec) {
    static const char *const expected = "expected a grid spec string or an "
                                        "array of numbers, strings or "
                                        "booleans";
    if (cJSON_IsString(v)) {
        if (strlen(v->valuestring) >= SCN_SPEC_MAX)
            return fail(c, v, 0, p, "too long (expected at most %d bytes)",
                        SCN_SPEC_MAX - 1);
        strcpy(spec, v->valuestring);
        return 0;
    }
    if (!cJSON_IsArray(v))
        return fail(c, v, 0, p, "wrong type: %s (%s)", type_name(v),
                    expected);
    if (!v->child) return fail(c, v, 0, p, "empty array (%s)", expected);
    size_t len = 0;
    int i = 0;
    spec[0] = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        char pe[PATH_LEN];
        join_index(pe, p, i);
        if (!cJSON_IsNumber(e) && !cJSON_IsString(e) && !cJSON_IsBool(e))
            return fail(c, e, 0, pe, "wrong type: %s (%s)", type_name(e),
                        expected);
        int r = append_item(e, spec, &len);
        if (r < 0) return oom(c);
        if (r)
            return fail(c, v, 0, p, "too long (expected at most %d bytes "
                        "as a comma list)", SCN_SPEC_MAX - 1);
    }
    return 0;
}

static int sweep_member(ctx *c, const cJSON *m, const char *p, int n,
                        scn_meta *meta) {
    char spec[SCN_SPEC_MAX];
    if (!is_sweep_key(m->string))
        return fail(c, m, 1, p, "bad key (expected a dotted scenario key "
                    "such as network.bandwidth_gbps, at most %d bytes)",
                    (int)sizeof meta->sweep_key[0] - 1);
    if (sweep_spec_text(c, m, p, meta ? meta->sweep_spec[n] : spec))
        return -1;
    if (meta) {
        const pos *at = lookup(c, m);
        strcpy(meta->sweep_key[n], m->string);
        meta->sweep_line[n] = meta->sweep_col[n] = 0;
        if (at && at->val != NO_POS)
            json_line_col(c->text, at->val, &meta->sweep_line[n],
                          &meta->sweep_col[n]);
    }
    return 0;
}


/* ---------------------------------------------------------------------
 * Pass 2: merging a variant
 */

/* Files node and its subtree as coming from the merged variant. */
static void mark_variant(ctx *c, const cJSON *node) {
    pos *p = lookup(c, node);
    if (p) p->in_variant = 1;
    for (const cJSON *ch = node->child; ch; ch = ch->next)
        mark_variant(c, ch);
}

/* Deep-merges object src into object dst: a member that is an object on
 * both sides merges key by key, any other member of src moves into dst,
 * replacing dst's.  path is src's path in the merged document.  Linear in
 * the sizes of both: dst's members are found through a hash of its keys. */
static int merge(ctx *c, cJSON *dst, cJSON *src, const char *path) {
    char p[PATH_LEN];
    const cJSON *dup, *first;
    /* Duplicates first: a moved member is no longer there to compare. */
    if (find_dup(c, src, &dup, &first)) return -1;
    if (dup) {
        join_key(p, path, dup->string);
        return dup_fail(c, dup, first, p);
    }
    json_keys keys;
    if (json_keys_build(&keys, dst)) return oom(c);
    int rc = 0;
    for (cJSON *m = src->child, *next; m && !rc; m = next) {
        next = m->next;
        cJSON *d = json_keys_get(&keys, m->string);
        if (cJSON_IsObject(d) && cJSON_IsObject(m)) {
            join_key(p, path, m->string);
            rc = merge(c, d, m, p);
            continue;
        }
        cJSON_DetachItemViaPointer(src, m);
        if (d) {
            /* m takes d's slot before d is freed by the replacement. */
            if (json_keys_put(&keys, m)) rc = oom(c);
            cJSON_ReplaceItemViaPointer(dst, d, m);
        } else if (!cJSON_AddItemToObject(dst, m->string, m)) {
            cJSON_Delete(m);
            rc = oom(c);
        } else if (json_keys_put(&keys, m)) {
            rc = oom(c);
        }
    }
    json_keys_free(&keys);
    return rc;
}

/* "file: variants: unknown variant "x" (expected one of: a, b)". */
static int unknown_variant(ctx *c, const cJSON *vs, const char *name) {
    char names[SCN_MAX_VARIANTS * (SCN_NAME_MAX + 2)] = "";
    size_t n = 0;
    for (const cJSON *m = vs ? vs->child : NULL; m; m = m->next)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s",
                              n ? ", " : "", m->string);
    if (!n)
        return set_err(c, "%s: variants: unknown variant \"%s\" (the "
                       "scenario has no variants)", c->name, name);
    return set_err(c, "%s: variants: unknown variant \"%s\" (expected one "
                   "of: %s)", c->name, name, names);
}

/* Merges variant `name` of root's variants section into root.  The
 * variant's nodes keep their positions and are marked, so messages about
 * them point into the variant and name it. */
static int merge_variant(ctx *c, cJSON *root, const char *name) {
    char p[PATH_LEN], var[PATH_LEN];
    cJSON *vs = cJSON_GetObjectItemCaseSensitive(root, "variants");
    if (vs && check_section(c, vs, &S_VARIANTS, NULL)) return -1;
    cJSON *v = vs ? cJSON_GetObjectItemCaseSensitive(vs, name) : NULL;
    if (!v) return unknown_variant(c, vs, name);
    join(var, "variants", ".", name);
    for (const cJSON *m = v->child; m; m = m->next) {
        if (strcmp(m->string, "variants") && strcmp(m->string, "sweep"))
            continue;
        join_key(p, var, m->string);
        return fail(c, m, 1, p, "not allowed in a variant (expected "
                    "scenario keys)");
    }
    mark_variant(c, v);
    c->variant = name;
    cJSON_DetachItemViaPointer(vs, v);
    int rc = merge(c, root, v, "");
    cJSON_Delete(v);
    return rc;
}

/* ---------------------------------------------------------------------
 * Pass 4, continued: what spans several keys
 */

/* step_time_s, or all four of tokens_per_step, chips, peak_tflops, mfu;
 * split sums to 1. */
static int check_model(ctx *c, const cJSON *root, scn_config *cfg) {
    static const char *const flops[] = {"tokens_per_step", "chips",
                                        "peak_tflops", "mfu"};
    static const char *const both = "expected either step_time_s, or "
                                    "tokens_per_step, chips, peak_tflops "
                                    "and mfu";
    const cJSON *m = get(root, "model"), *st = get(m, "step_time_s");
    const cJSON *first = NULL;
    const char *missing = NULL;
    char p[PATH_LEN], b[32];
    for (int k = 0; k < 4; k++) {
        const cJSON *v = get(m, flops[k]);
        if (v && !first) first = v;
        if (!v && !missing) missing = flops[k];
    }
    if (first && st) {
        if (is_later(c, st, first))
            return fail(c, st, 0, "model.step_time_s", "cannot be given "
                        "together with %s (%s)", first->string, both);
        join_key(p, "model", first->string);
        return fail(c, first, 0, p, "cannot be given together with "
                    "step_time_s (%s)", both);
    }
    if (first && missing) {
        join_key(p, "model", missing);
        return fail(c, m, 0, p, "missing: tokens_per_step, chips, "
                    "peak_tflops and mfu go together (%s)", both);
    }
    if (first) cfg->step_time_s = 0;

    const cJSON *sp = get(m, "split");
    double sum = cfg->split[0] + cfg->split[1] + cfg->split[2];
    if (sp && fabs(sum - 1) > 1e-9)
        return fail(c, sp, 0, "model.split", "shares sum to %s (expected "
                    "forward + backward_activations + backward_parameters "
                    "= 1)", msg_number(sum, b));
    return 0;
}

/* The schedule, through sched_normalize; its message is reported at the
 * key most responsible. */
static int check_method(ctx *c, const cJSON *root, scn_config *cfg) {
    sched_spec s = cfg->sched;
    char msg[256], p[PATH_LEN];
    s.layers = cfg->layers;
    int lo = INT_MAX, hi = 0; /* per-worker taus: the largest is checked */
    for (int i = 0; i < cfg->workers; i++) {
        int t = (int)cfg->tau_w[i];
        if (t < lo) lo = t;
        if (t > hi) hi = t;
    }
    s.tau = hi;
    if (sched_normalize(&s, msg, sizeof msg) == 0) {
        int keep = s.tau > 0; /* streaming: the taus stand */
        cfg->sched = s;
        cfg->sched.tau = keep ? lo : 0;
        for (int i = 0; i < SCN_MAX_WORKERS; i++)
            cfg->tau_extra[i] = keep && i < cfg->workers ? (int)cfg->tau_w[i] - lo : 0;
        return 0;
    }
    /* The same order of checks as sched_normalize, on its output. */
    int narrow = sched_narrow(&s), cap = sched_tau_cap(&s);
    const char *key = s.layout == SCHED_SLICED && s.overlap ? "overlap"
                      : s.H < 1                           ? "H"
                      : narrow && s.P > s.H               ? "fragments"
                      : s.P < 1 || s.P > s.layers         ? "fragments"
                      : s.overlap != SCHED_INNER && s.tau ? "tau"
                      : s.tau < 0 || s.tau >= cap         ? "tau"
                                                          : "alpha";
    const cJSON *m = get(root, "method"), *v = get(m, key);
    join_key(p, "method", key);
    return fail(c, v ? v : m ? m : root, 0, p, "%s", msg);
}

/* The network keys that span several values: the ring order is a
 * permutation, the latency matrix symmetric with a zero diagonal and not
 * given together with latency_ms. */
static int check_network(ctx *c, const cJSON *root, scn_config *cfg) {
    const cJSON *n = get(root, "network"), *ro = get(n, "ring_order");
    const cJSON *lm = get(n, "latency_matrix_ms"), *lv = get(n, "latency_ms");
    int M = cfg->workers;
    char a[MSG_NUM_MAX], b[MSG_NUM_MAX];
    if (ro) {
        uint8_t seen[SCN_MAX_WORKERS] = {0};
        for (int i = 0; i < M; i++) {
            int w = (int)cfg->ring_order_w[i];
            if (w >= M || seen[w])
                return fail(c, ro, 0, "network.ring_order", "worker %d %s "
                            "(expected a permutation of 0..%d)", w,
                            w >= M ? "does not exist" : "given twice", M - 1);
            seen[w] = 1;
            cfg->ring_order[i] = w;
        }
        cfg->has_ring_order = 1;
    }
    const cJSON *cp = get(n, "completion");
    if (cp && cfg->completion == SCN_COMPLETION_MEMBER && scn_late_continues(cfg))
        return fail(c, cp, 0, "network.completion", "\"member\" cannot be "
                    "combined with method.late \"continue\" (expected "
                    "\"group\", or late \"wait\")");
    if (!lm) return 0;
    if (lv) { /* at the later of the two */
        int later = is_later(c, lv, lm);
        return fail(c, later ? lv : lm, 0, later ? "network.latency_ms"
                    : "network.latency_matrix_ms", "cannot be given together "
                    "with %s (expected one of latency_ms and latency_matrix_ms)",
                    later ? "latency_matrix_ms" : "latency_ms");
    }
    const double *L = cfg->latency_matrix_ms;
    char p[PATH_LEN];
    for (int i = 0; i < M; i++)
        for (int j = 0; j <= i; j++) {
            double x = L[i * M + j], y = L[j * M + i];
            if (i == j ? x == 0 : x == y) continue;
            const cJSON *at = cJSON_GetArrayItem(cJSON_GetArrayItem(lm, i), j);
            snprintf(p, sizeof p, "network.latency_matrix_ms[%d][%d]", i, j);
            if (i == j)
                return fail(c, at, 0, p, "%s ms (expected 0 on the diagonal)",
                            msg_number(x, a));
            return fail(c, at, 0, p, "%s ms but [%d][%d] is %s ms (expected a "
                        "symmetric matrix)", msg_number(x, a), j, i, msg_number(y, b));
        }
    cfg->has_latency_matrix = 1;
    return 0;
}

double scn_gbit_bits(scn_gbit g) {
    return g == SCN_GBIT_BINARY ? 1073741824.0 : 1e9;
}

const char *scn_gbit_note(int64_t nbinary, int64_t npoints) {
    if (nbinary <= 0) return "";
    return nbinary >= npoints
               ? "; Gbit = 2^30 bits (network.gbit binary)"
               : "; Gbit = 2^30 bits where network.gbit is binary, else 1e9 "
                 "bits";
}

double scn_latency_ms(const scn_config *c, int i, int j) {
    if (c->has_latency_matrix)
        return c->latency_matrix_ms[i * c->workers + j];
    return (c->latency_ms[i] + c->latency_ms[j]) / 2;
}

/* The longest simulated time the engine represents with room to spare:
 * time is int64 nanoseconds (2^63 ns is about 292 years), and a whole run
 * must fit in RUN_MAX_S = 1e9 s (about 31.7 years, 1e18 ns). */
#define RUN_MAX_S 1e9
#define STEP_MIN_S 1e-9 /* one nanosecond */

/* The first of keys (in section sec of root) that was given, or NULL. */
static const cJSON *given(const cJSON *root, const char *sec,
                          const char *const *keys, const char **key) {
    for (; *keys; keys++) {
        const cJSON *v = get(get(root, sec), *keys);
        if (v) return *key = *keys, v;
    }
    return NULL;
}

/* What the engine must represent in int64 nanoseconds: the step time
 * (given or derived from FLOPs) at least 1 ns and at most 1e6 s, a sync
 * timeout of 0 or at least 1 ns, and an estimate of the whole run (every
 * step at the slowest worker's speed and slowdown, plus every sync's
 * collective steps, each with its latency and software overhead, the
 * transfer of its payload at the lowest bandwidth and TCP window, and the
 * host copies of offloaded outer state) at most RUN_MAX_S.  A product is
 * reported at the key that dominates it, naming the others. */
static int check_run(ctx *c, const cJSON *root, scn_config *cfg) {
    static const char *const net_keys[] = {
        "bandwidth_gbps", "up_gbps", "down_gbps", "tcp_window_mb", "latency_ms",
        "latency_matrix_ms", "efficiency", "collective_overhead_ms", NULL};
    static const char *const step_keys[] = {"step_time_s", "tokens_per_step",
                                            "chips", "peak_tflops", "mfu",
                                            NULL};
    char a[MSG_NUM_MAX], b[MSG_NUM_MAX], d[MSG_NUM_MAX], p[PATH_LEN];
    const char *key = NULL;
    double step = scn_step_time_s(cfg);
    const cJSON *sv = given(root, "model", step_keys, &key);
    if (sv && !(step >= STEP_MIN_S && step <= 1e6)) {
        join_key(p, "model", key);
        return fail(c, sv, 0, p, "the step time 6 * params * tokens_per_step "
                    "/ (chips * peak_tflops * 1e12 * mfu) = %s s is out of "
                    "range (expected a step of 1e-09 to 1e+06 s)",
                    msg_number(step, a));
    }
    /* "0: none", else at least the smallest value that means something:
     * a window of one byte, an MTBF of 3.6 ms (shorter ones would flood
     * the run with failures). */
    const cJSON *w = get(get(root, "network"), "tcp_window_mb");
    if (w && cfg->tcp_window_mb > 0 && cfg->tcp_window_mb < 1e-6)
        return fail(c, w, 0, "network.tcp_window_mb", "%s is below one byte "
                    "(expected 0 for none, or a number in [1e-06, 1000000])",
                    msg_number(cfg->tcp_window_mb, a));
    const cJSON *mt = get(get(root, "faults"), "mtbf_hours");
    if (mt && cfg->faults.mtbf_s > 0 && cfg->faults.mtbf_s < 3600e-6)
        return fail(c, mt, 0, "faults.mtbf_hours", "%s is below 1e-06 h "
                    "(expected 0 for none, or a number in [1e-06, 1000000])",
                    msg_number(cfg->faults.mtbf_s / 3600, a));
    /* A timeout is whole ns: one below 1 ns would round to 0, none. */
    const cJSON *to = get(get(root, "method"), "sync_timeout_s");
    if (to && cfg->sync_timeout_s > 0 && cfg->sync_timeout_s < STEP_MIN_S)
        return fail(c, to, 0, "method.sync_timeout_s", "%s is a positive "
                    "value below 1 ns (expected 0 for none, or a number in "
                    "[1e-09, 1000000000])", msg_number(cfg->sync_timeout_s, a));
    int M = cfg->workers;
    double slow = INFINITY, rate = INFINITY, lat = 0;
    double unit = scn_gbit_bits(cfg->gbit);
    for (int i = 0; i < M; i++) {
        if (cfg->speed[i] < slow) slow = cfg->speed[i];
        double r = fmin(cfg->up_gbps[i], cfg->down_gbps[i]) * unit / 8;
        if (r < rate) rate = r;
        for (int j = 0; j < M; j++) lat = fmax(lat, scn_latency_ms(cfg, i, j));
    }
    rate *= cfg->efficiency;
    lat *= 1e-3;
    if (cfg->tcp_window_mb > 0 && lat > 0)
        rate = fmin(rate, cfg->tcp_window_mb * 1e6 / (2 * lat));
    double factor = cfg->straggler_prob > 0 ? cfg->straggler_slowdown : 1;
    double steps = (double)cfg->steps;
    double compute = steps * step / slow * factor;
    /* Syncs: every step for DP, else P every H steps; each moves at most
     * the fp32 payload (all parameters for DP, a fragment otherwise), M
     * times over the busiest link, in one collective per layer it holds
     * (per DP bucket; every layer for a sliced layout), each of 2M steps;
     * a repair moves recovery_bytes_per_param per parameter. */
    int dp = cfg->sched.method == SCHED_DP, P = cfg->sched.P;
    double syncs = dp ? steps : floor(steps / cfg->sched.H) * P;
    double bytes = 4 * cfg->params / (dp ? 1 : P);
    double layers = cfg->layers;
    double colls = dp ? layers
                   : cfg->sched.layout == SCHED_SLICED ? layers
                                                       : ceil(layers / P);
    if (dp && cfg->dp_bucket_mb > 0)
        colls = fmin(layers, ceil(bytes / (cfg->dp_bucket_mb * 1e6)));
    double repair = cfg->params * cfg->recovery_bytes_per_param / rate;
    /* every collective step: its latency, its software overhead and, over
     * TCP, the round trips of a slow start from the initial window */
    double rounds = 0;
    if (cfg->transport == SCN_TRANSPORT_TCP && lat > 0 && isfinite(rate))
        rounds = ceil(log2(fmax(1, rate * 2 * lat /
                                (cfg->tcp_init_window_kb * 1e3))));
    double hop = lat + rounds * 2 * lat;
    double overhead = cfg->collective_overhead_ms * 1e-3;
    double latency = syncs * colls * 2 * M * (hop + overhead);
    double transfer = syncs * M * bytes / rate + repair;
    /* Offloaded outer state: each sync copies its fragment's outer
     * parameters and momentum in and out at host_gbps. */
    double copies = 0;
    if (cfg->offload_outer && !dp)
        copies = syncs * 2 * bytes * 2 / (cfg->host_gbps * unit / 8);
    double total = compute + latency + transfer + copies;
    if (total <= RUN_MAX_S && isfinite(total)) return 0;
    const cJSON *at = get(root, "steps");
    const char *path = "steps";
    const cJSON *hv = get(get(root, "model"), "host_gbps");
    const cJSON *ov = get(get(root, "network"), "collective_overhead_ms");
    double syncing = fmax(fmax(latency, transfer), copies);
    if (syncing > compute && copies == syncing && hv) {
        at = hv, path = "model.host_gbps";
    } else if (syncing > compute && latency == syncing && ov &&
               overhead >= hop) {
        at = ov, path = "network.collective_overhead_ms";
    } else if (!at || fmax(latency, transfer) > compute) {
        const cJSON *nv = given(root, "network", net_keys, &key);
        if (compute >= fmax(latency, transfer) && sv) {
            join_key(p, "model", key);
            at = sv, path = p;
        } else if (compute < fmax(latency, transfer) && nv) {
            join_key(p, "network", key);
            at = nv, path = p;
        } else if (!at) {
            at = get(root, "model") ? get(root, "model") : root;
            path = get(root, "model") ? "model" : "";
        }
    }
    char h[MSG_NUM_MAX + 64] = "";
    if (copies > 0)
        snprintf(h, sizeof h, ", %s s of host copies (method.offload_outer "
                 "at model.host_gbps)", msg_number(copies, a));
    return fail(c, at, 0, path, "the run would last about %s s: %s s of "
                "compute (steps * step time / speed * slowdown)%s and %s s of "
                "syncs (latencies, collective overheads and transfers at the "
                "lowest bandwidth, given model.params) (expected at most "
                "1e+09 s, about 31.7 years; fewer steps, a shorter step or a "
                "faster network)",
                msg_number(total, a), msg_number(compute, b), h,
                msg_number(latency + transfer, d));
}

/* The file name in string node v (path p) resolved against the
 * scenario's directory into out[SCN_PATH_MAX]. */
int scn__resolve_path(ctx *c, const cJSON *v, const char *p, char *out) {
    const char *t = v->valuestring;
    if (!*t) return fail(c, v, 0, p, "empty path (expected a file name)");
    size_t dl = t[0] == '/' ? 0 : c->dirlen;
    if (dl + strlen(t) >= SCN_PATH_MAX)
        return fail(c, v, 0, p, "path too long (expected at most %d bytes "
                    "once resolved)", SCN_PATH_MAX - 1);
    if (dl) memcpy(out, c->dir, dl);
    strcpy(out + dl, t);
    return 0;
}

/* trace: a path resolved against the scenario's directory, not with a
 * positive MTBF. */
static int check_faults(ctx *c, const cJSON *root, scn_config *cfg) {
    const cJSON *f = get(root, "faults"), *tr = get(f, "trace");
    const cJSON *mtbf = get(f, "mtbf_hours");
    cfg->faults.trace = NULL;
    if (!tr) return 0;
    if (scn__resolve_path(c, tr, "faults.trace", cfg->trace_path)) return -1;
    if (mtbf && cfg->faults.mtbf_s > 0) {
        if (is_later(c, mtbf, tr))
            return fail(c, mtbf, 0, "faults.mtbf_hours", "must be 0 when "
                        "a trace is given (expected either a trace file or "
                        "random failures)");
        return fail(c, tr, 0, "faults.trace", "cannot be used together "
                    "with mtbf_hours > 0 (expected either a trace file or "
                    "random failures)");
    }
    /* Parsed now, so that a bad trace is an input error with its line
     * before any run (the run reads it again). */
    faults_trace *t;
    char msg[SCN_PATH_MAX + 256];
    int rc = faults_trace_load(cfg->trace_path, cfg->workers, &t, msg,
                               sizeof msg);
    if (rc == MSG_ENOMEM) return oom(c);
    if (rc)
        return fail(c, tr, 0, "faults.trace", "%s", msg);
    faults_trace_free(t);
    return 0;
}

/* ---------------------------------------------------------------------
 * Pass 3: overrides
 */

static int set_fail(ctx *c, int k, const char *path, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return override_fail(c, k, 0, path, msg);
}

/* Whether the n bytes at s are an array index: digits, no leading zero. */
static int is_index(const char *s, size_t n, long *out) {
    if (n == 0 || n > 9 || (s[0] == '0' && n > 1)) return 0;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i])) return 0;
        v = 10 * v + (s[i] - '0');
    }
    if (out) *out = v;
    return 1;
}

/* Walks the dotted path `keys` (split in place) from cur, creating missing
 * objects, and puts val at its end.  Returns 0 with val attached, or -1
 * with val still the caller's. */
static int set_at(ctx *c, int k, cJSON *cur, char *keys, cJSON *val) {
    char path[PATH_LEN] = "", base[PATH_LEN];
    for (char *seg = keys, *dot;; seg = dot + 1) {
        dot = strchr(seg, '.');
        if (dot) *dot = 0;
        const char *next = dot ? dot + 1 : "";
        int next_len = (int)strcspn(next, ".");
        memcpy(base, path, sizeof path);
        cJSON *child;
        if (cJSON_IsArray(cur)) {
            long idx;
            int size = cJSON_GetArraySize(cur);
            if (!is_index(seg, strlen(seg), &idx) || idx >= size) {
                if (size == 0)
                    return set_fail(c, k, base, "no element \"%s\" (the "
                                    "array is empty)", seg);
                return set_fail(c, k, base, "no element \"%s\" (expected "
                                "an index in 0..%d)", seg, size - 1);
            }
            join_index(path, base, (int)idx);
            if (!dot)
                return cJSON_ReplaceItemInArray(cur, (int)idx, val) ? 0
                                                                    : oom(c);
            child = cJSON_GetArrayItem(cur, (int)idx);
        } else { /* an object: the root, or checked below */
            join_key(path, base, seg);
            child = cJSON_GetObjectItemCaseSensitive(cur, seg);
            if (!dot) {
                int ok = child ? cJSON_ReplaceItemInObjectCaseSensitive(
                                     cur, seg, val)
                               : cJSON_AddItemToObject(cur, seg, val);
                return ok ? 0 : oom(c);
            }
            if (!child) {
                if (is_index(next, (size_t)next_len, NULL))
                    return set_fail(c, k, path, "missing (expected an "
                                    "existing array to index)");
                child = cJSON_CreateObject();
                if (!child || record(c, child, NO_POS, NO_POS, NULL, k) ||
                    !cJSON_AddItemToObject(cur, seg, child)) {
                    cJSON_Delete(child);
                    return oom(c);
                }
            }
        }
        if (!cJSON_IsObject(child) && !cJSON_IsArray(child))
            return set_fail(c, k, path, "wrong type: %s (expected an "
                            "object or an array to hold \"%.*s\")",
                            type_name(child), next_len, next);
        cur = child;
    }
}

/* Applies override k, "a.b.c=value", to the tree under root.  The value
 * is JSON if it is strict JSON, else the text as a string. */
static int apply_set(ctx *c, cJSON *root, int k) {
    const char *s = c->sets[k], *eq = strchr(s, '=');
    if (!eq)
        return set_fail(c, k, NULL, "missing '=' (expected key.path=value)");
    size_t n = (size_t)(eq - s);
    if (n == 0)
        return set_fail(c, k, NULL, "empty key (expected key.path=value)");
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.' && (i == 0 || i == n - 1 || s[i + 1] == '.'))
            return set_fail(c, k, NULL, "empty key segment (expected "
                            "key.path=value)");
    char *keys = strndup(s, n);
    if (!keys) return oom(c);
    const char *text = eq + 1;
    json_doc d;
    size_t at;
    char m[128];
    cJSON *val = NULL;
    int rc = json_parse(text, strlen(text), &d, &at, m, sizeof m);
    if (rc == 0) {
        val = d.root;
        d.root = NULL;
        if (file_doc(c, &d, text, k)) rc = oom(c);
        json_doc_free(&d);
    } else if (rc == MSG_EINPUT) { /* not JSON: the text as a string */
        val = cJSON_CreateString(text);
        rc = !val || record(c, val, NO_POS, NO_POS, NULL, k) ? oom(c) : 0;
    } else {
        rc = oom(c);
    }
    if (!rc) rc = set_at(c, k, root, keys, val);
    if (rc) cJSON_Delete(val);
    free(keys);
    return rc;
}

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
    for (int i = 0; i < SCN_MAX_WORKERS; i++) c->ring_order[i] = i;

    c->sched = (sched_spec){.method = SCHED_STREAMING, .layers = 24,
                            .H = 100, .P = 1, .tau = 0, .alpha = 0.5,
                            .layout = SCHED_STRIDED,
                            .order = SCHED_ASCENDING};
    c->codec = (codec_spec){CODEC_BF16, 0};
    c->dp_codec = (codec_spec){CODEC_BF16, 0};
    c->late = SCN_LATE_WAIT;
    c->sync_timeout_s = 0;

    c->faults = (faults_spec){.mtbf_s = 0, .mttr_s = 3600,
                              .dist = FAULTS_EXPONENTIAL,
                              .weibull_shape = 1.5, .trace = NULL};
    c->trace_path[0] = 0;
    c->checkpoint_steps = 100;
    c->recovery_bytes_per_param = 4;

    c->steps = 1000;
    c->seed = 1;
    c->measure = SCN_MEASURE_RUN;

    c->has_train = 0;
    train_config_default(&c->train);
    c->train_data_path[0] = 0;
    c->train_eval = SCN_EVAL_OUTER;
    c->target_loss = NAN;
}

double scn_step_time_s(const scn_config *c) {
    if (c->step_time_s > 0) return c->step_time_s;
    return 6 * c->params * c->tokens_per_step /
           (c->chips * c->peak_tflops * 1e12 * c->mfu);
}

/* Pass 1 over text (NUL-terminated, len bytes, BOM included): *root
 * receives the tree, an object, with every node filed.  On error *root is
 * NULL; either way the caller frees the positions. */
static int parse_doc(ctx *c, const char *text, size_t len, cJSON **root) {
    *root = NULL;
    size_t bom = json_bom(text, len);
    text += bom, len -= bom;
    c->text = text;
    json_doc d;
    size_t at;
    char msg[128];
    int rc = json_parse(text, len, &d, &at, msg, sizeof msg);
    if (rc == MSG_ENOMEM) return oom(c);
    if (rc) {
        int line, col;
        json_line_col(text, at, &line, &col);
        return set_err(c, "%s:%d:%d: syntax error (%s)", c->name, line, col,
                       msg);
    }
    if (file_doc(c, &d, text, -1)) {
        json_doc_free(&d);
        return oom(c);
    }
    if (!cJSON_IsObject(d.root)) {
        fail(c, d.root, 0, "", "wrong type: %s (expected an object)",
             type_name(d.root));
        json_doc_free(&d);
        return c->rc;
    }
    *root = d.root;
    d.root = NULL;
    json_doc_free(&d);
    return 0;
}

/* The digest of the resolved document: its compact print without the
 * "variants" and "sweep" sections (scn_digest_bytes).  Returns 0,
 * or -1 when out of memory. */
static int digest_doc(const cJSON *root, uint64_t *out) {
    cJSON *copy = cJSON_Duplicate(root, 1);
    if (!copy) return -1;
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "variants");
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "sweep");
    char *text = cJSON_PrintUnformatted(copy);
    cJSON_Delete(copy);
    if (!text) return -1;
    *out = scn_digest_bytes(text, strlen(text));
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

/* Pass 4 over the resolved tree: *out on success only. */
static int validate(ctx *c, const cJSON *root, scn_config *out) {
    scn_config cfg;
    scn_defaults(&cfg);
    if (load_object(c, root, "", root_fields, &cfg) ||
        check_model(c, root, &cfg) || check_method(c, root, &cfg) ||
        check_network(c, root, &cfg) || check_run(c, root, &cfg) || check_faults(c, root, &cfg) ||
        scn__check_train(c, root, &cfg))
        return c->rc ? c->rc : MSG_EINPUT;
    if (digest_doc(root, &cfg.digest)) return oom(c);
    *out = cfg;
    return 0;
}

/* ---------------------------------------------------------------------
 * Reading the input
 */

/* "NAME: larger than 16 MiB (expected a scenario of at most N bytes)". */
static int too_big(const char *name, const char *what, size_t max, char *err,
                   size_t errlen) {
    char mib[MSG_NUM_MAX];
    msg_number((double)max / (1 << 20), mib);
    return msg_set(err, errlen, MSG_EINPUT, "%s: larger than %s MiB "
                   "(expected a %s of at most %zu bytes)", name, mib, what,
                   max);
}

/* Reads the file `path` ("-": standard input) into *buf (NUL-terminated,
 * *len bytes), refusing more than max bytes before reading them when the
 * size is known.  `what` names the file's kind in messages ("scenario").
 * name is the file's name in messages.  Returns 0 or the code, with the
 * message in err. */
static int read_input(const char *path, const char *name, const char *what,
                      size_t max, char **buf, size_t *len, char *err,
                      size_t errlen) {
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return msg_set(err, errlen, MSG_EINPUT, "%s: cannot open: %s", name,
                       strerror(errno));
    struct stat st;
    if (!is_stdin && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
        (uintmax_t)st.st_size > max) {
        fclose(f);
        return too_big(name, what, max, err, errlen);
    }
    char *b = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (cap - n < 2) {
            size_t want = cap ? 2 * cap : 4096;
            if (want > max + 2) want = max + 2;
            char *nb = want > cap ? realloc(b, want) : NULL;
            if (!nb) {
                rc = want > cap ? MSG_ENOMEM : MSG_EINPUT;
                break;
            }
            b = nb, cap = want;
        }
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (n > max) {
            rc = MSG_EINPUT;
            break;
        }
        if (got == 0) break;
    }
    int bad = !rc && ferror(f), e = errno;
    if (!is_stdin) fclose(f);
    if (rc || bad) {
        free(b);
        if (rc == MSG_ENOMEM)
            return msg_set(err, errlen, rc, "%s: out of memory", name);
        if (rc) return too_big(name, what, max, err, errlen);
        return msg_set(err, errlen, MSG_EINPUT, "%s: cannot read: %s", name,
                       strerror(e));
    }
    b[n] = 0;
    *buf = b, *len = n;
    return 0;
}

/* ---------------------------------------------------------------------
 * Documents: parsed once, loaded many times
 */
struct scn_doc {
    char *name;           /* the file's name in messages */
    char *buf;            /* its bytes */
    size_t len;
    size_t dirlen;        /* name[0..dirlen) is its directory; 0: cwd */
    const char *text;     /* buf past a BOM */
    char *variant;        /* the merged variant, or NULL */
    char **sets;          /* copies of the overrides */
    int nset;
    cJSON *root;          /* the resolved tree */
    pos *pos;             /* its positions */
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
    return (ctx){.name = d->name, .text = d->text, .dir = d->name,
                 .dirlen = d->dirlen, .variant = d->variant, .err = err,
                 .errlen = errlen};
}

/* Passes 1 to 3 into d: parse, merge the variant, apply the overrides. */
static int doc_resolve(scn_doc *d, const char *variant,
                       const char *const *sets, int nset, char *err,
                       size_t errlen) {
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
    int rc = parse_doc(&c, d->buf, d->len, &root);
    d->text = c.text;
    if (!rc && d->variant) rc = merge_variant(&c, root, d->variant);
    for (int i = 0; !rc && i < nset; i++) rc = apply_set(&c, root, i);
    if (rc) {
        cJSON_Delete(root);
        free_positions(&c);
        return c.rc ? c.rc : rc;
    }
    d->root = root;
    d->pos = c.pos, d->npos = c.npos, d->index = c.index;
    return 0;
}

/* Opens path ("-": standard input) into *out: 0 or the code. */
int scn_doc_open(const char *path, const char *variant,
                 const char *const *sets, int nset, scn_doc **out, char *err,
                 size_t errlen) {
    int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    char *buf;
    size_t len;
    *out = NULL;
    int rc = read_input(path, name, "scenario", SCN_MAX_BYTES, &buf, &len,
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
        return too_big(name, "scenario", SCN_MAX_BYTES, err, errlen);
    char *buf = malloc(len + 1);
    if (!buf) return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", name);
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

int scn_doc_load_from(const scn_doc *d, const char *const *more,
                      const scn_origin *from, int nmore, scn_config *out,
                      char *err, size_t errlen) {
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
    for (int i = d->nset; !rc && i < n; i++) rc = apply_set(&c, root, i);
    if (!rc) rc = validate(&c, root, out);
    cJSON_Delete(root);
    free_positions(&c);
    free(sets);
    return rc ? (c.rc ? c.rc : rc) : 0;
}

int scn_load_string(const char *text, const char *name,
                    const char *const *sets, int nset, scn_config *out,
                    char *err, size_t errlen) {
    scn_doc *d;
    int rc = doc_open_string(text, name ? name : "<string>", sets, nset, &d,
                             err, errlen);
    if (rc) return rc;
    rc = scn_doc_load(d, NULL, 0, out, err, errlen);
    scn_doc_free(d);
    return rc;
}

int scn_load_variant(const char *path, const char *variant,
                     const char *const *sets, int nset, scn_config *out,
                     char *err, size_t errlen) {
    scn_doc *d;
    int rc = scn_doc_open(path, variant, sets, nset, &d, err, errlen);
    if (rc) return rc;
    rc = scn_doc_load(d, NULL, 0, out, err, errlen);
    scn_doc_free(d);
    return rc;
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
    else if (!(rc = parse_doc(&c, buf, len, &root))) {
        const cJSON *vs = get(root, "variants"), *sw = get(root, "sweep");
        rc = (vs && check_section(&c, vs, &S_VARIANTS, m)) ||
                     (sw && check_section(&c, sw, &S_SWEEP, m))
                 ? c.rc : 0;
    }
    if (!rc) *meta = *m;
    cJSON_Delete(root);
    free_positions(&c);
    free(m);
    return rc;
}

int scn_meta_load(const char *path, scn_meta *meta, char *err,
                  size_t errlen) {
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    char *buf;
    size_t len;
    int rc = read_input(path, name, "scenario", SCN_MAX_BYTES, &buf, &len,
                        err, errlen);
    if (rc) return rc;
    rc = meta_of(name, buf, len, meta, err, errlen);
    free(buf);
    return rc;
}

int scn_doc_meta(const scn_doc *d, scn_meta *meta, char *err,
                 size_t errlen) {
    return meta_of(d->name, d->buf, d->len, meta, err, errlen);
}
