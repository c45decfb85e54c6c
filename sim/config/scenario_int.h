/*
 * scenario_int.h -- the scenario loader's internals, shared by
 * scenario.c (the passes, the root schema) and scenario_train.c (the
 * "train" section).  Not for the rest of the program: use scenario.h.
 *
 * A load works on one ctx: the document's text, every node's position
 * (in the text, in the merged variant, or made by override k), the
 * overrides, and the caller's error buffer.  Schema tables (`field`)
 * describe each JSON object: key, type, range, where the value goes in
 * scn_config.
 */
#ifndef DILOSIM_SCENARIO_INT_H
#define DILOSIM_SCENARIO_INT_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>

#include "sim/config/json.h"
#include "sim/config/scenario.h"

#define SCN__PATH_LEN 512 /* a JSON path in a message */

/* Where a node came from. */
typedef struct {
    const cJSON *node;
    size_t key, val;  /* offsets in the text, JSON_NO_POS for none */
    const char *lit;  /* the value's text (number literals), or NULL */
    int set;          /* the override that made the node, or -1 */
    int in_variant;   /* 1: the node came from the merged variant */
} scn__pos;

typedef struct {
    const char *name;         /* file name in messages */
    const char *text;         /* the document (past a UTF-8 BOM) */
    const char *dir;          /* prefix for relative paths, or NULL */
    size_t dirlen;
    const char *const *sets;  /* the overrides, for messages */
    const scn_origin *from;   /* where override from_base + i comes from */
    int from_base;            /*   (from[i]; NULL: every one a --set) */
    const cJSON *root;        /* the tree loaded (its sweep section) */
    const char *variant;      /* the merged variant, or NULL */
    scn__pos *pos;            /* every node filed, oldest first */
    size_t npos, cap;
    json_map index;           /* node -> its newest entry in pos */
    int rc;                   /* the first error's code, or 0 */
    char *err;
    size_t errlen;
} scn__ctx;

/* A numeric range; hi INFINITY: no upper bound. */
typedef struct {
    double lo, hi;
    unsigned char lo_open, hi_open, integer;
} scn__range;

#define GT(x) {.lo = x, .hi = INFINITY, .lo_open = 1}
#define GE(x) {.lo = x, .hi = INFINITY}
#define IN(a, b) {.lo = a, .hi = b}
#define OC(a, b) {.lo = a, .hi = b, .lo_open = 1}
#define CO(a, b) {.lo = a, .hi = b, .hi_open = 1}
#define OO(a, b) {.lo = a, .hi = b, .lo_open = 1, .hi_open = 1}
#define INT(a, b) {.lo = a, .hi = b, .integer = 1}

/* An enum key: the names for messages (NULL: codec_names()) and the
 * parser, which writes the enum (int-sized) at out: 0, or -1 if unknown.
 * Every parser matches through msg_parse_name. */
typedef struct {
    const char *names;
    int (*parse)(const char *name, void *out);
} scn__enum;

typedef enum {
    F_NUM,     /* double */
    F_INT,     /* int */
    F_I64,     /* int64_t */
    F_U64,     /* uint64_t */
    F_ENUM,    /* an enum (int-sized), through scn__enum */
    F_STR,     /* a string, checked only (annotations, paths) */
    F_BOOL,    /* int: true 1, false 0 */
    F_FLAGS,   /* unsigned: an array of distinct enum names, bit i set
                  for the name parsed as i */
    F_OBJ,     /* a nested object with its own table */
    F_WORKERS, /* double[SCN_MAX_WORKERS]: one value, or workers.count */
    F_MATRIX,  /* double[SCN_MAX_MATRIX^2]: workers.count arrays of
                  workers.count values, row-major i*M+j */
    F_VARIANTS,/* the variants section: its shape only */
    F_SWEEP,   /* the sweep section: its shape only */
} scn__ftype;

typedef struct scn__field {
    const char *key;
    scn__ftype type;
    size_t off;             /* where the value goes in scn_config */
    size_t off2;            /* F_WORKERS: a second copy (0: none; offset 0
                               is params, never a copy target) */
    scn__range r;           /* F_NUM, F_INT, F_I64, F_U64, F_WORKERS,
                               F_MATRIX */
    double scale;           /* F_NUM: stored = given * scale (0: 1) */
    int inf_ok;             /* F_WORKERS: the string "inf" is INFINITY */
    const scn__enum *e;     /* F_ENUM, F_FLAGS */
    const struct scn__field *sub;/* F_OBJ */
} scn__field;

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
#define K_MATRIX(k, m, rng) \
    {.key = k, .type = F_MATRIX, .off = AT(m), .r = rng}
#define K_END {.key = NULL}

/* An enum whose names[0..n-1] are its values 0..n-1: the value of name s
 * (msg_parse_name) stored as an int at o.  Returns 0, or -1 if unknown. */
int scn__parse_index(const char *s, void *o, const char *const *names,
                     int n);

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
void scn__join_key(char out[SCN__PATH_LEN], const char *base,
                   const char *key);

/* The file name in string node v (path p) resolved against the
 * scenario's directory into out[SCN_PATH_MAX]: 0, or MSG_EINPUT when it
 * is empty or does not fit. */
int scn__resolve_path(scn__ctx *c, const cJSON *v, const char *p,
                      char *out);

/* The "train" section (scenario_train.c): its table, and the checks of
 * what spans its keys, which then complete cfg->train with the scenario's
 * shared keys (see scenario.h).  Returns 0 or MSG_EINPUT/MSG_ENOMEM. */
extern const scn__field scn__train_fields[];
int scn__check_train(scn__ctx *c, const cJSON *root, scn_config *cfg);

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

#endif
