/*
 * scenario_int.h -- the scenario loader's internals, shared by
 * scenario.c (the passes, the root schema) and scenario_train.c (the
 * "train" section).  Not for the rest of the program: use scenario.h.
 *
 * A load works on one ctx: the document's text, every node's position
 * (in the text, in the merged variant, or made by override k), the
 * overrides, and the caller's error buffer.  Schema tables (`field`)
 * describe each JSON object: key, type, range, where the value goes in
 * the scn__out being filled (the timing config or the train section).
 */
#ifndef DILOSIM_SCENARIO_INT_H
#define DILOSIM_SCENARIO_INT_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>

#include "sim/config/json.h"
#include "sim/config/scenario.h"

typedef struct scn_train scn_train; /* sim/config/scenario_train.h */

#define SCN__PATH_LEN 512 /* a JSON path in a message */

/* Where a node came from. */
typedef struct {
    const cJSON *node;
    size_t key, val; /* offsets in the text, JSON_NO_POS for none */
    const char *lit; /* the value's text (number literals), or NULL */
    int set;         /* the override that made the node, or -1 */
    int in_variant;  /* 1: the node came from the merged variant */
} scn__pos;

typedef struct {
    const char *name; /* file name in messages */
    const char *text; /* the document (past a UTF-8 BOM) */
    const char *dir;  /* prefix for relative paths, or NULL */
    size_t dirlen;
    const char *const *sets; /* the overrides, for messages */
    const scn_origin *from;  /* where override from_base + i comes from */
    int from_base;           /*   (from[i]; NULL: every one a --set) */
    const cJSON *root;       /* the tree loaded (its sweep section) */
    const char *variant;     /* the merged variant, or NULL */
    scn__pos *pos;           /* every node filed, oldest first */
    size_t npos, cap;
    json_map index; /* node -> its newest entry in pos */
    int rc;         /* the first error's code, or 0 */
    char *err;
    size_t errlen;
} scn__ctx;

/* What pass 4 fills: the timing config and the train section side by
 * side (scenario_out.h, for the two files that need its layout). */
typedef struct scn__out scn__out;

/* A numeric range; hi INFINITY: no upper bound. */
typedef struct {
    double lo, hi;
    unsigned char lo_open, hi_open, integer;
} scn__range;

#define GT(x)                                                                  \
    { .lo = x, .hi = INFINITY, .lo_open = 1 }
#define GE(x)                                                                  \
    { .lo = x, .hi = INFINITY }
#define IN(a, b)                                                               \
    { .lo = a, .hi = b }
#define OC(a, b)                                                               \
    { .lo = a, .hi = b, .lo_open = 1 }
#define CO(a, b)                                                               \
    { .lo = a, .hi = b, .hi_open = 1 }
#define OO(a, b)                                                               \
    { .lo = a, .hi = b, .lo_open = 1, .hi_open = 1 }
#define INT(a, b)                                                              \
    { .lo = a, .hi = b, .integer = 1 }

/* An enum key: its names, one table.  The value of names[i] is i, or
 * values[i] when values is not NULL; the names are names[0..n-1], or
 * name(0..n-1) when names is NULL (an enum whose table lives elsewhere).
 * The "expected" list of its messages is the names joined with ", "
 * (msg_name_list).  The value is stored int-sized; names are matched
 * through msg_parse_name. */
typedef struct {
    int n;
    const char *const *names;
    const char *(*name)(int value);
    const int *values;
} scn__enum;

/* The name of value i of e (i in 0..e->n-1). */
const char *scn__enum_name(const scn__enum *e, int i);
/* e's names joined with ", " into buf[len]; returns buf. */
const char *scn__enum_list(const scn__enum *e, char *buf, size_t len);
/* The value of name s (msg_parse_name over e's names) stored as an int at
 * out: 0, or -1 if unknown. */
int scn__enum_parse(const scn__enum *e, const char *s, void *out);

/* An enum of names[0..n-1] worth 0..n-1 (a static table), as a scn__enum
 * initialiser. */
#define SCN__NAMES(tab)                                                        \
    { .n = (int)(sizeof tab / sizeof tab[0]), .names = tab }

typedef enum {
    F_NUM,      /* double */
    F_INT,      /* int */
    F_I64,      /* int64_t */
    F_U64,      /* uint64_t */
    F_ENUM,     /* an enum (int-sized), through scn__enum */
    F_STR,      /* a string, checked only (annotations, paths) */
    F_BOOL,     /* int: true 1, false 0 */
    F_FLAGS,    /* unsigned: an array of distinct enum names, bit i set
                  for the name parsed as i */
    F_OBJ,      /* a nested object with its own table */
    F_WORKERS,  /* double[SCN_MAX_WORKERS]: one value, or workers.count */
    F_MATRIX,   /* double[SCN_MAX_MATRIX^2]: workers.count arrays of
                  workers.count values, row-major i*M+j */
    F_SITES,    /* workers.sites: an array of workers.count objects of
                  table sub, each read into a scn__site */
    F_VARIANTS, /* the variants section: its shape only */
    F_SWEEP,    /* the sweep section: its shape only */
} scn__ftype;

