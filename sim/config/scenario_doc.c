/*
 * scenario_doc.c -- a scenario document and its positions (pass 1 of the
 * loader, scenario.c): reading the input, the strict parse, the position
 * table of every node (in the text, in the merged variant, or made by an
 * override), and the messages that point at a node in the form of
 * scenario.h.  The lowest file of the loader: the others use it.
 */
#include "sim/config/scenario_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/base/msg.h"

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
int scn__set_err(ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = set_err_code(c, MSG_EINPUT, fmt, ap);
    va_end(ap);
    return rc;
}

int scn__oom(ctx *c) {
    c->rc = MSG_ENOMEM;
    msg_set(c->err, c->errlen, MSG_ENOMEM, "%s: out of memory", c->name);
    return MSG_ENOMEM;
}

/* ---------------------------------------------------------------------
 * The position table
 */

int scn__record(ctx *c, const cJSON *node, size_t key, size_t val,
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
pos *scn__lookup(const ctx *c, const cJSON *node) {
    size_t k;
    return json_map_get(&c->index, node, &k) ? &c->pos[k] : NULL;
}

void scn__free_positions(ctx *c) {
    free(c->pos);
    json_map_free(&c->index);
    c->pos = NULL;
    c->npos = c->cap = 0;
}

/* Files the nodes of a parsed document: in the scenario's text (set -1,
 * literals at text + offset) or in override k's value. */
int scn__file_doc(ctx *c, const json_doc *d, const char *text, int set) {
    for (size_t i = 0; i < d->npos; i++) {
        const json_pos *p = &d->pos[i];
        size_t key = set < 0 ? p->key : NO_POS, val = set < 0 ? p->val : NO_POS;
        if (record(c, p->node, key, val, text + p->val, set)) return -1;
    }
    return 0;
}

/* out = base + sep + part, cut at PATH_LEN - 1 bytes (a cut path only
 * shortens a message); out must not overlap the others. */
void scn__join(char out[PATH_LEN], const char *base, const char *sep,
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

void scn__join_index(char out[PATH_LEN], const char *base, int i) {
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
int scn__override_fail(ctx *c, int k, int at_key, const char *path,
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
    const scn_origin *o =
        c->from && k >= c->from_base ? &c->from[k - c->from_base] : NULL;
    if (o && !o->vary && o->sweep < 0 && o->file) {
        int line, col;
        json_line_col(o->text, at_key ? o->key_off : o->val_off, &line, &col);
        return set_err(c, "%s:%d:%d: %s: %s", o->file, line, col,
                       path ? path : "(root)", msg);
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
    json_line_col(c->text, at_key && p->key != NO_POS ? p->key : p->val, &line,
                  &col);
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

const char *scn__type_name(const cJSON *v) {
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

/* The first member of obj whose key an earlier member has, in *dup (NULL
 * when none) and that earlier member in *first.  Linear in obj's size. */
int scn__find_dup(ctx *c, const cJSON *obj, const cJSON **dup,
                  const cJSON **first) {
    *dup = *first = NULL;
    int r = json_first_duplicate(obj, dup, first);
    if (r < 0) return oom(c);
    if (r == 0) *dup = NULL;
    return 0;
}

/* The error about member m (path p), a duplicate of member e. */
int scn__dup_fail(ctx *c, const cJSON *m, const cJSON *e, const char *p) {
    const pos *first = lookup(c, e);
    int line, col;
    if (!first || first->key == NO_POS)
        return fail(c, m, 1, p, "duplicate key");
    json_line_col(c->text, first->key, &line, &col);
    return fail(c, m, 1, p, "duplicate key (first given at %d:%d)", line, col);
}

/* The file name in string node v (path p) resolved against the
 * scenario's directory into out[SCN_PATH_MAX]. */
int scn__resolve_path(ctx *c, const cJSON *v, const char *p, char *out) {
    const char *t = v->valuestring;
    if (!*t) return fail(c, v, 0, p, "empty path (expected a file name)");
    size_t dl = t[0] == '/' ? 0 : c->dirlen;
    if (dl + strlen(t) >= SCN_PATH_MAX)
        return fail(c, v, 0, p,
                    "path too long (expected at most %d bytes "
                    "once resolved)",
                    SCN_PATH_MAX - 1);
    if (dl) memcpy(out, c->dir, dl);
    strcpy(out + dl, t);
    return 0;
}

/* Pass 1 over text (NUL-terminated, len bytes, BOM included): *root
 * receives the tree, an object, with every node filed.  On error *root is
 * NULL; either way the caller frees the positions. */
int scn__parse_doc(ctx *c, const char *text, size_t len, cJSON **root) {
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

/* ---------------------------------------------------------------------
 * Reading the input
 */

/* "NAME: larger than 16 MiB (expected a scenario of at most N bytes)". */
int scn__too_big(const char *name, const char *what, size_t max, char *err,
                 size_t errlen) {
    char mib[MSG_NUM_MAX];
    msg_number((double)max / (1 << 20), mib);
    return msg_set(err, errlen, MSG_EINPUT,
                   "%s: larger than %s MiB "
                   "(expected a %s of at most %zu bytes)",
                   name, mib, what, max);
}

/* Reads the file `path` ("-": standard input) into *buf (NUL-terminated,
 * *len bytes), refusing more than max bytes before reading them when the
 * size is known.  `what` names the file's kind in messages ("scenario").
 * name is the file's name in messages.  Returns 0 or the code, with the
 * message in err. */
int scn__read_input(const char *path, const char *name, const char *what,
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
