/*
 * scenario.c -- a scenario file (JSON) turned into a validated scn_config.
 *
 * The work is done in passes over one document:
 *
 *   1. scan     a strict JSON scanner (RFC 8259) checks the syntax with
 *               exact positions and records the offset of every key and
 *               value in document order.  cJSON alone would not do: it
 *               is lenient ("012", "1.", raw newlines in strings) and puts
 *               some syntax errors at the end of the input (a trailing
 *               comma), which is no help in a file of fifty lines.
 *   2. parse    cJSON builds the tree.  Whatever the scanner accepts cJSON
 *               accepts with the same structure, so
 *   3. locate   walks the tree and the offsets in lockstep (cJSON keeps
 *               members and items in document order, duplicates too) and
 *               files each node's key and value offsets in a side table.
 *   3b. merge   (scn_load_variant) deep-merges the named variant of the
 *               "variants" section into the root: its nodes move, keeping
 *               their filed offsets, and are marked, so errors about them
 *               point into the variant and read variants.NAME.json.path.
 *   4. override applies the "a.b.c=value" overrides to the tree; the nodes
 *               they create are filed as "made by override k", so errors
 *               about them name the override instead of a line.
 *   5. validate walks the tables below (one per JSON object: key, type,
 *               range, where the value goes in scn_config), then checks
 *               what spans several keys: FLOP-derived step time, split,
 *               the schedule (sched_normalize), trace versus MTBF, and the
 *               train section (the trained model, its data and optimizer,
 *               the schedule against its blocks), which is then completed
 *               with the scenario's shared keys (replicas, steps, seed,
 *               schedule, codecs).
 *
 * Every error stops the load and leaves one line in err:
 *     file:line:col: json.path: what is wrong (expected ...)
 *     --set a.b.c=value: json.path: what is wrong (expected ...)
 *     file:line:col: syntax error (what is wrong; expected ...)
 *     file: cannot open: reason
 * Lines and columns count from 1; a column counts characters (UTF-8 code
 * points, a tab is one).  The position is that of the offending value; of
 * the key for an unknown or duplicate key; of the enclosing object's "{"
 * for a missing key.  On error *out is left untouched: the config is built
 * in a local copy and copied out only on success.
 *
 * The "variants" and "sweep" sections are checked for shape only (object
 * of objects with valid names; object of key: spec string or array of
 * scalars), by every load and by scn_meta_load.
 *
 * No global state: everything lives in a ctx on the caller's stack (cJSON
 * itself keeps its last parse error in a global, which we never read).
 */
#include "scenario.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/rng.h"

#define NO_POS ((size_t)-1)
#define PATH_LEN 512
#define MAX_DEPTH 100              /* nesting levels the scanner accepts */
#define MAX_NUMBER_LEN 63          /* longest number token cJSON reads */
#define EXACT_INT 9007199254740992.0 /* 2^53: doubles are exact up to it */

/* ---------------------------------------------------------------------
 * Messages
 */

/* x as "%.15g", or "%.17g" when that does not read back as x. */
static const char *fmt_num(double x, char buf[32]) {
    snprintf(buf, 32, "%.15g", x);
    if (strtod(buf, NULL) != x) snprintf(buf, 32, "%.17g", x);
    return buf;
}

/* Describes the character at p for "unexpected ..." messages. */
static const char *fmt_char(const char *p, char buf[16]) {
    unsigned char ch = (unsigned char)*p;
    if (ch == 0) snprintf(buf, 16, "end of input");
    else if (ch >= 0x20 && ch < 0x7f) snprintf(buf, 16, "'%c'", ch);
    else snprintf(buf, 16, "byte 0x%02x", ch);
    return buf;
}

/* 1-based line and column (in code points) of offset off in text. */
static void line_col(const char *text, size_t off, int *line, int *col) {
    *line = 1, *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '\n') ++*line, *col = 1;
        else if ((ch & 0xc0) != 0x80) ++*col; /* not a continuation byte */
    }
}

/* Messages are one line: control characters (from keys, values, names)
 * become '?'. */
static void one_line(char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

/* ---------------------------------------------------------------------
 * Pass 1: the strict scanner.
 *
 * With keep set, offs[] receives 2*offset + 1 for a key and 2*offset for a
 * value, in document order.  What it accepts, cJSON accepts with the same
 * structure: it is stricter everywhere (whitespace, numbers, escapes,
 * surrogates, number length, depth).
 */
typedef struct {
    const char *t;
    size_t i;
    int depth;
    int keep;            /* record offsets (else: syntax check only) */
    size_t *offs, n, cap;
    int oom;
    size_t err_at;       /* offset of the first syntax error */
    char msg[128];       /* its description */
} scanner;

static int syn_err(scanner *s, size_t at, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    va_end(ap);
    s->err_at = at;
    return -1;
}

static int unexpected(scanner *s, const char *expected) {
    char b[16];
    return syn_err(s, s->i, "unexpected %s; expected %s",
                   fmt_char(s->t + s->i, b), expected);
}

static int note(scanner *s, size_t off, int is_key) {
    if (!s->keep) return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        size_t *o = realloc(s->offs, cap * sizeof *o);
        if (!o) {
            s->oom = 1;
            return syn_err(s, off, "out of memory");
        }
        s->offs = o, s->cap = cap;
    }
    s->offs[s->n++] = 2 * off + (size_t)is_key;
    return 0;
}

static void skip_ws(scanner *s) {
    while (s->t[s->i] == ' ' || s->t[s->i] == '\t' || s->t[s->i] == '\n' ||
           s->t[s->i] == '\r')
        s->i++;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           is_digit(c) || c == '_';
}

static int hex4(const char *p, unsigned *out) {
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p[k];
        int d = is_digit(c)              ? c - '0'
                : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                         : -1;
        if (d < 0) return -1;
        v = 16 * v + (unsigned)d;
    }
    *out = v;
    return 0;
}