/* One entry of workers.sites as read (F_SITES), before it is copied into
 * the config's per-worker site arrays. */
typedef struct {
    int replicas;
    double intra_gbps, intra_latency_us;
} scn__site;

typedef struct scn__field {
    const char *key;
    scn__ftype type;
    size_t off;                   /* where the value goes in the scn__out */
    size_t off2;                  /* F_WORKERS: a second copy (0: none; offset 0
                               is params, never a copy target) */
    scn__range r;                 /* F_NUM, F_INT, F_I64, F_U64, F_WORKERS,
                               F_MATRIX */
    double scale;                 /* F_NUM: stored = given * scale (0: 1) */
    int inf_ok;                   /* F_WORKERS: the string "inf" is INFINITY */
    int str_ok;                   /* F_OBJ: a string is taken too, checked
                                     by scenario_check.c (a file name) */
    const scn__enum *e;           /* F_ENUM, F_FLAGS */
    const struct scn__field *sub; /* F_OBJ */
} scn__field;

#define AT(m) offsetof(scn_config, m)
#define K_NUM(k, m, rng)                                                       \
    { .key = k, .type = F_NUM, .off = AT(m), .r = rng }
#define K_INT(k, m, a, b)                                                      \
    { .key = k, .type = F_INT, .off = AT(m), .r = INT(a, b) }
#define K_I64(k, m, a, b)                                                      \
    { .key = k, .type = F_I64, .off = AT(m), .r = INT(a, b) }
#define K_U64(k, m, a, b)                                                      \
    { .key = k, .type = F_U64, .off = AT(m), .r = INT(a, b) }
#define K_ENUM(k, m, def)                                                      \
    { .key = k, .type = F_ENUM, .off = AT(m), .e = &def }
#define K_STR(k)                                                               \
    { .key = k, .type = F_STR }
#define K_BOOL(k, m)                                                           \
    { .key = k, .type = F_BOOL, .off = AT(m) }
#define K_FLAGS(k, m, def)                                                     \
    { .key = k, .type = F_FLAGS, .off = AT(m), .e = &def }
#define K_OBJ(k, tab)                                                          \
    { .key = k, .type = F_OBJ, .sub = tab }
#define K_WORKERS(k, m, rng)                                                   \
    { .key = k, .type = F_WORKERS, .off = AT(m), .r = rng }
#define K_MATRIX(k, m, rng)                                                    \
    { .key = k, .type = F_MATRIX, .off = AT(m), .r = rng }
#define K_END                                                                  \
    { .key = NULL }

/* The error about node `at` (its key when at_key and it has one) whose
 * JSON path is `path` in the merged document, in the form of scenario.h;
 * a node from the merged variant is named variants.NAME.path.  Returns
 * MSG_EINPUT. */
