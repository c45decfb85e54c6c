/*
 * scenario_fields.c -- pass 4 of the loader, driven by the tables: the
 * generic loader of a schema table (scenario_int.h's `field`): unknown
 * and duplicate keys, types, ranges (with the literal checked where the
 * double would hide a problem), enums through their one table of names,
 * per-worker and per-pair values.  The tables themselves are in
 * scenario_schema.c and scenario_train.c.
 */
#include "sim/config/scenario_int.h"

#include <stdio.h>
#include <string.h>

#include "sim/base/msg.h"

const char *scn__enum_name(const enum_def *e, int i) {
    return e->names ? e->names[i] : e->name(i);
}

const char *scn__enum_list(const enum_def *e, char *buf, size_t len) {
    const char *names[64];
    int n = 0;
    for (; n < e->n && n < 64; n++) names[n] = scn__enum_name(e, n);
    return msg_name_list(names, n, buf, len);
}

int scn__enum_parse(const enum_def *e, const char *s, void *out) {
    const char *names[64];
    int n = 0;
    for (; n < e->n && n < 64; n++) names[n] = scn__enum_name(e, n);
    int i = msg_parse_name(s, names, n);
    if (i < 0) return -1;
    *(int *)out = e->values ? e->values[i] : i;
    return 0;
}

