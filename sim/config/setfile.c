/*
 * setfile.c -- the reader of a file of overrides (--set-from FILE.json):
 * its members become "key=VALUE" overrides that remember where in the file
 * they stand, and its "fit" block the estimates' covariance.  What the
 * file means is in setfile.h; what its values mean is the scenario
 * loader's to check.
 */
#include "sim/config/setfile.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/config/json.h"
#include "sim/config/scenario_int.h"

#define SETFILE_MAX_BYTES (1 << 20)
#define SETFILE_COV_RTOL 1e-9 /* symmetry and stderr^2 = diagonal */

/* What one read works on. */
typedef struct {
    const char *name; /* in messages */
    const char *text;
    const json_doc *doc;
    char *err;
    size_t errlen;
} sf_ctx;

/* The offset of node n's value (at_key: its key) in the text. */
static size_t node_off(const sf_ctx *c, const cJSON *n, int at_key) {
    for (size_t i = 0; i < c->doc->npos; i++)
        if (c->doc->pos[i].node == n)
            return at_key && c->doc->pos[i].key != JSON_NO_POS
                       ? c->doc->pos[i].key
                       : c->doc->pos[i].val;
    return 0;
}

/* "FILE:line:col: PATH: what" at node n; MSG_EINPUT. */
static int sf_fail(const sf_ctx *c, const cJSON *n, int at_key,
                   const char *path, const char *fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int line, col;
    json_line_col(c->text, node_off(c, n, at_key), &line, &col);
    return msg_set(c->err, c->errlen, MSG_EINPUT, "%s:%d:%d: %s: %s", c->name,
                   line, col, path, what);
}

/* Member `key` of fit as an array of n numbers into out. */
static int fit_numbers(const sf_ctx *c, const cJSON *fit, const char *key,
                       int n, double *out) {
    char path[64];
    snprintf(path, sizeof path, "fit.%s", key);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(fit, key);
    if (!a) return sf_fail(c, fit, 1, "fit", "missing \"%s\"", key);
    int size = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
    if (size != n)
        return sf_fail(c, a, 0, path,
                       "expected an array of %d numbers, one a fitted key", n);
    int i = 0;
    for (const cJSON *x = a->child; x; x = x->next, i++) {
        if (!cJSON_IsNumber(x))
            return sf_fail(c, x, 0, path, "item %d is not a number", i);
        out[i] = x->valuedouble;
    }
    return 0;
}

/* fit.keys into out: each a numeric member of the file, its value the
 * estimate. */
static int fit_keys(const sf_ctx *c, const cJSON *root, const cJSON *fit,
                    setfile *out) {
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(fit, "keys");
    if (!k) return sf_fail(c, fit, 1, "fit", "missing \"keys\"");
    int n = cJSON_IsArray(k) ? cJSON_GetArraySize(k) : -1;
    if (n < 1 || n > SETFILE_MAX_FIT)
        return sf_fail(c, k, 0, "fit.keys",
                       "expected an array of 1 to %d key names",
                       SETFILE_MAX_FIT);
    int i = 0;
    for (const cJSON *x = k->child; x; x = x->next, i++) {
        const cJSON *v =
            cJSON_IsString(x)
                ? cJSON_GetObjectItemCaseSensitive(root, x->valuestring)
                : NULL;
        if (!v || !cJSON_IsNumber(v) || !strcmp(x->valuestring, "fit"))
            return sf_fail(c, x, 0, "fit.keys",
                           "item %d is not the name of a numeric member "
                           "of the file",
                           i);
        for (int j = 0; j < i; j++)
            if (!strcmp(out->fit_key[j], x->valuestring))
                return sf_fail(c, x, 0, "fit.keys", "\"%s\" is listed twice",
                               x->valuestring);
        snprintf(out->fit_key[i], SETFILE_KEY_MAX, "%s", x->valuestring);
        out->fit_value[i] = v->valuedouble;
    }
    out->nfit = n;
    return 0;
}

/* fit.covariance: n x n, symmetric, its diagonal stderr^2. */
static int fit_covariance(const sf_ctx *c, const cJSON *fit, setfile *out) {
    int n = out->nfit;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(fit, "covariance");
    if (!m) return sf_fail(c, fit, 1, "fit", "missing \"covariance\"");
    if (!cJSON_IsArray(m) || cJSON_GetArraySize(m) != n)
        return sf_fail(c, m, 0, "fit.covariance",
                       "expected %d rows of %d numbers", n, n);
    int i = 0;
    for (const cJSON *row = m->child; row; row = row->next, i++) {
        int size = cJSON_IsArray(row) ? cJSON_GetArraySize(row) : -1;
        if (size != n)
            return sf_fail(c, row, 0, "fit.covariance",
                           "row %d: expected an array of %d numbers", i, n);
        int j = 0;
        for (const cJSON *x = row->child; x; x = x->next, j++) {
            if (!cJSON_IsNumber(x))
                return sf_fail(c, x, 0, "fit.covariance",
                               "row %d item %d is not a number", i, j);
            out->fit_cov[i][j] = x->valuedouble;
        }
    }
    for (i = 0; i < n; i++) {
        double d = out->fit_cov[i][i], s = out->fit_stderr[i];
        char a[MSG_NUM_MAX], b[MSG_NUM_MAX];
        if (!(s >= 0) || fabs(s * s - d) > SETFILE_COV_RTOL * fmax(d, s * s))
            return sf_fail(c, m, 0, "fit.covariance",
                           "the diagonal's %s (%s) is not the square of "
                           "fit.stderr's (%s)",
                           out->fit_key[i], msg_number(d, a), msg_number(s, b));
        for (int j = 0; j < i; j++) {
            double x = out->fit_cov[i][j], y = out->fit_cov[j][i];
            if (fabs(x - y) > SETFILE_COV_RTOL * fmax(fabs(x), fabs(y)))
                return sf_fail(c, m, 0, "fit.covariance",
                               "not symmetric: row %d item %d is %s, row %d "
                               "item %d %s",
                               i, j, msg_number(x, a), j, i, msg_number(y, b));
        }
    }
    return 0;
}