static int scan_string(scanner *s) {
    size_t start = s->i++;
    for (;;) {
        unsigned char c = (unsigned char)s->t[s->i];
        if (c == '"') break;
        if (c == 0) return syn_err(s, start, "unterminated string");
        if (c < 0x20)
            return syn_err(s, s->i, "raw control character 0x%02x in "
                           "string; expected an escape such as \\n", c);
        if (c != '\\') {
            s->i++;
            continue;
        }
        size_t esc = s->i;
        c = (unsigned char)s->t[++s->i];
        if (c && strchr("\"\\/bfnrt", c)) {
            s->i++;
            continue;
        }
        unsigned u, lo;
        if (c != 'u' || hex4(s->t + s->i + 1, &u))
            return syn_err(s, esc, "invalid escape; expected one of \\\" "
                           "\\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
        s->i += 5;
        /* cJSON refuses unpaired UTF-16 surrogates: so do we. */
        if (u >= 0xdc00 && u <= 0xdfff)
            return syn_err(s, esc, "unpaired UTF-16 surrogate in \\u escape");
        if (u >= 0xd800 && u <= 0xdbff) {
            if (s->t[s->i] != '\\' || s->t[s->i + 1] != 'u' ||
                hex4(s->t + s->i + 2, &lo) || lo < 0xdc00 || lo > 0xdfff)
                return syn_err(s, esc,
                               "unpaired UTF-16 surrogate in \\u escape");
            s->i += 6;
        }
    }
    s->i++;
    return 0;
}

static int scan_number(scanner *s) {
    const char *t = s->t;
    size_t st = s->i, i = s->i;
    int ok = 1;
    if (t[i] == '-') i++;
    if (t[i] == '0') i++;
    else if (is_digit(t[i])) while (is_digit(t[i])) i++;
    else ok = 0;
    if (ok && t[i] == '.') {
        if (!is_digit(t[++i])) ok = 0;
        while (is_digit(t[i])) i++;
    }
    if (ok && (t[i] == 'e' || t[i] == 'E')) {
        i++;
        if (t[i] == '+' || t[i] == '-') i++;
        if (!is_digit(t[i])) ok = 0;
        while (is_digit(t[i])) i++;
    }
    /* "012", "1.2.3", "1x": the token must end here. */
    if (is_digit(t[i]) || is_word(t[i]) || t[i] == '.' || t[i] == '+' ||
        t[i] == '-')
        ok = 0;
    if (!ok) return syn_err(s, st, "invalid number");
    if (i - st > MAX_NUMBER_LEN)
        return syn_err(s, st, "number longer than %d characters",
                       MAX_NUMBER_LEN);
    s->i = i;
    return 0;
}

static int scan_literal(scanner *s) {
    static const char *const words[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(words[k]);
        char next = s->t[s->i + n];
        if (strncmp(s->t + s->i, words[k], n) == 0 && !is_word(next)) {
            s->i += n;
            return 0;
        }
    }
    return syn_err(s, s->i, "invalid literal; expected true, false or null");
}

static int scan_value(scanner *s);

static int scan_container(scanner *s, char close) {
    int object = close == '}';
    if (++s->depth > MAX_DEPTH)
        return syn_err(s, s->i, "nesting deeper than %d levels", MAX_DEPTH);
    s->i++;
    skip_ws(s);
    if (s->t[s->i] == close) {
        s->i++, s->depth--;
        return 0;
    }
    for (int first = 1;; first = 0) {
        skip_ws(s);
        if (object) {
            if (s->t[s->i] != '"')
                return unexpected(s, first ? "a string key or '}'"
                                           : "a string key after ','");
            if (note(s, s->i, 1) || scan_string(s)) return -1;
            skip_ws(s);
            if (s->t[s->i] != ':') return unexpected(s, "':'");
            s->i++;
        }
        if (scan_value(s)) return -1;
        skip_ws(s);
        if (s->t[s->i] == close) break;
        if (s->t[s->i] != ',')
            return unexpected(s, object ? "',' or '}'" : "',' or ']'");
        s->i++;
    }
    s->i++, s->depth--;
    return 0;
}

static int scan_value(scanner *s) {
    skip_ws(s);
    char c = s->t[s->i];
    if (c == '{' || c == '[' || c == '"' || c == '-' || is_digit(c) ||
        c == 't' || c == 'f' || c == 'n')
        if (note(s, s->i, 0)) return -1;
    switch (c) {
    case '{': return scan_container(s, '}');
    case '[': return scan_container(s, ']');
    case '"': return scan_string(s);
    case 't': case 'f': case 'n': return scan_literal(s);
    default:
        if (c == '-' || is_digit(c)) return scan_number(s);
        return unexpected(s, "a value");
    }
}

/* Scans a whole document: one value, then only whitespace. */
static int scan_document(scanner *s) {
    skip_ws(s);
    if (s->t[s->i] == 0)
        return syn_err(s, s->i, "empty input; expected a JSON object");
    if (scan_value(s)) return -1;
    skip_ws(s);
    if (s->t[s->i] != 0) {
        char b[16];
        return syn_err(s, s->i, "unexpected %s after the document; "
                       "expected end of input", fmt_char(s->t + s->i, b));
    }
    return 0;
}

/* Strict JSON check of a whole string (for override values). */
static int is_json(const char *text) {
    scanner s = {.t = text, .keep = 0};
    return scan_document(&s) == 0;
}

/* ---------------------------------------------------------------------
 * The load context and the position table
 */
typedef struct {
    const cJSON *node;
    size_t key, val;  /* offsets in the text, NO_POS for none */
    int set;          /* the override that made the node, or -1 */
    int in_variant;   /* 1: the node came from the merged variant */
} pos;

typedef struct {
    const char *name;         /* file name in messages */
    const char *text;         /* the document (past a UTF-8 BOM) */
    const char *dir;          /* prefix for relative trace paths, or NULL */
    size_t dirlen;
    const char *const *sets;  /* the overrides, for messages */
    const char *variant;      /* the merged variant, or NULL */
    pos *pos;
    size_t npos, cap;
    char *err;
    size_t errlen;
} ctx;

static int set_err(ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (c->errlen) vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    if (c->errlen) one_line(c->err);
    return -1;
}

static int oom(ctx *c) { return set_err(c, "%s: out of memory", c->name); }

static int record(ctx *c, const cJSON *node, size_t key, size_t val,
                  int set) {
    if (c->npos == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        pos *p = realloc(c->pos, cap * sizeof *p);
        if (!p) return -1;
        c->pos = p, c->cap = cap;
    }
    c->pos[c->npos++] = (pos){node, key, val, set, 0};
    return 0;
}

/* Searching from the end finds the newest entry: a node freed by an
 * override may share its address with a node made later, which is always
 * filed after it. */
static const pos *lookup(const ctx *c, const cJSON *node) {
    for (size_t k = c->npos; k-- > 0;)
        if (c->pos[k].node == node) return &c->pos[k];
    return NULL;
}

/* Files node and its descendants as made by override k. */
static int tag_override(ctx *c, const cJSON *node, int k) {
    if (record(c, node, NO_POS, NO_POS, k)) return -1;
    for (const cJSON *ch = node->child; ch; ch = ch->next)
        if (tag_override(c, ch, k)) return -1;
    return 0;
}

/* Pass 3: files node (and its subtree) with the scanner's offsets. */
static int locate(ctx *c, const cJSON *node, size_t key, const size_t *offs,
                  size_t n, size_t *k) {
    if (*k >= n || offs[*k] % 2) return 1; /* out of step: a bug */
    if (record(c, node, key, offs[(*k)++] / 2, -1)) return -1;
    int object = cJSON_IsObject(node);
    if (!object && !cJSON_IsArray(node)) return 0;
    for (const cJSON *ch = node->child; ch; ch = ch->next) {
        size_t ko = NO_POS;
        if (object) {
            if (*k >= n || offs[*k] % 2 == 0) return 1;
            ko = offs[(*k)++] / 2;
        }
        int r = locate(c, ch, ko, offs, n, k);
        if (r) return r;
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

static void join_key(char out[PATH_LEN], const char *base, const char *key) {
    join(out, base, *base ? "." : "", key);
}

static void join_index(char out[PATH_LEN], const char *base, int i) {
    char num[16];
    snprintf(num, sizeof num, "[%d]", i);
    join(out, base, "", num);
}

/* The error about node `at` (its key when at_key and it has one) whose
 * JSON path is `path` in the merged document.  A node that came from the
 * merged variant is named by its place in the file, variants.NAME.path.
 * Always returns -1. */
static int vfail(ctx *c, const cJSON *at, int at_key, const char *path,
                 const char *fmt, va_list ap) {
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (!*path) path = "(root)";
    const pos *p = lookup(c, at);
    char in_file[PATH_LEN], var[PATH_LEN];
    if (p && p->in_variant && c->variant) {
        join(var, "variants", ".", c->variant);
        join_key(in_file, var, path);
        path = in_file;
    }
    if (p && p->set >= 0)
        return set_err(c, "--set %s: %s: %s", c->sets[p->set], path, msg);
    if (!p) return set_err(c, "%s: %s: %s", c->name, path, msg);
    int line, col;
    line_col(c->text, at_key && p->key != NO_POS ? p->key : p->val, &line,
             &col);
    return set_err(c, "%s:%d:%d: %s: %s", c->name, line, col, path, msg);
}

static int fail(ctx *c, const cJSON *at, int at_key, const char *path,
                const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(c, at, at_key, path, fmt, ap);
    va_end(ap);
    return rc;
}

/* Whether a comes after b: in the file by offset, the merged variant
 * after the base, overrides after both and in their order. */
static int is_later(const ctx *c, const cJSON *a, const cJSON *b) {
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

static const cJSON *get(const cJSON *obj, const char *key) {
    return obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* ---------------------------------------------------------------------
 * The schema as tables
 */
typedef struct {
    double lo, hi;             /* hi INFINITY: no upper bound */
    unsigned char lo_open, hi_open, integer;
} range;

#define GT(x) {.lo = x, .hi = INFINITY, .lo_open = 1}
#define GE(x) {.lo = x, .hi = INFINITY}
#define IN(a, b) {.lo = a, .hi = b}
#define OC(a, b) {.lo = a, .hi = b, .lo_open = 1}
#define CO(a, b) {.lo = a, .hi = b, .hi_open = 1}
#define OO(a, b) {.lo = a, .hi = b, .lo_open = 1, .hi_open = 1}
#define INT(a, b) {.lo = a, .hi = b, .integer = 1}

typedef struct {
    const char *names;         /* for messages; NULL: codec_names() */
    int (*parse)(const char *name, void *out); /* 0, or -1 if unknown */
} enum_def;

typedef enum {
    F_NUM,     /* double */
    F_INT,     /* int */
    F_I64,     /* int64_t */
    F_U64,     /* uint64_t */
    F_ENUM,    /* an enum, through enum_def.parse */
    F_STR,     /* a string, checked only (annotations, paths) */
    F_BOOL,    /* int: true 1, false 0 */
    F_FLAGS,   /* unsigned: an array of distinct enum_def names, bit i
                  set for the name parsed as i */
    F_OBJ,     /* a nested object with its own table */
    F_WORKERS, /* double[SCN_MAX_WORKERS]: one value, or workers.count */
    F_VARIANTS,/* the variants section: its shape only */
    F_SWEEP,   /* the sweep section: its shape only */
} ftype;

typedef struct field {
    const char *key;
    ftype type;
    size_t off;             /* where the value goes in scn_config */
    size_t off2;            /* F_WORKERS: a second copy (0: none; offset 0
                               is params, never a copy target) */
    range r;                /* F_NUM, F_INT, F_I64, F_U64, F_WORKERS */
    double scale;           /* F_NUM: stored = given * scale (0: 1) */
    int inf_ok;             /* F_WORKERS: the string "inf" is INFINITY */
    const enum_def *e;      /* F_ENUM, F_FLAGS */
    const struct field *sub;/* F_OBJ */
} field;

#define AT(m) offsetof(scn_config, m)
#define K_NUM(k, m, rng) {.key = k, .type = F_NUM, .off = AT(m), .r = rng}
#define K_INT(k, m, a, b) \
    {.key = k, .type = F_INT, .off = AT(m), .r = INT(a, b)}
#define K_I64(k, m, a, b) \
    {.key = k, .type = F_I64, .off = AT(m), .r = INT(a, b)}
#define K_U64(k, m, a, b) \
    {.key = k, .type = F_U64, .off = AT(m), .r = INT(a, b)}
#define K_ENUM(k, m, def) {.key = k, .type = F_ENUM, .off = AT(m), .e = &def}
#define K_STR(k) {.key = k, .type = F_STR}
#define K_BOOL(k, m) {.key = k, .type = F_BOOL, .off = AT(m)}
#define K_FLAGS(k, m, def) {.key = k, .type = F_FLAGS, .off = AT(m), .e = &def}
#define K_OBJ(k, tab) {.key = k, .type = F_OBJ, .sub = tab}
#define K_WORKERS(k, m, rng) \
    {.key = k, .type = F_WORKERS, .off = AT(m), .r = rng}
#define K_END {.key = NULL}

/* The typed parsers behind a void * (the field's type is the enum's). */
static int p_codec(const char *s, void *o) { return codec_parse(s, o); }
static int p_method(const char *s, void *o) {
    return sched_parse_method(s, o);
}
static int p_layout(const char *s, void *o) {
    return sched_parse_layout(s, o);
}
static int p_order(const char *s, void *o) { return sched_parse_order(s, o); }
static int p_coll(const char *s, void *o) { return coll_parse_algo(s, o); }
static int p_dist(const char *s, void *o) { return faults_parse_dist(s, o); }
static int p_bwd(const char *s, void *o) {
    scn_bwd_order *b = o;
    if (strcmp(s, "activations_first") == 0) *b = SCN_ACT_FIRST;
    else if (strcmp(s, "parameters_first") == 0) *b = SCN_PARAM_FIRST;
    else return -1;
    return 0;
}

static const enum_def E_CODEC = {NULL, p_codec};
static const enum_def E_METHOD = {"dp, diloco, streaming", p_method};
static const enum_def E_LAYOUT = {"sequential, strided", p_layout};
static const enum_def E_ORDER = {"ascending, rotated", p_order};
static const enum_def E_COLL = {"ring, all_to_all, star", p_coll};
static const enum_def E_DIST = {"exponential, weibull", p_dist};
static const enum_def E_BWD = {"activations_first, parameters_first", p_bwd};

/* Enums parsed from a fixed list of names, in enum order. */
static int p_names(const char *s, void *o, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return *(int *)o = i, 0;
    return -1;
}
static int p_reduce(const char *s, void *o) {
    static const char *const n[] = {"fifo", "forward_first"};
    return p_names(s, o, n, 2);
}
static int p_gbit(const char *s, void *o) {
    static const char *const n[] = {"si", "binary"};
    return p_names(s, o, n, 2);
}
static const enum_def E_REDUCE = {"fifo, forward_first", p_reduce};
static const enum_def E_GBIT = {"si, binary", p_gbit};

/* The train section's enums. */
static int p_nn_kind(const char *s, void *o) {
    static const char *const n[] = {"transformer", "mlp"};
    int i;
    if (p_names(s, &i, n, 2)) return -1;
    *(nn_kind *)o = i == 0 ? NN_TRANSFORMER : NN_MLP;
    return 0;
}
static int p_data_kind(const char *s, void *o) {
    static const char *const n[] = {"markov", "text"};
    int i;
    if (p_names(s, &i, n, 2)) return -1;
    *(data_kind *)o = i == 0 ? DATA_MARKOV : DATA_TEXT;
    return 0;
}
static int p_optim(const char *s, void *o) { /* OPTIM_ADAMW 0, SGD 1 */
    static const char *const n[] = {"adamw", "sgd"};
    return p_names(s, o, n, 2);
}
static int p_units(const char *s, void *o) { /* TRAIN_MAP_JOIN 0, OWN 1 */
    static const char *const n[] = {"join", "own"};
    return p_names(s, o, n, 2);
}
static int p_eval(const char *s, void *o) { /* bit i: SCN_EVAL_* */
    static const char *const n[] = {"outer", "replica", "average"};
    return p_names(s, o, n, 3);
}
static const enum_def E_NN_KIND = {"transformer, mlp", p_nn_kind};
static const enum_def E_DATA_KIND = {"markov, text", p_data_kind};
static const enum_def E_OPTIM = {"adamw, sgd", p_optim};
static const enum_def E_UNITS = {"join, own", p_units};
static const enum_def E_EVAL = {"outer, replica, average", p_eval};

static const field split_fields[] = {
    K_NUM("forward", split[0], GE(0)),
    K_NUM("backward_activations", split[1], GE(0)),
    K_NUM("backward_parameters", split[2], GE(0)),
    K_END};

/* step_time_s versus the four FLOP keys, and split's sum: check_model. */
static const field model_fields[] = {
    K_NUM("params", params, GT(0)),
    K_INT("layers", layers, 1, 100000),
    K_NUM("step_time_s", step_time_s, GT(0)),
    K_NUM("tokens_per_step", tokens_per_step, GT(0)),
    K_NUM("chips", chips, GT(0)),
    K_NUM("peak_tflops", peak_tflops, GT(0)),
    K_NUM("mfu", mfu, OC(0, 1)),
    K_OBJ("split", split_fields),
    K_ENUM("backward_order", bwd_order, E_BWD),
    K_U64("hidden", hidden, 0, EXACT_INT),
    K_END};

static const field stragglers_fields[] = {
    K_NUM("probability", straggler_prob, IN(0, 1)),
    K_NUM("slowdown", straggler_slowdown, GE(1)),
    K_END};

/* count before speed: per-worker arrays are checked against it. */
static const field workers_fields[] = {
    K_INT("count", workers, 1, SCN_MAX_WORKERS),
    K_WORKERS("speed", speed, GT(0)),
    K_OBJ("stragglers", stragglers_fields),
    K_END};

/* bandwidth_gbps before up_gbps and down_gbps, which override it. */
static const field network_fields[] = {
    {.key = "bandwidth_gbps", .type = F_WORKERS, .off = AT(up_gbps),
     .off2 = AT(down_gbps), .r = GT(0), .inf_ok = 1},
    {.key = "up_gbps", .type = F_WORKERS, .off = AT(up_gbps), .r = GT(0),
     .inf_ok = 1},
    {.key = "down_gbps", .type = F_WORKERS, .off = AT(down_gbps),
     .r = GT(0), .inf_ok = 1},
    K_WORKERS("latency_ms", latency_ms, GE(0)),
    K_ENUM("collective", collective, E_COLL),
    K_ENUM("reduce_order", reduce_order, E_REDUCE),
    K_ENUM("gbit", gbit, E_GBIT),
    K_NUM("tcp_window_mb", tcp_window_mb, GE(0)),
    K_END};

/* The combination is checked by sched_normalize: check_method. */
static const field method_fields[] = {
    K_ENUM("name", sched.method, E_METHOD),
    K_INT("H", sched.H, 1, INT_MAX),
    K_INT("fragments", sched.P, 1, INT_MAX),
    K_ENUM("layout", sched.layout, E_LAYOUT),
    K_ENUM("order", sched.order, E_ORDER),
    K_INT("tau", sched.tau, 0, INT_MAX),
    K_NUM("alpha", sched.alpha, IN(0, 1)),
    K_ENUM("codec", codec.kind, E_CODEC),
    K_U64("codec_block", codec.block, 0, EXACT_INT),
    K_ENUM("dp_codec", dp_codec.kind, E_CODEC),
    K_END};

/* trace is resolved and checked against mtbf_hours in check_faults. */
static const field faults_fields[] = {
    {.key = "mtbf_hours", .type = F_NUM, .off = AT(faults.mtbf_s),
     .r = GE(0), .scale = 3600},
    {.key = "mttr_hours", .type = F_NUM, .off = AT(faults.mttr_s),
     .r = GT(0), .scale = 3600},
    K_ENUM("distribution", faults.dist, E_DIST),
    K_NUM("weibull_shape", faults.weibull_shape, GT(0)),
    K_STR("trace"),
    K_I64("checkpoint_steps", checkpoint_steps, 1, EXACT_INT),
    K_NUM("recovery_bytes_per_param", recovery_bytes_per_param, GE(0)),
    K_END};

/* The numerics ("train"): what spans several keys, the schedule against
 * the trained model and the keys shared with the timing half are
 * check_train's. */
static const field train_model_fields[] = {
    K_ENUM("kind", train.nn.kind, E_NN_KIND),
    K_INT("vocab", train.nn.vocab, 2, 1 << 24),
    K_INT("d", train.nn.d, 1, 1 << 16),
    K_INT("heads", train.nn.heads, 1, 1 << 16),
    K_INT("layers", train.nn.layers, 1, 10000),
    K_INT("ctx", train.nn.ctx, 1, 1 << 20),
    K_INT("mlp_ratio", train.nn.mlp_ratio, 1, 64),
    K_END};

static const field train_data_fields[] = {
    K_ENUM("kind", train.data.kind, E_DATA_KIND),
    K_INT("vocab", train.data.vocab, 2, 1 << 24),
    K_INT("successors", train.data.successors, 1, 1 << 24),
    K_NUM("skew", train.data.skew, IN(0, 1)),
    K_STR("path"),
    K_NUM("eval_fraction", train.data.eval_fraction, OO(0, 1)),
    K_END};

static const field train_inner_fields[] = {
    K_ENUM("optimizer", train.inner.kind, E_OPTIM),
    K_NUM("lr", train.inner.lr, GE(0)),
    K_NUM("lr_min", train.inner.lr_min, GE(0)),
    K_I64("warmup", train.inner.warmup, 0, 1e12),
    K_BOOL("cosine", train.inner.cosine),
    K_I64("total", train.inner.total, 0, 1e12),
    K_NUM("beta1", train.inner.beta1, CO(0, 1)),
    K_NUM("beta2", train.inner.beta2, CO(0, 1)),
    K_NUM("eps", train.inner.eps, GT(0)),
    K_NUM("weight_decay", train.inner.weight_decay, GE(0)),
    K_NUM("momentum", train.inner.momentum, CO(0, 1)),
    K_NUM("clip", train.inner.clip, GE(0)),
    K_END};

static const field train_outer_fields[] = {
    K_NUM("lr", train.outer_lr, GE(0)),
    K_NUM("momentum", train.outer_momentum, CO(0, 1)),
    K_END};

static const field train_fields[] = {
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
    K_END};

/* Sections first: workers.count must be known before network. */
static const field root_fields[] = {
    K_OBJ("model", model_fields),
    K_OBJ("workers", workers_fields),
    K_OBJ("network", network_fields),
    K_OBJ("method", method_fields),
    K_OBJ("faults", faults_fields),
    K_OBJ("train", train_fields),
    K_I64("steps", steps, 1, 1e12),
    K_U64("seed", seed, 0, EXACT_INT),
    K_STR("name"),
    K_STR("description"),
    {.key = "variants", .type = F_VARIANTS},
    {.key = "sweep", .type = F_SWEEP},
    K_END};

/* ---------------------------------------------------------------------
 * Pass 5: validation, driven by the tables
 */

/* "a number > 0", "an integer in 1..256", "a number in (0, 1]". */
static const char *describe(const range *r, char buf[96]) {
    char lo[32], hi[32];
    fmt_num(r->lo, lo);
    fmt_num(r->hi, hi);
    if (r->integer)
        snprintf(buf, 96, "an integer in %s..%s", lo, hi);
    else if (isinf(r->hi))
        snprintf(buf, 96, "a number %s %s", r->lo_open ? ">" : ">=", lo);
    else
        snprintf(buf, 96, "a number in %c%s, %s%c", r->lo_open ? '(' : '[',
                 lo, hi, r->hi_open ? ')' : ']');
    return buf;
}

/* Checks that v is a finite number in r; `expected` ends the messages. */
static int check_number(ctx *c, const cJSON *v, const char *path,
                        const range *r, const char *expected, double *out) {
    char b[32];
    if (!cJSON_IsNumber(v))
        return fail(c, v, 0, path, "wrong type: %s (expected %s)",
                    type_name(v), expected);
    double x = v->valuedouble;
    if (!isfinite(x))
        return fail(c, v, 0, path, "not a finite number (expected %s)",
                    expected);
    if (r->integer && x != floor(x))
        return fail(c, v, 0, path, "%s is not an integer (expected %s)",
                    fmt_num(x, b), expected);
    if (x < r->lo || (r->lo_open && x == r->lo) || x > r->hi ||
        (r->hi_open && x == r->hi))
        return fail(c, v, 0, path, "%s is out of range (expected %s)",
                    fmt_num(x, b), expected);
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
    case F_VARIANTS:
        return check_section(c, v, &S_VARIANTS, NULL);
    case F_SWEEP:
        return check_section(c, v, &S_SWEEP, NULL);
    }
    return 0;
}

/* Rejects member m of obj (path p) when an earlier member has its key. */
static int check_dup(ctx *c, const cJSON *obj, const cJSON *m,
                     const char *p) {
    for (const cJSON *e = obj->child; e != m; e = e->next) {
        if (strcmp(e->string, m->string) != 0) continue;
        const pos *first = lookup(c, e);
        int line, col;
        if (!first || first->key == NO_POS)
            return fail(c, m, 1, p, "duplicate key");
        line_col(c->text, first->key, &line, &col);
        return fail(c, m, 1, p, "duplicate key (first given at %d:%d)",
                    line, col);
    }
    return 0;
}

/* Rejects unknown and duplicate keys, in document order. */
static int check_keys(ctx *c, const cJSON *obj, const char *path,
                      const field *fields) {
    char p[PATH_LEN];
    for (const cJSON *m = obj->child; m; m = m->next) {
        join_key(p, path, m->string);
        const field *f = fields;
        while (f->key && strcmp(f->key, m->string) != 0) f++;
        if (!f->key) {
            char keys[512] = "";
            size_t n = 0;
            for (f = fields; f->key && n < sizeof keys; f++)
                n += (size_t)snprintf(keys + n, sizeof keys - n, "%s%s",
                                      f == fields ? "" : ", ", f->key);
            return fail(c, m, 1, p, "unknown key (expected one of: %s)",
                        keys);
        }
        if (check_dup(c, obj, m, p)) return -1;
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
    int n = 0;
    for (const cJSON *m = v->child; m; m = m->next, n++) {
        join_key(p, s->name, m->string);
        if (check_dup(c, v, m, p)) return -1;
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
    return n == 0 || is_json(s) || strpbrk(s, ",\"[]{}") != NULL ||
           isspace((unsigned char)s[0]) || isspace((unsigned char)s[n - 1]);
}

/* Appends item e of a sweep array to spec (len bytes used) as the VALUE
 * of a --set: a number, true, false, or a string, JSON-quoted when it
 * needs quotes.  Returns 0, 1 when it does not fit, -1 out of memory. */
static int append_item(const cJSON *e, char *spec, size_t *len) {
    char b[32], *q = NULL;
    const char *t = cJSON_IsTrue(e) ? "true" : "false";
    if (cJSON_IsNumber(e)) t = fmt_num(e->valuedouble, b);
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
    if (meta) strcpy(meta->sweep_key[n], m->string);
    return 0;
}


/* ---------------------------------------------------------------------
 * Pass 3b: merging a variant
 */

/* Files node and its subtree as coming from the merged variant. */
static void mark_variant(ctx *c, const cJSON *node) {
    for (size_t k = c->npos; k-- > 0;)
        if (c->pos[k].node == node) {
            c->pos[k].in_variant = 1;
            break;
        }
    for (const cJSON *ch = node->child; ch; ch = ch->next)
        mark_variant(c, ch);
}

/* Deep-merges object src into object dst: a member that is an object on
 * both sides merges key by key, any other member of src moves into dst,
 * replacing dst's.  path is src's path in the merged document. */
static int merge(ctx *c, cJSON *dst, cJSON *src, const char *path) {
    char p[PATH_LEN];
    /* Duplicates first: a moved member is no longer there to compare. */
    for (const cJSON *m = src->child; m; m = m->next) {
        join_key(p, path, m->string);
        if (check_dup(c, src, m, p)) return -1;
    }
    for (cJSON *m = src->child, *next; m; m = next) {
        next = m->next;
        cJSON *d = cJSON_GetObjectItemCaseSensitive(dst, m->string);
        if (cJSON_IsObject(d) && cJSON_IsObject(m)) {
            join_key(p, path, m->string);
            if (merge(c, d, m, p)) return -1;
            continue;
        }
        cJSON_DetachItemViaPointer(src, m);
        if (d) {
            cJSON_ReplaceItemViaPointer(dst, d, m);
        } else if (!cJSON_AddItemToObject(dst, m->string, m)) {
            cJSON_Delete(m);
            return oom(c);
        }
    }
    return 0;
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
 * Pass 5, continued: what spans several keys
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
                    "= 1)", fmt_num(sum, b));
    return 0;
}

/* The schedule, through sched_normalize; its message is reported at the
 * key most responsible. */
static int check_method(ctx *c, const cJSON *root, scn_config *cfg) {
    sched_spec s = cfg->sched;
    char msg[256], p[PATH_LEN];
    s.layers = cfg->layers;
    if (sched_normalize(&s, msg, sizeof msg) == 0) {
        cfg->sched = s;
        return 0;
    }
    /* The same order of checks as sched_normalize, on its output. */
    const char *key = s.H < 1                          ? "H"
                      : s.P < 1 || s.P > s.H          ? "fragments"
                      : s.P > s.layers                ? "fragments"
                      : s.tau < 0 || s.tau >= s.H / s.P ? "tau"
                                                        : "alpha";
    const cJSON *m = get(root, "method"), *v = get(m, key);
    join_key(p, "method", key);
    return fail(c, v ? v : m ? m : root, 0, p, "%s", msg);
}

/* The file name in string node v (path p) resolved against the
 * scenario's directory into out[SCN_PATH_MAX]. */
static int resolve_path(ctx *c, const cJSON *v, const char *p, char *out) {
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
    if (resolve_path(c, tr, "faults.trace", cfg->trace_path)) return -1;
    if (mtbf && cfg->faults.mtbf_s > 0) {
        if (is_later(c, mtbf, tr))
            return fail(c, mtbf, 0, "faults.mtbf_hours", "must be 0 when "
                        "a trace is given (expected either a trace file or "
                        "random failures)");
        return fail(c, tr, 0, "faults.trace", "cannot be used together "
                    "with mtbf_hours > 0 (expected either a trace file or "
                    "random failures)");
    }
    return 0;
}

/* ---------------------------------------------------------------------
 * Pass 5, continued: the train section, checked as train_new would check
 * it, each conflict reported at a key.
 */

/* Node train.sec.key (sec NULL: train.key; key NULL: the section). */
static const cJSON *tget(const cJSON *root, const char *sec,
                         const char *key) {
    const cJSON *t = get(root, "train");
    if (sec) t = get(t, sec);
    return key ? get(t, key) : t;
}

/* A conflict between keys a and b (paths pa, pb; either node may be
 * NULL when not given) is reported at the one given last, or at the one
 * given; when neither was given, at node d (an enclosing object) under
 * path pd.  Always returns -1. */
static int fail_either(ctx *c, const cJSON *a, const char *pa,
                       const cJSON *b, const char *pb, const cJSON *d,
                       const char *pd, const char *fmt, ...) {
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
        return fail(c, v, 1, p, "not used by %s data (expected it only "
                    "with kind %s)", kind, other);
    }
    return 0;
}

/* Text: a readable file of bytes.  Markov: successors within V.  Either:
 * the model's vocabulary holds the data's. */
static int check_train_data(ctx *c, const cJSON *root, scn_config *cfg) {
    static const char *const markov_only[] = {"successors", "skew", NULL};
    static const char *const text_only[] = {"path", "eval_fraction", NULL};
    train_config *t = &cfg->train;
    const cJSON *data = tget(root, "data", NULL);
    const cJSON *dv = get(data, "vocab"), *mv = tget(root, "model", "vocab");
    const cJSON *model = tget(root, "model", NULL);
    if (t->data.kind == DATA_TEXT) {
        const cJSON *path = get(data, "path");
        if (reject_keys(c, root, markov_only, "text", "markov")) return -1;
        if (dv && t->data.vocab != 256)
            return fail(c, dv, 0, "train.data.vocab", "%d is not the 256 "
                        "byte values of text data (expected 256, or no "
                        "vocab)", t->data.vocab);
        if (!path)
            return fail(c, data, 0, "train.data.path", "missing (expected "
                        "a text file with kind text)");
        if (resolve_path(c, path, "train.data.path", cfg->train_data_path))
            return -1;
        FILE *f = fopen(cfg->train_data_path, "rb");
        if (!f)
            return fail(c, path, 0, "train.data.path", "cannot open %s: %s",
                        cfg->train_data_path, strerror(errno));
        fclose(f);
        t->data.vocab = 256;
    } else {
        if (reject_keys(c, root, text_only, "markov", "text")) return -1;
        if (!dv) t->data.vocab = t->nn.vocab;
        if (t->data.successors > t->data.vocab) /* V: dv, else mv's */
            return fail_either(c, get(data, "successors"),
                               "train.data.successors", dv ? dv : mv,
                               dv ? "train.data.vocab" : "train.model.vocab",
                               data ? data : tget(root, NULL, NULL),
                               "train.data.successors", "successors = %d "
                               "exceed the vocabulary V = %d (expected "
                               "successors <= V)", t->data.successors,
                               t->data.vocab);
    }
    if (t->data.vocab > t->nn.vocab)
        return fail_either(c, mv, "train.model.vocab", dv, "train.data.vocab",
                           model ? model : tget(root, NULL, NULL),
                           "train.model.vocab", "the model's vocab = %d is "
                           "smaller than the data's %d token values "
                           "(expected train.model.vocab >= %d)", t->nn.vocab,
                           t->data.vocab, t->data.vocab);
    return 0;
}

/* heads divide d, seq fits ctx, the batch fits an int; then nn_check. */
static int check_train_model(ctx *c, const cJSON *root, scn_config *cfg) {
    const train_config *t = &cfg->train;
    const nn_config *m = &t->nn;
    const cJSON *tr = tget(root, NULL, NULL), *model = tget(root, "model", NULL);
    const cJSON *seq = get(tr, "seq"), *batch = get(tr, "batch");
    char msg[256];
    if (m->kind == NN_TRANSFORMER && m->d % m->heads)
        return fail_either(c, get(model, "heads"), "train.model.heads",
                           get(model, "d"), "train.model.d", model,
                           "train.model.heads", "d = %d is not a multiple "
                           "of heads = %d (expected heads dividing d)",
                           m->d, m->heads);
    if (m->kind == NN_TRANSFORMER && t->seq > m->ctx)
        return fail_either(c, seq, "train.seq", get(model, "ctx"),
                           "train.model.ctx", tr, "train.seq", "seq = %d is "
                           "longer than ctx = %d (expected seq <= "
                           "train.model.ctx for the transformer)", t->seq,
                           m->ctx);
    if ((long long)t->batch * t->seq > INT_MAX / 4)
        return fail_either(c, seq, "train.seq", batch, "train.batch", tr,
                           "train.seq", "batch * seq = %lld tokens are too "
                           "many (expected at most %d)",
                           (long long)t->batch * t->seq, INT_MAX / 4);
    if (nn_check(m, t->batch, t->seq, msg, sizeof msg))
        return fail(c, model ? model : tr, 0, "train.model", "%s", msg);
    return 0;
}

/* lr_min <= lr; then optim_check. */
static int check_train_inner(ctx *c, const cJSON *root, scn_config *cfg) {
    const optim_config *o = &cfg->train.inner;
    const cJSON *in = tget(root, "inner", NULL);
    char msg[256], a[32], b[32];
    if (o->lr_min > o->lr)
        return fail_either(c, get(in, "lr_min"), "train.inner.lr_min",
                           get(in, "lr"), "train.inner.lr", in,
                           "train.inner.lr_min", "lr_min = %s exceeds lr = "
                           "%s (expected lr_min <= lr)", fmt_num(o->lr_min, a),
                           fmt_num(o->lr, b));
    if (optim_check(o, msg, sizeof msg))
        return fail(c, in ? in : tget(root, NULL, NULL), 0, "train.inner",
                    "%s", msg);
    return 0;
}

/* Replicas within TRAIN_MAX_REPLICAS, FedPart not with DP, fragments
 * within the trained model's blocks (units with "own"). */
static int check_train_method(ctx *c, const cJSON *root, scn_config *cfg) {
    const train_config *t = &cfg->train;
    const cJSON *m = get(root, "method"), *tr = tget(root, NULL, NULL);
    const cJSON *layers = tget(root, "model", "layers");
    int own = t->map == TRAIN_MAP_OWN;
    int n = t->nn.layers + (own ? 2 : 0);
    if (cfg->workers > TRAIN_MAX_REPLICAS)
        return fail(c, get(get(root, "workers"), "count"), 0, "workers.count",
                    "%d replicas are too many to train (expected at most %d "
                    "with a train section)", cfg->workers,
                    TRAIN_MAX_REPLICAS);
    if (t->fedpart && cfg->sched.method == SCHED_DP)
        return fail_either(c, get(tr, "fedpart"), "train.fedpart",
                           get(m, "name"), "method.name", tr, "train.fedpart",
                           "FedPart needs method diloco or streaming (got "
                           "dp)");
    if (cfg->sched.P > n)
        return fail_either(c, get(m, "fragments"), "method.fragments", layers,
                           "train.model.layers", m, "method.fragments",
                           "P = %d fragments exceed the trained model's %d "
                           "%s (expected method.fragments <= %s = %d)",
                           cfg->sched.P, n, own ? "units" : "blocks",
                           own ? "train.model.layers + 2 with units own"
                               : "train.model.layers", n);
    return 0;
}

/* The train section, when present: checked, then completed with the
 * scenario's shared keys (see scenario.h). */
static int check_train(ctx *c, const cJSON *root, scn_config *cfg) {
    if (!tget(root, NULL, NULL)) return 0;
    if (check_train_model(c, root, cfg) || check_train_data(c, root, cfg) ||
        check_train_inner(c, root, cfg) || check_train_method(c, root, cfg))
        return -1;
    train_config *t = &cfg->train;
    t->replicas = cfg->workers;
    t->steps = cfg->steps;
    t->seed = cfg->seed;
    t->data.seed = cfg->seed;
    t->data.path = NULL;
    t->sched = cfg->sched;
    t->sched.layers = t->nn.layers + (t->map == TRAIN_MAP_OWN ? 2 : 0);
    t->codec = cfg->codec;
    t->dp_codec = cfg->dp_codec;
    cfg->train_eval |= SCN_EVAL_OUTER;
    cfg->has_train = 1;
    return 0;
}

/* ---------------------------------------------------------------------
 * Pass 4: overrides
 */

static int set_fail(ctx *c, int k, const char *path, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (path) return set_err(c, "--set %s: %s: %s", c->sets[k], path, msg);
    return set_err(c, "--set %s: %s", c->sets[k], msg);
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
                if (!child || tag_override(c, child, k) ||
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
    cJSON *val = is_json(eq + 1) ? cJSON_Parse(eq + 1)
                                 : cJSON_CreateString(eq + 1);
    int rc;
    if (!keys || !val || tag_override(c, val, k)) rc = oom(c);
    else rc = set_at(c, k, root, keys, val);
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

    c->sched = (sched_spec){.method = SCHED_STREAMING, .layers = 24,
                            .H = 100, .P = 1, .tau = 0, .alpha = 0.5,
                            .layout = SCHED_STRIDED,
                            .order = SCHED_ASCENDING};
    c->codec = (codec_spec){CODEC_BF16, 0};
    c->dp_codec = (codec_spec){CODEC_BF16, 0};

    c->faults = (faults_spec){.mtbf_s = 0, .mttr_s = 3600,
                              .dist = FAULTS_EXPONENTIAL,
                              .weibull_shape = 1.5, .trace = NULL};
    c->trace_path[0] = 0;
    c->checkpoint_steps = 100;
    c->recovery_bytes_per_param = 4;

    c->steps = 1000;
    c->seed = 1;

    c->has_train = 0;
    train_config_default(&c->train);
    c->train_data_path[0] = 0;
    c->train_eval = SCN_EVAL_OUTER;
}

double scn_step_time_s(const scn_config *c) {
    if (c->step_time_s > 0) return c->step_time_s;
    return 6 * c->params * c->tokens_per_step /
           (c->chips * c->peak_tflops * 1e12 * c->mfu);
}

/* Passes 1 to 3 over text (NUL-terminated, len bytes, BOM included):
 * *root receives the tree, an object, with every node filed.  On error
 * *root is NULL; either way the caller frees c->pos. */
static int parse_doc(ctx *c, const char *text, size_t len, cJSON **root) {
    *root = NULL;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) text += 3, len -= 3;
    c->text = text;

    int line, col;
    if (strlen(text) != len) {
        line_col(text, strlen(text), &line, &col);
        return set_err(c, "%s:%d:%d: syntax error (NUL byte in input)",
                       c->name, line, col);
    }
    scanner sc = {.t = text, .keep = 1};
    if (scan_document(&sc)) {
        free(sc.offs);
        if (sc.oom) return oom(c);
        line_col(text, sc.err_at, &line, &col);
        return set_err(c, "%s:%d:%d: syntax error (%s)", c->name, line, col,
                       sc.msg);
    }
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithOpts(text, &end, 1);
    if (!doc) { /* only out of memory, as the scanner is stricter */
        free(sc.offs);
        line_col(text, end ? (size_t)(end - text) : 0, &line, &col);
        return set_err(c, "%s:%d:%d: syntax error (rejected by the JSON "
                       "parser; out of memory?)", c->name, line, col);
    }
    size_t k = 0;
    int r = locate(c, doc, NO_POS, sc.offs, sc.n, &k);
    free(sc.offs);
    if (r < 0) r = oom(c);
    else if (r > 0 || k != sc.n)
        r = set_err(c, "%s: internal error: positions out of step", c->name);
    else if (!cJSON_IsObject(doc))
        r = fail(c, doc, 0, "", "wrong type: %s (expected an object)",
                 type_name(doc));
    if (r) {
        cJSON_Delete(doc);
        return -1;
    }
    *root = doc;
    return 0;
}

/* The digest of the resolved document: its compact print without the
 * "variants" and "sweep" sections, hashed 8 bytes at a time.  Returns 0,
 * or -1 when out of memory. */
static int digest_doc(const cJSON *root, uint64_t *out) {
    cJSON *copy = cJSON_Duplicate(root, 1);
    if (!copy) return -1;
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "variants");
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "sweep");
    char *text = cJSON_PrintUnformatted(copy);
    cJSON_Delete(copy);
    if (!text) return -1;
    uint64_t h = 0;
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        for (size_t j = i; j < i + 8 && j < n; j++)
            w = w << 8 | (unsigned char)text[j];
        h = rng_mix(h ^ w);
    }
    *out = rng_mix(h ^ n);
    free(text);
    return 0;
}

/* Passes 1 to 5 over text, with a variant (or NULL) merged in. */
static int load_text(ctx *c, const char *text, size_t len,
                     const char *variant, const char *const *sets, int nset,
                     scn_config *out) {
    cJSON *root;
    c->sets = sets;
    int rc = -1;
    if (parse_doc(c, text, len, &root)) goto done;
    if (variant && merge_variant(c, root, variant)) goto done;
    for (int i = 0; i < nset; i++)
        if (apply_set(c, root, i)) goto done;

    scn_config cfg;
    scn_defaults(&cfg);
    if (load_object(c, root, "", root_fields, &cfg) ||
        check_model(c, root, &cfg) || check_method(c, root, &cfg) ||
        check_faults(c, root, &cfg) || check_train(c, root, &cfg))
        goto done;
    if (digest_doc(root, &cfg.digest)) {
        oom(c);
        goto done;
    }
    *out = cfg;
    rc = 0;
done:
    cJSON_Delete(root);
    free(c->pos);
    c->pos = NULL;
    return rc;
}

int scn_load_string(const char *text, const char *name,
                    const char *const *sets, int nset, scn_config *out,
                    char *err, size_t errlen) {
    ctx c = {.name = name ? name : "<string>", .err = err, .errlen = errlen};
    return load_text(&c, text, strlen(text), NULL, sets, nset, out);
}

/* Reads the file c->name into *buf (NUL-terminated, *len bytes) and sets
 * c->dir to its directory.  Returns 0, or -1 with the message. */
static int read_file(ctx *c, char **buf, size_t *len) {
    const char *path = c->name;
    FILE *f = fopen(path, "rb");
    if (!f) return set_err(c, "%s: cannot open: %s", path, strerror(errno));
    char *b = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 4096) {
            char *nb = realloc(b, cap = 2 * cap + 4096);
            if (!nb) {
                free(b);
                fclose(f);
                return oom(c);
            }
            b = nb;
        }
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f), e = errno;
    fclose(f);
    if (bad) {
        free(b);
        return set_err(c, "%s: cannot read: %s", path, strerror(e));
    }
    b[n] = 0;
    const char *slash = strrchr(path, '/');
    c->dir = path;
    c->dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    *buf = b, *len = n;
    return 0;
}

