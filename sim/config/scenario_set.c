/*
 * scenario_set.c -- pass 3 of the loader: the "a.b.c=value" overrides
 * applied to the tree.  The nodes they make are filed as "made by
 * override k", so errors about them name the override instead of a line.
 */
#include "sim/config/scenario_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"

static int is_digit(char c) {
    return c >= '0' && c <= '9';
}

static int set_fail(ctx *c, int k, const char *path, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return override_fail(c, k, 0, path, msg);
}

int scn_key_segments(const char *s, size_t n) {
    int segs = 0;
    for (size_t i = 0, len = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (len == 0) return 0;
            segs++, len = 0;
        } else if (isalnum((unsigned char)s[i]) || s[i] == '_') {
            len++;
        } else {
            return 0;
        }
    }
    return segs;
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
                    return set_fail(c, k, base,
                                    "no element \"%s\" (the "
                                    "array is empty)",
                                    seg);
                return set_fail(c, k, base,
                                "no element \"%s\" (expected "
                                "an index in 0..%d)",
                                seg, size - 1);
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
                int ok =
                    child
                        ? cJSON_ReplaceItemInObjectCaseSensitive(cur, seg, val)
                        : cJSON_AddItemToObject(cur, seg, val);
                return ok ? 0 : oom(c);
            }
            if (!child) {
                if (is_index(next, (size_t)next_len, NULL))
                    return set_fail(c, k, path,
                                    "missing (expected an "
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
            return set_fail(c, k, path,
                            "wrong type: %s (expected an "
                            "object or an array to hold \"%.*s\")",
                            type_name(child), next_len, next);
        cur = child;
    }
}

/* Applies override k, "a.b.c=value", to the tree under root.  The value
 * is JSON if it is strict JSON, else the text as a string. */
int scn__apply_set(ctx *c, cJSON *root, int k) {
    const char *s = c->sets[k], *eq = strchr(s, '=');
    if (!eq)
        return set_fail(c, k, NULL, "missing '=' (expected key.path=value)");
    size_t n = (size_t)(eq - s);
    if (n == 0)
        return set_fail(c, k, NULL, "empty key (expected key.path=value)");
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.' && (i == 0 || i == n - 1 || s[i + 1] == '.'))
            return set_fail(c, k, NULL,
                            "empty key segment (expected "
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