int scn__fail(scn__ctx *c, const cJSON *at, int at_key, const char *path,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int scn__vfail(scn__ctx *c, const cJSON *at, int at_key, const char *path,
               const char *fmt, va_list ap);

/* Member key of object obj, or NULL (obj NULL: NULL). */
const cJSON *scn__get(const cJSON *obj, const char *key);

/* Whether node a was given after node b: in the file by offset, the
 * merged variant after the base, overrides after both in their order. */
int scn__is_later(const scn__ctx *c, const cJSON *a, const cJSON *b);

/* out = base.key (or key at the root), cut to SCN__PATH_LEN - 1 bytes. */
void scn__join_key(char out[SCN__PATH_LEN], const char *base, const char *key);

/* The file name in string node v (path p) resolved against the
 * scenario's directory into out[SCN_PATH_MAX]: 0, or MSG_EINPUT when it
 * is empty or does not fit. */
int scn__resolve_path(scn__ctx *c, const cJSON *v, const char *p, char *out);

/* ---- scenario_doc.c: the document, its positions and the messages ---- */

/* An input error (MSG_EINPUT) with the message, made one line (control
 * characters become '?'); the first error's code stays c->rc's.  Returns
 * c->rc. */
int scn__set_err(scn__ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "NAME: out of memory"; returns MSG_ENOMEM. */
int scn__oom(scn__ctx *c);
/* Files node with its offsets (JSON_NO_POS: none), number literal and
 * override (-1: none).  Returns 0, or -1 out of memory. */
int scn__record(scn__ctx *c, const cJSON *node, size_t key, size_t val,
                const char *lit, int set);
/* The newest entry of node, or NULL. */
scn__pos *scn__lookup(const scn__ctx *c, const cJSON *node);
void scn__free_positions(scn__ctx *c);
/* Files the nodes of a parsed document: in the scenario's text (set -1,
 * literals at text + offset) or in override k's value.  0, or -1. */
int scn__file_doc(scn__ctx *c, const json_doc *d, const char *text, int set);
/* out = base + sep + part, cut at SCN__PATH_LEN - 1 bytes; out must not
 * overlap the others. */
void scn__join(char out[SCN__PATH_LEN], const char *base, const char *sep,
               const char *part);
/* out = base[i]. */
void scn__join_index(char out[SCN__PATH_LEN], const char *base, int i);
/* "PREFIX: PATH: msg" about override k (at its key when at_key), PREFIX
 * naming where it comes from (see scenario.h); path NULL: none. */
int scn__override_fail(scn__ctx *c, int k, int at_key, const char *path,
                       const char *msg);
/* "boolean", "null", "number", "string", "array", "object". */
const char *scn__type_name(const cJSON *v);
/* The first member of obj whose key an earlier member has, in *dup (NULL
 * when none), that earlier member in *first.  0, or MSG_ENOMEM. */
int scn__find_dup(scn__ctx *c, const cJSON *obj, const cJSON **dup,
                  const cJSON **first);
/* The error about member m (path p), a duplicate of member e. */
int scn__dup_fail(scn__ctx *c, const cJSON *m, const cJSON *e, const char *p);
/* Pass 1 over text (NUL-terminated, len bytes, BOM included): *root
 * receives the tree, an object, with every node filed.  On error *root is
 * NULL; either way the caller frees the positions. */
int scn__parse_doc(scn__ctx *c, const char *text, size_t len, cJSON **root);
/* "NAME: larger than N MiB (expected a WHAT of at most MAX bytes)". */
int scn__too_big(const char *name, const char *what, size_t max, char *err,
                 size_t errlen);
/* Reads the file `path` ("-": standard input; `name` in messages) into
 * *buf (NUL-terminated, *len bytes), at most max bytes.  Returns 0 or the
 * code, with the message in err. */
int scn__read_input(const char *path, const char *name, const char *what,
                    size_t max, char **buf, size_t *len, char *err,
                    size_t errlen);

/* ---- scenario_sections.c: the variants and sweep sections' shapes ---- */

/* Checks the "variants" (or "sweep") section v, filing its names (and
 * specs) in meta when meta is not NULL.  0, or the code. */
int scn__check_variants(scn__ctx *c, const cJSON *v, scn_meta *meta);
int scn__check_sweep(scn__ctx *c, const cJSON *v, scn_meta *meta);

/* ---- scenario_merge.c, scenario_set.c: passes 2 and 3 ---- */

/* Merges variant `name` of root's variants section into root (pass 2). */
int scn__merge_variant(scn__ctx *c, cJSON *root, const char *name);
/* Applies override k, "a.b.c=value", to the tree under root (pass 3). */
int scn__apply_set(scn__ctx *c, cJSON *root, int k);

/* ---- scenario_fields.c: the generic loader of a table (pass 4) ---- */

/* An object described by a table: unknown and duplicate keys first, then
 * each field present, in table order, written at base + off (base: the
 * scn__out). */
int scn__load_object(scn__ctx *c, const cJSON *obj, const char *path,
                     const scn__field *fields, void *base);

/* ---- scenario_schema.c, scenario_check.c, scenario_train.c ---- */

/* The root table (with the train section's) over root into *out. */
int scn__load_root(scn__ctx *c, const cJSON *root, scn__out *out);
/* What spans several keys: FLOP-derived step time, split, the schedule,
 * the network, the run's length, the fault trace. */
int scn__check_config(scn__ctx *c, const cJSON *root, scn_config *cfg);
/* The "train" section (scenario_train.c): its table (offsets AT_TRAIN),
 * and the checks of what spans its keys, which then complete t->train
 * with the scenario's shared keys of cfg (see scenario_train.h).
 * Returns 0 or MSG_EINPUT/MSG_ENOMEM. */
extern const scn__field scn__train_fields[];
int scn__check_train(scn__ctx *c, const cJSON *root, const scn_config *cfg,
                     scn_train *t);

/* Short names for the types and helpers above, for the loader's own .c
 * files (the only ones that include this header). */
typedef scn__ctx ctx;
typedef scn__pos pos;
typedef scn__range range;
typedef scn__field field;
typedef scn__enum enum_def;
#define fail scn__fail
#define vfail scn__vfail
#define get scn__get
#define is_later scn__is_later
#define join_key scn__join_key
#define set_err scn__set_err
#define oom scn__oom
#define record scn__record
#define lookup scn__lookup
#define join scn__join
#define join_index scn__join_index
#define type_name scn__type_name
#define find_dup scn__find_dup
#define dup_fail scn__dup_fail
#define override_fail scn__override_fail
#define file_doc scn__file_doc
#define too_big scn__too_big
#define NO_POS JSON_NO_POS
#define PATH_LEN SCN__PATH_LEN

#endif