/* "a number > 0", "an integer in 1..256", "a number in (0, 1]". */
static const char *describe(const range *r, char buf[96]) {
    char lo[32], hi[32];
    msg_number(r->lo, lo);
    msg_number(r->hi, hi);
    if (r->integer) snprintf(buf, 96, "an integer in %s..%s", lo, hi);
    else if (isinf(r->hi))
        snprintf(buf, 96, "a number %s %s", r->lo_open ? ">" : ">=", lo);
    else
        snprintf(buf, 96, "a number in %c%s, %s%c", r->lo_open ? '(' : '[', lo,
                 hi, r->hi_open ? ')' : ']');
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
        return fail(c, v, 0, path, "wrong type: %s (expected %s)", type_name(v),
                    expected);
    double x = v->valuedouble, exact;
    const pos *at = lookup(c, v);
    const char *lit = at ? at->lit : NULL;
    int litlen = lit ? (int)strspn(lit, "+-.0123456789eE") : 0;
    if (!isfinite(x))
        return fail(c, v, 0, path, "not a finite number (expected %s)",
                    expected);
    if (x == 0 && lit && json_literal_nonzero(lit))
        return fail(c, v, 0, path, "%.*s underflows to 0 (expected %s)", litlen,
                    lit, expected);
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
        return fail(c, v, 0, path,
                    "%.*s is above 2^53 = 9007199254740992 "
                    "and cannot be read exactly (expected %s)",
                    litlen, lit, expected);
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

/* A per-worker field (of scn_config): one value for every worker, or an array of exactly
 * workers.count values. */
static int load_workers(ctx *c, const cJSON *v, const char *path,
                        const field *f, scn_config *cfg) {
    double *dst = (double *)((char *)cfg + f->off);
    double *dst2 = f->off2 ? (double *)((char *)cfg + f->off2) : NULL;
    int n = cfg->workers;
    char one[128], any[224], rb[96], p[PATH_LEN];
    snprintf(one, sizeof one, "%s%s", describe(&f->r, rb),
             f->inf_ok ? " or \"inf\"" : "");
    snprintf(any, sizeof any,
             "%s, or an array of workers.count = %d such "
             "values",
             one, n);
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
        return fail(c, v, 0, path,
                    "array of %d values (expected "
                    "workers.count = %d values)",
                    len, n);
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
static int load_matrix(ctx *c, const cJSON *v, const char *path, const field *f,
                       scn_config *cfg) {
    double *dst = (double *)((char *)cfg + f->off);
    int n = cfg->workers;
    char rb[96], p[PATH_LEN], q[PATH_LEN];
    if (n > SCN_MAX_MATRIX)
        return fail(c, v, 0, path,
                    "given for %d workers (expected at most "
                    "%d workers)",
                    n, SCN_MAX_MATRIX);
    char all[96], one[96];
    snprintf(all, sizeof all, "workers.count = %d arrays of %d numbers", n, n);
    snprintf(one, sizeof one, "an array of workers.count = %d numbers", n);
    if (!cJSON_IsArray(v))
        return fail(c, v, 0, path, "wrong type: %s (expected %s)", type_name(v),
                    all);
    if (cJSON_GetArraySize(v) != n)
        return fail(c, v, 0, path, "array of %d values (expected %s)",
                    cJSON_GetArraySize(v), all);
    int i = 0;
    for (const cJSON *row = v->child; row; row = row->next, i++) {
        join_index(p, path, i);
        if (!cJSON_IsArray(row))
            return fail(c, row, 0, p, "wrong type: %s (expected %s)",
                        type_name(row), one);
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
/* workers.sites: an array of exactly workers.count objects of table
 * f->sub, each with replicas (intra_gbps 400 and intra_latency_us 0 by
 * default), into the config's site arrays. */
static int load_sites(ctx *c, const cJSON *v, const char *path, const field *f,
                      scn_config *cfg) {
    int n = cfg->workers, i = 0;
    char p[PATH_LEN];
    if (!cJSON_IsArray(v))
        return fail(c, v, 0, path,
                    "wrong type: %s (expected an array of workers.count = "
                    "%d site objects)",
                    type_name(v), n);
    int len = cJSON_GetArraySize(v);
    if (len != n)
        return fail(c, v, 0, path,
                    "array of %d sites (expected workers.count = %d sites)",
                    len, n);
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        scn__site s = {.replicas = 0, .intra_gbps = 400};
        join_index(p, path, i);
        if (scn__load_object(c, e, p, f->sub, &s)) return -1;
        if (!get(e, "replicas"))
            return fail(c, e, 0, p,
                        "replicas is missing (expected an object with "
                        "replicas, an integer in 1..65536)");
        cfg->site_replicas[i] = s.replicas;
        cfg->site_intra_gbps[i] = s.intra_gbps;
        cfg->site_intra_latency_us[i] = s.intra_latency_us;
    }
    cfg->has_sites = 1;
    return 0;
}

/* An array of distinct names of e: bit i for the name parsed as i. */
static int load_flags(ctx *c, const cJSON *v, const char *path,
                      const enum_def *e, unsigned *out) {
    char p[PATH_LEN], names[512];
    scn__enum_list(e, names, sizeof names);
    if (!cJSON_IsArray(v))
        return fail(c, v, 0, path,
                    "wrong type: %s (expected an array of "
                    "names from: %s)",
                    type_name(v), names);
    unsigned bits = 0;
    int i = 0;
    for (const cJSON *m = v->child; m; m = m->next, i++) {
        int k;
        join_index(p, path, i);
        if (!cJSON_IsString(m))
            return fail(c, m, 0, p, "wrong type: %s (expected one of: %s)",
                        type_name(m), names);
        if (scn__enum_parse(e, m->valuestring, &k))
            return fail(c, m, 0, p,
                        "unknown value \"%s\" (expected one "
                        "of: %s)",
                        m->valuestring, names);
        if (bits & 1u << k)
            return fail(c, m, 0, p,
                        "\"%s\" given twice (expected each "
                        "name at most once)",
                        m->valuestring);
        bits |= 1u << k;
    }
    *out = bits;
    return 0;
}

/* An enum key: one of e's names. */
static int load_enum(ctx *c, const cJSON *v, const char *path,
                     const enum_def *e, void *dst) {
    char names[512];
    scn__enum_list(e, names, sizeof names);
    if (!cJSON_IsString(v))
        return fail(c, v, 0, path, "wrong type: %s (expected one of: %s)",
                    type_name(v), names);
    if (scn__enum_parse(e, v->valuestring, dst))
        return fail(c, v, 0, path,
                    "unknown value \"%s\" (expected one "
                    "of: %s)",
                    v->valuestring, names);
    return 0;
}

/* One present key of a table, written at base + f->off. */
static int load_field(ctx *c, const cJSON *v, const char *path, const field *f,
                      void *base) {
    char *dst = (char *)base + f->off, rb[96];
    double x;
    switch (f->type) {
    case F_NUM:
        if (check_number(c, v, path, &f->r, describe(&f->r, rb), &x)) return -1;
        if (f->scale) x *= f->scale;
        if (!isfinite(x))
            return fail(c, v, 0, path, "too large (expected %s)",
                        describe(&f->r, rb));
        *(double *)dst = x;
        return 0;
    case F_INT:
    case F_I64:
    case F_U64:
        if (check_number(c, v, path, &f->r, describe(&f->r, rb), &x)) return -1;
        if (f->type == F_INT) *(int *)dst = (int)x;
        else if (f->type == F_I64) *(int64_t *)dst = (int64_t)x;
        else *(uint64_t *)dst = (uint64_t)x;
        return 0;
    case F_ENUM: return load_enum(c, v, path, f->e, dst);
    case F_STR:
        if (!cJSON_IsString(v))
            return fail(c, v, 0, path, "wrong type: %s (expected a string)",
                        type_name(v));
        return 0;
    case F_BOOL:
        if (!cJSON_IsBool(v))
            return fail(c, v, 0, path,
                        "wrong type: %s (expected true or "
                        "false)",
                        type_name(v));
        *(int *)dst = cJSON_IsTrue(v);
        return 0;
    case F_FLAGS: return load_flags(c, v, path, f->e, (unsigned *)dst);
    case F_OBJ:
        if (f->str_ok && cJSON_IsString(v)) return 0;
        if (f->str_ok && !cJSON_IsObject(v))
            return fail(c, v, 0, path,
                        "wrong type: %s (expected a file name or an object)",
                        type_name(v));
        return scn__load_object(c, v, path, f->sub, base);
    case F_WORKERS: return load_workers(c, v, path, f, base);
    case F_MATRIX: return load_matrix(c, v, path, f, base);
    case F_SITES: return load_sites(c, v, path, f, base);
    case F_VARIANTS: return scn__check_variants(c, v, NULL);
    case F_SWEEP: return scn__check_sweep(c, v, NULL);
    }
    return 0;
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
            return fail(c, m, 1, p, "unknown key (%sexpected one of: %s)", near,
                        keys);
        }
        if (m == dup) return dup_fail(c, m, first, p);
    }
    return 0;
}

/* An object described by a table: keys first, then each field present,
 * in table order (so counts come before the arrays sized by them). */
int scn__load_object(ctx *c, const cJSON *obj, const char *path,
                     const field *fields, void *base) {
    char p[PATH_LEN];
    if (!cJSON_IsObject(obj))
        return fail(c, obj, 0, path, "wrong type: %s (expected an object)",
                    type_name(obj));
    if (check_keys(c, obj, path, fields)) return -1;
    for (const field *f = fields; f->key; f++) {
        const cJSON *v = get(obj, f->key);
        if (!v) continue;
        join_key(p, path, f->key);
        if (load_field(c, v, p, f, base)) return -1;
    }
    return 0;
}