int scn_load_variant(const char *path, const char *variant,
                     const char *const *sets, int nset, scn_config *out,
                     char *err, size_t errlen) {
    ctx c = {.name = path, .err = err, .errlen = errlen};
    char *buf;
    size_t len;
    if (read_file(&c, &buf, &len)) return -1;
    int rc = load_text(&c, buf, len, variant, sets, nset, out);
    free(buf);
    return rc;
}

int scn_load(const char *path, const char *const *sets, int nset,
             scn_config *out, char *err, size_t errlen) {
    return scn_load_variant(path, NULL, sets, nset, out, err, errlen);
}

int scn_meta_load(const char *path, scn_meta *meta, char *err,
                  size_t errlen) {
    ctx c = {.name = path, .err = err, .errlen = errlen};
    char *buf;
    size_t len;
    if (read_file(&c, &buf, &len)) return -1;
    scn_meta *m = calloc(1, sizeof *m);
    cJSON *root = NULL;
    int rc = -1;
    if (!m) oom(&c);
    else if (!parse_doc(&c, buf, len, &root)) {
        const cJSON *vs = get(root, "variants"), *sw = get(root, "sweep");
        rc = (vs && check_section(&c, vs, &S_VARIANTS, m)) ||
                     (sw && check_section(&c, sw, &S_SWEEP, m))
                 ? -1 : 0;
    }
    if (!rc) *meta = *m;
    cJSON_Delete(root);
    free(c.pos);
    free(m);
    free(buf);
    return rc;
}
