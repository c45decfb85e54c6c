/*
 * scenario_merge.c -- pass 2 of the loader: a named variant deep-merged
 * into the root.  Its nodes move, keeping their filed offsets, and are
 * marked, so errors about them point into the variant and read
 * variants.NAME.json.path.
 */
#include "sim/config/scenario_int.h"

#include <stdio.h>
#include <string.h>

/* Files node and its subtree as coming from the merged variant. */
static void mark_variant(ctx *c, const cJSON *node) {
    pos *p = lookup(c, node);
    if (p) p->in_variant = 1;
    for (const cJSON *ch = node->child; ch; ch = ch->next) mark_variant(c, ch);
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
        return set_err(c,
                       "%s: variants: unknown variant \"%s\" (the "
                       "scenario has no variants)",
                       c->name, name);
    return set_err(c,
                   "%s: variants: unknown variant \"%s\" (expected one "
                   "of: %s)",
                   c->name, name, names);
}

/* Merges variant `name` of root's variants section into root.  The
 * variant's nodes keep their positions and are marked, so messages about
 * them point into the variant and name it. */
int scn__merge_variant(ctx *c, cJSON *root, const char *name) {
    char p[PATH_LEN], var[PATH_LEN];
    cJSON *vs = cJSON_GetObjectItemCaseSensitive(root, "variants");
    if (vs && scn__check_variants(c, vs, NULL)) return -1;
    cJSON *v = vs ? cJSON_GetObjectItemCaseSensitive(vs, name) : NULL;
    if (!v) return unknown_variant(c, vs, name);
    join(var, "variants", ".", name);
    for (const cJSON *m = v->child; m; m = m->next) {
        if (strcmp(m->string, "variants") && strcmp(m->string, "sweep"))
            continue;
        join_key(p, var, m->string);
        return fail(c, m, 1, p,
                    "not allowed in a variant (expected "
                    "scenario keys)");
    }
    mark_variant(c, v);
    c->variant = name;
    cJSON_DetachItemViaPointer(vs, v);
    int rc = merge(c, root, v, "");
    cJSON_Delete(v);
    return rc;
}
