/*
 * scenario_sections.c -- the "variants" and "sweep" sections of a
 * scenario, checked for shape only (an object of objects with valid
 * names; an object of key: spec string or array of scalars), by every
 * load and by scn_meta_load.  What a variant sets is validated when it is
 * merged; what a sweep varies, when a point loads.
 */
#include "sim/config/scenario_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"

static int is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
}

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
    if (n == 0 || n >= sizeof((scn_meta *)0)->sweep_key[0]) return 0;
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
        return fail(c, m, 1, p,
                    "bad variant name (expected 1 to %d of "
                    "A-Z a-z 0-9 _ . -)",
                    SCN_NAME_MAX - 1);
    if (!cJSON_IsObject(m))
        return fail(c, m, 0, p,
                    "wrong type: %s (expected an object of "
                    "scenario keys)",
                    type_name(m));
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
        if (needs_quotes(t) && !(t = q = cJSON_PrintUnformatted(e))) return -1;
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
static int sweep_spec_text(ctx *c, const cJSON *v, const char *p, char *spec) {
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
        return fail(c, v, 0, p, "wrong type: %s (%s)", type_name(v), expected);
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
            return fail(c, v, 0, p,
                        "too long (expected at most %d bytes "
                        "as a comma list)",
                        SCN_SPEC_MAX - 1);
    }
    return 0;
}

static int sweep_member(ctx *c, const cJSON *m, const char *p, int n,
                        scn_meta *meta) {
    char spec[SCN_SPEC_MAX];
    if (!is_sweep_key(m->string))
        return fail(c, m, 1, p,
                    "bad key (expected a dotted scenario key "
                    "such as network.bandwidth_gbps, at most %d bytes)",
                    (int)sizeof meta->sweep_key[0] - 1);
    if (sweep_spec_text(c, m, p, meta ? meta->sweep_spec[n] : spec)) return -1;
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

int scn__check_variants(ctx *c, const cJSON *v, scn_meta *meta) {
    return check_section(c, v, &S_VARIANTS, meta);
}

int scn__check_sweep(ctx *c, const cJSON *v, scn_meta *meta) {
    return check_section(c, v, &S_SWEEP, meta);
}