/* The fit block. */
static int read_fit(const sf_ctx *c, const cJSON *root, const cJSON *fit,
                    setfile *out) {
    if (!cJSON_IsObject(fit))
        return sf_fail(c, fit, 0, "fit", "expected an object");
    int rc = fit_keys(c, root, fit, out);
    if (!rc) rc = fit_numbers(c, fit, "stderr", out->nfit, out->fit_stderr);
    if (!rc) rc = fit_covariance(c, fit, out);
    return rc;
}

/* The end of the JSON value that starts at text + off (the text is valid
 * JSON: the scan only needs to skip strings and match brackets). */
static size_t value_end(const char *text, size_t off) {
    const char *p = text + off;
    int depth = 0;
    do {
        if (*p == '"') {
            for (p++; *p != '"'; p++)
                if (*p == '\\') p++;
            p++;
        } else if (*p == '{' || *p == '[') {
            depth++, p++;
        } else if (*p == '}' || *p == ']') {
            depth--, p++;
        } else if (depth) {
            p++;
        } else {
            p += strcspn(p, ",}] \t\r\n");
        }
    } while (depth);
    return (size_t)(p - text);
}

/* Member m (not "fit") as override "key=VALUE" number out->nset, VALUE
 * the member's text as written (a number printed again could differ in
 * its last bit). */
static int add_set(const sf_ctx *c, const cJSON *m, setfile *out) {
    if (!scn_key_segments(m->string, strlen(m->string)))
        return sf_fail(c, m, 1, m->string,
                       "not a scenario key (expected a dotted path such as "
                       "network.efficiency)");
    if (out->nset == SETFILE_MAX_SETS)
        return sf_fail(c, m, 1, m->string, "more than %d overrides",
                       SETFILE_MAX_SETS);
    size_t at = node_off(c, m, 0), vn = value_end(c->text, at) - at;
    size_t kn = strlen(m->string);
    char *s = malloc(kn + vn + 2);
    if (!s)
        return msg_set(c->err, c->errlen, MSG_ENOMEM, "%s: out of memory",
                       c->name);
    memcpy(s, m->string, kn);
    s[kn] = '=';
    memcpy(s + kn + 1, c->text + at, vn);
    s[kn + 1 + vn] = 0;
    out->key_off[out->nset] = node_off(c, m, 1);
    out->val_off[out->nset] = at;
    out->sets[out->nset++] = s;
    return 0;
}

/* The members of the parsed document. */
static int read_members(const sf_ctx *c, setfile *out) {
    const cJSON *root = c->doc->root, *dup, *first;
    if (!cJSON_IsObject(root))
        return sf_fail(c, root, 0, "(root)",
                       "expected an object of scenario keys and values");
    if (json_first_duplicate(root, &dup, &first))
        return sf_fail(c, dup, 1, dup->string, "duplicate key");
    for (const cJSON *m = root->child; m; m = m->next) {
        int rc = !strcmp(m->string, "fit") ? read_fit(c, root, m, out)
                                           : add_set(c, m, out);
        if (rc) return rc;
    }
    return 0;
}

int setfile_load(const char *path, setfile *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    out->path = path;
    const char *name = strcmp(path, "-") ? path : "<stdin>";
    size_t len;
    int rc = scn__read_input(path, name, "file of overrides", SETFILE_MAX_BYTES,
                             &out->text, &len, err, errlen);
    if (rc) return rc;
    size_t bom = json_bom(out->text, len), at;
    if (bom) memmove(out->text, out->text + bom, len - bom + 1), len -= bom;
    json_doc doc;
    char m[128];
    rc = json_parse(out->text, len, &doc, &at, m, sizeof m);
    if (rc == MSG_EINPUT) {
        int line, col;
        json_line_col(out->text, at, &line, &col);
        rc = msg_set(err, errlen, rc, "%s:%d:%d: %s", name, line, col, m);
    } else if (rc) {
        rc = msg_set(err, errlen, rc, "%s: %s", name, m);
    } else {
        sf_ctx c = {name, out->text, &doc, err, errlen};
        rc = read_members(&c, out);
        json_doc_free(&doc);
    }
    if (rc) setfile_free(out);
    return rc;
}

void setfile_free(setfile *f) {
    for (int i = 0; i < f->nset; i++) free(f->sets[i]);
    free(f->text);
    memset(f, 0, sizeof *f);
}
